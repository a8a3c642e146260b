/*
 * chess.c - the board core: attack tables (magic bitboards), fully legal
 * move generation, make/unmake, the Zobrist key and perft.
 *
 * The tables are computed once at program start by a constructor, before
 * any thread exists, so every later use is a read of constant data and
 * needs no locking (uci-eval is multi-threaded).  FEN, SAN, UCI text,
 * validation and the packed form live in chess_text.c.
 *
 * Move generation is legal by construction: pinned pieces move only along
 * their pin line, in check only moves that capture or block the single
 * checker are produced, king moves are tested against the opponent's
 * attacks with the king lifted off the board, and only the rare en passant
 * capture is tried out on a scratch occupancy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "chess.h"

struct pf_magic {
	uint64_t	 mask;
	uint64_t	 magic;
	uint64_t	*attacks;
	unsigned	 shift;
};

static struct pf_magic rook_magic[64], bishop_magic[64];
static uint64_t rook_table[0x19000], bishop_table[0x1480];

static uint64_t pf_knight_att[64], pf_king_att[64], pf_pawn_att[2][64];
static uint64_t pf_between[64][64], pf_line[64][64];
/* Slider attacks on an empty board (0.5 KiB each, beside the magics'
   840 KiB). */
static uint64_t pf_rook_rays[64], pf_bishop_rays[64];
static uint64_t pf_zobrist_piece[16][64], pf_zobrist_castle[64];
static uint64_t pf_zobrist_ep[8], pf_zobrist_side;

static inline int
pop_lsb(uint64_t *b)
{
	int sq = __builtin_ctzll(*b);

	*b &= *b - 1;
	return sq;
}

static inline uint64_t
magic_index(const struct pf_magic *m, uint64_t occ)
{
	return ((occ & m->mask) * m->magic) >> m->shift;
}

uint64_t
pf_rook_attacks(int sq, uint64_t occ)
{
	const struct pf_magic *m = &rook_magic[sq];

	return m->attacks[magic_index(m, occ)];
}

uint64_t
pf_bishop_attacks(int sq, uint64_t occ)
{
	const struct pf_magic *m = &bishop_magic[sq];

	return m->attacks[magic_index(m, occ)];
}

/*
 * The squares a slider on a square reaches going one way on an empty
 * board, for the eight ways: 0-3 go up the square numbers (east, north,
 * north-east, north-west), 4-7 down (west, south, south-east,
 * south-west).  Walked once; they fill the tables below, where the
 * walk itself, once for each of their 107520 entries, was most of every
 * program's start-up.
 */
static uint64_t ray[8][64];
static const int ray_step[8][2] = { {1, 0}, {0, 1}, {1, 1}, {-1, 1},
    {-1, 0}, {0, -1}, {1, -1}, {-1, -1} };
#define ROOK_WAYS	0
#define BISHOP_WAYS	2

static void
init_rays(void)
{
	int d, sq, f, r;

	for (d = 0; d < 8; d++)
		for (sq = 0; sq < 64; sq++) {
			f = (sq & 7) + ray_step[d][0];
			r = (sq >> 3) + ray_step[d][1];
			for (; f >= 0 && f < 8 && r >= 0 && r < 8;
			    f += ray_step[d][0], r += ray_step[d][1])
				ray[d][sq] |= 1ULL << (r * 8 + f);
		}
}

/* Sliding attacks from the rays, used only to fill the tables: each
   way stops at its first blocker, which it takes in.  w is 0 for a rook
   (ways 0, 1, 4, 5), 2 for a bishop (2, 3, 6, 7). */
static uint64_t
slide(int sq, uint64_t occ, int w)
{
	uint64_t att = 0, r, bl;
	int k;

	for (k = w; k < w + 2; k++) {
		r = ray[k][sq];
		if ((bl = r & occ) != 0)
			r ^= ray[k][__builtin_ctzll(bl)];
		att |= r;
		r = ray[k + 4][sq];
		if ((bl = r & occ) != 0)
			r ^= ray[k + 4][63 - __builtin_clzll(bl)];
		att |= r;
	}
	return att;
}

/* xorshift64*, the generator for the Zobrist keys. */
static uint64_t
prng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/*
 * "Fancy" magic multipliers, found once by a Stockfish-style random search
 * (xorshift64*, seeds 728, 10316, 55013, 32803, 12281, 15100, 16645, 255 by
 * rank) and fixed here, so start-up only fills the tables (about a
 * millisecond) instead of searching (tens of milliseconds per program).
 */
static const uint64_t rook_magics[64] = {
	0x0a80004000801220ULL, 0x8040004010002008ULL, 0x2080200010008008ULL,
	0x1100100008210004ULL, 0xc200209084020008ULL, 0x2100010004000208ULL,
	0x0400081000822421ULL, 0x0200010422048844ULL, 0x0800800080400024ULL,
	0x0001402000401000ULL, 0x3000801000802001ULL, 0x4400800800100083ULL,
	0x0904802402480080ULL, 0x4040800400020080ULL, 0x0018808042000100ULL,
	0x4040800080004100ULL, 0x0040048001458024ULL, 0x00a0004000205000ULL,
	0x3100808010002000ULL, 0x4825010010000820ULL, 0x5004808008000401ULL,
	0x2024818004000a00ULL, 0x0005808002000100ULL, 0x2100060004806104ULL,
	0x0080400880008421ULL, 0x4062220600410280ULL, 0x010a004a00108022ULL,
	0x0000100080080080ULL, 0x0021000500080010ULL, 0x0044000202001008ULL,
	0x0000100400080102ULL, 0xc020128200040545ULL, 0x0080002000400040ULL,
	0x0000804000802004ULL, 0x0000120022004080ULL, 0x010a386103001001ULL,
	0x9010080080800400ULL, 0x8440020080800400ULL, 0x0004228824001001ULL,
	0x000000490a000084ULL, 0x0080002000504000ULL, 0x200020005000c000ULL,
	0x0012088020420010ULL, 0x0010010080080800ULL, 0x0085001008010004ULL,
	0x0002000204008080ULL, 0x0040413002040008ULL, 0x0000304081020004ULL,
	0x0080204000800080ULL, 0x3008804000290100ULL, 0x1010100080200080ULL,
	0x2008100208028080ULL, 0x5000850800910100ULL, 0x8402019004680200ULL,
	0x0120911028020400ULL, 0x0000008044010200ULL, 0x0020850200244012ULL,
	0x0020850200244012ULL, 0x0000102001040841ULL, 0x140900040a100021ULL,
	0x000200282410a102ULL, 0x000200282410a102ULL, 0x000200282410a102ULL,
	0x4048240043802106ULL,
};
static const uint64_t bishop_magics[64] = {
	0x40106000a1160020ULL, 0x0020010250810120ULL, 0x2010010220280081ULL,
	0x002806004050c040ULL, 0x0002021018000000ULL, 0x2001112010000400ULL,
	0x0881010120218080ULL, 0x1030820110010500ULL, 0x0000120222042400ULL,
	0x2000020404040044ULL, 0x8000480094208000ULL, 0x0003422a02000001ULL,
	0x000a220210100040ULL, 0x8004820202226000ULL, 0x0018234854100800ULL,
	0x0100004042101040ULL, 0x0004001004082820ULL, 0x0010000810010048ULL,
	0x1014004208081300ULL, 0x2080818802044202ULL, 0x0040880c00a00100ULL,
	0x0080400200522010ULL, 0x0001000188180b04ULL, 0x0080249202020204ULL,
	0x1004400004100410ULL, 0x00013100a0022206ULL, 0x2148500001040080ULL,
	0x4241080011004300ULL, 0x4020848004002000ULL, 0x10101380d1004100ULL,
	0x0008004422020284ULL, 0x01010a1041008080ULL, 0x0808080400082121ULL,
	0x0808080400082121ULL, 0x0091128200100c00ULL, 0x0202200802010104ULL,
	0x8c0a020200440085ULL, 0x01a0008080b10040ULL, 0x0889520080122800ULL,
	0x100902022202010aULL, 0x04081a0816002000ULL, 0x0000681208005000ULL,
	0x8170840041008802ULL, 0x0a00004200810805ULL, 0x0830404408210100ULL,
	0x2602208106006102ULL, 0x1048300680802628ULL, 0x2602208106006102ULL,
	0x0602010120110040ULL, 0x0941010801043000ULL, 0x000040440a210428ULL,
	0x0008240020880021ULL, 0x0400002012048200ULL, 0x00ac102001210220ULL,
	0x0220021002009900ULL, 0x84440c080a013080ULL, 0x0001008044200440ULL,
	0x0004c04410841000ULL, 0x2000500104011130ULL, 0x1a0c010011c20229ULL,
	0x0044800112202200ULL, 0x0434804908100424ULL, 0x0300404822c08200ULL,
	0x48081010008a2a80ULL,
};

