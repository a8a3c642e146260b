/*
 * ext.c - record extensions (posflow(5), EXTENSIONS): walking a record's
 * extension area, building one, and the typed encoders and decoders.
 *
 * Decoders trust nothing: every read is checked against the payload
 * length, and a payload too short for what it says it holds is refused
 * with -1.  Bytes past the fields a decoder knows are ignored, so a type
 * may grow at its end (posflow(5), Versioning).
 *
 * Encoders are where strings enter a stream, so they are the one place
 * that makes them valid UTF-8 and cuts them at a character boundary
 * (pf_utf8_convert): every writer gets that without doing anything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"
#include "utf8.h"

int32_t
pf_score_cp(uint8_t score_kind, int32_t score)
{
	int64_t n;

	if (score_kind != PF_SCORE_MATE)
		return score;
	if (score == 0)
		return -PF_MATE_CP;
	/* Beyond mate in 300 the mapping would change sign: keep it. */
	n = score < 0 ? -(int64_t)score : score;
	if (n > 300)
		n = 300;
	return (int32_t)(score > 0 ? PF_MATE_CP - 100 * n :
	    -(PF_MATE_CP - 100 * n));
}

/* ---- generic access --------------------------------------------------- */

void
pf_ext_iter_init(pf_ext_iter *it, const pf_record *rec)
{
	it->p = rec->ext;
	it->end = rec->ext != NULL ? rec->ext + rec->ext_len : NULL;
}

int
pf_ext_find(const pf_record *rec, uint16_t type, int nth, pf_ext *e)
{
	pf_ext_iter it;
	pf_ext x;

	pf_ext_iter_init(&it, rec);
	while (pf_ext_next(&it, &x) == 1) {
		if (x.type == type && nth-- == 0) {
			*e = x;
			return 1;
		}
	}
	return 0;
}

int
pf_ext_count(const pf_record *rec, uint16_t type)
{
	pf_ext_iter it;
	pf_ext x;
	int n = 0;

	pf_ext_iter_init(&it, rec);
	while (pf_ext_next(&it, &x) == 1)
		if (x.type == type)
			n++;
	return n;
}

const char *
pf_ext_type_name(uint16_t type)
{
	static const char *const names[] = {
		NULL, "meta", "eval", "movescores", "clock", "policy", "value",
		"complexity", "repair", "pqr", "merge"
	};

	if (type < sizeof(names) / sizeof(names[0]))
		return names[type];
	return NULL;
}

/* ---- extension buffer ------------------------------------------------- */

void
pf_extbuf_reset(pf_extbuf *b)
{
	b->len = 0;
}

