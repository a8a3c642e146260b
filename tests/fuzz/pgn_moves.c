/*
 * pgn_moves.c - libFuzzer target: move text as the PGN reader resolves it
 * (its own fast SAN and castling paths in lib/pgn.c) against the chess
 * core's pf_move_from_san, which pgn.h promises it agrees with.
 *
 * Input: lines of move tokens separated by spaces.  Each line whose
 * tokens are all plain move text (letters, digits, = + # ! ? -, starting
 * with a letter: PGN reads a leading digit as a move number or a result)
 * becomes one game from a built-in start position (line i: position
 * i mod 7, Chess960 ones with a Variant tag), all in one PGN file read
 * through pf_input and pf_pgn.  Property: each game's moves are exactly
 * the tokens read one by one with pf_move_from_san on the board so far,
 * up to the first token it refuses (or one longer than 16 bytes without
 * its suffix, which the reader refuses by design), where the reader must
 * stop too.  A line with a token that goes on past 64 bytes with more than
 * check and annotation marks, which the reader cuts in two, is left out.
 */
#include "fuzz.h"
#include "input.h"
#include "pgn.h"

#define MAXLINES	32
#define MAXTOKENS	64

static const struct {
	const char *fen;
	int chess960;
} starts[] = {
	{ PF_STARTPOS_FEN, 0 },
	{ "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - "
	    "0 1", 0 },
	{ "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", 0 },
	{ "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 0 },
	{ "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
	    1 },
	{ "1r4kr/8/8/8/8/8/8/1R4KR w BHbh - 0 1", 1 },
	{ "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", 0 },
};
#define NSTARTS	(sizeof(starts) / sizeof(starts[0]))

struct line {
	int start;
	int nexpect;
	pf_move expect[MAXTOKENS];
	const uint8_t *text;
	size_t len;
};

static int
token_ok(const uint8_t *t, size_t n)
{
	size_t i;

	/* The reader cuts a token at 64 bytes (lib/pgn.c, TOKEN_MAX) and
	   reads the rest as the next: only marks there ("Qh5" and 80 '+')
	   read as the whole does, but "O-O" and 87 '+' then "1" is
	   castling, marks and a move number to it, where
	   pf_move_from_san refuses the whole. */
	for (i = 64; i < n; i++)
		if (t[i] == '\0' || strchr("+#!?", t[i]) == NULL)
			return 0;
	/* PGN reads a leading digit as a move number or a result, and
	   skips a leading . ! ? as punctuation. */
	if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
		return 0;
	for (i = 0; i < n; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' &&
		    t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') ||
		    (t[i] != '\0' && strchr("=+#!?-", t[i]) != NULL)))
			return 0;
	return 1;
}

/* The moves pf_move_from_san reads from the tokens of one line. */
static void
expect_line(struct line *l)
{
	const uint8_t *p = l->text, *end = l->text + l->len;
	pf_board b;
	pf_undo u;

	FUZZ_CHECK(pf_board_from_fen(&b, starts[l->start].fen, NULL, 0) == 0);
	if (starts[l->start].chess960)
		b.chess960 = 1;
	l->nexpect = 0;
	while (p < end && l->nexpect < MAXTOKENS) {
		const uint8_t *t = p;
		size_t n, bare;
		pf_move m;

		while (t < end && *t != ' ')
			t++;
		n = (size_t)(t - p);
		/* the reader passes over a lone en passant mark "ep" and a
		   novelty "N" */
		if ((n == 2 && p[0] == 'e' && p[1] == 'p') ||
		    (n == 1 && p[0] == 'N')) {
			p = t + 1;
			continue;
		}
		if (n > 0) {
			for (bare = n; bare > 0 && p[bare - 1] != '\0' &&
			    strchr("+#!?", p[bare - 1]) != NULL; bare--)
				;
			/* and reads "exd6ep" as "exd6" */
			if (bare > 2 && p[bare - 2] == 'e' &&
			    p[bare - 1] == 'p' && p[bare - 3] >= '1' &&
			    p[bare - 3] <= '8')
				n = bare -= 2;
			if (bare == 0 || bare > 16 || pf_move_from_san(&b,
			    (const char *)p, n, &m, NULL, 0) != 0)
				return;
			l->expect[l->nexpect++] = m;
			pf_make_move(&b, m, &u);
		}
		p = t + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct line lines[MAXLINES];
	const uint8_t *p = data, *end = data + size;
	char *pgn, *w;
	int nlines = 0, i, rc;
	pf_input *in;
	pf_pgn *reader;
	pf_pgn_game *g;

	/* Each line's text, its tokens checked; at most MAXTOKENS each. */
	for (i = 0; p < end && nlines < MAXLINES; i++) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		const uint8_t *e = nl != NULL ? nl : end, *t = p;
		int ok = 1, ntok = 0;

		while (t < e && ok) {
			const uint8_t *s = t;

			while (t < e && *t != ' ')
				t++;
			if (t > s && (!token_ok(s, (size_t)(t - s)) ||
			    ++ntok > MAXTOKENS))
				ok = 0;
			t++;
		}
		if (ok) {
			lines[nlines].start = i % (int)NSTARTS;
			lines[nlines].text = p;
			lines[nlines].len = (size_t)(e - p);
			expect_line(&lines[nlines]);
			nlines++;
		}
		p = e + 1;
	}
	if (nlines == 0)
		return 0;

	FUZZ_CHECK((pgn = malloc(size + (size_t)nlines * 160 + 1)) != NULL);
	w = pgn;
	for (i = 0; i < nlines; i++) {
		w += sprintf(w, "[Event \"%d\"]\n[FEN \"%s\"]\n", i,
		    starts[lines[i].start].fen);
		if (starts[lines[i].start].chess960)
			w += sprintf(w, "[Variant \"Chess960\"]\n");
		*w++ = '\n';
		memcpy(w, lines[i].text, lines[i].len);
		w += lines[i].len;
		w += sprintf(w, " *\n\n");
	}
	fuzz_scratch_write((const uint8_t *)pgn, (size_t)(w - pgn));

	FUZZ_CHECK((in = pf_input_open(fuzz_path, "fuzz")) != NULL);
	FUZZ_CHECK((reader = pf_pgn_new(PF_PGN_PGN, NULL, NULL)) != NULL);
	if ((rc = pf_input_next_member(in)) != 1) {
		fprintf(stderr, "pf_input_next_member %d: %s\n", rc,
		    pf_input_error(in));
		FUZZ_CHECK(!"a PGN text file is one member");
	}
	pf_pgn_start(reader, in);
	for (i = 0; (rc = pf_pgn_next(reader, &g)) == 1; i++) {
		FUZZ_CHECK(i < nlines && !g->skip);
		if (g->nmoves != lines[i].nexpect || memcmp(g->moves,
		    lines[i].expect, (size_t)g->nmoves * sizeof(pf_move))) {
			fprintf(stderr, "line %d (start %d) \"%.*s\": reader %d "
			    "moves (%s %s), pf_move_from_san %d\n", i,
			    lines[i].start, (int)lines[i].len, lines[i].text,
			    g->nmoves, pf_pgn_problem_name(g->problem), g->text,
			    lines[i].nexpect);
			FUZZ_CHECK(!"the reader resolves moves as "
			    "pf_move_from_san does");
		}
	}
	FUZZ_CHECK(rc == 0 && i == nlines);
	pf_pgn_free(reader);
	pf_input_free(in);
	free(pgn);
	return 0;
}
