/*
 * sfformats.c - codecs of the plain, bin, marlinformat, bulletformat and
 * viriformat training-data formats (see sfformats.h for the layouts and
 * where they are specified).
 *
 * Boards are decoded by building the 28-byte packed position of chess.h
 * (marlinformat's board layout) and handing it to pf_board_unpack, so
 * that every format is validated the same way as the record stream.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "sfformats.h"

/* sfentry.h's limits: Stockfish's VALUE_MATE, the largest non-mate */
#define SF_MATE		PF_SF_MATE
#define SF_MAX_EVAL	PF_SF_MAX_EVAL
#define PLAIN_SCAN_MAX	4096	/* longest plain entry looked through */

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

static void
sq_name(int sq, char out[3])
{
	out[0] = (char)('a' + (sq & 7));
	out[1] = (char)('1' + (sq >> 3));
	out[2] = '\0';
}

/* A move as from-to squares, for messages about moves that are not
   legal (pf_move_to_uci needs a board where the move makes sense). */
static const char *
move_name(pf_move m, char out[8])
{
	sq_name(PF_MOVE_FROM(m), out);
	sq_name(PF_MOVE_TO(m), out + 2);
	if (PF_MOVE_KIND(m) == PF_MK_PROMOTION) {
		out[4] = "nbrq"[(m >> 14) & 3];
		out[5] = '\0';
	}
	return out;
}

/* The game ply of a board, from its full-move number. */
static uint16_t
board_ply(const pf_board *b)
{
	unsigned ply = 2u * (b->fullmove > 0 ? b->fullmove - 1u : 0u) + b->stm;

	return (uint16_t)(ply > 65535 ? 65535 : ply);
}

/* ---- scores and moves ------------------------------------------------ */

int16_t
pf_sfscore_to_cp(int16_t s)
{
	int a = s < 0 ? -s : s;

	if (a > SF_MAX_EVAL)
		return s;		/* a mate: kept as it is */
	a = (a * 100 + 104) / 208;	/* round(a / 2.08), halves up */
	return (int16_t)(s < 0 ? -a : a);
}

int16_t
pf_sfscore_from_cp(int16_t cp)
{
	int a = cp < 0 ? -cp : cp;

	if (a > SF_MAX_EVAL) {
		if (a > SF_MATE)
			a = SF_MATE;
	} else {
		a = (a * 208 + 50) / 100;	/* round(a * 2.08) */
		if (a > SF_MAX_EVAL)
			a = SF_MAX_EVAL;
	}
	return (int16_t)(cp < 0 ? -a : a);
}

uint16_t
pf_sfmove_encode(pf_move m)
{
	unsigned kind = PF_MOVE_KIND(m), promo;

	if (m == PF_MOVE_NONE)
		return 0;
	promo = kind == PF_MK_PROMOTION ? (m >> 14) & 3u : 0;
	return (uint16_t)(PF_MOVE_TO(m) | PF_MOVE_FROM(m) << 6 | promo << 12 |
	    kind << 14);
}

pf_move
pf_sfmove_decode(uint16_t v)
{
	if (v == 0)
		return PF_MOVE_NONE;
	return PF_MAKE_MOVE((v >> 6) & 63u, v & 63u, (unsigned)v >> 14,
	    (v >> 12) & 3u);
}

uint16_t
pf_virimove_encode(pf_move m)
{
	unsigned v;

	if (m == PF_MOVE_NONE)
		return 0;
	v = PF_MOVE_FROM(m) | PF_MOVE_TO(m) << 6;
	switch (PF_MOVE_KIND(m)) {
	case PF_MK_PROMOTION:
		v |= ((m >> 14) & 3u) << 12 | 0xC000u;
		break;
	case PF_MK_ENPASSANT:
		v |= 0x4000u;
		break;
	case PF_MK_CASTLE:
		v |= 0x8000u;
		break;
	default:
		break;
	}
	return (uint16_t)v;
}

pf_move
pf_virimove_decode(uint16_t v)
{
	static const unsigned kind[4] = { PF_MK_NORMAL, PF_MK_ENPASSANT,
	    PF_MK_CASTLE, PF_MK_PROMOTION };

	if (v == 0)
		return PF_MOVE_NONE;
	/* Bits 12-13 go where pf_move keeps the promotion piece; on a move
	   that is no promotion they make it illegal, as they should. */
	return PF_MAKE_MOVE(v & 63u, (v >> 6) & 63u, kind[v >> 14],
	    (v >> 12) & 3u);
}

