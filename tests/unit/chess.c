/*
 * chess.c - unit tests for the chess core: FEN, SAN and UCI round trips
 * over every perft-suite position and the positions two plies from them,
 * make/unmake and the incremental key, the packed form, validation
 * messages, lenient SAN, the position hash and en passant, and the
 * game-end helpers.  Run from the top of the source tree (tests/run-all
 * does), since it reads the perft files in testdata/perft.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chess.h"
#include "t.h"

#define MAX_FENS 256

static char *fens[MAX_FENS];
static int nfens;

/* Collect the FENs of every perft file (both forms). */
static void
load_suite(void)
{
	static const char *pats[] = { "testdata/perft/*.epd",
	    "testdata/perft/*.perft" };
	char line[1024], *s, *e;
	glob_t g;
	size_t i, p;
	FILE *fp;

	for (p = 0; p < 2; p++) {
		if (glob(pats[p], 0, NULL, &g) != 0)
			continue;
		for (i = 0; i < g.gl_pathc; i++) {
			if ((fp = fopen(g.gl_pathv[i], "r")) == NULL)
				continue;
			while (fgets(line, sizeof(line), fp) != NULL &&
			    nfens < MAX_FENS) {
				s = line;
				if (strncmp(s, "epd ", 4) == 0)
					s += 4;
				else if (strchr(s, ';') == NULL || *s == '#')
					continue;
				e = strchr(s, ';');
				if (e == NULL)
					e = s + strlen(s);
				while (e > s && strchr(" \t\r\n", e[-1]))
					e--;
				*e = '\0';
				fens[nfens++] = strdup(s);
			}
			fclose(fp);
		}
		globfree(&g);
	}
}

