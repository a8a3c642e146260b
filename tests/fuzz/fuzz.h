/*
 * fuzz.h - what the libFuzzer targets in tests/fuzz/ share: the property
 * check macro, a scratch file for the readers that take a path or a file
 * descriptor, and the board checks.
 *
 * A target checks properties, not only the absence of crashes: a failed
 * property prints what failed and aborts, so libFuzzer saves the input
 * like any crash.  The board checks compare the library against a second,
 * deliberately naive path written here (a move generator that walks rays
 * on the square array and tests legality by playing the move on a copy),
 * so that a bug the library shares between its own functions is still
 * seen.
 *
 * Everything is static: each target is one program built from its .c
 * file, this header and the library sources.
 */
#ifndef PF_FUZZ_H
#define PF_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "chess.h"

/* Not every target uses every helper. */
#define FUZZ_STATIC	static __attribute__((unused))

/* A property that must hold: on failure, say which and abort. */
#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: property failed: %s\n",		\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/* ---- scratch file ------------------------------------------------------ */

/*
 * The readers under test open a path (pf_input_open, pf_evalcache_open) or
 * read a descriptor (pf_reader_open_fd).  Each target writes its input to
 * one scratch file, made once and unlinked at once, and hands out
 * /proc/self/fd/N, which opens the same (deleted) file: nothing is left
 * behind whatever way the process ends.
 */
FUZZ_STATIC int fuzz_fd = -1;
FUZZ_STATIC char fuzz_path[64];

FUZZ_STATIC void
fuzz_scratch_init(void)
{
	const char *dirs[3] = { getenv("TMPDIR"), "/dev/shm", "/tmp" };
	char tmpl[4096];
	int i;

	if (fuzz_fd != -1)
		return;
	for (i = 0; i < 3 && fuzz_fd == -1; i++) {
		if (dirs[i] == NULL || *dirs[i] == '\0')
			continue;
		snprintf(tmpl, sizeof(tmpl), "%s/posflow-fuzz-XXXXXX",
		    dirs[i]);
		if ((fuzz_fd = mkstemp(tmpl)) != -1)
			unlink(tmpl);
	}
	if (fuzz_fd == -1) {
		perror("fuzz: scratch file");
		abort();
	}
	snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_fd);
}

/* Make the scratch file hold exactly data[0..size); returns its path. */
FUZZ_STATIC const char *
fuzz_scratch_write(const uint8_t *data, size_t size)
{
	size_t done = 0;

	fuzz_scratch_init();
	if (ftruncate(fuzz_fd, 0) == -1)
		abort();
	while (done < size) {
		ssize_t n = pwrite(fuzz_fd, data + done, size - done,
		    (off_t)done);

		if (n <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			perror("fuzz: scratch write");
			abort();
		}
		done += (size_t)n;
	}
	if (lseek(fuzz_fd, 0, SEEK_SET) == -1)
		abort();
	return fuzz_path;
}

/* ---- the naive second path for the chess core --------------------------- */

FUZZ_STATIC int
naive_on(int f, int r)
{
	return f >= 0 && f < 8 && r >= 0 && r < 8;
}

FUZZ_STATIC const int naive_knight[8][2] = { {1, 2}, {2, 1}, {2, -1}, {1, -2},
    {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2} };
FUZZ_STATIC const int naive_king[8][2] = { {1, 0}, {1, 1}, {0, 1}, {-1, 1},
    {-1, 0}, {-1, -1}, {0, -1}, {1, -1} };
/* 0-3 rook directions, 4-7 bishop directions */
FUZZ_STATIC const int naive_dirs[8][2] = { {1, 0}, {-1, 0}, {0, 1}, {0, -1},
    {1, 1}, {1, -1}, {-1, 1}, {-1, -1} };

