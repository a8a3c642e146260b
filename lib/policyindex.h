/*
 * policyindex.h - the 1858-move policy index of Leela Chess Zero: the
 * order of the policy head's outputs in lc0 networks and of the
 * probabilities in lczero-training's training data (policy_index in its
 * tf/policy_index.py; kIdxToMove in lc0's src/chess/bitboard.cc).
 *
 * The list, from the side to move's view (white's squares):
 *   - 0..1791: for each from-square a1, b1, ..., h8 in turn, every square
 *     a queen or a knight could reach from it on an empty board, in
 *     ascending square order ("a1b1", "a1c1", ...);
 *   - 1792..1857: the pawn moves from the seventh rank to the eighth with
 *     a promotion to a queen, rook or bishop, by from-square, then
 *     to-square, then q, r, b ("a7a8q", "a7a8r", "a7a8b", "a7b8q", ...).
 * A promotion to a knight has no entry of its own: it takes the index of
 * the plain move ("a7a8").  Castling is the king's move onto its own
 * rook's square ("e1h1", "e1a1"), which is how pf_move encodes it.
 *
 * The table is built once, on first use, and is safe to use from several
 * threads.  Nothing here prints, exits or allocates.
 */
#ifndef PF_POLICYINDEX_H
#define PF_POLICYINDEX_H

#include "chess.h"

#define PF_LC0_POLICY_SIZE	1858

/*
 * The index (0 to PF_LC0_POLICY_SIZE - 1) of m, a move of the side to
 * move, in lc0's list, or -1 when m has none (not queen- or knight-shaped,
 * a promotion that is not from the seventh rank to the eighth, or
 * PF_MOVE_NONE).  lc0 sees every position from the side to move's view:
 * when black_to_move is not 0, both squares are mirrored by rank first
 * (e7e5 becomes e2e4).
 */
int		 pf_lc0_index(pf_move m, int black_to_move);

/*
 * lc0's canonical input formats (3 to 5) may see a position through a
 * transform, bits of: PF_LC0_FLIP, the files reversed (a <-> h);
 * PF_LC0_MIRROR, the ranks (1 <-> 8); PF_LC0_TRANSPOSE, the board
 * reflected in its a8-h1 diagonal (a1 <-> h8, b1 <-> h7).  They apply in
 * that order, after black's mirroring, as lc0's Transform (src/neural/
 * encoder.cc) applies them to planes and to policy indices.
 */
#define PF_LC0_FLIP		1
#define PF_LC0_MIRROR		2
#define PF_LC0_TRANSPOSE	4

/* Square sq (a1 = 0) through transform. */
int		 pf_lc0_square(int sq, int transform);
/* pf_lc0_index of m seen through transform. */
int		 pf_lc0_index_tf(pf_move m, int black_to_move, int transform);

/*
 * The text of entry idx of lc0's list, from white's view ("a1b1",
 * "a7a8q"), or NULL when idx is not 0 to PF_LC0_POLICY_SIZE - 1.  The
 * string is static: it stays valid for the life of the program.
 */
const char	*pf_lc0_name(int idx);

#endif