static int
board_eq(const pf_board *a, const pf_board *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static int
play(pf_board *b, const char *uci_moves)
{
	char buf[512], *tok, *save;
	pf_move m;
	pf_undo u;

	snprintf(buf, sizeof(buf), "%s", uci_moves);
	for (tok = strtok_r(buf, " ", &save); tok;
	    tok = strtok_r(NULL, " ", &save)) {
		if (pf_move_from_uci(b, tok, strlen(tok), &m) == -1)
			return -1;
		pf_make_move(b, m, &u);
	}
	return 0;
}

/*
 * Everything that must hold for every legal move of one position:
 * SAN and UCI round trips, distinct SAN strings, make/unmake restoring
 * the board exactly, the incremental key, and (for the position reached)
 * validation, FEN and pack round trips.  Returns failures.
 */
static int
check_moves(pf_board *b, int plies, long *count)
{
	pf_move moves[PF_MAX_MOVES], back;
	char san[PF_MAX_MOVES][PF_SAN_MAX], uci[PF_UCI_MAX], fen[PF_FEN_MAX];
	char err[128];
	uint8_t packed[PF_PACKED_SIZE];
	pf_board before = *b, again;
	pf_undo u;
	int n, i, j, bad = 0;

	n = pf_gen_legal(b, moves);
	if (pf_count_legal(b) != n) {
		bad++;
		CHECK_QUIET(0, "pf_count_legal %d, pf_gen_legal %d in %s",
		    pf_count_legal(b), n, pf_board_to_fen(b, fen));
	}
	for (i = 0; i < n; i++) {
		pf_move m = moves[i];

		(*count)++;
		pf_move_to_san(b, m, san[i]);
		if (pf_move_from_san(b, san[i], strlen(san[i]), &back, err,
		    sizeof(err)) == -1 || back != m) {
			bad++;
			CHECK_QUIET(0, "SAN round trip %s in %s: %s", san[i],
			    pf_board_to_fen(b, fen), err);
		}
		for (j = 0; j < i; j++)
			if (strcmp(san[i], san[j]) == 0) {
				bad++;
				CHECK_QUIET(0, "SAN %s twice in %s", san[i],
				    pf_board_to_fen(b, fen));
			}
		pf_move_to_uci(b, m, uci);
		if (pf_move_from_uci(b, uci, strlen(uci), &back) == -1 ||
		    back != m) {
			bad++;
			CHECK_QUIET(0, "UCI round trip %s in %s", uci,
			    pf_board_to_fen(b, fen));
		}
		if (!pf_is_legal(b, m)) {
			bad++;
			CHECK_QUIET(0, "pf_is_legal(%s) is 0", uci);
		}

		pf_make_move(b, m, &u);
		if (b->key != pf_board_compute_key(b)) {
			bad++;
			CHECK_QUIET(0, "key after %s in %s", uci,
			    pf_board_to_fen(&before, fen));
		}
		if (pf_board_validate(b, err, sizeof(err)) == -1) {
			bad++;
			CHECK_QUIET(0, "invalid after %s: %s", uci, err);
		}
		pf_board_to_fen(b, fen);
		if (pf_board_from_fen(&again, fen, err, sizeof(err)) == -1) {
			bad++;
			CHECK_QUIET(0, "FEN %s after %s: %s", fen, uci, err);
		} else {
			again.chess960 = b->chess960;
			if (!board_eq(&again, b)) {
				bad++;
				CHECK_QUIET(0, "FEN round trip %s", fen);
			}
		}
		pf_board_pack(b, packed);
		if (pf_board_unpack(&again, packed, b->chess960, err,
		    sizeof(err)) == -1 || !board_eq(&again, b)) {
			bad++;
			CHECK_QUIET(0, "pack round trip %s", fen);
		}
		if (plies > 1)
			bad += check_moves(b, plies - 1, count);
		pf_unmake_move(b, m, &u);
		if (!board_eq(b, &before)) {
			bad++;
			CHECK_QUIET(0, "unmake %s in %s", uci,
			    pf_board_to_fen(&before, fen));
			*b = before;
		}
	}
	return bad;
}

/* The FEN text pf_board_to_fen should give back: the input with its ep
   field '-' when the board dropped it (no legal capture). */
static const char *
expected_fen(const char *in, const pf_board *b, char *out)
{
	const char *p = in, *ep, *rest;
	int field;

	if (b->ep != PF_SQ_NONE || strlen(in) >= PF_FEN_MAX)
		return in;
	for (field = 0; field < 3 && (p = strchr(p, ' ')) != NULL; field++)
		p++;
	if (p == NULL)
		return in;
	ep = p;
	rest = strchr(ep, ' ');
	if (rest == NULL)
		rest = ep + strlen(ep);
	memcpy(out, in, (size_t)(ep - in));
	out[ep - in] = '-';
	strcpy(out + (ep - in) + 1, rest);
	return out;
}

static void
test_suite(void)
{
	char fen[PF_FEN_MAX], fen2[PF_FEN_MAX], err[128];
	pf_board b, c;
	int i, bad = 0, fenbad = 0;
	long count = 0;

	load_suite();
	CHECK(nfens >= 30, "perft suite has %d positions", nfens);
	for (i = 0; i < nfens; i++) {
		if (pf_board_from_fen(&b, fens[i], err, sizeof(err)) == -1) {
			fenbad++;
			CHECK_QUIET(0, "suite FEN %s: %s", fens[i], err);
			continue;
		}
		pf_board_to_fen(&b, fen);
		if (pf_board_from_fen(&c, fen, err, sizeof(err)) == -1 ||
		    !board_eq(&b, &c) ||
		    strcmp(pf_board_to_fen(&c, fen2), fen) != 0) {
			fenbad++;
			CHECK_QUIET(0, "FEN round trip %s -> %s", fens[i], fen);
		}
		/* Standard castling letters come back as they went in (the
		   ep field too, unless it allows no legal capture). */
		if (!b.chess960 && strcmp(fen, expected_fen(fens[i], &b,
		    fen2)) != 0) {
			fenbad++;
			CHECK_QUIET(0, "FEN text %s -> %s", fens[i], fen);
		}
		bad += check_moves(&b, 2, &count);
	}
	CHECK(fenbad == 0, "FEN round trip of %d suite positions", nfens);
	CHECK(bad == 0 && count > 20000, "SAN/UCI round trip, make/unmake, "
	    "key, FEN and pack round trips for %ld moves (2 plies deep)",
	    count);
}

/* Random games: long lines reach positions the suite does not. */
static void
test_random_games(void)
{
	static const char *starts[] = { PF_STARTPOS_FEN,
	    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
	    "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w AEae - 0 1",
	    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
	};
	uint64_t rng = 0x9E3779B97F4A7C15ULL;
	pf_move moves[PF_MAX_MOVES];
	pf_board b;
	pf_undo u;
	char err[128];
	long count = 0;
	int g, ply, n, bad = 0;

	for (g = 0; g < 60; g++) {
		pf_board_from_fen(&b, starts[g % 4], err, sizeof(err));
		for (ply = 0; ply < 200; ply++) {
			bad += check_moves(&b, 1, &count);
			n = pf_gen_legal(&b, moves);
			if (n == 0 || pf_insufficient_material(&b))
				break;
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			pf_make_move(&b, moves[rng % (uint64_t)n], &u);
		}
	}
	CHECK(bad == 0, "round trips along 60 random games (%ld moves)",
	    count);
}

struct bad_fen {
	const char *fen;
	const char *reason;
};

static void
test_validation(void)
{
	static const struct bad_fen bad[] = {
		{ "8/8/8/8/8/8/8/k7 w - - 0 1", "no white king" },
		{ "K7/8/8/8/8/8/8/8 b - - 0 1", "no black king" },
		{ "k6k/8/8/8/8/8/8/K7 w - - 0 1", "two black kings" },
		{ "k7/8/8/8/8/8/8/K6K w - - 0 1", "two white kings" },
		{ "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
		    "pawn on first or last rank" },
		{ "4k3/8/8/8/8/8/8/p3K3 b - - 0 1",
		    "pawn on first or last rank" },
		{ "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
		    "side not to move is in check" },
		{ "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
		    "castling right K without a rook on h1" },
		{ "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", NULL },
		{ "4k3/8/8/8/8/8/8/4K3 w Q - 0 1",
		    "castling right Q without a rook on a1" },
		{ "r3k3/8/8/8/8/8/8/4K3 w k - 0 1",
		    "castling right k without a rook on h8" },
		{ "4k3/8/8/8/8/8/8/R3K2R w KQH - 0 1",
		    "castling right H given twice" },
		{ "4k3/8/8/8/8/8/8/4K1R1 w H - 0 1",
		    "castling right H without a rook on h1" },
		{ "4k3/8/8/8/8/8/4K3/R6R w K - 0 1",
		    "castling right K without the white king on its first "
		    "rank" },
		{ "4k3/8/8/8/4P3/8/8/4K3 w - e3 0 1",
		    "impossible en passant square e3" },
		{ "4k3/8/8/8/8/8/8/4K3 b - e3 0 1",
		    "impossible en passant square e3" },
		{ "4k3/8/8/8/4P3/4N3/8/4K3 b - e3 0 1",
		    "impossible en passant square e3" },
		{ "4k3/8/8/3p4/8/8/8/4K3 w - d5 0 1",
		    "impossible en passant square d5" },
		{ "4k3/8/8/8/8/8/8/4K3 x - - 0 1", "bad side to move 'x'" },
		{ "4k3/8/8/8/8/8/8/4K3 w - -", NULL },
		{ "4k3/8/8/8/8/8/8/4K3 w -", "FEN needs 4 to 6 fields, not 3" },
		{ "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra",
		    "FEN needs 4 to 6 fields, not 7" },
		{ "4k3/8/8/8/8/8/8/4K2 w - - 0 1",
		    "bad FEN board: not 8 full ranks" },
		{ "4k3/8/8/8/8/8/8/4K4 w - - 0 1",
		    "bad FEN board: rank 1 too long" },
		{ "4k3/8/8/8/8/8/8 w - - 0 1",
		    "bad FEN board: not 8 full ranks" },
		{ "4k3/8/8/8/8/8/8/4X3 w - - 0 1",
		    "bad FEN board character 'X'" },
		{ "4k3/8/8/8/8/8/8/4K3 w - - x 1", "bad half-move clock 'x'" },
		{ "4k3/8/8/8/8/8/8/4K3 w - - 0 -1",
		    "bad full-move number '-1'" },
		{ "4k3/8/8/8/8/8/8/4K3 w - e9 0 1",
		    "bad en passant field 'e9'" },
		{ "4k3/8/8/8/8/8/8/4K3 w Z - 0 1",
		    "bad castling field character 'Z'" },
		{ "k7/4q3/8/8/1b6/5n2/8/4K3 w - - 0 1",
		    "side to move is in check by more than two pieces" },
		{ "4k3/pppppppp/8/8/8/Q7/PPPPPPPP/QQQQKQQQ w - - 0 1",
		    "more than 16 white pieces" },
		{ "4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1",
		    "more than 8 white pawns" },
		/* clocks are never negative */
		{ "4k3/8/8/8/8/8/8/4K3 w - - -1 1",
		    "bad half-move clock '-1'" },
		/* a king that may castle is never in a corner */
		{ "4k3/8/8/8/8/8/8/R6K w Q - 0 1",
		    "castling right with the white king on h1, a corner" },
		{ "k6r/8/8/8/8/8/8/4K3 b h - 0 1",
		    "castling right with the black king on a8, a corner" },
		{ "4k3/8/8/8/8/8/8/KR6 w B - 0 1",
		    "castling right with the white king on a1, a corner" },
		{ "1k2r3/8/8/8/8/8/8/RK2R3 w AE - 0 1", NULL },
		/* checks no move can give */
		{ "k7/8/8/8/8/8/8/r3K2r w - - 0 1",
		    "impossible double check from both sides of the king" },
		{ "4r3/8/8/8/4K3/8/8/k3r3 w - - 0 1",
		    "impossible double check from both sides of the king" },
		{ "k7/8/8/8/4K3/8/8/q3r3 w - - 0 1", NULL },
		{ "k7/8/8/8/4K3/8/2b3b1/8 w - - 0 1",
		    "impossible double check by two bishops" },
		{ "k7/8/8/8/4K3/8/2q3b1/8 w - - 0 1", NULL },
		{ "4k3/8/8/8/8/3n1n2/8/4K3 w - - 0 1",
		    "impossible double check by two pawns or knights" },
		{ "4k3/8/8/3p1p2/4K3/8/8/8 w - - 0 1",
		    "impossible double check by two pawns or knights" },
		{ "4k3/8/8/3p4/4K3/8/5n2/8 w - - 0 1",
		    "impossible double check by two pawns or knights" },
		{ "4k3/8/2b2n2/8/4K3/8/8/8 w - - 0 1", NULL },
		{ "4k3/8/8/3p4/4K3/8/8/4r3 w - d6 0 1",
		    "impossible check after the double pawn push of the en "
		    "passant square" },
		{ "4k3/8/8/3p4/8/8/8/K3r3 w - d6 0 1",
		    "impossible check after the double pawn push of the en "
		    "passant square" },
		{ "4k3/8/8/3p4/8/8/8/K3r3 w - - 0 1", NULL },
		{ "2b1k3/8/4K3/3p4/8/8/8/8 w - d6 0 1", NULL },
		{ "4k3/8/8/3p4/4K3/8/8/8 w - d6 0 1", NULL },
	};
	char err[128];
	pf_board b;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		rc = pf_board_from_fen(&b, bad[i].fen, err, sizeof(err));
		if (bad[i].reason == NULL)
			CHECK(rc == 0, "valid: %s (%s)", bad[i].fen, err);
		else
			CHECK(rc == -1 && strcmp(err, bad[i].reason) == 0,
			    "rejects %s: \"%s\" (got \"%s\")", bad[i].fen,
			    bad[i].reason, err);
	}
	/* NULL err is allowed. */
	CHECK(pf_board_from_fen(&b, "8/8/8/8/8/8/8/8 w - - 0 1", NULL, 0) ==
	    -1, "NULL error buffer");

	/* A possible ep square without a legal capture is dropped. */
	rc = pf_board_from_fen(&b, "4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1", err,
	    sizeof(err));
	CHECK(rc == 0 && b.ep == PF_SQ_NONE, "ep e3 without capture dropped");
	/* ... and kept when there is one; not when the capture is pinned. */
	rc = pf_board_from_fen(&b, "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1", err,
	    sizeof(err));
	CHECK(rc == 0 && b.ep == 20, "ep e3 with a capture kept");
	rc = pf_board_from_fen(&b, "8/8/8/8/k2pP2R/8/8/4K3 b - e3 0 1", err,
	    sizeof(err));
	CHECK(rc == 0 && b.ep == PF_SQ_NONE, "ep e3 pinned on the rank "
	    "dropped");

	/* Boards built by hand go through the same validation. */
	pf_board_startpos(&b);
	b.castle_rooks |= 1ULL << 1;
	CHECK(pf_board_validate(&b, err, sizeof(err)) == -1 &&
	    strcmp(err, "castling right on b1 without a white rook there") ==
	    0, "castling rook that is a knight: %s", err);
	pf_board_startpos(&b);
	b.ep = 20;
	CHECK(pf_board_validate(&b, err, sizeof(err)) == -1 &&
	    strcmp(err, "impossible en passant square e3") == 0,
	    "board ep e3 with white to move: %s", err);
	pf_board_startpos(&b);
	CHECK(pf_board_validate(&b, err, sizeof(err)) == 0,
	    "start position is valid");
}