/* 1 if colour by attacks square s on the square array sq. */
FUZZ_STATIC int
naive_attacked(const uint8_t sq[64], int s, int by)
{
	int f = s & 7, r = s >> 3, i, pr = by == PF_WHITE ? r - 1 : r + 1;

	for (i = -1; i <= 1; i += 2)
		if (naive_on(f + i, pr) &&
		    sq[pr * 8 + f + i] == PF_PIECE(by, PF_PAWN))
			return 1;
	for (i = 0; i < 8; i++) {
		int nf = f + naive_knight[i][0], nr = r + naive_knight[i][1];

		if (naive_on(nf, nr) &&
		    sq[nr * 8 + nf] == PF_PIECE(by, PF_KNIGHT))
			return 1;
		nf = f + naive_king[i][0];
		nr = r + naive_king[i][1];
		if (naive_on(nf, nr) &&
		    sq[nr * 8 + nf] == PF_PIECE(by, PF_KING))
			return 1;
	}
	for (i = 0; i < 8; i++) {
		int nf = f + naive_dirs[i][0], nr = r + naive_dirs[i][1];
		int slider = i < 4 ? PF_ROOK : PF_BISHOP;

		while (naive_on(nf, nr)) {
			uint8_t pc = sq[nr * 8 + nf];

			if (pc != PF_NO_PIECE) {
				if (PF_PIECE_COLOUR(pc) == by &&
				    (PF_PIECE_TYPE(pc) == slider ||
				    PF_PIECE_TYPE(pc) == PF_QUEEN))
					return 1;
				break;
			}
			nf += naive_dirs[i][0];
			nr += naive_dirs[i][1];
		}
	}
	return 0;
}

/* The square of colour c's king on sq, or -1. */
FUZZ_STATIC int
naive_king_sq(const uint8_t sq[64], int c)
{
	int s;

	for (s = 0; s < 64; s++)
		if (sq[s] == PF_PIECE(c, PF_KING))
			return s;
	return -1;
}

/* The squares after move m (any kind) is played on b, by hand. */
FUZZ_STATIC void
naive_play(const pf_board *b, pf_move m, uint8_t out[64])
{
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m), us = b->stm;
	uint8_t pc = b->squares[from];

	memcpy(out, b->squares, 64);
	switch (PF_MOVE_KIND(m)) {
	case PF_MK_CASTLE: {
		int base = us == PF_WHITE ? 0 : 56;
		uint8_t rook = b->squares[to];

		out[from] = out[to] = PF_NO_PIECE;
		out[base + (to > from ? 6 : 2)] = pc;
		out[base + (to > from ? 5 : 3)] = rook;
		return;
	}
	case PF_MK_ENPASSANT:
		out[us == PF_WHITE ? to - 8 : to + 8] = PF_NO_PIECE;
		break;
	case PF_MK_PROMOTION:
		pc = PF_PIECE(us, PF_MOVE_PROMO(m));
		break;
	}
	out[from] = PF_NO_PIECE;
	out[to] = pc;
}

/* 1 if the mover's king is safe after m (the pseudo-legal filter). */
FUZZ_STATIC int
naive_king_safe_after(const pf_board *b, pf_move m)
{
	uint8_t after[64];
	int ksq;

	naive_play(b, m, after);
	ksq = naive_king_sq(after, b->stm);
	return ksq >= 0 && !naive_attacked(after, ksq, !b->stm);
}

