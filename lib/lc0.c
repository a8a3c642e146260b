/*
 * lc0.c - lczero-training's V6TrainingData record (lc0.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"
#include "lc0.h"
#include "record.h"
#include "sfentry.h"
#include "target.h"

static const struct {
	int f;
	const char *name, *number;
} inputs[] = {
	{ PF_LC0_CLASSIC, "classic", "1" },
	{ PF_LC0_FRC_CASTLING, "frc_castling", "2" },
	{ PF_LC0_CANONICAL, "canonical", "3" },
	{ PF_LC0_CANONICAL_100, "canonical_100", "4" },
	{ PF_LC0_CANONICAL_V2, "canonical_v2", "5" },
	{ PF_LC0_CANONICAL_ARMAGEDDON, "canonical_armageddon", "132" },
	{ PF_LC0_CANONICAL_V2_ARMAGEDDON, "canonical_v2_armageddon", "133" }
};
#define NINPUTS	(sizeof(inputs) / sizeof(inputs[0]))

int
pf_lc0_input_format(const char *name)
{
	size_t i;

	for (i = 0; i < NINPUTS; i++)
		if (strcmp(name, inputs[i].name) == 0 ||
		    strcmp(name, inputs[i].number) == 0)
			return inputs[i].f;
	return 0;
}

const char *
pf_lc0_input_name(int f)
{
	size_t i;

	for (i = 0; i < NINPUTS; i++)
		if (inputs[i].f == f)
			return inputs[i].name;
	return NULL;
}

int
pf_lc0_base_format(int f)
{
	if (f == PF_LC0_CANONICAL_ARMAGEDDON)
		return PF_LC0_CANONICAL_100;
	if (f == PF_LC0_CANONICAL_V2_ARMAGEDDON)
		return PF_LC0_CANONICAL_V2;
	return pf_lc0_input_name(f) != NULL ? f : 0;
}

/* The bits of each byte reversed: the files flipped, and how lc0 stores
   planes. */
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

/* Reflect a square set in the a8-h1 diagonal (lc0's TransposeBitsInBytes). */
static uint64_t
transpose(uint64_t v)
{
	v = (v & 0xAA00AA00AA00AA00ULL) >> 9 | (v & 0x0055005500550055ULL) << 9 |
	    (v & 0x55AA55AA55AA55AAULL);
	v = (v & 0xCCCC0000CCCC0000ULL) >> 18 | (v & 0x0000333300003333ULL) <<
	    18 | (v & 0x3333CCCC3333CCCCULL);
	v = (v & 0xF0F0F0F000000000ULL) >> 36 | (v & 0x000000000F0F0F0FULL) <<
	    36 | (v & 0x0F0F0F0FF0F0F0F0ULL);
	return v;
}

static uint64_t
apply(uint64_t v, int transform)
{
	if (transform & PF_LC0_FLIP)
		v = reverse_bytes_bits(v);
	if (transform & PF_LC0_MIRROR)
		v = mirror(v);
	if (transform & PF_LC0_TRANSPOSE)
		v = transpose(v);
	return v;
}

/* The pieces of type t and colour c of b, seen from colour us. */
static uint64_t
view(const pf_board *b, int t, int c, int us)
{
	uint64_t v = b->by_type[t] & b->by_colour[c];

	return us == PF_BLACK ? mirror(v) : v;
}

/* lc0's CompareTransposing: -1 keep, 1 transpose, 0 the same. */
static int
compare_transposing(uint64_t v, int transform)
{
	uint64_t alt;

	v = apply(v, transform & (PF_LC0_FLIP | PF_LC0_MIRROR));
	alt = transpose(v);
	return v < alt ? -1 : v > alt;
}