/* ---- plain ------------------------------------------------------------ */

size_t
pf_plain_encode(const pf_sfentry *e, char *out)
{
	char fen[PF_FEN_MAX], uci[PF_UCI_MAX];
	int n;

	pf_board_to_fen(&e->board, fen);
	pf_move_to_uci(&e->board, e->move, uci);
	n = snprintf(out, PF_PLAIN_MAX,
	    "fen %s\nmove %s\nscore %d\nply %u\nresult %d\ne\n", fen, uci,
	    (int)e->score, (unsigned)e->ply, (int)e->result);
	return n < 0 ? 0 : (size_t)n;
}

/*
 * The next line of text[pos..len): its start and end (without "\r\n" and
 * surrounding blanks) and where the line after it begins.  A last line
 * without a newline counts only at eof.  0 when no complete line is left.
 */
typedef struct line {
	size_t start, end, next;
} line;

static int
next_line(const char *text, size_t len, size_t pos, int eof, line *l)
{
	const char *nl;
	size_t s, e;

	if (pos >= len)
		return 0;
	nl = memchr(text + pos, '\n', len - pos);
	if (nl == NULL) {
		if (!eof)
			return 0;
		e = len;
		l->next = len;
	} else {
		e = (size_t)(nl - text);
		l->next = e + 1;
	}
	s = pos;
	while (s < e && (text[s] == ' ' || text[s] == '\t'))
		s++;
	while (e > s && (text[e - 1] == ' ' || text[e - 1] == '\t' ||
	    text[e - 1] == '\r'))
		e--;
	l->start = s;
	l->end = e;
	return 1;
}