/* Castling with the rook on rsq: the rules written out square by square. */
FUZZ_STATIC int
naive_castle_ok(const pf_board *b, int rsq)
{
	int us = b->stm, ksq = naive_king_sq(b->squares, us);
	int base = us == PF_WHITE ? 0 : 56;
	int kto = base + (rsq > ksq ? 6 : 2), rto = base + (rsq > ksq ? 5 : 3);
	int lo, hi, s;
	uint8_t lifted[64];

	if (ksq < 0 || (ksq & ~7) != base || naive_attacked(b->squares, ksq,
	    !us))
		return 0;
	/* Every square the king or rook crosses or lands on is empty but
	   for the two of them. */
	lo = ksq < kto ? ksq : kto;
	hi = ksq < kto ? kto : ksq;
	for (s = lo; s <= hi; s++)
		if (s != ksq && s != rsq && b->squares[s] != PF_NO_PIECE)
			return 0;
	lo = rsq < rto ? rsq : rto;
	hi = rsq < rto ? rto : rsq;
	for (s = lo; s <= hi; s++)
		if (s != ksq && s != rsq && b->squares[s] != PF_NO_PIECE)
			return 0;
	/* No square the king crosses or lands on is attacked, judged with
	   king and rook lifted. */
	memcpy(lifted, b->squares, 64);
	lifted[ksq] = lifted[rsq] = PF_NO_PIECE;
	lo = ksq < kto ? ksq : kto;
	hi = ksq < kto ? kto : ksq;
	for (s = lo; s <= hi; s++)
		if (s != ksq && naive_attacked(lifted, s, !us))
			return 0;
	return naive_king_safe_after(b,
	    PF_MAKE_MOVE(ksq, rsq, PF_MK_CASTLE, 0));
}

FUZZ_STATIC int
naive_add(const pf_board *b, pf_move *moves, int n, pf_move m)
{
	if (naive_king_safe_after(b, m)) {
		FUZZ_CHECK(n < PF_MAX_MOVES);
		moves[n++] = m;
	}
	return n;
}

/* A pawn move to `to`: four promotions on the last rank. */
FUZZ_STATIC int
naive_add_pawn(const pf_board *b, pf_move *moves, int n, int from, int to)
{
	int p;

	if ((to >> 3) == (b->stm == PF_WHITE ? 7 : 0)) {
		for (p = 0; p < 4; p++)
			n = naive_add(b, moves, n,
			    PF_MAKE_MOVE(from, to, PF_MK_PROMOTION, p));
		return n;
	}
	return naive_add(b, moves, n, PF_MAKE_MOVE(from, to, PF_MK_NORMAL, 0));
}

/*
 * The legal moves of b, from the square array alone (castling rights and
 * the en passant square are the only board fields used besides it).
 */
