/*
 * ext.c - unit tests of record extensions (lib/ext.c): iteration, find and
 * count, the extension buffer, pass-through copies, every typed encoder
 * and decoder (the complexity, repair and merge ones also against their
 * bytes in posflow(5)), refusal of short payloads, strings made valid UTF-8 and cut
 * at character boundaries on the way in, and the mate mapping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "posflow.h"

/* The payload of the last extension in b, as a pf_ext. */
static pf_ext
last_ext(const pf_extbuf *b)
{
	pf_record rec = { .ext = b->data, .ext_len = (uint32_t)b->len };
	pf_ext_iter it;
	pf_ext x, last = { 0 };

	pf_ext_iter_init(&it, &rec);
	while (pf_ext_next(&it, &x) == 1)
		last = x;
	return last;
}

/*
 * Every payload shorter than need must be refused, and the full one (and
 * one with extra bytes at its end) accepted.
 */
typedef int (*decoder)(const pf_ext *, void *);

static int
short_refused(const pf_ext *x, uint32_t need, decoder dec, void *out)
{
	uint8_t *copy = malloc(x->len + 16);
	pf_ext y = *x;
	uint32_t n;
	int ok = 1;

	/* Decoders must not read past len: give them an exact heap copy. */
	for (n = 0; n < need; n++) {
		uint8_t *p = malloc(n > 0 ? n : 1);

		memcpy(p, x->data, n);
		y.data = p;
		y.len = n;
		if (dec(&y, out) != -1)
			ok = 0;
		free(p);
	}
	memcpy(copy, x->data, x->len);
	memset(copy + x->len, 0xee, 16);
	y.data = copy;
	y.len = x->len + 16;
	if (dec(&y, out) != 0)
		ok = 0;
	free(copy);
	return ok;
}

static void
test_generic(void)
{
	pf_extbuf b = { 0 };
	pf_record rec;
	pf_ext_iter it;
	pf_ext x;
	uint8_t *p, bad[12];
	int n;

	CHECK(pf_extbuf_add(&b, PF_EXT_CLOCK, 8) != NULL &&
	    (p = pf_extbuf_add(&b, 0x8001, 3)) != NULL, "add extensions");
	memcpy(p, "abc", 3);
	pf_extbuf_add(&b, PF_EXT_CLOCK, 0);
	pf_put16(b.data + 2, 0x1234);	/* reserved field of the first */
	rec.ext = b.data;
	rec.ext_len = (uint32_t)b.len;
	CHECK(b.len == 8 + 8 + 8 + 3 + 8, "sizes add up (%zu)", b.len);
	pf_ext_iter_init(&it, &rec);
	n = 0;
	while (pf_ext_next(&it, &x) == 1)
		n++;
	CHECK(n == 3, "iteration sees three extensions");
	CHECK(pf_ext_count(&rec, PF_EXT_CLOCK) == 2 &&
	    pf_ext_count(&rec, 0x8001) == 1 &&
	    pf_ext_count(&rec, PF_EXT_EVAL) == 0, "count by type");
	CHECK(pf_ext_find(&rec, PF_EXT_CLOCK, 1, &x) == 1 && x.len == 0 &&
	    pf_ext_find(&rec, PF_EXT_CLOCK, 2, &x) == 0, "find the nth");
	CHECK(pf_ext_find(&rec, 0x8001, 0, &x) == 1 && x.len == 3 &&
	    memcmp(x.data, "abc", 3) == 0, "find returns the payload");
	CHECK(pf_ext_find(&rec, PF_EXT_CLOCK, 0, &x) == 1 &&
	    x.reserved == 0x1234, "reserved field is read");
	{
		pf_extbuf c = { 0 };

		CHECK(pf_extbuf_copy_except(&c, &rec, 0x8001) == 0 &&
		    c.len == 16 + 8 && memcmp(c.data, b.data, 16) == 0,
		    "copy_except drops one type, keeps the rest byte for byte");
		pf_extbuf_reset(&c);
		CHECK(c.len == 0 && pf_extbuf_copy_except(&c, &rec, 0) == 0 &&
		    c.len == b.len && memcmp(c.data, b.data, b.len) == 0,
		    "copy_except 0 copies everything");
		CHECK(pf_extbuf_append_raw(&c, b.data, 8) == 0 &&
		    c.len == b.len + 8, "append_raw appends");
		pf_extbuf_free(&c);
		CHECK(c.data == NULL && c.len == 0, "free empties");
	}
	/* A malformed area: 12 bytes claiming 100. */
	memset(bad, 0, sizeof(bad));
	pf_put16(bad, 2);
	pf_put32(bad + 4, 100);
	rec.ext = bad;
	rec.ext_len = sizeof(bad);
	pf_ext_iter_init(&it, &rec);
	CHECK(pf_ext_next(&it, &x) == -1 && pf_ext_next(&it, &x) == 0,
	    "an overrunning extension is -1, then the end");
	rec.ext_len = 5;
	pf_ext_iter_init(&it, &rec);
	CHECK(pf_ext_next(&it, &x) == -1, "a cut header is -1");
	CHECK(pf_ext_count(&rec, 2) == 0 && pf_ext_find(&rec, 2, 0, &x) == 0,
	    "count and find stop at damage");
	{
		pf_extbuf c = { 0 };

		rec.ext_len = sizeof(bad);
		CHECK(pf_extbuf_copy_except(&c, &rec, 5) == -1,
		    "copy_except refuses a malformed area");
		pf_extbuf_free(&c);
	}
	rec.ext = NULL;
	rec.ext_len = 0;
	pf_ext_iter_init(&it, &rec);
	CHECK(pf_ext_next(&it, &x) == 0, "no extensions: the end at once");
	CHECK(strcmp(pf_ext_type_name(PF_EXT_META), "meta") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_EVAL), "eval") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_MOVESCORES), "movescores") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_CLOCK), "clock") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_POLICY), "policy") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_VALUE), "value") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_PQR), "pqr") == 0 &&
	    strcmp(pf_ext_type_name(PF_EXT_MERGE), "merge") == 0 &&
	    pf_ext_type_name(0) == NULL && pf_ext_type_name(0x8000) == NULL,
	    "type names");
	pf_extbuf_free(&b);
}

