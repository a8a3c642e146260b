/*
 * policyindex.c - unit tests of lib/policyindex.c: entries at known
 * indices of lc0's list (taken from policy_index in lczero-training's
 * tf/policy_index.py), every entry's text parsed back to the same index
 * for both colours, the moves that have no index, and every legal move of
 * positions with under-promotions, castling (standard and Chess960) and
 * en passant for both colours mapped to a distinct index whose text is
 * the move's UCI text from white's view.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "chess.h"
#include "policyindex.h"
#include "t.h"

#define NTHREADS 4

/* The move an entry's text names, from white's view. */
static pf_move
parse_name(const char *s, int black)
{
	int from = (s[0] - 'a') | (s[1] - '1') << 3;
	int to = (s[2] - 'a') | (s[3] - '1') << 3;

	if (black) {
		from ^= 56;
		to ^= 56;
	}
	switch (s[4]) {
	case 'q':
		return PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 3);
	case 'r':
		return PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 2);
	case 'b':
		return PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 1);
	}
	return PF_MAKE_MOVE(from, to, PF_MK_NORMAL, 0);
}

/* Sum of the indices of every entry parsed back, from its first use: run
   by several threads at once before anything else touches the table. */
static void *
sum_thread(void *arg)
{
	long *sum = arg;
	int i;

	*sum = 0;
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		*sum += pf_lc0_index(parse_name(pf_lc0_name(i), 0), 0);
	return NULL;
}

static void
test_threads(void)
{
	pthread_t th[NTHREADS];
	long sum[NTHREADS];
	int i, started[NTHREADS], ok = 1;

	for (i = 0; i < NTHREADS; i++)
		started[i] = pthread_create(&th[i], NULL, sum_thread,
		    &sum[i]) == 0;
	for (i = 0; i < NTHREADS; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			sum_thread(&sum[i]);
		ok &= sum[i] == (long)PF_LC0_POLICY_SIZE *
		    (PF_LC0_POLICY_SIZE - 1) / 2;
	}
	CHECK(ok, "%d threads building the table at once all see it whole",
	    NTHREADS);
}

static void
test_known(void)
{
	static const struct {
		int idx;
		const char *name;
	} known[] = {
		{ 0, "a1b1" }, { 22, "a1h8" }, { 23, "b1a1" }, { 46, "b1b8" },
		{ 47, "c1a1" }, { 97, "e1a1" }, { 102, "e1g1" },
		{ 103, "e1h1" }, { 159, "g1f3" }, { 193, "h1h8" },
		{ 194, "a2a1" }, { 322, "e2e4" }, { 378, "g2g4" },
		{ 761, "d4d5" }, { 762, "d4e5" }, { 1043, "e5f6" },
		{ 1401, "a7a8" }, { 1402, "a7b8" }, { 1515, "e7e8" },
		{ 1598, "a8a1" }, { 1632, "b8c6" }, { 1719, "e8h8" },
		{ 1755, "g8f6" }, { 1769, "h8a1" }, { 1791, "h8g8" },
		{ 1792, "a7a8q" }, { 1793, "a7a8r" }, { 1794, "a7a8b" },
		{ 1795, "a7b8q" }, { 1800, "b7a8b" }, { 1816, "d7c8q" },
		{ 1828, "e7e8q" }, { 1830, "e7e8b" }, { 1850, "g7h8r" },
		{ 1852, "h7g8q" }, { 1857, "h7h8b" },
	};
	const char *s;
	size_t i;

	CHECK(PF_LC0_POLICY_SIZE == 1858, "the policy has 1858 entries");
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		s = pf_lc0_name(known[i].idx);
		CHECK_QUIET(s != NULL && strcmp(s, known[i].name) == 0,
		    "entry %d: %s, want %s", known[i].idx, s ? s : "NULL",
		    known[i].name);
		CHECK_QUIET(pf_lc0_index(parse_name(known[i].name, 0), 0) ==
		    known[i].idx, "%s: index %d, want %d", known[i].name,
		    pf_lc0_index(parse_name(known[i].name, 0), 0),
		    known[i].idx);
	}
	CHECK(t_failed == 0, "%zu entries at known indices of lc0's list, "
	    "from a1b1 (0) to h8g8 (1791) and a7a8q (1792) to h7h8b (1857)",
	    sizeof(known) / sizeof(known[0]));
	CHECK(pf_lc0_name(-1) == NULL && pf_lc0_name(PF_LC0_POLICY_SIZE) ==
	    NULL, "no name outside 0..1857");
}