FUZZ_STATIC int
naive_gen(const pf_board *b, pf_move *moves)
{
	int us = b->stm, n = 0, from, i;
	const uint8_t *sq = b->squares;

	for (from = 0; from < 64; from++) {
		uint8_t pc = sq[from];
		int f = from & 7, r = from >> 3, t;

		if (pc == PF_NO_PIECE || PF_PIECE_COLOUR(pc) != us)
			continue;
		t = PF_PIECE_TYPE(pc);
		if (t == PF_PAWN) {
			int dir = us == PF_WHITE ? 1 : -1;
			int r1 = r + dir, start = us == PF_WHITE ? 1 : 6;

			if (!naive_on(f, r1))
				continue;
			if (sq[r1 * 8 + f] == PF_NO_PIECE) {
				n = naive_add_pawn(b, moves, n, from,
				    r1 * 8 + f);
				if (r == start &&
				    sq[(r1 + dir) * 8 + f] == PF_NO_PIECE)
					n = naive_add(b, moves, n, PF_MAKE_MOVE(
					    from, (r1 + dir) * 8 + f,
					    PF_MK_NORMAL, 0));
			}
			for (i = -1; i <= 1; i += 2) {
				int to = r1 * 8 + f + i;

				if (!naive_on(f + i, r1))
					continue;
				if (sq[to] != PF_NO_PIECE &&
				    PF_PIECE_COLOUR(sq[to]) != us)
					n = naive_add_pawn(b, moves, n, from,
					    to);
				else if (sq[to] == PF_NO_PIECE && to == b->ep)
					n = naive_add(b, moves, n, PF_MAKE_MOVE(
					    from, to, PF_MK_ENPASSANT, 0));
			}
			continue;
		}
		if (t == PF_KNIGHT || t == PF_KING) {
			const int (*d)[2] = t == PF_KNIGHT ? naive_knight :
			    naive_king;

			for (i = 0; i < 8; i++) {
				int nf = f + d[i][0], nr = r + d[i][1];

				if (naive_on(nf, nr) &&
				    (sq[nr * 8 + nf] == PF_NO_PIECE ||
				    PF_PIECE_COLOUR(sq[nr * 8 + nf]) != us))
					n = naive_add(b, moves, n,
					    PF_MAKE_MOVE(from, nr * 8 + nf,
					    PF_MK_NORMAL, 0));
			}
			continue;
		}
		for (i = 0; i < 8; i++) {
			int nf = f + naive_dirs[i][0];
			int nr = r + naive_dirs[i][1];

			if (t == PF_ROOK && i >= 4)
				break;
			if (t == PF_BISHOP && i < 4)
				continue;
			while (naive_on(nf, nr)) {
				uint8_t x = sq[nr * 8 + nf];

				if (x != PF_NO_PIECE &&
				    PF_PIECE_COLOUR(x) == us)
					break;
				n = naive_add(b, moves, n, PF_MAKE_MOVE(from,
				    nr * 8 + nf, PF_MK_NORMAL, 0));
				if (x != PF_NO_PIECE)
					break;
				nf += naive_dirs[i][0];
				nr += naive_dirs[i][1];
			}
		}
	}
	for (i = 0; i < 8; i++) {
		int rsq = (us == PF_WHITE ? 0 : 56) + i;

		if ((b->castle_rooks >> rsq & 1) &&
		    sq[rsq] == PF_PIECE(us, PF_ROOK) &&
		    naive_castle_ok(b, rsq)) {
			FUZZ_CHECK(n < PF_MAX_MOVES);
			moves[n++] = PF_MAKE_MOVE(naive_king_sq(sq, us), rsq,
			    PF_MK_CASTLE, 0);
		}
	}
	return n;
}

FUZZ_STATIC int
fuzz_move_cmp(const void *a, const void *b)
{
	return (int)*(const pf_move *)a - (int)*(const pf_move *)b;
}

FUZZ_STATIC int
fuzz_in_list(const pf_move *moves, int n, pf_move m)
{
	int i;

	for (i = 0; i < n; i++)
		if (moves[i] == m)
			return 1;
	return 0;
}

/* ---- board checks ------------------------------------------------------ */

/* The checkers of the side to move, from the library's attack tables. */
FUZZ_STATIC uint64_t
fuzz_checkers(const pf_board *b)
{
	return pf_attackers_to(b, b->king_sq[b->stm],
	    b->by_colour[0] | b->by_colour[1]) & b->by_colour[!b->stm];
}

/*
 * The board is internally consistent: it validates, its incremental
 * fields equal the ones computed from scratch, and its check state agrees
 * with the naive attack test.
 */
FUZZ_STATIC void
fuzz_check_consistent(const pf_board *b)
{
	char err[128];
	int ksq;

	err[0] = '\0';
	if (pf_board_validate(b, err, sizeof(err)) != 0) {
		fprintf(stderr, "invalid board: %s\n", err);
		FUZZ_CHECK(!"board validates");
	}
	FUZZ_CHECK(b->key == pf_board_compute_key(b));
	FUZZ_CHECK(b->key == pf_board_compute_key_consistent(b));
	FUZZ_CHECK(b->checkers == fuzz_checkers(b));
	ksq = naive_king_sq(b->squares, b->stm);
	FUZZ_CHECK(ksq == b->king_sq[b->stm]);
	FUZZ_CHECK(naive_king_sq(b->squares, !b->stm) == b->king_sq[!b->stm]);
	FUZZ_CHECK((b->checkers != 0) ==
	    naive_attacked(b->squares, ksq, !b->stm));
	FUZZ_CHECK(pf_in_check(b) == (b->checkers != 0));
}

