/*
 * sfformats.c - unit tests of the trainer-format codecs (lib/sfformats.c):
 * hand-built vectors from each format's public description, a viriformat
 * game byte by byte, plain text, round trips over positions with castling
 * rights, en passant, promotions and underpromotions with either side to
 * move, malformed inputs refused with a reason, and random damage that
 * either is refused or decodes to a valid entry.
 *
 * Where the vectors come from:
 *   - bin: Stockfish tools branch, src/learn/packed_sfen.h (the 40-byte
 *     PackedSfenValue) and src/learn/sfen_packer.cpp (SfenPacker::pack),
 *     with the fullmove and rule50 high bits of the packer in
 *     src/extra/nnue_data_binpack_format.h.  The PackedSfen bytes below
 *     were worked out bit by bit from that description (stream order is
 *     given beside them) and checked against a separate reference
 *     written from the C++ source.
 *   - marlinformat: viridithas src/datagen/dataformat/marlinformat.rs
 *     (PackedBoard: occupancy, nibbles with 6 = a rook with a castling
 *     right, stm_ep, halfmove, fullmove, eval, wdl, extra) and bullet's
 *     bulletformat crate (src/chess.rs: MarlinFormat::score() negates the
 *     eval when black is to move, so the eval is White's; the result is
 *     2 white win .. 0 black win).
 *   - bulletformat: bulletformat src/chess.rs (ChessBoard and its
 *     FromStr: the board flipped to the side to move, score and result
 *     from the side to move's view, ksq, opp_ksq ^ 56).
 *   - viriformat: viridithas src/datagen/dataformat.rs (Game::
 *     serialise_into: the PackedBoard, (u16 move, i16 eval) pairs, a
 *     4-byte zero terminator) and src/chess/chessmove.rs (the move bits).
 *   - plain: nnue_data_binpack_format.h's emitPlainEntry and Stockfish's
 *     convert_plain: "fen", "move", "score", "ply", "result", "e".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfformats.h"
#include "t.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void
board(pf_board *b, const char *fen)
{
	char err[128];

	if (pf_board_from_fen(b, fen, err, sizeof(err)) == -1) {
		printf("Bail out! bad test FEN %s: %s\n", fen, err);
		exit(1);
	}
}

static pf_move
uci(const pf_board *b, const char *s)
{
	pf_move m;

	if (pf_move_from_uci(b, s, strlen(s), &m) == -1) {
		printf("Bail out! bad test move %s\n", s);
		exit(1);
	}
	return m;
}

static int
same_board(const pf_board *a, const pf_board *b)
{
	char fa[PF_FEN_MAX], fb[PF_FEN_MAX];

	/* Without castling rights the Chess960 flag changes nothing, and no
	   format (a FEN neither) keeps it. */
	return strcmp(pf_board_to_fen(a, fa), pf_board_to_fen(b, fb)) == 0 &&
	    (a->chess960 == b->chess960 || a->castle_rooks == 0) &&
	    a->key == b->key;
}

static int
close_score(int a, int b)
{
	return a - b <= 1 && b - a <= 1;
}

static void
hex(const uint8_t *p, size_t n)
{
	size_t i;

	printf("# ");
	for (i = 0; i < n; i++)
		printf("%02x%s", p[i], i + 1 < n ? " " : "\n");
}

/* ---- scores and moves ------------------------------------------------ */

static void
test_scores(void)
{
	int cp, s, bad;

	CHECK(pf_sfscore_to_cp(208) == 100 && pf_sfscore_to_cp(-208) == -100,
	    "208 internal units are 100 cp");
	CHECK(pf_sfscore_to_cp(26) == 13 && pf_sfscore_to_cp(-26) == -13,
	    "12.5 cp rounds away from zero");
	CHECK(pf_sfscore_from_cp(100) == 208 && pf_sfscore_from_cp(-1) == -2,
	    "cp to internal units: round(cp * 2.08)");
	CHECK(pf_sfscore_to_cp(31990) == 31990 &&
	    pf_sfscore_to_cp(-31999) == -31999 &&
	    pf_sfscore_from_cp(31990) == 31990, "mate scores pass unchanged");
	CHECK(pf_sfscore_from_cp(32467) == 32000 &&
	    pf_sfscore_from_cp(-32768) == -32000,
	    "a mate past 32000 (viridithas' 32467 - n) is clamped to 32000");
	CHECK(pf_sfscore_from_cp(20000) == 31753 &&
	    pf_sfscore_from_cp(-16000) == -31753,
	    "a large non-mate cp never becomes a mate");
	bad = 0;
	for (cp = -15266; cp <= 15266; cp++)
		if (pf_sfscore_to_cp(pf_sfscore_from_cp((int16_t)cp)) != cp)
			bad++;
	CHECK(bad == 0, "cp -> internal -> cp is exact for |cp| <= 15266 "
	    "(%d off)", bad);
	bad = 0;
	for (s = -31753; s <= 31753; s++)
		if (!close_score(pf_sfscore_from_cp(pf_sfscore_to_cp(
		    (int16_t)s)), s))
			bad++;
	for (s = 31754; s <= 32000; s++)
		if (pf_sfscore_from_cp(pf_sfscore_to_cp((int16_t)s)) != s ||
		    pf_sfscore_from_cp(pf_sfscore_to_cp((int16_t)-s)) != -s)
			bad++;
	CHECK(bad == 0, "internal -> cp -> internal within 1, mates exact "
	    "(%d off)", bad);
}

