/*
 * pgn.c - unit tests for the PGN reader and the text input layer: random
 * games written in every move spelling pgn2pos accepts (SAN, SAN without
 * '=', UCI, over-disambiguated) must read back as the same moves; a
 * comment longer than the input window, tokens across refills, tag
 * escapes, annotations, time-control classes, and archive members.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext.h"
#include "input.h"
#include "pgn.h"
#include "t.h"

static const char *starts[] = {
	PF_STARTPOS_FEN,
	/* kiwipete: castling, en passant, promotions soon */
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
	"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
	/* promotions on both sides, many pieces that can reach a square */
	"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
	/* Chess960 (X-FEN inner rooks) */
	"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
};

#define NGAMES	400
#define MAXPLY	160

static uint64_t rng_state = 0x1234567;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Write move m of b in one of the accepted spellings. */
static void
spell(const pf_board *b, pf_move m, char *out, int style)
{
	char san[PF_SAN_MAX], uci[PF_UCI_MAX];
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m);
	uint8_t pc = b->squares[from];

	pf_move_to_san(b, m, san);
	pf_move_to_uci(b, m, uci);
	switch (style) {
	case 1:		/* UCI */
		strcpy(out, uci);
		return;
	case 2:		/* promotion without '=', suffixes */
		if (PF_MOVE_KIND(m) == PF_MK_PROMOTION) {
			char *eq = strchr(san, '=');

			if (eq != NULL)
				memmove(eq, eq + 1, strlen(eq));
		}
		sprintf(out, "%s!?", san);
		return;
	case 3:		/* over-disambiguated piece moves: Ng1f3, Qd1xd8 */
		if (PF_MOVE_KIND(m) == PF_MK_NORMAL &&
		    PF_PIECE_TYPE(pc) != PF_PAWN) {
			sprintf(out, "%c%c%c%s%c%c", "PNBRQK"[PF_PIECE_TYPE(pc)],
			    'a' + (from & 7), '1' + (from >> 3),
			    b->squares[to] != PF_NO_PIECE ? "x" : "",
			    'a' + (to & 7), '1' + (to >> 3));
			return;
		}
		break;
	}
	strcpy(out, san);
}