static void
init_magics(struct pf_magic *magics, const uint64_t *numbers, uint64_t *table,
    int ways)
{
	uint64_t edges, b;
	int sq;
	uint64_t *next = table;

	for (sq = 0; sq < 64; sq++) {
		struct pf_magic *m = &magics[sq];

		edges = ((0xFFULL | 0xFFULL << 56) & ~(0xFFULL << (sq & ~7))) |
		    ((0x0101010101010101ULL | 0x8080808080808080ULL) &
		    ~(0x0101010101010101ULL << (sq & 7)));
		m->mask = slide(sq, 0, ways) & ~edges;
		m->shift = 64 - __builtin_popcountll(m->mask);
		m->magic = numbers[sq];
		m->attacks = next;
		next += 1ULL << (64 - m->shift);
		b = 0;
		do {
			m->attacks[magic_index(m, b)] = slide(sq, b, ways);
			b = (b - m->mask) & m->mask;
		} while (b);
	}
}

__attribute__((constructor)) static void
pf_chess_init(void)
{
	static const int knight_d[8][2] = { {1, 2}, {2, 1}, {2, -1}, {1, -2},
	    {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2} };
	static const int king_d[8][2] = { {1, 0}, {1, 1}, {0, 1}, {-1, 1},
	    {-1, 0}, {-1, -1}, {0, -1}, {1, -1} };
	uint64_t s = 1070372;
	int sq, to, i, f, r;

	init_rays();
	init_magics(rook_magic, rook_magics, rook_table, ROOK_WAYS);
	init_magics(bishop_magic, bishop_magics, bishop_table, BISHOP_WAYS);
	for (sq = 0; sq < 64; sq++) {
		pf_rook_rays[sq] = pf_rook_attacks(sq, 0);
		pf_bishop_rays[sq] = pf_bishop_attacks(sq, 0);
	}
	for (sq = 0; sq < 64; sq++) {
		f = sq & 7;
		r = sq >> 3;
		for (i = 0; i < 8; i++) {
			int nf = f + knight_d[i][0], nr = r + knight_d[i][1];

			if (nf >= 0 && nf < 8 && nr >= 0 && nr < 8)
				pf_knight_att[sq] |= 1ULL << (nr * 8 + nf);
			nf = f + king_d[i][0];
			nr = r + king_d[i][1];
			if (nf >= 0 && nf < 8 && nr >= 0 && nr < 8)
				pf_king_att[sq] |= 1ULL << (nr * 8 + nf);
		}
		if (r < 7) {
			if (f > 0)
				pf_pawn_att[PF_WHITE][sq] |= 1ULL << (sq + 7);
			if (f < 7)
				pf_pawn_att[PF_WHITE][sq] |= 1ULL << (sq + 9);
		}
		if (r > 0) {
			if (f > 0)
				pf_pawn_att[PF_BLACK][sq] |= 1ULL << (sq - 9);
			if (f < 7)
				pf_pawn_att[PF_BLACK][sq] |= 1ULL << (sq - 7);
		}
	}
	for (sq = 0; sq < 64; sq++)
		for (to = 0; to < 64; to++) {
			uint64_t sb = 1ULL << sq, tb = 1ULL << to;

			if (sq == to)
				continue;
			if (slide(sq, 0, ROOK_WAYS) & tb) {
				pf_line[sq][to] = (slide(sq, 0, ROOK_WAYS) &
				    slide(to, 0, ROOK_WAYS)) | sb | tb;
				pf_between[sq][to] = slide(sq, tb, ROOK_WAYS) &
				    slide(to, sb, ROOK_WAYS);
			} else if (slide(sq, 0, BISHOP_WAYS) & tb) {
				pf_line[sq][to] = (slide(sq, 0, BISHOP_WAYS) &
				    slide(to, 0, BISHOP_WAYS)) | sb | tb;
				pf_between[sq][to] = slide(sq, tb,
				    BISHOP_WAYS) & slide(to, sb, BISHOP_WAYS);
			}
		}
	for (i = 0; i < 16; i++)
		for (sq = 0; sq < 64; sq++)
			pf_zobrist_piece[i][sq] = prng_next(&s);
	for (sq = 0; sq < 64; sq++)
		pf_zobrist_castle[sq] = prng_next(&s);
	for (i = 0; i < 8; i++)
		pf_zobrist_ep[i] = prng_next(&s);
	pf_zobrist_side = prng_next(&s);
}

/* ---- moves onto one square ------------------------------------------ */

static inline int	attacked_by(const pf_board *, int, int, uint64_t);

/*
 * pf_is_legal for a pseudo-legal move, with its common answers first: out
 * of check, a plain move of a piece other than the king exposes the king
 * only if the piece stands first on a line from the king, an enemy
 * slider behind it, and leaves that line.
 */
static inline int
legal_pseudo(const pf_board *b, pf_move m, int from, int to)
{
	int ksq = b->king_sq[b->stm];
	uint64_t line, occ, sliders, rays, them;
	int straight, pins;

	/* A king's step: is to attacked with the king lifted off? */
	if (from == ksq && PF_MOVE_KIND(m) == PF_MK_NORMAL)
		return !attacked_by(b, to, !b->stm, (b->by_colour[0] |
		    b->by_colour[1]) ^ (1ULL << from));
	if (b->checkers != 0 || PF_MOVE_KIND(m) != PF_MK_NORMAL ||
	    from == ksq)
		return pf_is_legal(b, m);
	/* Most often no pin is possible: from is not on the king's files
	   and ranks while an enemy rook or queen is, nor on its diagonals
	   while an enemy bishop or queen is.  Told from the king's rays (1
	   KiB in all, in the cache) before the 64 KiB of lines and
	   betweens. */
	rays = pf_rook_rays[ksq];
	them = b->by_colour[!b->stm];
	pins = (rays >> from & 1) && (rays & them & (b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN]));
	rays = pf_bishop_rays[ksq];
	pins |= (rays >> from & 1) && (rays & them & (b->by_type[PF_BISHOP] |
	    b->by_type[PF_QUEEN]));
	if (!pins)
		return 1;
	line = pf_line[ksq][from];
	occ = b->by_colour[0] | b->by_colour[1];
	if (line == 0 || (line >> to & 1) || (pf_between[ksq][from] & occ))
		return 1;
	straight = (ksq & 7) == (from & 7) || (ksq >> 3) == (from >> 3);
	sliders = line & them & (b->by_type[PF_QUEEN] |
	    b->by_type[straight ? PF_ROOK : PF_BISHOP]);
	if (sliders == 0)
		return 1;
	occ ^= 1ULL << from;
	return ((straight ? pf_rook_attacks(ksq, occ) :
	    pf_bishop_attacks(ksq, occ)) & sliders) == 0;
}

