/*
 * move.c - libFuzzer target: SAN and UCI move text (pf_move_from_san,
 * pf_move_from_uci), played as a short game.
 *
 * Input: a first line that is a FEN (if it does not parse, the board is
 * one of a few built-in positions, picked by the line's length), then move
 * text.  The text after the first line is read whole, then token by token
 * (split at spaces and newlines), each token played on the board the
 * previous ones left.  Every text is handed over in an exact-size heap copy
 * without a NUL, as pgn.c hands it out, so an over-read is an ASan report.
 * Properties of each text read:
 *   - a move read as SAN or UCI is legal (in pf_gen_legal's list and
 *     pf_is_legal);
 *   - text that pf_move_from_uci reads, pf_move_from_san reads as the same
 *     move (chess.h: SAN accepts UCI strings);
 *   - the move's own SAN and UCI read back as it;
 *   - a refused text comes with a reason;
 *   - the board after each move played is consistent (fuzz_check_consistent).
 */
#include "fuzz.h"

static const char *const starts[] = {
	PF_STARTPOS_FEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
	"1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1",
	"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
};
#define NSTARTS	(sizeof(starts) / sizeof(starts[0]))

/* Read text[0..len) on b; if it is a legal move, play it.  0 / -1. */
static int
read_move(pf_board *b, const uint8_t *text, size_t len)
{
	pf_move moves[PF_MAX_MOVES], m = PF_MOVE_NONE, mu = PF_MOVE_NONE;
	char err[256], *s;
	int n, rc, rcu;
	pf_board after;

	if ((s = malloc(len > 0 ? len : 1)) == NULL)
		return -1;
	memcpy(s, text, len);
	n = pf_gen_legal(b, moves);
	err[0] = '\0';
	rc = pf_move_from_san(b, s, len, &m, err, sizeof(err));
	rcu = pf_move_from_uci(b, s, len, &mu);
	free(s);
	FUZZ_CHECK(rc == 0 || rc == -1);
	FUZZ_CHECK(rcu == 0 || rcu == -1);
	if (rcu == 0) {
		FUZZ_CHECK(fuzz_in_list(moves, n, mu) && pf_is_legal(b, mu));
		if (rc != 0 || m != mu) {
			fprintf(stderr, "UCI text read as 0x%04x, SAN %d "
			    "0x%04x (%s)\n", mu, rc, m, err);
			FUZZ_CHECK(!"SAN reads the UCI text as the same move");
		}
	}
	if (rc != 0) {
		FUZZ_CHECK(err[0] != '\0');
		FUZZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		return -1;
	}
	FUZZ_CHECK(fuzz_in_list(moves, n, m) && pf_is_legal(b, m));
	fuzz_check_make(b, m, &after);
	fuzz_check_move_text(b, m, &after);
	*b = after;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size), *p, *end = data + size;
	char fen[256];
	size_t fenlen = nl != NULL ? (size_t)(nl - data) : 0;
	pf_board b;
	int plies = 0;

	if (nl != NULL && fenlen < sizeof(fen)) {
		memcpy(fen, data, fenlen);
		fen[fenlen] = '\0';
	} else
		fen[0] = '\0';
	if (memchr(fen, '\0', fenlen) != NULL ||
	    pf_board_from_fen(&b, fen, NULL, 0) != 0)
		FUZZ_CHECK(pf_board_from_fen(&b, starts[fenlen % NSTARTS],
		    NULL, 0) == 0);
	p = nl != NULL ? nl + 1 : data;

	/* The whole text, then token by token. */
	{
		pf_board whole = b;

		(void)read_move(&whole, p, (size_t)(end - p));
	}
	while (p < end && plies < 64) {
		const uint8_t *t = p;

		while (t < end && *t != ' ' && *t != '\n')
			t++;
		if (t > p && read_move(&b, p, (size_t)(t - p)) == 0)
			plies++;
		p = t + 1;
	}
	fuzz_check_consistent(&b);
	return 0;
}