static void
test_meta(void)
{
	pf_meta m = { 2100, 1987, 180, 2, PF_TERM_TIME, "Rated Blitz game",
	    "https://lichess.org/abcd", "alice", "bob", "2024.01.02",
	    "Time forfeit", 16, 24, 5, 3, 10, 12 }, d;
	pf_extbuf b = { 0 };
	pf_ext x;

	CHECK(pf_meta_encode(&m, &b) == 0, "meta encodes");
	x = last_ext(&b);
	CHECK(x.type == PF_EXT_META && x.len == 16 + 12 + 16 + 24 + 5 + 3 +
	    10 + 12, "meta length %u", x.len);
	CHECK(pf_meta_decode(&x, &d) == 0 && d.white_elo == 2100 &&
	    d.black_elo == 1987 && d.base_s == 180 && d.inc_s == 2 &&
	    d.termination == PF_TERM_TIME, "meta numbers round-trip");
	CHECK(d.event_len == 16 && memcmp(d.event, m.event, 16) == 0 &&
	    d.site_len == 24 && memcmp(d.site, m.site, 24) == 0 &&
	    d.white_len == 5 && memcmp(d.white, "alice", 5) == 0 &&
	    d.black_len == 3 && memcmp(d.black, "bob", 3) == 0 &&
	    d.date_len == 10 && memcmp(d.date, "2024.01.02", 10) == 0 &&
	    d.term_text_len == 12 && memcmp(d.term_text, "Time forfeit",
	    12) == 0, "meta strings round-trip");
	CHECK(short_refused(&x, x.len, (decoder)pf_meta_decode, &d),
	    "meta: every short payload refused");
	memset(&m, 0, sizeof(m));
	m.base_s = PF_U32_UNKNOWN;
	pf_extbuf_reset(&b);
	pf_meta_encode(&m, &b);
	x = last_ext(&b);
	CHECK(x.len == 28 && pf_meta_decode(&x, &d) == 0 &&
	    d.base_s == PF_U32_UNKNOWN && d.event_len == 0,
	    "meta with no strings");
	pf_extbuf_free(&b);
}

