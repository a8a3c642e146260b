/*
 * lc0.c - lczero-training's V6TrainingData record (lc0.h).
 */
#include <string.h>

#include "ext.h"
#include "lc0.h"
#include "record.h"

/* The bits of each byte reversed, as lc0 stores planes. */
static uint64_t
reverse_bytes_bits(uint64_t v)
{
	v = (v & 0x5555555555555555ULL) << 1 | (v >> 1 & 0x5555555555555555ULL);
	v = (v & 0x3333333333333333ULL) << 2 | (v >> 2 & 0x3333333333333333ULL);
	v = (v & 0x0F0F0F0F0F0F0F0FULL) << 4 | (v >> 4 & 0x0F0F0F0F0F0F0F0FULL);
	return v;
}

/* Mirror a square set by rank. */
static uint64_t
mirror(uint64_t v)
{
	return __builtin_bswap64(v);
}

void
pf_lc0_v6_encode(const pf_board *const *hist, const int *rep, int nhist,
    const pf_lc0_v6 *v, uint8_t out[PF_LC0_V6_SIZE])
{
	const pf_board *b = hist[0];
	uint64_t plane, rooks;
	int us = b->stm, them = !us, h, t, side, i;
	uint8_t *p;

	memset(out, 0, PF_LC0_V6_SIZE);
	pf_put32(out, 6);
	pf_put32(out + 4, 1);
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		pf_putf32(out + 8 + 4 * i, v->probabilities[i]);
	p = out + 7440;
	for (h = 0; h < PF_LC0_HISTORY && h < nhist; h++) {
		const pf_board *x = hist[h];

		/* Every history position is seen from the side to move of
		   the current one, as lc0 encodes it. */
		for (side = 0; side < 2; side++)
			for (t = PF_PAWN; t <= PF_KING; t++) {
				plane = x->by_type[t] &
				    x->by_colour[side == 0 ? us : them];
				if (us == PF_BLACK)
					plane = mirror(plane);
				pf_put64(p + 8 * (h * 13 + side * 6 + t),
				    reverse_bytes_bits(plane));
			}
		if (rep[h])
			pf_put64(p + 8 * (h * 13 + 12), ~0ULL);
	}
	/* Castling: a right is held while a castling rook is left on the
	   king's side (oo) or the other (ooo) of the back rank. */
	for (side = 0; side < 2; side++) {
		int c = side == 0 ? us : them;
		int ksq = b->king_sq[c];
		uint64_t rank = c == PF_WHITE ? 0xFFULL : 0xFFULL << 56;

		rooks = b->castle_rooks & b->by_colour[c] & rank;
		out[8272 + side * 2] = (rooks & ((1ULL << ksq) - 1)) != 0;
		out[8273 + side * 2] = (rooks & ~((2ULL << ksq) - 1)) != 0;
	}
	out[8276] = us == PF_BLACK;
	out[8277] = b->rule50;
	p = out + 8280;
	pf_putf32(p, v->root_q);
	pf_putf32(p + 4, v->best_q);
	pf_putf32(p + 8, v->root_d);
	pf_putf32(p + 12, v->best_d);
	pf_putf32(p + 16, v->root_m);
	pf_putf32(p + 20, v->best_m);
	pf_putf32(p + 24, v->plies_left);
	pf_putf32(p + 28, v->result_q);
	pf_putf32(p + 32, v->result_d);
	pf_putf32(p + 36, v->played_q);
	pf_putf32(p + 40, v->played_d);
	pf_putf32(p + 44, v->played_m);
	pf_putf32(p + 48, v->orig_q);
	pf_putf32(p + 52, v->orig_d);
	pf_putf32(p + 56, v->orig_m);
	pf_put32(out + 8340, v->visits);
	pf_put16(out + 8344, v->played_idx);
	pf_put16(out + 8346, v->best_idx);
	pf_putf32(out + 8348, v->policy_kld);
}