/* A decimal integer that is all of s[0..n), within [min, max]. */
static int
parse_int(const char *s, size_t n, long min, long max, long *v)
{
	size_t i = 0;
	long x = 0;
	int neg = 0;

	if (n > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i++;
	}
	if (i == n || n - i > 9)
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (s[i] - '0');
	}
	if (neg)
		x = -x;
	if (x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

enum { PL_MOVE = 1, PL_SCORE = 2, PL_PLY = 4, PL_RESULT = 8 };

/* Parse the entry whose lines run from text[start] to the "e" line at
   text[stop]. */
static int
plain_parse(const char *text, size_t start, size_t stop, pf_sfentry *e,
    char *err, size_t errlen)
{
	static const char *names[] = { "move", "score", "ply", "result" };
	char buf[128], ferr[96];
	size_t pos = start, klen, vs, vlen;
	const char *k, *v;
	unsigned seen = 0, bit;
	long x;
	line l;
	int i;

	memset(e, 0, sizeof(*e));
	for (; pos < stop; pos = l.next) {
		(void)next_line(text, stop, pos, 1, &l);
		if (l.start == l.end)
			continue;
		k = text + l.start;
		for (klen = 0; l.start + klen < l.end && k[klen] != ' ' &&
		    k[klen] != '\t'; klen++)
			;
		for (vs = l.start + klen; vs < l.end && (text[vs] == ' ' ||
		    text[vs] == '\t'); vs++)
			;
		v = text + vs;
		vlen = l.end - vs;
		if (pos == start || (klen == 3 && memcmp(k, "fen", 3) == 0)) {
			if (pos != start || klen != 3 || memcmp(k, "fen", 3)) {
				seterr(err, errlen, pos == start ?
				    "entry does not begin with a fen line" :
				    "second fen line in one entry");
				return -1;
			}
			if (vlen >= sizeof(buf)) {
				seterr(err, errlen, "bad fen: too long");
				return -1;
			}
			memcpy(buf, v, vlen);
			buf[vlen] = '\0';
			if (pf_board_from_fen(&e->board, buf, ferr,
			    sizeof(ferr)) == -1) {
				seterr(err, errlen, "bad fen: %s", ferr);
				return -1;
			}
			continue;
		}
		for (i = 0; i < 4; i++)
			if (strlen(names[i]) == klen &&
			    memcmp(k, names[i], klen) == 0)
				break;
		if (i == 4) {
			seterr(err, errlen, "unknown line '%.*s'",
			    (int)(klen > 20 ? 20 : klen), k);
			return -1;
		}
		bit = 1u << i;
		if (seen & bit) {
			seterr(err, errlen, "two %s lines", names[i]);
			return -1;
		}
		seen |= bit;
		switch (bit) {
		case PL_MOVE:
			if ((vlen == 4 && memcmp(v, "0000", 4) == 0) ||
			    (vlen == 6 && memcmp(v, "(none)", 6) == 0))
				e->move = PF_MOVE_NONE;
			else if (pf_move_from_uci(&e->board, v, vlen,
			    &e->move) == -1) {
				seterr(err, errlen, "bad move '%.*s'",
				    (int)(vlen > 20 ? 20 : vlen), v);
				return -1;
			}
			break;
		case PL_SCORE:
			if (parse_int(v, vlen, -32768, 32767, &x) == -1)
				goto bad;
			e->score = (int16_t)x;
			break;
		case PL_PLY:
			if (parse_int(v, vlen, 0, 65535, &x) == -1)
				goto bad;
			e->ply = (uint16_t)x;
			break;
		case PL_RESULT:
			if (parse_int(v, vlen, -1, 1, &x) == -1)
				goto bad;
			e->result = (int8_t)x;
			break;
		}
	}
	for (i = 0; i < 4; i++)
		if (!(seen & 1u << i)) {
			seterr(err, errlen, "entry without a %s line",
			    names[i]);
			return -1;
		}
	return 0;
bad:
	seterr(err, errlen, "bad %s '%.*s'", names[i],
	    (int)(vlen > 20 ? 20 : vlen), v);
	return -1;
}

int
pf_plain_decode(const char *text, size_t len, int eof, pf_sfentry *e,
    size_t *used, char *err, size_t errlen)
{
	size_t pos = 0, start;
	line l;

	/* Blank lines before the entry. */
	for (;;) {
		if (!next_line(text, len, pos, eof, &l)) {
			*used = eof ? len : pos;
			return 0;
		}
		if (l.start != l.end)
			break;
		pos = l.next;
	}
	start = pos;
	/* Its lines, up to the "e" line. */
	for (;;) {
		if (!next_line(text, len, pos, eof, &l)) {
			if (!eof) {
				*used = start;
				return 0;
			}
			*used = len;
			seterr(err, errlen, "truncated: entry without its 'e' line");
			return -1;
		}
		if (l.end - l.start == 1 && text[l.start] == 'e')
			break;
		pos = l.next;
		if (pos - start > PLAIN_SCAN_MAX) {
			*used = pos;
			seterr(err, errlen, "no 'e' line within %d bytes",
			    PLAIN_SCAN_MAX);
			return -1;
		}
	}
	*used = l.next;
	if (plain_parse(text, start, l.start, e, err, errlen) == -1)
		return -1;
	return 1;
}

/* ---- bin (PackedSfenValue) ------------------------------------------- */

/*
 * The 256-bit stream of a PackedSfen: bit i is bit (i & 7) of byte i / 8,
 * which makes it one little-endian 256-bit number, kept here as 64-bit
 * words.  A position of at most 32 pieces takes at most 229 bits (13
 * for the kings, 30 pieces of 5 bits, 32 empty squares of 1, 34 for the
 * rest), and the reader stops at a 33rd piece (by bit 199), so neither
 * the writer nor the reader can run past the 256 bits.
 */
typedef struct bitw {
	uint64_t w[5];
	uint64_t acc;		/* bits not yet in w[i] */
	int n;			/* how many */
	int i;
} bitw;

static inline void
bitw_put(bitw *b, uint64_t v, int k)
{
	b->acc |= v << b->n;
	if (b->n + k >= 64) {
		b->w[b->i++] = b->acc;
		b->acc = v >> (64 - b->n);	/* b->n > 0: k < 64 */
		b->n += k - 64;
	} else
		b->n += k;
}

typedef struct bitr {
	uint64_t w[5];		/* w[4] = 0, for reads near the end */
	int pos;
} bitr;

/* The next 64 bits, without taking them. */
static inline uint64_t
bitr_peek(const bitr *b)
{
	int i = b->pos >> 6, off = b->pos & 63;

	return off ? b->w[i] >> off | b->w[i + 1] << (64 - off) : b->w[i];
}

static inline unsigned
bitr_get(bitr *b, int k)
{
	unsigned v = (unsigned)(bitr_peek(b) & ((1u << k) - 1));

	b->pos += k;
	return v;
}

#define RANK_OF(sq)	((sq) >> 3)
#define FILE_OF(sq)	((sq) & 7)

/*
 * The Huffman code of each square's piece code in stream order: empty 0,
 * pawn .. queen 1 then the type in three bits, then the colour; a king is
 * not written (its square is in the header).
 */
typedef struct huffcode {
	uint8_t code, bits;
} huffcode;

#define HUFF(c, t)	[PF_PIECE(c, t)] = { 1 | (t) << 1 | (c) << 4, 5 }
static const huffcode huff[256] = {
	HUFF(0, 0), HUFF(0, 1), HUFF(0, 2), HUFF(0, 3), HUFF(0, 4),
	HUFF(1, 0), HUFF(1, 1), HUFF(1, 2), HUFF(1, 3), HUFF(1, 4),
	[PF_NO_PIECE] = { 0, 1 },
};

static int
sfen_pack(const pf_board *b, uint8_t out[32], char *err, size_t errlen)
{
	bitw s;
	uint64_t cr;
	int r, f, sq, c, kf, rf, dir, side, i;
	unsigned castle = 0;
	uint8_t pc;
	char name[3];

	/*
	 * Castling is four flags; a reader finds each flag's rook by looking
	 * from the corner towards the king, so only the outermost rook on
	 * its side can carry the right.
	 */
	for (cr = b->castle_rooks; cr; cr &= cr - 1) {
		sq = __builtin_ctzll(cr);
		c = RANK_OF(sq) == 0 ? PF_WHITE : PF_BLACK;
		kf = FILE_OF(b->king_sq[c]);
		rf = FILE_OF(sq);
		side = rf > kf ? 0 : 1;
		dir = rf > kf ? 1 : -1;
		for (i = rf + dir; i >= 0 && i < 8; i += dir)
			if (b->squares[(sq & 56) + i] == PF_PIECE(c, PF_ROOK)) {
				sq_name(sq, name);
				seterr(err, errlen, "castling rook on %s is not "
				    "the outermost: bin cannot hold it", name);
				return -1;
			}
		castle |= 1u << (2 * c + side);
	}
	memset(&s, 0, sizeof(s));
	bitw_put(&s, (uint64_t)b->stm | (uint64_t)b->king_sq[PF_WHITE] << 1 |
	    (uint64_t)b->king_sq[PF_BLACK] << 7, 13);
	for (r = 56; r >= 0; r -= 8)
		for (f = 0; f < 8; f++) {
			pc = b->squares[r + f];
			bitw_put(&s, huff[pc].code, huff[pc].bits);
		}
	/* Castling K Q k q, ep, rule50 bits 0-5, fullmove bits 0-15, rule50
	   bit 6. */
	r = b->rule50 > 127 ? 127 : b->rule50;
	if (b->ep < 64)
		bitw_put(&s, castle | 1u << 4 | (unsigned)b->ep << 5, 11);
	else
		bitw_put(&s, castle, 5);
	bitw_put(&s, ((unsigned)r & 63) | (unsigned)b->fullmove << 6 |
	    ((unsigned)r >> 6) << 22, 23);
	s.w[s.i] = s.acc;
	for (i = 0; i < 4; i++)
		pf_put64(out + 8 * i, s.w[i]);
	return 0;
}

/* The squares in the order the stream has them: a8 .. h8, ..., a1 .. h1,
   so that stream place p holds square p ^ 56. */
static const uint8_t stream_order[64] = {
	56, 57, 58, 59, 60, 61, 62, 63, 48, 49, 50, 51, 52, 53, 54, 55,
	40, 41, 42, 43, 44, 45, 46, 47, 32, 33, 34, 35, 36, 37, 38, 39,
	24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23,
	8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
};

static int
sfen_unpack(const uint8_t in[32], pf_board *b, char *err, size_t errlen)
{
	static const char flag[4] = { 'K', 'Q', 'k', 'q' };
	uint8_t sq[64], packed[PF_PACKED_SIZE], nib, order[64];
	uint64_t occ, castle = 0, lo = 0, hi = 0, bb, v;
	bitr s;
	int stm, ksq[2], r, f, i, n = 2, t, c, kf, ep = 64, r50, fm;
	char name[3];

	for (i = 0; i < 4; i++)
		s.w[i] = pf_get64(in + 8 * i);
	s.w[4] = 0;
	s.pos = 0;
	memset(sq, PF_NO_PIECE, sizeof(sq));
	v = bitr_get(&s, 13);
	stm = (int)(v & 1);
	ksq[PF_WHITE] = (int)(v >> 1 & 63);
	ksq[PF_BLACK] = (int)(v >> 7 & 63);
	if (ksq[PF_WHITE] == ksq[PF_BLACK]) {
		sq_name(ksq[PF_WHITE], name);
		seterr(err, errlen, "both kings on %s", name);
		return -1;
	}
	sq[ksq[PF_WHITE]] = PF_PIECE(PF_WHITE, PF_KING);
	sq[ksq[PF_BLACK]] = PF_PIECE(PF_BLACK, PF_KING);
	occ = 1ULL << ksq[PF_WHITE] | 1ULL << ksq[PF_BLACK];
	/* The other 62 squares in stream order (the 64 without the kings'
	   two, the later one taken out first); a run of empty squares is a
	   run of 0 bits, taken at once. */
	memcpy(order, stream_order, 64);
	r = ksq[PF_WHITE] ^ 56;		/* a square's place in the stream */
	f = ksq[PF_BLACK] ^ 56;
	if (r < f) {
		t = r;
		r = f;
		f = t;
	}
	memmove(order + r, order + r + 1, (size_t)(63 - r));
	memmove(order + f, order + f + 1, (size_t)(63 - f));
	for (i = 0, n = 2; i < 62; i++) {
		v = bitr_peek(&s);
		t = v ? __builtin_ctzll(v) : 64;
		if (t > 62 - i)
			t = 62 - i;
		i += t;
		s.pos += t;
		if (i == 62)
			break;
		v = bitr_peek(&s);
		s.pos += 5;
		t = (int)(v >> 1 & 7);
		c = (int)(v >> 4 & 1);
		if (t > PF_QUEEN) {
			sq_name(order[i], name);
			seterr(err, errlen, "bad piece code %d on %s",
			    1 | t << 1, name);
			return -1;
		}
		if (++n > 32) {
			seterr(err, errlen, "more than 32 pieces");
			return -1;
		}
		sq[order[i]] = PF_PIECE(c, t);
		occ |= 1ULL << order[i];
	}
	/* Each castling flag's rook: the first rook of its colour from the
	   corner towards the king, as Stockfish's reader looks for it. */
	v = bitr_get(&s, 5);
	for (i = 0; i < 4; i++) {
		if (!(v >> i & 1))
			continue;
		c = i >> 1;
		r = c == PF_WHITE ? 0 : 56;
		if ((ksq[c] & 56) != r) {
			seterr(err, errlen, "castling right %c with the king "
			    "off its first rank", flag[i]);
			return -1;
		}
		kf = FILE_OF(ksq[c]);
		for (f = i & 1 ? 0 : 7; f != kf; f += i & 1 ? 1 : -1)
			if (sq[r + f] == PF_PIECE(c, PF_ROOK))
				break;
		if (f == kf) {
			seterr(err, errlen, "castling right %c without its "
			    "rook", flag[i]);
			return -1;
		}
		castle |= 1ULL << (r + f);
	}
	if (v >> 4 & 1)
		ep = (int)bitr_get(&s, 6);
	v = bitr_get(&s, 23);
	r50 = (int)(v & 63) | (int)(v >> 22 & 1) << 6;
	fm = (int)(v >> 6 & 0xFFFF);
	if (s.pos > 256) {
		seterr(err, errlen, "position runs past 256 bits");
		return -1;
	}

	/* As the packed position of chess.h, for pf_board_unpack. */
	for (bb = occ, i = 0; bb; bb &= bb - 1, i++) {
		f = __builtin_ctzll(bb);
		nib = (castle >> f & 1) ? (uint8_t)(6 | (sq[f] & 8)) : sq[f];
		if (i < 16)
			lo |= (uint64_t)nib << (4 * i);
		else
			hi |= (uint64_t)nib << (4 * (i - 16));
	}
	pf_put64(packed, occ);
	pf_put64(packed + 8, lo);
	pf_put64(packed + 16, hi);
	packed[24] = (uint8_t)(stm << 7 | ep);
	packed[25] = (uint8_t)r50;
	pf_put16(packed + 26, (uint16_t)fm);
	return pf_board_unpack(b, packed, 0, err, errlen);
}

int
pf_bin_encode(const pf_sfentry *e, uint8_t out[PF_BIN_SIZE], char *err,
    size_t errlen)
{
	if (sfen_pack(&e->board, out, err, errlen) == -1)
		return -1;
	pf_put16(out + 32, (uint16_t)e->score);
	pf_put16(out + 34, pf_sfmove_encode(e->move));
	pf_put16(out + 36, e->ply);
	out[38] = (uint8_t)(e->result > 0 ? 1 : e->result < 0 ? -1 : 0);
	out[39] = 0xFF;
	return 0;
}

int
pf_bin_decode(const uint8_t in[PF_BIN_SIZE], pf_sfentry *e, char *err,
    size_t errlen)
{
	char ferr[96], name[8];
	int8_t result = (int8_t)in[38];

	if (sfen_unpack(in, &e->board, ferr, sizeof(ferr)) == -1) {
		seterr(err, errlen, "bad position: %s", ferr);
		return -1;
	}
	e->score = (int16_t)pf_get16(in + 32);
	e->move = pf_sfmove_decode(pf_get16(in + 34));
	if (e->move != PF_MOVE_NONE && !pf_is_legal(&e->board, e->move)) {
		seterr(err, errlen, "bad move %s (raw 0x%04x): not legal",
		    move_name(e->move, name), (unsigned)pf_get16(in + 34));
		return -1;
	}
	e->ply = pf_get16(in + 36);
	if (result < -1 || result > 1) {
		seterr(err, errlen, "bad result %d (not 1, 0 or -1)", result);
		return -1;
	}
	e->result = result;
	return 0;
}

/* ---- marlinformat ---------------------------------------------------- */

/* The side to move's score in internal units, from a centipawn score of
   White's view. */
static int16_t
score_from_white_cp(int16_t cp, int stm)
{
	int16_t s = pf_sfscore_from_cp(cp);

	return (int16_t)(stm == PF_BLACK ? -s : s);
}

static int16_t
score_to_white_cp(int16_t s, int stm)
{
	int16_t cp = pf_sfscore_to_cp(s);

	return (int16_t)(stm == PF_BLACK ? -cp : cp);
}

/* The result from White's view, 1 / 0 / -1. */
static int
white_result(const pf_sfentry *e)
{
	int r = e->result > 0 ? 1 : e->result < 0 ? -1 : 0;

	return e->board.stm == PF_BLACK ? -r : r;
}

static void
marlin_put(const pf_board *b, int16_t white_cp, int wresult,
    uint8_t out[PF_MARLIN_SIZE])
{
	pf_board_pack(b, out);
	pf_put16(out + 28, (uint16_t)white_cp);
	out[30] = (uint8_t)(wresult + 1);
	out[31] = 0;
}

void
pf_marlin_encode(const pf_sfentry *e, uint8_t out[PF_MARLIN_SIZE])
{
	marlin_put(&e->board, score_to_white_cp(e->score, e->board.stm),
	    white_result(e), out);
}

/* The board, score and result of a marlinformat board; *wresult from
   White's view. */
static int
marlin_get(const uint8_t in[PF_MARLIN_SIZE], pf_board *b, int16_t *score,
    int *wresult, char *err, size_t errlen)
{
	char ferr[96];

	if (pf_board_unpack(b, in, 0, ferr, sizeof(ferr)) == -1) {
		seterr(err, errlen, "bad position: %s", ferr);
		return -1;
	}
	if (in[30] > 2) {
		seterr(err, errlen, "bad result %u (not 0, 1 or 2)",
		    (unsigned)in[30]);
		return -1;
	}
	*wresult = in[30] - 1;
	*score = score_from_white_cp((int16_t)pf_get16(in + 28), b->stm);
	return 0;
}

int
pf_marlin_decode(const uint8_t in[PF_MARLIN_SIZE], pf_sfentry *e,
    char *err, size_t errlen)
{
	int wr;

	if (marlin_get(in, &e->board, &e->score, &wr, err, errlen) == -1)
		return -1;
	e->result = (int8_t)(e->board.stm == PF_BLACK ? -wr : wr);
	e->move = PF_MOVE_NONE;
	e->ply = board_ply(&e->board);
	return 0;
}

/* ---- bulletformat ---------------------------------------------------- */

void
pf_bullet_encode(const pf_sfentry *e, uint8_t out[PF_BULLET_SIZE])
{
	const pf_board *b = &e->board;
	uint8_t nib[64];
	uint64_t occ = 0, bb, lo = 0, hi = 0;
	int stm = b->stm, flip = stm == PF_BLACK ? 56 : 0, sq, i;
	uint8_t pc;

	/* Mirrored when black is to move, colour bit 0 = the side to move. */
	for (bb = b->by_colour[0] | b->by_colour[1]; bb; bb &= bb - 1) {
		sq = __builtin_ctzll(bb);
		pc = b->squares[sq];
		occ |= 1ULL << (sq ^ flip);
		nib[sq ^ flip] = (uint8_t)(PF_PIECE_TYPE(pc) |
		    (PF_PIECE_COLOUR(pc) ^ stm) << 3);
	}
	for (bb = occ, i = 0; bb; bb &= bb - 1, i++) {
		sq = __builtin_ctzll(bb);
		if (i < 16)
			lo |= (uint64_t)nib[sq] << (4 * i);
		else if (i < 32)
			hi |= (uint64_t)nib[sq] << (4 * (i - 16));
	}
	pf_put64(out, occ);
	pf_put64(out + 8, lo);
	pf_put64(out + 16, hi);
	pf_put16(out + 24, (uint16_t)pf_sfscore_to_cp(e->score));
	out[26] = (uint8_t)(e->result > 0 ? 2 : e->result < 0 ? 0 : 1);
	out[27] = (uint8_t)(b->king_sq[stm] ^ flip);
	out[28] = (uint8_t)(b->king_sq[!stm] ^ flip ^ 56);
	out[29] = out[30] = out[31] = 0;
}

int
pf_bullet_decode(const uint8_t in[PF_BULLET_SIZE], pf_sfentry *e,
    char *err, size_t errlen)
{
	uint8_t packed[PF_PACKED_SIZE];
	uint64_t occ = pf_get64(in), bb;
	int n = __builtin_popcountll(occ), i, t;
	char ferr[96], name[3];

	if (n > 32) {
		seterr(err, errlen, "%d pieces (at most 32)", n);
		return -1;
	}
	/* Types 6 and 7 mean something else in the packed position. */
	for (bb = occ, i = 0; bb; bb &= bb - 1, i++) {
		t = in[8 + i / 2] >> (i & 1 ? 4 : 0) & 7;
		if (t > PF_KING) {
			sq_name(__builtin_ctzll(bb), name);
			seterr(err, errlen, "bad piece code %d on %s",
			    in[8 + i / 2] >> (i & 1 ? 4 : 0) & 15, name);
			return -1;
		}
	}
	memcpy(packed, in, 24);
	packed[24] = 64;	/* white to move, no en passant */
	packed[25] = 0;
	pf_put16(packed + 26, 1);
	if (pf_board_unpack(&e->board, packed, 0, ferr, sizeof(ferr)) == -1) {
		seterr(err, errlen, "bad position: %s", ferr);
		return -1;
	}
	if (in[27] != e->board.king_sq[PF_WHITE] ||
	    (in[28] ^ 56) != e->board.king_sq[PF_BLACK]) {
		seterr(err, errlen, "king squares %u and %u disagree with "
		    "the board", (unsigned)in[27], (unsigned)in[28]);
		return -1;
	}
	if (in[26] > 2) {
		seterr(err, errlen, "bad result %u (not 0, 1 or 2)",
		    (unsigned)in[26]);
		return -1;
	}
	e->score = pf_sfscore_from_cp((int16_t)pf_get16(in + 24));
	e->result = (int8_t)(in[26] - 1);
	e->move = PF_MOVE_NONE;
	e->ply = 0;
	return 0;
}

/* ---- viriformat ------------------------------------------------------ */

long
pf_viri_game_size(const uint8_t *buf, size_t len)
{
	size_t pos;

	for (pos = PF_VIRI_HEADER_SIZE; pos + PF_VIRI_PAIR_SIZE <= len;
	    pos += PF_VIRI_PAIR_SIZE)
		if ((buf[pos] | buf[pos + 1] | buf[pos + 2] | buf[pos + 3]) == 0)
			return (long)(pos + PF_VIRI_PAIR_SIZE);
	return 0;
}

int
pf_viri_game_begin(pf_viri_game *g, const uint8_t header[PF_VIRI_HEADER_SIZE],
    char *err, size_t errlen)
{
	int16_t score;
	int wr;

	if (marlin_get(header, &g->board, &score, &wr, err, errlen) == -1)
		return -1;
	g->white_result = (int8_t)wr;
	g->ply = board_ply(&g->board);
	g->nmoves = 0;
	return 0;
}

int
pf_viri_game_next(pf_viri_game *g, const uint8_t pair[PF_VIRI_PAIR_SIZE],
    pf_sfentry *e, char *err, size_t errlen)
{
	uint16_t v = pf_get16(pair);
	int16_t cp = (int16_t)pf_get16(pair + 2);
	char name[8];
	pf_undo u;
	pf_move m;

	if (v == 0) {
		if (cp == 0)
			return 0;
		seterr(err, errlen, "bad move: no move, with score %d", cp);
		return -1;
	}
	m = pf_virimove_decode(v);
	if (!pf_is_legal(&g->board, m)) {
		seterr(err, errlen, "bad move %s (raw 0x%04x): not legal",
		    move_name(m, name), (unsigned)v);
		return -1;
	}
	e->board = g->board;
	e->move = m;
	e->score = score_from_white_cp(cp, g->board.stm);
	e->ply = g->ply;
	e->result = (int8_t)(g->board.stm == PF_BLACK ? -g->white_result :
	    g->white_result);
	pf_make_move(&g->board, m, &u);
	if (g->ply < 65535)
		g->ply++;
	g->nmoves++;
	return 1;
}

struct pf_viri_writer {
	uint8_t *buf;
	size_t len, cap;	/* cap >= len + 4 while a game is open, so
				   that the terminator always fits */
	pf_board next;		/* the position after the last move added */
	uint8_t next_packed[PF_PACKED_SIZE];
	int8_t white_result;
	uint32_t nmoves;
	int open;
};

pf_viri_writer *
pf_viri_writer_new(void)
{
	return calloc(1, sizeof(pf_viri_writer));
}

void
pf_viri_writer_free(pf_viri_writer *w)
{
	if (w == NULL)
		return;
	free(w->buf);
	free(w);
}

int
pf_viri_writer_follows(const pf_viri_writer *w, const pf_sfentry *e)
{
	uint8_t packed[PF_PACKED_SIZE];

	if (!w->open)
		return 0;
	pf_board_pack(&e->board, packed);
	return memcmp(packed, w->next_packed, PF_PACKED_SIZE) == 0;
}

static int
reserve(pf_viri_writer *w, size_t need)
{
	size_t cap = w->cap ? w->cap : 1024;
	uint8_t *p;

	if (w->len + need <= w->cap)
		return 0;
	while (cap < w->len + need)
		cap *= 2;
	if ((p = realloc(w->buf, cap)) == NULL)
		return -1;
	w->buf = p;
	w->cap = cap;
	return 0;
}

int
pf_viri_writer_add(pf_viri_writer *w, const pf_sfentry *e, char *err,
    size_t errlen)
{
	int wr = white_result(e);
	uint8_t *p;
	char name[8];
	pf_undo u;

	if (e->move == PF_MOVE_NONE) {
		seterr(err, errlen, "entry has no move");
		return -1;
	}
	if (!pf_is_legal(&e->board, e->move)) {
		seterr(err, errlen, "bad move %s: not legal",
		    move_name(e->move, name));
		return -1;
	}
	if (!w->open) {
		w->len = 0;
		if (reserve(w, PF_VIRI_HEADER_SIZE + 2 * PF_VIRI_PAIR_SIZE) ==
		    -1) {
			seterr(err, errlen, "out of memory");
			return -1;
		}
		marlin_put(&e->board, 0, wr, w->buf);
		w->len = PF_VIRI_HEADER_SIZE;
		w->white_result = (int8_t)wr;
		w->nmoves = 0;
		w->open = 1;
	} else {
		if (!pf_viri_writer_follows(w, e)) {
			seterr(err, errlen, "the position does not follow the "
			    "previous move: end the game first");
			return -1;
		}
		if (wr != w->white_result) {
			seterr(err, errlen, "result differs from the game's");
			return -1;
		}
		if (reserve(w, 2 * PF_VIRI_PAIR_SIZE) == -1) {
			seterr(err, errlen, "out of memory");
			return -1;
		}
	}
	p = w->buf + w->len;
	pf_put16(p, pf_virimove_encode(e->move));
	pf_put16(p + 2, (uint16_t)score_to_white_cp(e->score, e->board.stm));
	w->len += PF_VIRI_PAIR_SIZE;
	w->nmoves++;
	w->next = e->board;
	pf_make_move(&w->next, e->move, &u);
	pf_board_pack(&w->next, w->next_packed);
	return 0;
}

uint32_t
pf_viri_writer_moves(const pf_viri_writer *w)
{
	return w->open ? w->nmoves : 0;
}

void
pf_viri_writer_end(pf_viri_writer *w, const uint8_t **out, size_t *len)
{
	if (!w->open) {
		*out = w->buf;
		*len = 0;
		return;
	}
	memset(w->buf + w->len, 0, PF_VIRI_PAIR_SIZE);
	w->len += PF_VIRI_PAIR_SIZE;
	w->open = 0;
	*out = w->buf;
	*len = w->len;
}