int
pf_lc0_transform(const pf_board *b, int f)
{
	/* the tie-breaks in lc0's order: kings, queens, rooks, knights,
	   bishops */
	static const int ties[5] = { PF_KING, PF_QUEEN, PF_ROOK, PF_KNIGHT,
		PF_BISHOP };
	int us = b->stm, t = 0, i, c;
	uint64_t king, ours, all;

	if (f < PF_LC0_CANONICAL || b->castle_rooks != 0)
		return 0;
	king = view(b, PF_KING, us, us);
	if (king & 0x0F0F0F0F0F0F0F0FULL) {
		t |= PF_LC0_FLIP;
		king = reverse_bytes_bits(king);
	}
	if (b->by_type[PF_PAWN] != 0)
		return t;
	if (king & 0xFFFFFFFF00000000ULL) {
		t |= PF_LC0_MIRROR;
		king = mirror(king);
	}
	if (king & 0xE0C08000ULL)
		return t | PF_LC0_TRANSPOSE;
	if ((king & 0x10204080ULL) == 0)
		return t;
	ours = b->by_colour[us];
	all = ours | b->by_colour[!us];
	if (us == PF_BLACK) {
		ours = mirror(ours);
		all = mirror(all);
	}
	if ((c = compare_transposing(all, t)) != 0 ||
	    (c = compare_transposing(ours, t)) != 0)
		return c > 0 ? t | PF_LC0_TRANSPOSE : t;
	for (i = 0; i < 5; i++) {
		uint64_t v = b->by_type[ties[i]];

		if (us == PF_BLACK)
			v = mirror(v);
		if ((c = compare_transposing(v, t)) != 0)
			return c > 0 ? t | PF_LC0_TRANSPOSE : t;
	}
	return t;
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

/* The 12 piece planes of b into p[0..12), seen from colour us; undo: with
   the double push that made b's en passant square taken back. */
static void
put_pieces(uint64_t *p, const pf_board *b, int us, int undo)
{
	uint64_t colour[2], type[6];
	int side, t;

	memcpy(colour, b->by_colour, sizeof(colour));
	memcpy(type, b->by_type, sizeof(type));
	if (undo && b->ep != PF_SQ_NONE) {
		int c = !b->stm, now = c == PF_WHITE ? b->ep + 8 : b->ep - 8,
		    was = c == PF_WHITE ? b->ep - 8 : b->ep + 8;
		uint64_t move = 1ULL << now | 1ULL << was;

		colour[c] ^= move;
		type[PF_PAWN] ^= move;
	}
	for (side = 0; side < 2; side++)
		for (t = PF_PAWN; t <= PF_KING; t++) {
			p[side * 6 + t] = type[t] & colour[side == 0 ? us :
			    !us];
			if (us == PF_BLACK)
				p[side * 6 + t] = mirror(p[side * 6 + t]);
		}
}

int
pf_lc0_ep(const pf_board *b, const pf_board *prev)
{
	uint64_t gone, came, beside;
	int c, from, to;

	if (b->ep != PF_SQ_NONE || prev == NULL)
		return b->ep;
	c = prev->stm;
	gone = prev->by_type[PF_PAWN] & prev->by_colour[c] &
	    ~(b->by_type[PF_PAWN] & b->by_colour[c]);
	came = b->by_type[PF_PAWN] & b->by_colour[c] &
	    ~(prev->by_type[PF_PAWN] & prev->by_colour[c]);
	if (gone == 0 || (gone & (gone - 1)) != 0 || came == 0 ||
	    (came & (came - 1)) != 0)
		return PF_SQ_NONE;
	from = __builtin_ctzll(gone);
	to = __builtin_ctzll(came);
	if (to - from != (c == PF_WHITE ? 16 : -16) || from >> 3 != (c ==
	    PF_WHITE ? 1 : 6))
		return PF_SQ_NONE;
	beside = ((to & 7) > 0 ? 1ULL << (to - 1) : 0) |
	    ((to & 7) < 7 ? 1ULL << (to + 1) : 0);
	if ((beside & b->by_type[PF_PAWN] & b->by_colour[!c]) == 0)
		return PF_SQ_NONE;
	return (from + to) / 2;
}

/* pf_lc0_ep of hist[k]. */
static int
lc0_ep(const pf_board *const *hist, int k, int nhist)
{
	return pf_lc0_ep(hist[k], k + 1 < nhist ? hist[k + 1] : NULL);
}

/* The history slots, as lc0's EncodePositionNoTransform fills them. */
static void
put_history(uint64_t *planes, const pf_board *const *hist, const int *rep,
    int nhist, int f)
{
	const pf_board *b = hist[0], *old = hist[nhist - 1], *pb;
	int canon = f >= PF_LC0_CANONICAL;
	int v2 = pf_lc0_base_format(f) == PF_LC0_CANONICAL_V2;
	int look = v2 ? PF_LC0_LOOKBACK : PF_LC0_HISTORY, slot, k, fill, r;

	for (slot = 0, k = 0; slot < PF_LC0_HISTORY && k < look; k++) {
		fill = k >= nhist;
		pb = fill ? old : hist[k];
		r = fill ? rep[nhist - 1] : rep[k];
		/* castling rights cannot come back, nor an en passant
		   square repeat */
		if (canon && k > 0 && (pb->castle_rooks != b->castle_rooks ||
		    (fill ? pb->ep : lc0_ep(hist, k, nhist)) != PF_SQ_NONE))
			break;
		if (fill && is_startpos(old))
			break;
		/* v2: after the first slot, repeats only */
		if (v2 && slot > 0 && !r) {
			if (pb->rule50 == 0 || fill)
				break;
			continue;
		}
		put_pieces(planes + 13 * slot, pb, b->stm, fill);
		if (r)
			planes[13 * slot + 12] = ~0ULL;
		slot++;
		/* nothing before a capture or a pawn move repeats */
		if (canon && pb->rule50 == 0)
			break;
	}
}

void
pf_lc0_v6_encode(const pf_board *const *hist, const int *rep, int nhist,
    const pf_lc0_v6 *v, uint8_t out[PF_LC0_V6_SIZE])
{
	const pf_board *b = hist[0];
	uint64_t planes[13 * PF_LC0_HISTORY], rooks;
	int f = v->input_format != 0 ? v->input_format : PF_LC0_CLASSIC;
	int us = b->stm, side, i;
	uint8_t *p;

	memset(out, 0, PF_LC0_V6_SIZE);
	pf_put32(out, 6);
	pf_put32(out + 4, (uint32_t)f);
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		pf_putf32(out + 8 + 4 * i, v->probabilities[i]);
	memset(planes, 0, sizeof(planes));
	put_history(planes, hist, rep, nhist, f);
	for (i = 0; i < 13 * PF_LC0_HISTORY; i++) {
		if (v->transform != 0 && planes[i] != 0 && planes[i] != ~0ULL)
			planes[i] = apply(planes[i], v->transform);
		pf_put64(out + 7440 + 8 * i, reverse_bytes_bits(planes[i]));
	}
	/* Castling: a right is held while a castling rook is left on the
	   king's side (oo) or the other (ooo) of the back rank; format 1
	   writes 1, the others 1 << the rook's file. */
	for (side = 0; side < 2; side++) {
		int c = side == 0 ? us : !us;
		int ksq = b->king_sq[c];
		uint64_t rank = c == PF_WHITE ? 0xFFULL : 0xFFULL << 56, ooo, oo;

		rooks = b->castle_rooks & b->by_colour[c] & rank;
		ooo = rooks & ((1ULL << ksq) - 1);
		oo = rooks & ~((2ULL << ksq) - 1);
		if (f == PF_LC0_CLASSIC) {
			out[8272 + side * 2] = ooo != 0;
			out[8273 + side * 2] = oo != 0;
		} else {
			out[8272 + side * 2] = ooo ? (uint8_t)(1u <<
			    (__builtin_ctzll(ooo) & 7)) : 0;
			out[8273 + side * 2] = oo ? (uint8_t)(1u <<
			    (__builtin_ctzll(oo) & 7)) : 0;
		}
	}
	if (f >= PF_LC0_CANONICAL) {
		int ep = lc0_ep(hist, 0, nhist);

		if (ep != PF_SQ_NONE)
			out[8276] = (uint8_t)(1u << pf_lc0_square(ep & 7,
			    v->transform & PF_LC0_FLIP));
		out[8278] = (uint8_t)(v->transform | (us == PF_BLACK) << 7);
	} else
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

/* ---- reading ----------------------------------------------------------- */

/* The inverse of apply: each step is its own inverse, taken in reverse
   order. */
static uint64_t
unapply(uint64_t v, int transform)
{
	if (transform & PF_LC0_TRANSPOSE)
		v = transpose(v);
	if (transform & PF_LC0_MIRROR)
		v = mirror(v);
	if (transform & PF_LC0_FLIP)
		v = reverse_bytes_bits(v);
	return v;
}

/*
 * A castling byte of format 1 (0 or 1) or 2 to 5 (0 or 1 << file) as the
 * rook's file, -1 none, -2 not a castling byte.  Format 1 names no file:
 * the outermost rook of colour c on that side of its king, as X-FEN's K
 * and Q do (a, h in standard chess), -2 when there is none.
 */
static int
castle_file(const pf_board *b, uint8_t v, int f, int c, int ooo)
{
	uint64_t rank = c == PF_WHITE ? 0xFFULL : 0xFFULL << 56, rooks;
	int k;

	if (v == 0)
		return -1;
	if (f != PF_LC0_CLASSIC)
		return (v & (v - 1)) != 0 ? -2 : __builtin_ctz(v);
	if (v != 1)
		return -2;
	rooks = b->by_type[PF_ROOK] & b->by_colour[c] & rank;
	k = b->by_type[PF_KING] & b->by_colour[c] & rank ?
	    __builtin_ctzll(b->by_type[PF_KING] & b->by_colour[c] & rank) : -1;
	if (k < 0)
		return -2;
	rooks &= ooo ? (1ULL << k) - 1 : ~((2ULL << k) - 1);
	if (rooks == 0)
		return -2;
	return (ooo ? __builtin_ctzll(rooks) : 63 - __builtin_clzll(rooks)) &
	    7;
}

size_t
pf_lc0_record_size(uint32_t version)
{
	switch (version) {
	case 3:
		return PF_LC0_V3_SIZE;
	case 4:
		return PF_LC0_V4_SIZE;
	case 5:
		return PF_LC0_V5_SIZE;
	case 7:
		return PF_LC0_V7_SIZE;
	default:
		return PF_LC0_V6_SIZE;
	}
}

int
pf_lc0_decode(const uint8_t *in, pf_lc0_entry *e, char *err, size_t errlen)
{
	static const uint8_t classic[4] = { 1, 0, 0, 0 };
	uint8_t v6[PF_LC0_V6_SIZE];
	const uint8_t *rec = in;
	uint64_t planes[26], seen = 0;
	pf_board *b = &e->board;
	uint32_t version = pf_get32(in), f;
	uint8_t inv;
	int t = 0, us, i, side, file, idx, ep = PF_SQ_NONE, best = -1;
	double sum = 0;
	float p;
	char why[128];

	memset(e, 0, sizeof(*e));
	if (version < 3 || version > 7) {
		snprintf(err, errlen, "version %u, not 3 to 7 "
		    "(V3TrainingData to V7TrainingData)", version);
		return -1;
	}
	/* V3 to V5 as V6 lays them out, as lczero-training's chunkparser
	   reads them: V3 and V4 have no input format (classic) and V3 no
	   evaluation; none has played_idx, best_idx or result_q */
	if (version < 6) {
		memset(v6, 0, sizeof(v6));
		if (version == 5)
			memcpy(v6, in, PF_LC0_V5_SIZE);
		else {
			memcpy(v6, in, 4);
			memcpy(v6 + 4, classic, 4);
			memcpy(v6 + 8, in + 4, pf_lc0_record_size(version) - 4);
		}
		rec = v6;
	}
	f = pf_get32(rec + 4);
	inv = rec[8278];
	if (pf_lc0_input_name((int)f) == NULL) {
		snprintf(err, errlen, "input format %u (1 to 5, 132 and 133 "
		    "are read)", f);
		return -1;
	}
	e->input_format = (int)f;
	if (f >= PF_LC0_CANONICAL) {
		t = inv & 7;
		us = inv >> 7 ? PF_BLACK : PF_WHITE;
	} else if (rec[8276] > 1) {
		snprintf(err, errlen, "side to move %u", rec[8276]);
		return -1;
	} else
		us = rec[8276] ? PF_BLACK : PF_WHITE;
	/* the first two slots' pieces, back to white's view */
	for (i = 0; i < 26; i++) {
		planes[i] = unapply(reverse_bytes_bits(pf_get64(rec + 7440 + 8 *
		    i)), t);
		if (us == PF_BLACK)
			planes[i] = mirror(planes[i]);
	}
	pf_board_clear(b);
	for (i = 0; i < 12; i++) {
		uint64_t m = planes[i];

		if (m & seen) {
			snprintf(err, errlen, "two pieces on one square");
			return -1;
		}
		seen |= m;
		while (m) {
			int sq = __builtin_ctzll(m);

			m &= m - 1;
			pf_board_put_piece(b, sq, PF_PIECE(i < 6 ? us : !us,
			    i % 6));
		}
	}
	b->stm = (uint8_t)us;
	b->rule50 = rec[8277];
	b->fullmove = 1;
	/* castling: us_ooo, us_oo, them_ooo, them_oo */
	for (side = 0; side < 4; side++) {
		int c = side < 2 ? us : !us, ooo = side % 2 == 0;

		if ((file = castle_file(b, rec[8272 + side], (int)f, c,
		    ooo)) == -2) {
			snprintf(err, errlen, "castling byte %u (%s %s)",
			    rec[8272 + side], side < 2 ? "us" : "them",
			    ooo ? "ooo" : "oo");
			return -1;
		}
		if (file < 0)
			continue;
		b->castle_rooks |= 1ULL << (c == PF_WHITE ? file : 56 + file);
		if (file != (ooo ? 0 : 7))
			b->chess960 = 1;
	}
	/* en passant: the byte of formats 3 and up, else a double push
	   between the history's first slot and the position */
	if (f >= PF_LC0_CANONICAL) {
		uint8_t v = rec[8276];

		if (v != 0) {
			if ((v & (v - 1)) != 0) {
				snprintf(err, errlen, "en passant byte %u", v);
				return -1;
			}
			file = pf_lc0_square(__builtin_ctz(v), t & PF_LC0_FLIP);
			ep = us == PF_WHITE ? 40 + file : 16 + file;
		}
	} else {
		/* their pawns: gone from their second rank, come two
		   squares on */
		uint64_t gone = planes[13 + 6] & ~planes[6],
		    came = planes[6] & ~planes[13 + 6];

		if (gone != 0 && (gone & (gone - 1)) == 0 && came != 0 &&
		    (came & (came - 1)) == 0) {
			int from = __builtin_ctzll(gone),
			    to = __builtin_ctzll(came);

			if (us == PF_WHITE && from >> 3 == 6 && to == from - 16)
				ep = from - 8;
			else if (us == PF_BLACK && from >> 3 == 1 &&
			    to == from + 16)
				ep = from + 8;
		}
	}
	b->ep = (uint8_t)ep;
	pf_board_refresh(b);
	if (b->king_sq[PF_WHITE] == b->king_sq[PF_BLACK] ||
	    pf_board_validate(b, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "not a position: %s", why);
		return -1;
	}
	/* the legal moves and their probabilities */
	e->n = pf_gen_legal(b, e->moves);
	for (i = 0; i < e->n; i++) {
		idx = pf_lc0_index_tf(e->moves[i], us == PF_BLACK, t);
		p = idx < 0 ? -1 : pf_getf32(rec + 8 + 4 * idx);
		if (!(p >= 0 && p <= 1.0001f)) {
			snprintf(err, errlen, "probability %g of a legal move",
			    (double)p);
			return -1;
		}
		e->prob[i] = p;
		sum += p;
		if (best < 0 || p > e->prob[best])
			best = i;
		if (version < 6)
			continue;
		if (idx == pf_get16(rec + 8344))
			e->move = e->moves[i];
		if (idx == pf_get16(rec + 8346))
			e->best = e->moves[i];
	}
	for (i = 0; i < e->n; i++)
		e->prob[i] = sum > 0 ? e->prob[i] / sum : 1.0 / e->n;
	e->version = (int)version;
	e->has_eval = version >= 4;
	if (version < 6) {
		/* the most visited move is lc0's best; the move played is
		   the next record's to find */
		if (best >= 0)
			e->best = e->moves[best];
		e->result = (int8_t)rec[8279] > 0 ? 1 : (int8_t)rec[8279] < 0 ?
		    -1 : 0;
	}
	if (version >= 6 && e->move == PF_MOVE_NONE && e->n > 0) {
		snprintf(err, errlen, "played_idx %u is no legal move",
		    pf_get16(rec + 8344));
		return -1;
	}
	if (version >= 6) {
		p = pf_getf32(rec + 8308);
		e->result = p > 0.5f ? 1 : p < -0.5f ? -1 : 0;
	}
	e->q = pf_getf32(rec + 8284);
	e->d = pf_getf32(rec + 8292);
	if (!(e->q >= -1.0001f && e->q <= 1.0001f && e->d >= -0.0001f &&
	    e->d <= 1.0001f)) {
		snprintf(err, errlen, "best_q %g, best_d %g", (double)e->q,
		    (double)e->d);
		return -1;
	}
	return 0;
}

int16_t
pf_lc0_score(float q)
{
	double s;

	if (q >= 1)
		return 20000;
	if (q <= -1)
		return -20000;
	s = 416.11539129 * log((1.0 + q) / (1.0 - q));
	s = s > 20000 ? 20000 : s < -20000 ? -20000 : s;
	return (int16_t)lround(s);
}

/* The entry's evaluation: W/D/L from q and d, the score, the best move. */
static int
entry_eval(const pf_lc0_entry *e, pf_extbuf *ext)
{
	pf_eval v;
	double w, l, q = e->q, d = e->d;

	memset(&v, 0, sizeof(v));
	v.source = PF_SRC_IMPORT;
	v.limit_kind = PF_LIMIT_NONE;
	/* within +-20000: always a score */
	(void)pf_sf_unscore(pf_lc0_score(e->q), &v.score_kind, &v.score);
	d = d < 0 ? 0 : d > 1 ? 1 : d;
	w = (1 + q - d) / 2;
	l = (1 - q - d) / 2;
	w = w < 0 ? 0 : w;
	l = l < 0 ? 0 : l;
	v.flags = PF_EVF_WDL;
	v.wdl[0] = (uint16_t)lround(w * 1000);
	v.wdl[2] = (uint16_t)lround(l * 1000);
	v.wdl[0] = v.wdl[0] > 1000 ? 1000 : v.wdl[0];
	v.wdl[2] = v.wdl[0] + v.wdl[2] > 1000 ? 1000 - v.wdl[0] : v.wdl[2];
	v.wdl[1] = (uint16_t)(1000 - v.wdl[0] - v.wdl[2]);
	v.best = e->best;
	return pf_eval_encode(&v, ext);
}

int
pf_lc0_entry_exts(const pf_lc0_entry *e, pf_extbuf *ext)
{
	pf_policy pol;
	int i;

	if (e->has_eval && entry_eval(e, ext) == -1)
		return -1;
	if (e->n == 0)
		return 0;
	memset(&pol, 0, sizeof(pol));
	pol.method = PF_POLICY_IMPORT;
	pol.n = (uint16_t)e->n;
	for (i = 0; i < e->n; i++)
		pol.move[i] = e->moves[i];
	if (pf_policy_quantize(e->prob, e->n, pol.prob) == -1)
		return 0;
	return pf_policy_encode(&pol, ext);
}