static void
test_pack(void)
{
	uint8_t p[PF_PACKED_SIZE], q[PF_PACKED_SIZE];
	char err[128], fen[PF_FEN_MAX];
	pf_board b, c;
	int i;

	pf_board_startpos(&b);
	pf_board_pack(&b, p);
	CHECK(p[0] == 0xFF && p[1] == 0xFF && p[6] == 0xFF && p[7] == 0xFF &&
	    p[2] == 0, "occupancy of the start position");
	/* a1 rook with castling right (6), b1 knight (1): 0x16. */
	CHECK(p[8] == 0x16 && p[9] == 0x42 && p[10] == 0x25 &&
	    p[11] == 0x61, "white back rank nibbles %02x %02x %02x %02x",
	    p[8], p[9], p[10], p[11]);
	CHECK(p[23] == 0xE9 && p[24] == 64 && p[25] == 0 && p[26] == 1 &&
	    p[27] == 0, "black rooks, stm_ep, clocks");
	CHECK(pf_board_unpack(&c, p, 0, err, sizeof(err)) == 0 &&
	    board_eq(&b, &c), "unpack start position");

	pf_board_from_fen(&b, "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w "
	    "AEae - 0 1", err, sizeof(err));
	pf_board_pack(&b, p);
	CHECK(pf_board_unpack(&c, p, 0, err, sizeof(err)) == 0 &&
	    c.chess960 == 1 && board_eq(&b, &c),
	    "Chess960 castling rooks set chess960 on unpack");
	pf_board_startpos(&b);
	pf_board_pack(&b, p);
	CHECK(pf_board_unpack(&c, p, 1, err, sizeof(err)) == 0 &&
	    c.chess960 == 1, "chess960 argument sets the flag");

	pf_board_from_fen(&b, "4k3/8/8/8/3pP3/8/8/4K3 b - e3 7 42", err,
	    sizeof(err));
	pf_board_pack(&b, p);
	CHECK(p[24] == (0x80 | 20) && p[25] == 7 && p[26] == 42,
	    "stm_ep and clocks packed");

	pf_board_startpos(&b);
	pf_board_pack(&b, p);
	memcpy(q, p, sizeof(q));
	q[8] = 0x17;		/* type 7 */
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1 &&
	    strcmp(err, "bad piece code 7 on a1") == 0, "bad nibble: %s",
	    err);
	memcpy(q, p, sizeof(q));
	q[2] = 0x01;		/* 33 pieces */
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1 &&
	    strcmp(err, "packed position has 33 pieces") == 0,
	    "too many pieces: %s", err);
	memcpy(q, p, sizeof(q));
	q[0] = 0x7F;		/* 31 pieces, a trailing nibble left */
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1,
	    "data after the pieces: %s", err);
	memcpy(q, p, sizeof(q));
	q[24] = 65;
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1 &&
	    strstr(err, "impossible en passant") != NULL,
	    "ep 65 rejected: %s", err);
	memcpy(q, p, sizeof(q));
	q[24] = 20;
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1 &&
	    strcmp(err, "impossible en passant square e3") == 0,
	    "ep e3 with white to move rejected: %s", err);
	memset(q, 0, sizeof(q));
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1 &&
	    strcmp(err, "no white king") == 0, "empty board: %s", err);
	/* King on e1 but castling "rook" marked on d1 where a queen is. */
	memcpy(q, p, sizeof(q));
	q[9] = 0x3E;		/* c1 bishop, d1 castling rook (6) */
	CHECK(pf_board_unpack(&c, q, 0, err, sizeof(err)) == -1,
	    "two castling rooks on one side: %s", err);
	/* Every byte value of stm_ep either decodes validly or is refused. */
	for (i = 0; i < 256; i++) {
		memcpy(q, p, sizeof(q));
		q[24] = (uint8_t)i;
		if (pf_board_unpack(&c, q, 0, err, sizeof(err)) == 0)
			CHECK_QUIET(pf_board_validate(&c, err, sizeof(err)) ==
			    0, "stm_ep %d: %s", i, pf_board_to_fen(&c, fen));
	}
	CHECK(1, "stm_ep byte sweep");
}

