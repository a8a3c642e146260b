/*
 * expr.c - libFuzzer target: the expression language of posfilter and
 * posstat --by (lib/field.h).
 *
 * Input: the expression text.  Properties:
 *   - compiling either succeeds or fails with a reason and a column inside
 *     the text (1 to its length plus one);
 *   - a compiled expression evaluates without damage on well-formed
 *     records (one with every extension kind the fields read, one with
 *     none), and evaluating twice gives the same value;
 *   - "(" text ")" compiles too (unless that passes the nesting bound) and
 *     has the same value, and "!!(" text ")" is its truth as 1 or 0:
 *     grouping and negation are exact;
 *   - pf_expr_label writes a NUL-terminated string.
 */
#include <math.h>

#include "fuzz.h"
#include "ext.h"
#include "field.h"
#include "record.h"

static int
same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void
make_records(pf_record *rec, pf_extbuf *eb)
{
	pf_board b;
	pf_eval v;
	pf_meta m;

	pf_board_from_fen(&b, PF_STARTPOS_FEN, NULL, 0);
	memset(&rec[0], 0, sizeof(rec[0]));
	pf_board_pack(&b, rec[0].pos);
	rec[1] = rec[0];
	rec[0].game_id = 7;
	rec[0].ply = 12;
	rec[0].move = PF_MAKE_MOVE(12, 28, PF_MK_NORMAL, 0);
	rec[0].result = PF_RESULT_WHITE;
	memset(&v, 0, sizeof(v));
	v.limit_kind = PF_LIMIT_DEPTH;
	v.limit = v.depth = 12;
	v.score = 35;
	v.flags = PF_EVF_WDL;
	v.wdl[0] = 300;
	v.wdl[1] = 600;
	v.wdl[2] = 100;
	pf_eval_encode(&v, eb);
	memset(&m, 0, sizeof(m));
	m.white_elo = 2100;
	m.black_elo = 1900;
	m.base_s = 180;
	m.inc_s = 2;
	m.termination = PF_TERM_TIME;
	pf_meta_encode(&m, eb);
	rec[0].ext = eb->data;
	rec[0].ext_len = (uint32_t)eb->len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pf_extbuf eb;
	static pf_record rec[2];
	char *text, *wrap, err[256], label[64];
	pf_expr *e, *p, *n;
	double v, v2, vp, vn;
	int col;

	if (size > 4096)
		return 0;
	if (eb.len == 0)
		make_records(rec, &eb);
	text = malloc(size + 1);
	wrap = malloc(size + 8);
	FUZZ_CHECK(text != NULL && wrap != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	size = strlen(text);
	e = pf_expr_compile(text, &col, err, sizeof(err));
	if (e == NULL) {
		FUZZ_CHECK(err[0] != '\0');
		FUZZ_CHECK(col >= 1 && (size_t)col <= size + 1);
		goto out;
	}
	/* (Wrapping may only fail on the nesting bound.) */
	snprintf(wrap, size + 8, "(%s)", text);
	p = pf_expr_compile(wrap, &col, err, sizeof(err));
	FUZZ_CHECK(p != NULL || strstr(err, "nested too deeply") != NULL);
	snprintf(wrap, size + 8, "!!(%s)", text);
	n = pf_expr_compile(wrap, &col, err, sizeof(err));
	FUZZ_CHECK(n != NULL || strstr(err, "nested too deeply") != NULL);
	if (p == NULL || n == NULL) {
		pf_expr_free(p);
		pf_expr_free(n);
		pf_expr_free(e);
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		FUZZ_CHECK(pf_expr_eval(e, &rec[i], &v, err, sizeof(err)) == 0);
		FUZZ_CHECK(pf_expr_eval(e, &rec[i], &v2, err, sizeof(err)) ==
		    0);
		FUZZ_CHECK(same(v, v2));
		FUZZ_CHECK(pf_expr_eval(p, &rec[i], &vp, err, sizeof(err)) ==
		    0);
		FUZZ_CHECK(same(v, vp));
		FUZZ_CHECK(pf_expr_eval(n, &rec[i], &vn, err, sizeof(err)) ==
		    0);
		FUZZ_CHECK(vn == pf_expr_true(v));
		pf_expr_label(e, v, label, sizeof(label));
		FUZZ_CHECK(memchr(label, '\0', sizeof(label)) != NULL);
	}
	pf_expr_free(p);
	pf_expr_free(n);
	pf_expr_free(e);
out:
	free(text);
	free(wrap);
	return 0;
}
