/*
 * uci.c - unit tests for lib/uci.c (info parsing, the search accumulator,
 * engine processes) and lib/evalcache.c (memory and file cache, torn
 * tails).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "t.h"
#include "posflow.h"
#include "uci.h"
#include "evalcache.h"

static void
test_parse_info(void)
{
	pf_uci_info in;

	CHECK(pf_uci_parse_info("info depth 12 seldepth 17 multipv 2 score "
	    "cp -35 wdl 10 900 90 nodes 123456 nps 1000 hashfull 3 tbhits 0 "
	    "time 87 pv e2e4 e7e5", &in) == 1, "full info line parses");
	CHECK(in.depth == 12 && in.seldepth == 17 && in.multipv == 2,
	    "depth, seldepth, multipv");
	CHECK(in.score_kind == PF_SCORE_CP && in.score == -35 && !in.bound,
	    "cp score");
	CHECK((in.has & PF_UCI_HAS_WDL) && in.wdl[0] == 10 &&
	    in.wdl[1] == 900 && in.wdl[2] == 90, "wdl");
	CHECK(in.nodes == 123456 && in.time_ms == 87, "nodes and time");
	CHECK(in.pv && strcmp(in.pv, "e2e4 e7e5") == 0, "pv text");
	CHECK(pf_uci_parse_info("info depth 3 score cp 5 wdl 600 300 50",
	    &in) == 1 && !(in.has & PF_UCI_HAS_WDL) && in.score == 5,
	    "wdl not summing to 1000 is no wdl, the score is kept");
	CHECK(pf_uci_parse_info("info depth 20 score mate -3 lowerbound "
	    "nodes 5 pv a2a3", &in) == 1 && in.score_kind == PF_SCORE_MATE &&
	    in.score == -3 && in.bound == PF_EVF_LOWER, "mate with bound");
	CHECK(pf_uci_parse_info("info depth 5 score cp 7 upperbound",
	    &in) == 1 && in.bound == PF_EVF_UPPER, "upperbound");
	CHECK(pf_uci_parse_info("info currmove e2e4 currmovenumber 1",
	    &in) == 0, "currmove line has no score");
	CHECK(pf_uci_parse_info("info string score cp 5", &in) == 0,
	    "info string is ignored");
	CHECK(pf_uci_parse_info("info depth x score cp 1", &in) == -1,
	    "non-numeric depth is malformed");
	CHECK(pf_uci_parse_info("info depth 3 score cp", &in) == -1,
	    "score without a value is malformed");
	CHECK(pf_uci_parse_info("info depth 3 score pawns 1", &in) == -1,
	    "unknown score unit is malformed");
	CHECK(pf_uci_parse_info("bestmove e2e4", &in) == -1,
	    "not an info line");
	CHECK(pf_uci_parse_info("info depth 3 foo score cp 9", &in) == 1 &&
	    in.score == 9, "unknown tokens are skipped");
	CHECK(pf_uci_is_readyok("readyok") && pf_uci_is_readyok(" readyok") &&
	    pf_uci_is_readyok("readyok \t"), "readyok, blanks around it");
	CHECK(!pf_uci_is_readyok("readyokay") && !pf_uci_is_readyok("") &&
	    !pf_uci_is_readyok("readyok now"), "not readyok");
}

static pf_uci_search *
feed(const char *fen, int multipv, int keep, const char **lines, int *last)
{
	pf_uci_search *s = pf_uci_search_new();
	pf_board b;

	pf_board_from_fen(&b, fen, NULL, 0);
	pf_uci_search_begin(s, &b, multipv, keep);
	*last = 0;
	for (int i = 0; lines[i]; i++)
		if ((*last = pf_uci_search_line(s, lines[i])) != 0)
			break;
	return s;
}

static void
test_search(void)
{
	static const char *multi[] = {
		"info string NNUE evaluation enabled",
		"info depth 1 seldepth 1 multipv 1 score cp 18 wdl 22 974 4 "
		    "nodes 57 time 1 pv e2e4",
		"info depth 1 seldepth 1 multipv 2 score cp 12 nodes 57 time 1 "
		    "pv g1f3",
		"info depth 1 seldepth 1 multipv 3 score cp 11 nodes 57 time 1 "
		    "pv d2d4",
		"info depth 2 seldepth 2 multipv 1 score cp 45 lowerbound "
		    "nodes 100 time 2 pv d2d4",
		"info depth 2 seldepth 2 multipv 1 score cp 45 wdl 80 919 1 "
		    "nodes 165 time 2 pv d2d4",
		"info depth 2 seldepth 2 multipv 2 score cp 18 nodes 165 "
		    "time 2 pv e2e4",
		"info depth 2 seldepth 2 multipv 3 score cp 4 nodes 165 time 2 "
		    "pv g1f3 a7a6",
		/* an interrupted iteration: index 1 at depth 3, the rest
		   repeat depth 2 */
		"info depth 3 seldepth 3 multipv 1 score cp 50 nodes 272 "
		    "time 2 pv c2c4 a7a6 e2e4",
		"info depth 2 seldepth 2 multipv 2 score cp 18 nodes 272 "
		    "time 2 pv e2e4",
		"info depth 2 seldepth 2 multipv 3 score cp 4 nodes 272 time 2 "
		    "pv g1f3",
		"bestmove c2c4 ponder a7a6",
		NULL
	};
	static const char *bad[] = {
		"info depth 1 seldepth 1 multipv 1 score cp 18 pv e2e4",
		"bestmove e2e5",
		NULL
	};
	static const char *noscore[] = { "bestmove e2e4", NULL };
	static const char *mate0[] = {
		"info depth 1 seldepth 1 multipv 1 score cp 20 pv e2e4",
		"info depth 2 seldepth 2 multipv 1 score mate 0 pv d2d4",
		"bestmove d2d4",
		NULL
	};
	static const char *mate[] = {
		"info depth 1 seldepth 2 multipv 1 score mate 1 nodes 20 "
		    "time 0 pv e1e8",
		"bestmove e1e8",
		NULL
	};
	pf_uci_search *s;
	pf_eval e;
	int last;

	s = feed(PF_STARTPOS_FEN, 3, 1, multi, &last);
	CHECK(last == 1, "multipv search ends at bestmove");
	memset(&e, 0, sizeof(e));
	pf_uci_search_eval(s, &e);
	CHECK(e.score_kind == PF_SCORE_CP && e.score == 50 && e.depth == 3,
	    "eval is the last unbounded multipv-1 line (cp %d depth %u)",
	    e.score, e.depth);
	CHECK(e.pv_len == 3 && e.nodes == 272, "pv of 3 moves, nodes");
	CHECK(!(e.flags & PF_EVF_WDL), "that line had no wdl");
	CHECK(s->have_table && s->table.depth == 2 && s->table.n == 3,
	    "table is the deepest complete depth (2), not the interrupted 3");
	char u[8];
	CHECK(strcmp(pf_move_to_uci(&s->board, s->table.m[0].move, u),
	    "d2d4") == 0 && s->table.m[0].score == 45,
	    "table best first: d2d4 45 (bound line skipped)");
	CHECK(s->table.m[2].score == 4 && s->table.m[2].depth == 2,
	    "third line cp 4 at depth 2");
	CHECK(!(s->table.flags & PF_MSF_COMPLETE),
	    "3 of 20 moves is not complete");
	CHECK(s->nhist == 2 && s->hist[0].depth == 1 && s->hist[1].depth == 2,
	    "keep_depths keeps depths 1 and 2");
	CHECK(strcmp(pf_move_to_uci(&s->board, e.best, u), "c2c4") == 0,
	    "bestmove c2c4");
	pf_uci_search_free(s);

	s = feed(PF_STARTPOS_FEN, 1, 0, bad, &last);
	CHECK(last == -1 && strstr(s->err, "illegal bestmove"),
	    "illegal bestmove is a fault: %s", s->err);
	pf_uci_search_free(s);
	s = feed(PF_STARTPOS_FEN, 1, 0, noscore, &last);
	CHECK(last == -1 && strstr(s->err, "without a score"),
	    "bestmove without score is a fault: %s", s->err);
	pf_uci_search_free(s);
	s = feed("6k1/5ppp/8/8/8/8/8/K3R3 w - - 0 1", 1, 0, mate, &last);
	pf_uci_search_eval(s, &e);
	CHECK(last == 1 && e.score_kind == PF_SCORE_MATE && e.score == 1,
	    "mate in 1");
	pf_uci_search_free(s);
	s = feed(PF_STARTPOS_FEN, 1, 0, mate0, &last);
	pf_uci_search_eval(s, &e);
	CHECK(last == 1 && e.score_kind == PF_SCORE_CP && e.score == 20 &&
	    s->garbage == 1, "mate 0 with legal moves is no score");
	pf_uci_search_free(s);

	/* Garbage: tolerated up to the budget, then a fault. */
	pf_board b;
	s = pf_uci_search_new();
	pf_board_startpos(&b);
	pf_uci_search_begin(s, &b, 1, 0);
	int r = 0;
	for (int i = 0; i < PF_UCI_GARBAGE_MAX && r == 0; i++)
		r = pf_uci_search_line(s, "\x01 junk");
	CHECK(r == 0, "garbage up to the budget is ignored");
	r = pf_uci_search_line(s, "more junk");
	CHECK(r == -1 && strstr(s->err, "unparsable"),
	    "garbage over the budget is a fault");
	pf_uci_search_free(s);

	/*
	 * A nodes limit that stops the search as depth 3 begins: Stockfish
	 * prints the stopped iteration's lines at depth 3, the moves not
	 * searched again with their depth-2 scores; or its lines of depth 2
	 * again, in the new order.  Printed after the limit (nodes >= it),
	 * they are no table.  The same for movetime, by the time.
	 */
	static const char *cut[] = {
		"info depth 1 seldepth 1 multipv 1 score cp 18 nodes 57 time 1 "
		    "pv e2e4",
		"info depth 1 seldepth 1 multipv 2 score cp 12 nodes 57 time 1 "
		    "pv g1f3",
		"info depth 2 seldepth 2 multipv 1 score cp 45 nodes 165 "
		    "time 2 pv d2d4",
		"info depth 2 seldepth 2 multipv 2 score cp 18 nodes 165 "
		    "time 2 pv e2e4",
		"info depth 3 seldepth 3 multipv 1 score cp 45 nodes 310 "
		    "time 3 pv d2d4",
		"info depth 3 seldepth 3 multipv 2 score cp 18 nodes 310 "
		    "time 3 pv e2e4",
		"info depth 2 seldepth 2 multipv 1 score cp 18 nodes 310 "
		    "time 3 pv e2e4",
		"info depth 2 seldepth 2 multipv 2 score cp 18 nodes 310 "
		    "time 3 pv e2e4",
		"bestmove d2d4",
		NULL
	};
	static const struct {
		int kind;
		uint64_t limit;
		int depth, eval_depth;
	} cuts[] = {
		{ PF_LIMIT_NODES, 300, 2, 2 }, { PF_LIMIT_NODES, 310, 2, 2 },
		{ PF_LIMIT_NODES, 311, 3, 2 }, { PF_LIMIT_MOVETIME, 3, 2, 2 },
		{ PF_LIMIT_MOVETIME, 2, 1, 1 }, { PF_LIMIT_DEPTH, 3, 3, 2 }
	};
	for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
		pf_board_startpos(&b);
		s = pf_uci_search_new();
		pf_uci_search_begin(s, &b, 2, 1);
		pf_uci_search_limit(s, cuts[k].kind, cuts[k].limit);
		for (int i = 0; cut[i] != NULL; i++)
			r = pf_uci_search_line(s, cut[i]);
		pf_uci_search_eval(s, &e);
		CHECK(r == 1 && s->have_table &&
		    s->table.depth == cuts[k].depth &&
		    s->hist[s->nhist - 1].depth == cuts[k].depth &&
		    s->table_faults == 0 && e.depth == cuts[k].eval_depth &&
		    e.score == 18, "limit %d:%llu: the table of depth %d, "
		    "not of the lines printed after the limit (table %d, "
		    "%d tables kept, %u faults; eval depth %u)", cuts[k].kind,
		    (unsigned long long)cuts[k].limit, cuts[k].depth,
		    s->table.depth, s->nhist, s->table_faults, e.depth);
		pf_uci_search_free(s);
	}

	/*
	 * The evaluation: Stockfish stopped by a nodes limit as depth 7
	 * begins repeats depth 6's line at depth 7 (its move not searched
	 * again keeps its score): depth 6's line, with the whole search's
	 * nodes.  A new score or move at depth 7 is the engine's, kept.
	 */
	static const char *again[] = {
		"info depth 6 seldepth 7 multipv 1 score cp 30 nodes 15990 "
		    "time 13 pv g1f3 b8c6",
		"info depth 7 seldepth 8 multipv 1 score cp 30 nodes 16065 "
		    "time 13 pv g1f3 b8c6",
		"bestmove g1f3",
		NULL
	};
	for (int k = 0; k < 2; k++) {
		pf_board_from_fen(&b, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/"
		    "RNBQKBNR w KQkq - 0 2", NULL, 0);
		s = pf_uci_search_new();
		pf_uci_search_begin(s, &b, 1, 0);
		pf_uci_search_limit(s, PF_LIMIT_NODES, 16051);
		for (int i = 0; again[i] != NULL; i++)
			r = pf_uci_search_line(s, k == 1 && i == 1 ?
			    "info depth 7 seldepth 8 multipv 1 score cp 41 "
			    "nodes 16065 time 13 pv g1f3 b8c6" : again[i]);
		pf_uci_search_eval(s, &e);
		CHECK(r == 1 && e.depth == (k == 0 ? 6 : 7) && e.seldepth ==
		    (k == 0 ? 7 : 8) && e.score == (k == 0 ? 30 : 41) &&
		    e.nodes == 16065, "after the limit, %s: depth %u (score "
		    "%d, nodes %llu)", k == 0 ? "the line before again" :
		    "a new score", e.depth, e.score,
		    (unsigned long long)e.nodes);
		pf_uci_search_free(s);
	}

	/* multipv all: every legal move. */
	pf_board_from_fen(&b, "k7/8/8/8/8/8/8/K7 w - - 0 1", NULL, 0);
	s = pf_uci_search_new();
	pf_uci_search_begin(s, &b, PF_MAX_MOVES, 0);
	CHECK(s->want == 3, "all = 3 legal moves");
	pf_uci_search_line(s, "info depth 1 multipv 1 score cp 0 pv a1b1");
	pf_uci_search_line(s, "info depth 1 multipv 2 score cp 0 pv a1a2");
	CHECK(!s->have_table, "two of three lines: no table yet");
	pf_uci_search_line(s, "info depth 1 multipv 3 score cp 0 pv a1b2");
	CHECK(s->have_table && (s->table.flags & PF_MSF_COMPLETE) &&
	    s->table.n == 3, "three lines: a complete table");
	pf_uci_search_free(s);
}