static void
test_eval(void)
{
	pf_eval e, d;
	pf_extbuf b = { 0 };
	pf_ext x;
	int i;

	memset(&e, 0, sizeof(e));
	e.source = PF_SRC_ENGINE;
	e.limit_kind = PF_LIMIT_DEPTH;
	e.score_kind = PF_SCORE_MATE;
	e.flags = PF_EVF_WDL | PF_EVF_LOWER;
	e.score = -3;
	e.limit = 16;
	e.wdl[0] = 10, e.wdl[1] = 20, e.wdl[2] = 970;
	e.depth = 16, e.seldepth = 22;
	e.best = PF_MAKE_MOVE(12, 28, 0, 0);
	e.nodes = 123456789012ull;
	e.time_ms = 4321;
	e.multipv = 1;
	e.pv_len = 5;
	for (i = 0; i < 5; i++)
		e.pv[i] = (pf_move)(1000 + i);
	e.engine_len = 15;
	memcpy(e.engine, "Stockfish 15.1 ", 15);
	CHECK(pf_eval_encode(&e, &b) == 0, "eval encodes");
	x = last_ext(&b);
	CHECK(x.type == PF_EXT_EVAL && x.len == 44 + 10 + 1 + 15,
	    "eval length %u", x.len);
	memset(&d, 0x55, sizeof(d));
	CHECK(pf_eval_decode(&x, &d) == 0 && d.source == e.source &&
	    d.limit_kind == e.limit_kind && d.score_kind == e.score_kind &&
	    d.flags == e.flags && d.score == -3 && d.limit == 16 &&
	    d.wdl[0] == 10 && d.wdl[1] == 20 && d.wdl[2] == 970 &&
	    d.depth == 16 && d.seldepth == 22 && d.best == e.best &&
	    d.nodes == e.nodes && d.time_ms == 4321 && d.multipv == 1,
	    "eval fields round-trip");
	CHECK(d.pv_len == 5 && memcmp(d.pv, e.pv, 10) == 0 &&
	    d.engine_len == 15 && memcmp(d.engine, e.engine, 15) == 0,
	    "eval pv and engine round-trip");
	CHECK(short_refused(&x, x.len, (decoder)pf_eval_decode, &d),
	    "eval: every short payload refused");
	CHECK(short_refused(&x, x.len, (decoder)pf_eval_decode_head, &d),
	    "eval head: every short payload refused");
	memset(&d, 0x55, sizeof(d));
	CHECK(pf_eval_decode_head(&x, &d) == 0 && d.score == -3 &&
	    d.depth == 16 && d.nodes == e.nodes && d.multipv == 1 &&
	    d.wdl[2] == 970, "eval head: the fixed fields");
	/* W/D/L flagged but not per-mille chances summing to 1000. */
	{
		pf_extbuf c = { 0 };
		pf_eval bad = e;

		bad.wdl[0] = 60000, bad.wdl[1] = 5000, bad.wdl[2] = 0;
		pf_eval_encode(&bad, &c);
		x = last_ext(&c);
		CHECK(pf_eval_decode(&x, &d) == -1 &&
		    pf_eval_decode_head(&x, &d) == -1,
		    "eval: W/D/L not summing to 1000 refused");
		bad.flags &= (uint8_t)~PF_EVF_WDL;
		pf_extbuf_reset(&c);
		pf_eval_encode(&bad, &c);
		x = last_ext(&c);
		CHECK(pf_eval_decode(&x, &d) == 0,
		    "eval: unflagged W/D/L fields are not checked");
		/* a score kind posflow(5) does not define: never taken
		   for centipawns by any reader */
		bad.score_kind = 2;
		pf_extbuf_reset(&c);
		pf_eval_encode(&bad, &c);
		x = last_ext(&c);
		CHECK(pf_eval_decode(&x, &d) == -1 &&
		    pf_eval_decode_head(&x, &d) == -1,
		    "eval: score kind 2 refused");
		bad.score_kind = PF_SCORE_CP;
		pf_extbuf_reset(&c);
		pf_eval_encode(&bad, &c);
		x = last_ext(&c);
		CHECK(pf_eval_decode(&x, &d) == 0 &&
		    d.score_kind == PF_SCORE_CP, "eval: centipawns taken");
		/* Stockfish's own score after the engine id, when flagged */
		CHECK(d.sf_score == 0 && x.len == 44 + 10 + 1 + 15,
		    "eval: no sf_score unflagged");
		bad.flags |= PF_EVF_SF;
		bad.sf_score = -12345;
		pf_extbuf_reset(&c);
		pf_eval_encode(&bad, &c);
		x = last_ext(&c);
		CHECK(x.len == 44 + 10 + 1 + 15 + 2 &&
		    pf_eval_decode(&x, &d) == 0 && d.sf_score == -12345 &&
		    d.engine_len == 15 && pf_eval_decode_head(&x, &d) == 0 &&
		    d.sf_score == -12345, "eval: sf_score round-trips");
		x.len--;
		CHECK(pf_eval_decode_head(&x, &d) == -1,
		    "eval: a flagged sf_score cut short refused");
		pf_extbuf_free(&c);
	}
	/* A pv longer than PF_PV_MAX in the data: the first kept. */
	{
		pf_extbuf c = { 0 };
		uint8_t *p = pf_extbuf_add(&c, PF_EXT_EVAL, 44 + 2 * 200 + 1);

		memset(p, 0, 44 + 2 * 200 + 1);
		pf_put16(p + 42, 200);
		for (i = 0; i < 200; i++)
			pf_put16(p + 44 + 2 * i, (uint16_t)i);
		x = last_ext(&c);
		CHECK(pf_eval_decode(&x, &d) == 0 && d.pv_len == PF_PV_MAX &&
		    d.pv[PF_PV_MAX - 1] == PF_PV_MAX - 1 &&
		    d.engine_len == 0, "eval keeps the first %d pv moves",
		    PF_PV_MAX);
		pf_extbuf_free(&c);
	}
	e.pv_len = 300;
	pf_extbuf_reset(&b);
	CHECK(pf_eval_encode(&e, &b) == 0 && (x = last_ext(&b)).len ==
	    44 + 2 * PF_PV_MAX + 1 + 15, "eval encode clamps the pv");
	pf_extbuf_free(&b);
}

