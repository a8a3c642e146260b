/*
 * stream.h - the record-stream checks shared by the record and
 * record_valid targets (and the extension checks, by uci): every record the reader hands out is checked with
 * the raw codec and every extension decoder, and a second, minimal parser
 * of posflow(5) decides whether an input is a well-formed plain stream, in
 * which case the reader must return exactly its records and no error.
 */
#ifndef PF_FUZZ_STREAM_H
#define PF_FUZZ_STREAM_H

#include "fuzz.h"
#include "ext.h"
#include "record.h"

/* ---- extensions --------------------------------------------------------- */

/* The payload the encoder wrote: b holds exactly one extension of type. */
FUZZ_STATIC const uint8_t *
one_ext(const pf_extbuf *b, uint16_t type, uint32_t *len)
{
	FUZZ_CHECK(b->len >= PF_EXT_HEADER_SIZE);
	FUZZ_CHECK(pf_get16(b->data) == type);
	FUZZ_CHECK(pf_get16(b->data + 2) == 0);
	*len = pf_get32(b->data + 4);
	FUZZ_CHECK(b->len == PF_EXT_HEADER_SIZE + (size_t)*len);
	return b->data + PF_EXT_HEADER_SIZE;
}

FUZZ_STATIC int
f32_same(float a, float b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/*
 * UTF-8 as RFC 3629 defines it (shortest form, no surrogates, nothing
 * above U+10FFFF), checked byte by byte: the second path for the strings
 * the encoders write.
 */
FUZZ_STATIC int
naive_utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0, j, k;
	uint32_t c;

	while (i < n) {
		c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			k = 1, c &= 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			k = 2, c &= 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			k = 3, c &= 0x07;
		else
			return 0;
		if (n - i - 1 < k)
			return 0;
		for (j = 1; j <= k; j++) {
			if ((s[i + j] & 0xC0) != 0x80)
				return 0;
			c = c << 6 | (s[i + j] & 0x3F);
		}
		if ((k == 2 && c < 0x800) || (k == 3 && (c < 0x10000 ||
		    c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
			return 0;
		i += k + 1;
	}
	return 1;
}

/*
 * A string through an encoder (ext.h, strings on the way in): what comes
 * out is valid UTF-8 of at most max bytes, and a string that was already
 * valid UTF-8 of at most max bytes comes out unchanged.
 */
FUZZ_STATIC void
check_string(const char *in, size_t in_len, const char *out, size_t out_len,
    size_t max)
{
	FUZZ_CHECK(out_len <= max);
	FUZZ_CHECK(naive_utf8_valid((const uint8_t *)out, out_len));
	if (in_len <= max && naive_utf8_valid((const uint8_t *)in, in_len))
		FUZZ_CHECK(out_len == in_len &&
		    (in_len == 0 || memcmp(in, out, in_len) == 0));
}

/*
 * Decode, encode again, compare.  Where the format makes it exact (the
 * payload is as long as its fields say, its reserved bytes are 0, and its
 * strings are valid UTF-8 within their limits, which the encoders keep as
 * they are) the new bytes equal the old ones.  Always: the new bytes
 * decode to the same values (strings as the encoders convert them), and
 * encoding what they decode to gives the same bytes again.
 */
FUZZ_STATIC void
check_meta(const pf_ext *x, pf_extbuf *b)
{
	static pf_extbuf again;
	pf_meta m, m2;
	pf_ext y;
	uint32_t len, len3;
	size_t need = 16;
	int i, exact = 1;

	if (pf_meta_decode(x, &m) != 0)
		return;
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_meta_encode(&m, b) == 0);
	y.type = PF_EXT_META;
	y.data = one_ext(b, PF_EXT_META, &len);
	y.len = len;
	FUZZ_CHECK(pf_meta_decode(&y, &m2) == 0);
	FUZZ_CHECK(m.white_elo == m2.white_elo && m.black_elo == m2.black_elo &&
	    m.base_s == m2.base_s && m.inc_s == m2.inc_s &&
	    m.termination == m2.termination);
	{
		const char *s1[6] = { m.event, m.site, m.white, m.black, m.date,
		    m.term_text }, *s2[6] = { m2.event, m2.site, m2.white,
		    m2.black, m2.date, m2.term_text };
		uint16_t n1[6] = { m.event_len, m.site_len, m.white_len,
		    m.black_len, m.date_len, m.term_text_len }, n2[6] = {
		    m2.event_len, m2.site_len, m2.white_len, m2.black_len,
		    m2.date_len, m2.term_text_len };

		for (i = 0; i < 6; i++) {
			/* Each string lies inside the payload it came from. */
			FUZZ_CHECK(n1[i] == 0 ||
			    (s1[i] >= (const char *)x->data && s1[i] + n1[i] <=
			    (const char *)x->data + x->len));
			check_string(s1[i], n1[i], s2[i], n2[i],
			    PF_META_STR_MAX);
			if (n1[i] > PF_META_STR_MAX ||
			    !naive_utf8_valid((const uint8_t *)s1[i], n1[i]))
				exact = 0;
			need += 2 + (size_t)n1[i];
		}
	}
	if (exact && x->len == need && x->data[13] == 0 &&
	    pf_get16(x->data + 14) == 0)
		FUZZ_CHECK(len == x->len && memcmp(y.data, x->data, len) == 0);
	pf_extbuf_reset(&again);
	FUZZ_CHECK(pf_meta_encode(&m2, &again) == 0);
	(void)one_ext(&again, PF_EXT_META, &len3);
	FUZZ_CHECK(again.len == b->len &&
	    memcmp(again.data, b->data, b->len) == 0);
}

FUZZ_STATIC int
eval_head_same(const pf_eval *a, const pf_eval *b)
{
	return a->source == b->source && a->limit_kind == b->limit_kind &&
	    a->score_kind == b->score_kind && a->flags == b->flags &&
	    a->score == b->score && a->limit == b->limit &&
	    memcmp(a->wdl, b->wdl, sizeof(a->wdl)) == 0 &&
	    a->depth == b->depth && a->seldepth == b->seldepth &&
	    a->best == b->best && a->nodes == b->nodes &&
	    a->time_ms == b->time_ms && a->multipv == b->multipv;
}

FUZZ_STATIC void
check_eval(const pf_ext *x, pf_extbuf *b)
{
	static pf_eval e, e2, head;
	pf_ext y;
	uint32_t len;
	int rc, rch;
	int32_t cp;

	rc = pf_eval_decode(x, &e);
	rch = pf_eval_decode_head(x, &head);
	FUZZ_CHECK(rc == rch);
	if (rc != 0)
		return;
	FUZZ_CHECK(eval_head_same(&e, &head));
	FUZZ_CHECK(e.pv_len <= PF_PV_MAX);
	cp = pf_score_cp(e.score_kind, e.score);
	if (e.score_kind == PF_SCORE_MATE)
		FUZZ_CHECK(cp >= -PF_MATE_CP && cp <= PF_MATE_CP && cp != 0 &&
		    (cp > 0) == (e.score > 0));
	else
		FUZZ_CHECK(cp == e.score);
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_eval_encode(&e, b) == 0);
	y.type = PF_EXT_EVAL;
	y.data = one_ext(b, PF_EXT_EVAL, &len);
	y.len = len;
	FUZZ_CHECK(pf_eval_decode(&y, &e2) == 0);
	FUZZ_CHECK(eval_head_same(&e, &e2));
	FUZZ_CHECK(e.pv_len == e2.pv_len &&
	    memcmp(e.pv, e2.pv, e.pv_len * sizeof(e.pv[0])) == 0);
	check_string(e.engine, e.engine_len, e2.engine, e2.engine_len,
	    PF_ENGINE_MAX);
	{
		size_t pv = pf_get16(x->data + 42);
		size_t need = 44 + 2 * pv + 1 + e.engine_len;

		if (pv <= PF_PV_MAX && x->len == need &&
		    naive_utf8_valid((const uint8_t *)e.engine, e.engine_len))
			FUZZ_CHECK(len == x->len &&
			    memcmp(y.data, x->data, len) == 0);
	}
	{
		static pf_extbuf again;

		pf_extbuf_reset(&again);
		FUZZ_CHECK(pf_eval_encode(&e2, &again) == 0);
		FUZZ_CHECK(again.len == b->len &&
		    memcmp(again.data, b->data, b->len) == 0);
	}
}

FUZZ_STATIC void
check_movescores(const pf_ext *x, pf_extbuf *b)
{
	static pf_movescores s, s2;
	pf_ext y;
	uint32_t len;
	int i;

	if (pf_movescores_decode(x, &s) != 0)
		return;
	FUZZ_CHECK(s.n <= PF_MAX_MOVES);
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_movescores_encode(&s, b) == 0);
	y.type = PF_EXT_MOVESCORES;
	y.data = one_ext(b, PF_EXT_MOVESCORES, &len);
	y.len = len;
	FUZZ_CHECK(pf_movescores_decode(&y, &s2) == 0);
	FUZZ_CHECK(s.limit_kind == s2.limit_kind && s.flags == s2.flags &&
	    s.depth == s2.depth && s.limit == s2.limit && s.n == s2.n);
	for (i = 0; i < s.n; i++)
		FUZZ_CHECK(s.m[i].move == s2.m[i].move &&
		    s.m[i].score_kind == s2.m[i].score_kind &&
		    s.m[i].depth == s2.m[i].depth &&
		    s.m[i].score == s2.m[i].score);
	if (x->len == 14 + 8 * (uint32_t)s.n)
		FUZZ_CHECK(len == x->len && memcmp(y.data, x->data, len) == 0);
}

