/*
 * uci.c - libFuzzer target: what an engine prints during one search
 * (lib/uci.c: pf_uci_parse_info and pf_uci_search_*), outside input that
 * uci-eval, complexity and repair-mark turn into records.
 *
 * Input: one control byte, then lines.  Bits 0-1 choose the position
 * (the start; a middlegame with castling both ways and an en passant
 * capture; a pawn about to promote; a king with two legal moves), bits
 * 2-3 the lines asked for (1, 2, 3, all), bit 4 keeps every depth's
 * table, bit 5 restricts the search to the first two legal moves.
 * Every line goes to pf_uci_parse_info and to the search, until the
 * search ends.  Properties:
 *   - pf_uci_parse_info returns -1, 0 or 1; with 1 a score; a pv points
 *     into the line;
 *   - the search returns -1 (with a reason), 0 or 1, and after -1 or 1 it
 *     is not fed again;
 *   - after 1 the evaluation (pf_uci_search_eval) has a legal best move
 *     and a pv that is a legal line from the position, at most PF_PV_MAX
 *     long; a table lists distinct legal moves (within the restriction),
 *     no more than asked; both round-trip through their extensions
 *     (stream.h's checks).
 */
#include "stream.h"
#include "uci.h"

static const char *const fens[4] = {
	"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
	"r3k2r/pp3ppp/1np1pn2/3pP3/3P4/2NB1N2/PPP2PPP/R3K2R w KQkq d6 0 10",
	"8/1P4k1/8/8/8/8/6K1/8 w - - 0 60",
	"7k/8/8/8/8/8/5q2/6K1 w - - 0 70",
};

/* The moves of a pv text from b: each legal in turn (pv_len of them). */
static void
check_pv(const pf_board *b, const pf_move *pv, int n)
{
	pf_board x = *b;
	pf_undo u;
	int i;

	FUZZ_CHECK(n >= 0 && n <= PF_PV_MAX);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(pf_is_legal(&x, pv[i]));
		pf_make_move(&x, pv[i], &u);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pf_uci_search *s;
	static pf_extbuf xb, scratch;
	static pf_eval e;
	static char line[4096];
	pf_move legal[PF_MAX_MOVES];
	pf_board b;
	pf_uci_info info;
	pf_ext x;
	uint32_t len;
	char why[160];
	const uint8_t *p, *end;
	int nlegal, multipv, rv = 0, i, j, allowed;

	if (size < 1)
		return 0;
	if (s == NULL)
		FUZZ_CHECK((s = pf_uci_search_new()) != NULL);
	FUZZ_CHECK(pf_board_from_fen(&b, fens[data[0] & 3], why,
	    sizeof(why)) == 0);
	nlegal = pf_gen_legal(&b, legal);
	multipv = (data[0] >> 2 & 3) == 3 ? nlegal : (data[0] >> 2 & 3) + 1;
	pf_uci_search_begin(s, &b, multipv, data[0] >> 4 & 1);
	allowed = nlegal;
	if (data[0] & 32 && nlegal > 2) {
		pf_uci_search_restrict(s, legal, 2);
		allowed = 2;
	}
	for (p = data + 1, end = data + size; p < end && rv == 0; ) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl != NULL ? nl : end) - p);

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl != NULL ? nl + 1 : end;

		j = pf_uci_parse_info(line, &info);
		FUZZ_CHECK(j >= -1 && j <= 1);
		if (j == 1)
			FUZZ_CHECK(info.has & PF_UCI_HAS_SCORE);
		if (j >= 0 && (info.has & PF_UCI_HAS_PV))
			FUZZ_CHECK(info.pv >= line &&
			    info.pv <= line + strlen(line));
		rv = pf_uci_search_line(s, line);
		FUZZ_CHECK(rv >= -1 && rv <= 1);
	}
	if (rv < 0)
		FUZZ_CHECK(s->err[0] != '\0');
	if (rv != 1)
		return 0;

	memset(&e, 0, sizeof(e));
	pf_uci_search_eval(s, &e);
	FUZZ_CHECK(pf_is_legal(&b, e.best));
	check_pv(&b, e.pv, e.pv_len);
	pf_extbuf_reset(&xb);
	FUZZ_CHECK(pf_eval_encode(&e, &xb) == 0);
	x.type = PF_EXT_EVAL;
	x.data = one_ext(&xb, PF_EXT_EVAL, &len);
	x.len = len;
	check_eval(&x, &scratch);

	if (s->have_table) {
		const pf_movescores *t = &s->table;

		FUZZ_CHECK(t->n <= allowed && t->n <= multipv);
		for (i = 0; i < t->n; i++) {
			FUZZ_CHECK(pf_is_legal(&b, t->m[i].move));
			if (allowed == 2)
				FUZZ_CHECK(t->m[i].move == legal[0] ||
				    t->m[i].move == legal[1]);
			for (j = 0; j < i; j++)
				FUZZ_CHECK(t->m[j].move != t->m[i].move);
		}
		pf_extbuf_reset(&xb);
		FUZZ_CHECK(pf_movescores_encode(t, &xb) == 0);
		x.type = PF_EXT_MOVESCORES;
		x.data = one_ext(&xb, PF_EXT_MOVESCORES, &len);
		x.len = len;
		check_movescores(&x, &scratch);
	}
	return 0;
}
