/*
 * chess_text.c - the board as text and bytes: FEN in and out (X-FEN and
 * Shredder-FEN castling), strict validation, the 28-byte packed position,
 * the position hash, SAN and UCI move text, and the game-end helpers.
 *
 * Everything that comes from outside (a FEN, a packed position from a
 * stream) is validated before a board is handed back, because an invalid
 * position can crash an engine.  Errors are written as short sentences
 * into the caller's buffer.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "chess.h"

static const char piece_chars[] = "PNBRQK??pnbrqk";
static const char *colour_names[2] = { "white", "black" };

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

/*
 * The build targets baseline x86-64, where __builtin_popcountll is a
 * library call: a few shifts and one multiply are cheaper, unless the
 * compiler may use the POPCNT instruction.
 */
static inline int
popcount(uint64_t b)
{
#if defined(__POPCNT__)
	return __builtin_popcountll(b);
#else
	return pf_popcount_swar(b);
#endif
}

/* 1 if b has at most one bit set. */
static inline int
at_most_one(uint64_t b)
{
	return (b & (b - 1)) == 0;
}

/* Little-endian u64 load and store: one instruction on a little-endian
   host, bytes elsewhere. */
static inline uint64_t
get64le(const uint8_t *p)
{
	uint64_t v;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, 8);
#else
	int k;

	for (v = 0, k = 0; k < 8; k++)
		v |= (uint64_t)p[k] << (8 * k);
#endif
	return v;
}

static inline void
put64le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	int k;

	for (k = 0; k < 8; k++)
		p[k] = (uint8_t)(v >> (8 * k));
#endif
}

/* ---- validation ---------------------------------------------------- */

static int
castling_is_standard(const pf_board *b)
{
	uint64_t cr = b->castle_rooks;

	if (cr & ~(0x81ULL | 0x81ULL << 56))
		return 0;
	if ((cr & 0x81ULL) && b->king_sq[PF_WHITE] != 4)
		return 0;
	if ((cr & 0x81ULL << 56) && b->king_sq[PF_BLACK] != 60)
		return 0;
	return 1;
}

/*
 * The ep square must be one a pawn of the side not to move could just
 * have double-pushed over: right rank, that pawn in front of it, the
 * square itself and the one behind it empty.
 */
static int
ep_possible(const pf_board *b, int ep)
{
	int them = !b->stm, pawn_sq, from_sq;

	if (ep < 0 || ep >= 64 || (ep >> 3) != (b->stm == PF_WHITE ? 5 : 2))
		return 0;
	pawn_sq = b->stm == PF_WHITE ? ep - 8 : ep + 8;
	from_sq = b->stm == PF_WHITE ? ep + 8 : ep - 8;
	return b->squares[pawn_sq] == PF_PIECE(them, PF_PAWN) &&
	    b->squares[ep] == PF_NO_PIECE &&
	    b->squares[from_sq] == PF_NO_PIECE;
}

/* Kings, pawns and piece counts: what must hold before anything else. */
static int
validate_material(const pf_board *b, char *err, size_t errlen)
{
	uint64_t occ = b->by_colour[0] | b->by_colour[1], types = 0;
	int c, t, sq, n;

	if (b->by_colour[0] & b->by_colour[1])
		goto inconsistent;
	for (t = 0; t < 6; t++) {
		if (types & b->by_type[t])
			goto inconsistent;
		types |= b->by_type[t];
	}
	if (types != occ)
		goto inconsistent;
	for (sq = 0; sq < 64; sq++) {
		uint8_t pc = b->squares[sq];

		if (pc == PF_NO_PIECE) {
			if (occ >> sq & 1)
				goto inconsistent;
			continue;
		}
		if (PF_PIECE_TYPE(pc) > PF_KING || pc > 15 ||
		    !(b->by_type[PF_PIECE_TYPE(pc)] >> sq & 1) ||
		    !(b->by_colour[PF_PIECE_COLOUR(pc)] >> sq & 1))
			goto inconsistent;
	}
	for (c = 0; c < 2; c++) {
		n = popcount(b->by_type[PF_KING] & b->by_colour[c]);
		if (n == 0) {
			seterr(err, errlen, "no %s king", colour_names[c]);
			return -1;
		}
		if (n == 2) {
			seterr(err, errlen, "two %s kings", colour_names[c]);
			return -1;
		}
		if (n > 2) {
			seterr(err, errlen, "%d %s kings", n, colour_names[c]);
			return -1;
		}
	}
	if (b->by_type[PF_PAWN] & (0xFFULL | 0xFFULL << 56)) {
		seterr(err, errlen, "pawn on first or last rank");
		return -1;
	}
	for (c = 0; c < 2; c++) {
		if (popcount(b->by_colour[c]) > 16) {
			seterr(err, errlen, "more than 16 %s pieces",
			    colour_names[c]);
			return -1;
		}
		if (popcount(b->by_colour[c] & b->by_type[PF_PAWN]) > 8) {
			seterr(err, errlen, "more than 8 %s pawns",
			    colour_names[c]);
			return -1;
		}
	}
	if (b->stm > 1) {
		seterr(err, errlen, "bad side to move");
		return -1;
	}
	return 0;
inconsistent:
	seterr(err, errlen, "inconsistent board arrays");
	return -1;
}

/* 1 if squares a and b lie on one rank, file or diagonal through k. */
static int
on_one_line(int k, int a, int b)
{
	int fa = (a & 7) - (k & 7), ra = (a >> 3) - (k >> 3);
	int fb = (b & 7) - (k & 7), rb = (b >> 3) - (k >> 3);

	if (fa * rb != fb * ra)
		return 0;
	return fa == 0 || ra == 0 || fa == ra || fa == -ra;
}

/*
 * A check that no move can give, as python-chess's Board.status() finds
 * them, and a little more.  One move gives check with the piece that
 * moved and at most one more by a slider it uncovers (en passant and
 * castling uncover along a rank, or from squares no second line of a
 * bishop can pass), so:
 *   - two checkers that are both pawns or knights: nothing was uncovered;
 *   - two checkers on one line through the king: the piece that moved
 *     would have crossed the king;
 *   - two bishops: a bishop leaving one diagonal of the king cannot reach
 *     the other, and no promotion or en passant can uncover one while
 *     making the other;
 *   - ep (the square a pawn just double-pushed over, or PF_SQ_NONE): the
 *     push can give one check only, by the pawn or uncovered behind its
 *     start square, and the king was not in check before it.
 * Any position of a legal game passes.  0, or -1 with the reason.
 */
