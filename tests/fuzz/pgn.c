/*
 * pgn.c - libFuzzer target: the PGN / EPD reader (lib/pgn.c) behind the
 * text input layer (lib/input.c, libarchive: plain, compressed or archive
 * input is detected from the content).
 *
 * The input is the file: written to a scratch file, opened with
 * pf_input_open, read member by member and game by game with want_hash
 * on and an accept callback that filters every seventh game.  Properties
 * of every game handed out:
 *   - reading ends: each pf_pgn_next call returns (no more games than
 *     input bytes);
 *   - the strings are NUL-terminated within their buffers and at most
 *     PF_PGN_STR_MAX long; problem codes are known ones;
 *   - a game that is not skipped or filtered starts from a valid board,
 *     and replaying its moves with the chess core: every move is legal
 *     (pf_is_legal and in pf_gen_legal's list), its SAN and UCI read back
 *     as it, and position i's packed bytes, flags and hash are those of
 *     the replayed board; the final board equals the replayed one byte
 *     for byte;
 *   - the result is a known value;
 *   - PGN games are numbered 1, 2, ... in the member; text between games
 *     that is no game (stray, skipped) has the number of the one before.
 */
#include "fuzz.h"
#include "input.h"
#include "pgn.h"
#include "record.h"

/* Filter every seventh game, to run the path that skips moves unread. */
static int
accept(const pf_pgn_game *g, void *arg)
{
	(void)arg;
	return g->number % 7 == 0;
}

static void
check_str(const pf_pgn_str *s)
{
	FUZZ_CHECK(s->len <= PF_PGN_STR_MAX);
	FUZZ_CHECK(s->s[s->len] == '\0');
}

static void
check_game(const pf_pgn_game *g)
{
	pf_move moves[PF_MAX_MOVES];
	uint8_t packed[PF_PACKED_SIZE];
	pf_board b, after;
	uint8_t res;
	int i, n;

	check_str(&g->event);
	check_str(&g->site);
	check_str(&g->white);
	check_str(&g->black);
	check_str(&g->date);
	check_str(&g->term_text);
	check_str(&g->variant);
	FUZZ_CHECK(memchr(g->text, '\0', sizeof(g->text)) != NULL);
	FUZZ_CHECK(memchr(g->detail, '\0', sizeof(g->detail)) != NULL);
	FUZZ_CHECK(g->problem >= PF_PGNP_NONE &&
	    g->problem <= PF_PGNP_VARIATION);
	FUZZ_CHECK(strcmp(pf_pgn_problem_name(g->problem),
	    "unknown problem") != 0);
	FUZZ_CHECK(g->tc_class >= PF_TC_UNKNOWN &&
	    g->tc_class <= PF_TC_CORRESPONDENCE);
	FUZZ_CHECK(g->result_tag <= PF_RESULT_DRAW);
	FUZZ_CHECK(g->result_marker <= PF_RESULT_DRAW);
	if (g->skip || g->filtered)
		return;

	FUZZ_CHECK(g->nmoves >= 0 && g->nmoves <= PF_PGN_MAX_PLIES);
	FUZZ_CHECK(pf_board_validate(&g->start, NULL, 0) == 0);
	b = g->start;
	for (i = 0; i <= g->nmoves; i++) {
		fuzz_check_consistent(&b);
		pf_board_pack(&b, packed);
		FUZZ_CHECK(memcmp(g->packed + (size_t)i * PF_PACKED_SIZE,
		    packed, PF_PACKED_SIZE) == 0);
		FUZZ_CHECK(!!(g->pflags[i] & PF_PGN_CHECK) == pf_in_check(&b));
		FUZZ_CHECK(!!(g->pflags[i] & PF_PGN_INSUFFICIENT) ==
		    pf_insufficient_material(&b));
		FUZZ_CHECK(g->hash[i] == pf_board_hash(&b));
		FUZZ_CHECK(g->eval_kind[i] <= PF_PGN_EVAL_MATE);
		if (i == g->nmoves)
			break;
		n = pf_gen_legal(&b, moves);
		FUZZ_CHECK(pf_is_legal(&b, g->moves[i]));
		FUZZ_CHECK(fuzz_in_list(moves, n, g->moves[i]));
		fuzz_check_make(&b, g->moves[i], &after);
		fuzz_check_move_text(&b, g->moves[i], &after);
		b = after;
	}
	if (memcmp(&b, &g->final, sizeof(b)) != 0) {
		char f1[PF_FEN_MAX], f2[PF_FEN_MAX];

		fprintf(stderr, "replayed %s, final %s\n",
		    pf_board_to_fen(&b, f1), pf_board_to_fen(&g->final, f2));
		FUZZ_CHECK(!"the final board is the replayed one");
	}
	res = pf_pgn_result(g, g->problem ? PF_ONGOING :
	    pf_board_status(&g->final));
	FUZZ_CHECK(res <= PF_RESULT_DRAW);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_scratch_write(data, size);
	pf_input *in;
	pf_pgn *p;
	pf_pgn_game *g;
	uint64_t games = 0;
	int members = 0, rc;

	if ((in = pf_input_open(path, "fuzz")) == NULL)
		abort();
	if ((p = pf_pgn_new(PF_PGN_AUTO, accept, NULL)) == NULL)
		abort();
	pf_pgn_want_hash(p, 1);
	while ((rc = pf_input_next_member(in)) == 1) {
		uint64_t numbered = 0;

		FUZZ_CHECK(++members <= (int)size + 1);
		pf_pgn_start(p, in);
		while ((rc = pf_pgn_next(p, &g)) == 1) {
			FUZZ_CHECK(++games <= (uint64_t)size + 1);
			check_game(g);
			/* games are numbered 1, 2, ...; stray text between
			   them (skipped) has the number of the game before */
			if (pf_pgn_format(p) == PF_PGN_PGN && g->stray)
				FUZZ_CHECK(g->skip && g->number == numbered);
			else if (pf_pgn_format(p) == PF_PGN_PGN)
				FUZZ_CHECK(g->number == ++numbered);
		}
		FUZZ_CHECK(rc == 0 || rc == -1);
		if (rc == -1)
			FUZZ_CHECK(pf_pgn_error(p) != NULL &&
			    pf_pgn_error(p)[0] != '\0');
		FUZZ_CHECK(pf_pgn_format(p) == PF_PGN_PGN ||
		    pf_pgn_format(p) == PF_PGN_EPD ||
		    pf_pgn_format(p) == PF_PGN_AUTO);
	}
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc == -1)
		FUZZ_CHECK(pf_input_error(in) != NULL);
	pf_pgn_free(p);
	pf_input_free(in);
	return 0;
}