static void
test_moves(void)
{
	static const char *fens[] = {
		PF_STARTPOS_FEN,
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R "
		    "w KQkq - 0 1",
		"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
		"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
		"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf "
		    "- 2 9",
	};
	pf_move list[PF_MAX_MOVES];
	pf_board b;
	size_t i;
	int n, j, bad = 0, count = 0;

	/* Stockfish: to | from << 6 | promo << 12 | kind << 14. */
	board(&b, PF_STARTPOS_FEN);
	CHECK(pf_sfmove_encode(uci(&b, "e2e4")) == 0x031C,
	    "sf e2e4 = 28 | 12 << 6 = 0x031c");
	board(&b, "4k2r/P7/8/3pP3/8/8/8/R3K2R w KQk d6 0 1");
	CHECK(pf_sfmove_encode(uci(&b, "e1g1")) == 0xC107,
	    "sf castling e1h1 = 7 | 4 << 6 | 3 << 14 = 0xc107");
	CHECK(pf_sfmove_encode(uci(&b, "a7a8q")) == 0x7C38 &&
	    pf_sfmove_encode(uci(&b, "a7a8n")) == 0x4C38,
	    "sf a7a8q = 0x7c38, a7a8n = 0x4c38");
	CHECK(pf_sfmove_encode(uci(&b, "e5d6")) == 0x892B,
	    "sf en passant e5d6 = 43 | 36 << 6 | 2 << 14 = 0x892b");
	/* viriformat: from | to << 6 | promo << 12 | flag << 14. */
	CHECK(pf_virimove_encode(uci(&b, "e1g1")) == 0x81C4,
	    "viri castling e1h1 = 4 | 7 << 6 | 0x8000 = 0x81c4");
	CHECK(pf_virimove_encode(uci(&b, "a7a8q")) == 0xFE30 &&
	    pf_virimove_encode(uci(&b, "a7a8b")) == 0xDE30 &&
	    pf_virimove_encode(uci(&b, "a7a8n")) == 0xCE30,
	    "viri a7a8q = 0xfe30, a7a8b = 0xde30, a7a8n = 0xce30");
	CHECK(pf_virimove_encode(uci(&b, "e5d6")) == 0x4AE4,
	    "viri en passant e5d6 = 36 | 43 << 6 | 0x4000 = 0x4ae4");
	CHECK(pf_sfmove_decode(0) == PF_MOVE_NONE &&
	    pf_virimove_decode(0) == PF_MOVE_NONE, "0 is no move");
	for (i = 0; i < sizeof(fens) / sizeof(fens[0]); i++) {
		board(&b, fens[i]);
		n = pf_gen_legal(&b, list);
		for (j = 0; j < n; j++, count++)
			if (pf_sfmove_decode(pf_sfmove_encode(list[j])) !=
			    list[j] || pf_virimove_decode(pf_virimove_encode(
			    list[j])) != list[j])
				bad++;
	}
	CHECK(bad == 0, "both move encodings round-trip %d legal moves", count);
}

/* ---- plain ------------------------------------------------------------ */

static void
test_plain(void)
{
	static const char want[] =
	    "fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n"
	    "move e2e4\nscore 40\nply 0\nresult 1\ne\n";
	static const char two[] =
	    "\n\r\nfen r3k2r/8/8/3pP3/8/8/8/R3K2R w Kq d6 0 300\r\n"
	    "score -17\r\nresult -1\nply 598\n  move e1g1  \ne\r\n"
	    "\nfen 4k3/8/8/8/8/8/8/4K2R b K - 100 70\nmove (none)\n"
	    "score 31990\nply 139\nresult 0\ne";
	char text[PF_PLAIN_MAX], err[128];
	pf_sfentry e, d;
	size_t used, off;
	int rc;

	memset(&e, 0, sizeof(e));
	board(&e.board, PF_STARTPOS_FEN);
	e.move = uci(&e.board, "e2e4");
	e.score = 40;
	e.result = 1;
	CHECK(pf_plain_encode(&e, text) == strlen(want) &&
	    strcmp(text, want) == 0, "plain: the start position's six lines");
	rc = pf_plain_decode(want, strlen(want), 0, &d, &used, err,
	    sizeof(err));
	CHECK(rc == 1 && used == strlen(want) && same_board(&d.board,
	    &e.board) && d.move == e.move && d.score == 40 && d.ply == 0 &&
	    d.result == 1, "plain: read back");

	/* Blank lines, \r\n, another order, castling as e1g1, no move, and
	   a last line without its newline at eof. */
	rc = pf_plain_decode(two, sizeof(two) - 1, 0, &d, &used, err,
	    sizeof(err));
	off = used;
	CHECK(rc == 1 && d.move == PF_MAKE_MOVE(4, 7, PF_MK_CASTLE, 0) &&
	    d.score == -17 && d.ply == 598 && d.result == -1 &&
	    d.board.ep == 43 && d.board.fullmove == 300,
	    "plain: CRLF, blank lines, any order, castling e1g1");
	rc = pf_plain_decode(two + off, sizeof(two) - 1 - off, 0, &d, &used,
	    err, sizeof(err));
	CHECK(rc == 0 && used == 1, "plain: the last entry without its "
	    "newline needs more input unless at eof (rc %d, used %zu)", rc,
	    used);
	rc = pf_plain_decode(two + off, sizeof(two) - 1 - off, 1, &d, &used,
	    err, sizeof(err));
	CHECK(rc == 1 && off + used == sizeof(two) - 1 &&
	    d.move == PF_MOVE_NONE && d.score == 31990 && d.ply == 139 &&
	    d.board.rule50 == 100 && d.board.stm == PF_BLACK,
	    "plain: (none) and the last line at eof");
	rc = pf_plain_decode("\n\n  \n", 5, 1, &d, &used, err, sizeof(err));
	CHECK(rc == 0 && used == 5, "plain: only blank lines left at eof");
	rc = pf_plain_decode(want, 30, 0, &d, &used, err, sizeof(err));
	CHECK(rc == 0 && used == 0, "plain: a part of an entry needs more");
}

/* One malformed plain entry: rc -1, the reason contains what, and *used
   runs to the end of the entry. */
static void
plain_bad(const char *text, const char *what)
{
	char err[128] = "";
	pf_sfentry d;
	size_t used = 0;
	const char *e_line = strstr(text, "\ne\n");
	int rc;

	rc = pf_plain_decode(text, strlen(text), 1, &d, &used, err,
	    sizeof(err));
	CHECK(rc == -1 && strstr(err, what) != NULL &&
	    used == (e_line ? (size_t)(e_line - text) + 3 : strlen(text)),
	    "plain refused: %s (rc %d, \"%s\", used %zu)", what, rc, err,
	    used);
}