static int
impossible_check(const pf_board *b, int ep, char *err, size_t errlen)
{
	uint64_t ch = b->checkers, sliders;
	int ksq = b->king_sq[b->stm], c1, c2;

	if (ch == 0)
		return 0;
	if (ep < 64 && ep_possible(b, ep)) {
		int to = b->stm == PF_WHITE ? ep - 8 : ep + 8;
		int from = b->stm == PF_WHITE ? ep + 8 : ep - 8;
		uint64_t occ = b->by_colour[0] | b->by_colour[1];

		occ = (occ & ~(1ULL << to)) | 1ULL << from;
		if (!at_most_one(ch) || ((ch & (1ULL << to)) == 0 &&
		    (pf_attackers_to(b, ksq, occ) & b->by_colour[!b->stm]))) {
			seterr(err, errlen, "impossible check after the double "
			    "pawn push of the en passant square");
			return -1;
		}
	}
	if (at_most_one(ch))
		return 0;
	c1 = __builtin_ctzll(ch);
	c2 = 63 - __builtin_clzll(ch);
	sliders = b->by_type[PF_BISHOP] | b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN];
	if ((ch & sliders) == 0) {
		seterr(err, errlen, "impossible double check by two pawns or "
		    "knights");
		return -1;
	}
	if (on_one_line(ksq, c1, c2)) {
		seterr(err, errlen, "impossible double check from both sides "
		    "of the king");
		return -1;
	}
	if ((ch & b->by_type[PF_BISHOP]) == ch) {
		seterr(err, errlen, "impossible double check by two bishops");
		return -1;
	}
	return 0;
}

int
pf_board_validate(const pf_board *b, char *err, size_t errlen)
{
	char s[3];
	int c, ksq;
	uint64_t cr, kbit;

	if (validate_material(b, err, errlen) == -1)
		return -1;
	for (c = 0; c < 2; c++) {
		kbit = b->by_type[PF_KING] & b->by_colour[c];
		if (b->king_sq[c] >= 64 || !(kbit >> b->king_sq[c] & 1)) {
			seterr(err, errlen, "inconsistent board arrays");
			return -1;
		}
	}
	if (pf_square_attacked(b, b->king_sq[!b->stm], b->stm)) {
		seterr(err, errlen, "side not to move is in check");
		return -1;
	}
	if (popcount(pf_attackers_to(b, b->king_sq[b->stm],
	    b->by_colour[0] | b->by_colour[1]) & b->by_colour[!b->stm]) > 2) {
		seterr(err, errlen, "side to move is in check by more than "
		    "two pieces");
		return -1;
	}
	if (impossible_check(b, b->ep, err, errlen) == -1)
		return -1;
	for (c = 0; c < 2; c++) {
		uint64_t rank = c == PF_WHITE ? 0xFFULL : 0xFFULL << 56;
		int left = 0, right = 0, rsq;

		cr = b->castle_rooks & (c == PF_WHITE ? 0xFFULL :
		    0xFFULL << 56);
		ksq = b->king_sq[c];
		while (cr) {
			rsq = __builtin_ctzll(cr);
			cr &= cr - 1;
			sq_name(rsq, s);
			if (b->squares[rsq] != PF_PIECE(c, PF_ROOK)) {
				seterr(err, errlen, "castling right on %s "
				    "without a %s rook there", s,
				    colour_names[c]);
				return -1;
			}
			if (!((1ULL << ksq) & rank)) {
				seterr(err, errlen, "castling right on %s but "
				    "the %s king is not on its first rank", s,
				    colour_names[c]);
				return -1;
			}
			if (rsq > ksq)
				right++;
			else
				left++;
		}
		if (left > 1 || right > 1) {
			seterr(err, errlen, "two %s castling rights on the "
			    "same side of the king", colour_names[c]);
			return -1;
		}
		/* A king that may castle has not moved: it stands where it
		   started, between two rooks (Chess960 too), never in a
		   corner. */
		if (left + right > 0 && ((ksq & 7) == 0 || (ksq & 7) == 7)) {
			sq_name(ksq, s);
			seterr(err, errlen, "castling right with the %s king "
			    "on %s, a corner", colour_names[c], s);
			return -1;
		}
	}
	if (b->castle_rooks & ~(0xFFULL | 0xFFULL << 56)) {
		sq_name(__builtin_ctzll(b->castle_rooks &
		    ~(0xFFULL | 0xFFULL << 56)), s);
		seterr(err, errlen, "castling right on %s, not a first rank", s);
		return -1;
	}
	if (!b->chess960 && !castling_is_standard(b)) {
		seterr(err, errlen, "castling rights need Chess960");
		return -1;
	}
	if (b->ep != PF_SQ_NONE) {
		if (b->ep >= 64 || !ep_possible(b, b->ep)) {
			if (b->ep < 64)
				sq_name(b->ep, s);
			seterr(err, errlen, "impossible en passant square %s",
			    b->ep < 64 ? s : "(out of range)");
			return -1;
		}
		if (!pf_ep_capture_exists(b, b->ep)) {
			sq_name(b->ep, s);
			seterr(err, errlen, "en passant square %s allows no "
			    "legal capture", s);
			return -1;
		}
	}
	return 0;
}

/* ---- FEN ----------------------------------------------------------- */

/* Resolve one castling letter into a rook square; -1 with reason. */
static int
castle_letter(pf_board *b, char ch, char *err, size_t errlen)
{
	int c = isupper((unsigned char)ch) ? PF_WHITE : PF_BLACK;
	int base = c == PF_WHITE ? 0 : 56, ksq = b->king_sq[c], f, rsq = -1;
	uint8_t rook = PF_PIECE(c, PF_ROOK);
	char lc = (char)tolower((unsigned char)ch);
	const char *rank = c == PF_WHITE ? "1" : "8";

	if ((ksq >> 3) != (base >> 3)) {
		seterr(err, errlen, "castling right %c without the %s king on "
		    "its first rank", ch, colour_names[c]);
		return -1;
	}
	if (lc == 'k' || lc == 'q') {
		/* X-FEN: the outermost rook on that side of the king. */
		if (lc == 'k') {
			for (f = 7; f > (ksq & 7); f--)
				if (b->squares[base + f] == rook) {
					rsq = base + f;
					break;
				}
		} else {
			for (f = 0; f < (ksq & 7); f++)
				if (b->squares[base + f] == rook) {
					rsq = base + f;
					break;
				}
		}
		if (rsq < 0) {
			seterr(err, errlen, "castling right %c without a rook "
			    "on %c%s", ch, lc == 'k' ? 'h' : 'a', rank);
			return -1;
		}
	} else if (lc >= 'a' && lc <= 'h') {
		rsq = base + (lc - 'a');
		if (b->squares[rsq] != rook) {
			seterr(err, errlen, "castling right %c without a rook "
			    "on %c%s", ch, lc, rank);
			return -1;
		}
	} else {
		seterr(err, errlen, "bad castling field character '%c'", ch);
		return -1;
	}
	if (b->castle_rooks >> rsq & 1) {
		seterr(err, errlen, "castling right %c given twice", ch);
		return -1;
	}
	b->castle_rooks |= 1ULL << rsq;
	return 0;
}

/* Split s into at most max whitespace-separated fields (s is modified). */
static int
split_fields(char *s, char **fields, int max)
{
	int n = 0;

	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			*s++ = '\0';
		if (!*s)
			break;
		if (n == max)
			return max + 1;
		fields[n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n' &&
		    *s != '\r')
			s++;
	}
	return n;
}