/*
 * FEN and packed round trips: FEN out and in again gives the same board
 * (and the same FEN); pack and unpack gives the same board; the hash is
 * XXH64 of the first 25 packed bytes.
 */
FUZZ_STATIC void
fuzz_check_round_trips(const pf_board *b)
{
	char fen[PF_FEN_MAX], fen2[PF_FEN_MAX], err[128];
	uint8_t packed[PF_PACKED_SIZE], packed2[PF_PACKED_SIZE];
	pf_board b2;

	pf_board_to_fen(b, fen);
	FUZZ_CHECK(strlen(fen) < PF_FEN_MAX);
	err[0] = '\0';
	if (pf_board_from_fen(&b2, fen, err, sizeof(err)) != 0) {
		fprintf(stderr, "FEN written does not read back: %s: %s\n",
		    fen, err);
		FUZZ_CHECK(!"FEN round trip parses");
	}
	/* A Chess960 game whose castling looks standard again reads back as
	   standard chess; the caller that knows says so (pf_board_from_fen). */
	if (b->chess960 && !b2.chess960)
		b2.chess960 = 1;
	if (memcmp(b, &b2, sizeof(b2)) != 0) {
		fprintf(stderr, "FEN round trip changes the board: %s\n", fen);
		FUZZ_CHECK(!"FEN round trip gives the same board");
	}
	pf_board_to_fen(&b2, fen2);
	FUZZ_CHECK(strcmp(fen, fen2) == 0);

	pf_board_pack(b, packed);
	err[0] = '\0';
	if (pf_board_unpack(&b2, packed, b->chess960, err, sizeof(err)) != 0) {
		fprintf(stderr, "packed board does not unpack: %s: %s\n", fen,
		    err);
		FUZZ_CHECK(!"pack round trip unpacks");
	}
	if (memcmp(b, &b2, sizeof(b2)) != 0) {
		fprintf(stderr, "pack round trip changes the board: %s\n", fen);
		FUZZ_CHECK(!"pack round trip gives the same board");
	}
	pf_board_pack(&b2, packed2);
	FUZZ_CHECK(memcmp(packed, packed2, sizeof(packed)) == 0);
	FUZZ_CHECK(pf_board_hash(b) == XXH64(packed, 25, 0));
}

/*
 * The legal moves: pf_gen_legal's list equals the naive generator's (as
 * sets, no duplicates), pf_is_legal accepts exactly the moves of the list
 * among every move code from a square of the side to move, and the
 * counters (pf_count_legal, pf_perft depth 1, pf_legal_sets) agree.
 * Returns the count, the list in moves.
 */