static void
test_san(void)
{
	static const struct { const char *fen, *san, *uci; } ok[] = {
		{ PF_STARTPOS_FEN, "Nf3", "g1f3" },
		{ PF_STARTPOS_FEN, "Ngf3", "g1f3" },
		{ PF_STARTPOS_FEN, "Ng1f3", "g1f3" },
		{ PF_STARTPOS_FEN, "Ng1-f3", "g1f3" },
		{ PF_STARTPOS_FEN, "Nxf3", "g1f3" },
		{ PF_STARTPOS_FEN, "Nf3!?", "g1f3" },
		{ PF_STARTPOS_FEN, "e4", "e2e4" },
		{ PF_STARTPOS_FEN, "e4!!", "e2e4" },
		{ PF_STARTPOS_FEN, "Pe4", "e2e4" },
		{ PF_STARTPOS_FEN, "e2e4", "e2e4" },
		{ PF_STARTPOS_FEN, "e2-e4", "e2e4" },
		{ PF_STARTPOS_FEN, " e4 ", "e2e4" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O", "e1g1" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0", "e1g1" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O", "e1c1" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0-0+", "e1c1" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "O-O", "e8g8" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "e1g1" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1h1", "e1g1" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8=Q+", "a7a8q" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8Q", "a7a8q" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8q", "a7a8q" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8=N", "a7a8n" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8r", "a7a8r" },
		{ "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "axb8=B", "a7b8b" },
		{ "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "ab8B", "a7b8b" },
		{ "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w "
		    "KQkq - 2 3", "Qxf7#", "h5f7" },
		{ "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w "
		    "KQkq - 2 3", "Qf7", "h5f7" },
		{ "rnbqkb1r/ppp1pppp/5n2/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq "
		    "- 2 3", "Nbd2", "b1d2" },
		{ "rnbqkb1r/ppp1pppp/5n2/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq "
		    "- 2 3", "Nfd2", "f3d2" },
		{ "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "exd6", "e5d6" },
		{ "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "exd6e.p.", "e5d6" },
		{ "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "ed6", "e5d6" },
		{ "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w AEae - 0 1", "b1a1",
		    "b1a1" },
		{ "1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1", "O-O", "g1h1" },
		{ "1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1", "g1h1", "g1h1" },
		{ "1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1", "O-O-O", "g1b1" },
		{ "1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1", "g1c1", "g1b1" },
		{ "1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1", "Kf1", "g1f1" },
		{ "5rk1/8/8/8/8/8/8/4K2R w K - 0 1", "Rh8+", "h1h8" },
	};
	static const struct { const char *fen, *san, *reason; } bad[] = {
		{ PF_STARTPOS_FEN, "Ke2", "illegal move Ke2" },
		{ PF_STARTPOS_FEN, "Nf6", "illegal move Nf6" },
		{ PF_STARTPOS_FEN, "e5", "illegal move e5" },
		{ PF_STARTPOS_FEN, "O-O", "illegal move O-O" },
		{ PF_STARTPOS_FEN, "xyz", "cannot read move xyz" },
		{ PF_STARTPOS_FEN, "", "empty or overlong move text" },
		{ PF_STARTPOS_FEN, "e2e5", "illegal move e2e5" },
		{ PF_STARTPOS_FEN, "Nf3=Q", "cannot read move Nf3=Q" },
		{ "rnbqkb1r/ppp1pppp/5n2/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq "
		    "- 2 3", "Nd2", "ambiguous move Nd2" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8",
		    "promotion piece missing in a8" },
		{ "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8=K", "cannot read move "
		    "a8=K" },
		{ "4k3/8/8/8/8/8/8/4K3 w - - 0 1", "dxe4", "illegal move dxe4" },
	};
	char err[128], buf[PF_SAN_MAX], uci[PF_UCI_MAX];
	pf_board b;
	pf_move m;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		pf_board_from_fen(&b, ok[i].fen, err, sizeof(err));
		err[0] = '\0';
		rc = pf_move_from_san(&b, ok[i].san, strlen(ok[i].san), &m, err,
		    sizeof(err));
		pf_move_to_uci(&b, m, uci);
		CHECK(rc == 0 && strcmp(uci, ok[i].uci) == 0,
		    "SAN \"%s\" is %s (%s)", ok[i].san, ok[i].uci,
		    rc == 0 ? uci : err);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pf_board_from_fen(&b, bad[i].fen, err, sizeof(err));
		err[0] = '\0';
		rc = pf_move_from_san(&b, bad[i].san, strlen(bad[i].san), &m,
		    err, sizeof(err));
		CHECK(rc == -1 && strcmp(err, bad[i].reason) == 0,
		    "SAN \"%s\" rejected: %s", bad[i].san, err);
	}
	/* len bounds the text: no NUL needed. */
	pf_board_startpos(&b);
	CHECK(pf_move_from_san(&b, "e4xyz", 2, &m, err, sizeof(err)) == 0 &&
	    m == PF_MAKE_MOVE(12, 28, PF_MK_NORMAL, 0), "length-bounded SAN");

	/* SAN out. */
	pf_board_from_fen(&b, "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/"
	    "RNB1K1NR w KQkq - 2 3", err, sizeof(err));
	pf_move_from_uci(&b, "h5f7", 4, &m);
	CHECK(strcmp(pf_move_to_san(&b, m, buf), "Qxf7#") == 0, "SAN %s",
	    buf);
	pf_board_from_fen(&b, "4k3/8/8/8/8/R7/8/R3K3 w - - 0 1", err,
	    sizeof(err));
	pf_move_from_uci(&b, "a1a2", 4, &m);
	CHECK(strcmp(pf_move_to_san(&b, m, buf), "R1a2") == 0, "SAN %s", buf);
	pf_board_from_fen(&b, "6k1/8/8/8/Q2Q4/8/8/Q3K3 w - - 0 1", err,
	    sizeof(err));
	pf_move_from_uci(&b, "a4d1", 4, &m);
	CHECK(strcmp(pf_move_to_san(&b, m, buf), "Qa4d1") == 0, "SAN %s",
	    buf);
	pf_board_from_fen(&b, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", err,
	    sizeof(err));
	pf_move_from_uci(&b, "e1c1", 4, &m);
	CHECK(strcmp(pf_move_to_san(&b, m, buf), "O-O-O") == 0 &&
	    strcmp(pf_move_to_uci(&b, m, uci), "e1c1") == 0 &&
	    m == PF_MAKE_MOVE(4, 0, PF_MK_CASTLE, 0),
	    "castling is king takes rook inside, e1c1 outside");
	pf_board_from_fen(&b, "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", err,
	    sizeof(err));
	pf_move_from_uci(&b, "a7a8q", 5, &m);
	CHECK(strcmp(pf_move_to_san(&b, m, buf), "a8=Q+") == 0, "SAN %s", buf);
	pf_board_from_fen(&b, "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w AEae "
	    "- 0 1", err, sizeof(err));
	CHECK(pf_move_from_uci(&b, "b1a1", 4, &m) == 0 &&
	    strcmp(pf_move_to_uci(&b, m, uci), "b1a1") == 0 &&
	    strcmp(pf_move_to_san(&b, m, buf), "O-O-O") == 0,
	    "Chess960 castling prints king to rook");
	CHECK(pf_move_from_uci(&b, "b1c1", 4, &m) == 0 &&
	    PF_MOVE_KIND(m) == PF_MK_NORMAL, "Chess960 b1c1 is a king step");
	CHECK(pf_move_from_uci(&b, "a2a5", 4, &m) == -1 &&
	    pf_move_from_uci(&b, "a2", 2, &m) == -1 &&
	    pf_move_from_uci(&b, "a2a3x", 5, &m) == -1 &&
	    pf_move_from_uci(&b, "i2a3", 4, &m) == -1, "bad UCI rejected");
}

static void
test_hash_and_ep(void)
{
	char err[128], fen[PF_FEN_MAX];
	pf_board a, b, c;

	pf_board_startpos(&a);
	play(&a, "e2e4");
	CHECK(strcmp(pf_board_to_fen(&a, fen), "rnbqkbnr/pppppppp/8/8/4P3/8/"
	    "PPPP1PPP/RNBQKBNR b KQkq - 0 1") == 0 && a.ep == PF_SQ_NONE,
	    "after 1.e4 the FEN has ep '-': %s", fen);

	/* Same position, last move a double push without an ep capture. */
	pf_board_startpos(&a);
	pf_board_startpos(&b);
	play(&a, "e2e4 g8f6 g1f3");
	play(&b, "g1f3 g8f6 e2e4");
	CHECK(a.key == b.key && pf_board_hash(&a) == pf_board_hash(&b),
	    "double push with no ep capture hashes like any other way");
	pf_board_from_fen(&c, "rnbqkb1r/pppppppp/5n2/8/4P3/5N2/PPPP1PPP/"
	    "RNBQKB1R b KQkq e3 2 2", err, sizeof(err));
	CHECK(pf_board_hash(&c) == pf_board_hash(&a) && c.key == a.key,
	    "a FEN ep square with no capture does not change the hash");

	/* Same placement; one has a legal ep capture. */
	pf_board_startpos(&a);
	pf_board_startpos(&b);
	play(&a, "e2e4 a7a6 e4e5 d7d5");
	play(&b, "e2e3 a7a6 e3e4 d7d6 e4e5 d6d5");
	CHECK(memcmp(a.squares, b.squares, 64) == 0 && a.stm == b.stm,
	    "same placement and side to move");
	CHECK(a.ep == 43 && strstr(pf_board_to_fen(&a, fen), " d6 ") != NULL,
	    "ep d6 set when exd6 is legal: %s", fen);
	CHECK(pf_board_hash(&a) != pf_board_hash(&b) && a.key != b.key,
	    "a legal ep capture changes the hash");
	pf_board_from_fen(&c, "rnbqkbnr/1pp1pppp/p7/3pP3/8/8/PPPP1PPP/RNBQKBNR"
	    " w KQkq - 0 3", err, sizeof(err));
	CHECK(pf_board_hash(&c) == pf_board_hash(&b),
	    "hash ignores the clocks");
	CHECK(pf_board_hash(&a) != 0 && pf_board_hash(&a) ==
	    pf_board_hash(&a), "hash is stable");

	/* A pinned ep capturer leaves ep unset after the double push. */
	pf_board_from_fen(&a, "8/2p5/8/KP5r/8/8/8/7k b - - 0 1", err,
	    sizeof(err));
	play(&a, "c7c5");
	CHECK(a.ep == PF_SQ_NONE && a.key == pf_board_compute_key(&a),
	    "ep not set when the only capture is pinned on the rank");
}

static void
test_status(void)
{
	uint64_t keys[32];
	char err[128];
	pf_board b;
	pf_move m;
	pf_undo u;
	const char *line[] = { "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6",
	    "f3g1", "f6g8" };
	int i, n = 0;

	pf_board_startpos(&b);
	CHECK(pf_board_status(&b) == PF_ONGOING && !pf_in_check(&b),
	    "start position is ongoing");
	play(&b, "f2f3 e7e5 g2g4 d8h4");
	CHECK(pf_board_status(&b) == PF_CHECKMATE && pf_in_check(&b),
	    "fool's mate is checkmate");
	pf_board_from_fen(&b, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", err,
	    sizeof(err));
	CHECK(pf_board_status(&b) == PF_STALEMATE && !pf_in_check(&b),
	    "stalemate");

	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/4K3 w - - 0 1", err,
	    sizeof(err));
	CHECK(pf_insufficient_material(&b), "K v K insufficient");
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/4KN2 w - - 0 1", err,
	    sizeof(err));
	CHECK(pf_insufficient_material(&b), "KN v K insufficient");
	pf_board_from_fen(&b, "4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", err,
	    sizeof(err));
	CHECK(pf_insufficient_material(&b), "KB v KB same colour "
	    "insufficient");
	pf_board_from_fen(&b, "4k1b1/8/8/8/8/8/8/2B1K3 w - - 0 1", err,
	    sizeof(err));
	CHECK(!pf_insufficient_material(&b), "KB v KB opposite colours "
	    "sufficient");
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/3NKN2 w - - 0 1", err,
	    sizeof(err));
	CHECK(!pf_insufficient_material(&b), "KNN v K not counted");
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/3PK3 w - - 0 1", err,
	    sizeof(err));
	CHECK(!pf_insufficient_material(&b), "KP v K sufficient");

	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/R3K3 w - - 100 80", err,
	    sizeof(err));
	CHECK(pf_fifty_move_draw(&b), "fifty-move rule at rule50 100");
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/R3K3 w - - 99 80", err,
	    sizeof(err));
	CHECK(!pf_fifty_move_draw(&b), "not at rule50 99");
	pf_board_from_fen(&b, "R3k3/8/4K3/8/8/8/8/8 b - - 100 80", err,
	    sizeof(err));
	CHECK(pf_board_status(&b) == PF_CHECKMATE && !pf_fifty_move_draw(&b),
	    "checkmate beats the fifty-move rule");
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/R3K3 w - - 300 80", err,
	    sizeof(err));
	CHECK(b.rule50 == 255, "half-move clock saturates at 255");

	pf_board_startpos(&b);
	keys[n++] = b.key;
	for (i = 0; i < 8; i++) {
		pf_move_from_uci(&b, line[i], 4, &m);
		pf_make_move(&b, m, &u);
		keys[n++] = b.key;
	}
	CHECK(pf_repetition_count(keys, n, b.rule50) == 3,
	    "threefold repetition counted");
	CHECK(pf_repetition_count(keys, n - 1, b.rule50 - 1) == 2,
	    "twofold one ply earlier");
	CHECK(pf_repetition_count(keys, n, 3) == 1,
	    "rule50 bounds the look-back");
	CHECK(pf_repetition_count(keys, 1, 0) == 1, "first occurrence");
	pf_move_from_uci(&b, "e2e4", 4, &m);
	pf_make_move(&b, m, &u);
	keys[n++] = b.key;
	CHECK(pf_repetition_count(keys, n, b.rule50) == 1 && b.rule50 == 0,
	    "a pawn move resets the count");
}