static void
test_random_games(void)
{
	static pf_move want[NGAMES][MAXPLY];
	static int nwant[NGAMES];
	char path[] = "/tmp/pgn-unit-XXXXXX";
	int fd = mkstemp(path), g, bad = 0, games = 0, moves = 0;
	FILE *fp = fdopen(fd, "w");
	pf_input *in;
	pf_pgn *p;
	pf_pgn_game *gm;

	CHECK(fp != NULL, "temporary file");
	if (fp == NULL)
		return;
	for (g = 0; g < NGAMES; g++) {
		const char *fen = starts[g % (sizeof(starts) / sizeof(*starts))];
		pf_board b;
		pf_move list[PF_MAX_MOVES];
		int ply, n;

		pf_board_from_fen(&b, fen, NULL, 0);
		fprintf(fp, "[Event \"random %d\"]\n", g);
		if (b.chess960)
			fprintf(fp, "[Variant \"Chess960\"]\n");
		if (g % (sizeof(starts) / sizeof(*starts)) != 0)
			fprintf(fp, "[SetUp \"1\"]\n[FEN \"%s\"]\n", fen);
		fputc('\n', fp);
		for (ply = 0; ply < MAXPLY; ply++) {
			char text[32];
			pf_undo u;

			if ((n = pf_gen_legal(&b, list)) == 0)
				break;
			want[g][ply] = list[rng() % (unsigned)n];
			spell(&b, want[g][ply], text, (int)(rng() % 4));
			if (b.stm == PF_WHITE || ply == 0)
				fprintf(fp, "%d%s ", b.fullmove,
				    b.stm == PF_WHITE ? "." : "...");
			fprintf(fp, "%s ", text);
			if (rng() % 8 == 0)
				fprintf(fp, "{ a comment (with parens) } ");
			if (rng() % 16 == 0)
				fprintf(fp, "( 1. a3 { in a variation } ) $%d ",
				    (int)(rng() % 20));
			if (rng() % 12 == 0)
				fputc('\n', fp);
			pf_make_move(&b, want[g][ply], &u);
		}
		nwant[g] = ply;
		fprintf(fp, "*\n\n");
	}
	fclose(fp);

	in = pf_input_open(path, NULL);
	p = pf_pgn_new(PF_PGN_AUTO, NULL, NULL);
	CHECK(in != NULL && p != NULL, "open the random games");
	if (in == NULL || p == NULL)
		goto out;
	CHECK(pf_input_next_member(in) == 1, "one member");
	CHECK(pf_input_member(in) == NULL, "a plain file has no member name");
	pf_pgn_start(p, in);
	while (pf_pgn_next(p, &gm) == 1) {
		int i = games++;

		if (i >= NGAMES || gm->problem || gm->skip ||
		    gm->nmoves != nwant[i]) {
			bad++;
			printf("# game %d: problem %d (%s) nmoves %d want %d\n",
			    i + 1, gm->problem, gm->text, gm->nmoves,
			    i < NGAMES ? nwant[i] : -1);
			continue;
		}
		if (memcmp(gm->moves, want[i], sizeof(pf_move) *
		    (size_t)gm->nmoves) != 0) {
			bad++;
			printf("# game %d: moves differ\n", i + 1);
		}
		moves += gm->nmoves;
	}
	CHECK(games == NGAMES, "read %d random games", games);
	CHECK(bad == 0, "random games read back move for move (%d moves, "
	    "%d bad games)", moves, bad);
	CHECK(pf_pgn_next(p, &gm) == 0, "end of member stays the end");
	CHECK(pf_input_next_member(in) == 0, "no second member");
out:
	pf_pgn_free(p);
	pf_input_free(in);
	unlink(path);
}

/* Parse text as one member; returns the number of games, fills first. */
static int
parse_text(const char *text, size_t len, int (*check)(pf_pgn_game *, int))
{
	char path[] = "/tmp/pgn-unit-XXXXXX";
	int fd = mkstemp(path), n = 0, ok = 1;
	pf_input *in;
	pf_pgn *p;
	pf_pgn_game *g;

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	close(fd);
	in = pf_input_open(path, "t");
	p = pf_pgn_new(PF_PGN_AUTO, NULL, NULL);
	if (in != NULL && p != NULL && pf_input_next_member(in) == 1) {
		pf_pgn_start(p, in);
		while (pf_pgn_next(p, &g) == 1)
			if (check != NULL && !check(g, n++))
				ok = 0;
	}
	pf_pgn_free(p);
	pf_input_free(in);
	unlink(path);
	return ok ? n : -2;
}

static int
check_long_comment(pf_pgn_game *g, int i)
{
	if (i == 0)
		return g->nmoves == 4 && g->problem == PF_PGNP_NONE;
	return g->nmoves == 2 && g->problem == PF_PGNP_NONE &&
	    strcmp(g->event.s, "after") == 0;
}

static void
test_long_comment(void)
{
	size_t big = (size_t)PF_INPUT_BUFSIZE + 3 * PF_INPUT_KEEP, n;
	char *text = malloc(big + 256);
	int games;

	n = (size_t)sprintf(text, "[Event \"x\"]\n\n1. e4 e5 {");
	memset(text + n, 'c', big - n);
	n = big;
	n += (size_t)sprintf(text + n, "} 2. Nf3 Nc6 *\n\n[Event \"after\"]\n"
	    "\n1. d4 d5 *\n");
	games = parse_text(text, n, check_long_comment);
	CHECK(games == 2, "a comment longer than the input window is "
	    "skipped (%d games)", games);
	free(text);
}