static int
parse_clock(const char *s, long max, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int
pf_board_from_fen(pf_board *b, const char *fen, char *err, size_t errlen)
{
	char buf[256], *f[7], sqs[3];
	const char *p;
	int n, rank = 7, file = 0, ep = PF_SQ_NONE;
	long half = 0, full = 1;
	pf_board nb;

	if (fen == NULL || strlen(fen) >= sizeof(buf)) {
		seterr(err, errlen, "FEN too long");
		return -1;
	}
	strcpy(buf, fen);
	n = split_fields(buf, f, 6);
	if (n < 4 || n > 6) {
		seterr(err, errlen, "FEN needs 4 to 6 fields, not %d",
		    n > 6 ? 7 : n);
		return -1;
	}
	pf_board_clear(&nb);
	for (p = f[0]; *p; p++) {
		const char *pc;

		if (*p == '/') {
			if (file != 8 || rank == 0) {
				seterr(err, errlen, "bad FEN board: rank %d "
				    "has %d files", rank + 1, file);
				return -1;
			}
			rank--;
			file = 0;
		} else if (*p >= '1' && *p <= '8') {
			file += *p - '0';
			if (file > 8) {
				seterr(err, errlen, "bad FEN board: rank %d "
				    "too long", rank + 1);
				return -1;
			}
		} else if ((pc = strchr(piece_chars, *p)) != NULL &&
		    *p != '?') {
			if (file > 7) {
				seterr(err, errlen, "bad FEN board: rank %d "
				    "too long", rank + 1);
				return -1;
			}
			pf_board_put_piece(&nb, rank * 8 + file,
			    (uint8_t)(pc - piece_chars));
			file++;
		} else {
			seterr(err, errlen, "bad FEN board character '%c'",
			    *p);
			return -1;
		}
	}
	if (rank != 0 || file != 8) {
		seterr(err, errlen, "bad FEN board: not 8 full ranks");
		return -1;
	}
	if (strcmp(f[1], "w") == 0)
		nb.stm = PF_WHITE;
	else if (strcmp(f[1], "b") == 0)
		nb.stm = PF_BLACK;
	else {
		seterr(err, errlen, "bad side to move '%s'", f[1]);
		return -1;
	}
	if (validate_material(&nb, err, errlen) == -1)
		return -1;
	pf_board_refresh(&nb);
	if (strcmp(f[2], "-") != 0)
		for (p = f[2]; *p; p++)
			if (castle_letter(&nb, *p, err, errlen) == -1)
				return -1;
	if (strcmp(f[3], "-") != 0) {
		if (strlen(f[3]) != 2 || f[3][0] < 'a' || f[3][0] > 'h' ||
		    f[3][1] < '1' || f[3][1] > '8') {
			seterr(err, errlen, "bad en passant field '%s'", f[3]);
			return -1;
		}
		ep = (f[3][1] - '1') * 8 + (f[3][0] - 'a');
		if (!ep_possible(&nb, ep)) {
			sq_name(ep, sqs);
			seterr(err, errlen, "impossible en passant square %s",
			    sqs);
			return -1;
		}
	}
	if (n >= 5 && parse_clock(f[4], 65535, &half) == -1) {
		seterr(err, errlen, "bad half-move clock '%s'", f[4]);
		return -1;
	}
	if (n >= 6 && parse_clock(f[5], 65535, &full) == -1) {
		seterr(err, errlen, "bad full-move number '%s'", f[5]);
		return -1;
	}
	nb.rule50 = (uint8_t)(half > 255 ? 255 : half);
	nb.fullmove = (uint16_t)(full < 1 ? 1 : full);
	nb.chess960 = !castling_is_standard(&nb);
	/* The ep square says the last move was a double push, even when
	   no capture is possible (it is then dropped below). */
	if (ep != PF_SQ_NONE && impossible_check(&nb, ep, err, errlen) == -1)
		return -1;
	nb.ep = (uint8_t)ep;
	pf_board_refresh(&nb);	/* drops an ep with no legal capture */
	if (pf_board_validate(&nb, err, errlen) == -1)
		return -1;
	*b = nb;
	return 0;
}

char *
pf_board_to_fen(const pf_board *b, char *buf)
{
	char *p = buf;
	int rank, file, empty, c;

	for (rank = 7; rank >= 0; rank--) {
		empty = 0;
		for (file = 0; file < 8; file++) {
			uint8_t pc = b->squares[rank * 8 + file];

			if (pc == PF_NO_PIECE) {
				empty++;
				continue;
			}
			if (empty)
				*p++ = (char)('0' + empty);
			empty = 0;
			*p++ = pc < 14 ? piece_chars[pc] : '?';
		}
		if (empty)
			*p++ = (char)('0' + empty);
		if (rank)
			*p++ = '/';
	}
	*p++ = ' ';
	*p++ = b->stm == PF_WHITE ? 'w' : 'b';
	*p++ = ' ';
	if (!b->castle_rooks)
		*p++ = '-';
	for (c = 0; c < 2; c++) {
		int base = c == PF_WHITE ? 0 : 56, ksq = b->king_sq[c], f, side;

		for (side = 0; side < 2; side++) {	/* 0 king side */
			int rsq = -1, outer = 1;

			for (f = 0; f < 8; f++)
				if ((b->castle_rooks >> (base + f) & 1) &&
				    (side == 0) == (f > (ksq & 7)))
					rsq = base + f;
			if (rsq < 0)
				continue;
			/* Is there another rook further out on that side? */
			for (f = 0; f < 8; f++)
				if (b->squares[base + f] == PF_PIECE(c, PF_ROOK)
				    && (side == 0 ? f > (rsq & 7) :
				    f < (rsq & 7)))
					outer = 0;
			if (!b->chess960 || outer)
				*p++ = side == 0 ? 'K' : 'Q';
			else
				*p++ = (char)('A' + (rsq & 7));
			if (c == PF_BLACK)
				p[-1] = (char)tolower((unsigned char)p[-1]);
		}
	}
	*p++ = ' ';
	if (b->ep != PF_SQ_NONE && b->ep < 64) {
		sq_name(b->ep, p);
		p += 2;
	} else
		*p++ = '-';
	sprintf(p, " %u %u", (unsigned)b->rule50, (unsigned)b->fullmove);
	return buf;
}

/* ---- packed position and hash -------------------------------------- */

/* The packed position's last 4 bytes: side to move, en passant square,
   rule-50 count, full-move number. */
static inline void
pack_state(const pf_board *b, uint8_t out[PF_PACKED_SIZE])
{
	out[24] = (uint8_t)((b->stm == PF_BLACK ? 0x80 : 0) |
	    (b->ep < 64 ? b->ep : 64));
	out[25] = b->rule50;
	out[26] = (uint8_t)(b->fullmove & 0xFF);
	out[27] = (uint8_t)(b->fullmove >> 8);
}

static void
pack_portable(const pf_board *b, uint8_t out[PF_PACKED_SIZE])
{
	uint64_t occ = b->by_colour[0] | b->by_colour[1], bb = occ;
	uint64_t lo = 0, hi = 0, cr = b->castle_rooks & occ;
	int i, sq;

	/* The nibbles go into two 64-bit words, 16 in each, written out
	   little-endian at the end. */
	for (i = 0; bb && i < 16; i++) {
		sq = __builtin_ctzll(bb);
		bb &= bb - 1;
		lo |= (uint64_t)(b->squares[sq] & 15) << (4 * i);
	}
	for (; bb && i < 32; i++) {
		sq = __builtin_ctzll(bb);
		bb &= bb - 1;
		hi |= (uint64_t)(b->squares[sq] & 15) << (4 * (i - 16));
	}
	/* A rook that carries a castling right is type 6 (the colour bit
	   kept); its nibble is the one of its rank among the pieces. */
	while (cr) {
		uint64_t *w, mask;

		sq = __builtin_ctzll(cr);
		cr &= cr - 1;
		i = popcount(occ & ((1ULL << sq) - 1));
		if (i >= 32)
			continue;
		w = i < 16 ? &lo : &hi;
		mask = 7ULL << (4 * (i & 15));
		*w = (*w & ~mask) | 6ULL << (4 * (i & 15));
	}
	put64le(out, occ);
	put64le(out + 8, lo);
	put64le(out + 16, hi);
	pack_state(b, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * pack_portable in a few vector instructions, for CPUs with AVX-512 VBMI2
 * (byte compress): the 64 square codes, a castling rook's made type 6,
 * are compressed to the occupied squares' in order; the first 32 become
 * 16 bytes of nibbles (two codes a byte, the first in the low nibble).
 * chess_fast's unit test compares it with a plain packing on every
 * position of the perft suites and of games played from them.
 */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2"))) static void
pack_vbmi2(const pf_board *b, uint8_t out[PF_PACKED_SIZE])
{
	uint64_t occ = b->by_colour[0] | b->by_colour[1];
	__m512i sq = _mm512_loadu_si512((const void *)b->squares);
	__m512i rook = _mm512_or_si512(_mm512_and_si512(sq,
	    _mm512_set1_epi8(8)), _mm512_set1_epi8(6));
	__m256i codes, pairs;

	sq = _mm512_mask_blend_epi8(b->castle_rooks & occ, sq, rook);
	codes = _mm512_castsi512_si256(_mm512_maskz_compress_epi8(occ, sq));
	codes = _mm256_and_si256(codes, _mm256_set1_epi8(15));
	/* byte 2k + byte 2k+1 times 16, in each 16-bit lane */
	pairs = _mm256_maddubs_epi16(codes, _mm256_set1_epi16(0x1001));
	put64le(out, occ);
	_mm_storeu_si128((__m128i *)(void *)(out + 8),
	    _mm256_cvtepi16_epi8(pairs));
	pack_state(b, out);
}

/*
 * pack_portable with BMI2, for CPUs whose PDEP and PEXT are fast: each of
 * the four bits of the pieces' nibbles is a bitboard (bit 0: knights,
 * rooks and kings; bit 1: bishops and rooks; bit 2: queens and kings; a
 * rook that carries a castling right has bits 1 and 2, type 6; bit 3:
 * black), which PEXT gathers to the occupied squares in order and PDEP
 * spreads to every fourth bit of the two nibble words.  chess_fast's unit
 * test compares it with a plain packing, as the AVX-512 build.
 */
__attribute__((target("bmi2"))) static void
pack_bmi2(const pf_board *b, uint8_t out[PF_PACKED_SIZE])
{
	const uint64_t bit0 = 0x1111111111111111ULL;
	uint64_t occ = b->by_colour[0] | b->by_colour[1];
	uint64_t cr = b->castle_rooks & occ;
	uint64_t x0 = _pext_u64((b->by_type[PF_KNIGHT] | b->by_type[PF_ROOK] |
	    b->by_type[PF_KING]) & ~cr, occ);
	uint64_t x1 = _pext_u64(((b->by_type[PF_BISHOP] | b->by_type[PF_ROOK]) &
	    ~cr) | cr, occ);
	uint64_t x2 = _pext_u64(((b->by_type[PF_QUEEN] | b->by_type[PF_KING]) &
	    ~cr) | cr, occ);
	uint64_t x3 = _pext_u64(b->by_colour[PF_BLACK], occ);

	put64le(out, occ);
	/* pieces 0-15, then 16-31 (at most 32 are packed) */
	put64le(out + 8, _pdep_u64(x0, bit0) | _pdep_u64(x1, bit0 << 1) |
	    _pdep_u64(x2, bit0 << 2) | _pdep_u64(x3, bit0 << 3));
	put64le(out + 16, _pdep_u64(x0 >> 16, bit0) |
	    _pdep_u64(x1 >> 16, bit0 << 1) | _pdep_u64(x2 >> 16, bit0 << 2) |
	    _pdep_u64(x3 >> 16, bit0 << 3));
	pack_state(b, out);
}
#endif

static void (*pack_fn)(const pf_board *, uint8_t *) = pack_portable;

void
pf_board_pack(const pf_board *b, uint8_t out[PF_PACKED_SIZE])
{
	pack_fn(b, out);
}

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 nib128;

/* 1 when a nibble of x equals v (the exact zero-nibble test). */
static inline int
has_nibble(nib128 x, unsigned v)
{
	const nib128 ones = ((nib128)0x1111111111111111ULL << 64) |
	    0x1111111111111111ULL;
	nib128 t = x ^ (ones * v);

	return ((t - ones) & ~t & (ones << 3)) != 0;
}
#endif

/*
 * The popcounts of pf_board_pack_next: the instruction in its build for
 * CPUs that have it (chosen at start-up, as the generator's in chess.c),
 * the portable form in the other.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
#define NEXT_POPCOUNT(b, fast)	((fast) ? __builtin_popcountll(b) : popcount(b))
#else
#define NEXT_POPCOUNT(b, fast)	popcount(b)
#endif

/*
 * The packed position after a move, from the one before it: the nibble of
 * the moving piece is taken out at its index and put in at the index of
 * its destination (over the captured piece's).  Castling, en passant,
 * promotions and any move that may change a castling right (a king's, one
 * from or onto a castling rook's square) are packed in full.
 */
static inline void
pack_next_impl(const uint8_t prev[PF_PACKED_SIZE], pf_move m,
    const pf_board *after, uint8_t out[PF_PACKED_SIZE], int fast)
{
#ifdef __SIZEOF_INT128__
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m), i, j;
	uint64_t occ0 = get64le(prev), occ1, below;
	nib128 nib, low;
	unsigned p, c;

	if (m == PF_MOVE_NONE || PF_MOVE_KIND(m) != PF_MK_NORMAL ||
	    !(occ0 >> from & 1) || NEXT_POPCOUNT(occ0, fast) > 32)
		goto full;
	nib = (nib128)get64le(prev + 16) << 64 | get64le(prev + 8);
	i = NEXT_POPCOUNT(occ0 & ((1ULL << from) - 1), fast);
	p = (unsigned)(nib >> (4 * i)) & 15;
	if ((p & 7) == 6 || ((p & 7) == PF_KING &&
	    has_nibble(nib, (p & 8) | 6)))
		goto full;
	/* Out at i: the nibbles above it move down one. */
	low = ((nib128)1 << (4 * i)) - 1;
	nib = (nib & low) | ((nib >> 4) & ~low);
	occ1 = occ0 & ~(1ULL << from);
	below = occ1 & ((1ULL << to) - 1);
	j = NEXT_POPCOUNT(below, fast);
	low = ((nib128)1 << (4 * j)) - 1;
	if (occ1 >> to & 1) {
		c = (unsigned)(nib >> (4 * j)) & 15;
		if ((c & 7) == 6)
			goto full;
		nib = (nib & ~((nib128)15 << (4 * j))) | (nib128)p << (4 * j);
	} else {
		/* In at j: the nibbles from j on move up one. */
		nib = (nib & low) | (nib128)p << (4 * j) |
		    ((nib << 4) & ~(low | (nib128)15 << (4 * j)));
		occ1 |= 1ULL << to;
	}
	if (occ1 != (after->by_colour[0] | after->by_colour[1]))
		goto full;
	put64le(out, occ1);
	put64le(out + 8, (uint64_t)nib);
	put64le(out + 16, (uint64_t)(nib >> 64));
	pack_state(after, out);
	return;
full:
#else
	(void)prev;
	(void)m;
	(void)fast;
#endif
	pack_portable(after, out);
}

static void
pack_next_generic(const uint8_t prev[PF_PACKED_SIZE], pf_move m,
    const pf_board *after, uint8_t out[PF_PACKED_SIZE])
{
	pack_next_impl(prev, m, after, out, 0);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
__attribute__((target("popcnt"))) static void
pack_next_popcnt(const uint8_t prev[PF_PACKED_SIZE], pf_move m,
    const pf_board *after, uint8_t out[PF_PACKED_SIZE])
{
	pack_next_impl(prev, m, after, out, 1);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* pf_board_pack_next of the AVX-512 and BMI2 builds: their whole packing
   costs less than pack_next_impl's update. */
static void
pack_next_full(const uint8_t prev[PF_PACKED_SIZE], pf_move m,
    const pf_board *after, uint8_t out[PF_PACKED_SIZE])
{
	(void)prev;
	(void)m;
	pack_fn(after, out);
}
#endif

static void (*pack_next_fn)(const uint8_t *, pf_move, const pf_board *,
    uint8_t *) = pack_next_generic;

__attribute__((constructor)) static void
pf_chess_text_pick_builds(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (pf_chess_vbmi2()) {
		pack_fn = pack_vbmi2;
		pack_next_fn = pack_next_full;
	} else if (pf_chess_bmi2()) {
		pack_fn = pack_bmi2;
		pack_next_fn = pack_next_full;
	}
#if !defined(__POPCNT__)
	else if (pf_chess_popcnt())
		pack_next_fn = pack_next_popcnt;
#endif
#endif
}

void
pf_board_pack_next(const uint8_t prev[PF_PACKED_SIZE], pf_move m,
    const pf_board *after, uint8_t out[PF_PACKED_SIZE])
{
	pack_next_fn(prev, m, after, out);
}

static int	unpack_careful(pf_board *, const uint8_t [PF_PACKED_SIZE],
		    int, char *, size_t);

#define RANK_1	0xFFULL
#define RANK_8	(0xFFULL << 56)

/*
 * The fast path of pf_board_unpack(): the same board, validated with a few
 * bitboard operations instead of loops and the full pf_board_validate().
 * It accepts exactly the positions the careful path accepts, or fewer:
 * 0 and *b filled, or -1 (the careful path then decides, and names the
 * problem).  Every check of the careful path has its counterpart here:
 *   - at most 32 pieces, no piece code 7 or 15, no nibble after the last
 *     piece (the nibble words shifted past the pieces are 0);
 *   - one king of each colour; no pawn on the first or last rank; at most
 *     16 pieces and 8 pawns a side (validate_material);
 *   - an en passant square: 64 (none) or a possible one (ep_possible);
 *   - the side not to move not in check, at most two checkers, no
 *     impossible check (impossible_check);
 *   - castling rooks: only on the first and last ranks, each a rook of
 *     the colour of its rank, with that colour's king on the same rank
 *     and not in a corner, at most one on each side of the king.
 * The board arrays are consistent by construction (each square gets
 * exactly one type and colour).
 */
static int
unpack_fast(pf_board *b, const uint8_t in[PF_PACKED_SIZE], int chess960)
{
	uint64_t occ = get64le(in), lo = get64le(in + 8), hi = get64le(in + 16);
	uint64_t bb = occ, bt[8] = { 0 }, black = 0, castle = 0, bit, nib;
	uint64_t white, kings, pawns, cr, rooks, below, word;
	int n = popcount(occ), i, sq, t, c, ep, ksq;
	pf_board nb;

	if (n > 32)
		return -1;
	/* Nothing after the last piece's nibble. */
	if (n < 16 ? (n > 0 ? lo >> (4 * n) : lo) != 0 || hi != 0 :
	    n < 32 && (n > 16 ? hi >> (4 * (n - 16)) : hi) != 0)
		return -1;
	/* No piece code 7 or 15 (type bits all set; the nibbles past the
	   pieces are 0). */
	if ((lo & lo >> 1 & lo >> 2 & 0x1111111111111111ULL) != 0 ||
	    (hi & hi >> 1 & hi >> 2 & 0x1111111111111111ULL) != 0)
		return -1;
	pf_board_clear(&nb);
	/* The nibbles in order, from one word then the other; a nibble is
	   the piece code (PF_PIECE()), but for type 6, a castling rook. */
	word = lo;
	for (i = 0; bb; i++) {
		if (i == 16)
			word = hi;
		sq = __builtin_ctzll(bb);
		bit = bb & (0 - bb);
		bb &= bb - 1;
		nib = word & 15;
		word >>= 4;
		t = (int)(nib & 7);
		nb.squares[sq] = (uint8_t)nib;
		if (t == 6) {
			castle |= bit;
			t = PF_ROOK;
			nb.squares[sq] = PF_PIECE((int)(nib >> 3), PF_ROOK);
		}
		bt[t] |= bit;
		black |= bit & (0 - (nib >> 3));
	}
	white = occ & ~black;
	for (t = 0; t < 6; t++)
		nb.by_type[t] = bt[t];
	nb.by_colour[PF_WHITE] = white;
	nb.by_colour[PF_BLACK] = black;
	nb.castle_rooks = castle;

	/* Material. */
	kings = bt[PF_KING];
	pawns = bt[PF_PAWN];
	if (!(kings & white) || !at_most_one(kings & white) ||
	    !(kings & black) || !at_most_one(kings & black) ||
	    (pawns & (RANK_1 | RANK_8)) || popcount(white) > 16 ||
	    popcount(black) > 16 || popcount(pawns & white) > 8 ||
	    popcount(pawns & black) > 8)
		return -1;
	nb.king_sq[PF_WHITE] = (uint8_t)__builtin_ctzll(kings & white);
	nb.king_sq[PF_BLACK] = (uint8_t)__builtin_ctzll(kings & black);

	nb.stm = in[24] >> 7;
	ep = in[24] & 0x7F;
	nb.rule50 = in[25];
	nb.fullmove = (uint16_t)(in[26] | in[27] << 8);
	if (nb.fullmove == 0)
		nb.fullmove = 1;
	if (ep > 64 || (ep < 64 && !ep_possible(&nb, ep)))
		return -1;
	nb.ep = (uint8_t)ep;

	/* Castling rooks. */
	rooks = bt[PF_ROOK];
	if ((castle & ~(RANK_1 | RANK_8)) ||
	    (castle & RANK_1 & ~(rooks & white)) ||
	    (castle & RANK_8 & ~(rooks & black)))
		return -1;
	for (c = 0; c < 2; c++) {
		cr = castle & (c == PF_WHITE ? RANK_1 : RANK_8);
		if (!cr)
			continue;
		ksq = nb.king_sq[c];
		if (!((1ULL << ksq) & (c == PF_WHITE ? RANK_1 : RANK_8)))
			return -1;
		below = cr & ((1ULL << ksq) - 1);
		if (!at_most_one(below) || !at_most_one(cr & ~below) ||
		    (ksq & 7) == 0 || (ksq & 7) == 7)
			return -1;
	}
	nb.chess960 = (uint8_t)(chess960 || !castling_is_standard(&nb));

	/* Checks: none against the side not to move, at most two against
	   the side to move. */
	if (pf_square_attacked(&nb, nb.king_sq[!nb.stm], nb.stm))
		return -1;
	nb.checkers = pf_attackers_to(&nb, nb.king_sq[nb.stm], occ) &
	    nb.by_colour[!nb.stm];
	bb = nb.checkers & (nb.checkers - 1);	/* without the first */
	if (bb & (bb - 1))
		return -1;
	if (nb.checkers && impossible_check(&nb, ep, NULL, 0) == -1)
		return -1;
	/* As a FEN: a possible ep square that allows no legal capture is
	   dropped. */
	if (nb.ep != PF_SQ_NONE && !pf_ep_capture_exists(&nb, nb.ep))
		nb.ep = PF_SQ_NONE;
	nb.key = pf_board_compute_key_consistent(&nb);
	*b = nb;
	return 0;
}

int
pf_board_unpack(pf_board *b, const uint8_t in[PF_PACKED_SIZE], int chess960,
    char *err, size_t errlen)
{
	if (unpack_fast(b, in, chess960) == 0)
		return 0;
	return unpack_careful(b, in, chess960, err, errlen);
}

/*
 * The careful path: builds the board piece by piece and validates it with
 * pf_board_validate(), naming the first problem.
 */
static int
unpack_careful(pf_board *b, const uint8_t in[PF_PACKED_SIZE], int chess960,
    char *err, size_t errlen)
{
	uint64_t occ = 0, bb;
	int i = 0, k, n, ep;
	pf_board nb;
	char s[3];

	for (k = 0; k < 8; k++)
		occ |= (uint64_t)in[k] << (8 * k);
	n = popcount(occ);
	if (n > 32) {
		seterr(err, errlen, "packed position has %d pieces", n);
		return -1;
	}
	pf_board_clear(&nb);
	bb = occ;
	while (bb) {
		int sq = __builtin_ctzll(bb);
		uint8_t nib = (uint8_t)(in[8 + i / 2] >> (i & 1 ? 4 : 0) & 15);

		bb &= bb - 1;
		if ((nib & 7) == 7) {
			sq_name(sq, s);
			seterr(err, errlen, "bad piece code %u on %s",
			    (unsigned)nib, s);
			return -1;
		}
		if ((nib & 7) == 6) {
			nib = (uint8_t)PF_PIECE(nib >> 3, PF_ROOK);
			nb.castle_rooks |= 1ULL << sq;
		}
		pf_board_put_piece(&nb, sq, nib);
		i++;
	}
	for (; i < 32; i++)
		if (in[8 + i / 2] >> (i & 1 ? 4 : 0) & 15) {
			seterr(err, errlen, "packed position has data after "
			    "its %d pieces", n);
			return -1;
		}
	nb.stm = in[24] >> 7;
	ep = in[24] & 0x7F;
	nb.rule50 = in[25];
	nb.fullmove = (uint16_t)(in[26] | in[27] << 8);
	if (nb.fullmove == 0)
		nb.fullmove = 1;
	if (validate_material(&nb, err, errlen) == -1)
		return -1;
	pf_board_refresh(&nb);
	if (ep > 64 || (ep < 64 && !ep_possible(&nb, ep))) {
		if (ep < 64)
			sq_name(ep, s);
		seterr(err, errlen, "impossible en passant square %s",
		    ep < 64 ? s : "(out of range)");
		return -1;
	}
	if (ep < 64 && impossible_check(&nb, ep, err, errlen) == -1)
		return -1;
	nb.ep = (uint8_t)ep;
	nb.chess960 = chess960 || !castling_is_standard(&nb);
	pf_board_refresh(&nb);
	if (pf_board_validate(&nb, err, errlen) == -1)
		return -1;
	*b = nb;
	return 0;
}

uint64_t
pf_board_hash(const pf_board *b)
{
	uint8_t packed[PF_PACKED_SIZE];

	pf_board_pack(b, packed);
	return XXH64(packed, 25, 0);
}

/* ---- game end ------------------------------------------------------ */

enum pf_status
pf_board_status(const pf_board *b)
{
	if (pf_count_legal(b) > 0)
		return PF_ONGOING;
	return b->checkers ? PF_CHECKMATE : PF_STALEMATE;
}

int
pf_insufficient_material(const pf_board *b)
{
	uint64_t light = 0x55AA55AA55AA55AAULL, bishops;

	if (b->by_type[PF_PAWN] | b->by_type[PF_ROOK] | b->by_type[PF_QUEEN])
		return 0;
	if (popcount(b->by_type[PF_KNIGHT] | b->by_type[PF_BISHOP]) <= 1)
		return 1;
	if (b->by_type[PF_KNIGHT])
		return 0;
	/* Only bishops: a draw when all stand on one colour of square. */
	bishops = b->by_type[PF_BISHOP];
	return !(bishops & light) || !(bishops & ~light);
}

int
pf_fifty_move_draw(const pf_board *b)
{
	return b->rule50 >= 100 && pf_board_status(b) != PF_CHECKMATE;
}

int
pf_repetition_count(const uint64_t *keys, int n, int rule50)
{
	int i, count = 1, stop;

	if (n <= 0)
		return 0;
	stop = n - 1 - rule50;
	if (stop < 0)
		stop = 0;
	for (i = n - 3; i >= stop; i -= 2)
		if (keys[i] == keys[n - 1])
			count++;
	return count;
}

/* ---- UCI move text ------------------------------------------------- */

static int
castle_king_to(pf_move m)
{
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m);

	return (from & 56) + (to > from ? 6 : 2);
}

char *
pf_move_to_uci(const pf_board *b, pf_move m, char *buf)
{
	int to = PF_MOVE_TO(m);

	if (m == PF_MOVE_NONE) {
		strcpy(buf, "0000");
		return buf;
	}
	if (PF_MOVE_KIND(m) == PF_MK_CASTLE && !b->chess960)
		to = castle_king_to(m);
	sq_name(PF_MOVE_FROM(m), buf);
	sq_name(to, buf + 2);
	if (PF_MOVE_KIND(m) == PF_MK_PROMOTION) {
		buf[4] = "nbrq"[PF_MOVE_PROMO(m) - PF_KNIGHT];
		buf[5] = '\0';
	}
	return buf;
}

static int
parse_square(const char *s)
{
	if (s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8')
		return -1;
	return (s[1] - '1') * 8 + (s[0] - 'a');
}

int
pf_move_from_uci(const pf_board *b, const char *s, size_t len, pf_move *m)
{
	pf_move list[PF_MAX_MOVES];
	int from, to, promo = -1, n, i;
	const char *pp;

	if (len != 4 && len != 5)
		return -1;
	if ((from = parse_square(s)) < 0 || (to = parse_square(s + 2)) < 0)
		return -1;
	if (len == 5) {
		if ((pp = strchr("nbrq", tolower((unsigned char)s[4]))) ==
		    NULL || s[4] == '\0')
			return -1;
		promo = (int)(pp - "nbrq");
	}
	n = pf_gen_legal(b, list);
	/* An ordinary move first: on a Chess960 board f1g1 can be a king
	   step, and only the king-to-rook form then means castling. */
	for (i = 0; i < n; i++) {
		pf_move mv = list[i];

		if (PF_MOVE_KIND(mv) == PF_MK_CASTLE ||
		    PF_MOVE_FROM(mv) != from || PF_MOVE_TO(mv) != to)
			continue;
		if (PF_MOVE_KIND(mv) == PF_MK_PROMOTION ?
		    promo != ((mv >> 14) & 3) : promo != -1)
			continue;
		*m = mv;
		return 0;
	}
	if (promo != -1)
		return -1;
	for (i = 0; i < n; i++)
		if (PF_MOVE_KIND(list[i]) == PF_MK_CASTLE &&
		    PF_MOVE_FROM(list[i]) == from && PF_MOVE_TO(list[i]) == to) {
			*m = list[i];
			return 0;
		}
	for (i = 0; i < n; i++)
		if (PF_MOVE_KIND(list[i]) == PF_MK_CASTLE &&
		    PF_MOVE_FROM(list[i]) == from &&
		    castle_king_to(list[i]) == to) {
			*m = list[i];
			return 0;
		}
	return -1;
}

/* ---- SAN ----------------------------------------------------------- */

char *
pf_move_to_san(const pf_board *b, pf_move m, char *buf)
{
	pf_move list[PF_MAX_MOVES];
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m), kind = PF_MOVE_KIND(m);
	int type = PF_PIECE_TYPE(b->squares[from]), n, i;
	int same_file = 0, same_rank = 0, others = 0;
	char *p = buf;
	pf_board after;
	pf_undo u;

	if (m == PF_MOVE_NONE) {
		strcpy(buf, "--");
		return buf;
	}
	if (kind == PF_MK_CASTLE) {
		strcpy(p, to > from ? "O-O" : "O-O-O");
		p += strlen(p);
	} else if (type == PF_PAWN) {
		*p++ = (char)('a' + (from & 7));
		if ((from & 7) != (to & 7)) {
			*p++ = 'x';
			sq_name(to, p);
			p += 2;
		} else {
			p--;
			sq_name(to, p);
			p += 2;
		}
		if (kind == PF_MK_PROMOTION) {
			*p++ = '=';
			*p++ = "NBRQ"[PF_MOVE_PROMO(m) - PF_KNIGHT];
		}
	} else {
		*p++ = "PNBRQK"[type];
		n = pf_gen_legal(b, list);
		for (i = 0; i < n; i++) {
			int f2 = PF_MOVE_FROM(list[i]);

			if (list[i] == m || PF_MOVE_TO(list[i]) != to ||
			    PF_MOVE_KIND(list[i]) == PF_MK_CASTLE ||
			    PF_PIECE_TYPE(b->squares[f2]) != type)
				continue;
			others++;
			if ((f2 & 7) == (from & 7))
				same_file++;
			if ((f2 >> 3) == (from >> 3))
				same_rank++;
		}
		if (others) {
			if (!same_file)
				*p++ = (char)('a' + (from & 7));
			else if (!same_rank)
				*p++ = (char)('1' + (from >> 3));
			else {
				sq_name(from, p);
				p += 2;
			}
		}
		if (b->squares[to] != PF_NO_PIECE)
			*p++ = 'x';
		sq_name(to, p);
		p += 2;
	}
	after = *b;
	pf_make_move(&after, m, &u);
	if (after.checkers)
		*p++ = pf_count_legal(&after) ? '+' : '#';
	*p = '\0';
	return buf;
}

/* The piece type of a SAN piece letter; 0 for any other byte. */
static const uint8_t san_piece[256] = {
	['N'] = PF_KNIGHT, ['B'] = PF_BISHOP, ['R'] = PF_ROOK,
	['Q'] = PF_QUEEN, ['K'] = PF_KING,
};

/*
 * The common SAN shapes, read in one pass with nothing to trim: piece
 * moves (Nf3, Nbd2, R1e2, Qh4xe1, Nxf3), pawn moves (e4, exd5, e8=Q, e8Q,
 * exd8N) and castling (O-O, O-O-O, 0-0, 0-0-0).  The candidates come from
 * pf_moves_to.  0 and *m on the one move that fits, -1 to let the general
 * reader try (it also words the errors).
 */
static int
san_quick(const pf_board *b, const char *s, size_t n, pf_move *m)
{
	pf_move list[PF_MAX_MOVES];
	int type, to, fromf = -1, fromr = -1, promo = -1, k, i, found = -1;
	size_t j;

	if (n < 2 || n > 7)
		return -1;
	if (s[0] >= 'a' && s[0] <= 'h') {
		type = PF_PAWN;
		fromf = s[0] - 'a';
		j = 1;
		if (s[j] == 'x' || s[j] == ':')
			j++;
		if (j < n && s[j] >= 'a' && s[j] <= 'h') {
			if (j + 1 >= n || s[j + 1] < '1' || s[j + 1] > '8')
				return -1;
			to = (s[j + 1] - '1') * 8 + (s[j] - 'a');
			if ((to & 7) == fromf)
				return -1;
			j += 2;
		} else if (j == 1 && s[1] >= '1' && s[1] <= '8') {
			to = (s[1] - '1') * 8 + fromf;
			j = 2;
		} else
			return -1;
		if (j < n && s[j] == '=')
			j++;
		if (j < n) {
			const char *q = s[j] != '\0' ?
			    strchr("NBRQnbrq", s[j]) : NULL;

			if (q == NULL || j + 1 != n)
				return -1;
			promo = (int)(q - "NBRQnbrq") % 4;
		}
		if (((to >> 3) == 7 || (to >> 3) == 0) != (promo >= 0))
			return -1;
	} else if (s[0] == 'O' || s[0] == '0') {
		/* The castling rook of that wing: beyond the king's file. */
		int us = b->stm, ksq = b->king_sq[us], rsq;
		uint64_t cr = b->castle_rooks & b->by_colour[us] &
		    (us == PF_WHITE ? 0xFFULL : 0xFFULL << 56);

		if ((n == 3 && (memcmp(s, "O-O", 3) == 0 ||
		    memcmp(s, "0-0", 3) == 0)))
			cr &= ~((2ULL << ksq) - 1);
		else if (n == 5 && (memcmp(s, "O-O-O", 5) == 0 ||
		    memcmp(s, "0-0-0", 5) == 0))
			cr &= (1ULL << ksq) - 1;
		else
			return -1;
		if (cr == 0 || (cr & (cr - 1)))
			return -1;
		rsq = __builtin_ctzll(cr);
		*m = PF_MAKE_MOVE(ksq, rsq, PF_MK_CASTLE, 0);
		return pf_is_legal(b, *m) ? 0 : -1;
	} else {
		/* A table, not a switch: its jump, on a piece letter that
		   changes from move to move, was mispredicted. */
		if ((type = san_piece[(unsigned char)s[0]]) == 0)
			return -1;
		if (n < 3 || s[n - 2] < 'a' || s[n - 2] > 'h' ||
		    s[n - 1] < '1' || s[n - 1] > '8')
			return -1;
		to = (s[n - 1] - '1') * 8 + (s[n - 2] - 'a');
		for (j = 1; j < n - 2; j++) {
			if (s[j] >= 'a' && s[j] <= 'h' && fromf < 0 &&
			    fromr < 0)
				fromf = s[j] - 'a';
			else if (s[j] >= '1' && s[j] <= '8' && fromr < 0)
				fromr = s[j] - '1';
			else if ((s[j] == 'x' || s[j] == ':' || s[j] == '-') &&
			    j == n - 3)
				;
			else
				return -1;
		}
	}
	k = pf_moves_to(b, type, to, list);
	for (i = 0; i < k; i++) {
		int from = PF_MOVE_FROM(list[i]);

		if (fromf >= 0 && (from & 7) != fromf)
			continue;
		if (fromr >= 0 && (from >> 3) != fromr)
			continue;
		if (PF_MOVE_KIND(list[i]) == PF_MK_PROMOTION &&
		    ((list[i] >> 14) & 3) != promo)
			continue;
		if (found >= 0)
			return -1;
		found = i;
	}
	if (found < 0)
		return -1;
	*m = list[found];
	return 0;
}

int
pf_move_from_san(const pf_board *b, const char *san, size_t len,
    pf_move *m, char *err, size_t errlen)
{
	pf_move list[PF_MAX_MOVES], found = PF_MOVE_NONE;
	char s[32], orig[32], *p;
	int n, i, type = PF_PAWN, to, from_file = -1, from_rank = -1;
	int promo = -1, matches = 0, castle = 0;
	size_t k;

	if (san_quick(b, san, len, m) == 0)
		return 0;
	while (len > 0 && (san[0] == ' ' || san[0] == '\t'))
		san++, len--;
	while (len > 0 && strchr("+#!? \t", san[len - 1]) != NULL)
		len--;
	if (len >= 4 && memcmp(san + len - 4, "e.p.", 4) == 0)
		len -= 4;
	while (len > 0 && san[len - 1] == ' ')
		len--;
	if (len == 0 || len >= sizeof(s)) {
		seterr(err, errlen, "empty or overlong move text");
		return -1;
	}
	memcpy(s, san, len);
	s[len] = '\0';
	memcpy(orig, s, len + 1);

	if (strcmp(s, "O-O") == 0 || strcmp(s, "0-0") == 0 ||
	    strcmp(s, "o-o") == 0)
		castle = 1;
	else if (strcmp(s, "O-O-O") == 0 || strcmp(s, "0-0-0") == 0 ||
	    strcmp(s, "o-o-o") == 0)
		castle = 2;
	/* UCI text first: pf_move_from_uci needs no move list here. */
	if (!castle && (len == 4 || len == 5) && parse_square(s) >= 0 &&
	    parse_square(s + 2) >= 0 && pf_move_from_uci(b, s, len, m) == 0)
		return 0;
	if (castle) {
		n = pf_gen_legal(b, list);
		for (i = 0; i < n; i++)
			if (PF_MOVE_KIND(list[i]) == PF_MK_CASTLE &&
			    (PF_MOVE_TO(list[i]) > PF_MOVE_FROM(list[i])) ==
			    (castle == 1)) {
				*m = list[i];
				return 0;
			}
		seterr(err, errlen, "illegal move %s", s);
		return -1;
	}
	p = s;
	if ((type = san_piece[(unsigned char)*p]) != PF_PAWN || *p == 'P')
		p++;
	/* Promotion suffix: "=Q", "Q" or "q" after the destination. */
	k = strlen(p);
	if (k >= 2 && strchr("NBRQnbrq", p[k - 1]) != NULL &&
	    (p[k - 2] == '=' || (p[k - 2] >= '1' && p[k - 2] <= '8'))) {
		promo = (int)(strchr("nbrq", tolower((unsigned char)p[k - 1]))
		    - "nbrq");
		p[--k] = '\0';
		if (p[k - 1] == '=')
			p[--k] = '\0';
	}
	if (k < 2 || (to = parse_square(p + k - 2)) < 0) {
		seterr(err, errlen, "cannot read move %s", orig);
		return -1;
	}
	p[k - 2] = '\0';
	for (; *p; p++) {
		if (*p >= 'a' && *p <= 'h' && from_file < 0)
			from_file = *p - 'a';
		else if (*p >= '1' && *p <= '8' && from_rank < 0)
			from_rank = *p - '1';
		else if (*p != 'x' && *p != ':' && *p != '-') {
			seterr(err, errlen, "cannot read move %s", orig);
			return -1;
		}
	}
	if (promo >= 0 && type != PF_PAWN) {
		seterr(err, errlen, "cannot read move %s", orig);
		return -1;
	}
	/* Only the moves onto to of the piece named: found from to. */
	n = pf_moves_to(b, type, to, list);
	for (i = 0; i < n; i++) {
		pf_move mv = list[i];
		int from = PF_MOVE_FROM(mv);

		if (PF_MOVE_KIND(mv) == PF_MK_CASTLE || PF_MOVE_TO(mv) != to ||
		    PF_PIECE_TYPE(b->squares[from]) != type)
			continue;
		if (from_file >= 0 && (from & 7) != from_file)
			continue;
		if (from_rank >= 0 && (from >> 3) != from_rank)
			continue;
		if (PF_MOVE_KIND(mv) == PF_MK_PROMOTION) {
			if (promo < 0) {
				seterr(err, errlen, "promotion piece missing "
				    "in %s", orig);
				return -1;
			}
			if (((mv >> 14) & 3) != promo)
				continue;
		} else if (promo >= 0)
			continue;
		/* A pawn "capture" needs a file change; b4 is not bxc5. */
		if (type == PF_PAWN && from_file < 0 && (from & 7) != (to & 7))
			continue;
		found = mv;
		matches++;
	}
	if (matches == 0) {
		seterr(err, errlen, "illegal move %s", orig);
		return -1;
	}
	if (matches > 1) {
		seterr(err, errlen, "ambiguous move %s", orig);
		return -1;
	}
	*m = found;
	return 0;
}