/* Every entry's text, as white's move and mirrored as black's, gives
   back its index; so the 1858 texts are distinct too. */
static void
test_round_trip(void)
{
	int i, bad = 0, plain = 0;
	const char *s;

	for (i = 0; i < PF_LC0_POLICY_SIZE; i++) {
		s = pf_lc0_name(i);
		if (pf_lc0_index(parse_name(s, 0), 0) != i ||
		    pf_lc0_index(parse_name(s, 1), 1) != i)
			bad++;
		if (strlen(s) == 4)
			plain++;
	}
	CHECK(bad == 0, "every entry's text gives back its index, for white "
	    "and mirrored for black (%d bad)", bad);
	CHECK(plain == 1792, "1792 plain moves, then 66 promotions (%d)",
	    plain);
}

static void
test_no_index(void)
{
	/* a7a8 as a knight promotion, and a7b8 */
	pf_move an = PF_MAKE_MOVE(48, 56, PF_MK_PROMOTION, 0);
	pf_move bn = PF_MAKE_MOVE(48, 57, PF_MK_PROMOTION, 0);

	CHECK(pf_lc0_index(an, 0) == 1401 && pf_lc0_index(bn, 0) == 1402,
	    "a knight promotion is the plain move (a7a8n 1401, a7b8n 1402)");
	CHECK(pf_lc0_index(PF_MAKE_MOVE(8, 0, PF_MK_PROMOTION, 0), 1) ==
	    1401 && pf_lc0_index(PF_MAKE_MOVE(9, 0, PF_MK_PROMOTION, 3), 1) ==
	    1798, "black's a2a1n and b2a1q are white's a7a8 and b7a8q");
	CHECK(pf_lc0_index(PF_MOVE_NONE, 0) == -1 &&
	    pf_lc0_index(PF_MOVE_NONE, 1) == -1, "PF_MOVE_NONE has no index");
	CHECK(pf_lc0_index(PF_MAKE_MOVE(0, 26, PF_MK_NORMAL, 0), 0) == -1 &&
	    pf_lc0_index(PF_MAKE_MOVE(12, 31, PF_MK_NORMAL, 0), 1) == -1,
	    "a move no queen or knight makes has no index (a1c4, e2h4)");
	CHECK(pf_lc0_index(PF_MAKE_MOVE(8, 16, PF_MK_PROMOTION, 3), 0) == -1 &&
	    pf_lc0_index(PF_MAKE_MOVE(48, 56, PF_MK_PROMOTION, 3), 1) == -1 &&
	    pf_lc0_index(PF_MAKE_MOVE(48, 58, PF_MK_PROMOTION, 0), 0) == -1,
	    "a promotion that is no step from the 7th rank to the 8th has no "
	    "index (a2a3q; a7a8q as black's; a7c8n)");
}

/* The move's UCI text from white's view, lc0's way: castling as king to
   rook (the Chess960 form), no 'n' for a knight promotion. */
static void
lc0_text(const pf_board *b, pf_move m, char *buf)
{
	pf_board c = *b;
	size_t n;

	c.chess960 = 1;
	pf_move_to_uci(&c, m, buf);
	n = strlen(buf);
	if (n == 5 && buf[4] == 'n')
		buf[4] = '\0';
	if (b->stm == PF_BLACK) {
		buf[1] = (char)('1' + '8' - buf[1]);
		buf[3] = (char)('1' + '8' - buf[3]);
	}
}