static void
test_movescores(void)
{
	static pf_movescores s, d;
	pf_extbuf b = { 0 };
	pf_ext x;
	int i;

	s.limit_kind = PF_LIMIT_NODES;
	s.flags = PF_MSF_COMPLETE;
	s.depth = 12;
	s.limit = 1000000;
	s.n = 20;
	for (i = 0; i < 20; i++) {
		s.m[i].move = (pf_move)(i * 77);
		s.m[i].score_kind = i == 0 ? PF_SCORE_MATE : PF_SCORE_CP;
		s.m[i].depth = (uint8_t)(12 - i % 3);
		s.m[i].score = i == 0 ? 4 : -i * 13;
	}
	CHECK(pf_movescores_encode(&s, &b) == 0, "movescores encodes");
	x = last_ext(&b);
	CHECK(x.type == PF_EXT_MOVESCORES && x.len == 14 + 8 * 20,
	    "movescores length %u", x.len);
	CHECK(pf_movescores_decode(&x, &d) == 0 && d.limit_kind == s.limit_kind
	    && d.flags == s.flags && d.depth == 12 && d.limit == 1000000 &&
	    d.n == 20, "movescores header round-trips");
	for (i = 0; i < 20; i++)
		CHECK_QUIET(d.m[i].move == s.m[i].move &&
		    d.m[i].score_kind == s.m[i].score_kind &&
		    d.m[i].depth == s.m[i].depth &&
		    d.m[i].score == s.m[i].score, "movescore %d", i);
	CHECK(t_failed == 0, "movescores entries round-trip");
	CHECK(short_refused(&x, x.len, (decoder)pf_movescores_decode, &d),
	    "movescores: every short payload refused");
	/* the last entry of a score kind posflow(5) does not define */
	((uint8_t *)x.data)[14 + 8 * 19 + 2] = 2;
	CHECK(pf_movescores_decode(&x, &d) == -1,
	    "movescores refuses an entry of score kind 2");
	((uint8_t *)x.data)[14 + 8 * 19 + 2] = PF_SCORE_CP;
	CHECK(pf_movescores_decode(&x, &d) == 0, "movescores: kind 0 again");
	pf_put16((uint8_t *)x.data + 12, 257);
	CHECK(pf_movescores_decode(&x, &d) == -1,
	    "movescores refuses n > %d", PF_MAX_MOVES);
	pf_extbuf_free(&b);
}

static void
test_clock_value(void)
{
	pf_clock c = { 61000, PF_U32_UNKNOWN }, dc;
	pf_value v = { PF_VALUE_WDL, 1, 1.5f, -2.25f, 0.75f, 0.625f }, dv;
	pf_extbuf b = { 0 };
	pf_ext x;

	CHECK(pf_clock_encode(&c, &b) == 0 && (x = last_ext(&b)).len == 8 &&
	    x.type == PF_EXT_CLOCK && pf_clock_decode(&x, &dc) == 0 &&
	    dc.white_ms == 61000 && dc.black_ms == PF_U32_UNKNOWN,
	    "clock round-trips");
	CHECK(short_refused(&x, 8, (decoder)pf_clock_decode, &dc),
	    "clock: every short payload refused");
	CHECK(pf_value_encode(&v, &b) == 0 && (x = last_ext(&b)).len == 20 &&
	    x.type == PF_EXT_VALUE && pf_value_decode(&x, &dv) == 0 &&
	    dv.method == PF_VALUE_WDL && dv.scale == 1 && dv.param1 == 1.5f &&
	    dv.param2 == -2.25f && dv.lambda == 0.75f && dv.target == 0.625f,
	    "value round-trips");
	CHECK(short_refused(&x, 20, (decoder)pf_value_decode, &dv),
	    "value: every short payload refused");
	/* f32 is little-endian IEEE binary32: 0.625 is 0x3f200000. */
	CHECK(pf_get32(x.data + 16) == 0x3f200000u, "f32 layout");
	pf_extbuf_free(&b);
}