static void
test_process(void)
{
	char err[256], *line, how[64];
	pf_uci *u;
	int r;

	CHECK(pf_uci_spawn("/nonexistent/engine", err, sizeof(err)) == NULL &&
	    strstr(err, "cannot run"), "exec failure is reported: %s", err);
	u = pf_uci_spawn("cat", err, sizeof(err));
	CHECK(u != NULL, "spawn cat");
	if (u == NULL)
		return;
	CHECK(pf_uci_send(u, "hello\nworld") == 0, "send two lines");
	r = pf_uci_wait_line(u, 5000, &line);
	CHECK(r == 1 && strcmp(line, "hello") == 0, "first line back");
	r = pf_uci_wait_line(u, 5000, &line);
	CHECK(r == 1 && strcmp(line, "world") == 0, "second line back");
	r = pf_uci_wait_line(u, 50, &line);
	CHECK(r == 0, "nothing more: timeout");
	CHECK(pf_uci_handshake(u, 200) == -1 &&
	    strstr(pf_uci_error(u), "uciok"), "no uciok: handshake times out");
	CHECK(pf_uci_alive(u), "still alive");
	pid_t pid = pf_uci_pid(u);
	pf_uci_kill(u);
	CHECK(!pf_uci_alive(u) && kill(pid, 0) == -1, "killed and reaped");
	CHECK(strcmp(pf_uci_exit_text(u, how, sizeof(how)),
	    "killed by signal 9") == 0, "exit text: %s", how);
	pf_uci_free(u);

	u = pf_uci_spawn("cat", err, sizeof(err));
	CHECK(pf_uci_stop(u, 1000) == 0, "cat ends on EOF: status 0");
	pf_uci_free(u);

}