FUZZ_STATIC void
check_clock(const pf_ext *x, pf_extbuf *b)
{
	pf_clock c, c2;
	pf_ext y;
	uint32_t len;

	if (pf_clock_decode(x, &c) != 0)
		return;
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_clock_encode(&c, b) == 0);
	y.type = PF_EXT_CLOCK;
	y.data = one_ext(b, PF_EXT_CLOCK, &len);
	y.len = len;
	FUZZ_CHECK(pf_clock_decode(&y, &c2) == 0);
	FUZZ_CHECK(c.white_ms == c2.white_ms && c.black_ms == c2.black_ms);
	if (x->len == 8)
		FUZZ_CHECK(len == 8 && memcmp(y.data, x->data, 8) == 0);
}

FUZZ_STATIC void
check_policy(const pf_ext *x, pf_extbuf *b)
{
	static pf_policy p, p2;
	pf_ext y;
	uint32_t len, sum = 0;
	int i;

	if (pf_policy_decode(x, &p) != 0)
		return;
	FUZZ_CHECK(p.n <= PF_MAX_MOVES);
	for (i = 0; i < p.n; i++)
		sum += p.prob[i];
	FUZZ_CHECK(sum == 65535);
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_policy_encode(&p, b) == 0);
	y.type = PF_EXT_POLICY;
	y.data = one_ext(b, PF_EXT_POLICY, &len);
	y.len = len;
	FUZZ_CHECK(pf_policy_decode(&y, &p2) == 0);
	FUZZ_CHECK(p.method == p2.method && p.n == p2.n &&
	    f32_same(p.param1, p2.param1) && f32_same(p.param2, p2.param2));
	for (i = 0; i < p.n; i++)
		FUZZ_CHECK(p.move[i] == p2.move[i] && p.prob[i] == p2.prob[i]);
	if (x->len == 12 + 4 * (uint32_t)p.n && x->data[1] == 0)
		FUZZ_CHECK(len == x->len && memcmp(y.data, x->data, len) == 0);
}

