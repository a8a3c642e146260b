/*
 * lc0.c - unit tests of lib/lc0.c against lc0's own test vectors: the
 * expectations of lc0's src/neural/encoder_test.cc (EncodeStartPosition,
 * ...Format2, ...Format3, EncodeEndGameFormat1 and 3,
 * EncodeEndGameKingOnDiagonalFormat3, EncodeEarlyGameFlipFormat3,
 * EncodeEnpassantFormat3, CompactHistoryForNN.ListsTheMostPositions),
 * read out of the record bytes as lczero-training reads them; the
 * transformed policy index; lc0's en passant square; the input formats'
 * names.
 */
#include <stdint.h>
#include <string.h>

#include "chess.h"
#include "lc0.h"
#include "policyindex.h"
#include "record.h"
#include "t.h"

#define MAXPLY 64

struct game {
	pf_board b[MAXPLY + 1];
	int rep[MAXPLY + 1], n;
};

/* The game from fen through the UCI moves; 0 or -1. */
static int
play(struct game *g, const char *fen, const char *const *moves)
{
	pf_undo u;
	pf_move m;
	int i, j;

	memset(g, 0, sizeof(*g));
	if (pf_board_from_fen(&g->b[0], fen, NULL, 0) == -1)
		return -1;
	g->n = 1;
	for (i = 0; moves != NULL && moves[i] != NULL; i++) {
		g->b[g->n] = g->b[g->n - 1];
		if (pf_move_from_uci(&g->b[g->n], moves[i], strlen(moves[i]),
		    &m) == -1)
			return -1;
		pf_make_move(&g->b[g->n], m, &u);
		for (j = 0; j < g->n; j++)
			if (g->b[j].key == g->b[g->n].key)
				g->rep[g->n] = 1;
		g->n++;
	}
	return 0;
}

/* Encode the last position of g in format f; its transform in *t. */
static void
encode(const struct game *g, int f, uint8_t *out, int *t)
{
	const pf_board *hist[MAXPLY + 1];
	int rep[MAXPLY + 1], i;
	pf_lc0_v6 v;

	for (i = 0; i < g->n; i++) {
		hist[i] = &g->b[g->n - 1 - i];
		rep[i] = g->rep[g->n - 1 - i];
	}
	memset(&v, 0, sizeof(v));
	v.input_format = f;
	v.transform = *t = pf_lc0_transform(hist[0], f);
	pf_lc0_v6_encode(hist, rep, g->n, &v, out);
}

/* Plane i as lc0's mask (a1 = bit 0): stored with each byte's bits
   reversed. */
static uint64_t
plane(const uint8_t *out, int i)
{
	uint64_t v = 0, r = 0;
	int k, b;

	for (k = 7; k >= 0; k--)
		v = v << 8 | out[7440 + 8 * i + k];
	for (k = 0; k < 8; k++) {
		uint8_t x = (uint8_t)(v >> 8 * k), y = 0;

		for (b = 0; b < 8; b++)
			y |= (uint8_t)((x >> b & 1) << (7 - b));
		r |= (uint64_t)y << 8 * k;
	}
	return r;
}

/* Slots from..7 all zero. */
static int
empty_from(const uint8_t *out, int from)
{
	int i;

	for (i = 13 * from; i < 104; i++)
		if (plane(out, i) != 0)
			return 0;
	return 1;
}

static uint32_t
u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
test_start(void)
{
	static uint8_t out[PF_LC0_V6_SIZE];
	struct game g;
	int f, t;

	play(&g, PF_STARTPOS_FEN, NULL);
	for (f = PF_LC0_CLASSIC; f <= PF_LC0_CANONICAL_V2; f++) {
		encode(&g, f, out, &t);
		CHECK(u32(out) == 6 && u32(out + 4) == (uint32_t)f && t == 0 &&
		    plane(out, 0) == 0xFF00ULL && plane(out, 1) ==
		    (1ULL << 1 | 1ULL << 6) && plane(out, 2) == (1ULL << 2 |
		    1ULL << 5) && plane(out, 3) == (1ULL | 1ULL << 7) &&
		    plane(out, 4) == 1ULL << 3 && plane(out, 5) == 1ULL << 4 &&
		    plane(out, 11) == 1ULL << 60 && empty_from(out, 1),
		    "format %d: the start position's planes, no history", f);
		if (f == PF_LC0_CLASSIC)
			CHECK(out[8272] == 1 && out[8273] == 1 &&
			    out[8274] == 1 && out[8275] == 1 &&
			    out[8276] == 0 && out[8278] == 0,
			    "format 1: four castling rights as 1, white to "
			    "move");
		else
			/* lc0's planes 104 and 105: 1 | 1 << 56 and
			   1 << 7 | 1 << 63, the rook files */
			CHECK(out[8272] == 1 && out[8273] == 0x80 &&
			    out[8274] == 1 && out[8275] == 0x80 &&
			    out[8276] == 0 && out[8278] == 0,
			    "format %d: castling as rook files a and h; no en "
			    "passant, no transform", f);
	}
}