void
pf_extbuf_free(pf_extbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Room for n more bytes.  0 / -1. */
static int
reserve(pf_extbuf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len) {
		errno = ENOMEM;
		return -1;
	}
	cap = b->cap > 0 ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	if ((p = realloc(b->data, cap)) == NULL)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int
pf_extbuf_append_raw(pf_extbuf *b, const uint8_t *ext, size_t len)
{
	if (len == 0)
		return 0;
	if (reserve(b, len) == -1)
		return -1;
	memcpy(b->data + b->len, ext, len);
	b->len += len;
	return 0;
}

int
pf_extbuf_copy_except(pf_extbuf *b, const pf_record *rec, uint16_t drop)
{
	pf_ext_iter it;
	pf_ext x;
	size_t len0 = b->len;
	int rc;

	if (drop == 0)
		return pf_extbuf_append_raw(b, rec->ext, rec->ext_len);
	pf_ext_iter_init(&it, rec);
	while ((rc = pf_ext_next(&it, &x)) == 1) {
		if (x.type == drop)
			continue;
		/* The header too, reserved field included: byte for byte. */
		if (pf_extbuf_append_raw(b, x.data - PF_EXT_HEADER_SIZE,
		    PF_EXT_HEADER_SIZE + (size_t)x.len) == -1) {
			b->len = len0;
			return -1;
		}
	}
	if (rc == -1) {
		b->len = len0;	/* all or nothing */
		errno = EINVAL;
		return -1;
	}
	return 0;
}

uint8_t *
pf_extbuf_add(pf_extbuf *b, uint16_t type, uint32_t len)
{
	uint8_t *p;

	if (reserve(b, PF_EXT_HEADER_SIZE + (size_t)len) == -1)
		return NULL;
	p = b->data + b->len;
	pf_put16(p, type);
	pf_put16(p + 2, 0);
	pf_put32(p + 4, len);
	b->len += PF_EXT_HEADER_SIZE + (size_t)len;
	return p + PF_EXT_HEADER_SIZE;
}

/* ---- meta ------------------------------------------------------------- */

#define META_FIXED	16

int
pf_meta_encode(const pf_meta *m, pf_extbuf *b)
{
	const char *s[6] = { m->event, m->site, m->white, m->black, m->date,
	    m->term_text };
	uint16_t n[6] = { m->event_len, m->site_len, m->white_len,
	    m->black_len, m->date_len, m->term_text_len };
	char str[6][PF_META_STR_MAX];
	uint32_t len = META_FIXED;
	uint8_t *p;
	int i;

	for (i = 0; i < 6; i++) {
		n[i] = s[i] != NULL ? (uint16_t)pf_utf8_convert(str[i],
		    sizeof(str[i]), s[i], n[i]) : 0;
		len += 2 + n[i];
	}
	if ((p = pf_extbuf_add(b, PF_EXT_META, len)) == NULL)
		return -1;
	pf_put16(p, m->white_elo);
	pf_put16(p + 2, m->black_elo);
	pf_put32(p + 4, m->base_s);
	pf_put32(p + 8, m->inc_s);
	p[12] = m->termination;
	p[13] = 0;
	pf_put16(p + 14, 0);
	p += META_FIXED;
	for (i = 0; i < 6; i++) {
		pf_put16(p, n[i]);
		if (n[i] > 0)
			memcpy(p + 2, str[i], n[i]);
		p += 2 + n[i];
	}
	return 0;
}

/* The string at *off of a meta extension: its text and length, *off moved
   past it; -1 if it runs past the end. */
static inline int
meta_str(const pf_ext *x, size_t *off, const char **s, uint16_t *n)
{
	uint16_t k;

	if (x->len - *off < 2)
		return -1;
	k = pf_get16(x->data + *off);
	if (x->len - *off - 2 < k)
		return -1;
	*s = (const char *)(x->data + *off + 2);
	*n = k;
	*off += 2 + (size_t)k;
	return 0;
}

int
pf_meta_decode(const pf_ext *x, pf_meta *m)
{
	const uint8_t *p = x->data;
	size_t off = META_FIXED;

	if (x->len < META_FIXED)
		return -1;
	m->white_elo = pf_get16(p);
	m->black_elo = pf_get16(p + 2);
	m->base_s = pf_get32(p + 4);
	m->inc_s = pf_get32(p + 8);
	m->termination = p[12];
	/* each string stored straight to its field: through a table of
	   the fields (or of the strings found), every store or load waited
	   on the table's stores, for a filter's every record */
	if (meta_str(x, &off, &m->event, &m->event_len) == -1 ||
	    meta_str(x, &off, &m->site, &m->site_len) == -1 ||
	    meta_str(x, &off, &m->white, &m->white_len) == -1 ||
	    meta_str(x, &off, &m->black, &m->black_len) == -1 ||
	    meta_str(x, &off, &m->date, &m->date_len) == -1 ||
	    meta_str(x, &off, &m->term_text, &m->term_text_len) == -1)
		return -1;
	return 0;
}

/* ---- eval ------------------------------------------------------------- */

#define EVAL_FIXED	44

int
pf_eval_encode(const pf_eval *e, pf_extbuf *b)
{
	uint16_t pv = e->pv_len < PF_PV_MAX ? e->pv_len : PF_PV_MAX;
	char engine[PF_ENGINE_MAX];
	size_t k = pf_utf8_convert(engine, sizeof(engine), e->engine,
	    e->engine_len);
	uint32_t len = EVAL_FIXED + 2u * pv + 1 + (uint32_t)k;
	uint8_t *p;
	int i;

	if (e->flags & PF_EVF_SF)
		len += 2;
	if ((p = pf_extbuf_add(b, PF_EXT_EVAL, len)) == NULL)
		return -1;
	p[0] = e->source;
	p[1] = e->limit_kind;
	p[2] = e->score_kind;
	p[3] = e->flags;
	pf_put32(p + 4, (uint32_t)e->score);
	pf_put64(p + 8, e->limit);
	pf_put16(p + 16, e->wdl[0]);
	pf_put16(p + 18, e->wdl[1]);
	pf_put16(p + 20, e->wdl[2]);
	pf_put16(p + 22, e->depth);
	pf_put16(p + 24, e->seldepth);
	pf_put16(p + 26, e->best);
	pf_put64(p + 28, e->nodes);
	pf_put32(p + 36, e->time_ms);
	pf_put16(p + 40, e->multipv);
	pf_put16(p + 42, pv);
	for (i = 0; i < pv; i++)
		pf_put16(p + EVAL_FIXED + 2 * i, e->pv[i]);
	p += EVAL_FIXED + 2 * pv;
	p[0] = (uint8_t)k;
	memcpy(p + 1, engine, k);
	if (e->flags & PF_EVF_SF)
		pf_put16(p + 1 + k, (uint16_t)e->sf_score);
	return 0;
}

/*
 * The checks every eval reader needs: the PV and the engine id fit in the
 * payload (and sf_score when flagged), the score is of a kind posflow(5)
 * defines (centipawns or mate: no reader may take another kind for
 * centipawns), and W/D/L, when flagged, are per-mille chances summing to
 * 1000.  Fills the fixed fields and sf_score (0 unless flagged).
 */
int
pf_eval_decode_head(const pf_ext *x, pf_eval *e)
{
	const uint8_t *p = x->data;
	size_t off;

	if (x->len < EVAL_FIXED)
		return -1;
	off = EVAL_FIXED + 2 * (size_t)pf_get16(p + 42);
	if (x->len < off + 1 || x->len - off - 1 < p[off])
		return -1;
	off += 1 + (size_t)p[off];	/* past the engine id */
	e->sf_score = 0;
	if (p[3] & PF_EVF_SF) {
		if (x->len - off < 2)
			return -1;
		e->sf_score = (int16_t)pf_get16(p + off);
	}
	e->source = p[0];
	e->limit_kind = p[1];
	e->score_kind = p[2];
	e->flags = p[3];
	e->score = (int32_t)pf_get32(p + 4);
	e->limit = pf_get64(p + 8);
	e->wdl[0] = pf_get16(p + 16);
	e->wdl[1] = pf_get16(p + 18);
	e->wdl[2] = pf_get16(p + 20);
	e->depth = pf_get16(p + 22);
	e->seldepth = pf_get16(p + 24);
	e->best = pf_get16(p + 26);
	e->nodes = pf_get64(p + 28);
	e->time_ms = pf_get32(p + 36);
	e->multipv = pf_get16(p + 40);
	if (e->score_kind > PF_SCORE_MATE)
		return -1;
	if ((e->flags & PF_EVF_WDL) &&
	    (uint32_t)e->wdl[0] + e->wdl[1] + e->wdl[2] != 1000)
		return -1;
	return 0;
}

int
pf_eval_decode(const pf_ext *x, pf_eval *e)
{
	const uint8_t *p = x->data;
	uint16_t pv;
	size_t off;
	int i;

	if (pf_eval_decode_head(x, e) == -1)
		return -1;
	pv = pf_get16(p + 42);
	off = EVAL_FIXED + 2 * (size_t)pv;
	e->pv_len = pv < PF_PV_MAX ? pv : PF_PV_MAX;
	for (i = 0; i < e->pv_len; i++)
		e->pv[i] = pf_get16(p + EVAL_FIXED + 2 * i);
	e->engine_len = p[off];
	memcpy(e->engine, p + off + 1, e->engine_len);
	return 0;
}

/* ---- movescores ------------------------------------------------------- */

#define MS_FIXED	14
#define MS_ENTRY	8

int
pf_movescores_encode(const pf_movescores *s, pf_extbuf *b)
{
	uint16_t n = s->n < PF_MAX_MOVES ? s->n : PF_MAX_MOVES;
	uint8_t *p;
	int i;

	if ((p = pf_extbuf_add(b, PF_EXT_MOVESCORES,
	    MS_FIXED + MS_ENTRY * (uint32_t)n)) == NULL)
		return -1;
	p[0] = s->limit_kind;
	p[1] = s->flags;
	pf_put16(p + 2, s->depth);
	pf_put64(p + 4, s->limit);
	pf_put16(p + 12, n);
	for (i = 0; i < n; i++) {
		uint8_t *q = p + MS_FIXED + MS_ENTRY * i;

		pf_put16(q, s->m[i].move);
		q[2] = s->m[i].score_kind;
		q[3] = s->m[i].depth;
		pf_put32(q + 4, (uint32_t)s->m[i].score);
	}
	return 0;
}

int
pf_movescores_decode(const pf_ext *x, pf_movescores *s)
{
	const uint8_t *p = x->data;
	uint16_t n;
	int i;

	if (x->len < MS_FIXED)
		return -1;
	n = pf_get16(p + 12);
	if (n > PF_MAX_MOVES ||
	    (x->len - MS_FIXED) / MS_ENTRY < n)
		return -1;
	s->limit_kind = p[0];
	s->flags = p[1];
	s->depth = pf_get16(p + 2);
	s->limit = pf_get64(p + 4);
	s->n = n;
	for (i = 0; i < n; i++) {
		const uint8_t *q = p + MS_FIXED + MS_ENTRY * i;

		s->m[i].move = pf_get16(q);
		s->m[i].score_kind = q[2];
		s->m[i].depth = q[3];
		s->m[i].score = (int32_t)pf_get32(q + 4);
		if (q[2] > PF_SCORE_MATE)
			return -1;	/* a kind posflow(5) does not define */
	}
	return 0;
}

/* ---- clock ------------------------------------------------------------ */

int
pf_clock_encode(const pf_clock *c, pf_extbuf *b)
{
	uint8_t *p;

	if ((p = pf_extbuf_add(b, PF_EXT_CLOCK, 8)) == NULL)
		return -1;
	pf_put32(p, c->white_ms);
	pf_put32(p + 4, c->black_ms);
	return 0;
}

int
pf_clock_decode(const pf_ext *x, pf_clock *c)
{
	if (x->len < 8)
		return -1;
	c->white_ms = pf_get32(x->data);
	c->black_ms = pf_get32(x->data + 4);
	return 0;
}

/* ---- policy ----------------------------------------------------------- */

#define POLICY_FIXED	12

int
pf_policy_encode(const pf_policy *pol, pf_extbuf *b)
{
	uint16_t n = pol->n < PF_MAX_MOVES ? pol->n : PF_MAX_MOVES;
	uint8_t *p;
	int i;

	if ((p = pf_extbuf_add(b, PF_EXT_POLICY,
	    POLICY_FIXED + 4 * (uint32_t)n)) == NULL)
		return -1;
	p[0] = pol->method;
	p[1] = 0;
	pf_put16(p + 2, n);
	pf_putf32(p + 4, pol->param1);
	pf_putf32(p + 8, pol->param2);
	for (i = 0; i < n; i++) {
		pf_put16(p + POLICY_FIXED + 4 * i, pol->move[i]);
		pf_put16(p + POLICY_FIXED + 4 * i + 2, pol->prob[i]);
	}
	return 0;
}

/* Refused: a payload too short, or probabilities that do not sum to
   exactly 65535 (posflow(5)). */
int
pf_policy_decode(const pf_ext *x, pf_policy *pol)
{
	const uint8_t *p = x->data;
	uint32_t sum = 0;
	uint16_t n;
	int i;

	if (x->len < POLICY_FIXED)
		return -1;
	n = pf_get16(p + 2);
	if (n > PF_MAX_MOVES || (x->len - POLICY_FIXED) / 4 < n)
		return -1;
	pol->method = p[0];
	pol->n = n;
	pol->param1 = pf_getf32(p + 4);
	pol->param2 = pf_getf32(p + 8);
	for (i = 0; i < n; i++) {
		pol->move[i] = pf_get16(p + POLICY_FIXED + 4 * i);
		pol->prob[i] = pf_get16(p + POLICY_FIXED + 4 * i + 2);
		sum += pol->prob[i];
	}
	return sum == 65535 ? 0 : -1;
}

/* ---- value ------------------------------------------------------------ */

int
pf_value_encode(const pf_value *v, pf_extbuf *b)
{
	uint8_t *p;

	if ((p = pf_extbuf_add(b, PF_EXT_VALUE, 20)) == NULL)
		return -1;
	p[0] = v->method;
	p[1] = v->scale;
	pf_put16(p + 2, 0);
	pf_putf32(p + 4, v->param1);
	pf_putf32(p + 8, v->param2);
	pf_putf32(p + 12, v->lambda);
	pf_putf32(p + 16, v->target);
	return 0;
}

int
pf_value_decode(const pf_ext *x, pf_value *v)
{
	const uint8_t *p = x->data;

	if (x->len < 20)
		return -1;
	v->method = p[0];
	v->scale = p[1];
	v->param1 = pf_getf32(p + 4);
	v->param2 = pf_getf32(p + 8);
	v->lambda = pf_getf32(p + 12);
	v->target = pf_getf32(p + 16);
	return 0;
}

int
pf_value_wanted(int want, int method)
{
	return want == 0 || method == want ||
	    (want == PF_VALUE_WDL && method == PF_VALUE_WDL_ENGINE);
}

/* ---- complexity ------------------------------------------------------- */

int
pf_complexity_encode(const pf_complexity *c, pf_extbuf *b)
{
	uint32_t len;
	uint8_t *p;

	switch (c->mode) {
	case PF_COMPLEXITY_DEPTH:
		len = PF_COMPLEXITY_DEPTH_SIZE;
		break;
	case PF_COMPLEXITY_NODES:
		len = PF_COMPLEXITY_NODES_SIZE;
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if ((p = pf_extbuf_add(b, PF_EXT_COMPLEXITY, len)) == NULL)
		return -1;
	memset(p, 0, len);
	p[0] = c->mode;
	pf_put16(p + 2, c->complexity);
	pf_put16(p + 4, c->depth);
	if (c->mode == PF_COMPLEXITY_DEPTH) {
		p[1] = c->method;
		pf_put16(p + 6, c->first_depth);
		pf_put16(p + 8, c->move);
		pf_putf32(p + 12, c->p_first);
		pf_putf32(p + 16, c->p_decide);
		pf_putf32(p + 20, c->low);
		pf_putf32(p + 24, c->high);
		return 0;
	}
	p[1] = c->flags;
	pf_put16(p + 6, c->shallow_depth);
	p[8] = c->shallow_kind;
	p[9] = c->deep_kind;
	pf_put64(p + 12, c->shallow_limit);
	pf_put64(p + 20, c->deep_limit);
	pf_put16(p + 28, c->shallow_best);
	pf_put16(p + 30, c->deep_best);
	pf_put32(p + 32, (uint32_t)c->loss);
	pf_putf32(p + 36, c->q_shallow);
	pf_putf32(p + 40, c->q_deep);
	pf_put32(p + 44, (uint32_t)c->min_loss);
	pf_putf32(p + 48, c->threshold);
	return 0;
}

int
pf_complexity_decode(const pf_ext *x, pf_complexity *c)
{
	const uint8_t *p = x->data;

	memset(c, 0, sizeof(*c));
	if (x->len < PF_COMPLEXITY_HEAD_SIZE)
		return -1;
	c->mode = p[0];
	c->complexity = pf_get16(p + 2);
	c->depth = pf_get16(p + 4);
	switch (c->mode) {
	case PF_COMPLEXITY_DEPTH:
		if (x->len < PF_COMPLEXITY_DEPTH_SIZE)
			return -1;
		c->method = p[1];
		c->first_depth = pf_get16(p + 6);
		c->move = pf_get16(p + 8);
		c->p_first = pf_getf32(p + 12);
		c->p_decide = pf_getf32(p + 16);
		c->low = pf_getf32(p + 20);
		c->high = pf_getf32(p + 24);
		return 0;
	case PF_COMPLEXITY_NODES:
		if (x->len < PF_COMPLEXITY_NODES_SIZE)
			return -1;
		c->flags = p[1];
		c->shallow_depth = pf_get16(p + 6);
		c->shallow_kind = p[8];
		c->deep_kind = p[9];
		c->shallow_limit = pf_get64(p + 12);
		c->deep_limit = pf_get64(p + 20);
		c->shallow_best = pf_get16(p + 28);
		c->deep_best = pf_get16(p + 30);
		c->loss = (int32_t)pf_get32(p + 32);
		c->q_shallow = pf_getf32(p + 36);
		c->q_deep = pf_getf32(p + 40);
		c->min_loss = (int32_t)pf_get32(p + 44);
		c->threshold = pf_getf32(p + 48);
		return 0;
	default:
		c->flags = p[1];	/* a later mode: its head only */
		return 0;
	}
}

/* ---- repair ----------------------------------------------------------- */

int
pf_repair_encode(const pf_repair *r, pf_extbuf *b)
{
	uint8_t *p;

	if ((p = pf_extbuf_add(b, PF_EXT_REPAIR, PF_REPAIR_SIZE)) == NULL)
		return -1;
	p[0] = r->mode;
	p[1] = r->cls;
	p[2] = r->flags;
	p[3] = 0;
	pf_putf32(p + 4, r->q_shallow);
	pf_putf32(p + 8, r->q_deep);
	pf_put32(p + 12, (uint32_t)r->original);
	pf_put32(p + 16, (uint32_t)r->repaired);
	return 0;
}

int
pf_repair_decode(const pf_ext *x, pf_repair *r)
{
	const uint8_t *p = x->data;

	if (x->len < PF_REPAIR_SIZE)
		return -1;
	r->mode = p[0];
	r->cls = p[1];
	r->flags = p[2];
	r->q_shallow = pf_getf32(p + 4);
	r->q_deep = pf_getf32(p + 8);
	r->original = (int32_t)pf_get32(p + 12);
	r->repaired = (int32_t)pf_get32(p + 16);
	return 0;
}

int
pf_pqr_encode(const pf_pqr *x, pf_extbuf *b)
{
	uint8_t *p;

	if ((p = pf_extbuf_add(b, PF_EXT_PQR, PF_PQR_SIZE)) == NULL)
		return -1;
	pf_put16(p, x->r_move);
	p[2] = x->flags;
	p[3] = 0;
	memcpy(p + 4, x->q, PF_PACKED_SIZE);
	memcpy(p + 4 + PF_PACKED_SIZE, x->r, PF_PACKED_SIZE);
	return 0;
}

int
pf_pqr_decode(const pf_ext *x, pf_pqr *out)
{
	const uint8_t *p = x->data;

	if (x->len < PF_PQR_SIZE)
		return -1;
	out->r_move = pf_get16(p);
	out->flags = p[2];
	memcpy(out->q, p + 4, PF_PACKED_SIZE);
	memcpy(out->r, p + 4 + PF_PACKED_SIZE, PF_PACKED_SIZE);
	return 0;
}

/* ---- merge ------------------------------------------------------------ */

int
pf_merge_encode(const pf_merge *m, pf_extbuf *b)
{
	uint8_t *p;

	if ((p = pf_extbuf_add(b, PF_EXT_MERGE, PF_MERGE_SIZE)) == NULL)
		return -1;
	pf_put32(p, m->count);
	pf_put32(p + 4, m->wins);
	pf_put32(p + 8, m->draws);
	pf_put32(p + 12, m->losses);
	return 0;
}

int
pf_merge_decode(const pf_ext *x, pf_merge *m)
{
	const uint8_t *p = x->data;

	if (x->len < PF_MERGE_SIZE)
		return -1;
	m->count = pf_get32(p);
	m->wins = pf_get32(p + 4);
	m->draws = pf_get32(p + 8);
	m->losses = pf_get32(p + 12);
	return 0;
}