static void
test_policy(void)
{
	static pf_policy p, d;
	pf_extbuf b = { 0 };
	pf_ext x;
	int i;

	p.method = PF_POLICY_ZEMAN;
	p.param1 = 0.25f;
	p.param2 = 4.0f;
	p.n = 30;
	for (i = 0; i < 30; i++) {
		p.move[i] = (pf_move)(i + 100);
		p.prob[i] = 2184;	/* 30 * 2184 = 65520 */
	}
	p.prob[0] += 15;
	CHECK(pf_policy_encode(&p, &b) == 0 && (x = last_ext(&b)).len ==
	    12 + 4 * 30 && x.type == PF_EXT_POLICY, "policy encodes");
	CHECK(pf_policy_decode(&x, &d) == 0 && d.method == PF_POLICY_ZEMAN &&
	    d.param1 == 0.25f && d.param2 == 4.0f && d.n == 30 &&
	    memcmp(d.move, p.move, 60) == 0 && memcmp(d.prob, p.prob, 60) == 0,
	    "policy round-trips");
	CHECK(short_refused(&x, x.len, (decoder)pf_policy_decode, &d),
	    "policy: every short payload refused");
	p.prob[0] -= 1;
	pf_extbuf_reset(&b);
	pf_policy_encode(&p, &b);
	x = last_ext(&b);
	CHECK(pf_policy_decode(&x, &d) == -1,
	    "policy refuses probabilities summing to 65534");
	p.n = 1;
	p.prob[0] = 65535;
	pf_extbuf_reset(&b);
	pf_policy_encode(&p, &b);
	x = last_ext(&b);
	CHECK(pf_policy_decode(&x, &d) == 0 && d.n == 1 && d.prob[0] == 65535,
	    "policy with one legal move");
	pf_extbuf_free(&b);
}

/* 1 when s[0..n) is valid UTF-8 (a check of its own, by byte ranges). */
static int
valid_utf8(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, k, j;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		k = s[i] >= 0xc2 && s[i] <= 0xdf ? 2 : s[i] >= 0xe0 &&
		    s[i] <= 0xef ? 3 : s[i] >= 0xf0 && s[i] <= 0xf4 ? 4 : 0;
		if (k == 0 || n - i < k ||
		    (s[i] == 0xe0 && s[i + 1] < 0xa0) ||
		    (s[i] == 0xed && s[i + 1] > 0x9f) ||
		    (s[i] == 0xf0 && s[i + 1] < 0x90) ||
		    (s[i] == 0xf4 && s[i + 1] > 0x8f))
			return 0;
		for (j = 1; j < k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		i += k;
	}
	return 1;
}

/*
 * Strings on the way in (posflow(5)): whatever bytes an encoder is given,
 * it writes valid UTF-8 (Latin-1 bytes converted), cut at a character
 * boundary to the field's limit.
 */