FUZZ_STATIC void
check_value(const pf_ext *x, pf_extbuf *b)
{
	pf_value v, v2;
	pf_ext y;
	uint32_t len;

	if (pf_value_decode(x, &v) != 0)
		return;
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_value_encode(&v, b) == 0);
	y.type = PF_EXT_VALUE;
	y.data = one_ext(b, PF_EXT_VALUE, &len);
	y.len = len;
	FUZZ_CHECK(pf_value_decode(&y, &v2) == 0);
	FUZZ_CHECK(v.method == v2.method && v.scale == v2.scale &&
	    f32_same(v.param1, v2.param1) && f32_same(v.param2, v2.param2) &&
	    f32_same(v.lambda, v2.lambda) && f32_same(v.target, v2.target));
	if (x->len == 20 && pf_get16(x->data + 2) == 0)
		FUZZ_CHECK(len == 20 && memcmp(y.data, x->data, 20) == 0);
}

FUZZ_STATIC void
check_repair(const pf_ext *x, pf_extbuf *b)
{
	pf_repair r, r2;
	pf_ext y;
	uint32_t len;

	if (pf_repair_decode(x, &r) != 0)
		return;
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_repair_encode(&r, b) == 0);
	y.type = PF_EXT_REPAIR;
	y.data = one_ext(b, PF_EXT_REPAIR, &len);
	y.len = len;
	FUZZ_CHECK(len == PF_REPAIR_SIZE);
	FUZZ_CHECK(pf_repair_decode(&y, &r2) == 0);
	FUZZ_CHECK(r.mode == r2.mode && r.cls == r2.cls &&
	    r.flags == r2.flags && f32_same(r.q_shallow, r2.q_shallow) &&
	    f32_same(r.q_deep, r2.q_deep) && r.original == r2.original &&
	    r.repaired == r2.repaired);
	/* the fields a decoder knows come back byte for byte (the reserved
	   byte 3 is written 0) */
	if (x->data[3] == 0)
		FUZZ_CHECK(memcmp(y.data, x->data, PF_REPAIR_SIZE) == 0);
}