static void
test_fen_out(void)
{
	char err[128], fen[PF_FEN_MAX];
	pf_board b;
	static const struct { const char *in, *out; } cases[] = {
		{ "2k5/8/8/8/8/8/8/2KR3R w D - 0 1",
		    "2k5/8/8/8/8/8/8/2KR3R w D - 0 1" },
		{ "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w AEae - 0 1",
		    "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w KQkq - 0 1" },
		{ "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1",
		    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1" },
		{ "4k3/8/8/8/8/8/8/4K1RR w G - 0 1",
		    "4k3/8/8/8/8/8/8/4K1RR w G - 0 1" },
		{ "4k3/8/8/8/8/8/8/4K1RR w K - 0 1",
		    "4k3/8/8/8/8/8/8/4K1RR w K - 0 1" },
		{ "4k3/8/8/8/8/8/8/4K3 w - - 5", "4k3/8/8/8/8/8/8/4K3 w - - 5 1" },
		{ "4k3/8/8/8/8/8/8/4K3 b - - 0 0", "4k3/8/8/8/8/8/8/4K3 b - - 0 1" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = pf_board_from_fen(&b, cases[i].in, err, sizeof(err));

		CHECK(rc == 0 && strcmp(pf_board_to_fen(&b, fen),
		    cases[i].out) == 0, "FEN %s -> %s (%s)", cases[i].in,
		    cases[i].out, rc == 0 ? fen : err);
	}
	pf_board_from_fen(&b, "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", err,
	    sizeof(err));
	CHECK(b.chess960 == 0, "HAha on a standard setup is standard chess");
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/4K1RR w G - 0 1", err,
	    sizeof(err));
	CHECK(b.chess960 == 1 && b.castle_rooks == 1ULL << 6,
	    "an inner rook needs Chess960");
}

int
main(void)
{
	test_validation();
	test_fen_out();
	test_pack();
	test_san();
	test_hash_and_ep();
	test_status();
	test_suite();
	test_random_games();
	return t_done();
}