static void
test_positions(void)
{
	static const struct {
		const char *fen, *what;
	} pos[] = {
		{ PF_STARTPOS_FEN, "the start position" },
		{ "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
		    "after 1.e4" },
		{ "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
		    "promotions, white" },
		{ "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
		    "promotions, black" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "castling, white" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "castling, black" },
		{ "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R "
		    "w KQkq - 0 1", "kiwipete, white" },
		{ "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R "
		    "b KQkq - 0 1", "kiwipete, black" },
		{ "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
		    "Chess960 castling, white" },
		{ "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 b GBgb - 0 1",
		    "Chess960 castling, black" },
		{ "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR "
		    "w KQkq f6 0 3", "en passant, white" },
		{ "rnbqkbnr/ppp1pppp/8/8/2Pp4/5N2/PP1PPPPP/RNBQKB1R "
		    "b KQkq c3 0 3", "en passant, black" },
	};
	pf_move moves[PF_MAX_MOVES];
	char err[256], want[PF_UCI_MAX];
	unsigned char seen[PF_LC0_POLICY_SIZE];
	int kinds[4][2] = { { 0 } }, under = 0;
	pf_board b;
	size_t p;
	int i, n, idx, black, bad, total = 0;
	const char *name;

	for (p = 0; p < sizeof(pos) / sizeof(pos[0]); p++) {
		if (pf_board_from_fen(&b, pos[p].fen, err, sizeof(err)) == -1) {
			CHECK(0, "%s: %s", pos[p].what, err);
			continue;
		}
		black = b.stm == PF_BLACK;
		memset(seen, 0, sizeof(seen));
		n = pf_gen_legal(&b, moves);
		bad = 0;
		for (i = 0; i < n; i++) {
			idx = pf_lc0_index(moves[i], black);
			if (idx < 0 || idx >= PF_LC0_POLICY_SIZE || seen[idx]) {
				bad++;
				continue;
			}
			seen[idx] = 1;
			lc0_text(&b, moves[i], want);
			name = pf_lc0_name(idx);
			CHECK_QUIET(strcmp(name, want) == 0,
			    "%s: move %s has entry %d, %s", pos[p].what, want,
			    idx, name);
			if (strcmp(name, want) != 0)
				bad++;
			kinds[PF_MOVE_KIND(moves[i])][black]++;
			if (PF_MOVE_KIND(moves[i]) == PF_MK_PROMOTION &&
			    PF_MOVE_PROMO(moves[i]) != PF_QUEEN)
				under++;
		}
		total += n;
		CHECK(n > 0 && bad == 0, "%s: its %d legal moves have distinct "
		    "indices, named as their UCI text from white's view",
		    pos[p].what, n);
	}
	CHECK(kinds[PF_MK_PROMOTION][0] > 0 && kinds[PF_MK_PROMOTION][1] > 0 &&
	    under > 0 && kinds[PF_MK_CASTLE][0] >= 4 &&
	    kinds[PF_MK_CASTLE][1] >= 4 && kinds[PF_MK_ENPASSANT][0] > 0 &&
	    kinds[PF_MK_ENPASSANT][1] > 0, "%d moves, among them promotions "
	    "(%d under), castling and en passant for both colours", total,
	    under);
}

/* Castling in standard chess, given as e1g1 / e1c1 in UCI, is lc0's
   e1h1 / e1a1 (king takes rook), for black too (e8h8 mirrored). */
static void
test_castling(void)
{
	static const char *fens[2] = {
		"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
		"r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
	};
	static const char *uci[2][2] = { { "e1g1", "e1c1" },
	    { "e8g8", "e8c8" } };
	pf_board b;
	pf_move m;
	int c, ok = 1;

	for (c = 0; c < 2; c++) {
		if (pf_board_from_fen(&b, fens[c], NULL, 0) == -1) {
			ok = 0;
			continue;
		}
		ok &= pf_move_from_uci(&b, uci[c][0], 4, &m) == 0 &&
		    PF_MOVE_KIND(m) == PF_MK_CASTLE &&
		    pf_lc0_index(m, c) == 103 &&
		    strcmp(pf_lc0_name(pf_lc0_index(m, c)), "e1h1") == 0;
		ok &= pf_move_from_uci(&b, uci[c][1], 4, &m) == 0 &&
		    PF_MOVE_KIND(m) == PF_MK_CASTLE &&
		    pf_lc0_index(m, c) == 97 &&
		    strcmp(pf_lc0_name(pf_lc0_index(m, c)), "e1a1") == 0;
	}
	CHECK(ok, "O-O is e1h1 (103) and O-O-O e1a1 (97), for both colours");
}

int
main(void)
{
	test_threads();
	test_known();
	test_round_trip();
	test_no_index();
	test_positions();
	test_castling();
	return t_done();
}