static int
check_escapes(pf_pgn_game *g, int i)
{
	(void)i;
	return strcmp(g->event.s, "a \"b\" [c] \\d") == 0 &&
	    g->white_elo == 2100 && g->black_elo == 0 &&
	    g->tc_class == PF_TC_BLITZ && g->base_s == 180 && g->inc_s == 2 &&
	    g->termination == PF_TERM_TIME && g->result_tag == PF_RESULT_DRAW;
}

static int
check_annotations(pf_pgn_game *g, int i)
{
	(void)i;
	return g->nmoves == 3 &&
	    g->eval_kind[1] == PF_PGN_EVAL_CP && g->eval[1] == 17 &&
	    g->eval_depth[1] == 0 &&
	    g->eval_kind[2] == PF_PGN_EVAL_CP && g->eval[2] == -126 &&
	    g->eval_depth[2] == 23 &&
	    g->eval_kind[3] == PF_PGN_EVAL_MATE && g->eval[3] == -3 &&
	    g->clk_ms[1] == 3723500 && g->clk_ms[2] == 59000 &&
	    g->clk_ms[3] == PF_U32_UNKNOWN && g->eval_kind[0] == 0;
}

static void
test_tags_and_annotations(void)
{
	static const char tags[] =
	    "[Event \"a \\\"b\\\" [c] \\\\d\"]\n[WhiteElo \"2100\"]\n"
	    "[BlackElo \"?\"]\n[TimeControl \"180+2\"]\n"
	    "[Termination \"Time forfeit\"]\n[Result \"1/2-1/2\"]\n\n*\n";
	static const char ann[] =
	    "1. e4 { [%eval 0.17] [%clk 1:02:03.5] } e5 "
	    "{ [%clk 0:00:59] [%eval -1.255,23] } 2. Qh5 {[%eval #-3]} *\n";

	CHECK(parse_text(tags, sizeof(tags) - 1, check_escapes) == 1,
	    "tags: escapes, brackets, Elo, TimeControl, Termination, Result");
	CHECK(parse_text(ann, sizeof(ann) - 1, check_annotations) == 1,
	    "%%eval (cp, depth, mate) and %%clk (h:mm:ss.f)");
}

/* Evaluations a record cannot hold are dropped and counted, the rest
   kept: the limits are an i32 score and a u16 depth. */
static int
check_eval_range(pf_pgn_game *g, int i)
{
	(void)i;
	return g->nmoves == 7 && g->problem == PF_PGNP_NONE &&
	    g->eval_kind[1] == PF_PGN_EVAL_CP && g->eval[1] == 2147483647 &&
	    g->eval_depth[1] == 65535 &&
	    g->eval_kind[2] == PF_PGN_EVAL_NONE &&
	    g->eval_kind[3] == PF_PGN_EVAL_MATE && g->eval[3] == -2147483647 &&
	    g->eval_kind[4] == PF_PGN_EVAL_NONE &&
	    g->eval_kind[5] == PF_PGN_EVAL_NONE &&
	    g->eval_kind[6] == PF_PGN_EVAL_NONE &&
	    g->eval_kind[7] == PF_PGN_EVAL_CP && g->eval[7] == -30 &&
	    g->bad_evals == 4 && g->bad_eval_ply == 2 &&
	    strcmp(g->bad_eval_text, "%eval 0.1,65536") == 0;
}

static int
check_epd_range(pf_pgn_game *g, int i)
{
	if (i == 0)
		return g->eval_kind[0] == PF_PGN_EVAL_NONE &&
		    g->bad_evals == 1 &&
		    strcmp(g->bad_eval_text, "ce 100000") == 0;
	return g->eval_kind[0] == PF_PGN_EVAL_CP && g->eval[0] == 99999 &&
	    g->eval_depth[0] == 65535 && g->bad_evals == 0;
}