static void
test_plain_bad(void)
{
	static const char after[] =
	    "fen 8/8/8/8/8/8/8/k6K w - - 0 1\nmove h1g1\nscore x\nply 1\n"
	    "result 0\ne\nfen 8/8/8/8/8/8/8/k6K w - - 0 1\nmove h1g1\n"
	    "score 5\nply 1\nresult 0\ne\n";
	char err[128];
	pf_sfentry d;
	size_t used, off;
	int rc;

	plain_bad("move e2e4\nfen " PF_STARTPOS_FEN "\nscore 1\nply 0\n"
	    "result 0\ne\n", "does not begin with a fen");
	plain_bad("fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w - - 0 1\n"
	    "move e2e4\nscore 1\nply 0\nresult 0\ne\n", "bad fen");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e5\nscore 1\nply 0\n"
	    "result 0\ne\n", "bad move 'e2e5'");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 40000\nply 0\n"
	    "result 0\ne\n", "bad score '40000'");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 1\nply -1\n"
	    "result 0\ne\n", "bad ply");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 1\nply 0\n"
	    "result 2\ne\n", "bad result '2'");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 1\nresult 0\n"
	    "e\n", "without a ply line");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 1\nscore 2\n"
	    "ply 0\nresult 0\ne\n", "two score lines");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 1\nply 0\n"
	    "result 0\nweight 3\ne\n", "unknown line 'weight'");
	plain_bad("fen " PF_STARTPOS_FEN "\nmove e2e4\nscore 1\nply 0\n",
	    "truncated");

	/* After a bad entry the next one is read. */
	rc = pf_plain_decode(after, sizeof(after) - 1, 1, &d, &used, err,
	    sizeof(err));
	off = used;
	CHECK(rc == -1 && strstr(err, "bad score 'x'") != NULL,
	    "plain: a bad score");
	rc = pf_plain_decode(after + off, sizeof(after) - 1 - off, 1, &d,
	    &used, err, sizeof(err));
	CHECK(rc == 1 && d.score == 5 && off + used == sizeof(after) - 1,
	    "plain: the entry after a bad one is read");
}

/* ---- bin --------------------------------------------------------------- */

/*
 * The start position as a PackedSfen, in stream order (bit 0 of byte 0
 * first): stm 0; white king e1 = 4 as 6 bits low first 001000; black
 * king e8 = 60: 001111; rank 8 a..h without the king: r 1110+1, n
 * 1100+1, b 1010+1, q 1001+1, b, n, r; rank 7: eight p 1000+1; ranks
 * 6..3: 32 empty squares 0; rank 2: eight P 1000+0; rank 1: R 1110+0,
 * N 1100+0, B 1010+0, Q 1001+0, B, N, R; castling KQkq 1111; no ep 0;
 * rule50 000000; fullmove 1: 10000000, high byte 00000000; rule50 bit 6
 * 0; the rest zeros.  Bits 0-7 are 0,0,0,1,0,0,0,0 = 0x08, and so on.
 */