/* Hits of keys lo .. hi-1 in c. */
static int
hits(pf_evalcache *c, uint64_t lo, uint64_t hi)
{
	pf_extbuf out = { 0 };
	int n = 0;

	for (uint64_t k = lo; k < hi; k++)
		n += pf_evalcache_get(c, k, &out) == 1;
	pf_extbuf_free(&out);
	return n;
}

/* Groups in memory: dropped whole, the one being read kept, one larger
   than the memory not kept. */
static void
test_cache_groups(const uint8_t *val)
{
	pf_evalcache_item a[3], b[3], d[3], big[8];
	pf_evalcache *c;
	int i;

	/* 100 bytes and 48 of bookkeeping each: six fit in 1000 */
	for (i = 0; i < 3; i++) {
		a[i] = (pf_evalcache_item){ 10 + (uint64_t)i, val, 100 };
		b[i] = (pf_evalcache_item){ 20 + (uint64_t)i, val, 100 };
		d[i] = (pf_evalcache_item){ 30 + (uint64_t)i, val, 100 };
	}
	for (i = 0; i < 8; i++)
		big[i] = (pf_evalcache_item){ 40 + (uint64_t)i, val, 100 };
	c = pf_evalcache_new(1000);
	CHECK(pf_evalcache_put_group(c, a, 3) == 0 &&
	    pf_evalcache_put_group(c, b, 3) == 0 && hits(c, 20, 23) == 3,
	    "groups put");
	/* one more: the oldest group goes whole, not one entry of it */
	CHECK(pf_evalcache_put(c, 99, val, 100) == 0, "put after groups");
	CHECK(hits(c, 10, 13) == 0 && hits(c, 20, 23) == 3 &&
	    hits(c, 99, 100) == 1, "the oldest group dropped whole "
	    "(%d of a left)", hits(c, 10, 13));
	pf_evalcache_free(c);

	/* a group being read (hit last) stays while the next is put */
	c = pf_evalcache_new(1000);
	pf_evalcache_put_group(c, a, 3);
	pf_evalcache_put_group(c, b, 3);
	CHECK(hits(c, 10, 11) == 1, "first of a read");
	CHECK(pf_evalcache_put_group(c, d, 3) == 0, "third group put");
	CHECK(hits(c, 11, 13) == 2 && hits(c, 20, 23) == 0 &&
	    hits(c, 30, 33) == 3, "the group being read kept, the next "
	    "oldest dropped whole");
	/* a group with a key in memory already (another group's) is not
	   kept in memory: the other's eviction would cut it */
	pf_evalcache_free(c);
	c = pf_evalcache_new(1000);
	b[0].key = 12;		/* b: 12, 21, 22 */
	pf_evalcache_put_group(c, a, 3);
	CHECK(pf_evalcache_put_group(c, b, 3) == 0 && hits(c, 21, 23) == 0 &&
	    hits(c, 10, 13) == 3, "a group sharing a key is not kept");
	b[0].key = 20;
	pf_evalcache_free(c);
	c = pf_evalcache_new(1000);
	pf_evalcache_put_group(c, a, 3);
	pf_evalcache_put_group(c, b, 3);
	CHECK(hits(c, 10, 11) == 1 && pf_evalcache_put_group(c, d, 3) == 0,
	    "groups again");
	/* larger than the memory: not kept at all */
	CHECK(pf_evalcache_put_group(c, big, 8) == 0 && hits(c, 40, 48) == 0,
	    "a group larger than the memory is not kept");
	CHECK(hits(c, 10, 13) == 3 && hits(c, 30, 33) == 3,
	    "and drops nothing");
	pf_evalcache_free(c);
}