FUZZ_STATIC void
check_pqr(const pf_ext *x, pf_extbuf *b)
{
	pf_pqr q, q2;
	pf_ext y;
	uint32_t len;

	if (pf_pqr_decode(x, &q) != 0)
		return;
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_pqr_encode(&q, b) == 0);
	y.type = PF_EXT_PQR;
	y.data = one_ext(b, PF_EXT_PQR, &len);
	y.len = len;
	FUZZ_CHECK(len == PF_PQR_SIZE);
	FUZZ_CHECK(pf_pqr_decode(&y, &q2) == 0);
	FUZZ_CHECK(q.r_move == q2.r_move && q.flags == q2.flags &&
	    memcmp(q.q, q2.q, sizeof(q.q)) == 0 &&
	    memcmp(q.r, q2.r, sizeof(q.r)) == 0);
	if (x->data[3] == 0)
		FUZZ_CHECK(memcmp(y.data, x->data, PF_PQR_SIZE) == 0);
}

/* merge: what decodes re-encodes to the same 16 bytes. */
FUZZ_STATIC void
check_merge(const pf_ext *x, pf_extbuf *b)
{
	pf_merge m, m2;
	pf_ext y;
	uint32_t len;

	if (pf_merge_decode(x, &m) != 0)
		return;
	pf_extbuf_reset(b);
	FUZZ_CHECK(pf_merge_encode(&m, b) == 0);
	y.type = PF_EXT_MERGE;
	y.data = one_ext(b, PF_EXT_MERGE, &len);
	y.len = len;
	FUZZ_CHECK(len == PF_MERGE_SIZE);
	FUZZ_CHECK(pf_merge_decode(&y, &m2) == 0);
	FUZZ_CHECK(m.count == m2.count && m.wins == m2.wins &&
	    m.draws == m2.draws && m.losses == m2.losses);
	FUZZ_CHECK(memcmp(y.data, x->data, PF_MERGE_SIZE) == 0);
}

/* complexity: what decodes re-encodes, and decoding that and encoding
   again gives the same bytes (reserved bytes are written 0 once); a
   later mode decodes (its head only) but is not encoded (ext.h). */
