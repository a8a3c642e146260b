/*
 * lc0.h - lczero-training's V6TrainingData record (8356 bytes,
 * little-endian, as lc0 writes it and lczero-training's chunkparser reads
 * it), input format 1 (classical planes):
 *
 *      0 u32 version (6)          4 u32 input_format (1)
 *      8 f32 probabilities[1858]: the policy target over lczero-training's
 *            policy index (policyindex.h); -1 for illegal moves
 *   7440 u64 planes[104]: 8 positions (this one, then the 7 before it) of
 *            13 planes: the side to move's pawns, knights, bishops,
 *            rooks, queens, king, the other side's, and a plane of ones
 *            when the position occurred before; from the side to move's
 *            view (the board mirrored by rank when black moves), a1 = bit
 *            0 of the square set with the bits of each byte reversed, as
 *            lc0 writes them (ReverseBitsInBytes).  Where the history
 *            runs out, as lc0 fills it (FillEmptyHistory::FEN_ONLY, its
 *            default): zeros when the oldest position known is the
 *            standard start position, else copies of that position
 *            (its repetition plane too), with the double push that made
 *            its en passant square, if any, taken back
 *   8272 u8  castling_us_ooo, castling_us_oo, castling_them_ooo,
 *            castling_them_oo (1 when the right is held)
 *   8276 u8  side_to_move (input format 1: 1 when black moves)
 *   8277 u8  rule50_count     8278 u8 invariance_info (0)   8279 u8 dummy
 *   8280 f32 root_q, best_q, root_d, best_d, root_m, best_m, plies_left,
 *            result_q, result_d, played_q, played_d, played_m, orig_q,
 *            orig_d, orig_m (side to move's view)
 *   8340 u32 visits   8344 u16 played_idx   8346 u16 best_idx
 *   8348 f32 policy_kld       8352 u32 reserved
 *
 * Nothing here prints or exits.
 */
#ifndef PF_LC0_H
#define PF_LC0_H

#include <stdint.h>

#include "chess.h"
#include "policyindex.h"

#define PF_LC0_V6_SIZE		8356
#define PF_LC0_HISTORY		8

typedef struct pf_lc0_v6 {
	float probabilities[PF_LC0_POLICY_SIZE];
	float root_q, best_q, root_d, best_d, root_m, best_m, plies_left;
	float result_q, result_d, played_q, played_d, played_m;
	float orig_q, orig_d, orig_m;
	uint32_t visits;
	uint16_t played_idx, best_idx;
	float policy_kld;
} pf_lc0_v6;

/*
 * Encode: hist[0] is the position, hist[1..nhist) the ones before it,
 * most recent first (1 <= nhist <= PF_LC0_HISTORY; fewer are filled as
 * above); rep[i] is 1 when hist[i] occurred earlier in the game.  The targets
 * come from v.
 */
void	pf_lc0_v6_encode(const pf_board *const *hist, const int *rep,
	    int nhist, const pf_lc0_v6 *v, uint8_t out[PF_LC0_V6_SIZE]);

#endif