int
pf_moves_to(const pf_board *b, int type, int to, pf_move *moves)
{
	int us = b->stm, them = !us, n = 0, from, k;
	uint64_t own = b->by_colour[us], occ = own | b->by_colour[them];
	uint64_t cand, tob, rest;
	pf_move m;

	if (to < 0 || to > 63 || type < PF_PAWN || type > PF_KING)
		return 0;
	tob = 1ULL << to;
	if (own & tob)
		return 0;
	switch (type) {
	case PF_PAWN:
		/* Captures (en passant too) from the squares a pawn of ours
		   attacks to from; pushes from one or two squares behind. */
		cand = 0;
		if ((b->by_colour[them] & tob) || to == b->ep)
			cand = pf_pawn_att[them][to];
		if (!(occ & tob)) {
			int back = us == PF_WHITE ? to - 8 : to + 8;

			if (back >= 0 && back < 64) {
				if (occ >> back & 1)
					cand |= 1ULL << back;
				else if ((to >> 3) == (us == PF_WHITE ? 3 : 4))
					cand |= 1ULL << (us == PF_WHITE ?
					    back - 8 : back + 8);
			}
		}
		break;
	case PF_KNIGHT:
		cand = pf_knight_att[to];
		break;
	case PF_BISHOP:
	case PF_ROOK:
	case PF_QUEEN:
		/* The pieces on a line with to (one or two, most often)
		   with nothing between: no magic lookup, whose tables are
		   too big to stay in the cache of a program that does more
		   than generate moves. */
		cand = own & b->by_type[type] & (type == PF_BISHOP ?
		    pf_bishop_rays[to] : type == PF_ROOK ? pf_rook_rays[to] :
		    pf_bishop_rays[to] | pf_rook_rays[to]);
		for (rest = cand; rest; ) {
			from = pop_lsb(&rest);
			if (pf_between[from][to] & occ)
				cand ^= 1ULL << from;
		}
		break;
	default:
		cand = pf_king_att[to];
		break;
	}
	cand &= own & b->by_type[type];
	while (cand) {
		from = pop_lsb(&cand);
		if (type == PF_PAWN && ((to >> 3) == 7 || (to >> 3) == 0)) {
			/* Legal for one promotion piece, legal for all. */
			if (pf_is_legal(b, PF_MAKE_MOVE(from, to,
			    PF_MK_PROMOTION, 0)))
				for (k = 0; k < 4; k++)
					moves[n++] = PF_MAKE_MOVE(from, to,
					    PF_MK_PROMOTION, k);
			continue;
		}
		m = PF_MAKE_MOVE(from, to, type == PF_PAWN && to == b->ep &&
		    (from & 7) != (to & 7) ? PF_MK_ENPASSANT : PF_MK_NORMAL, 0);
		if (legal_pseudo(b, m, from, to))
			moves[n++] = m;
	}
	return n;
}

/* ---- attacks ------------------------------------------------------- */

uint64_t
pf_attackers_to(const pf_board *b, int sq, uint64_t occ)
{
	uint64_t rq = b->by_type[PF_ROOK] | b->by_type[PF_QUEEN];
	uint64_t bq = b->by_type[PF_BISHOP] | b->by_type[PF_QUEEN];

	return (pf_pawn_att[PF_WHITE][sq] & b->by_type[PF_PAWN] &
	    b->by_colour[PF_BLACK]) |
	    (pf_pawn_att[PF_BLACK][sq] & b->by_type[PF_PAWN] &
	    b->by_colour[PF_WHITE]) |
	    (pf_knight_att[sq] & b->by_type[PF_KNIGHT]) |
	    (pf_king_att[sq] & b->by_type[PF_KING]) |
	    (pf_rook_attacks(sq, occ) & rq) |
	    (pf_bishop_attacks(sq, occ) & bq);
}

/* 1 if colour by attacks sq given occupancy occ. */
static inline int
attacked_by(const pf_board *b, int sq, int by, uint64_t occ)
{
	uint64_t them = b->by_colour[by];

	if (pf_knight_att[sq] & b->by_type[PF_KNIGHT] & them)
		return 1;
	if (pf_pawn_att[!by][sq] & b->by_type[PF_PAWN] & them)
		return 1;
	if (pf_king_att[sq] & b->by_type[PF_KING] & them)
		return 1;
	if (pf_rook_attacks(sq, occ) & (b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN]) & them)
		return 1;
	if (pf_bishop_attacks(sq, occ) & (b->by_type[PF_BISHOP] |
	    b->by_type[PF_QUEEN]) & them)
		return 1;
	return 0;
}

/* The pieces of colour by that attack sq given occupancy occ: the same
   test as attacked_by(), without its early exits. */
static inline uint64_t
attackers_of(const pf_board *b, int sq, int by, uint64_t occ)
{
	uint64_t them = b->by_colour[by];

	return ((pf_knight_att[sq] & b->by_type[PF_KNIGHT]) |
	    (pf_pawn_att[!by][sq] & b->by_type[PF_PAWN]) |
	    (pf_king_att[sq] & b->by_type[PF_KING]) |
	    (pf_rook_attacks(sq, occ) & (b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN])) |
	    (pf_bishop_attacks(sq, occ) & (b->by_type[PF_BISHOP] |
	    b->by_type[PF_QUEEN]))) & them;
}

int
pf_square_attacked(const pf_board *b, int sq, int by)
{
	return attacked_by(b, sq, by, b->by_colour[0] | b->by_colour[1]);
}

int
pf_in_check(const pf_board *b)
{
	return b->checkers != 0;
}

/* The squares a knight, bishop, rook or queen on sq attacks (0 for
   another type). */
static inline uint64_t
piece_attacks(int type, int sq, uint64_t occ)
{
	switch (type) {
	case PF_KNIGHT:
		return pf_knight_att[sq];
	case PF_BISHOP:
		return pf_bishop_attacks(sq, occ);
	case PF_ROOK:
		return pf_rook_attacks(sq, occ);
	case PF_QUEEN:
		return pf_bishop_attacks(sq, occ) | pf_rook_attacks(sq, occ);
	}
	return 0;
}

/* Pieces of colour us pinned to their king. */
static inline uint64_t
pinned_pieces(const pf_board *b, int us)
{
	int ksq = b->king_sq[us];
	uint64_t occ = b->by_colour[0] | b->by_colour[1];
	uint64_t them = b->by_colour[!us], pinned = 0, between;
	uint64_t snipers = ((pf_rook_attacks(ksq, 0) & (b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN])) | (pf_bishop_attacks(ksq, 0) &
	    (b->by_type[PF_BISHOP] | b->by_type[PF_QUEEN]))) & them;

	while (snipers) {
		between = pf_between[ksq][pop_lsb(&snipers)] & occ;
		if (between && !(between & (between - 1)))
			pinned |= between & b->by_colour[us];
	}
	return pinned;
}

/*
 * 1 if the side to move can legally capture en passant on ep with the pawn
 * on from.  The capture removes two pawns from one rank, so it is tried on
 * a scratch occupancy (this catches the rank pin as well).
 */
static int
ep_legal(const pf_board *b, int from, int ep)
{
	int us = b->stm, ksq = b->king_sq[us];
	int capsq = us == PF_WHITE ? ep - 8 : ep + 8;
	uint64_t occ = (b->by_colour[0] | b->by_colour[1]) ^ (1ULL << from) ^
	    (1ULL << capsq) ^ (1ULL << ep);
	uint64_t them = b->by_colour[!us] & ~(1ULL << capsq);

	if (pf_rook_attacks(ksq, occ) & (b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN]) & them)
		return 0;
	if (pf_bishop_attacks(ksq, occ) & (b->by_type[PF_BISHOP] |
	    b->by_type[PF_QUEEN]) & them)
		return 0;
	if ((pf_knight_att[ksq] & b->by_type[PF_KNIGHT] & them) ||
	    (pf_pawn_att[us][ksq] & b->by_type[PF_PAWN] & them))
		return 0;
	return 1;
}

int
pf_ep_capture_exists(const pf_board *b, int ep)
{
	int us = b->stm;
	uint64_t pawns;

	if (ep < 0 || ep >= 64 || (ep >> 3) != (us == PF_WHITE ? 5 : 2))
		return 0;
	pawns = pf_pawn_att[!us][ep] & b->by_type[PF_PAWN] & b->by_colour[us];
	while (pawns)
		if (ep_legal(b, pop_lsb(&pawns), ep))
			return 1;
	return 0;
}

/* ---- move generation ----------------------------------------------- */

/*
 * Popcount for the serialising below: the instruction in the POPCNT build
 * of the generator, a few shifts and a multiply in the baseline build
 * (where __builtin_popcountll is a library call).
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define GEN_POPCOUNT(b, fast) ((fast) ? __builtin_popcountll(b) : \
	pf_popcount_swar(b))
#else
#define GEN_POPCOUNT(b, fast) __builtin_popcountll(b)
#endif

/*
 * The moves from one square to each of targets, in ascending order.
 * Eight are written whether or not there are that many (the list has
 * room: PF_MAX_MOVES is 38 more than the most legal moves known), and
 * the end moves by the count: how many targets a piece has is not
 * predictable, and a loop that stops after each one costs a
 * misprediction per piece.  Rarely more than eight follow in a loop.
 * A lowest bit of 0 is taken as 63 (the garbage past the end).
 */
#define SERIALISE_ONE(m, k, base, t) \
	((m)[k] = (pf_move)((base) | __builtin_ctzll((t) | 1ULL << 63) << 6), \
	(t) &= (t) - 1)