static void
test_endgame(void)
{
	static uint8_t out[PF_LC0_V6_SIZE];
	struct game g;
	int t;

	play(&g, "3r4/4k3/8/1K6/8/8/8/8 w - - 0 1", NULL);
	encode(&g, PF_LC0_CLASSIC, out, &t);
	CHECK(t == 0 && plane(out, 5) == 1ULL << 33 && plane(out, 11) ==
	    1ULL << 52, "EncodeEndGameFormat1: no transform, kings b5, e7");
	encode(&g, PF_LC0_CANONICAL, out, &t);
	CHECK(t == (PF_LC0_FLIP | PF_LC0_MIRROR | PF_LC0_TRANSPOSE) &&
	    plane(out, 5) == 1ULL << 12 && plane(out, 11) == 1ULL << 38 &&
	    out[8278] == 7, "EncodeEndGameFormat3: flip, mirror, transpose; "
	    "kings on 12 and 38");
	/* Kb6 seen through all three: b5 -> e2, b6 -> f2 */
	CHECK(pf_lc0_index_tf(PF_MAKE_MOVE(33, 41, PF_MK_NORMAL, 0), 0, t) ==
	    pf_lc0_index(PF_MAKE_MOVE(12, 13, PF_MK_NORMAL, 0), 0),
	    "the policy index through the transform: Kb6 is e2f2");

	play(&g, "3r4/4k3/2K5/8/8/8/8/8 w - - 0 1", NULL);
	encode(&g, PF_LC0_CANONICAL, out, &t);
	CHECK(t == (PF_LC0_FLIP | PF_LC0_MIRROR) && plane(out, 5) ==
	    1ULL << 21 && plane(out, 11) == 1ULL << 11,
	    "EncodeEndGameKingOnDiagonalFormat3: the king on the diagonal, "
	    "no transpose (it would raise ours | theirs)");
}

static void
test_early_flip(void)
{
	static const char *const moves[] = { "e2e4", "e7e5", "e1e2", "e8e7",
		"e2d3", "e7e6", NULL };
	static const char *const first[] = { "e2e4", "e7e5", "e1e2", "e8e7",
		"e2d3", NULL };
	static uint8_t out[PF_LC0_V6_SIZE];
	struct game g;
	int t;

	play(&g, PF_STARTPOS_FEN, first);
	encode(&g, PF_LC0_CANONICAL, out, &t);
	CHECK(t == 0 && plane(out, 5) == 1ULL << 12 && plane(out, 11) ==
	    1ULL << 43 && out[8278] == 128, "EncodeEarlyGameFlipFormat3: "
	    "their king offside, not ours: no transform");
	play(&g, PF_STARTPOS_FEN, moves);
	encode(&g, PF_LC0_CANONICAL, out, &t);
	CHECK(t == PF_LC0_FLIP && plane(out, 5) == 1ULL << 20 &&
	    plane(out, 11) == 1ULL << 43 && out[8278] == 1,
	    "EncodeEarlyGameFlipFormat3: ours offside: flipped");
}

static void
test_enpassant(void)
{
	static const char *const m4[] = { "e2e4", "g7g6", "e4e5", "f7f5",
		NULL };
	static const char *const m5[] = { "e2e4", "g7g6", "e4e5", "f7f5",
		"g1f3", NULL };
	static const char *const m6[] = { "e2e4", "g7g6", "e4e5", "f7f5",
		"g1f3", "g8f6", NULL };
	static uint8_t out[PF_LC0_V6_SIZE];
	struct game g;
	int t, i, ok;

	play(&g, PF_STARTPOS_FEN, m4);
	encode(&g, PF_LC0_CANONICAL, out, &t);
	/* lc0's en passant plane 1 << 61: the f file, its byte 1 << 5 */
	CHECK(out[8276] == 1 << 5 && empty_from(out, 1),
	    "EncodeEnpassantFormat3: the f file; a pawn move, no history");
	encode(&g, PF_LC0_CLASSIC, out, &t);
	CHECK(out[8276] == 0 && !empty_from(out, 1),
	    "format 1: the side to move byte, and history");
	play(&g, PF_STARTPOS_FEN, m5);
	encode(&g, PF_LC0_CANONICAL, out, &t);
	CHECK(out[8276] == 0 && empty_from(out, 1),
	    "EncodeEnpassantFormat3: no more en passant; the one before had "
	    "it: no history");
	play(&g, PF_STARTPOS_FEN, m6);
	encode(&g, PF_LC0_CANONICAL, out, &t);
	for (i = 0, ok = 1; i < 12; i++)
		ok &= plane(out, 13 + i) != 0;
	CHECK(ok && plane(out, 25) == 0 && empty_from(out, 2),
	    "EncodeEnpassantFormat3: one slot of history");
}