static void
test_eval_range(void)
{
	static const char pgn[] =
	    "1. e4 { [%eval 21474836.47,65535] } e5 { [%eval 0.1,65536] } "
	    "2. Nf3 { [%eval #-2147483647] } Nc6 { [%eval #-2147483648] } "
	    "3. Bb5 { [%eval 12345678901234567890] } a6 "
	    "{ [%eval -21474836.475] } 4. Ba4 { [%eval -0.3,20] } *\n";
	static const char epd[] =
	    "4k3/8/8/8/8/8/8/4K3 w - - ce 100000; acd 20;\n"
	    "4k3/8/8/8/8/8/8/4K3 w - - ce 99999; acd 65535;\n";

	CHECK(parse_text(pgn, sizeof(pgn) - 1, check_eval_range) == 1,
	    "%%eval out of range (score, mate, depth) dropped and counted, "
	    "the limits kept");
	CHECK(parse_text(epd, sizeof(epd) - 1, check_epd_range) == 2,
	    "EPD ce out of range dropped and counted");
}

static void
test_tc_classes(void)
{
	CHECK(pf_tc_class(15, 0) == PF_TC_ULTRABULLET, "15+0 ultrabullet");
	CHECK(pf_tc_class(29, 0) == PF_TC_ULTRABULLET, "29+0 ultrabullet");
	CHECK(pf_tc_class(30, 0) == PF_TC_BULLET, "30+0 bullet");
	CHECK(pf_tc_class(60, 2) == PF_TC_BULLET, "60+2 (140 s) bullet");
	CHECK(pf_tc_class(179, 0) == PF_TC_BULLET, "179+0 bullet");
	CHECK(pf_tc_class(180, 0) == PF_TC_BLITZ, "180+0 blitz");
	CHECK(pf_tc_class(300, 3) == PF_TC_BLITZ, "300+3 (420 s) blitz");
	CHECK(pf_tc_class(479, 0) == PF_TC_BLITZ, "479+0 blitz");
	CHECK(pf_tc_class(180, 8) == PF_TC_RAPID, "180+8 (500 s) rapid");
	CHECK(pf_tc_class(1499, 0) == PF_TC_RAPID, "1499+0 rapid");
	CHECK(pf_tc_class(1500, 0) == PF_TC_CLASSICAL, "1500+0 classical");
	CHECK(pf_tc_class(1800, 0) == PF_TC_CLASSICAL, "1800+0 classical");
	CHECK(pf_tc_class(PF_U32_UNKNOWN, 0) == PF_TC_UNKNOWN, "unknown");
	CHECK(strcmp(pf_tc_name(PF_TC_CORRESPONDENCE), "correspondence") == 0,
	    "class names");
}

static int
check_epd(pf_pgn_game *g, int i)
{
	if (i == 0)
		return g->nmoves == 0 && g->start.stm == PF_BLACK &&
		    g->eval_kind[0] == PF_PGN_EVAL_CP && g->eval[0] == -30 &&
		    g->line == 1;
	return g->skip && g->problem == PF_PGNP_FEN && g->line == 3;
}

static void
test_epd(void)
{
	static const char epd[] =
	    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; "
	    "ce 30;\n\n8/8/8/8/8/8/8/8 w - -\n";

	CHECK(parse_text(epd, sizeof(epd) - 1, check_epd) == 2,
	    "EPD detected; ce mapped to White's view; bad line numbered");
}

static int
any_game(pf_pgn_game *g, int i)
{
	(void)g;
	(void)i;
	return 1;
}

/* The games in text, read whole. */
static int
count_games(const char *text, size_t len)
{
	return parse_text(text, len, any_game);
}