static inline __attribute__((always_inline)) pf_move *
add_moves(pf_move *m, int from, uint64_t targets, int fast, int batch)
{
	pf_move *end;

	if (!batch) {
		while (targets)
			*m++ = PF_MAKE_MOVE(from, pop_lsb(&targets),
			    PF_MK_NORMAL, 0);
		return m;
	}
	end = m + GEN_POPCOUNT(targets, fast);

	SERIALISE_ONE(m, 0, from, targets);
	SERIALISE_ONE(m, 1, from, targets);
	SERIALISE_ONE(m, 2, from, targets);
	SERIALISE_ONE(m, 3, from, targets);
	SERIALISE_ONE(m, 4, from, targets);
	SERIALISE_ONE(m, 5, from, targets);
	SERIALISE_ONE(m, 6, from, targets);
	SERIALISE_ONE(m, 7, from, targets);
	m += 8;
	while (targets)
		*m++ = PF_MAKE_MOVE(from, pop_lsb(&targets), PF_MK_NORMAL, 0);
	return end;
}

static inline pf_move *
add_promotions(pf_move *m, int from, int to)
{
	*m++ = PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 3);
	*m++ = PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 0);
	*m++ = PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 2);
	*m++ = PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, 1);
	return m;
}

/*
 * Pawn moves set-wise: targets are destinations, each from to - delta.
 * The first `ahead` are written unconditionally (see add_moves).
 */
static inline __attribute__((always_inline)) pf_move *
add_pawn_targets(pf_move *m, uint64_t targets, int delta, uint64_t promo,
    int ahead, int fast, int batch)
{
	uint64_t p = targets & promo;
	pf_move *end;
	int k;

	targets &= ~promo;
	if (!batch)
		ahead = 0;
	end = batch ? m + GEN_POPCOUNT(targets, fast) : NULL;
	for (k = 0; k < ahead; k++) {
		int to = __builtin_ctzll(targets | 1ULL << 63);

		m[k] = (pf_move)((to - delta) | to << 6);
		targets &= targets - 1;
	}
	m += ahead;
	while (targets) {
		int to = pop_lsb(&targets);

		*m++ = PF_MAKE_MOVE(to - delta, to, PF_MK_NORMAL, 0);
	}
	if (batch)
		m = end;
	while (p) {
		int to = pop_lsb(&p);

		m = add_promotions(m, to - delta, to);
	}
	return m;
}

/*
 * Castling for colour us with the rook on rsq.  The king goes to the g or
 * c file, the rook to the f or d file; every square either crosses must be
 * empty but for the two castling pieces, and no square the king stands on
 * or crosses may be attacked.  The attacks are judged with the castling
 * rook lifted, which also rejects a Chess960 castle whose rook was
 * shielding the king's destination (Stockfish's "rook is pinned" rule).
 */
static int
castle_legal(const pf_board *b, int us, int rsq, uint64_t occ)
{
	int ksq = b->king_sq[us], base = us == PF_WHITE ? 0 : 56;
	int kto = base + (rsq > ksq ? 6 : 2), rto = base + (rsq > ksq ? 5 : 3);
	uint64_t pieces = (1ULL << ksq) | (1ULL << rsq);
	uint64_t path = (pf_between[ksq][kto] | pf_between[rsq][rto] |
	    (1ULL << kto) | (1ULL << rto)) & ~pieces;
	uint64_t kpath = pf_between[ksq][kto] | (1ULL << kto);

	if (path & occ)
		return 0;
	occ &= ~pieces;
	while (kpath)
		if (attacked_by(b, pop_lsb(&kpath), !us, occ))
			return 0;
	return 1;
}

/*
 * The generator, in builds for each CPU (fast: the POPCNT instruction) and
 * two ways of writing the moves (batch: eight at a time and branch-free
 * king steps, for pf_gen_legal, which filters call on unrelated boards
 * whose move counts the branch predictor cannot learn; not batch: one
 * loop iteration per move, for perft, whose positions repeat their shapes
 * and where the extra writes would cost more than they save).  The moves
 * and their order are the same in every build.
 */
static inline __attribute__((always_inline)) int
gen_legal_impl(const pf_board *b, pf_move *moves, int fast, int batch)
{
	int us = b->stm, them = !us, ksq = b->king_sq[us], from;
	uint64_t own = b->by_colour[us], enemy = b->by_colour[them];
	uint64_t occ = own | enemy, empty = ~occ, target, pinned, bb, t;
	uint64_t kocc = occ ^ (1ULL << ksq), pawns, single, dbl, left, right;
	uint64_t rank3, promo, diag, orth;
	pf_move *m = moves;

	/* King steps (batch: branch-free, whether a square is attacked,
	   and by what, is not predictable). */
	t = pf_king_att[ksq] & ~own;
	while (t) {
		int to = pop_lsb(&t);

		if (batch) {
			*m = PF_MAKE_MOVE(ksq, to, PF_MK_NORMAL, 0);
			m += !attackers_of(b, to, them, kocc);
		} else if (!attacked_by(b, to, them, kocc))
			*m++ = PF_MAKE_MOVE(ksq, to, PF_MK_NORMAL, 0);
	}
	if (b->checkers) {
		if (b->checkers & (b->checkers - 1))
			return (int)(m - moves);
		target = pf_between[ksq][__builtin_ctzll(b->checkers)] |
		    b->checkers;
	} else
		target = ~own;
	pinned = pinned_pieces(b, us);

	/* Knights: a pinned knight can never move. */
	bb = b->by_type[PF_KNIGHT] & own & ~pinned;
	while (bb) {
		from = pop_lsb(&bb);
		m = add_moves(m, from, pf_knight_att[from] & target, fast, batch);
	}
	diag = (b->by_type[PF_BISHOP] | b->by_type[PF_QUEEN]) & own;
	orth = (b->by_type[PF_ROOK] | b->by_type[PF_QUEEN]) & own;
	bb = diag & ~pinned;
	while (bb) {
		from = pop_lsb(&bb);
		m = add_moves(m, from, pf_bishop_attacks(from, occ) & target,
		    fast, batch);
	}
	bb = orth & ~pinned;
	while (bb) {
		from = pop_lsb(&bb);
		m = add_moves(m, from, pf_rook_attacks(from, occ) & target,
		    fast, batch);
	}
	if (pinned && !b->checkers) {
		bb = diag & pinned;
		while (bb) {
			from = pop_lsb(&bb);
			m = add_moves(m, from, pf_bishop_attacks(from, occ) &
			    target & pf_line[ksq][from], fast, batch);
		}
		bb = orth & pinned;
		while (bb) {
			from = pop_lsb(&bb);
			m = add_moves(m, from, pf_rook_attacks(from, occ) &
			    target & pf_line[ksq][from], fast, batch);
		}
	}

	/* Pawns, set-wise for the unpinned ones. */
	pawns = b->by_type[PF_PAWN] & own;
	if (us == PF_WHITE) {
		rank3 = 0xFFULL << 16;
		promo = 0xFFULL << 56;
		bb = pawns & ~pinned;
		single = (bb << 8) & empty;
		dbl = ((single & rank3) << 8) & empty & target;
		left = ((bb & ~0x0101010101010101ULL) << 7) & enemy & target;
		right = ((bb & ~0x8080808080808080ULL) << 9) & enemy & target;
		m = add_pawn_targets(m, single & target, 8, promo, 8,
		    fast, batch);
		m = add_pawn_targets(m, dbl, 16, 0, 2, fast, batch);
		m = add_pawn_targets(m, left, 7, promo, 2, fast, batch);
		m = add_pawn_targets(m, right, 9, promo, 2, fast, batch);
	} else {
		rank3 = 0xFFULL << 40;
		promo = 0xFFULL;
		bb = pawns & ~pinned;
		single = (bb >> 8) & empty;
		dbl = ((single & rank3) >> 8) & empty & target;
		left = ((bb & ~0x0101010101010101ULL) >> 9) & enemy & target;
		right = ((bb & ~0x8080808080808080ULL) >> 7) & enemy & target;
		m = add_pawn_targets(m, single & target, -8, promo, 8,
		    fast, batch);
		m = add_pawn_targets(m, dbl, -16, 0, 2, fast, batch);
		m = add_pawn_targets(m, left, -9, promo, 2, fast, batch);
		m = add_pawn_targets(m, right, -7, promo, 2, fast, batch);
	}
	if (pinned & pawns && !b->checkers) {
		int up = us == PF_WHITE ? 8 : -8;

		bb = pinned & pawns;
		while (bb) {
			uint64_t line;
			int to;

			from = pop_lsb(&bb);
			line = pf_line[ksq][from];
			t = pf_pawn_att[us][from] & enemy & line;
			to = from + up;
			if ((empty & line) >> to & 1) {
				t |= 1ULL << to;
				if ((from >> 3) == (us == PF_WHITE ? 1 : 6) &&
				    (empty >> (to + up) & 1))
					t |= 1ULL << (to + up);
			}
			while (t) {
				to = pop_lsb(&t);
				if (promo >> to & 1)
					m = add_promotions(m, from, to);
				else
					*m++ = PF_MAKE_MOVE(from, to,
					    PF_MK_NORMAL, 0);
			}
		}
	}
	if (b->ep != PF_SQ_NONE) {
		bb = pf_pawn_att[them][b->ep] & pawns;
		while (bb) {
			from = pop_lsb(&bb);
			if (ep_legal(b, from, b->ep))
				*m++ = PF_MAKE_MOVE(from, b->ep,
				    PF_MK_ENPASSANT, 0);
		}
	}

	/* Castling. */
	if (!b->checkers && (bb = b->castle_rooks & own)) {
		while (bb) {
			int rsq = pop_lsb(&bb);

			if (castle_legal(b, us, rsq, occ))
				*m++ = PF_MAKE_MOVE(ksq, rsq, PF_MK_CASTLE, 0);
		}
	}
	return (int)(m - moves);
}