FUZZ_STATIC int
fuzz_check_movegen(const pf_board *b, pf_move *moves)
{
	pf_move sorted[PF_MAX_MOVES], naive[PF_MAX_MOVES];
	static pf_legal_sets sets;
	pf_board copy = *b;
	uint64_t own = b->by_colour[b->stm];
	int n, nn, i, code;

	n = pf_gen_legal(b, moves);
	FUZZ_CHECK(n >= 0 && n <= PF_MAX_MOVES);
	memcpy(sorted, moves, (size_t)n * sizeof(*moves));
	qsort(sorted, (size_t)n, sizeof(*sorted), fuzz_move_cmp);
	for (i = 1; i < n; i++)
		FUZZ_CHECK(sorted[i - 1] != sorted[i]);
	nn = naive_gen(b, naive);
	qsort(naive, (size_t)nn, sizeof(*naive), fuzz_move_cmp);
	if (nn != n || memcmp(sorted, naive, (size_t)n * sizeof(*naive))) {
		char fen[PF_FEN_MAX], uci[PF_UCI_MAX];

		fprintf(stderr, "%s: library %d moves, naive %d\n",
		    pf_board_to_fen(b, fen), n, nn);
		for (i = 0; i < n; i++)
			if (!fuzz_in_list(naive, nn, sorted[i]))
				fprintf(stderr, "  only library: %s (0x%04x)\n",
				    pf_move_to_uci(b, sorted[i], uci),
				    sorted[i]);
		for (i = 0; i < nn; i++)
			if (!fuzz_in_list(sorted, n, naive[i]))
				fprintf(stderr, "  only naive: %s (0x%04x)\n",
				    pf_move_to_uci(b, naive[i], uci), naive[i]);
		FUZZ_CHECK(!"pf_gen_legal equals the naive generator");
	}
	/* Every move code from an own piece: pf_is_legal says yes exactly
	   for the listed moves (a sorted list: bsearch). */
	FUZZ_CHECK(!pf_is_legal(b, PF_MOVE_NONE));
	while (own) {
		int from = __builtin_ctzll(own);

		own &= own - 1;
		for (code = 0; code < 64 * 16; code++) {
			pf_move m = (pf_move)(from | code << 6);

			if (pf_is_legal(b, m) != (bsearch(&m, sorted,
			    (size_t)n, sizeof(m), fuzz_move_cmp) != NULL)) {
				char fen[PF_FEN_MAX];

				fprintf(stderr, "%s: pf_is_legal(0x%04x) = "
				    "%d\n",
				    pf_board_to_fen(b, fen), m,
				    pf_is_legal(b, m));
				FUZZ_CHECK(!"pf_is_legal agrees with the list");
			}
		}
	}
	FUZZ_CHECK(pf_count_legal(b) == n);
	FUZZ_CHECK(pf_perft(&copy, 1) == (uint64_t)n);
	FUZZ_CHECK(memcmp(&copy, b, sizeof(copy)) == 0);
	FUZZ_CHECK(pf_legal_sets_fill(b, &sets) == n && sets.count == n);
	for (i = 0; i < n; i++)
		pf_legal_sets_take(&sets, moves[i]);
	FUZZ_CHECK(pf_legal_sets_empty(&sets));
	FUZZ_CHECK(pf_board_status(b) == (n > 0 ? PF_ONGOING :
	    b->checkers ? PF_CHECKMATE : PF_STALEMATE));
	return n;
}

/*
 * Move text of a legal move m: SAN and UCI read back as m, the SAN check
 * suffix says what the move does, and SAN also reads the UCI text.
 * after is the board after m.
 */
FUZZ_STATIC void
fuzz_check_move_text(const pf_board *b, pf_move m, const pf_board *after)
{
	char san[PF_SAN_MAX], uci[PF_UCI_MAX], err[128];
	size_t len;
	pf_move m2;
	int nreply = pf_count_legal(after);

	pf_move_to_san(b, m, san);
	len = strlen(san);
	FUZZ_CHECK(len > 0 && len < PF_SAN_MAX);
	err[0] = '\0';
	if (pf_move_from_san(b, san, len, &m2, err, sizeof(err)) != 0 ||
	    m2 != m) {
		char fen[PF_FEN_MAX];

		fprintf(stderr, "%s: SAN %s of 0x%04x reads back as 0x%04x "
		    "(%s)\n", pf_board_to_fen(b, fen), san, m, m2, err);
		FUZZ_CHECK(!"SAN round trip");
	}
	if (after->checkers == 0)
		FUZZ_CHECK(san[len - 1] != '+' && san[len - 1] != '#');
	else
		FUZZ_CHECK(san[len - 1] == (nreply > 0 ? '+' : '#'));

	pf_move_to_uci(b, m, uci);
	len = strlen(uci);
	FUZZ_CHECK(len == 4 || len == 5);
	m2 = PF_MOVE_NONE;
	FUZZ_CHECK(pf_move_from_uci(b, uci, len, &m2) == 0 && m2 == m);
	m2 = PF_MOVE_NONE;
	FUZZ_CHECK(pf_move_from_san(b, uci, len, &m2, NULL, 0) == 0 && m2 == m);
}