static void
test_strings(void)
{
	static char euros[1 + 3 * 200], latin1[200], eacute[400];
	pf_meta m, d;
	pf_eval e, de;
	pf_extbuf b = { 0 };
	pf_ext x;
	int i;

	euros[0] = 'a';
	for (i = 0; i < 200; i++)
		memcpy(euros + 1 + 3 * i, "\xe2\x82\xac", 3);
	memset(latin1, 0xe9, sizeof(latin1));
	for (i = 0; i < 200; i++)
		memcpy(eacute + 2 * i, "\xc3\xa9", 2);
	memset(&m, 0, sizeof(m));
	m.event = euros;
	m.event_len = sizeof(euros);
	m.site = euros;
	m.site_len = 255;	/* as a reader cut it: inside the 85th euro */
	m.white = "M\xfcller";
	m.white_len = 7;
	m.black = latin1;
	m.black_len = sizeof(latin1);
	m.date = eacute;
	m.date_len = sizeof(eacute);
	m.term_text = "\x80\xff ok \xe2\x82\xac";
	m.term_text_len = 9;
	CHECK(pf_meta_encode(&m, &b) == 0, "meta with non-UTF-8 strings "
	    "encodes");
	x = last_ext(&b);
	CHECK(pf_meta_decode(&x, &d) == 0, "... and decodes");
	CHECK(d.event_len == 253 && memcmp(d.event, euros, 253) == 0,
	    "meta: \"a\" and 200 euros cut to 84 euros, at a boundary (%u)",
	    d.event_len);
	CHECK(d.site_len == 253 && memcmp(d.site, euros, 253) == 0,
	    "meta: a string already cut mid-character loses the broken tail");
	CHECK(d.white_len == 8 && memcmp(d.white, "M\xc3\xbcller", 8) == 0,
	    "meta: Latin-1 converted to UTF-8");
	CHECK(d.black_len == 254 && valid_utf8(d.black, d.black_len) &&
	    memcmp(d.black, eacute, 254) == 0,
	    "meta: 200 Latin-1 bytes grow to 400, cut to 254 (%u)",
	    d.black_len);
	CHECK(d.date_len == 254 && memcmp(d.date, eacute, 254) == 0,
	    "meta: UTF-8 two-byte characters cut at 254");
	CHECK(d.term_text_len == 11 && memcmp(d.term_text,
	    "\xc2\x80\xc3\xbf ok \xe2\x82\xac", 11) == 0,
	    "meta: stray bytes converted, valid UTF-8 kept");
	CHECK(x.len == 16 + 12 + 253 + 253 + 8 + 254 + 254 + 11,
	    "meta: the payload holds the converted lengths (%u)", x.len);

	memset(&e, 0, sizeof(e));
	memcpy(e.engine, euros, 255);
	e.engine_len = 255;	/* as uci-eval cuts a long id name today */
	pf_extbuf_reset(&b);
	pf_eval_encode(&e, &b);
	x = last_ext(&b);
	CHECK(pf_eval_decode(&x, &de) == 0 && de.engine_len == 253 &&
	    memcmp(de.engine, euros, 253) == 0 && x.len == 44 + 1 + 253,
	    "eval: an engine name cut mid-character ends at a boundary");
	memcpy(e.engine, latin1, 200);
	e.engine_len = 200;
	pf_extbuf_reset(&b);
	pf_eval_encode(&e, &b);
	x = last_ext(&b);
	CHECK(pf_eval_decode(&x, &de) == 0 && de.engine_len == 254 &&
	    valid_utf8(de.engine, de.engine_len) &&
	    memcmp(de.engine, eacute, 254) == 0,
	    "eval: a Latin-1 engine name converted and cut to 254");
	pf_extbuf_free(&b);
}

static void
test_score_cp(void)
{
	CHECK(pf_score_cp(PF_SCORE_CP, -123) == -123, "cp stays cp");
	CHECK(pf_score_cp(PF_SCORE_MATE, 1) == 31900, "mate 1 is 31900");
	CHECK(pf_score_cp(PF_SCORE_MATE, -2) == -31800, "mate -2 is -31800");
	CHECK(pf_score_cp(PF_SCORE_MATE, 0) == -32000,
	    "mate 0 (checkmated) is -32000");
	CHECK(pf_score_cp(PF_SCORE_MATE, 1000) > 0 &&
	    pf_score_cp(PF_SCORE_MATE, -1000) < 0 &&
	    pf_score_cp(PF_SCORE_MATE, INT32_MIN) < 0,
	    "long mates keep their sign");
}

static int
bytes_are(const pf_ext *x, const char *hex)
{
	char got[2 * 64 + 1];
	uint32_t i;

	if (x->len > 64 || strlen(hex) != 2 * (size_t)x->len)
		return 0;
	for (i = 0; i < x->len; i++)
		snprintf(got + 2 * i, 3, "%02x", x->data[i]);
	return strcmp(got, hex) == 0;
}