/* Where pf_pgn_cut cuts, and where it must not. */
static void
test_cut(void)
{
	static const char two[] =
	    "[Event \"a\"]\n[Site \"s\"]\n\n1. e4 e5 { [%clk 0:01:00] } 1-0\n"
	    "\n[Event \"b\"]\n\n1. d4 *\n";
	static const char noevent[] =
	    "[Site \"s\"]\n[White \"w\"]\n\n[Event \"b\"]\n\n1. d4 *\n";
	static const char withevent[] =
	    "[Event \"a\"]\n[White \"w\"]\n%escape\n\n[Event \"b\"]\n1. d4 *\n";
	static const char midline[] =
	    "1. e4 e5 [Site \"x\"]\n\n[Event \"b\"]\n\n1. d4 *\n";
	static const char inline_tag[] =
	    "[Event \"a\"] 1. e4\n\n[Event \"b\"]\n\n1. d4 *\n";
	static const char noquote[] = "1. e4 *\n\n[Event b]\n1. d4 *\n";
	/* A tag begun where a '%' or ';' would seem to make the rest of the
	   line a comment, but the reader reads on: the [Event] after it is
	   one more tag of that game (each text reads whole as two games). */
	static const struct {
		const char *text, *what;
	} tagged[] = {
		{ "1. e4 (1. d4 % x) [Site \"x\"]\n[Event \"b\"]\n\n1. d4 *\n",
		  "'%' in a variation (nothing there)" },
		{ "1. e4 { a\nb ; c } [Site \"x\"]\n[Event \"b\"]\n\n1. d4 *\n",
		  "';' in a comment opened a line before (text)" },
		{ "1. e4 { a\nb % c } [Site \"x\"]\n[Event \"b\"]\n\n1. d4 *\n",
		  "'%' in a comment opened a line before (text)" },
		{ "1. e4 {\n%x } [Site \"x\"]\n[Event \"b\"]\n\n1. d4 *\n",
		  "a '%' line inside a comment (no escape)" },
	};
	size_t k;
	static const char epd[] = "8/8/8/8/8/8/8/k1K5 w - -\n8/8/8/8/8/8/8/";
	size_t at = (size_t)(strstr(two, "[Event \"b\"]") - two);

	CHECK(pf_pgn_cut(two, sizeof(two) - 1, 1, PF_PGN_PGN) == at,
	    "cut before a game that follows a result");
	CHECK(pf_pgn_cut_from(two, sizeof(two) - 1, 1, PF_PGN_PGN) == at &&
	    pf_pgn_cut_from(two, sizeof(two) - 1, at + 1, PF_PGN_PGN) == 0,
	    "the first cut at or after an offset");
	CHECK(pf_pgn_cut(two, at + 7, 1, PF_PGN_PGN) == 0 &&
	    pf_pgn_cut(two, at + 8, 1, PF_PGN_PGN) == at,
	    "no cut before the [Event tag's value has begun");
	CHECK(pf_pgn_cut(noevent, sizeof(noevent) - 1, 1, PF_PGN_PGN) == 0,
	    "no cut after tags without [Event] (one game with the next)");
	CHECK(pf_pgn_cut(withevent, sizeof(withevent) - 1, 1, PF_PGN_PGN) ==
	    (size_t)(strstr(withevent, "[Event \"b\"]") - withevent),
	    "a cut after tags with [Event] (a second [Event] is a new game)");
	CHECK(pf_pgn_cut(midline, sizeof(midline) - 1, 1, PF_PGN_PGN) == 0,
	    "no cut after a tag that begins inside a line of moves");
	CHECK(pf_pgn_cut(inline_tag, sizeof(inline_tag) - 1, 1, PF_PGN_PGN) == 0,
	    "no cut after a tag line with moves on it");
	CHECK(pf_pgn_cut(noquote, sizeof(noquote) - 1, 1, PF_PGN_PGN) == 0,
	    "no cut at an [Event] tag without a quoted value");
	for (k = 0; k < sizeof(tagged) / sizeof(tagged[0]); k++) {
		size_t n = strlen(tagged[k].text);

		CHECK(pf_pgn_cut(tagged[k].text, n, 1, PF_PGN_PGN) == 0 &&
		    count_games(tagged[k].text, n) == 2,
		    "no cut after a tag that follows %s", tagged[k].what);
	}
	CHECK(pf_pgn_cut(epd, sizeof(epd) - 1, 1, PF_PGN_EPD) ==
	    (size_t)(strchr(epd, '\n') + 1 - epd), "EPD: after the last line");
	CHECK(pf_pgn_sniff(epd, sizeof(epd) - 1, PF_PGN_AUTO, 0) == PF_PGN_EPD &&
	    pf_pgn_sniff(two, sizeof(two) - 1, PF_PGN_AUTO, 0) == PF_PGN_PGN &&
	    pf_pgn_sniff("\n  \n%x\n", 7, PF_PGN_AUTO, 0) == PF_PGN_AUTO &&
	    pf_pgn_sniff("8/8/8", 5, PF_PGN_AUTO, 0) == PF_PGN_AUTO &&
	    pf_pgn_sniff("8/8/8", 5, PF_PGN_AUTO, 1) == PF_PGN_PGN &&
	    pf_pgn_sniff(two, 3, PF_PGN_EPD, 0) == PF_PGN_EPD,
	    "sniff: the format, or not known yet");
}