static int
gen_generic(const pf_board *b, pf_move *moves)
{
	return gen_legal_impl(b, moves, 0, 1);
}

static int
gen_perft_generic(const pf_board *b, pf_move *moves)
{
	return gen_legal_impl(b, moves, 0, 0);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) static int
gen_popcnt(const pf_board *b, pf_move *moves)
{
	return gen_legal_impl(b, moves, 1, 1);
}

__attribute__((target("popcnt"))) static int
gen_perft_popcnt(const pf_board *b, pf_move *moves)
{
	return gen_legal_impl(b, moves, 1, 0);
}
#endif

/* Chosen at start-up (pf_chess_pick_popcount). */
static int (*gen_fn)(const pf_board *, pf_move *) = gen_generic;

int
pf_gen_legal(const pf_board *b, pf_move *moves)
{
	return gen_fn(b, moves);
}

/*
 * 1 if m is in pf_gen_legal's list, decided for m alone: the rules the
 * generator applies to the moving piece (pseudo-legal targets, the check
 * mask, the pin line, the king's safety, the en passant and castling
 * tests), without generating the other moves.  A move code the generator
 * never writes (promotion bits on a move that is not a promotion, a
 * promotion that does not reach the last rank) is not legal.
 */
int
pf_is_legal(const pf_board *b, pf_move m)
{
	int us = b->stm, them = !us, ksq = b->king_sq[us];
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m), kind = PF_MOVE_KIND(m);
	uint64_t own = b->by_colour[us], enemy = b->by_colour[them];
	uint64_t occ = own | enemy, fromb = 1ULL << from, tob = 1ULL << to;
	uint64_t target, targets, promo;
	int type;

	if (m == PF_MOVE_NONE || !(own & fromb))
		return 0;
	if (kind != PF_MK_PROMOTION && (m >> 14) != 0)
		return 0;
	type = PF_PIECE_TYPE(b->squares[from]);
	if (kind == PF_MK_CASTLE)
		return from == ksq && (b->castle_rooks & own & tob) &&
		    !b->checkers && castle_legal(b, us, to, occ);
	if (kind == PF_MK_ENPASSANT)
		return type == PF_PAWN && b->ep != PF_SQ_NONE && to == b->ep &&
		    (pf_pawn_att[them][to] & fromb) && ep_legal(b, from, to);
	if (type == PF_KING)
		return kind == PF_MK_NORMAL && from == ksq &&
		    (pf_king_att[from] & ~own & tob) &&
		    !attacked_by(b, to, them, occ ^ fromb);

	/* Any other piece: only a single check can be answered, by a
	   capture of the checker or a block. */
	if (b->checkers) {
		if (b->checkers & (b->checkers - 1))
			return 0;
		target = pf_between[ksq][__builtin_ctzll(b->checkers)] |
		    b->checkers;
	} else
		target = ~own;
	/* Only a piece on a line through the king can be pinned. */
	if (pf_line[ksq][from] && (pinned_pieces(b, us) & fromb)) {
		if (b->checkers)
			return 0;
		target &= pf_line[ksq][from];
	}
	switch (type) {
	case PF_PAWN: {
		int up = us == PF_WHITE ? 8 : -8;
		uint64_t start = us == PF_WHITE ? 0xFFULL << 8 : 0xFFULL << 48;

		promo = us == PF_WHITE ? 0xFFULL << 56 : 0xFFULL;
		targets = pf_pawn_att[us][from] & enemy;
		if (!(occ >> (from + up) & 1)) {
			targets |= 1ULL << (from + up);
			if ((start & fromb) && !(occ >> (from + 2 * up) & 1))
				targets |= 1ULL << (from + 2 * up);
		}
		if (!(targets & target & tob))
			return 0;
		return (promo & tob) ? kind == PF_MK_PROMOTION :
		    kind == PF_MK_NORMAL;
	}
	default:
		targets = piece_attacks(type, from, occ);
		break;
	}
	return kind == PF_MK_NORMAL && (targets & target & tob) != 0;
}

/* ---- make / unmake ------------------------------------------------- */

static inline void
put_piece(pf_board *b, int sq, uint8_t pc)
{
	uint64_t bit = 1ULL << sq;

	b->squares[sq] = pc;
	b->by_type[PF_PIECE_TYPE(pc)] |= bit;
	b->by_colour[PF_PIECE_COLOUR(pc)] |= bit;
}

static inline void
remove_piece(pf_board *b, int sq, uint8_t pc)
{
	uint64_t bit = 1ULL << sq;

	b->squares[sq] = PF_NO_PIECE;
	b->by_type[PF_PIECE_TYPE(pc)] ^= bit;
	b->by_colour[PF_PIECE_COLOUR(pc)] ^= bit;
}

static inline void
move_piece(pf_board *b, int from, int to, uint8_t pc)
{
	uint64_t bits = (1ULL << from) | (1ULL << to);

	b->squares[from] = PF_NO_PIECE;
	b->squares[to] = pc;
	b->by_type[PF_PIECE_TYPE(pc)] ^= bits;
	b->by_colour[PF_PIECE_COLOUR(pc)] ^= bits;
}

/*
 * The pieces checking the side to move after the other side's plain move
 * of a piece of type from -> to.  The position before was legal (the
 * mover's opponent not in check), so a check can come only from the
 * piece moved or from a slider behind from, on from's line to the king:
 * the full attack test (two magic lookups, often missing the cache) is
 * needed only when that line is open.
 */
static inline uint64_t
checkers_after(const pf_board *b, int type, int from, int to)
{
	int us = !b->stm, ksq = b->king_sq[b->stm];
	uint64_t occ = b->by_colour[0] | b->by_colour[1], tob = 1ULL << to;
	uint64_t chk = 0, ours = b->by_colour[us], line;
	int straight;

	switch (type) {
	case PF_PAWN:
		chk = pf_pawn_att[!us][ksq] & tob;
		break;
	case PF_KNIGHT:
		chk = pf_knight_att[ksq] & tob;
		break;
	case PF_KING:
		break;
	default:
		if (((type != PF_BISHOP && (pf_rook_rays[ksq] >> to & 1)) ||
		    (type != PF_ROOK && (pf_bishop_rays[ksq] >> to & 1))) &&
		    !(pf_between[ksq][to] & occ))
			chk = tob;
		break;
	}
	/* Discovered: from was on an open line to the king, to is not. */
	line = pf_line[ksq][from];
	if (line && !(line >> to & 1) && !(pf_between[ksq][from] & occ)) {
		straight = pf_rook_rays[ksq] >> from & 1;
		chk |= (straight ? pf_rook_attacks(ksq, occ) &
		    (b->by_type[PF_ROOK] | b->by_type[PF_QUEEN]) :
		    pf_bishop_attacks(ksq, occ) &
		    (b->by_type[PF_BISHOP] | b->by_type[PF_QUEEN])) & ours;
	}
	return chk;
}