FUZZ_STATIC void
check_complexity(const pf_ext *x, pf_extbuf *b)
{
	pf_complexity c, c2;
	pf_extbuf b2 = { 0 };
	pf_ext y;
	uint32_t len, len2;
	const uint8_t *once;

	if (pf_complexity_decode(x, &c) != 0)
		return;
	pf_extbuf_reset(b);
	if (c.mode != PF_COMPLEXITY_DEPTH && c.mode != PF_COMPLEXITY_NODES) {
		FUZZ_CHECK(pf_complexity_encode(&c, b) == -1);
		return;
	}
	FUZZ_CHECK(pf_complexity_encode(&c, b) == 0);
	y.type = PF_EXT_COMPLEXITY;
	y.data = one_ext(b, PF_EXT_COMPLEXITY, &len);
	y.len = len;
	FUZZ_CHECK(pf_complexity_decode(&y, &c2) == 0);
	FUZZ_CHECK(c.mode == c2.mode && c.complexity == c2.complexity &&
	    c.depth == c2.depth);
	FUZZ_CHECK(pf_complexity_encode(&c2, &b2) == 0);
	once = one_ext(&b2, PF_EXT_COMPLEXITY, &len2);
	FUZZ_CHECK(len2 == len && memcmp(once, y.data, len) == 0);
	pf_extbuf_free(&b2);
}

/*
 * A decoder reads only its payload: each gets an exact-size heap copy, so
 * a read past the payload is an ASan report even where the record's next
 * bytes would hide it.
 */
FUZZ_STATIC void
check_ext(const pf_ext *x0, pf_extbuf *b)
{
	pf_ext x = *x0;
	uint8_t *copy = malloc(x0->len > 0 ? x0->len : 1);

	FUZZ_CHECK(copy != NULL);
	memcpy(copy, x0->data, x0->len);
	x.data = copy;
	switch (x.type) {
	case PF_EXT_META:
		check_meta(&x, b);
		break;
	case PF_EXT_EVAL:
		check_eval(&x, b);
		break;
	case PF_EXT_MOVESCORES:
		check_movescores(&x, b);
		break;
	case PF_EXT_CLOCK:
		check_clock(&x, b);
		break;
	case PF_EXT_POLICY:
		check_policy(&x, b);
		break;
	case PF_EXT_VALUE:
		check_value(&x, b);
		break;
	case PF_EXT_REPAIR:
		check_repair(&x, b);
		break;
	case PF_EXT_COMPLEXITY:
		check_complexity(&x, b);
		break;
	case PF_EXT_PQR:
		check_pqr(&x, b);
		break;
	case PF_EXT_MERGE:
		check_merge(&x, b);
		break;
	}
	FUZZ_CHECK((pf_ext_type_name(x.type) != NULL) ==
	    (x.type >= PF_EXT_META && x.type <= PF_EXT_MERGE));
	free(copy);
}

/*
 * The extension area of a record the reader accepted: it walks without
 * error and fills the area exactly; pf_ext_find / pf_ext_count agree with
 * the walk; pf_extbuf_copy_except drops exactly the extensions of one
 * type and copies the rest byte for byte; every extension decodes (or is
 * refused) as check_ext says.
 */
FUZZ_STATIC void
check_ext_area(const pf_record *rec)
{
	static pf_extbuf b, kept;
	pf_ext_iter it;
	pf_ext x, y;
	size_t off = 0, koff = 0;
	uint16_t first = 0;
	int rc, n = 0, nth;

	pf_ext_iter_init(&it, rec);
	while ((rc = pf_ext_next(&it, &x)) == 1) {
		FUZZ_CHECK(x.data == rec->ext + off + PF_EXT_HEADER_SIZE);
		FUZZ_CHECK(x.len <= rec->ext_len - off - PF_EXT_HEADER_SIZE);
		off += PF_EXT_HEADER_SIZE + (size_t)x.len;
		if (n++ == 0)
			first = x.type;
		check_ext(&x, &b);
	}
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(off == rec->ext_len);
	if (n == 0)
		return;

	/* The first type: find each one, count them, drop them. */
	nth = 0;
	while (pf_ext_find(rec, first, nth, &y) == 1)
		nth++;
	FUZZ_CHECK(nth == pf_ext_count(rec, first) && nth >= 1);
	pf_extbuf_reset(&kept);
	FUZZ_CHECK(pf_extbuf_copy_except(&kept, rec, first) == 0);
	pf_ext_iter_init(&it, rec);
	while (pf_ext_next(&it, &x) == 1) {
		size_t whole = PF_EXT_HEADER_SIZE + (size_t)x.len;

		if (x.type == first && first != 0)	/* 0: drop none */
			continue;
		FUZZ_CHECK(koff + whole <= kept.len);
		FUZZ_CHECK(memcmp(kept.data + koff, x.data - PF_EXT_HEADER_SIZE,
		    whole) == 0);
		koff += whole;
	}
	FUZZ_CHECK(koff == kept.len);
	pf_extbuf_reset(&kept);
	FUZZ_CHECK(pf_extbuf_copy_except(&kept, rec, 0) == 0);
	FUZZ_CHECK(kept.len == rec->ext_len &&
	    memcmp(kept.data, rec->ext, rec->ext_len) == 0);
}