static void
test_complexity(void)
{
	pf_complexity c, d;
	pf_extbuf b = { 0 };
	pf_ext x;
	uint8_t later[6] = { 9, 0x80, 7, 0, 12, 0 };

	memset(&c, 0, sizeof(c));
	c.mode = PF_COMPLEXITY_DEPTH;
	c.method = PF_POLICY_ZEMAN;
	c.complexity = 7;
	c.depth = 12;
	c.first_depth = 1;
	c.move = 0x0f0d;		/* f2f8 */
	c.p_first = 0.0125f;
	c.p_decide = 0.625f;
	c.low = 0.05f;
	c.high = 0.4f;
	CHECK(pf_complexity_encode(&c, &b) == 0 &&
	    (x = last_ext(&b)).type == PF_EXT_COMPLEXITY && x.len == 28,
	    "complexity (depth mode) encodes to 28 bytes");
	/* 0.0125f 3c4ccccd, 0.625f 3f200000, 0.05f 3d4ccccd, 0.4f 3ecccccd */
	CHECK(bytes_are(&x, "0101" "0700" "0c00" "0100" "0d0f" "0000"
	    "cdcc4c3c" "0000203f" "cdcc4c3d" "cdcccc3e"),
	    "complexity (depth mode): the bytes of posflow(5)");
	CHECK(pf_complexity_decode(&x, &d) == 0 && d.mode == c.mode &&
	    d.method == PF_POLICY_ZEMAN && d.complexity == 7 &&
	    d.depth == 12 && d.first_depth == 1 && d.move == 0x0f0d &&
	    d.p_first == 0.0125f && d.p_decide == 0.625f &&
	    d.low == 0.05f && d.high == 0.4f && d.flags == 0 &&
	    d.deep_best == 0, "complexity (depth mode) round-trips");
	CHECK(short_refused(&x, 28, (decoder)pf_complexity_decode, &d),
	    "complexity (depth mode): every short payload refused");

	memset(&c, 0, sizeof(c));
	c.mode = PF_COMPLEXITY_NODES;
	c.flags = PF_COMPLEXITYF_DIFFER | PF_COMPLEXITYF_LOSS_KNOWN |
	    PF_COMPLEXITYF_MOVE;
	c.complexity = 1;
	c.depth = 14;
	c.shallow_depth = 3;
	c.shallow_kind = PF_LIMIT_NODES;
	c.deep_kind = PF_LIMIT_NODES;
	c.shallow_limit = 100;
	c.deep_limit = 100000;
	c.shallow_best = 0x070c;	/* e2e4 */
	c.deep_best = 0x06cb;		/* d2d4 */
	c.loss = -1;
	c.q_shallow = 0.5f;
	c.q_deep = -0.25f;
	c.min_loss = 100;
	c.threshold = 0.55f;
	pf_extbuf_reset(&b);
	CHECK(pf_complexity_encode(&c, &b) == 0 &&
	    (x = last_ext(&b)).len == 52,
	    "complexity (nodes mode) encodes to 52 bytes");
	CHECK(bytes_are(&x, "0207" "0100" "0e00" "0300" "0202" "0000"
	    "6400000000000000" "a086010000000000" "0c07" "cb06" "ffffffff"
	    "0000003f" "000080be" "64000000" "cdcc0c3f"),
	    "complexity (nodes mode): the bytes of posflow(5)");
	CHECK(pf_complexity_decode(&x, &d) == 0 && d.mode == c.mode &&
	    d.flags == c.flags && d.complexity == 1 && d.depth == 14 &&
	    d.shallow_depth == 3 && d.shallow_kind == PF_LIMIT_NODES &&
	    d.deep_kind == PF_LIMIT_NODES && d.shallow_limit == 100 &&
	    d.deep_limit == 100000 && d.shallow_best == 0x070c &&
	    d.deep_best == 0x06cb && d.loss == -1 && d.q_shallow == 0.5f &&
	    d.q_deep == -0.25f && d.min_loss == 100 &&
	    d.threshold == 0.55f && d.method == 0 && d.move == 0,
	    "complexity (nodes mode) round-trips");
	CHECK(short_refused(&x, 52, (decoder)pf_complexity_decode, &d),
	    "complexity (nodes mode): every short payload refused");

	c.mode = 3;
	CHECK(pf_complexity_encode(&c, &b) == -1,
	    "complexity: an unknown mode is not encoded");
	x.data = later;
	x.len = sizeof(later);
	CHECK(pf_complexity_decode(&x, &d) == 0 && d.mode == 9 &&
	    d.flags == 0x80 && d.complexity == 7 && d.depth == 12,
	    "complexity: a later mode is read as its head");
	x.len = 5;
	CHECK(pf_complexity_decode(&x, &d) == -1,
	    "complexity: a head of 5 bytes is refused");
	pf_extbuf_free(&b);
}