void
pf_make_move(pf_board *b, pf_move m, pf_undo *u)
{
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m);
	int kind = PF_MOVE_KIND(m), us = b->stm, them = !us;
	uint8_t pc = b->squares[from], cap = PF_NO_PIECE;
	uint64_t key = b->key, changed;

	u->castle_rooks = b->castle_rooks;
	u->key = b->key;
	u->checkers = b->checkers;
	u->ep = b->ep;
	u->rule50 = b->rule50;
	u->fullmove = b->fullmove;

	if (b->ep != PF_SQ_NONE) {
		key ^= pf_zobrist_ep[b->ep & 7];
		b->ep = PF_SQ_NONE;
	}
	if (b->rule50 < 255)
		b->rule50++;

	if (kind == PF_MK_CASTLE) {
		int base = us == PF_WHITE ? 0 : 56;
		int kto = base + (to > from ? 6 : 2);
		int rto = base + (to > from ? 5 : 3);
		uint8_t rook = b->squares[to];

		remove_piece(b, from, pc);
		remove_piece(b, to, rook);
		put_piece(b, kto, pc);
		put_piece(b, rto, rook);
		key ^= pf_zobrist_piece[pc][from] ^ pf_zobrist_piece[pc][kto] ^
		    pf_zobrist_piece[rook][to] ^ pf_zobrist_piece[rook][rto];
		b->king_sq[us] = (uint8_t)kto;
	} else {
		if (kind == PF_MK_ENPASSANT) {
			int capsq = us == PF_WHITE ? to - 8 : to + 8;

			cap = b->squares[capsq];
			remove_piece(b, capsq, cap);
			key ^= pf_zobrist_piece[cap][capsq];
		} else if ((cap = b->squares[to]) != PF_NO_PIECE) {
			remove_piece(b, to, cap);
			key ^= pf_zobrist_piece[cap][to];
		}
		if (cap != PF_NO_PIECE)
			b->rule50 = 0;
		if (kind == PF_MK_PROMOTION) {
			uint8_t np = PF_PIECE(us, PF_MOVE_PROMO(m));

			remove_piece(b, from, pc);
			put_piece(b, to, np);
			key ^= pf_zobrist_piece[pc][from] ^
			    pf_zobrist_piece[np][to];
		} else {
			move_piece(b, from, to, pc);
			key ^= pf_zobrist_piece[pc][from] ^
			    pf_zobrist_piece[pc][to];
		}
		if (PF_PIECE_TYPE(pc) == PF_PAWN)
			b->rule50 = 0;
		else if (PF_PIECE_TYPE(pc) == PF_KING)
			b->king_sq[us] = (uint8_t)to;
	}
	u->captured = cap;

	if (b->castle_rooks) {
		changed = b->castle_rooks & ((1ULL << from) | (1ULL << to));
		if (PF_PIECE_TYPE(pc) == PF_KING)
			changed |= b->castle_rooks &
			    (us == PF_WHITE ? 0xFFULL : 0xFFULL << 56);
		if (changed) {
			b->castle_rooks ^= changed;
			while (changed)
				key ^= pf_zobrist_castle[pop_lsb(&changed)];
		}
	}

	b->stm = (uint8_t)them;
	key ^= pf_zobrist_side;
	if (us == PF_BLACK && b->fullmove < 65535)
		b->fullmove++;
	b->checkers = kind == PF_MK_NORMAL ?
	    checkers_after(b, PF_PIECE_TYPE(pc), from, to) :
	    pf_attackers_to(b, b->king_sq[them], b->by_colour[0] |
	    b->by_colour[1]) & b->by_colour[us];

	/* A double push sets ep only if the reply can really capture. */
	if (PF_PIECE_TYPE(pc) == PF_PAWN && (from ^ to) == 16) {
		int ep = (from + to) / 2;

		if ((pf_pawn_att[us][ep] & b->by_type[PF_PAWN] &
		    b->by_colour[them]) && pf_ep_capture_exists(b, ep)) {
			b->ep = (uint8_t)ep;
			key ^= pf_zobrist_ep[ep & 7];
		}
	}
	b->key = key;
}

void
pf_unmake_move(pf_board *b, pf_move m, const pf_undo *u)
{
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m);
	int kind = PF_MOVE_KIND(m), us = !b->stm;

	b->stm = (uint8_t)us;
	if (kind == PF_MK_CASTLE) {
		int base = us == PF_WHITE ? 0 : 56;
		int kto = base + (to > from ? 6 : 2);
		int rto = base + (to > from ? 5 : 3);
		uint8_t king = b->squares[kto], rook = b->squares[rto];

		remove_piece(b, kto, king);
		remove_piece(b, rto, rook);
		put_piece(b, from, king);
		put_piece(b, to, rook);
		b->king_sq[us] = (uint8_t)from;
	} else {
		uint8_t pc = b->squares[to];

		if (kind == PF_MK_PROMOTION) {
			remove_piece(b, to, pc);
			put_piece(b, from, PF_PIECE(us, PF_PAWN));
		} else
			move_piece(b, to, from, pc);
		if (PF_PIECE_TYPE(pc) == PF_KING)
			b->king_sq[us] = (uint8_t)from;
		if (u->captured != PF_NO_PIECE)
			put_piece(b, kind == PF_MK_ENPASSANT ?
			    (us == PF_WHITE ? to - 8 : to + 8) : to,
			    u->captured);
	}
	b->castle_rooks = u->castle_rooks;
	b->key = u->key;
	b->checkers = u->checkers;
	b->ep = u->ep;
	b->rule50 = u->rule50;
	b->fullmove = u->fullmove;
}

/* ---- keys, refresh, perft ------------------------------------------ */

uint64_t
pf_board_compute_key(const pf_board *b)
{
	uint64_t key = 0, bb;
	int sq;

	for (sq = 0; sq < 64; sq++)
		if (b->squares[sq] != PF_NO_PIECE)
			key ^= pf_zobrist_piece[b->squares[sq] & 15][sq];
	bb = b->castle_rooks;
	while (bb)
		key ^= pf_zobrist_castle[pop_lsb(&bb)];
	if (b->ep != PF_SQ_NONE)
		key ^= pf_zobrist_ep[b->ep & 7];
	if (b->stm == PF_BLACK)
		key ^= pf_zobrist_side;
	return key;
}

uint64_t
pf_board_compute_key_consistent(const pf_board *b)
{
	uint64_t key = 0, bb = b->by_colour[0] | b->by_colour[1];
	int sq;

	while (bb) {
		sq = pop_lsb(&bb);
		key ^= pf_zobrist_piece[b->squares[sq] & 15][sq];
	}
	bb = b->castle_rooks;
	while (bb)
		key ^= pf_zobrist_castle[pop_lsb(&bb)];
	if (b->ep != PF_SQ_NONE)
		key ^= pf_zobrist_ep[b->ep & 7];
	if (b->stm == PF_BLACK)
		key ^= pf_zobrist_side;
	return key;
}

void
pf_board_refresh(pf_board *b)
{
	int c;

	for (c = 0; c < 2; c++) {
		uint64_t k = b->by_type[PF_KING] & b->by_colour[c];

		b->king_sq[c] = k ? (uint8_t)__builtin_ctzll(k) : PF_SQ_NONE;
	}
	b->checkers = 0;
	if (b->king_sq[b->stm] != PF_SQ_NONE)
		b->checkers = pf_attackers_to(b, b->king_sq[b->stm],
		    b->by_colour[0] | b->by_colour[1]) &
		    b->by_colour[!b->stm];
	if (b->ep != PF_SQ_NONE && (b->king_sq[b->stm] == PF_SQ_NONE ||
	    !pf_ep_capture_exists(b, b->ep)))
		b->ep = PF_SQ_NONE;
	b->key = pf_board_compute_key(b);
}

void
pf_board_clear(pf_board *b)
{
	memset(b, 0, sizeof(*b));
	memset(b->squares, PF_NO_PIECE, sizeof(b->squares));
	b->king_sq[0] = b->king_sq[1] = PF_SQ_NONE;
	b->ep = PF_SQ_NONE;
	b->fullmove = 1;
}

void
pf_board_put_piece(pf_board *b, int sq, uint8_t pc)
{
	if (b->squares[sq] != PF_NO_PIECE)
		remove_piece(b, sq, b->squares[sq]);
	if (pc != PF_NO_PIECE)
		put_piece(b, sq, pc);
}

