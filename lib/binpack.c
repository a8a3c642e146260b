/*
 * binpack.c - Stockfish's binpack training-data format (binpack.h), byte
 * for byte as nnue-pytorch's data_loader/cpp/lib/binpack.h writes and
 * reads it.
 *
 * The reader keeps a window of the input, never a whole chunk: a chain of
 * continuation entries holds at most 65535 entries of at most 30 bits
 * each, so a window of the stem and CHAIN_MAX bytes after it always holds
 * the whole chain, and memory stays at WINDOW bytes whatever the chunk
 * size says.  Entries are decoded one per call, so the entries of a chain
 * before a damaged or missing byte are returned before the error.
 *
 * The writer keeps the chunk being filled and the movetext of the chain
 * being built; a chunk goes out with one write(2).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binpack.h"
#include "record.h"		/* pf_get32, pf_put32 */

#define CHUNK_MAGIC	"BINP"
#define ERR_MAX		512
/* Bits of one continuation entry: piece index <= 5 (32 pieces), move
   index <= 5 (a queen's 27 targets), score <= 4 groups of 5. */
#define PLY_BITS_MAX	30
#define CHAIN_MAX	((65535u * PLY_BITS_MAX + 7) / 8)
#define STEM_AND_COUNT	(PF_BINPACK_STEM_SIZE + 2)
#define WINDOW		(1u << 20)
#define SCORE_GROUPS	4

#define RANK_1		0xFFULL
#define RANK_8		(0xFFULL << 56)
#define SQ_A1		0
#define SQ_E1		4
#define SQ_H1		7
#define SQ_A8		56
#define SQ_E8		60
#define SQ_H8		63
#define CORNERS		(1ULL << SQ_A1 | 1ULL << SQ_H1 | 1ULL << SQ_A8 | \
			    1ULL << SQ_H8)

/* ---- small helpers ---------------------------------------------------- */

static uint64_t knight_att[64], king_att[64], pawn_att[2][64];

__attribute__((constructor)) static void
binpack_init(void)
{
	static const int knight_d[8][2] = { {1, 2}, {2, 1}, {2, -1}, {1, -2},
	    {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2} };
	static const int king_d[8][2] = { {1, 0}, {1, 1}, {0, 1}, {-1, 1},
	    {-1, 0}, {-1, -1}, {0, -1}, {1, -1} };
	int sq, i, f, r, nf, nr;

	for (sq = 0; sq < 64; sq++) {
		f = sq & 7;
		r = sq >> 3;
		for (i = 0; i < 8; i++) {
			nf = f + knight_d[i][0];
			nr = r + knight_d[i][1];
			if (nf >= 0 && nf < 8 && nr >= 0 && nr < 8)
				knight_att[sq] |= 1ULL << (nr * 8 + nf);
			nf = f + king_d[i][0];
			nr = r + king_d[i][1];
			if (nf >= 0 && nf < 8 && nr >= 0 && nr < 8)
				king_att[sq] |= 1ULL << (nr * 8 + nf);
		}
		if (r < 7) {
			if (f > 0)
				pawn_att[PF_WHITE][sq] |= 1ULL << (sq + 7);
			if (f < 7)
				pawn_att[PF_WHITE][sq] |= 1ULL << (sq + 9);
		}
		if (r > 0) {
			if (f > 0)
				pawn_att[PF_BLACK][sq] |= 1ULL << (sq - 9);
			if (f < 7)
				pawn_att[PF_BLACK][sq] |= 1ULL << (sq - 7);
		}
	}
}

/* Square of the n-th (from 0) set bit of b, which has more than n. */
static inline int
nth_bit(uint64_t b, unsigned n)
{
	while (n-- > 0)
		b &= b - 1;
	return __builtin_ctzll(b);
}

/* Bits to write an index below n (binpack's usedBitsSafe). */
static inline int
index_bits(unsigned n)
{
	return n <= 1 ? 0 : 32 - __builtin_clz(n - 1);
}

/* binpack's signedToUnsigned / unsignedToSigned: zigzag on 16 bits. */
static inline uint16_t
zigzag(int16_t v)
{
	uint16_t u = (uint16_t)v;

	return (uint16_t)((u << 1) ^ (v < 0 ? 0xFFFF : 0));
}

static inline int16_t
unzigzag(uint16_t u)
{
	return (int16_t)((u >> 1) ^ (u & 1 ? 0xFFFF : 0));
}