static void
test_repair(void)
{
	pf_repair r = { PF_REPAIR_CANDIDATES, 1, PF_REPAIRF_WDL, 0.5f, -0.25f,
	    0, 0 }, d;
	pf_extbuf b = { 0 };
	pf_ext x;

	CHECK(pf_repair_encode(&r, &b) == 0 &&
	    (x = last_ext(&b)).type == PF_EXT_REPAIR && x.len == 20,
	    "repair encodes to 20 bytes");
	CHECK(bytes_are(&x, "01010200" "0000003f" "000080be" "00000000"
	    "00000000"), "repair (candidates): the bytes of posflow(5)");
	CHECK(pf_repair_decode(&x, &d) == 0 && d.mode == PF_REPAIR_CANDIDATES &&
	    d.cls == 1 && d.flags == PF_REPAIRF_WDL && d.q_shallow == 0.5f &&
	    d.q_deep == -0.25f && d.original == 0 && d.repaired == 0,
	    "repair (candidates) round-trips");
	r = (pf_repair){ PF_REPAIR_PANDA, PF_REPAIR_MAYBE_YES,
	    PF_REPAIRF_RESCORED, 0, 0, -35, 31900 };
	pf_extbuf_reset(&b);
	pf_repair_encode(&r, &b);
	x = last_ext(&b);
	CHECK(bytes_are(&x, "02020100" "00000000" "00000000" "ddffffff"
	    "9c7c0000"), "repair (panda): the bytes of posflow(5)");
	CHECK(pf_repair_decode(&x, &d) == 0 && d.mode == PF_REPAIR_PANDA &&
	    d.cls == PF_REPAIR_MAYBE_YES && d.flags == PF_REPAIRF_RESCORED &&
	    d.original == -35 && d.repaired == 31900,
	    "repair (panda) round-trips, negative cp kept");
	CHECK(short_refused(&x, 20, (decoder)pf_repair_decode, &d),
	    "repair: every short payload refused");
	pf_extbuf_free(&b);
}

static void
test_pqr(void)
{
	pf_pqr q, d;
	pf_extbuf b = { 0 };
	pf_ext x;
	char hex[2 * PF_PQR_SIZE + 1];

	memset(&q, 0, sizeof(q));
	q.r_move = 0x1234;
	for (int i = 0; i < PF_PACKED_SIZE; i++) {
		q.q[i] = (uint8_t)i;
		q.r[i] = (uint8_t)(0xa0 + i);
	}
	CHECK(pf_pqr_encode(&q, &b) == 0 &&
	    (x = last_ext(&b)).type == PF_EXT_PQR && x.len == PF_PQR_SIZE,
	    "pqr encodes to 60 bytes");
	/* u16 move little-endian, flags, reserved, Q's 28 bytes, R's 28 */
	snprintf(hex, sizeof(hex), "34120000");
	for (int i = 0; i < PF_PACKED_SIZE; i++)
		snprintf(hex + 8 + 2 * i, 3, "%02x", i);
	for (int i = 0; i < PF_PACKED_SIZE; i++)
		snprintf(hex + 8 + 56 + 2 * i, 3, "%02x", 0xa0 + i);
	CHECK(bytes_are(&x, hex), "pqr: the bytes of posflow(5)");
	CHECK(pf_pqr_decode(&x, &d) == 0 && d.r_move == 0x1234 &&
	    d.flags == 0 && memcmp(d.q, q.q, PF_PACKED_SIZE) == 0 &&
	    memcmp(d.r, q.r, PF_PACKED_SIZE) == 0, "pqr round-trips");
	CHECK(short_refused(&x, PF_PQR_SIZE, (decoder)pf_pqr_decode, &d),
	    "pqr: every short payload refused");
	pf_extbuf_free(&b);
}

static void
test_merge(void)
{
	pf_merge m = { 3, 1, 0x01020304u, 0xfffffffeu }, d;
	pf_extbuf b = { 0 };
	pf_ext x;

	CHECK(pf_merge_encode(&m, &b) == 0 &&
	    (x = last_ext(&b)).type == PF_EXT_MERGE && x.len == PF_MERGE_SIZE,
	    "merge encodes to 16 bytes");
	/* four u32, little-endian: count, wins, draws, losses */
	CHECK(bytes_are(&x, "03000000" "01000000" "04030201" "feffffff"),
	    "merge: the bytes of posflow(5)");
	memset(&d, 0, sizeof(d));
	CHECK(pf_merge_decode(&x, &d) == 0 && d.count == 3 && d.wins == 1 &&
	    d.draws == 0x01020304u && d.losses == 0xfffffffeu,
	    "merge round-trips");
	CHECK(short_refused(&x, PF_MERGE_SIZE, (decoder)pf_merge_decode, &d),
	    "merge: every short payload refused");
	pf_extbuf_free(&b);
}

int
main(void)
{
	test_generic();
	test_meta();
	test_eval();
	test_movescores();
	test_clock_value();
	test_policy();
	test_strings();
	test_score_cp();
	test_complexity();
	test_repair();
	test_pqr();
	test_merge();
	return t_done();
}