void
pf_board_startpos(pf_board *b)
{
	static const uint8_t back[8] = { PF_ROOK, PF_KNIGHT, PF_BISHOP,
	    PF_QUEEN, PF_KING, PF_BISHOP, PF_KNIGHT, PF_ROOK };
	int f;

	pf_board_clear(b);
	for (f = 0; f < 8; f++) {
		put_piece(b, f, PF_PIECE(PF_WHITE, back[f]));
		put_piece(b, 8 + f, PF_PIECE(PF_WHITE, PF_PAWN));
		put_piece(b, 48 + f, PF_PIECE(PF_BLACK, PF_PAWN));
		put_piece(b, 56 + f, PF_PIECE(PF_BLACK, back[f]));
	}
	b->castle_rooks = 0x81ULL | 0x81ULL << 56;
	pf_board_refresh(b);
}

/*
 * Counting the legal moves without writing them: the same sets as
 * pf_gen_legal, popcounted.  Perft counts the leaves this way ("bulk
 * counting", as Stockfish's perft does by generating the legal moves of
 * the last ply without making them).
 */
static inline __attribute__((always_inline)) int
count_legal_impl(const pf_board *b)
{
	int us = b->stm, them = !us, ksq = b->king_sq[us], from, n = 0;
	uint64_t own = b->by_colour[us], enemy = b->by_colour[them];
	uint64_t occ = own | enemy, empty = ~occ, target, pinned, bb, t;
	uint64_t kocc = occ ^ (1ULL << ksq), pawns, single, dbl, left, right;
	uint64_t rank3, promo, diag, orth;

	t = pf_king_att[ksq] & ~own;
	while (t)
		n += !attacked_by(b, pop_lsb(&t), them, kocc);
	if (b->checkers) {
		if (b->checkers & (b->checkers - 1))
			return n;
		target = pf_between[ksq][__builtin_ctzll(b->checkers)] |
		    b->checkers;
	} else
		target = ~own;
	pinned = pinned_pieces(b, us);

	bb = b->by_type[PF_KNIGHT] & own & ~pinned;
	while (bb)
		n += __builtin_popcountll(pf_knight_att[pop_lsb(&bb)] & target);
	diag = (b->by_type[PF_BISHOP] | b->by_type[PF_QUEEN]) & own;
	orth = (b->by_type[PF_ROOK] | b->by_type[PF_QUEEN]) & own;
	bb = diag & ~pinned;
	while (bb)
		n += __builtin_popcountll(pf_bishop_attacks(pop_lsb(&bb), occ) &
		    target);
	bb = orth & ~pinned;
	while (bb)
		n += __builtin_popcountll(pf_rook_attacks(pop_lsb(&bb), occ) &
		    target);
	if (pinned && !b->checkers) {
		bb = diag & pinned;
		while (bb) {
			from = pop_lsb(&bb);
			n += __builtin_popcountll(pf_bishop_attacks(from, occ) &
			    target & pf_line[ksq][from]);
		}
		bb = orth & pinned;
		while (bb) {
			from = pop_lsb(&bb);
			n += __builtin_popcountll(pf_rook_attacks(from, occ) &
			    target & pf_line[ksq][from]);
		}
	}

	pawns = b->by_type[PF_PAWN] & own;
	bb = pawns & ~pinned;
	if (us == PF_WHITE) {
		rank3 = 0xFFULL << 16;
		promo = 0xFFULL << 56;
		single = (bb << 8) & empty;
		dbl = ((single & rank3) << 8) & empty & target;
		left = ((bb & ~0x0101010101010101ULL) << 7) & enemy & target;
		right = ((bb & ~0x8080808080808080ULL) << 9) & enemy & target;
	} else {
		rank3 = 0xFFULL << 40;
		promo = 0xFFULL;
		single = (bb >> 8) & empty;
		dbl = ((single & rank3) >> 8) & empty & target;
		left = ((bb & ~0x0101010101010101ULL) >> 9) & enemy & target;
		right = ((bb & ~0x8080808080808080ULL) >> 7) & enemy & target;
	}
	single &= target;
	n += __builtin_popcountll(single) + __builtin_popcountll(dbl) +
	    __builtin_popcountll(left) + __builtin_popcountll(right);
	if ((single | left | right) & promo)
		n += 3 * (__builtin_popcountll(single & promo) +
		    __builtin_popcountll(left & promo) +
		    __builtin_popcountll(right & promo));
	if (pinned & pawns && !b->checkers) {
		int up = us == PF_WHITE ? 8 : -8;

		bb = pinned & pawns;
		while (bb) {
			uint64_t line;
			int to;

			from = pop_lsb(&bb);
			line = pf_line[ksq][from];
			t = pf_pawn_att[us][from] & enemy & line;
			to = from + up;
			if ((empty & line) >> to & 1) {
				t |= 1ULL << to;
				if ((from >> 3) == (us == PF_WHITE ? 1 : 6) &&
				    (empty >> (to + up) & 1))
					t |= 1ULL << (to + up);
			}
			n += __builtin_popcountll(t) +
			    3 * __builtin_popcountll(t & promo);
		}
	}
	if (b->ep != PF_SQ_NONE) {
		bb = pf_pawn_att[them][b->ep] & pawns;
		while (bb)
			n += ep_legal(b, pop_lsb(&bb), b->ep);
	}
	if (!b->checkers && (bb = b->castle_rooks & own))
		while (bb)
			n += castle_legal(b, us, pop_lsb(&bb), occ);
	return n;
}

static inline __attribute__((always_inline)) uint64_t
perft_impl(pf_board *b, int depth, int (*count)(const pf_board *),
    uint64_t (*recurse)(pf_board *, int),
    int (*gen)(const pf_board *, pf_move *))
{
	pf_move moves[PF_MAX_MOVES];
	pf_undo u;
	uint64_t nodes = 0;
	int i, n;

	if (depth == 1)
		return (uint64_t)count(b);
	n = gen(b, moves);
	if (depth == 2) {
		for (i = 0; i < n; i++) {
			pf_make_move(b, moves[i], &u);
			nodes += (uint64_t)count(b);
			pf_unmake_move(b, moves[i], &u);
		}
		return nodes;
	}
	for (i = 0; i < n; i++) {
		pf_make_move(b, moves[i], &u);
		nodes += recurse(b, depth - 1);
		pf_unmake_move(b, moves[i], &u);
	}
	return nodes;
}

/*
 * Two builds of the counting code: one for CPUs with the POPCNT
 * instruction (chosen at start-up), one for any x86-64 or other CPU.
 * The Makefile builds for the baseline, where a popcount is a library
 * call.
 */
static int
count_generic(const pf_board *b)
{
	return count_legal_impl(b);
}

static uint64_t
perft_generic(pf_board *b, int depth)
{
	return perft_impl(b, depth, count_generic, perft_generic,
	    gen_perft_generic);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) static int
count_popcnt(const pf_board *b)
{
	return count_legal_impl(b);
}

__attribute__((target("popcnt"))) static uint64_t
perft_popcnt(pf_board *b, int depth)
{
	return perft_impl(b, depth, count_popcnt, perft_popcnt,
	    gen_perft_popcnt);
}
#endif

static int (*count_fn)(const pf_board *) = count_generic;
static uint64_t (*perft_fn)(pf_board *, int) = perft_generic;

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * PDEP and PEXT take 3 cycles on Intel's CPUs from Haswell and on AMD's
 * from Zen 3 (family 19h), but are microcoded, hundreds of cycles, on
 * AMD's earlier ones and Hygon's: there the BMI2 build would be slower
 * than the one it replaces.
 */
static int
pdep_fast(void)
{
	unsigned a, b, c, d, family;
	char vendor[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return 0;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (strcmp(vendor, "AuthenticAMD") != 0 &&
	    strcmp(vendor, "HygonGenuine") != 0)
		return 1;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	return family >= 0x19;
}
#endif

/*
 * Which builds of the chess core this CPU takes, decided once (asked first
 * from a constructor: no race): CPU_POPCNT the POPCNT ones, CPU_BMI2
 * pf_board_pack's BMI2 one (fast PDEP and PEXT), CPU_VBMI2 its AVX-512
 * VBMI2 one; none, the portable ones.  POSFLOW_NO_POPCNT in the
 * environment takes none, POSFLOW_NO_BMI2 and POSFLOW_NO_AVX512 leave out
 * their one (the tests run each).
 */
#define CPU_POPCNT	1
#define CPU_BMI2	2
#define CPU_VBMI2	4

static int
cpu_level(void)
{
	static int level = -1;

	if (level < 0) {
		level = 0;
#if defined(__x86_64__) && defined(__GNUC__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("popcnt") &&
		    getenv("POSFLOW_NO_POPCNT") == NULL) {
			level = CPU_POPCNT;
			if (__builtin_cpu_supports("bmi2") && pdep_fast() &&
			    getenv("POSFLOW_NO_BMI2") == NULL)
				level |= CPU_BMI2;
			if (__builtin_cpu_supports("avx512f") &&
			    __builtin_cpu_supports("avx512bw") &&
			    __builtin_cpu_supports("avx512vl") &&
			    __builtin_cpu_supports("avx512vbmi2") &&
			    getenv("POSFLOW_NO_AVX512") == NULL)
				level |= CPU_VBMI2;
		}
#endif
	}
	return level;
}