static void
test_cache(void)
{
	char path[] = "/tmp/pf-evalcache-XXXXXX";
	uint8_t val[100];
	pf_extbuf out = { 0 };
	pf_evalcache *c;
	struct stat st;
	int fd;

	for (int i = 0; i < 100; i++)
		val[i] = (uint8_t)i;
	CHECK(pf_evalcache_key(1, 1, 10, 1, 0, 7) !=
	    pf_evalcache_key(1, 1, 11, 1, 0, 7), "limit is in the key");

	c = pf_evalcache_new(1000);
	CHECK(pf_evalcache_put(c, 42, val, 100) == 0, "memory put");
	CHECK(pf_evalcache_get(c, 42, &out) == 1 && out.len == 100 &&
	    memcmp(out.data, val, 100) == 0, "memory get");
	CHECK(pf_evalcache_get(c, 43, &out) == 0, "miss");
	for (uint64_t k = 100; k < 200; k++)
		pf_evalcache_put(c, k, val, 100);
	CHECK(pf_evalcache_entries(c) <= 1000 / 100,
	    "memory bound holds (%llu entries)",
	    (unsigned long long)pf_evalcache_entries(c));
	pf_extbuf_reset(&out);
	CHECK(pf_evalcache_get(c, 199, &out) == 1, "newest kept");
	CHECK(pf_evalcache_get(c, 100, &out) == 0, "oldest dropped");
	pf_evalcache_free(c);
	test_cache_groups(val);

	fd = mkstemp(path);
	close(fd);
	c = pf_evalcache_new(0);
	CHECK(pf_evalcache_open(c, path) == 0, "open new cache file");
	for (uint64_t k = 1; k <= 3; k++)
		pf_evalcache_put(c, k, val, 10 * (size_t)k);
	pf_extbuf_reset(&out);
	CHECK(pf_evalcache_get(c, 2, &out) == 1 && out.len == 20,
	    "file entry readable in the same run");
	pf_evalcache_free(c);

	c = pf_evalcache_new(0);
	CHECK(pf_evalcache_open(c, path) == 0 && pf_evalcache_loaded(c) == 3,
	    "reopened: 3 entries");
	pf_extbuf_reset(&out);
	CHECK(pf_evalcache_get(c, 3, &out) == 1 && out.len == 30 &&
	    memcmp(out.data, val, 30) == 0, "value read back from file");
	pf_evalcache_free(c);

	/* A crash mid-write: cut the last entry short. */
	stat(path, &st);
	CHECK(truncate(path, st.st_size - 5) == 0, "tear the tail");
	c = pf_evalcache_new(0);
	CHECK(pf_evalcache_open(c, path) == 0 && pf_evalcache_loaded(c) == 2 &&
	    pf_evalcache_dropped(c) == 16 + 30 + 8 - 5,
	    "torn entry dropped, the rest kept (dropped %llu)",
	    (unsigned long long)pf_evalcache_dropped(c));
	pf_evalcache_put(c, 9, val, 5);
	pf_evalcache_free(c);
	c = pf_evalcache_new(0);
	CHECK(pf_evalcache_open(c, path) == 0 && pf_evalcache_loaded(c) == 3 &&
	    pf_evalcache_dropped(c) == 0, "appending after a repair works");
	pf_evalcache_free(c);

	/* A flipped byte inside an entry: only that entry goes. */
	fd = open(path, O_RDWR);
	CHECK(pwrite(fd, "X", 1, 16 + 16 + 3) == 1, "flip a byte");
	close(fd);
	c = pf_evalcache_new(0);
	CHECK(pf_evalcache_open(c, path) == 0 && pf_evalcache_loaded(c) == 2 &&
	    pf_evalcache_skipped(c) == 16 + 10 + 8 &&
	    pf_evalcache_dropped(c) == 16 + 10 + 8,
	    "checksum catches the flipped byte, the rest kept");
	pf_evalcache_free(c);

	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "not a cache file at all", 23) == 23, "garbage file");
	close(fd);
	c = pf_evalcache_new(0);
	CHECK(pf_evalcache_open(c, path) == -1 &&
	    strstr(pf_evalcache_error(c), "not a posflow"),
	    "foreign file refused");
	pf_evalcache_free(c);
	unlink(path);
	pf_extbuf_free(&out);
}