/* CompactHistoryForNN.ListsTheMostPositions: after 1. e4 e5 both sides
   move a piece out and back, so the position after 1... e5 returns every
   fourth ply.  Format 3 keeps the last eight plies; format 5 only the
   repeats, every fourth position back to ply 28. */
static void
test_v2(void)
{
	static const char *const moves[] = { "e2e4", "e7e5", "g1f3", "g8f6",
		"f3g1", "f6g8", "g1h3", "g8h6", "h3g1", "h6g8", "b1c3", "b8c6",
		"c3b1", "c6b8", "b1a3", "b8a6", "a3b1", "a6b8", "g1e2", "g8e7",
		"e2g1", "e7g8", "f1e2", "f8e7", "e2f1", "e7f8", "f1d3", "f8d6",
		"d3f1", "d6f8", "f1c4", "f8c5", "c4f1", "c5f8", "f1b5", "f8b4",
		"b5f1", "b4f8", NULL };
	static uint8_t out[PF_LC0_V6_SIZE];
	struct game g;
	int t, s, i, same, reps;

	CHECK(play(&g, PF_STARTPOS_FEN, moves) == 0 && g.n == 39 &&
	    g.rep[38], "the game: 38 plies, the last a repeat");
	encode(&g, PF_LC0_CANONICAL_V2, out, &t);
	for (s = 0, same = 1, reps = 0; s < 8; s++) {
		for (i = 0; i < 12; i++)
			same &= plane(out, 13 * s + i) == plane(out, i);
		reps += plane(out, 13 * s + 12) == ~0ULL;
	}
	CHECK(same && reps == 8, "format 5: eight slots of the same "
	    "position, each marked as a repeat");
	{
		static uint8_t a[PF_LC0_V6_SIZE];

		encode(&g, PF_LC0_CANONICAL_V2_ARMAGEDDON, a, &t);
		CHECK(pf_get32(a + 4) == 133 && memcmp(a, out, 4) == 0 &&
		    memcmp(a + 8, out + 8, PF_LC0_V6_SIZE - 8) == 0,
		    "format 133: format 5's record, input_format 133");
	}
	encode(&g, PF_LC0_CANONICAL, out, &t);
	for (s = 1, same = 0; s < 8; s++)
		for (i = 0; i < 12; i++)
			same += plane(out, 13 * s + i) == plane(out, i);
	/* slot 4 (four plies back) is the same position; the others hold
	   a knight or bishop out */
	CHECK(same < 7 * 12 && !empty_from(out, 7) &&
	    plane(out, 13 * 4 + 12) == ~0ULL && plane(out, 13 * 1 + 12) == 0,
	    "format 3: the last eight plies, repeats marked");
}

/* A double push beside an enemy pawn whose capture would expose its king:
   lc0's board keeps the en passant square (ApplyMove), a pf_board does
   not. */
static void
test_lc0_ep(void)
{
	static const char *const pin[] = { "d7d5", NULL };
	static const char *const lone[] = { "a7a5", NULL };
	static uint8_t out[PF_LC0_V6_SIZE];
	struct game g;
	int t;

	play(&g, "4k3/p2p4/8/1KP4r/8/8/8/8 b - - 0 1", pin);
	CHECK(g.b[1].ep == PF_SQ_NONE && pf_lc0_ep(&g.b[1], &g.b[0]) == 43 &&
	    pf_lc0_ep(&g.b[1], NULL) == PF_SQ_NONE,
	    "pf_lc0_ep: d6 after d7d5 beside a pinned c5 pawn; none without "
	    "the position before");
	encode(&g, PF_LC0_CANONICAL, out, &t);
	CHECK(t == PF_LC0_FLIP && out[8276] == 1 << 4,
	    "format 3: its file d, flipped to e");
	play(&g, "4k3/p2p4/8/1KP4r/8/8/8/8 b - - 0 1", lone);
	CHECK(pf_lc0_ep(&g.b[1], &g.b[0]) == PF_SQ_NONE,
	    "pf_lc0_ep: no square after a double push with no pawn beside");
}

/* What is encoded decodes to the same position in every format: through
   transforms, with the en passant square from the byte (3 to 5) or from
   the history (1, 2); the move played from played_idx. */