/* Cuts in text whose lines end in CR alone, or in CRLF: where a piece may
   end, never between the CR and the LF of one line end. */
static void
test_cut_cr(void)
{
	static const char two[] =
	    "[Event \"a\"]\r[Site \"s\"]\r\r1. e4 e5 { x\r} 1-0\r"
	    "\r[Event \"b\"]\r\r1. d4 *\r";
	static const char dos[] =
	    "[Event \"a\"]\r\n\r\n1. e4 1-0\r\n\r\n[Event \"b\"]\r\n";
	static const char noevent[] =
	    "[Site \"s\"]\r[White \"w\"]\r\r[Event \"b\"]\r\r1. d4 *\r";
	static const char epd[] = "8/8/8/8/8/8/8/k1K5 w - -\r\n"
	    "8/8/8/8/8/8/8/k1K5 w - -\r8/8/8/8/8/8/8/k1K5 w - -\r";
	size_t at = (size_t)(strstr(two, "[Event \"b\"]") - two);
	static const char sniff[] = "\r%x\r8/8/8/8/8/8/8/k1K5 w - -\r";
	size_t n = sizeof(epd) - 1, l1 = (size_t)(strchr(epd, '\n') + 1 - epd);
	size_t l2 = (size_t)(strchr(epd + l1, '\r') + 1 - epd);

	CHECK(pf_pgn_cut(two, sizeof(two) - 1, 1, PF_PGN_PGN) == at &&
	    pf_pgn_cut_from(two, sizeof(two) - 1, 1, PF_PGN_PGN) == at,
	    "CR: a cut before a game that follows a result");
	CHECK(pf_pgn_cut(dos, sizeof(dos) - 1, 1, PF_PGN_PGN) ==
	    (size_t)(strstr(dos, "[Event \"b\"]") - dos),
	    "CRLF: a cut before a game that follows a result");
	CHECK(pf_pgn_cut(noevent, sizeof(noevent) - 1, 1, PF_PGN_PGN) == 0,
	    "CR: no cut after tags without [Event]");
	CHECK(pf_pgn_cut(epd, n - 1, 1, PF_PGN_EPD) == l2 &&
	    pf_pgn_cut(epd, n, 1, PF_PGN_EPD) == l2 &&
	    pf_pgn_cut(epd, n, l2 + 1, PF_PGN_EPD) == 0,
	    "EPD, CR: after the last line end, not after a CR that ends the "
	    "text (a LF may follow)");
	CHECK(pf_pgn_cut(epd, l1 - 1, 1, PF_PGN_EPD) == 0 &&
	    pf_pgn_cut_from(epd, l1 - 1, 1, PF_PGN_EPD) == 0 &&
	    pf_pgn_cut_from(epd, n, 1, PF_PGN_EPD) == l1,
	    "EPD, CRLF: no cut between CR and LF, nor after a CR that may be "
	    "one");
	CHECK(pf_pgn_sniff(sniff, sizeof(sniff) - 1, PF_PGN_AUTO, 0) ==
	    PF_PGN_EPD, "sniff: a '%%' line ended by a CR");
}

int
main(void)
{
	test_random_games();
	test_long_comment();
	test_tags_and_annotations();
	test_tc_classes();
	test_eval_range();
	test_epd();
	test_cut();
	test_cut_cr();
	return t_done();
}
