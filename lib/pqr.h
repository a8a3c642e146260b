/*
 * pqr.h - P/Q/R triples (METHODS.md section 6, seed 002): for a position P
 * of a game, Q is the position after the move played and R the position
 * after another legal move drawn at random.  A trainer fits f(P) = -f(Q)
 * and f(R) > f(Q); Q and R are stored as packed positions (posflow(5),
 * the PQR extension) so that it needs no move generator.
 *
 * Pure computation: nothing allocates, prints or exits.
 */
#ifndef PF_PQR_H
#define PF_PQR_H

#include <stdint.h>

#include "chess.h"

/*
 * The R moves of a position whose nm legal moves (pf_gen_legal's list, in
 * its order) are moves[] and whose played move is played: up to n
 * distinct moves other than played, drawn uniformly without replacement by
 * a generator seeded from seed, game_id and ply only (so chunking, order
 * and -j never change a sample).  Writes them to out[] in draw order and
 * returns how many (fewer than n when the position has fewer other moves;
 * 0 when played is not among moves[] or is the only move).
 */
int	pf_pqr_draw(const pf_move *moves, int nm, pf_move played,
	    uint64_t seed, uint64_t game_id, uint16_t ply, int n, pf_move *out);

#endif