/*
 * Make m on a copy of b and check the result against b and the naive
 * path: squares as played by hand, clocks, castling rights, the en
 * passant square set exactly when a legal capture exists, consistency;
 * then unmake restores b byte for byte.
 */
FUZZ_STATIC void
fuzz_check_make(const pf_board *b, pf_move m, pf_board *after)
{
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m), us = b->stm;
	uint8_t pc = b->squares[from], expect[64];
	uint64_t rights;
	int capture, ep_expected = PF_SQ_NONE;
	pf_board copy = *b;
	pf_undo u;

	capture = PF_MOVE_KIND(m) == PF_MK_ENPASSANT ||
	    (PF_MOVE_KIND(m) != PF_MK_CASTLE &&
	    b->squares[to] != PF_NO_PIECE);
	pf_make_move(&copy, m, &u);
	*after = copy;
	naive_play(b, m, expect);
	FUZZ_CHECK(memcmp(copy.squares, expect, 64) == 0);
	FUZZ_CHECK(copy.stm == !us);
	FUZZ_CHECK(copy.chess960 == b->chess960);
	if (capture || PF_PIECE_TYPE(pc) == PF_PAWN)
		FUZZ_CHECK(copy.rule50 == 0);
	else
		FUZZ_CHECK(copy.rule50 == (b->rule50 < 255 ? b->rule50 + 1 :
		    255));
	FUZZ_CHECK(copy.fullmove == (us == PF_BLACK && b->fullmove < 65535 ?
	    b->fullmove + 1 : b->fullmove));
	rights = b->castle_rooks & ~(1ULL << from) & ~(1ULL << to);
	if (PF_PIECE_TYPE(pc) == PF_KING)
		rights &= ~(us == PF_WHITE ? 0xFFULL : 0xFFULL << 56);
	FUZZ_CHECK(copy.castle_rooks == rights);
	if (PF_PIECE_TYPE(pc) == PF_PAWN && (from ^ to) == 16) {
		/* Is there a legal en passant reply?  Asked of the naive
		   generator on the board with a candidate ep square. */
		pf_board probe = copy;
		pf_move replies[PF_MAX_MOVES];
		int i, nr;

		probe.ep = (uint8_t)((from + to) / 2);
		nr = naive_gen(&probe, replies);
		for (i = 0; i < nr; i++)
			if (PF_MOVE_KIND(replies[i]) == PF_MK_ENPASSANT)
				ep_expected = probe.ep;
	}
	FUZZ_CHECK(copy.ep == ep_expected);
	fuzz_check_consistent(&copy);
	pf_unmake_move(&copy, m, &u);
	FUZZ_CHECK(memcmp(&copy, b, sizeof(copy)) == 0);
}

/*
 * Everything about one board: consistency, round trips, the move list
 * against the naive path, and for each legal move make/unmake and move
 * text; perft depth 2 against the children's counts.  When child is not
 * NULL, the board after the legal move picked by pick (mod the count) is
 * stored there; returns the number of legal moves.
 */
FUZZ_STATIC int
fuzz_check_board(const pf_board *b, unsigned pick, pf_board *child)
{
	pf_move moves[PF_MAX_MOVES];
	pf_board after, copy = *b;
	uint64_t leaves = 0;
	int n, i;

	fuzz_check_consistent(b);
	fuzz_check_round_trips(b);
	n = fuzz_check_movegen(b, moves);
	for (i = 0; i < n; i++) {
		fuzz_check_make(b, moves[i], &after);
		fuzz_check_move_text(b, moves[i], &after);
		leaves += (uint64_t)pf_count_legal(&after);
		if (child != NULL && (unsigned)i == pick % (unsigned)n)
			*child = after;
	}
	FUZZ_CHECK(pf_perft(&copy, 2) == leaves);
	FUZZ_CHECK(memcmp(&copy, b, sizeof(copy)) == 0);
	return n;
}

#endif