/* ---- records ------------------------------------------------------------ */

/*
 * One record from the reader: it re-encodes to the bytes it was read from
 * (but the reserved byte 45, which the encoder writes as 0), decodes again
 * to the same fields, does not decode from a buffer one byte short; its
 * extensions pass check_ext_area; its position, if it unpacks, is a
 * consistent board with exact FEN and pack round trips.
 */
FUZZ_STATIC void
check_record(const pf_record *rec)
{
	const uint8_t *src = rec->ext - PF_CORE_SIZE;
	size_t len = PF_CORE_SIZE + (size_t)rec->ext_len;
	uint8_t *enc = malloc(len);
	pf_record r2;
	pf_board b;
	char err[256];

	FUZZ_CHECK(enc != NULL);
	FUZZ_CHECK(pf_get32(src) == len);
	FUZZ_CHECK(pf_record_encode(rec, enc) == len);
	FUZZ_CHECK(memcmp(enc, src, 45) == 0);
	FUZZ_CHECK(memcmp(enc + 46, src + 46, len - 46) == 0);
	FUZZ_CHECK(pf_record_decode(enc, len, &r2, err, sizeof(err)) ==
	    (long)len);
	FUZZ_CHECK(memcmp(r2.pos, rec->pos, PF_PACKED_SIZE) == 0 &&
	    r2.game_id == rec->game_id && r2.ply == rec->ply &&
	    r2.move == rec->move && r2.result == rec->result &&
	    r2.flags == rec->flags && r2.ext == enc + PF_CORE_SIZE &&
	    r2.ext_len == rec->ext_len);
	err[0] = '\0';
	FUZZ_CHECK(pf_record_decode(enc, len - 1, &r2, err, sizeof(err)) == -1);
	FUZZ_CHECK(err[0] != '\0');
	free(enc);

	check_ext_area(rec);

	if (pf_board_unpack(&b, rec->pos, !!(rec->flags & PF_RF_CHESS960),
	    NULL, 0) == 0) {
		fuzz_check_consistent(&b);
		fuzz_check_round_trips(&b);
	}
}

/* ---- the reference parser ----------------------------------------------- */

/*
 * Parse p[0..n) as concatenated plain streams by posflow(5), strictly.
 * Returns the number of records (their offsets and lengths in off[],
 * len[], at most max), or -1 if anything at all is wrong.
 */
