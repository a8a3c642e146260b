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

/* The standard start position, white to move with every castling right
   (lc0's kStartposBoard, clocks aside). */
static int
is_startpos(const pf_board *b)
{
	return b->stm == PF_WHITE && b->by_colour[PF_WHITE] == 0xFFFFULL &&
	    b->by_colour[PF_BLACK] == 0xFFFF000000000000ULL &&
	    b->by_type[PF_PAWN] == 0x00FF00000000FF00ULL &&
	    b->by_type[PF_KNIGHT] == 0x4200000000000042ULL &&
	    b->by_type[PF_BISHOP] == 0x2400000000000024ULL &&
	    b->by_type[PF_ROOK] == 0x8100000000000081ULL &&
	    b->by_type[PF_QUEEN] == 0x0800000000000008ULL &&
	    b->by_type[PF_KING] == 0x1000000000000010ULL &&
	    b->castle_rooks == 0x8100000000000081ULL;
}

/* The 12 piece planes of a board (its by_colour and by_type) at history
   slot h, seen from colour us. */
static void
put_pieces(uint8_t *p, int h, const uint64_t by_colour[2],
    const uint64_t by_type[6], int us)
{
	uint64_t plane;
	int side, t;

	for (side = 0; side < 2; side++)
		for (t = PF_PAWN; t <= PF_KING; t++) {
			plane = by_type[t] & by_colour[side == 0 ? us : !us];
			if (us == PF_BLACK)
				plane = mirror(plane);
			pf_put64(p + 8 * (h * 13 + side * 6 + t),
			    reverse_bytes_bits(plane));
		}
}

void
pf_lc0_v6_encode(const pf_board *const *hist, const int *rep, int nhist,
    const pf_lc0_v6 *v, uint8_t out[PF_LC0_V6_SIZE])
{
	const pf_board *b = hist[0], *old = hist[nhist - 1];
	uint64_t rooks, colour[2], type[6];
	int us = b->stm, h, side, i;
	uint8_t *p;

	memset(out, 0, PF_LC0_V6_SIZE);
	pf_put32(out, 6);
	pf_put32(out + 4, 1);
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		pf_putf32(out + 8 + 4 * i, v->probabilities[i]);
	p = out + 7440;
	/* Every history position is seen from the side to move of the
	   current one, as lc0 encodes it. */
	for (h = 0; h < PF_LC0_HISTORY && h < nhist; h++) {
		put_pieces(p, h, hist[h]->by_colour, hist[h]->by_type, us);
		if (rep[h])
			pf_put64(p + 8 * (h * 13 + 12), ~0ULL);
	}
	/* The rest, as lc0's FEN_ONLY fill has it: copies of the oldest
	   position known, its double push taken back. */
	if (nhist < PF_LC0_HISTORY && !is_startpos(old)) {
		memcpy(colour, old->by_colour, sizeof(colour));
		memcpy(type, old->by_type, sizeof(type));
		if (old->ep != PF_SQ_NONE) {
			int c = !old->stm, now = c == PF_WHITE ? old->ep + 8 :
			    old->ep - 8, was = c == PF_WHITE ? old->ep - 8 :
			    old->ep + 8;
			uint64_t move = 1ULL << now | 1ULL << was;

			colour[c] ^= move;
			type[PF_PAWN] ^= move;
		}
		for (h = nhist; h < PF_LC0_HISTORY; h++) {
			put_pieces(p, h, colour, type, us);
			if (rep[nhist - 1])
				pf_put64(p + 8 * (h * 13 + 12), ~0ULL);
		}
	}
	/* Castling: a right is held while a castling rook is left on the
	   king's side (oo) or the other (ooo) of the back rank. */
	for (side = 0; side < 2; side++) {
		int c = side == 0 ? us : !us;
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
