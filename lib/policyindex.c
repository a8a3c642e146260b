/*
 * policyindex.c - lc0's 1858-move policy index (see policyindex.h),
 * generated here rather than copied: the rule in the header gives the
 * list entry for entry (checked against lczero-training's
 * tf/policy_index.py, all 1858 entries, when this file was written; the
 * unit test keeps a sample of them).
 *
 * Castling.  pf_move writes castling as the king taking its own rook
 * (e1h1, e1a1), and lc0 indexes it the same way, so a castling move needs
 * no case of its own here:
 *   - lc0's src/chess/board.cc (ChessBoard::GeneratePseudolegalMoves, at
 *     commit 23768b7) generates castling as Move(king square, rook
 *     square), and ChessBoard::GetModernMove turns a UCI e1g1 / e1c1 into
 *     e1h1 / e1a1;
 *   - lc0's src/chess/bitboard.cc (Move::as_nn_index, at commit 5dfd8dc)
 *     looks up from * 64 + to with no castling case, after the older
 *     version (commit 0b53109) that mapped every castling to the fixed
 *     kKingCastleIndex, the index of "e1h1", and kQueenCastleIndex, that
 *     of "e1a1".
 * In Chess960 the king-to-rook move is always on the first rank, so it is
 * always a queen-line entry too.  Black's moves are mirrored by rank
 * first, as lc0's Move::Mirror() does (from and to squares ^ 56).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "policyindex.h"

static pthread_once_t	table_once = PTHREAD_ONCE_INIT;
/* Index of the move from * 64 + to, or -1. */
static int16_t		plain_index[64 * 64];
/* Index of the queen promotion from file f of the seventh rank to file
   f + d - 1 of the eighth ([f][d]; -1 off the board); the rook and the
   bishop promotions follow it. */
static int16_t		promo_index[8][3];
static char		names[PF_LC0_POLICY_SIZE][6];

/* 1 when a queen or a knight on from reaches to on an empty board. */
static int
queen_or_knight(int from, int to)
{
	int df = abs((to & 7) - (from & 7)), dr = abs((to >> 3) - (from >> 3));

	if (from == to)
		return 0;
	return df == 0 || dr == 0 || df == dr || df * dr == 2;
}

static void
set_name(int idx, int from, int to, char promo)
{
	char *s = names[idx];

	s[0] = (char)('a' + (from & 7));
	s[1] = (char)('1' + (from >> 3));
	s[2] = (char)('a' + (to & 7));
	s[3] = (char)('1' + (to >> 3));
	s[4] = promo;
	s[5] = '\0';
}

static void
build_table(void)
{
	static const char promos[3] = { 'q', 'r', 'b' };
	int n = 0, from, to, f, d, p;

	for (from = 0; from < 64; from++)
		for (to = 0; to < 64; to++) {
			if (!queen_or_knight(from, to)) {
				plain_index[from * 64 + to] = -1;
				continue;
			}
			plain_index[from * 64 + to] = (int16_t)n;
			set_name(n++, from, to, '\0');
		}
	for (f = 0; f < 8; f++)
		for (d = 0; d < 3; d++) {
			if (f + d - 1 < 0 || f + d - 1 > 7) {
				promo_index[f][d] = -1;
				continue;
			}
			promo_index[f][d] = (int16_t)n;
			for (p = 0; p < 3; p++)
				set_name(n++, 48 + f, 56 + f + d - 1, promos[p]);
		}
}

int
pf_lc0_square(int sq, int transform)
{
	if (transform & PF_LC0_FLIP)
		sq ^= 7;
	if (transform & PF_LC0_MIRROR)
		sq ^= 56;
	if (transform & PF_LC0_TRANSPOSE)
		sq = (7 - (sq & 7)) * 8 + 7 - (sq >> 3);
	return sq;
}

int
pf_lc0_index(pf_move m, int black_to_move)
{
	return pf_lc0_index_tf(m, black_to_move, 0);
}

int
pf_lc0_index_tf(pf_move m, int black_to_move, int transform)
{
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m), d;

	pthread_once(&table_once, build_table);
	if (black_to_move) {
		from ^= 56;
		to ^= 56;
	}
	if (transform != 0) {
		from = pf_lc0_square(from, transform);
		to = pf_lc0_square(to, transform);
	}
	if (PF_MOVE_KIND(m) == PF_MK_PROMOTION) {
		d = (to & 7) - (from & 7) + 1;
		if (from >> 3 != 6 || to >> 3 != 7 || d < 0 || d > 2)
			return -1;
		/* A knight promotion is the plain move; q, r, b follow
		   each other. */
		if (PF_MOVE_PROMO(m) != PF_KNIGHT)
			return promo_index[from & 7][d] + PF_QUEEN -
			    PF_MOVE_PROMO(m);
	}
	return plain_index[from * 64 + to];
}

const char *
pf_lc0_name(int idx)
{
	if (idx < 0 || idx >= PF_LC0_POLICY_SIZE)
		return NULL;
	pthread_once(&table_once, build_table);
	return names[idx];
}