FUZZ_STATIC long
reference_parse(const uint8_t *p, size_t n, size_t *off, uint32_t *len,
    long max)
{
	size_t at = 0;
	long nrec = 0;

	while (at < n) {
		uint32_t hlen;
		unsigned flags;

		if (n - at < PF_HEADER_SIZE ||
		    memcmp(p + at, "\x89PFS", 4) != 0 ||
		    pf_get16(p + at + 4) != 1)
			return -1;
		flags = pf_get16(p + at + 6);
		hlen = pf_get32(p + at + 8);
		if ((flags & ~PF_SF_KNOWN) || hlen < PF_HEADER_SIZE ||
		    hlen > 65536 || hlen > n - at)
			return -1;
		at += hlen;
		for (;;) {
			uint32_t blen, count, got = 0;
			size_t end;

			if (n - at < PF_BLOCK_HEADER_SIZE ||
			    memcmp(p + at, "\x89PFB", 4) != 0)
				return -1;
			blen = pf_get32(p + at + 4);
			count = pf_get32(p + at + 8);
			if (blen > PF_BLOCK_MAX ||
			    blen > n - at - PF_BLOCK_HEADER_SIZE ||
			    pf_get64(p + at + 16) != pf_block_checksum(flags,
			    p + at + PF_BLOCK_HEADER_SIZE, blen))
				return -1;
			at += PF_BLOCK_HEADER_SIZE;
			if (blen == 0) {
				if (count != 0)
					return -1;
				break;	/* the end block */
			}
			end = at + blen;
			while (at < end) {
				uint32_t rlen, e;

				if (end - at < 4)
					return -1;
				rlen = pf_get32(p + at);
				if (rlen < PF_CORE_SIZE || rlen > end - at)
					return -1;
				/* The extension chain fills the record. */
				for (e = PF_CORE_SIZE; e < rlen;) {
					uint32_t elen;

					if (rlen - e < PF_EXT_HEADER_SIZE)
						return -1;
					elen = pf_get32(p + at + e + 4);
					if (elen > rlen - e -
					    PF_EXT_HEADER_SIZE)
						return -1;
					e += PF_EXT_HEADER_SIZE + elen;
				}
				if (nrec >= max)
					return -1;
				off[nrec] = at;
				len[nrec] = rlen;
				nrec++;
				got++;
				at += rlen;
			}
			if (got != count)
				return -1;
		}
	}
	return nrec;
}

/* ---- the reader --------------------------------------------------------- */

/*
 * Read the scratch file (holding stream, which is plain[0..plain_n) after
 * decompression; plain may be NULL when not known) with pf_reader to the
 * end, checking every record.  Properties of the reader itself: every call
 * returns 1, 0 or -1; an error has a message; the reading ends (a bounded
 * number of calls); pf_reader_records counts what was returned; 0 stays
 * 0; and when the reference parser finds plain[] a well-formed stream, the
 * reader returns exactly its records, in order, without an error.
 */
FUZZ_STATIC void
read_stream(size_t size, const uint8_t *plain, size_t plain_n)
{
	static size_t off[1 << 16];
	static uint32_t len[1 << 16];
	long nref = -1, got = 0;
	uint64_t calls = 0, bound = 4 * (uint64_t)(size + plain_n) + 64;
	pf_reader *r;
	pf_record rec;
	int rc, errors = 0;

	if (plain != NULL)
		nref = reference_parse(plain, plain_n, off, len, 1 << 16);
	if (lseek(fuzz_fd, 0, SEEK_SET) == -1)
		abort();
	FUZZ_CHECK((r = pf_reader_open_fd(fuzz_fd, "fuzz")) != NULL);
	while ((rc = pf_reader_next(r, &rec)) != 0) {
		FUZZ_CHECK(++calls <= bound);
		FUZZ_CHECK(rc == 1 || rc == -1);
		if (rc == -1) {
			FUZZ_CHECK(pf_reader_error(r) != NULL &&
			    pf_reader_error(r)[0] != '\0');
			errors++;
			if (nref >= 0) {
				fprintf(stderr, "reader: %s\n",
				    pf_reader_error(r));
				FUZZ_CHECK(!"a well-formed stream reads "
				    "without error");
			}
			continue;
		}
		if (nref >= 0) {
			FUZZ_CHECK(got < nref);
			FUZZ_CHECK(PF_CORE_SIZE + rec.ext_len == len[got]);
			FUZZ_CHECK(memcmp(rec.ext - PF_CORE_SIZE,
			    plain + off[got], len[got]) == 0);
		}
		got++;
		check_record(&rec);
	}
	FUZZ_CHECK(pf_reader_records(r) == (uint64_t)got);
	FUZZ_CHECK(pf_reader_next(r, &rec) == 0);
	if (nref >= 0)
		FUZZ_CHECK(got == nref && errors == 0);
	pf_reader_free(r);
}

#endif