static inline void
put16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t
get16be(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Stockfish's full-move number of a game ply. */
static inline uint16_t
fullmove_of(unsigned ply, int stm)
{
	int f = 1 + ((int)ply - (stm == PF_BLACK)) / 2;

	return (uint16_t)(f < 1 ? 1 : f);
}

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- position and move ----------------------------------------------- */

/* The castling rights the format can hold: corner rooks, king on e1/e8. */
static int
castling_ok(const pf_board *b, char *err, size_t errlen)
{
	uint64_t cr = b->castle_rooks;

	if (cr == 0)
		return 0;
	if ((cr & ~CORNERS) != 0) {
		seterr(err, errlen, "Chess960 castling right (rook not in a "
		    "corner): binpack holds standard castling only");
		return -1;
	}
	if (((cr & RANK_1) && b->king_sq[PF_WHITE] != SQ_E1) ||
	    ((cr & RANK_8) && b->king_sq[PF_BLACK] != SQ_E8)) {
		seterr(err, errlen, "Chess960 castling right (king not on "
		    "e1/e8): binpack holds standard castling only");
		return -1;
	}
	return 0;
}

/* Index of the nibble of the piece on sq among the pieces of occ. */
static inline int
nibble_index(uint64_t occ, int sq)
{
	return pf_popcount_swar(occ & ((1ULL << sq) - 1));
}

static inline void
set_nibble(uint64_t w[2], int i, uint64_t nib)
{
	int sh = 4 * (i & 15);

	w[i >> 4] = (w[i >> 4] & ~(15ULL << sh)) | nib << sh;
}

/*
 * The nibbles are built in two 64-bit words (16 each), from a table for
 * the plain pieces; the few special ones (castling rooks, the en passant
 * pawn, the black king to move) are put in after.
 */
int
pf_binpack_pos_encode(const pf_board *b, uint8_t out[PF_BINPACK_POS_SIZE],
    char *err, size_t errlen)
{
	/* pf piece code (type | colour << 3) -> 2 * type + colour */
	static const uint8_t plain[16] = { 0, 2, 4, 6, 8, 10, 0, 0,
	    1, 3, 5, 7, 9, 11, 0, 0 };
	uint64_t occ = b->by_colour[0] | b->by_colour[1], bb = occ, w[2] = {0};
	uint64_t cr;
	int i, sq;

	if (pf_popcount_swar(occ) > 32) {
		seterr(err, errlen, "%d pieces: binpack holds at most 32",
		    pf_popcount_swar(occ));
		return -1;
	}
	if (castling_ok(b, err, errlen) == -1)
		return -1;
	for (i = 0; bb; i++) {
		sq = __builtin_ctzll(bb);
		bb &= bb - 1;
		w[i >> 4] |= (uint64_t)plain[b->squares[sq] & 15] <<
		    (4 * (i & 15));
	}
	for (cr = b->castle_rooks & occ; cr; cr &= cr - 1) {
		sq = __builtin_ctzll(cr);
		set_nibble(w, nibble_index(occ, sq), sq < 8 ? 13 : 14);
	}
	if (b->ep < 64)
		set_nibble(w, nibble_index(occ, b->stm == PF_WHITE ?
		    b->ep - 8 : b->ep + 8), 12);
	if (b->stm == PF_BLACK && b->king_sq[PF_BLACK] < 64)
		set_nibble(w, nibble_index(occ, b->king_sq[PF_BLACK]), 15);
	for (i = 0; i < 8; i++) {
		out[i] = (uint8_t)(occ >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(w[0] >> (8 * i));
		out[16 + i] = (uint8_t)(w[1] >> (8 * i));
	}
	return 0;
}

/*
 * Decoded through marlinformat's packed layout (chess.h), so that the
 * board gets pf_board_unpack's validation.
 */
int
pf_binpack_pos_decode(pf_board *b, const uint8_t in[PF_BINPACK_POS_SIZE],
    char *err, size_t errlen)
{
	/* 2 * type + colour -> marlinformat's type | colour << 3; the
	   special nibbles are fixed up below. */
	static const uint8_t marlin[16] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 12,
	    5, 13, 0, 6, 14, 13 };
	uint8_t packed[PF_PACKED_SIZE];
	uint64_t occ = 0, bb, w[2] = { 0 }, nib, special = 0;
	int i, sq, n, ep = 64, stm = PF_WHITE;
	char why[160];

	for (i = 0; i < 8; i++)
		occ = occ << 8 | in[i];
	n = pf_popcount_swar(occ);
	if (n > 32) {
		seterr(err, errlen, "bad position: %d pieces", n);
		return -1;
	}
	for (bb = occ, i = 0; bb; i++) {
		sq = __builtin_ctzll(bb);
		bb &= bb - 1;
		nib = (uint64_t)(in[8 + i / 2] >> (4 * (i & 1)) & 15);
		special |= (uint64_t)(nib >= 12) << i;
		w[i >> 4] |= (uint64_t)marlin[nib] << (4 * (i & 15));
	}
	for (bb = occ, i = 0; special; i++) {
		sq = __builtin_ctzll(bb);
		bb &= bb - 1;
		if (!(special >> i & 1))
			continue;
		special &= ~(1ULL << i);
		nib = (uint64_t)(in[8 + i / 2] >> (4 * (i & 1)) & 15);
		if (nib == 12) {
			/* A pawn that has just made a double push. */
			if ((sq >> 3) != 3 && (sq >> 3) != 4) {
				seterr(err, errlen, "bad position: en passant "
				    "pawn on rank %d", (sq >> 3) + 1);
				return -1;
			}
			if (ep != 64) {
				seterr(err, errlen, "bad position: two en "
				    "passant pawns");
				return -1;
			}
			ep = (sq >> 3) == 3 ? sq - 8 : sq + 8;
			set_nibble(w, i, (sq >> 3) == 3 ?
			    PF_PIECE(PF_WHITE, PF_PAWN) :
			    PF_PIECE(PF_BLACK, PF_PAWN));
		} else if (nib == 13 || nib == 14) {
			if (nib == 13 ? sq != SQ_A1 && sq != SQ_H1 :
			    sq != SQ_A8 && sq != SQ_H8) {
				seterr(err, errlen, "bad position: castling "
				    "rook on %c%c", 'a' + (sq & 7),
				    '1' + (sq >> 3));
				return -1;
			}
		} else
			stm = PF_BLACK;
	}
	for (i = 0; i < 8; i++) {
		packed[i] = (uint8_t)(occ >> (8 * i));
		packed[8 + i] = (uint8_t)(w[0] >> (8 * i));
		packed[16 + i] = (uint8_t)(w[1] >> (8 * i));
	}
	/* The pawn's side has just moved: the other side is to move. */
	if (ep != 64 && ((ep >> 3) == 2) != (stm == PF_BLACK))
		ep = 64;
	packed[24] = (uint8_t)((stm == PF_BLACK ? 0x80 : 0) | ep);
	packed[25] = 0;
	packed[26] = 1;
	packed[27] = 0;
	if (pf_board_unpack(b, packed, 0, why, sizeof(why)) == -1) {
		seterr(err, errlen, "bad position: %s", why);
		return -1;
	}
	if (b->chess960) {
		seterr(err, errlen, "bad position: castling rook without its "
		    "king on e1/e8");
		return -1;
	}
	return 0;
}

uint16_t
pf_binpack_move_encode(pf_move m)
{
	static const uint16_t type[4] = {
		[PF_MK_NORMAL] = 0, [PF_MK_PROMOTION] = 1,
		[PF_MK_CASTLE] = 2, [PF_MK_ENPASSANT] = 3
	};
	int kind = PF_MOVE_KIND(m);

	if (m == PF_MOVE_NONE)
		return 0;
	return (uint16_t)(type[kind] << 14 | PF_MOVE_FROM(m) << 8 |
	    PF_MOVE_TO(m) << 2 | (kind == PF_MK_PROMOTION ? m >> 14 : 0));
}

pf_move
pf_binpack_move_decode(uint16_t v)
{
	static const int kind[4] = { PF_MK_NORMAL, PF_MK_PROMOTION,
	    PF_MK_CASTLE, PF_MK_ENPASSANT };
	int k = kind[v >> 14];

	if (v == 0)
		return PF_MOVE_NONE;
	return PF_MAKE_MOVE((v >> 8) & 63, (v >> 2) & 63, k,
	    k == PF_MK_PROMOTION ? v & 3 : 0);
}

/* ---- stem ------------------------------------------------------------- */

/* The checks of an entry that do not need its board to be valid. */
static int
entry_fields_ok(const pf_sfentry *e, char *err, size_t errlen)
{
	if (e->ply > PF_BINPACK_PLY_MAX) {
		seterr(err, errlen, "ply %u above %u, the most binpack holds",
		    (unsigned)e->ply, PF_BINPACK_PLY_MAX);
		return -1;
	}
	if (e->result < -1 || e->result > 1) {
		seterr(err, errlen, "result %d is not -1, 0 or 1",
		    (int)e->result);
		return -1;
	}
	return 0;
}

static void
move_name(const pf_board *b, pf_move m, char *buf)
{
	if (PF_MOVE_FROM(m) == PF_MOVE_TO(m) || b->king_sq[0] >= 64 ||
	    b->king_sq[1] >= 64)
		snprintf(buf, 16, "0x%04x", (unsigned)m);
	else
		pf_move_to_uci(b, m, buf);
}

int
pf_binpack_stem_encode(const pf_sfentry *e, uint8_t out[PF_BINPACK_STEM_SIZE],
    char *err, size_t errlen)
{
	char why[160], mv[16];

	if (entry_fields_ok(e, err, errlen) == -1)
		return -1;
	if (pf_board_validate(&e->board, why, sizeof(why)) == -1) {
		seterr(err, errlen, "invalid board: %s", why);
		return -1;
	}
	if (e->move != PF_MOVE_NONE && !pf_is_legal(&e->board, e->move)) {
		move_name(&e->board, e->move, mv);
		seterr(err, errlen, "move %s is not legal", mv);
		return -1;
	}
	if (pf_binpack_pos_encode(&e->board, out, err, errlen) == -1)
		return -1;
	put16be(out + 24, pf_binpack_move_encode(e->move));
	put16be(out + 26, zigzag(e->score));
	put16be(out + 28, (uint16_t)(e->ply |
	    zigzag((int16_t)e->result) << 14));
	put16be(out + 30, e->board.rule50);
	return 0;
}

int
pf_binpack_stem_decode(pf_sfentry *e, const uint8_t in[PF_BINPACK_STEM_SIZE],
    char *err, size_t errlen)
{
	uint16_t pr = get16be(in + 28), r50 = get16be(in + 30);
	int result = unzigzag((uint16_t)(pr >> 14));
	char mv[16];

	if (result < -1) {
		seterr(err, errlen, "bad result bits 3");
		return -1;
	}
	if (pf_binpack_pos_decode(&e->board, in, err, errlen) == -1)
		return -1;
	e->move = pf_binpack_move_decode(get16be(in + 24));
	if (e->move != PF_MOVE_NONE && !pf_is_legal(&e->board, e->move)) {
		move_name(&e->board, e->move, mv);
		seterr(err, errlen, "move %s is not legal", mv);
		return -1;
	}
	e->score = unzigzag(get16be(in + 26));
	e->ply = pr & PF_BINPACK_PLY_MAX;
	e->result = (int8_t)result;
	e->board.rule50 = (uint8_t)(r50 > 255 ? 255 : r50);
	e->board.fullmove = fullmove_of(e->ply, e->board.stm);
	return 0;
}

/*
 * The pseudo-legal destinations binpack numbers a piece's moves by, for
 * the piece on from (not a king).
 */
static inline uint64_t
destinations(const pf_board *b, int from, int type)
{
	int us = b->stm;
	uint64_t own = b->by_colour[us], occ = own | b->by_colour[!us];
	uint64_t d;
	int fwd;

	switch (type) {
	case PF_PAWN:
		d = b->by_colour[!us];
		if (b->ep < 64)
			d |= 1ULL << b->ep;
		d &= pawn_att[us][from];
		fwd = us == PF_WHITE ? from + 8 : from - 8;
		if (!(occ >> fwd & 1)) {
			d |= 1ULL << fwd;
			if ((from >> 3) == (us == PF_WHITE ? 1 : 6)) {
				fwd = us == PF_WHITE ? fwd + 8 : fwd - 8;
				if (!(occ >> fwd & 1))
					d |= 1ULL << fwd;
			}
		}
		return d;
	case PF_KNIGHT:
		return knight_att[from] & ~own;
	case PF_BISHOP:
		return pf_bishop_attacks(from, occ) & ~own;
	case PF_ROOK:
		return pf_rook_attacks(from, occ) & ~own;
	case PF_QUEEN:
		return (pf_bishop_attacks(from, occ) |
		    pf_rook_attacks(from, occ)) & ~own;
	default:
		return king_att[from] & ~own;
	}
}

/* ---- reading ---------------------------------------------------------- */

enum { S_HEADER, S_STEM, S_CHAIN, S_SKIP, S_DONE };

struct pf_binpack_reader {
	pf_source_fn *src;
	void *src_arg;
	int fd;			/* pf_binpack_reader_open's (src_arg) */
	char *name;
	uint8_t *buf;
	size_t pos, end;	/* unread bytes: buf[pos..end) */
	uint64_t base;		/* input offset of buf[0] */
	int eof;
	int state;
	uint64_t chunk_end;	/* input offset just past the chunk */

	/* The chain being read: its movetext is buf[mt..mt_lim) with bit
	   the next bit; mt_cut says the input ended before the chunk did. */
	pf_sfentry cur;
	unsigned left;		/* continuation entries still to read */
	int16_t last_score;
	size_t mt, mt_lim;
	uint64_t bit;
	int mt_cut;

	uint64_t entries;
	int chained;		/* the last entry continued a chain */
	char err[ERR_MAX];
	/* a read error (damaged compressed data, say): the input ends
	   there, and the reason is told once (cut_short, pf_binpack_read) */
	char rd_err[256];
	int rd_told;
};

static void
rerr(pf_binpack_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "%s: offset %llu: ", r->name,
	    (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(r->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
}

static void
rerr_append(pf_binpack_reader *r, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(r->err);

	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
}

/* read(2) as a source; a descriptor with no data yet (O_NONBLOCK) is
   waited for. */
static ssize_t
fd_source(void *arg, void *buf, size_t n, char *err, size_t errsize)
{
	int fd = *(int *)arg;
	ssize_t got;

	for (;;) {
		if ((got = read(fd, buf, n)) >= 0)
			return got;
		if (errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			(void)poll(&pfd, 1, -1);
		} else if (errno != EINTR) {
			snprintf(err, errsize, "read error: %s",
			    strerror(errno));
			return -1;
		}
	}
}

pf_binpack_reader *
pf_binpack_reader_open(int fd, const char *name)
{
	pf_binpack_reader *r;

	if ((r = pf_binpack_reader_open_source(fd_source, NULL, name)) !=
	    NULL) {
		r->fd = fd;
		r->src_arg = &r->fd;
	}
	return r;
}

pf_binpack_reader *
pf_binpack_reader_open_source(pf_source_fn *src, void *arg,
    const char *name)
{
	pf_binpack_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->src = src;
	r->src_arg = arg;
	r->state = S_HEADER;
	if ((r->name = strdup(name != NULL ? name : "stdin")) == NULL ||
	    (r->buf = malloc(WINDOW)) == NULL) {
		free(r->name);
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void
pf_binpack_reader_free(pf_binpack_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r->name);
	free(r);
}

const char *
pf_binpack_reader_error(const pf_binpack_reader *r)
{
	return r->err;
}

uint64_t
pf_binpack_reader_entries(const pf_binpack_reader *r)
{
	return r->entries;
}

uint64_t
pf_binpack_reader_offset(const pf_binpack_reader *r)
{
	return r->base + r->pos;
}

/*
 * Make at least need (<= WINDOW) bytes readable at buf[pos], or as many
 * as the input has.  Returns the bytes readable (never -1: a read error
 * ends the input there, and rd_err keeps it).  Never called while a chain
 * is being read: the chain's movetext stays where it is.
 */
static ssize_t
fill(pf_binpack_reader *r, size_t need)
{
	ssize_t got;

	if (r->end - r->pos >= need || r->eof)
		return (ssize_t)(r->end - r->pos);
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->base += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	while (r->end < need) {
		char why[256];

		got = r->src(r->src_arg, r->buf + r->end, WINDOW - r->end, why,
		    sizeof(why));
		if (got > 0) {
			r->end += (size_t)got;
			continue;
		}
		if (got < 0 && r->rd_err[0] == '\0')
			snprintf(r->rd_err, sizeof(r->rd_err), "%s", why);
		/* an error ends the input: the entries before it are read */
		r->eof = 1;
		break;
	}
	return (ssize_t)(r->end - r->pos);
}

/* After a message that the input ended inside a chunk: why it did, when
   a read error ended it. */
static void
cut_short(pf_binpack_reader *r)
{
	if (r->rd_err[0] != '\0' && !r->rd_told) {
		rerr_append(r, ": %s", r->rd_err);
		r->rd_told = 1;
	}
}

/*
 * After a damaged chunk header at buf[pos], find the next "BINP" after it
 * and go on there.  Appends where reading resumes to the error already
 * set; returns -1 (the error stands either way).
 */
static int
resync(pf_binpack_reader *r)
{
	uint64_t from = r->base + r->pos;
	const uint8_t *p, *end;

	r->pos++;
	for (;;) {
		if (fill(r, 4) == -1)
			return -1;
		end = r->buf + r->end;
		for (p = r->buf + r->pos; end - p >= 4; p++) {
			p = memchr(p, 'B', (size_t)(end - p));
			if (p == NULL || end - p < 4)
				break;
			if (memcmp(p, CHUNK_MAGIC, 4) == 0)
				goto found;
		}
		if (r->end - r->pos < 4 && r->eof) {
			rerr_append(r, "; no chunk header follows (%llu bytes "
			    "skipped)", (unsigned long long)(r->base +
			    r->end - from));
			r->pos = r->end;
			r->state = S_DONE;
			return -1;
		}
		/* Keep a possible partial magic at the end. */
		if (r->end - r->pos > 3)
			r->pos = r->end - 3;
	}
found:
	r->pos = (size_t)(p - r->buf);
	r->state = S_HEADER;
	rerr_append(r, "; resuming at offset %llu (%llu bytes skipped)",
	    (unsigned long long)(r->base + r->pos),
	    (unsigned long long)(r->base + r->pos - from));
	return -1;
}

/* Read a chunk header: 1 in a chunk, 0 at the end, -1 on an error. */
static int
read_header(pf_binpack_reader *r)
{
	ssize_t avail;
	uint32_t size;
	const uint8_t *h;

	if ((avail = fill(r, PF_BINPACK_CHUNK_HEADER)) == -1)
		return -1;
	if (avail == 0) {
		r->state = S_DONE;
		return 0;
	}
	h = r->buf + r->pos;
	if (avail < PF_BINPACK_CHUNK_HEADER) {
		/* the magic as far as it goes: the rest is the size */
		if (memcmp(h, CHUNK_MAGIC, avail < 4 ? (size_t)avail : 4) !=
		    0) {
			rerr(r, r->base + r->pos, "bad chunk header");
			return resync(r);
		}
		rerr(r, r->base + r->pos, "truncated chunk header (%zd of "
		    "8 bytes)", avail);
		cut_short(r);
		r->state = S_DONE;
		return -1;
	}
	if (memcmp(h, CHUNK_MAGIC, 4) != 0) {
		rerr(r, r->base + r->pos, "bad chunk header");
		return resync(r);
	}
	size = pf_get32(h + 4);
	if (size > PF_BINPACK_CHUNK_MAX) {
		rerr(r, r->base + r->pos, "bad chunk header: size %lu above "
		    "%u", (unsigned long)size, PF_BINPACK_CHUNK_MAX);
		return resync(r);
	}
	r->pos += PF_BINPACK_CHUNK_HEADER;
	r->chunk_end = r->base + r->pos + size;
	r->state = S_STEM;
	return 1;
}

/* Skip to the end of the current chunk: 1, or 0 if the input ends first. */
static int
skip_chunk(pf_binpack_reader *r)
{
	for (;;) {
		if (r->base + r->end >= r->chunk_end) {
			r->pos = (size_t)(r->chunk_end - r->base);
			r->state = S_HEADER;
			return 1;
		}
		r->base += r->end;
		r->pos = r->end = 0;
		if (fill(r, 1) <= 0) {
			r->state = S_DONE;
			return 0;
		}
	}
}

/*
 * Read the next stem: 1 and *e filled, 0 when the chunk has no more
 * (state S_HEADER) or the input ends, -1 on an error.
 */
static int
read_stem(pf_binpack_reader *r, pf_sfentry *e)
{
	uint64_t off = r->base + r->pos, left = r->chunk_end - off;
	size_t want;
	ssize_t avail;
	unsigned plies;
	char why[256];

	want = left < STEM_AND_COUNT + CHAIN_MAX ? (size_t)left :
	    STEM_AND_COUNT + CHAIN_MAX;
	if ((avail = fill(r, want)) == -1)
		return -1;
	if (left < STEM_AND_COUNT) {
		/* nnue-pytorch ignores fewer bytes than a stem at the end. */
		if ((uint64_t)avail < left) {
			rerr(r, r->base + r->end, "truncated chunk (the chunk "
			    "ends at offset %llu)",
			    (unsigned long long)r->chunk_end);
			cut_short(r);
			r->state = S_DONE;
			return -1;
		}
		r->pos += (size_t)left;
		r->state = S_HEADER;
		return 0;
	}
	if (avail < STEM_AND_COUNT) {
		rerr(r, r->base + r->end, "truncated chunk (the chunk ends at "
		    "offset %llu)", (unsigned long long)r->chunk_end);
		cut_short(r);
		r->state = S_DONE;
		return -1;
	}
	plies = get16be(r->buf + r->pos + PF_BINPACK_STEM_SIZE);
	if (pf_binpack_stem_decode(&r->cur, r->buf + r->pos, why,
	    sizeof(why)) == -1) {
		rerr(r, off, "%s", why);
		if (plies == 0) {
			r->pos += STEM_AND_COUNT;
			return -1;
		}
		rerr_append(r, "; rest of the chunk skipped");
		r->state = S_SKIP;
		return -1;
	}
	if (plies > 0 && r->cur.move == PF_MOVE_NONE) {
		rerr(r, off, "stem without a move followed by %u entries; "
		    "rest of the chunk skipped", plies);
		r->state = S_SKIP;
		return -1;
	}
	r->pos += STEM_AND_COUNT;
	if (plies > 0) {
		r->left = plies;
		r->last_score = (int16_t)-r->cur.score;
		r->mt = r->pos;
		r->mt_lim = r->pos + (size_t)(left - STEM_AND_COUNT <
		    (uint64_t)(r->end - r->pos) ? left - STEM_AND_COUNT :
		    r->end - r->pos);
		r->mt_cut = r->eof && (uint64_t)(r->end - r->pos) <
		    left - STEM_AND_COUNT;
		r->bit = 0;
		r->state = S_CHAIN;
	}
	*e = r->cur;
	return 1;
}

/* n (<= 8) bits of the movetext, or -1 if they run past its end. */
static inline int
getbits(pf_binpack_reader *r, int n)
{
	size_t i = r->mt + (size_t)(r->bit >> 3);
	unsigned sh = (unsigned)(r->bit & 7), w;

	if (n == 0)
		return 0;
	if (r->bit + (uint64_t)n > (uint64_t)(r->mt_lim - r->mt) * 8)
		return -1;
	w = (unsigned)r->buf[i] << 8 | (i + 1 < r->mt_lim ? r->buf[i + 1] : 0);
	r->bit += (uint64_t)n;
	return (int)(w >> (16 - sh - (unsigned)n) & ((1u << n) - 1));
}

/* Decode the move of the chain's next entry on b: 0, or -1 (reason). */
static int
decode_move(pf_binpack_reader *r, const pf_board *b, pf_move *m,
    const char **why)
{
	int us = b->stm, from, to, type, id, n, nc, base;
	uint64_t own = b->by_colour[us], d, cr;

	*why = NULL;
	n = pf_popcount_swar(own);
	if ((id = getbits(r, index_bits((unsigned)n))) < 0)
		return -1;
	if (id >= n) {
		*why = "piece index out of range";
		return -1;
	}
	from = nth_bit(own, (unsigned)id);
	type = PF_PIECE_TYPE(b->squares[from]);
	d = destinations(b, from, type);
	n = pf_popcount_swar(d);
	if (type == PF_PAWN && (from >> 3) == (us == PF_WHITE ? 6 : 1)) {
		if ((id = getbits(r, index_bits((unsigned)n * 4))) < 0)
			return -1;
		if (id >= n * 4) {
			*why = "move index out of range";
			return -1;
		}
		to = nth_bit(d, (unsigned)id / 4);
		*m = PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, id % 4);
		return 0;
	}
	nc = 0;
	cr = 0;
	if (type == PF_KING) {
		cr = b->castle_rooks & own;
		nc = pf_popcount_swar(cr);
	}
	if ((id = getbits(r, index_bits((unsigned)(n + nc)))) < 0)
		return -1;
	if (id >= n + nc) {
		*why = "move index out of range";
		return -1;
	}
	if (id < n) {
		to = nth_bit(d, (unsigned)id);
		*m = PF_MAKE_MOVE(from, to, type == PF_PAWN && to == b->ep ?
		    PF_MK_ENPASSANT : PF_MK_NORMAL, 0);
		return 0;
	}
	/* Castling: long first when that right exists. */
	base = us == PF_WHITE ? 0 : 56;
	to = id == n && (cr >> (base + SQ_A1) & 1) ? base + SQ_A1 :
	    base + SQ_H1;
	*m = PF_MAKE_MOVE(from, to, PF_MK_CASTLE, 0);
	return 0;
}

/* The chain's next entry: 1, or -1 on an error. */
static int
read_chain(pf_binpack_reader *r, pf_sfentry *e)
{
	pf_sfentry *c = &r->cur;
	uint64_t off = r->base + r->mt + (r->bit >> 3);
	const char *why;
	pf_undo u;
	pf_move m;
	int g, v, d;
	char mv[16];

	pf_make_move(&c->board, c->move, &u);
	if (c->ply >= 0xFFFF) {
		why = "ply above 65535";
		goto bad;
	}
	if (decode_move(r, &c->board, &m, &why) == -1)
		goto bad;
	if (!pf_is_legal(&c->board, m)) {
		move_name(&c->board, m, mv);
		rerr(r, off, "entry %llu: move %s is not legal; rest of the "
		    "chunk skipped", (unsigned long long)r->entries + 1, mv);
		r->state = S_SKIP;
		return -1;
	}
	for (d = 0, g = 0; g < SCORE_GROUPS; g++) {
		if ((v = getbits(r, 5)) < 0) {
			why = NULL;
			goto bad;
		}
		d |= (v & 15) << (4 * g);
		if (!(v & 16))
			break;
	}
	if (g == SCORE_GROUPS) {
		why = "score longer than 16 bits";
		goto bad;
	}
	c->score = (int16_t)(uint16_t)((uint16_t)r->last_score +
	    (uint16_t)unzigzag((uint16_t)d));
	r->last_score = (int16_t)(uint16_t)-(uint16_t)c->score;
	c->move = m;
	c->ply++;
	c->result = (int8_t)-c->result;
	c->board.fullmove = fullmove_of(c->ply, c->board.stm);
	if (--r->left == 0) {
		r->pos = r->mt + (size_t)((r->bit + 7) >> 3);
		r->state = S_STEM;
	}
	*e = *c;
	return 1;
bad:
	if (why == NULL && r->mt_cut) {
		rerr(r, r->base + r->mt_lim, "truncated chunk (the chunk ends "
		    "at offset %llu)", (unsigned long long)r->chunk_end);
		cut_short(r);
		r->state = S_DONE;
		return -1;
	}
	rerr(r, off, "entry %llu: %s; rest of the chunk skipped",
	    (unsigned long long)r->entries + 1, why != NULL ? why :
	    "movetext runs past the end of the chunk");
	r->state = S_SKIP;
	return -1;
}

static int
read_next(pf_binpack_reader *r, pf_sfentry *e)
{
	int rc;

	for (;;) {
		switch (r->state) {
		case S_HEADER:
			if ((rc = read_header(r)) <= 0)
				return rc;
			break;
		case S_STEM:
			r->chained = 0;
			if ((rc = read_stem(r, e)) != 0) {
				r->entries += rc == 1;
				return rc;
			}
			break;
		case S_CHAIN:
			if ((rc = read_chain(r, e)) == 1) {
				r->entries++;
				r->chained = 1;
			}
			return rc;
		case S_SKIP:
			if (skip_chunk(r) == 0)
				return 0;
			break;
		default:
			return 0;
		}
	}
}

int
pf_binpack_read(pf_binpack_reader *r, pf_sfentry *e)
{
	int rc;

	r->err[0] = '\0';
	rc = read_next(r, e);
	/* a read error where a chunk could end: said where the input
	   ends */
	if (rc == 0 && r->rd_err[0] != '\0' && !r->rd_told) {
		rerr(r, r->base + r->end, "%s", r->rd_err);
		r->rd_told = 1;
		return -1;
	}
	return rc;
}

int
pf_binpack_reader_chained(const pf_binpack_reader *r)
{
	return r->chained;
}

/* ---- writing ---------------------------------------------------------- */

struct pf_binpack_writer {
	int fd;
	char *name;
	int failed;		/* a write error: sticky */
	int closed;

	uint8_t *chunk;		/* header room, then the payload */
	size_t len, cap;	/* bytes in chunk[], header included */

	/* The chain after the last stem. */
	int have_last;
	pf_sfentry last;
	pf_board next;		/* last.board after last.move */
	unsigned plies;
	int16_t last_score;
	uint8_t *mt;
	size_t mt_len, mt_cap;
	uint64_t acc;		/* bits not yet in mt[] */
	int nacc;

	uint64_t given;		/* calls of pf_binpack_write, for messages */
	uint64_t entries, bytes;
	char err[ERR_MAX];
};

static void
werr(pf_binpack_writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(w->err, sizeof(w->err), "%s: ", w->name);
	if (n < 0 || (size_t)n >= sizeof(w->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(w->err + n, sizeof(w->err) - n, fmt, ap);
	va_end(ap);
}

pf_binpack_writer *
pf_binpack_writer_open(int fd, const char *name)
{
	pf_binpack_writer *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->fd = fd;
	w->cap = PF_BINPACK_CHUNK_HEADER + PF_BINPACK_CHUNK_TARGET + 65536;
	w->len = PF_BINPACK_CHUNK_HEADER;
	w->mt_cap = 65536;
	if ((w->name = strdup(name != NULL ? name : "stdout")) == NULL ||
	    (w->chunk = malloc(w->cap)) == NULL ||
	    (w->mt = malloc(w->mt_cap)) == NULL) {
		pf_binpack_writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

void
pf_binpack_writer_free(pf_binpack_writer *w)
{
	if (w == NULL)
		return;
	free(w->chunk);
	free(w->mt);
	free(w->name);
	free(w);
}

const char *
pf_binpack_writer_error(const pf_binpack_writer *w)
{
	return w->err;
}

int
pf_binpack_writer_failed(const pf_binpack_writer *w)
{
	return w->failed;
}

uint64_t
pf_binpack_writer_entries(const pf_binpack_writer *w)
{
	return w->entries;
}

uint64_t
pf_binpack_writer_bytes(const pf_binpack_writer *w)
{
	return w->bytes;
}

/* Make room for n more bytes in *p (length len, capacity *cap). */
static int
grow(uint8_t **p, size_t *cap, size_t len, size_t n)
{
	size_t ncap = *cap;
	uint8_t *np;

	if (len + n <= *cap)
		return 0;
	while (ncap < len + n)
		ncap *= 2;
	if ((np = realloc(*p, ncap)) == NULL)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

/* Append the low n (<= 32) bits of v to the movetext. */
static inline int
putbits(pf_binpack_writer *w, unsigned v, int n)
{
	w->acc = w->acc << n | v;
	w->nacc += n;
	if (w->nacc >= 32) {
		if (w->mt_len + 4 > w->mt_cap &&
		    grow(&w->mt, &w->mt_cap, w->mt_len, 4) == -1)
			return -1;
		while (w->nacc >= 8) {
			w->nacc -= 8;
			w->mt[w->mt_len++] = (uint8_t)(w->acc >> w->nacc);
		}
	}
	return 0;
}

/* Write chunk[] out as one chunk.  0 / -1. */
static int
flush_chunk(pf_binpack_writer *w)
{
	const uint8_t *p = w->chunk;
	size_t n = w->len;
	ssize_t put;

	memcpy(w->chunk, CHUNK_MAGIC, 4);
	pf_put32(w->chunk + 4, (uint32_t)(w->len - PF_BINPACK_CHUNK_HEADER));
	while (n > 0) {
		put = write(w->fd, p, n);
		if (put > 0) {
			p += put;
			n -= (size_t)put;
			continue;
		}
		if (put == -1 && errno == EINTR)
			continue;
		if (put == -1 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };

			(void)poll(&pfd, 1, -1);
			continue;
		}
		werr(w, "write error: %s", put == 0 ? "no progress" :
		    put == -1 && errno == EPIPE ? "broken pipe" :
		    strerror(errno));
		w->failed = 1;
		return -1;
	}
	w->bytes += w->len;
	w->len = PF_BINPACK_CHUNK_HEADER;
	return 0;
}

/* Append the chain count and movetext of the last stem to the chunk. */
static int
end_chain(pf_binpack_writer *w)
{
	if (w->nacc > 0) {
		if (grow(&w->mt, &w->mt_cap, w->mt_len, 8) == -1)
			goto nomem;
		while (w->nacc >= 8) {
			w->nacc -= 8;
			w->mt[w->mt_len++] = (uint8_t)(w->acc >> w->nacc);
		}
		if (w->nacc > 0)
			w->mt[w->mt_len++] = (uint8_t)(w->acc <<
			    (8 - w->nacc));
		w->nacc = 0;
	}
	if (grow(&w->chunk, &w->cap, w->len, 2 + w->mt_len) == -1)
		goto nomem;
	put16be(w->chunk + w->len, (uint16_t)w->plies);
	memcpy(w->chunk + w->len + 2, w->mt, w->mt_len);
	w->len += 2 + w->mt_len;
	w->plies = 0;
	w->mt_len = 0;
	w->acc = 0;
	return 0;
nomem:
	werr(w, "out of memory");
	w->failed = 1;
	return -1;
}

/* Same position in binpack's sense: pieces, side, castling, ep. */
static inline int
same_position(const pf_board *a, const pf_board *b)
{
	return a->by_colour[0] == b->by_colour[0] &&
	    a->by_colour[1] == b->by_colour[1] &&
	    a->by_type[PF_PAWN] == b->by_type[PF_PAWN] &&
	    a->by_type[PF_KNIGHT] == b->by_type[PF_KNIGHT] &&
	    a->by_type[PF_BISHOP] == b->by_type[PF_BISHOP] &&
	    a->by_type[PF_ROOK] == b->by_type[PF_ROOK] &&
	    a->by_type[PF_QUEEN] == b->by_type[PF_QUEEN] &&
	    a->by_type[PF_KING] == b->by_type[PF_KING] &&
	    a->stm == b->stm && a->ep == b->ep &&
	    a->castle_rooks == b->castle_rooks;
}

/* Append e, a continuation of the last entry, to the movetext. */
static int
add_continuation(pf_binpack_writer *w, const pf_sfentry *e)
{
	const pf_board *b = &e->board;
	int us = b->stm, from = PF_MOVE_FROM(e->move), to = PF_MOVE_TO(e->move);
	int type = PF_PIECE_TYPE(b->squares[from]), n, id, bits;
	uint64_t own = b->by_colour[us], d = destinations(b, from, type), cr;
	uint16_t delta;

	if (putbits(w, (unsigned)pf_popcount_swar(own & ((1ULL << from) - 1)),
	    index_bits((unsigned)pf_popcount_swar(own))) == -1)
		goto nomem;
	n = pf_popcount_swar(d);
	if (type == PF_PAWN && (from >> 3) == (us == PF_WHITE ? 6 : 1)) {
		id = pf_popcount_swar(d & ((1ULL << to) - 1)) * 4 + (e->move >> 14);
		bits = index_bits((unsigned)n * 4);
	} else if (type == PF_KING) {
		cr = b->castle_rooks & own;
		bits = index_bits((unsigned)(n + pf_popcount_swar(cr)));
		if (PF_MOVE_KIND(e->move) == PF_MK_CASTLE) {
			/* Long first when that right exists. */
			id = n - 1 + (int)(cr >> (us == PF_WHITE ? SQ_A1 :
			    SQ_A8) & 1) + ((to & 7) == 7);
		} else
			id = pf_popcount_swar(d & ((1ULL << to) - 1));
	} else {
		id = pf_popcount_swar(d & ((1ULL << to) - 1));
		bits = index_bits((unsigned)n);
	}
	if (putbits(w, (unsigned)id, bits) == -1)
		goto nomem;
	delta = zigzag((int16_t)(uint16_t)((uint16_t)e->score -
	    (uint16_t)w->last_score));
	for (;;) {
		if (putbits(w, (delta & 15) | (delta > 15 ? 16 : 0), 5) == -1)
			goto nomem;
		delta >>= 4;
		if (delta == 0)
			break;
	}
	w->last_score = (int16_t)(uint16_t)-(uint16_t)e->score;
	w->plies++;
	return 0;
nomem:
	werr(w, "out of memory");
	w->failed = 1;
	return -1;
}

int
pf_binpack_write(pf_binpack_writer *w, const pf_sfentry *e)
{
	uint8_t stem[PF_BINPACK_STEM_SIZE];
	char why[256], mv[16];
	pf_undo u;
	int cont;

	if (w->failed)
		return -1;
	if (w->closed) {
		werr(w, "write after close");
		return -1;
	}
	w->given++;
	/* nnue-pytorch's isContinuation(), and a move to encode (the
	   result is then the last one's negated, and a continuation's ply
	   is not stored: only a stem's is checked, by stem_encode). */
	cont = w->have_last && w->last.move != PF_MOVE_NONE &&
	    e->move != PF_MOVE_NONE && w->last.result == -e->result &&
	    w->last.ply + 1 == e->ply && same_position(&w->next, &e->board);
	if (cont) {
		/* e's board is a valid one: the last board after its legal
		   move. */
		if (!pf_is_legal(&e->board, e->move)) {
			move_name(&e->board, e->move, mv);
			werr(w, "entry %llu: move %s is not legal",
			    (unsigned long long)w->given, mv);
			return -1;
		}
		if (add_continuation(w, e) == -1)
			return -1;
	} else {
		if (pf_binpack_stem_encode(e, stem, why, sizeof(why)) == -1) {
			werr(w, "entry %llu: %s",
			    (unsigned long long)w->given, why);
			return -1;
		}
		if (w->have_last && end_chain(w) == -1)
			return -1;
		if (w->len - PF_BINPACK_CHUNK_HEADER >=
		    PF_BINPACK_CHUNK_TARGET && flush_chunk(w) == -1)
			return -1;
		if (grow(&w->chunk, &w->cap, w->len, sizeof(stem)) == -1) {
			werr(w, "out of memory");
			w->failed = 1;
			return -1;
		}
		memcpy(w->chunk + w->len, stem, sizeof(stem));
		w->len += sizeof(stem);
		w->last_score = (int16_t)(uint16_t)-(uint16_t)e->score;
	}
	w->have_last = 1;
	w->last = *e;
	if (e->move != PF_MOVE_NONE) {
		w->next = e->board;
		pf_make_move(&w->next, e->move, &u);
	}
	w->entries++;
	return 0;
}

int
pf_binpack_writer_close(pf_binpack_writer *w)
{
	if (w->failed)
		return -1;
	if (w->closed)
		return 0;
	w->closed = 1;
	if (!w->have_last)
		return 0;
	if (end_chain(w) == -1 || flush_chunk(w) == -1)
		return -1;
	return 0;
}