static void
test_decode(void)
{
	static const char *const ep[] = { "e2e4", "g7g6", "e4e5", "f7f5",
		NULL };
	static const char *const fens[] = { PF_STARTPOS_FEN,
		"3r4/4k3/8/1K6/8/8/8/8 w - - 0 1",
		"3r4/4k3/2K5/8/8/8/8/8 b - - 7 1",
		"1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1" };
	static uint8_t out[PF_LC0_V6_SIZE];
	pf_lc0_entry e;
	struct game g;
	char err[128];
	size_t i;
	int f, t, ok = 1;

	for (f = PF_LC0_CLASSIC; f <= PF_LC0_CANONICAL_V2_ARMAGEDDON; f++) {
		if (pf_lc0_input_name(f) == NULL)
			continue;
		for (i = 0; i <= sizeof(fens) / sizeof(fens[0]); i++) {
			pf_move m[PF_MAX_MOVES];

			if (i < sizeof(fens) / sizeof(fens[0]))
				play(&g, fens[i], NULL);
			else
				play(&g, PF_STARTPOS_FEN, ep);
			encode(&g, f, out, &t);
			/* the first legal move as the one played */
			pf_gen_legal(&g.b[g.n - 1], m);
			out[8344] = (uint8_t)pf_lc0_index_tf(m[0],
			    g.b[g.n - 1].stm, t);
			out[8345] = (uint8_t)(pf_lc0_index_tf(m[0],
			    g.b[g.n - 1].stm, t) >> 8);
			if (pf_lc0_decode(out, &e, err, sizeof(err)) ==
			    -1) {
				CHECK(0, "format %d, position %zu: %s", f, i,
				    err);
				ok = 0;
				continue;
			}
			/* the full-move number is not stored */
			e.board.fullmove = g.b[g.n - 1].fullmove;
			e.board.key = pf_board_compute_key(&e.board);
			CHECK_QUIET(e.board.key == g.b[g.n - 1].key &&
			    e.board.ep == g.b[g.n - 1].ep &&
			    e.board.rule50 == g.b[g.n - 1].rule50 &&
			    e.move == m[0], "format %d, position %zu", f, i);
			ok &= e.board.key == g.b[g.n - 1].key &&
			    e.board.ep == g.b[g.n - 1].ep && e.move == m[0];
		}
	}
	CHECK(ok, "every format decodes what it encoded: transformed, "
	    "Chess960, en passant (f6), the move played");
	CHECK(pf_lc0_score(0) == 0 && pf_lc0_score(0.5f) == 457 &&
	    pf_lc0_score(-0.5f) == -457 && pf_lc0_score(1) == 20000 &&
	    pf_lc0_score(-1.0f) == -20000 && pf_lc0_score(-0.99999f) == -5079, "best_q as lc0's rescorer "
	    "scores it: 416.11539129 ln((1 + q) / (1 - q)), within 20000");
}

static void
test_names(void)
{
	CHECK(pf_lc0_input_format("classic") == 1 &&
	    pf_lc0_input_format("frc_castling") == 2 &&
	    pf_lc0_input_format("canonical") == 3 &&
	    pf_lc0_input_format("canonical_100") == 4 &&
	    pf_lc0_input_format("canonical_v2") == 5 &&
	    pf_lc0_input_format("5") == 5 && pf_lc0_input_format("1") == 1 &&
	    pf_lc0_input_format("6") == 0 && pf_lc0_input_format("0") == 0 &&
	    pf_lc0_input_format("canonical_armageddon") == 132 &&
	    pf_lc0_input_format("canonical_v2_armageddon") == 133 &&
	    pf_lc0_input_format("132") == 132 &&
	    pf_lc0_input_format("133") == 133 &&
	    pf_lc0_input_format("131") == 0 &&
	    pf_lc0_input_format("armageddon") == 0 &&
	    pf_lc0_input_format("") == 0 && pf_lc0_input_format("55") == 0,
	    "input formats by lczero-training's names and by number");
	CHECK(pf_lc0_base_format(132) == 4 && pf_lc0_base_format(133) == 5 &&
	    pf_lc0_base_format(3) == 3 && pf_lc0_base_format(6) == 0 &&
	    pf_lc0_base_format(0) == 0 &&
	    strcmp(pf_lc0_input_name(133), "canonical_v2_armageddon") == 0 &&
	    pf_lc0_input_name(134) == NULL,
	    "the armageddon formats write 4's and 5's records");
}

int
main(void)
{
	test_start();
	test_endgame();
	test_early_flip();
	test_enpassant();
	test_v2();
	test_lc0_ep();
	test_decode();
	test_names();
	return t_done();
}