int
pf_chess_popcnt(void)
{
	return (cpu_level() & CPU_POPCNT) != 0;
}

int
pf_chess_bmi2(void)
{
	return (cpu_level() & CPU_BMI2) != 0;
}

int
pf_chess_vbmi2(void)
{
	return (cpu_level() & CPU_VBMI2) != 0;
}

__attribute__((constructor)) static void
pf_chess_pick_popcount(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (pf_chess_popcnt()) {
		count_fn = count_popcnt;
		perft_fn = perft_popcnt;
		gen_fn = gen_popcnt;
	}
#endif
}

uint64_t
pf_perft(pf_board *b, int depth)
{
	if (depth <= 0)
		return 1;
	return perft_fn(b, depth);
}

int
pf_count_legal(const pf_board *b)
{
	return count_fn(b);
}

/* ---- legal moves as sets ------------------------------------------- */

/* Promotions of from to every square of t (queen, rook, bishop, knight
   order does not matter here). */
static inline pf_move *
sets_promotions(pf_move *m, int from, uint64_t t)
{
	int to, p;

	while (t) {
		to = pop_lsb(&t);
		for (p = 0; p < 4; p++)
			*m++ = PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, p);
	}
	return m;
}

/* The rules of count_legal_impl(), with the sets kept; us is a constant
   in each build (pf_legal_sets_fill()), so the colour's shifts and masks
   are folded. */
static inline __attribute__((always_inline)) int
legal_sets_impl(const pf_board *b, pf_legal_sets *s, const int us)
{
	int them = !us, ksq = b->king_sq[us], from, n;
	uint64_t own = b->by_colour[us], enemy = b->by_colour[them];
	uint64_t occ = own | enemy, empty = ~occ, target, pinned, bb, t;
	uint64_t kocc = occ ^ (1ULL << ksq), pawns, rank4, promo, diag, orth;
	uint64_t kt = 0, fb, one, two, pm;
	pf_move *m = s->special;

	/* Every square of the side to move gets its set (only those are
	   read: pf_legal_sets_empty), and the count adds up as they do. */
	s->own = own;
	t = pf_king_att[ksq] & ~own;
	while (t) {
		int to = pop_lsb(&t);

		kt |= (uint64_t)!attackers_of(b, to, them, kocc) << to;
	}
	s->from[ksq] = kt;
	n = __builtin_popcountll(kt);
	if (b->checkers) {
		if (b->checkers & (b->checkers - 1)) {
			/* Double check: only the king moves. */
			bb = own & ~(1ULL << ksq);
			while (bb)
				s->from[pop_lsb(&bb)] = 0;
			goto done;
		}
		target = pf_between[ksq][__builtin_ctzll(b->checkers)] |
		    b->checkers;
	} else
		target = ~own;
	pinned = pinned_pieces(b, us);
	pawns = b->by_type[PF_PAWN] & own;
	promo = us == PF_WHITE ? 0xFFULL << 56 : 0xFFULL;
	rank4 = us == PF_WHITE ? 0xFFULL << 24 : 0xFFULL << 32;

	/* The unpinned pieces, by kind (each slider looked up once, a
	   queen both ways), and the unpinned pawns that do not promote. */
	bb = b->by_type[PF_KNIGHT] & own & ~pinned;
	while (bb) {
		from = pop_lsb(&bb);
		t = pf_knight_att[from] & target;
		s->from[from] = t;
		n += __builtin_popcountll(t);
	}
	diag = (b->by_type[PF_BISHOP] | b->by_type[PF_QUEEN]) & own & ~pinned;
	orth = (b->by_type[PF_ROOK] | b->by_type[PF_QUEEN]) & own & ~pinned;
	bb = diag & ~orth;
	while (bb) {
		from = pop_lsb(&bb);
		t = pf_bishop_attacks(from, occ) & target;
		s->from[from] = t;
		n += __builtin_popcountll(t);
	}
	bb = orth & ~diag;
	while (bb) {
		from = pop_lsb(&bb);
		t = pf_rook_attacks(from, occ) & target;
		s->from[from] = t;
		n += __builtin_popcountll(t);
	}
	bb = diag & orth;
	while (bb) {
		from = pop_lsb(&bb);
		t = (pf_bishop_attacks(from, occ) | pf_rook_attacks(from,
		    occ)) & target;
		s->from[from] = t;
		n += __builtin_popcountll(t);
	}
	bb = pawns & ~pinned & ~(us == PF_WHITE ? promo >> 8 : promo << 8);
	while (bb) {
		from = pop_lsb(&bb);
		fb = 1ULL << from;
		one = (us == PF_WHITE ? fb << 8 : fb >> 8) & empty;
		two = (us == PF_WHITE ? one << 8 : one >> 8) & empty & rank4;
		t = ((pf_pawn_att[us][from] & enemy) | one | two) & target;
		s->from[from] = t;
		n += __builtin_popcountll(t);
	}

	/* The rest one by one: a pinned piece keeps the targets on its pin
	   line, and none when in check (as the generator); a pawn about to
	   promote has its promotions among the special moves. */
	bb = (own & ~(1ULL << ksq) & pinned) | (pawns & (us == PF_WHITE ?
	    promo >> 8 : promo << 8));
	while (bb) {
		from = pop_lsb(&bb);
		fb = 1ULL << from;
		pm = 0;		/* a pawn's promotion squares */
		if (PF_PIECE_TYPE(b->squares[from]) != PF_PAWN)
			t = piece_attacks(PF_PIECE_TYPE(b->squares[from]),
			    from, occ);
		else {
			one = (us == PF_WHITE ? fb << 8 : fb >> 8) & empty;
			two = (us == PF_WHITE ? one << 8 : one >> 8) & empty &
			    rank4;
			t = (pf_pawn_att[us][from] & enemy) | one | two;
			pm = promo;
		}
		t &= target;
		if (pinned & fb)
			t &= b->checkers ? 0 : pf_line[ksq][from];
		s->from[from] = t & ~pm;
		n += __builtin_popcountll(t & ~pm);
		if (t & pm)
			m = sets_promotions(m, from, t & pm);
	}
	if (b->ep != PF_SQ_NONE) {
		bb = pf_pawn_att[them][b->ep] & pawns;
		while (bb) {
			from = pop_lsb(&bb);
			if (ep_legal(b, from, b->ep))
				*m++ = PF_MAKE_MOVE(from, b->ep,
				    PF_MK_ENPASSANT, 0);
		}
	}
	if (!b->checkers && (bb = b->castle_rooks & own)) {
		while (bb) {
			int rsq = pop_lsb(&bb);

			if (castle_legal(b, us, rsq, occ))
				*m++ = PF_MAKE_MOVE(ksq, rsq, PF_MK_CASTLE, 0);
		}
	}
done:
	s->nspecial = (int)(m - s->special);
	n += s->nspecial;
	s->count = n;
	return n;
}

static int
legal_sets_generic(const pf_board *b, pf_legal_sets *s)
{
	return b->stm == PF_WHITE ? legal_sets_impl(b, s, PF_WHITE) :
	    legal_sets_impl(b, s, PF_BLACK);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) static int
legal_sets_popcnt(const pf_board *b, pf_legal_sets *s)
{
	return b->stm == PF_WHITE ? legal_sets_impl(b, s, PF_WHITE) :
	    legal_sets_impl(b, s, PF_BLACK);
}
#endif

int
pf_legal_sets_fill(const pf_board *b, pf_legal_sets *s)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (gen_fn == gen_popcnt)
		return legal_sets_popcnt(b, s);
#endif
	return legal_sets_generic(b, s);
}

int
pf_legal_sets_empty(const pf_legal_sets *s)
{
	uint64_t bb = s->own, left = 0;
	int i;

	while (bb)
		left |= s->from[pop_lsb(&bb)];
	for (i = 0; i < s->nspecial; i++)
		left |= s->special[i];
	return left == 0;
}