/* A game's moves since its last capture or pawn move: pushed, begun
   again by a pawn move, the oldest moved into the start position past
   PF_UCI_HISTORY_MAX; the position command and the hash. */
static void
test_history(void)
{
	static const char *const uci[] = { "g1f3", "g8f6", "f3g1", "f6g8",
		NULL };
	static pf_uci_history h, h2;
	static char buf[PF_UCI_POSITION_MAX];
	pf_board b, start, fin;
	pf_move m;
	pf_undo u;
	int i, ok;

	pf_board_from_fen(&start, PF_STARTPOS_FEN, NULL, 0);
	b = start;
	pf_uci_history_reset(&h, &b);
	CHECK(strcmp(pf_uci_position_history(&h, buf), "position fen "
	    PF_STARTPOS_FEN) == 0, "no moves: the position alone");
	for (i = 0; uci[i] != NULL; i++) {
		pf_move_from_uci(&b, uci[i], 4, &m);
		pf_make_move(&b, m, &u);
		pf_uci_history_push(&h, m, &b);
	}
	CHECK(h.n == 4 && strcmp(pf_uci_position_history(&h, buf),
	    "position fen " PF_STARTPOS_FEN " moves g1f3 g8f6 f3g1 f6g8") == 0,
	    "four knight moves: %s", buf);
	CHECK(pf_uci_history_hash(&h) != pf_uci_history_hash(&(
	    pf_uci_history){ .start = b, .n = 0 }),
	    "the same position by other moves hashes otherwise");
	pf_move_from_uci(&b, "e2e4", 4, &m);
	pf_make_move(&b, m, &u);
	pf_uci_history_push(&h, m, &b);
	CHECK(h.n == 0 && h.start.key == b.key, "a pawn move begins again");
	/* 300 knight moves: the last 255 kept, the start moved on */
	pf_board_from_fen(&b, "4k3/8/8/8/8/8/8/N3K3 w - - 0 1", NULL, 0);
	pf_uci_history_reset(&h, &b);
	for (i = 0; i < 300; i++) {
		static const char *const shuttle[4] = { "a1b3", "e8d8", "b3a1",
			"d8e8" };

		pf_move_from_uci(&b, shuttle[i % 4], 4, &m);
		pf_make_move(&b, m, &u);
		pf_uci_history_push(&h, m, &b);
	}
	/* the start is 45 plies on (a shuttle of four: the knight on b3),
	   and the moves kept lead from it to the position */
	h2 = h;
	fin = b;
	b = h2.start;
	for (i = 0; i < h2.n; i++)
		pf_make_move(&b, h2.moves[i], &u);
	ok = h.n == PF_UCI_HISTORY_MAX && h.start.rule50 == 45 &&
	    (h.start.by_type[PF_KNIGHT] == 1ULL << 17) && b.key == fin.key;
	CHECK(ok && strlen(pf_uci_position_history(&h, buf)) < sizeof(buf),
	    "past %d moves the oldest go into the start position",
	    PF_UCI_HISTORY_MAX);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_parse_info();
	test_search();
	test_process();
	test_cache();
	test_history();
	return t_done();
}