static const uint8_t sfen_start[32] = {
	0x08, 0xfe, 0xce, 0x9a, 0xeb, 0xbc, 0x31, 0xc6,
	0x18, 0x63, 0x8c, 0x00, 0x00, 0x00, 0x00, 0x21,
	0x84, 0x10, 0x42, 0x08, 0x67, 0x94, 0x54, 0xc6,
	0x79, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* "r3k2r/8/8/3pP3/8/8/8/R3K2R w Kq d6 0 300": castling K and q only,
   en passant d6 (1 then 43 as 110100), fullmove 300 = 0x12c in two
   bytes (00110100 then 10000000). */
static const uint8_t sfen_ep[32] = {
	0x08, 0xfe, 0x82, 0x0b, 0x00, 0x80, 0x18, 0x00,
	0x00, 0x00, 0x70, 0xc0, 0xc9, 0x2b, 0xc0, 0x12,
};
/* "4k3/8/8/8/8/8/8/4K2R b K - 100 70": black to move (first bit 1),
   rule50 100: its low six bits 100100, its bit 6 last. */
static const uint8_t sfen_black[32] = {
	0x09, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x9c, 0x40, 0x1a, 0x01, 0x04,
};

/* A test-side bit writer, the stream as the description gives it. */
typedef struct tbits {
	uint8_t b[40];
	int pos;
} tbits;

static void
tput(tbits *t, unsigned v, int n)
{
	int i;

	for (i = 0; i < n; i++, t->pos++)
		if (v >> i & 1)
			t->b[t->pos / 8] |= (uint8_t)(1 << (t->pos % 8));
}

static void
bin_bad(const uint8_t in[PF_BIN_SIZE], const char *what)
{
	char err[128] = "";
	pf_sfentry d;
	int rc;

	rc = pf_bin_decode(in, &d, err, sizeof(err));
	CHECK(rc == -1 && strstr(err, what) != NULL,
	    "bin refused: %s (\"%s\")", what, err);
}

static void
test_bin(void)
{
	uint8_t out[PF_BIN_SIZE], bad[PF_BIN_SIZE];
	char err[128] = "";
	pf_sfentry e, d;
	tbits t;
	int sq, i;

	memset(&e, 0, sizeof(e));
	board(&e.board, PF_STARTPOS_FEN);
	e.move = uci(&e.board, "e2e4");
	e.score = 40;
	e.ply = 0;
	e.result = 0;
	CHECK(pf_bin_encode(&e, out, err, sizeof(err)) == 0 &&
	    memcmp(out, sfen_start, 32) == 0, "bin: the start position's "
	    "PackedSfen");
	CHECK(out[32] == 0x28 && out[33] == 0 && out[34] == 0x1C &&
	    out[35] == 0x03 && out[36] == 0 && out[37] == 0 && out[38] == 0 &&
	    out[39] == 0xFF, "bin: score 40, move e2e4 0x031c, ply 0, "
	    "result 0, padding 0xff");
	hex(out, sizeof(out));
	CHECK(pf_bin_decode(out, &d, err, sizeof(err)) == 0 &&
	    same_board(&d.board, &e.board) && d.move == e.move &&
	    d.score == 40 && d.ply == 0 && d.result == 0, "bin: read back");

	board(&e.board, "r3k2r/8/8/3pP3/8/8/8/R3K2R w Kq d6 0 300");
	e.move = uci(&e.board, "e5d6");
	e.score = -31995;
	e.ply = 598;
	e.result = -1;
	CHECK(pf_bin_encode(&e, out, err, sizeof(err)) == 0 &&
	    memcmp(out, sfen_ep, 32) == 0 && out[32] == 0x05 &&
	    out[33] == 0x83 && out[38] == 0xFF,
	    "bin: castling Kq, en passant d6, fullmove 300, score -31995");
	CHECK(pf_bin_decode(out, &d, err, sizeof(err)) == 0 &&
	    same_board(&d.board, &e.board) && d.move == e.move &&
	    d.score == -31995 && d.ply == 598 && d.result == -1,
	    "bin: read back (%s)", err);
	board(&e.board, "4k3/8/8/8/8/8/8/4K2R b K - 100 70");
	e.move = uci(&e.board, "e8d7");
	CHECK(pf_bin_encode(&e, out, err, sizeof(err)) == 0 &&
	    memcmp(out, sfen_black, 32) == 0 &&
	    pf_bin_decode(out, &d, err, sizeof(err)) == 0 &&
	    same_board(&d.board, &e.board),
	    "bin: black to move, rule50 100 (its seventh bit)");

	board(&e.board, "4k3/8/8/8/8/8/8/4K2R w K - 200 170");
	e.move = uci(&e.board, "h1h2");
	CHECK(pf_bin_encode(&e, out, err, sizeof(err)) == 0 &&
	    pf_bin_decode(out, &d, err, sizeof(err)) == 0 &&
	    d.board.rule50 == 127 && d.board.fullmove == 170,
	    "bin: a half-move clock of 200 is stored as 127");

	/* Chess960: the outermost rooks can be stored, an inner one not. */
	board(&e.board, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/"
	    "BQ1BNRKR w HFhf - 2 9");
	e.move = uci(&e.board, "e2e4");
	CHECK(pf_bin_encode(&e, out, err, sizeof(err)) == 0 &&
	    pf_bin_decode(out, &d, err, sizeof(err)) == 0 &&
	    same_board(&d.board, &e.board) && d.board.chess960 &&
	    d.move == e.move, "bin: Chess960 castling with the outermost "
	    "rooks");
	board(&e.board, "1r2k1r1/8/8/8/8/8/8/RR2K3 w Bb - 0 1");
	e.move = PF_MOVE_NONE;
	CHECK(pf_bin_encode(&e, out, err, sizeof(err)) == -1 &&
	    strstr(err, "not the outermost") != NULL,
	    "bin: an inner castling rook is refused (%s)", err);

	/* Malformed. */
	board(&e.board, PF_STARTPOS_FEN);
	e.move = uci(&e.board, "g1f3");
	e.result = 1;
	pf_bin_encode(&e, out, err, sizeof(err));
	memcpy(bad, out, sizeof(bad));
	/* a8's rook is bits 13-17: code 1110, colour 1; setting bit 16
	   makes the code 1111, which is no piece. */
	bad[2] |= 0x01;
	bin_bad(bad, "bad piece code 15 on a8");
	memcpy(bad, out, sizeof(bad));
	bad[34] = 0x1C;		/* e4 | e3 << 6: nothing on e3 */
	bad[35] = 0x05;
	bin_bad(bad, "bad move");
	memcpy(bad, out, sizeof(bad));
	bad[38] = 2;
	bin_bad(bad, "bad result 2");

	memset(&t, 0, sizeof(t));
	tput(&t, 0, 1);
	tput(&t, 4, 6);
	tput(&t, 4, 6);
	bin_bad(t.b, "both kings on e1");

	/* Kings e1 e8, castling K without a rook on h1. */
	memset(&t, 0, sizeof(t));
	tput(&t, 0, 1);
	tput(&t, 4, 6);
	tput(&t, 60, 6);
	for (i = 0; i < 62; i++)
		tput(&t, 0, 1);
	tput(&t, 1, 4);
	bin_bad(t.b, "castling right K without its rook");

	/* 31 pieces besides the kings. */
	memset(&t, 0, sizeof(t));
	tput(&t, 0, 1);
	tput(&t, 0, 6);
	tput(&t, 63, 6);
	for (sq = 62, i = 0; sq >= 1; sq--, i++)
		if (i < 31)
			tput(&t, 0x3 | 1 << 4, 5);	/* a black knight */
		else
			tput(&t, 0, 1);
	bin_bad(t.b, "more than 32 pieces");

	/* A position the validator refuses: White to move, giving check
	   with a rook on e2. */
	memset(&t, 0, sizeof(t));
	tput(&t, 0, 1);
	tput(&t, 4, 6);
	tput(&t, 60, 6);
	for (sq = 63; sq >= 0; sq--) {
		i = (sq & 56) + 7 - (sq & 7);	/* a8 .. h8, a7 .. h1 */
		if (i == 4 || i == 60)
			continue;
		if (i == 12)
			tput(&t, 0x7, 5);		/* a white rook */
		else
			tput(&t, 0, 1);
	}
	bin_bad(t.b, "bad position");
}

/* ---- marlinformat ---------------------------------------------------- */

/* The start position, eval +20 cp (White's), a draw (wdl 1), extra 0:
   occupancy 0xffff00000000ffff; nibbles a1.. : rook with castling right
   6, N 1, B 2, Q 4, K 5, B 2, N 1, 6 -> 16 42 25 61; eight pawns 0;
   eight black pawns 8 -> 88 88 88 88; black r with right 14, n 9, b 10,
   q 12, k 13, b, n, r -> 9e ca ad e9; stm_ep 0x40 (white, square 64 =
   none); halfmove 0; fullmove 1; eval 20; wdl 1; extra 0. */
static const uint8_t marlin_start[32] = {
	0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
	0x16, 0x42, 0x25, 0x61, 0x00, 0x00, 0x00, 0x00,
	0x88, 0x88, 0x88, 0x88, 0x9e, 0xca, 0xad, 0xe9,
	0x40, 0x00, 0x01, 0x00, 0x14, 0x00, 0x01, 0x00,
};

static void
test_marlin(void)
{
	uint8_t out[PF_MARLIN_SIZE], bad[PF_MARLIN_SIZE];
	char err[128] = "";
	pf_sfentry e, d;

	memset(&e, 0, sizeof(e));
	board(&e.board, PF_STARTPOS_FEN);
	e.score = 42;		/* 42 / 2.08 = 20.2 cp */
	e.result = 0;
	pf_marlin_encode(&e, out);
	CHECK(memcmp(out, marlin_start, 32) == 0, "marlinformat: the start "
	    "position, +20 cp, a draw");
	CHECK(pf_marlin_decode(marlin_start, &d, err, sizeof(err)) == 0 &&
	    same_board(&d.board, &e.board) && d.score == 42 &&
	    d.result == 0 && d.move == PF_MOVE_NONE && d.ply == 0,
	    "marlinformat: read back");

	/* Black to move: score and result turn to White's view. */
	board(&e.board, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b "
	    "KQkq - 0 1");
	e.score = 100;		/* black +48 cp */
	e.result = 1;		/* black won */
	e.ply = 1;
	pf_marlin_encode(&e, out);
	CHECK(out[24] == 0xC0 && out[28] == 0xD0 && out[29] == 0xFF &&
	    out[30] == 0, "marlinformat: black to move 0x80|64, eval -48 "
	    "(White's), wdl 0 (black won)");
	CHECK(pf_marlin_decode(out, &d, err, sizeof(err)) == 0 &&
	    same_board(&d.board, &e.board) && d.score == 100 &&
	    d.result == 1 && d.ply == 1, "marlinformat: read back");

	memcpy(bad, marlin_start, 32);
	bad[30] = 3;
	CHECK(pf_marlin_decode(bad, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad result 3"), "marlinformat refused: %s", err);
	memcpy(bad, marlin_start, 32);
	bad[9] = 0x47;		/* c1's nibble 7 */
	CHECK(pf_marlin_decode(bad, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad piece code 7 on c1"), "marlinformat refused: %s",
	    err);
	memcpy(bad, marlin_start, 32);
	bad[24] = 0x40 | 20;	/* en passant e3 in the start position */
	CHECK(pf_marlin_decode(bad, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "en passant"), "marlinformat refused: %s", err);
}

/* ---- bulletformat ---------------------------------------------------- */

/* After 1.e4, black to move, seen by black: mirrored, black's pieces
   are colour 0.  Occupancy: ranks 1, 2, e5 (the e4 pawn, 28 ^ 56 = 36),
   rank 7 without e7, rank 8; nibbles r n b q k b n r 3 1 2 4 5 2 1 3,
   pawns 0, the opponent's pawns 8, their pieces 11 9 10 12 13 10 9 11;
   score -30 cp (+30 for White), result 0 (White won), ksq e1 = 4,
   opp_ksq (e8 = 60) ^ 56 = 4. */
static const uint8_t bullet_e4[32] = {
	0xff, 0xff, 0x00, 0x00, 0x10, 0x00, 0xef, 0xff,
	0x13, 0x42, 0x25, 0x31, 0x00, 0x00, 0x00, 0x00,
	0x88, 0x88, 0x88, 0x88, 0x9b, 0xca, 0xad, 0xb9,
	0xe2, 0xff, 0x00, 0x04, 0x04, 0x00, 0x00, 0x00,
};

static void
test_bullet(void)
{
	uint8_t out[PF_BULLET_SIZE], bad[PF_BULLET_SIZE];
	char err[128] = "", fen[PF_FEN_MAX];
	pf_sfentry e, d;

	memset(&e, 0, sizeof(e));
	board(&e.board, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b "
	    "KQkq - 0 1");
	e.score = -62;		/* -30 cp for black */
	e.result = -1;
	pf_bullet_encode(&e, out);
	CHECK(memcmp(out, bullet_e4, 32) == 0, "bulletformat: 1.e4, black "
	    "to move, flipped");
	CHECK(pf_bullet_decode(bullet_e4, &d, err, sizeof(err)) == 0 &&
	    strcmp(pf_board_to_fen(&d.board, fen), "rnbqkbnr/pppp1ppp/8/4p3/"
	    "8/8/PPPPPPPP/RNBQKBNR w - - 0 1") == 0 && d.score == -62 &&
	    d.result == -1 && d.move == PF_MOVE_NONE,
	    "bulletformat: read back as the side to move sees it (%s)", fen);

	memcpy(bad, bullet_e4, 32);
	bad[27] = 3;
	CHECK(pf_bullet_decode(bad, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "king squares"), "bulletformat refused: %s", err);
	memcpy(bad, bullet_e4, 32);
	bad[8] = 0x16;		/* a1: 6, a castling rook in marlinformat */
	CHECK(pf_bullet_decode(bad, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad piece code 6 on a1"), "bulletformat refused: %s",
	    err);
	memcpy(bad, bullet_e4, 32);
	bad[26] = 7;
	CHECK(pf_bullet_decode(bad, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad result 7"), "bulletformat refused: %s", err);
}

/* ---- viriformat ------------------------------------------------------ */

/* The start position drawn (wdl 1): 1.e4 (+25 cp for White) e5 (+30
   for White) 2.Nf3 (-5).  Header: marlin_start with eval 0 and wdl 1;
   then e2e4 = 12 | 28 << 6 = 0x070c, 25; e7e5 = 52 | 36 << 6 = 0x0934,
   30; g1f3 = 6 | 21 << 6 = 0x0546, -5; then four zero bytes. */
static const uint8_t viri_game[48] = {
	0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
	0x16, 0x42, 0x25, 0x61, 0x00, 0x00, 0x00, 0x00,
	0x88, 0x88, 0x88, 0x88, 0x9e, 0xca, 0xad, 0xe9,
	0x40, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00,
	0x0c, 0x07, 0x19, 0x00,
	0x34, 0x09, 0x1e, 0x00,
	0x46, 0x05, 0xfb, 0xff,
	0x00, 0x00, 0x00, 0x00,
};

static void
test_viri(void)
{
	static const char *moves[] = { "e2e4", "e7e5", "g1f3" };
	static const int16_t scores[] = { 52, -62, -10 };	/* stm's */
	pf_viri_writer *w;
	pf_viri_game g;
	pf_sfentry e[3], d, x;
	const uint8_t *out;
	uint8_t bad[48];
	size_t len;
	char err[128] = "";
	pf_undo u;
	int i, rc, ok;

	memset(e, 0, sizeof(e));
	board(&e[0].board, PF_STARTPOS_FEN);
	for (i = 0; i < 3; i++) {
		if (i > 0) {
			e[i].board = e[i - 1].board;
			pf_make_move(&e[i].board, e[i - 1].move, &u);
		}
		e[i].move = uci(&e[i].board, moves[i]);
		e[i].score = scores[i];
		e[i].ply = (uint16_t)i;
		e[i].result = 0;
	}
	if ((w = pf_viri_writer_new()) == NULL) {
		printf("Bail out! no memory\n");
		exit(1);
	}
	ok = 1;
	for (i = 0; i < 3; i++)
		ok &= pf_viri_writer_add(w, &e[i], err, sizeof(err)) == 0;
	CHECK(ok && pf_viri_writer_moves(w) == 3, "viriformat: three moves "
	    "added (%s)", err);
	pf_viri_writer_end(w, &out, &len);
	CHECK(len == sizeof(viri_game) && memcmp(out, viri_game, len) == 0,
	    "viriformat: the game byte by byte");
	if (len != sizeof(viri_game))
		hex(out, len);
	CHECK(pf_viri_game_size(viri_game, 48) == 48 &&
	    pf_viri_game_size(viri_game, 47) == 0 &&
	    pf_viri_game_size(viri_game, 20) == 0,
	    "viriformat: the game's size, 0 when cut short");

	ok = pf_viri_game_begin(&g, viri_game, err, sizeof(err)) == 0 &&
	    g.white_result == 0 && g.ply == 0;
	for (i = 0; i < 3; i++) {
		rc = pf_viri_game_next(&g, viri_game + 32 + 4 * i, &d, err,
		    sizeof(err));
		ok &= rc == 1 && same_board(&d.board, &e[i].board) &&
		    d.move == e[i].move && d.score == e[i].score &&
		    d.ply == i && d.result == 0;
	}
	ok &= pf_viri_game_next(&g, viri_game + 44, &d, err, sizeof(err)) ==
	    0 && g.nmoves == 3;
	CHECK(ok, "viriformat: read back position by position (%s)", err);

	/* The writer's refusals. */
	x = e[1];
	x.move = PF_MOVE_NONE;
	CHECK(pf_viri_writer_add(w, &x, err, sizeof(err)) == -1 &&
	    strstr(err, "no move"), "viriformat writer refused: %s", err);
	CHECK(pf_viri_writer_add(w, &e[0], err, sizeof(err)) == 0 &&
	    pf_viri_writer_follows(w, &e[1]) && !pf_viri_writer_follows(w,
	    &e[2]), "viriformat writer: follows");
	CHECK(pf_viri_writer_add(w, &e[2], err, sizeof(err)) == -1 &&
	    strstr(err, "does not follow"), "viriformat writer refused: %s",
	    err);
	x = e[1];
	x.result = 1;
	CHECK(pf_viri_writer_add(w, &x, err, sizeof(err)) == -1 &&
	    strstr(err, "result differs"), "viriformat writer refused: %s",
	    err);
	x = e[1];
	x.move = PF_MAKE_MOVE(52, 28, PF_MK_NORMAL, 0);	/* e7e4 */
	CHECK(pf_viri_writer_add(w, &x, err, sizeof(err)) == -1 &&
	    strstr(err, "bad move"), "viriformat writer refused: %s", err);
	CHECK(pf_viri_writer_moves(w) == 1, "viriformat writer: the game "
	    "so far is kept");
	pf_viri_writer_end(w, &out, &len);
	CHECK(len == 32 + 4 + 4, "viriformat writer: a one-move game");
	pf_viri_writer_end(w, &out, &len);
	CHECK(len == 0, "viriformat writer: no open game, no bytes");
	pf_viri_writer_free(w);
	pf_viri_writer_free(NULL);

	/* The reader's refusals. */
	memcpy(bad, viri_game, 48);
	bad[36] = 0x34;		/* 52 | 32 << 6: e7a5 */
	bad[37] = 0x08;
	pf_viri_game_begin(&g, bad, err, sizeof(err));
	pf_viri_game_next(&g, bad + 32, &d, err, sizeof(err));
	CHECK(pf_viri_game_next(&g, bad + 36, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad move e7a5"), "viriformat refused: %s", err);
	memcpy(bad, viri_game, 48);
	bad[32] = bad[33] = 0;	/* no move, score 25 */
	pf_viri_game_begin(&g, bad, err, sizeof(err));
	CHECK(pf_viri_game_next(&g, bad + 32, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad move: no move"), "viriformat refused: %s", err);
	memcpy(bad, viri_game, 48);
	bad[30] = 5;
	CHECK(pf_viri_game_begin(&g, bad, err, sizeof(err)) == -1 &&
	    strstr(err, "bad result 5"), "viriformat refused: %s", err);
	memcpy(bad, viri_game, 48);
	bad[32] = 0x0C;
	bad[33] = 0x07 | 0x40;	/* e2e4 flagged en passant */
	pf_viri_game_begin(&g, bad, err, sizeof(err));
	CHECK(pf_viri_game_next(&g, bad + 32, &d, err, sizeof(err)) == -1 &&
	    strstr(err, "bad move"), "viriformat refused: %s", err);
}

/* ---- garbage ----------------------------------------------------------- */

/* An accepted entry must hold a valid board and a legal move (or none). */
static int
entry_ok(const pf_sfentry *e)
{
	return pf_board_validate(&e->board, NULL, 0) == 0 &&
	    (e->move == PF_MOVE_NONE || pf_is_legal(&e->board, e->move)) &&
	    e->result >= -1 && e->result <= 1;
}

/*
 * Random bytes, and valid records with a few bits flipped: every decoder
 * either refuses with a reason or gives a valid entry.
 */
static void
test_garbage(void)
{
	uint8_t buf[PF_BIN_SIZE], rec[PF_BIN_SIZE];
	char err[128], text[PF_PLAIN_MAX];
	pf_sfentry e, d;
	pf_viri_game g;
	size_t used;
	int i, j, rc, bad = 0, accepted = 0, refused = 0;

	memset(&e, 0, sizeof(e));
	board(&e.board, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/"
	    "R3K2R w KQkq - 0 1");
	e.move = uci(&e.board, "e1g1");
	for (i = 0; i < 200000; i++) {
		for (j = 0; j < PF_BIN_SIZE; j++)
			buf[j] = (uint8_t)rng();
		if (i & 1) {	/* a valid record, a few bits flipped */
			switch (i % 6) {
			case 1:
				pf_bin_encode(&e, rec, err, sizeof(err));
				break;
			case 3:
				pf_marlin_encode(&e, rec);
				break;
			default:
				pf_bullet_encode(&e, rec);
				break;
			}
			for (j = 0; j < 3; j++)
				rec[rng() % 32] ^= (uint8_t)(1u << rng() % 8);
			memcpy(buf, rec, 32);
		}
		err[0] = '\0';
		switch (i % 6 / 2) {
		case 0:
			rc = pf_bin_decode(buf, &d, err, sizeof(err));
			break;
		case 1:
			rc = pf_marlin_decode(buf, &d, err, sizeof(err));
			if (rc == 0 && pf_viri_game_begin(&g, buf, err,
			    sizeof(err)) == 0 && pf_viri_game_next(&g, buf + 32,
			    &d, err, sizeof(err)) == -1 && err[0] == '\0')
				bad++;
			break;
		default:
			rc = pf_bullet_decode(buf, &d, err, sizeof(err));
			break;
		}
		if (rc == 0) {
			accepted++;
			if (!entry_ok(&d))
				bad++;
		} else if (rc == -1 && err[0] != '\0')
			refused++;
		else
			bad++;
	}
	CHECK(bad == 0 && accepted > 0 && refused > 0, "garbage: %d "
	    "accepted valid, %d refused with a reason, %d wrong", accepted,
	    refused, bad);

	/* Plain text with a byte changed. */
	bad = accepted = refused = 0;
	for (i = 0; i < 20000; i++) {
		pf_plain_encode(&e, text);
		j = (int)(rng() % strlen(text));
		text[j] = "0123456789abcdefghkqrnbpKQRBNP -/\n"[rng() % 34];
		err[0] = '\0';
		rc = pf_plain_decode(text, strlen(text), 1, &d, &used, err,
		    sizeof(err));
		if (rc == 1 && entry_ok(&d))
			accepted++;
		else if (rc == -1 && err[0] != '\0' && used > 0)
			refused++;
		else if (rc != 0)
			bad++;
	}
	CHECK(bad == 0 && accepted > 0 && refused > 0, "plain garbage: %d "
	    "accepted valid, %d refused with a reason, %d wrong", accepted,
	    refused, bad);
}

/* ---- round trips ----------------------------------------------------- */

static const char *starts[] = {
	PF_STARTPOS_FEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
	"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
	"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"r3k2r/8/8/3pP3/8/8/8/R3K2R w Kq d6 0 300",
	"8/P1k5/K7/8/8/8/6p1/8 b - - 0 60",
	"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
};

#define NGAMES	300
#define MAXPLY	200

/* The position seen by its side to move, as bulletformat keeps it. */
static void
mirror_fen(const pf_board *b, char *out)
{
	pf_board m;
	uint64_t bb;
	int sq, flip = b->stm == PF_BLACK ? 56 : 0;
	uint8_t pc;

	pf_board_clear(&m);
	for (bb = b->by_colour[0] | b->by_colour[1]; bb; bb &= bb - 1) {
		sq = __builtin_ctzll(bb);
		pc = b->squares[sq];
		pf_board_put_piece(&m, sq ^ flip, PF_PIECE(PF_PIECE_COLOUR(pc) ^
		    b->stm, PF_PIECE_TYPE(pc)));
	}
	m.stm = PF_WHITE;
	m.ep = PF_SQ_NONE;
	m.fullmove = 1;
	pf_board_refresh(&m);
	pf_board_to_fen(&m, out);
}

static void
test_round_trips(void)
{
	pf_move list[PF_MAX_MOVES];
	pf_viri_writer *w = pf_viri_writer_new();
	pf_viri_game g;
	pf_sfentry e, d, *game;
	uint8_t bin[PF_BIN_SIZE], marlin[PF_MARLIN_SIZE];
	uint8_t bullet[PF_BULLET_SIZE];
	char text[PF_PLAIN_MAX], err[128], f1[PF_FEN_MAX], f2[PF_FEN_MAX];
	const uint8_t *out;
	size_t len, used;
	int gi, ply, n, wr, i, rc;
	int entries = 0, bad_bin = 0, bad_plain = 0, bad_marlin = 0;
	int bad_bullet = 0, bad_viri = 0, castles = 0, eps = 0, promos = 0;
	int under = 0, black = 0, viri_entries = 0;
	pf_undo u;

	game = calloc(MAXPLY, sizeof(*game));
	if (w == NULL || game == NULL) {
		printf("Bail out! no memory\n");
		exit(1);
	}
	for (gi = 0; gi < NGAMES; gi++) {
		memset(&e, 0, sizeof(e));
		board(&e.board, starts[gi % (sizeof(starts) /
		    sizeof(starts[0]))]);
		wr = (int)(rng() % 3) - 1;
		e.ply = (uint16_t)(2 * (e.board.fullmove - 1) + e.board.stm);
		for (ply = 0; ply < MAXPLY; ply++) {
			n = pf_gen_legal(&e.board, list);
			if (n == 0 || e.board.rule50 >= 100)
				break;
			e.move = list[rng() % (unsigned)n];
			/* Castling, en passant and promotions, when there
			   are any, half of the time. */
			for (i = 0; i < n; i++)
				if (PF_MOVE_KIND(list[i]) != PF_MK_NORMAL &&
				    rng() % 2)
					e.move = list[i];
			e.result = (int8_t)(e.board.stm == PF_BLACK ? -wr : wr);
			e.score = rng() % 10 == 0 ? (int16_t)(rng() % 2 ?
			    31990 : -31801) : (int16_t)((int)(rng() % 6001) -
			    3000);
			game[ply] = e;
			entries++;
			switch (PF_MOVE_KIND(e.move)) {
			case PF_MK_CASTLE:
				castles++;
				break;
			case PF_MK_ENPASSANT:
				eps++;
				break;
			case PF_MK_PROMOTION:
				promos++;
				under += PF_MOVE_PROMO(e.move) != PF_QUEEN;
				break;
			}
			black += e.board.stm == PF_BLACK;

			/* bin: everything exact (rule50 <= 100 here). */
			rc = pf_bin_encode(&e, bin, err, sizeof(err));
			if (rc == -1 || pf_bin_decode(bin, &d, err,
			    sizeof(err)) == -1 || !same_board(&d.board,
			    &e.board) || d.move != e.move || d.score !=
			    e.score || d.ply != e.ply || d.result != e.result) {
				if (bad_bin++ < 3)
					printf("# bin: %s: %s\n", pf_board_to_fen(
					    &e.board, f1), err);
			}
			/* plain: everything exact. */
			pf_plain_encode(&e, text);
			if (pf_plain_decode(text, strlen(text), 0, &d, &used,
			    err, sizeof(err)) != 1 || used != strlen(text) ||
			    !same_board(&d.board, &e.board) ||
			    d.move != e.move || d.score != e.score ||
			    d.ply != e.ply || d.result != e.result) {
				if (bad_plain++ < 3)
					printf("# plain: %s: %s\n", text, err);
			}
			/* marlinformat: no move; score within 1. */
			pf_marlin_encode(&e, marlin);
			if (pf_marlin_decode(marlin, &d, err, sizeof(err)) ==
			    -1 || !same_board(&d.board, &e.board) ||
			    !close_score(d.score, e.score) ||
			    d.ply != e.ply || d.result != e.result) {
				if (bad_marlin++ < 3)
					printf("# marlin: %s: %s\n",
					    pf_board_to_fen(&e.board, f1), err);
			}
			/* bulletformat: the mirrored board, score within
			   1, result. */
			pf_bullet_encode(&e, bullet);
			mirror_fen(&e.board, f2);
			if (pf_bullet_decode(bullet, &d, err, sizeof(err)) ==
			    -1 || strcmp(pf_board_to_fen(&d.board, f1),
			    f2) != 0 || !close_score(d.score, e.score) ||
			    d.result != e.result) {
				if (bad_bullet++ < 3)
					printf("# bullet: %s / %s: %s\n", f1,
					    f2, err);
			}
			if (pf_viri_writer_add(w, &e, err, sizeof(err)) == -1) {
				if (bad_viri++ < 3)
					printf("# viri add: %s\n", err);
			}
			pf_make_move(&e.board, e.move, &u);
			if (e.ply < 65535)
				e.ply++;
		}
		/* viriformat: the game back, position by position. */
		pf_viri_writer_end(w, &out, &len);
		if (len == 0)
			continue;
		if (pf_viri_game_size(out, len) != (long)len ||
		    pf_viri_game_begin(&g, out, err, sizeof(err)) == -1) {
			bad_viri++;
			continue;
		}
		for (i = 0; i < ply; i++) {
			rc = pf_viri_game_next(&g, out + 32 + 4 * i, &d, err,
			    sizeof(err));
			viri_entries++;
			if (rc != 1 || !same_board(&d.board, &game[i].board) ||
			    d.move != game[i].move || !close_score(d.score,
			    game[i].score) || d.ply != game[i].ply ||
			    d.result != game[i].result) {
				if (bad_viri++ < 3)
					printf("# viri: game %d ply %d: %s\n",
					    gi, i, err);
				break;
			}
		}
		if (pf_viri_game_next(&g, out + 32 + 4 * ply, &d, err,
		    sizeof(err)) != 0)
			bad_viri++;
	}
	CHECK(castles > 0 && eps > 0 && promos > 0 && under > 0 &&
	    black > 0 && black < entries, "round trips cover %d entries: %d "
	    "castlings, %d en passant, %d promotions (%d under), %d with black "
	    "to move", entries, castles, eps, promos, under, black);
	CHECK(bad_bin == 0, "bin round trip exact (%d off)", bad_bin);
	CHECK(bad_plain == 0, "plain round trip exact (%d off)", bad_plain);
	CHECK(bad_marlin == 0, "marlinformat round trip (%d off)", bad_marlin);
	CHECK(bad_bullet == 0, "bulletformat round trip (%d off)", bad_bullet);
	CHECK(bad_viri == 0 && viri_entries == entries,
	    "viriformat round trip of %d games, %d entries (%d off)", NGAMES,
	    viri_entries, bad_viri);
	free(game);
	pf_viri_writer_free(w);
}

int
main(void)
{
	test_scores();
	test_moves();
	test_plain();
	test_plain_bad();
	test_bin();
	test_marlin();
	test_bullet();
	test_viri();
	test_garbage();
	test_round_trips();
	return t_done();
}
