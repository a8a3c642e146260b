/*
 * uci-eval - evaluate every position of a record stream with a pool of UCI
 * engines and add the evaluation (and per-move score tables) to each
 * record, in input order.
 *
 * Design (see uci-eval(1)):
 *   - One thread, one poll(2) loop over all engines: no locks.  Each engine
 *     is a small state machine (starting, ready, idle, new game, searching)
 *     with a deadline.
 *   - Records sit in a bounded reorder window (a ring of slots).  Input is
 *     read only while the window has room; finished records leave from its
 *     head, so output order is input order.
 *   - A run is a stretch of consecutive records with one game id (not 0).
 *     An idle engine takes the next position of its run, so its hash table
 *     helps; else the first position of a run nobody works on, with
 *     "ucinewgame" when the game id changes.  A run is never split between
 *     engines, so every engine sees the same command sequence as with -j 1
 *     and the evaluations do not depend on -j.
 *   - Duplicates (same position, limit, setup) are searched once: a cache
 *     hit is finished on arrival; a duplicate of a position still being
 *     searched waits for it.
 *   - A fault (crash, closed output, timeout, garbage, illegal bestmove)
 *     kills the engine, restarts it, and puts the position back, up to
 *     --retries times.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "posflow.h"
#include "uci.h"
#include "pool.h"
#include "evalcache.h"
#include "evalsel.h"
#include "filter.h"

#define NONE		UINT64_MAX
#define MULTIPV_ALL	(-1)

struct opts {
	int limit_kind;
	uint64_t limit;
	int multipv;		/* 0 not asked, MULTIPV_ALL, or K */
	int tail_kind;		/* --tail-depth, --tail-nodes: PF_LIMIT_*, */
	uint64_t tail_limit;	/* or PF_LIMIT_NONE */
	const char *tail_arg;	/* as given, for messages */
	int keep_depths;
	pf_pool_opts pool;	/* -e, -j, -O, --retries, --timeout */
	pf_filter_opts out;	/* -o, -z, -f */
	const char *cache_file;
	size_t cache_mem;
	int skip_done;
	int drop_failed;
	int newgame;		/* NG_GAME, NG_POSITION or NG_NEVER */
	int progress;
	int window;
	int no_time;		/* --no-time: search times written as 0 */
	int reproducible;	/* --reproducible: per game, see repro_key() */
	int history;		/* --history: the game's moves are sent */
};

/* When to send "ucinewgame" (--newgame). */
enum { NG_GAME, NG_POSITION, NG_NEVER };

enum { S_FREE, S_PENDING, S_RUNNING, S_FOLLOW, S_DONE };

struct slot {
	int state;
	pf_record rec;
	pf_extbuf in;		/* the record's own extensions */
	pf_extbuf add;		/* what uci-eval appends */
	pf_board board;
	uint64_t key;
	uint64_t leader;	/* S_FOLLOW: seq of the searched duplicate */
	uint64_t run;		/* seq of the first record of its run */
	int followers;
	int attempts;
	int in_flight;		/* its key is in the in-flight map */
	int failed, evaluated;
	int file;
	uint64_t recno;
	pf_uci_history *hist;	/* --history: the moves that lead to it */
};

/*
 * The searches of a position: one; or, with a tail (--tail-depth,
 * --tail-nodes) and more legal moves than -m K, the main search (MultiPV
 * K) and then the tail search (the other moves, "go searchmoves", MultiPV
 * their number) on the same engine, its hash kept between them.
 */
enum { PH_MAIN, PH_TAIL };

/* What this tool keeps of each engine of the pool (lib/pool.c). */
struct worker {
	uint64_t slot;		/* seq being searched, or NONE */
	uint64_t last;		/* seq of the last position given, or NONE */
	uint64_t run;		/* the run it owns, or NONE */
	int phase;		/* the search of slot it runs: PH_* */
	int second;		/* slot's second search waits to be sent */
	/* Between the two searches: what the first one gives. */
	pf_extbuf pre;		/* the main search's evaluation, */
	pf_extbuf post;		/* its shallower tables (-k), */
	pf_movescores *tab;	/* and its table */
	/* --reproducible: the cache entries of its run, held until the run
	   is done (u64 key, u32 length, the value; little-endian). */
	pf_extbuf hold;
	int hold_faulted;	/* a result of the run is an engine fault:
				   the run is not cached */
};

/* The key of every position in the window that is searched (or waits to
   be), mapped to that first occurrence, for the duplicates that arrive
   while it is in the window.  See admit(). */
struct inflight {
	uint64_t *key, *seq;
	size_t mask;
};

struct run {
	struct opts *o;
	pf_evalcache_item *items;	/* release_held's, nitems of them */
	size_t nitems;
	const char **files;
	int nfiles, cur;
	pf_reader *r;
	int in_fd;
	int input_done;
	uint64_t total_bytes, done_bytes;
	pf_writer *w;
	struct slot *win;
	uint64_t head, tail, scan;	/* seqs: window is [head, tail) */
	size_t npending;
	uint64_t prev_game;	/* game id of the last record read */
	int has_prev, prev_last;
	uint64_t tail_run;	/* the run of the last record read */
	int tail_open;		/* it may go on with the next record */
	size_t cap;
	pf_pool *pool;
	struct worker *wk;
	int neng;
	pf_evalcache *cache;
	int caching;
	uint64_t setup;
	pf_movescores *mix;	/* a hybrid table being made */
	struct inflight fl;
	/* --history: the moves of the game being read since its last
	   capture or pawn move, and the record before (its board, move,
	   ply, game, whether it ended its game) */
	pf_uci_history *hists;	/* one per slot */
	pf_uci_history hcur;
	pf_board hprev;
	pf_move hprev_move;
	uint16_t hprev_ply;
	uint64_t hprev_game;
	int hprev_valid;
	pf_extbuf scratch;
	int status;
	int fatal, broken;
	int64_t t0, last_progress;
	int progress_tty;
	/* counters */
	uint64_t nread, written, searched, hits, terminal, skipped, failed,
	    invalid, dropped, notable, badtable, fewlines, restarts;
};

static volatile sig_atomic_t got_signal;
/* The input being read from a pipe or terminal, and /dev/null: a signal
   puts /dev/null in its place, so that a read waiting for input that may
   never come (the reader retries an interrupted read) ends at once. */
static volatile sig_atomic_t sig_in_fd = -1;
static int devnull_fd = -1;

static const char synopsis[] =
    "usage: uci-eval [-fhkVz] [-d depth | -n nodes | -t movetime] "
    "[-e engine]\n"
    "                [-j jobs] [-m count | all] [-O name=value] "
    "[-o file] [--cache file]\n"
    "                [--cache-mem size] [--drop-failed] [--history]\n"
    "                [--newgame game | position | never] [--no-newgame] "
    "[--no-time]\n"
    "                [--progress] [--reproducible] [--retries n] "
    "[--skip-done]\n"
    "                [--tail-depth depth | --tail-nodes nodes] [--timeout ms] "
    "[--window n]\n"
    "                [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first INT or TERM stops the run cleanly; a second one ends the
   process at once (the engines die with it: see pf_uci_spawn). */
static void
on_signal(int sig)
{
	if (got_signal) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	got_signal = sig;
	if (sig_in_fd >= 0 && devnull_fd >= 0)
		(void)dup2(devnull_fd, sig_in_fd);
}

/* ---- options ------------------------------------------------------------ */

enum { OPT_CACHE = 256, OPT_CACHE_MEM, OPT_DROP_FAILED, OPT_NEWGAME,
    OPT_NO_NEWGAME,
    OPT_PROGRESS,
    OPT_SKIP_DONE, OPT_TAIL_DEPTH, OPT_TAIL_NODES, OPT_WINDOW,
    OPT_NO_TIME, OPT_REPRODUCIBLE, OPT_HISTORY };

/*
 * A tail (--tail-depth, --tail-nodes) scores the moves after the K best
 * with a lesser limit of the same kind: it needs a count K with -m, and a
 * limit below the main one.  A depth tail under a nodes limit (or the
 * reverse) has no "below", so it is refused too.
 */
static int
check_tail(const struct opts *o, int ntails)
{
	const char *name = o->tail_kind == PF_LIMIT_DEPTH ? "--tail-depth" :
	    "--tail-nodes";

	if (ntails > 1) {
		pf_warnx("--tail-depth and --tail-nodes: give only one");
		return -1;
	}
	if (o->multipv == 0 || o->multipv == MULTIPV_ALL) {
		pf_warnx("%s %s: needs a count of best moves with -m (not all)",
		    name, o->tail_arg);
		return -1;
	}
	if (o->tail_kind != o->limit_kind) {
		pf_warnx("%s %s: needs %s as the main limit", name, o->tail_arg,
		    o->tail_kind == PF_LIMIT_DEPTH ? "--depth" : "--nodes");
		return -1;
	}
	if (o->tail_limit >= o->limit) {
		pf_warnx("%s %s: not below %s %llu", name, o->tail_arg,
		    o->tail_kind == PF_LIMIT_DEPTH ? "--depth" : "--nodes",
		    (unsigned long long)o->limit);
		return -1;
	}
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "depth", required_argument, NULL, 'd' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "movetime", required_argument, NULL, 't' },
		{ "multipv", required_argument, NULL, 'm' },
		{ "keep-depths", no_argument, NULL, 'k' },
		{ "engine", required_argument, NULL, 'e' },
		{ "option", required_argument, NULL, 'O' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "cache-mem", required_argument, NULL, OPT_CACHE_MEM },
		{ "drop-failed", no_argument, NULL, OPT_DROP_FAILED },
		{ "history", no_argument, NULL, OPT_HISTORY },
		{ "newgame", required_argument, NULL, OPT_NEWGAME },
		{ "no-newgame", no_argument, NULL, OPT_NO_NEWGAME },
		{ "no-time", no_argument, NULL, OPT_NO_TIME },
		{ "reproducible", no_argument, NULL, OPT_REPRODUCIBLE },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "retries", required_argument, NULL, PF_POOL_OPT_RETRIES },
		{ "skip-done", no_argument, NULL, OPT_SKIP_DONE },
		{ "tail-depth", required_argument, NULL, OPT_TAIL_DEPTH },
		{ "tail-nodes", required_argument, NULL, OPT_TAIL_NODES },
		{ "timeout", required_argument, NULL, PF_POOL_OPT_TIMEOUT },
		{ "window", required_argument, NULL, OPT_WINDOW },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr;
	char err[512];
	int ch, r, nlimits = 0, ntails = 0;

	memset(o, 0, sizeof(*o));
	pf_pool_opts_init(&o->pool);
	o->cache_mem = 64u << 20;
	o->window = 4096;
	while ((ch = pf_filter_getopt(argc, argv,
	    "d:n:t:m:ke:O:j:" PF_FILTER_SHORTOPTS, longopts, NULL, &o->out,
	    synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		errstr = NULL;
		if ((r = pf_pool_opts_take(&o->pool, ch, optarg, err,
		    sizeof(err))) == -2) {
			pf_warn("malloc");
			return 1;
		} else if (r == -1) {
			pf_warnx("%s", err);
			usage();
			return 2;
		} else if (r == 1) {
			continue;
		}
		switch (ch) {
		case 'd':
			o->limit_kind = PF_LIMIT_DEPTH;
			o->limit = (uint64_t)pf_strtonum(optarg, 1, 255, &errstr);
			nlimits++;
			break;
		case 'n':
			o->limit_kind = PF_LIMIT_NODES;
			o->limit = (uint64_t)pf_strtonum(optarg, 1,
			    (long long)1e15, &errstr);
			nlimits++;
			break;
		case 't':
			o->limit_kind = PF_LIMIT_MOVETIME;
			o->limit = (uint64_t)pf_strtonum(optarg, 1,
			    86400000LL, &errstr);
			nlimits++;
			break;
		case 'm':
			if (strcmp(optarg, "all") == 0)
				o->multipv = MULTIPV_ALL;
			else
				o->multipv = (int)pf_strtonum(optarg, 1,
				    PF_MAX_MOVES, &errstr);
			break;
		case 'k':
			o->keep_depths = 1;
			break;
		case OPT_CACHE:
			o->cache_file = optarg;
			break;
		case OPT_CACHE_MEM:
			o->cache_mem = (size_t)pf_strtosize(optarg, 0,
			    (uint64_t)1e15, &errstr);
			break;
		case OPT_DROP_FAILED:
			o->drop_failed = 1;
			break;
		case OPT_NEWGAME:
			if (strcmp(optarg, "game") == 0)
				o->newgame = NG_GAME;
			else if (strcmp(optarg, "position") == 0)
				o->newgame = NG_POSITION;
			else if (strcmp(optarg, "never") == 0)
				o->newgame = NG_NEVER;
			else
				errstr = "expected game, position or never";
			break;
		case OPT_NO_NEWGAME:
			o->newgame = NG_NEVER;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_SKIP_DONE:
			o->skip_done = 1;
			break;
		case OPT_TAIL_DEPTH:
			o->tail_kind = PF_LIMIT_DEPTH;
			o->tail_limit = (uint64_t)pf_strtonum(optarg, 1, 255,
			    &errstr);
			o->tail_arg = optarg;
			ntails++;
			break;
		case OPT_TAIL_NODES:
			o->tail_kind = PF_LIMIT_NODES;
			o->tail_limit = (uint64_t)pf_strtonum(optarg, 1,
			    (long long)1e15, &errstr);
			o->tail_arg = optarg;
			ntails++;
			break;
		case OPT_WINDOW:
			o->window = (int)pf_strtonum(optarg, 1, 1 << 22,
			    &errstr);
			break;
		case OPT_NO_TIME:
			o->no_time = 1;
			break;
		case OPT_REPRODUCIBLE:
			o->reproducible = 1;
			o->no_time = 1;
			break;
		case OPT_HISTORY:
			o->history = 1;
			break;
		default:
			usage();
			return 2;
		}
		if (errstr != NULL) {
			const struct option *lo = longopts;

			while (ch >= 256 && lo->name != NULL && lo->val != ch)
				lo++;
			if (ch < 256)
				pf_warnx("-%c %s: %s", ch, optarg, errstr);
			else
				pf_warnx("--%s %s: %s", lo->name, optarg,
				    errstr);
			usage();
			return 2;
		}
	}
	if (nlimits != 1) {
		pf_warnx(nlimits ? "give only one of --depth, --nodes, "
		    "--movetime" : "a limit is needed: --depth, --nodes or "
		    "--movetime");
		usage();
		return 2;
	}
	if (o->reproducible && o->newgame == NG_NEVER) {
		pf_warnx("--reproducible needs ucinewgame between games: not "
		    "--newgame never");
		usage();
		return 2;
	}
	if (o->keep_depths && o->multipv == 0) {
		pf_warnx("--keep-depths needs --multipv");
		usage();
		return 2;
	}
	if (ntails > 0 && check_tail(o, ntails) == -1) {
		usage();
		return 2;
	}
	o->pool.engine = pf_uci_find_engine(o->pool.engine);
	return -1;
}

/* ---- the in-flight map ---------------------------------------------------- */

static int
fl_init(struct inflight *f, size_t window)
{
	size_t n = 16;

	while (n < window * 2)
		n *= 2;
	f->mask = n - 1;
	f->key = calloc(n, sizeof(*f->key));
	f->seq = calloc(n, sizeof(*f->seq));
	return f->key && f->seq ? 0 : -1;
}

static uint64_t
fl_get(const struct inflight *f, uint64_t key)
{
	size_t i = (size_t)key & f->mask;

	while (f->key[i] != 0) {
		if (f->key[i] == key)
			return f->seq[i];
		i = (i + 1) & f->mask;
	}
	return NONE;
}

static void
fl_put(struct inflight *f, uint64_t key, uint64_t seq)
{
	size_t i = (size_t)key & f->mask;

	while (f->key[i] != 0 && f->key[i] != key)
		i = (i + 1) & f->mask;
	f->key[i] = key;
	f->seq[i] = seq;
}

static void
fl_del(struct inflight *f, uint64_t key)
{
	size_t i = (size_t)key & f->mask, j;

	while (f->key[i] != key) {
		if (f->key[i] == 0)
			return;
		i = (i + 1) & f->mask;
	}
	j = i;
	for (;;) {
		j = (j + 1) & f->mask;
		if (f->key[j] == 0)
			break;
		size_t home = (size_t)f->key[j] & f->mask;
		if ((i <= j) ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		f->key[i] = f->key[j];
		f->seq[i] = f->seq[j];
		i = j;
	}
	f->key[i] = 0;
}

/* ---- evaluations ---------------------------------------------------------- */

static uint16_t
multipv_code(const struct opts *o)
{
	return o->multipv == MULTIPV_ALL ? 0 :
	    (uint16_t)(o->multipv ? o->multipv : 1);
}

/*
 * With a tail, an evaluation of the same limit and -m K is done only when
 * its per-move table is complete (a plain -m K one lists K moves; with K
 * at or above the legal moves it is the same as a hybrid) and, for
 * --tail-depth, every move after the K-th was scored at that depth.  A
 * --tail-nodes count is not in the stream: any complete table will do.
 */
static int
tail_done(const struct run *R, const pf_record *rec, const pf_eval *e)
{
	pf_movescores *t;
	pf_ext x;
	int done;

	if (e->source == PF_SRC_TERMINAL)
		return 1;
	if (pf_evalsel_table_of(rec, e, &x) != 1 ||
	    (t = malloc(sizeof(*t))) == NULL)
		return 0;
	done = pf_movescores_decode(&x, t) == 0 &&
	    (t->flags & PF_MSF_COMPLETE);
	for (int i = R->o->multipv; done && i < t->n; i++)
		if (R->o->tail_kind == PF_LIMIT_DEPTH &&
		    t->m[i].depth != R->o->tail_limit)
			done = 0;
	free(t);
	return done;
}

/*
 * -m 1 writes the multipv of a run without -m (1), but a table too: an
 * engine evaluation without its table is not one of -m 1.
 */
static int
table_done(const struct run *R, const pf_record *rec, const pf_eval *e)
{
	pf_ext x;

	return R->o->multipv != 1 || e->source != PF_SRC_ENGINE ||
	    pf_evalsel_table_of(rec, e, &x) == 1;
}

static int
already_done(const struct run *R, const pf_record *rec)
{
	pf_eval e;
	pf_ext x;

	for (int i = 0; pf_ext_find(rec, PF_EXT_EVAL, i, &x) == 1; i++) {
		if (pf_eval_decode(&x, &e) == -1)
			continue;
		if ((e.source == PF_SRC_ENGINE || e.source == PF_SRC_TERMINAL) &&
		    e.limit_kind == R->o->limit_kind &&
		    e.limit == R->o->limit && e.multipv == multipv_code(R->o) &&
		    (R->o->tail_kind == PF_LIMIT_NONE ||
		    tail_done(R, rec, &e)) && table_done(R, rec, &e))
			return 1;
	}
	return 0;
}

static void
eval_base(const struct run *R, pf_eval *e, uint8_t source)
{
	memset(e, 0, sizeof(*e));
	e->source = source;
	e->limit_kind = (uint8_t)R->o->limit_kind;
	e->limit = R->o->limit;
	e->multipv = multipv_code(R->o);
}

/* Mate or stalemate: scored here, never sent. */
static int
terminal_eval(struct run *R, struct slot *s, enum pf_status st)
{
	pf_movescores *t;
	pf_eval e;
	int r;

	eval_base(R, &e, PF_SRC_TERMINAL);
	e.flags = PF_EVF_WDL;
	if (st == PF_CHECKMATE) {
		e.score_kind = PF_SCORE_MATE;
		e.wdl[2] = 1000;
	} else {
		e.score_kind = PF_SCORE_CP;
		e.wdl[1] = 1000;
	}
	if (pf_eval_encode(&e, &s->add) == -1)
		return -1;
	if (R->o->multipv == 0)
		return 0;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -1;
	t->limit_kind = (uint8_t)R->o->limit_kind;
	t->limit = R->o->limit;
	t->flags = PF_MSF_COMPLETE;
	r = pf_movescores_encode(t, &s->add);
	free(t);
	return r;
}

/* The evaluation of a finished search. */
static int
put_eval(struct run *R, const pf_uci_search *S, pf_extbuf *out)
{
	const char *name = pf_pool_engine_name(R->pool);
	pf_eval e;

	eval_base(R, &e, PF_SRC_ENGINE);
	pf_uci_search_eval(S, &e);
	if (R->o->no_time)
		e.time_ms = 0;
	e.engine_len = (uint8_t)(strlen(name) > 255 ? 255 : strlen(name));
	memcpy(e.engine, name, e.engine_len);
	return pf_eval_encode(&e, out);
}

/* A final per-move table, tagged with the main limit (a hybrid's table
   too: its evaluation is the main search's). */
static int
put_table(struct run *R, pf_movescores *t, pf_extbuf *out)
{
	t->limit_kind = (uint8_t)R->o->limit_kind;
	t->limit = R->o->limit;
	return pf_movescores_encode(t, out);
}

/* The tables of the shallower depths the search completed (-k). */
static int
put_hist(struct run *R, pf_uci_search *S, pf_extbuf *out)
{
	for (int i = 0; i + 1 < S->nhist; i++) {
		S->hist[i].limit_kind = (uint8_t)R->o->limit_kind;
		S->hist[i].limit = R->o->limit;
		S->hist[i].flags |= PF_MSF_INTERMEDIATE;
		if (pf_movescores_encode(&S->hist[i], out) == -1)
			return -1;
	}
	return 0;
}

/* What searched() and engine_eval() made of a search. */
enum {
	SR_NOMEM = -1,		/* out of memory */
	SR_DONE = 0,		/* the results are in s->add */
	SR_SECOND = 1,		/* the second search is to follow */
	SR_FAULT = 2		/* done, but the table is the engine's fault:
				   written without it, and not cached */
};

static int
engine_eval(struct run *R, const pf_uci_search *S_in, pf_extbuf *out)
{
	/* The tables are tagged here; the pool hands them out for that. */
	pf_uci_search *S = (pf_uci_search *)S_in;

	if (put_eval(R, S, out) == -1)
		return SR_NOMEM;
	if (R->o->multipv == 0)
		return SR_DONE;
	if (!S->have_table) {
		/* the engine's lines, or the limit */
		if (S->table_faults > 0) {
			R->badtable++;
			return SR_FAULT;
		}
		/* A depth limit ends no iteration early: every depth up to
		   it had all its lines, so missing ones are the engine's (it
		   ignores MultiPV, or its maximum is below the count). */
		if (R->o->limit_kind == PF_LIMIT_DEPTH) {
			R->fewlines++;
			return SR_FAULT;
		}
		R->notable++;
		return SR_DONE;
	}
	if (put_table(R, &S->table, out) == -1 || put_hist(R, S, out) == -1)
		return SR_NOMEM;
	return SR_DONE;
}

/*
 * The hybrid table (--tail-depth, --tail-nodes): the K best moves of the
 * main search, then every other move the tail search scored, in its
 * order, each with the depth it was scored at.  A tail move never ranks
 * above the K-th: a score above the K-th's (the shallower search saw the
 * move better than the deeper one saw the K-th) is lowered to it.
 */
static void
hybrid_table(const pf_movescores *top, const pf_movescores *tail,
    int nlegal, pf_movescores *out)
{
	const pf_movescore *kth = &top->m[top->n - 1];
	int32_t cap = pf_score_cp(kth->score_kind, kth->score);

	*out = *top;
	for (int i = 0; tail != NULL && i < tail->n &&
	    out->n < PF_MAX_MOVES; i++) {
		pf_movescore m = tail->m[i];
		int j;

		for (j = 0; j < top->n && top->m[j].move != m.move; j++)
			continue;
		if (j < top->n)
			continue;	/* one of the K best */
		if (pf_score_cp(m.score_kind, m.score) > cap) {
			m.score_kind = kth->score_kind;
			m.score = kth->score;
		}
		out->m[out->n++] = m;
	}
	out->flags = out->n == nlegal ? PF_MSF_COMPLETE : 0;
}

/* ---- the window ----------------------------------------------------------- */

static struct slot *
at(struct run *R, uint64_t seq)
{
	return &R->win[seq % R->cap];
}

static const char *
file_name(const struct run *R, int file)
{
	return pf_input_name(R->nfiles ? R->files[file] : "-");
}

/* A duplicate takes the finished result of its first occurrence. */
static void
copy_result(struct run *R, const struct slot *lead, struct slot *f)
{
	f->state = S_DONE;
	f->failed = lead->failed;
	f->evaluated = !lead->failed;
	if (lead->failed) {
		R->failed++;
		pf_warnx("%s: record %llu: not evaluated (duplicate of a failed "
		    "position)", file_name(R, f->file),
		    (unsigned long long)f->recno);
	} else if (pf_extbuf_append_raw(&f->add, lead->add.data,
	    lead->add.len) == -1) {
		pf_warnx("out of memory");
		R->fatal = 1;
	} else {
		R->hits++;
	}
}

static void
finish(struct run *R, uint64_t seq, int failed)
{
	struct slot *s = at(R, seq);

	s->state = S_DONE;
	s->failed = failed;
	s->evaluated = !failed;
	for (uint64_t q = seq + 1; q < R->tail && s->followers > 0; q++) {
		struct slot *f = at(R, q);

		if (f->state != S_FOLLOW || f->leader != seq)
			continue;
		s->followers--;
		copy_result(R, s, f);
	}
}

/*
 * --reproducible: every game is evaluated on its own, so that its records
 * depend on nothing but the game.  Its positions' cache keys hold its
 * game id (a position shared with another game is searched again in this
 * game, with this game's hash table), and the cache entries of a run are
 * held by its engine until the run is done: the cache never holds part of
 * a game, so a game is either taken from it whole (its searches would
 * have given the same) or searched whole from its first position.  A run
 * cut short (an interruption) leaves nothing in the cache.  Records of no
 * game (id 0) are unrelated positions, searched each on their own.
 */
static uint64_t
repro_key(uint64_t key, uint64_t game_id)
{
	uint64_t x = key ^ (game_id * 0x9E3779B97F4A7C15ULL);

	if (game_id == 0)
		return key;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	x ^= x >> 31;
	return x ? x : 1;
}

static int
hold_entry(struct worker *E, const struct slot *s)
{
	uint8_t *p;

	if ((p = pf_extbuf_add(&E->hold, 0, (uint32_t)(12 + s->add.len))) ==
	    NULL)
		return -1;
	pf_put64(p, s->key);
	pf_put32(p + 8, (uint32_t)s->add.len);
	memcpy(p + 12, s->add.data, s->add.len);
	return 0;
}

/* The run of E is done: its held entries go to the cache, as one group
   that a crash leaves whole or not at all. */
static void
release_held(struct run *R, struct worker *E)
{
	const uint8_t *p = E->hold.data, *end = p + E->hold.len;
	size_t n = 0;

	if (E->hold_faulted) {
		/* a result of the run is an engine fault: none is kept, so
		   that a rerun searches the run whole */
		E->hold_faulted = 0;
		pf_extbuf_reset(&E->hold);
		return;
	}
	while (p < end) {
		uint32_t len = pf_get32(p + PF_EXT_HEADER_SIZE + 8);

		if (n == R->nitems) {
			size_t cap = R->nitems ? 2 * R->nitems : 64;
			pf_evalcache_item *a = realloc(R->items,
			    cap * sizeof(*a));

			if (a == NULL) {
				pf_warnx("out of memory");
				R->fatal = 1;
				return;
			}
			R->items = a;
			R->nitems = cap;
		}
		R->items[n].key = pf_get64(p + PF_EXT_HEADER_SIZE);
		R->items[n].val = p + PF_EXT_HEADER_SIZE + 12;
		R->items[n++].len = len;
		p += PF_EXT_HEADER_SIZE + 12 + len;
	}
	if (pf_evalcache_put_group(R->cache, R->items, n) == -1)
		pf_warnx("%s", pf_evalcache_error(R->cache));
	pf_extbuf_reset(&E->hold);
}

/*
 * The position as an engine gets it (the FEN): the cache key's board.  The
 * clocks are in it: Stockfish scales its evaluation by the half-move clock
 * and scores a draw where it reaches 100, and its W/D/L (Stockfish 15.1's)
 * depends on the game's ply, so twins with other clocks or move numbers
 * are other searches.
 */
static uint64_t
engine_hash(const pf_board *b)
{
	uint8_t p[PF_PACKED_SIZE];

	pf_board_pack(b, p);
	return XXH64(p, PF_PACKED_SIZE, 0);
}
/*
 * --history: the moves that lead to s's position, from the records before
 * it in the input: the game's consecutive plies since its last capture or
 * pawn move (the record before is of the same game, one ply earlier, and
 * its move gives this position).  Anything else begins a history of the
 * position alone.
 */
static void
follow_game(struct run *R, struct slot *s)
{
	const pf_record *rec = &s->rec;
	pf_board after = R->hprev;
	pf_undo u;
	int on = 0;

	if (R->hprev_valid && rec->game_id != 0 &&
	    rec->game_id == R->hprev_game && rec->ply == R->hprev_ply + 1 &&
	    R->hprev_move != PF_MOVE_NONE && pf_is_legal(&after,
	    R->hprev_move)) {
		pf_make_move(&after, R->hprev_move, &u);
		on = after.key == s->board.key && after.rule50 ==
		    s->board.rule50;
	}
	if (on)
		pf_uci_history_push(&R->hcur, R->hprev_move, &s->board);
	else
		pf_uci_history_reset(&R->hcur, &s->board);
	*s->hist = R->hcur;
	R->hprev = s->board;
	R->hprev_move = rec->move;
	R->hprev_ply = rec->ply;
	R->hprev_game = rec->game_id;
	R->hprev_valid = !(rec->flags & PF_RF_LAST);
}

/*
 * Take a record into the window and settle it at once when no engine is
 * needed.  Records are admitted in input order, so the first occurrence of
 * a position is the one searched, in its own run: a later duplicate in the
 * window follows it (or copies it when it is done), one after it takes
 * the cache's copy, and no duplicate is ever sent, at any -j.
 */
static void
admit(struct run *R, const pf_record *rec)
{
	uint64_t seq = R->tail++, lead;
	struct slot *s = at(R, seq);
	char err[128];
	enum pf_status st;
	int r;

	memset(&s->rec, 0, sizeof(s->rec));
	pf_extbuf_reset(&s->in);
	pf_extbuf_reset(&s->add);
	s->rec = *rec;
	s->followers = s->attempts = s->failed = s->evaluated = 0;
	s->in_flight = 0;
	s->file = R->cur;
	s->recno = pf_reader_recno(R->r);
	s->leader = NONE;
	R->nread++;
	if (pf_extbuf_append_raw(&s->in, rec->ext, rec->ext_len) == -1) {
		pf_warnx("out of memory");
		R->fatal = 1;
	}
	s->rec.ext = NULL;
	s->rec.ext_len = 0;
	if (!R->has_prev || R->prev_last || rec->game_id == 0 ||
	    rec->game_id != R->prev_game)
		R->tail_run = seq;
	s->run = R->tail_run;
	R->tail_open = rec->game_id != 0 && !(rec->flags & PF_RF_LAST);
	R->prev_game = rec->game_id;
	R->prev_last = (rec->flags & PF_RF_LAST) != 0;
	R->has_prev = 1;
	if (R->o->skip_done && already_done(R, rec)) {
		s->state = S_DONE;
		R->skipped++;
		/* the game's history goes on through it */
		if (R->o->history) {
			if (pf_board_unpack(&s->board, rec->pos,
			    (rec->flags & PF_RF_CHESS960) != 0, err,
			    sizeof(err)) == 0)
				follow_game(R, s);
			else
				R->hprev_valid = 0;
		}
		return;
	}
	if (pf_board_unpack(&s->board, rec->pos,
	    (rec->flags & PF_RF_CHESS960) != 0, err, sizeof(err)) == -1) {
		pf_warnx("%s: record %llu: invalid position, not evaluated: %s",
		    file_name(R, s->file), (unsigned long long)s->recno, err);
		R->hprev_valid = 0;
		s->state = S_DONE;
		s->failed = 1;
		R->invalid++;
		R->status = PF_EXIT_DATA;
		return;
	}
	if (R->o->history)
		follow_game(R, s);
	if ((st = pf_board_status(&s->board)) != PF_ONGOING) {
		if (terminal_eval(R, s, st) == -1) {
			pf_warnx("out of memory");
			R->fatal = 1;
		}
		s->state = S_DONE;
		s->evaluated = 1;
		R->terminal++;
		return;
	}
	s->key = pf_evalcache_key(s->hist != NULL && s->hist->n > 0 ?
	    pf_uci_history_hash(s->hist) : engine_hash(&s->board),
	    (uint8_t)R->o->limit_kind, R->o->limit, multipv_code(R->o),
	    (uint8_t)R->o->keep_depths, R->setup);
	if (R->o->reproducible)
		s->key = repro_key(s->key, rec->game_id);
	if (R->caching) {
		r = pf_evalcache_get(R->cache, s->key, &s->add);
		if (r == 1) {
			s->state = S_DONE;
			s->evaluated = 1;
			R->hits++;
			return;
		}
		if (r == -1)
			pf_warnx("%s", pf_evalcache_error(R->cache));
		pf_extbuf_reset(&s->add);
		if ((lead = fl_get(&R->fl, s->key)) != NONE) {
			struct slot *l = at(R, lead);

			if (l->state == S_DONE) {
				copy_result(R, l, s);
				return;
			}
			s->state = S_FOLLOW;
			s->leader = lead;
			l->followers++;
			return;
		}
		fl_put(&R->fl, s->key, seq);
		s->in_flight = 1;
	}
	s->state = S_PENDING;
	R->npending++;
	if (seq < R->scan)
		R->scan = seq;
}

static int
open_next_input(struct run *R)
{
	const char *path;

	while (R->cur < (R->nfiles ? R->nfiles : 1)) {
		path = R->nfiles ? R->files[R->cur] : "-";
		if (strcmp(path, "-") == 0)
			R->in_fd = 0;
		else if ((R->in_fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			pf_warn("%s", path);
			R->status = PF_EXIT_DATA;
			R->cur++;
			continue;
		}
		if ((R->r = pf_reader_open_fd(R->in_fd, pf_input_name(path)))
		    == NULL) {
			pf_warn("%s", pf_input_name(path));
			if (R->in_fd != 0)
				close(R->in_fd);
			R->status = PF_EXIT_DATA;
			R->cur++;
			continue;
		}
		pf_reader_set_flush(R->r, R->w);
		{
			struct stat st;

			if (fstat(R->in_fd, &st) == 0 && !S_ISREG(st.st_mode))
				sig_in_fd = R->in_fd;
		}
		if (got_signal && sig_in_fd >= 0 && devnull_fd >= 0)
			(void)dup2(devnull_fd, sig_in_fd);
		return 1;
	}
	R->input_done = 1;
	return 0;
}

static void
close_input(struct run *R)
{
	struct stat st;

	if (R->r == NULL)
		return;
	sig_in_fd = -1;
	if (fstat(R->in_fd, &st) == 0 && S_ISREG(st.st_mode))
		R->done_bytes += (uint64_t)st.st_size;
	pf_reader_free(R->r);
	R->r = NULL;
	if (R->in_fd != 0)
		close(R->in_fd);
	R->in_fd = -1;
	R->cur++;
}

static void	write_done(struct run *);

/*
 * Read while the window has room.  Reading can block on a pipe for as long
 * as the producer likes, so once enough positions wait for an engine, or,
 * from a pipe, while a position waits or an engine works (its result must
 * be taken and passed on, and the next position sent), read only what is
 * already there; the loop's poll wakes when more arrives.
 */
static void
read_more(struct run *R)
{
	size_t want = (size_t)R->neng * 8 + 16;
	pf_record rec;
	int n = 0, r;

	while (!R->input_done && !R->fatal && !got_signal &&
	    R->tail - R->head < R->cap && n < 1024) {
		if (R->r == NULL && !open_next_input(R))
			break;
		/* Records the reader already holds are read without waiting;
		   the descriptor does not show them. */
		if ((R->npending >= want || sig_in_fd >= 0) &&
		    !pf_reader_buffered(R->r)) {
			struct pollfd pfd = { .fd = R->in_fd, .events = POLLIN };

			if (poll(&pfd, 1, 0) != 1) {
				if (R->npending > 0 ||
				    pf_pool_working(R->pool))
					break;
				/* Nothing to do but wait for input: first
				   pass on the finished records (the reader
				   flushes them before it blocks). */
				write_done(R);
				if (R->broken)
					break;
			}
		}
		r = pf_reader_next(R->r, &rec);
		if (r == 1) {
			admit(R, &rec);
			n++;
		} else if (r == 0) {
			close_input(R);
		} else if (!got_signal) {
			pf_warnx("%s", pf_reader_error(R->r));
			R->status = PF_EXIT_DATA;
		}
	}
}

/* Write the finished records at the head of the window. */
static void
write_done(struct run *R)
{
	pf_record out;

	while (R->head < R->tail && !R->broken) {
		struct slot *s = at(R, R->head);

		if (s->state != S_DONE)
			break;
		if (s->failed && R->o->drop_failed) {
			R->dropped++;
		} else {
			out = s->rec;
			if (s->failed)
				out.flags |= PF_RF_EVAL_FAILED;
			else if (s->evaluated)
				out.flags &= (uint16_t)~PF_RF_EVAL_FAILED;
			pf_extbuf_reset(&R->scratch);
			if (pf_extbuf_append_raw(&R->scratch, s->in.data,
			    s->in.len) == -1 ||
			    pf_extbuf_append_raw(&R->scratch, s->add.data,
			    s->add.len) == -1) {
				pf_warnx("out of memory");
				R->fatal = 1;
				return;
			}
			out.ext = R->scratch.data;
			out.ext_len = (uint32_t)R->scratch.len;
			if (pf_writer_put(R->w, &out) == -1) {
				if (!pf_writer_broken_pipe(R->w))
					pf_warnx("%s", pf_writer_error(R->w));
				R->broken = 1;
				return;
			}
			R->written++;
		}
		if (s->in_flight)
			fl_del(&R->fl, s->key);
		s->state = S_FREE;
		R->head++;
		if (R->scan < R->head)
			R->scan = R->head;
	}
}

/* ---- scheduling ------------------------------------------------------------ */

/*
 * A run (consecutive records of one game) is searched by one engine, in
 * input order, from its first position to its last: the engine owns the
 * run until the run has ended and nothing of it waits.  So each game sees
 * the same commands whatever -j is, and its results do not depend on it.
 */

/* 1 while run may still grow: the last run read, not at its game's end. */
static int
run_open(const struct run *R, uint64_t run)
{
	return run == R->tail_run && R->tail_open && !R->input_done;
}

static int
run_owned(const struct run *R, uint64_t run)
{
	for (int i = 0; i < R->neng; i++)
		if (R->wk[i].run == run)
			return 1;
	return 0;
}

/* The first waiting position of the run E owns, or NONE.  Only E works on
   it, in order, so that is its next position. */
static uint64_t
run_next(const struct run *R, const struct worker *E)
{
	uint64_t q = E->run;

	if (E->last != NONE && E->last > q)
		q = E->last;
	if (q < R->head)
		q = R->head;
	for (; q < R->tail && R->win[q % R->cap].run == E->run; q++)
		if (R->win[q % R->cap].state == S_PENDING)
			return q;
	return NONE;
}

/* The first waiting position of a run no engine owns, or NONE. */
static uint64_t
first_free(struct run *R)
{
	uint64_t q;

	while (R->scan < R->tail && at(R, R->scan)->state != S_PENDING)
		R->scan++;
	for (q = R->scan; q < R->tail; q++) {
		uint64_t run = at(R, q)->run;

		if (at(R, q)->state != S_PENDING)
			continue;
		if (!run_owned(R, run))
			return q;
		while (q + 1 < R->tail && at(R, q + 1)->run == run)
			q++;	/* skip the rest of an owned run */
	}
	return NONE;
}

/*
 * The next position for idle engine E: of its own run; or, when its run
 * has ended, the first waiting position of a run no engine owns.  A run
 * that may go on is waited for, unless the window is full and holds a
 * run nobody owns (an engine given up left it): its next record cannot be
 * read until that run is searched, and E may be the only engine left.
 */
static uint64_t
pick(struct run *R, struct worker *E)
{
	uint64_t q;

	if (E->run != NONE) {
		if ((q = run_next(R, E)) != NONE)
			return q;
		if (run_open(R, E->run) && (R->tail - R->head < R->cap ||
		    first_free(R) == NONE))
			return NONE;	/* its next record is not read yet */
		E->run = NONE;
		release_held(R, E);	/* its run is done, or given up */
	}
	return first_free(R);
}

/*
 * Whether to send "ucinewgame" before a search.  --newgame game: at the
 * start of every run of a game.  Records without a game (id 0) and
 * one-position games (ply 0 and the last of their game, as pgn2pos --epd
 * makes them) are unrelated positions: clearing the hash for each would
 * cost more than their search at low depth, unless asked for with
 * --newgame position, or --reproducible (each is a game of its own).
 */
static int
new_game(const struct run *R, const pf_record *rec, int new_run)
{
	switch (R->o->newgame) {
	case NG_NEVER:
		return 0;
	case NG_POSITION:
		return 1;
	default:
		if (rec->game_id == 0 ||
		    (rec->ply == 0 && (rec->flags & PF_RF_LAST)))
			return R->o->reproducible;
		return new_run;
	}
}

/* The search of phase ph (PH_*) of the position in slot s for E. */
static void
make_job(const struct run *R, const struct slot *s, const struct worker *E,
    int ph, pf_pool_job *job)
{
	pf_move moves[PF_MAX_MOVES];
	int n, j;

	memset(job, 0, sizeof(*job));
	job->board = s->board;
	job->attempts = s->attempts;
	job->user = (void *)s;
	if (s->hist != NULL && s->hist->n > 0)
		job->history = s->hist;
	if (ph == PH_MAIN) {
		job->limit_kind = (uint8_t)R->o->limit_kind;
		job->limit = R->o->limit;
		job->multipv = R->o->multipv == MULTIPV_ALL ? PF_MAX_MOVES :
		    (R->o->multipv ? R->o->multipv : 1);
		job->keep_depths = R->o->keep_depths;
		return;
	}
	job->limit_kind = (uint8_t)R->o->tail_kind;
	job->limit = R->o->tail_limit;
	/* Every legal move but the K best of the main search. */
	n = pf_gen_legal(&s->board, moves);
	for (int i = 0; i < n; i++) {
		for (j = 0; j < E->tab->n && E->tab->m[j].move != moves[i]; j++)
			continue;
		if (j == E->tab->n)
			job->searchmoves[job->nsearchmoves++] = moves[i];
	}
	job->multipv = job->nsearchmoves;
}

/* E's position goes back to wait for an engine: its engine was given
   up.  Whatever its first search found is dropped. */
static void
give_back(struct run *R, struct worker *E)
{
	uint64_t seq = E->slot;
	struct slot *s = at(R, seq);

	s->state = S_PENDING;
	R->npending++;
	if (seq < R->scan)
		R->scan = seq;
	E->run = NONE;
	E->slot = NONE;
	E->second = 0;
}

/* Send the second search of E's position, on the engine the first ran
   on, right after it: no "ucinewgame", so the hash is kept.  An engine
   restarted in between gets it once it is ready (dispatch). */
static void
start_second(struct run *R, int i)
{
	struct worker *E = &R->wk[i];
	pf_pool_job job;

	if (pf_pool_dead(R->pool, i)) {
		give_back(R, E);
		return;
	}
	if (!pf_pool_idle(R->pool, i) || got_signal)
		return;
	E->second = 0;
	E->phase = PH_TAIL;
	make_job(R, at(R, E->slot), E, E->phase, &job);
	(void)pf_pool_start(R->pool, i, &job);
}

static void
dispatch(struct run *R)
{
	pf_pool_job job;

	for (int i = 0; i < R->neng; i++) {
		struct worker *E = &R->wk[i];
		uint64_t q;

		if (E->second) {
			start_second(R, i);
			continue;
		}
		if (pf_pool_dead(R->pool, i)) {
			E->run = NONE;	/* another engine takes the run over */
			release_held(R, E);
		}
		if (!pf_pool_idle(R->pool, i) || got_signal)
			continue;
		if ((q = pick(R, E)) == NONE)
			continue;
		struct slot *s = at(R, q);
		int new_run = E->run != s->run;

		s->state = S_RUNNING;
		R->npending--;
		E->run = s->run;
		E->slot = q;
		E->last = q;
		E->phase = PH_MAIN;
		make_job(R, s, E, E->phase, &job);
		job.newgame = new_game(R, &s->rec, new_run);
		(void)pf_pool_start(R->pool, i, &job);
	}
}

/* A message of the pool: an engine fault names the record it was on,
   first, as every message about a record does. */
static void
pool_warn(void *ctx, void *user, const char *msg)
{
	const struct run *R = ctx;
	const struct slot *s = user;

	if (s != NULL)
		pf_warnx("%s: record %llu: %s", file_name(R, s->file),
		    (unsigned long long)s->recno, msg);
	else
		pf_warnx("%s", msg);
}

/*
 * A finished search of E's position s: SR_DONE or SR_FAULT when s->add
 * holds the position's results, SR_SECOND when its second search is to
 * follow, SR_NOMEM.
 */
static int
searched(struct run *R, struct worker *E, const pf_uci_search *S_in,
    struct slot *s)
{
	/* The tables are tagged here; the pool hands them out for that. */
	pf_uci_search *S = (pf_uci_search *)S_in;
	pf_move moves[PF_MAX_MOVES];
	int nlegal, r;

	if (R->o->tail_kind == PF_LIMIT_NONE)
		return engine_eval(R, S, &s->add);
	nlegal = pf_gen_legal(&s->board, moves);
	if (E->phase == PH_MAIN) {
		/* No table (a nodes limit too small), or the K best are all
		   the moves: nothing for a tail search to do. */
		if (!S->have_table || S->table.n >= nlegal)
			return engine_eval(R, S, &s->add);
		pf_extbuf_reset(&E->pre);
		pf_extbuf_reset(&E->post);
		if (put_eval(R, S, &E->pre) == -1 ||
		    put_hist(R, S, &E->post) == -1)
			return SR_NOMEM;
		*E->tab = S->table;
		return SR_SECOND;
	}
	/* The tail search: it may have no table when a nodes limit ended
	   it too early; the K best are written then, not complete.  A
	   depth limit ends no iteration early: missing lines are the
	   engine's (it ignores searchmoves, or MultiPV). */
	hybrid_table(E->tab, S->have_table ? &S->table : NULL, nlegal,
	    R->mix);
	r = SR_DONE;
	if (!(R->mix->flags & PF_MSF_COMPLETE)) {
		if (S->table_faults > 0) {
			R->badtable++;
			r = SR_FAULT;
		} else if (R->o->tail_kind == PF_LIMIT_DEPTH) {
			R->fewlines++;
			r = SR_FAULT;
		} else
			R->notable++;
	}
	if (pf_extbuf_append_raw(&s->add, E->pre.data, E->pre.len) == -1 ||
	    put_table(R, R->mix, &s->add) == -1 ||
	    pf_extbuf_append_raw(&s->add, E->post.data, E->post.len) == -1)
		return SR_NOMEM;
	return r;
}

/* The finished searches of the pool. */
static void
take_events(struct run *R)
{
	pf_pool_event ev;
	int r;

	while (pf_pool_next_event(R->pool, &ev)) {
		struct worker *E = &R->wk[ev.engine];
		uint64_t seq = E->slot;
		struct slot *s = at(R, seq);

		E->slot = NONE;
		s->attempts = ev.attempts;
		switch (ev.type) {
		case PF_POOL_DONE:
			if ((r = searched(R, E, ev.search, s)) == SR_NOMEM) {
				pf_warnx("out of memory");
				R->fatal = 1;
				return;
			}
			if (r == SR_SECOND) {
				E->slot = seq;
				E->second = 1;
				start_second(R, ev.engine);
				break;
			}
			R->searched++;
			if (r == SR_FAULT) {
				/* not cached: a rerun searches it again (and
				   with --reproducible its whole run) */
				E->hold_faulted = 1;
			} else if (R->caching && R->o->reproducible) {
				if (hold_entry(E, s) == -1) {
					pf_warnx("out of memory");
					R->fatal = 1;
					return;
				}
			} else if (R->caching && pf_evalcache_put(R->cache,
			    s->key, s->add.data, s->add.len) == -1)
				pf_warnx("%s", pf_evalcache_error(R->cache));
			finish(R, seq, 0);
			break;
		case PF_POOL_FAILED:
			pf_warnx("%s: record %llu: evaluation failed after %d "
			    "attempts: %s", file_name(R, s->file),
			    (unsigned long long)s->recno, ev.attempts, ev.why);
			R->failed++;
			R->status = PF_EXIT_DATA;
			if (s->in_flight) {
				/* a later duplicate is searched anew */
				fl_del(&R->fl, s->key);
				s->in_flight = 0;
			}
			finish(R, seq, 1);
			break;
		default:	/* PF_POOL_RETURNED: its engine was given up */
			E->slot = seq;
			give_back(R, E);
			break;
		}
	}
}

/* ---- progress --------------------------------------------------------------- */

static void
progress(struct run *R, int final)
{
	int64_t now = now_ms();
	double secs = (double)(now - R->t0) / 1000.0, rate;
	uint64_t done = R->written + R->dropped;
	int busy;
	char eta[64] = "";

	if (!final && (!R->o->progress || now - R->last_progress < 1000))
		return;
	R->last_progress = now;
	busy = R->pool ? pf_pool_searching(R->pool) : 0;
	if (R->pool)
		R->restarts = pf_pool_restarts(R->pool);
	rate = secs > 0 ? (double)R->searched / secs : 0;
	if (final) {
		uint64_t looked = R->searched + R->hits;
		uint64_t finished = looked + R->terminal + R->skipped +
		    R->failed + R->invalid;
		char dropped[128] = "";
		int n = 0;

		if (R->dropped > 0)
			n = snprintf(dropped, sizeof(dropped), " (%llu failed "
			    "ones dropped)", (unsigned long long)R->dropped);
		/* stopped early: finished records that waited for the ones
		   before them were not written, but are counted below */
		if (finished > done)
			snprintf(dropped + n, sizeof(dropped) - (size_t)n,
			    " written, %llu more finished but not written",
			    (unsigned long long)(finished - done));
		pf_warnx("%llu records%s: %llu searched, %llu cache hits "
		    "(%.1f%%), %llu terminal, %llu skipped, %llu failed, "
		    "%llu restarts; %.1f s, %.1f positions/s",
		    (unsigned long long)R->written, dropped,
		    (unsigned long long)R->searched,
		    (unsigned long long)R->hits,
		    looked ? 100.0 * (double)R->hits / (double)looked : 0.0,
		    (unsigned long long)R->terminal,
		    (unsigned long long)R->skipped,
		    (unsigned long long)(R->failed + R->invalid),
		    (unsigned long long)R->restarts, secs, rate);
		return;
	}
	if (R->total_bytes > 0 && R->r != NULL) {
		/* The records written of all there are: those read are the
		   share of the input's bytes read so far (the file's own,
		   compressed for a .zst, as its size counts them); the
		   records read ahead, in the window, are not done. */
		uint64_t at_bytes = R->done_bytes + pf_reader_position(R->r);
		double frac = (double)at_bytes / (double)R->total_bytes *
		    (R->nread > 0 ? (double)done / (double)R->nread : 0);
		if (frac > 0.001 && frac < 1.0) {
			double left = secs * (1.0 - frac) / frac;
			snprintf(eta, sizeof(eta), ", ETA %dm%02ds",
			    (int)(left / 60), (int)left % 60);
		}
	}
	fprintf(stderr, "%s%s: %llu records, %.1f positions/s, engines %d/%d "
	    "busy, %llu cache hits, %llu restarts%s%s",
	    R->progress_tty ? "\r" : "", pf_progname(),
	    (unsigned long long)done, rate, busy, R->neng,
	    (unsigned long long)R->hits,
	    (unsigned long long)R->restarts, eta,
	    R->progress_tty ? "\033[K" : "\n");
	fflush(stderr);
}

/* ---- the loop ---------------------------------------------------------------- */

static void
loop(struct run *R)
{
	struct pollfd in;
	const char *fatal;

	for (;;) {
		if (got_signal || R->fatal || R->broken)
			break;
		read_more(R);
		dispatch(R);
		write_done(R);
		if (R->fatal || R->broken)
			break;
		if (R->input_done && R->head == R->tail)
			break;
		if (pf_pool_live(R->pool) == 0) {
			pf_warnx("no engine left running");
			R->fatal = 1;
			break;
		}
		int wait = pf_writer_pending(R->w) > 0 ? 50 : 1000, nin = 0;
		if (!R->input_done && R->tail - R->head < R->cap &&
		    R->r != NULL) {
			in.fd = R->in_fd;	/* wake when input arrives */
			in.events = POLLIN;
			nin = 1;
		}
		if (pf_pool_poll(R->pool, &in, nin, wait) == -1) {
			pf_warn("poll");
			R->fatal = 1;
			break;
		}
		if ((fatal = pf_pool_fatal(R->pool)) != NULL) {
			pf_warnx("%s", fatal);
			R->fatal = 1;
			break;
		}
		take_events(R);
		if (pf_writer_tick(R->w) == -1) {
			if (!pf_writer_broken_pipe(R->w))
				pf_warnx("%s", pf_writer_error(R->w));
			R->broken = 1;
		}
		progress(R, 0);
	}
}

/* Does option name=value (v at its '=') name an engine's network? */
static int
net_option(const char *name, const char *v)
{
	static const char *const nets[] = { "evalfile", "weights", "nnue" };
	char low[64];
	size_t n = (size_t)(v - name), i;

	if (n >= sizeof(low))
		return 0;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[n] = '\0';
	for (i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if (strstr(low, nets[i]) != NULL)
			return 1;
	return 0;
}

/*
 * The engine setup in the cache key.  A tail's kind and limit are part of
 * it (a hybrid result is another search than the plain one of the same
 * limit and -m); without a tail the key is what it always was, so
 * existing cache files still hit.  Results of a nodes or movetime limit
 * are keyed apart from those cached before uci-eval left out the lines
 * printed after the limit (pf_uci_search_limit), which made tables and
 * evaluations one depth too deep: those are not served.  -m 1 is keyed
 * apart from no -m: the same MultiPV, but with a table.
 */
static uint64_t
setup_hash(const struct opts *o)
{
	XXH64_state_t st;
	uint8_t tail[16];
	uint64_t digest;

	XXH64_reset(&st, 0);
	XXH64_update(&st, o->pool.engine, strlen(o->pool.engine) + 1);
	/* and its bytes: an upgrade at the same path is another engine */
	if (pf_uci_engine_digest(o->pool.engine, &digest) == 0) {
		pf_put64(tail, digest);
		XXH64_update(&st, tail, 8);
	}
	for (int i = 0; i < o->pool.noptions; i++) {
		const char *v = strchr(o->pool.options[i], '=');
		struct stat sb;

		XXH64_update(&st, o->pool.options[i],
		    strlen(o->pool.options[i]) + 1);
		/* a network the engine reads (EvalFile, EvalFileSmall, lc0's
		   WeightsFile): its bytes too, so that a network changed at
		   the same path is another engine (not a file it writes, as
		   Stockfish's Debug Log File) */
		if (v != NULL && net_option(o->pool.options[i], v) &&
		    stat(v + 1, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    pf_uci_file_digest(v + 1, &digest) == 0) {
			pf_put64(tail, digest);
			XXH64_update(&st, "\0file", 6);
			XXH64_update(&st, tail, 8);
		}
	}
	if (o->limit_kind != PF_LIMIT_DEPTH || o->tail_kind == PF_LIMIT_NODES)
		XXH64_update(&st, "\0no lines after the limit", 25);
	/* -m 1 and no -m have the same multipv code in the key, but only
	   -m 1 writes a per-move table: key it apart (no -m keeps its key) */
	if (o->multipv == 1 && o->tail_kind == PF_LIMIT_NONE)
		XXH64_update(&st, "\0a table of one move", 20);
	if (o->tail_kind != PF_LIMIT_NONE) {
		memcpy(tail, "\0tail\0\0", 8);
		tail[6] = (uint8_t)o->tail_kind;
		pf_put64(tail + 8, o->tail_limit);
		XXH64_update(&st, tail, sizeof(tail));
	}
	return XXH64_digest(&st);
}

static void
stop_engines(struct run *R)
{
	if (R->pool)
		R->restarts = pf_pool_restarts(R->pool);
	pf_pool_free(R->pool);
	R->pool = NULL;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	struct sigaction sa;
	int compress = 0, fd = -1, r, incomplete = 0, nomem;

	pf_prog_init(argv);
	memset(&R, 0, sizeof(R));
	if ((r = parse_opts(argc, argv, &o)) >= 0) {
		free((void *)o.pool.options);
		return r;
	}
	R.o = &o;
	R.files = (const char **)argv + optind;
	R.nfiles = argc - optind;
	R.in_fd = -1;
	R.status = PF_EXIT_OK;
	pf_add_input(o.cache_file);	/* read, and appended to */
	if ((fd = pf_open_output(o.out.output, o.out.force, &compress)) == -1) {
		pf_warn_output(o.out.output);
		free((void *)o.pool.options);
		return PF_EXIT_DATA;
	}
	pf_writer_opts wo = pf_default_writer_opts(compress || o.out.zstd);
	if ((R.w = pf_writer_open_fd(fd, o.out.output ? o.out.output :
	    "stdout", &wo)) == NULL) {
		pf_warn("writer");
		R.status = PF_EXIT_DATA;
		goto out;
	}
	for (int i = 0; i < R.nfiles; i++) {
		struct stat st;
		if (strcmp(R.files[i], "-") != 0 &&
		    stat(R.files[i], &st) == 0 && S_ISREG(st.st_mode))
			R.total_bytes += (uint64_t)st.st_size;
	}
	R.cap = (size_t)o.window;
	R.neng = o.pool.jobs;
	R.win = calloc(R.cap, sizeof(*R.win));
	if (o.history && R.win != NULL) {
		if ((R.hists = calloc(R.cap, sizeof(*R.hists))) == NULL) {
			free(R.win);
			R.win = NULL;
		}
		for (size_t i = 0; R.hists != NULL && i < R.cap; i++)
			R.win[i].hist = &R.hists[i];
	}
	R.wk = calloc((size_t)R.neng, sizeof(*R.wk));
	R.mix = malloc(sizeof(*R.mix));
	nomem = R.win == NULL || R.wk == NULL || R.mix == NULL;
	for (int i = 0; !nomem && i < R.neng; i++)
		nomem = (R.wk[i].tab = malloc(sizeof(*R.wk[i].tab))) == NULL;
	R.caching = o.cache_mem > 0 || o.cache_file != NULL;
	R.setup = setup_hash(&o);
	if (nomem || fl_init(&R.fl, R.cap) == -1 ||
	    (R.cache = pf_evalcache_new(o.cache_mem)) == NULL) {
		pf_warn("malloc");
		R.status = PF_EXIT_DATA;
		goto out;
	}
	if (o.cache_file) {
		if (pf_evalcache_open(R.cache, o.cache_file) == -1) {
			pf_warnx("--cache %s", pf_evalcache_error(R.cache));
			R.status = PF_EXIT_DATA;
			goto out;
		}
		unsigned long long mid = pf_evalcache_skipped(R.cache),
		    tail = pf_evalcache_dropped(R.cache) - mid;

		if (mid > 0)
			pf_warnx("%s: skipped %llu damaged bytes in the "
			    "middle (they stay in the file; the entries "
			    "around them are kept)", o.cache_file, mid);
		if (tail > 0)
			pf_warnx("%s: cut off a torn tail of %llu bytes",
			    o.cache_file, tail);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll must wake */
	sigemptyset(&sa.sa_mask);
	devnull_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	R.progress_tty = isatty(2);
	if (R.progress_tty)
		o.progress = 1;
	R.t0 = now_ms();
	R.last_progress = R.t0 - 1000;	/* the first report comes at once */
	for (int i = 0; i < R.neng; i++)
		R.wk[i].slot = R.wk[i].last = R.wk[i].run = NONE;
	o.pool.stop = &got_signal;
	o.pool.warn = pool_warn;
	o.pool.ctx = &R;
	if ((R.pool = pf_pool_new(&o.pool)) == NULL) {
		pf_warn("malloc");
		R.status = PF_EXIT_DATA;
		goto out;
	}
	loop(&R);
	/* Every record done: the last runs are complete.  (Interrupted, a
	   run in progress leaves nothing in the cache.) */
	if (R.input_done && R.head == R.tail && !got_signal && !R.fatal)
		for (int k = 0; k < R.neng; k++)
			release_held(&R, &R.wk[k]);
	stop_engines(&R);
	if (o.progress && R.progress_tty)
		fputs("\r\033[K", stderr);
	write_done(&R);
	if (R.broken && pf_writer_broken_pipe(R.w)) {
		R.status = R.fatal ? PF_EXIT_DATA : R.status;
		goto out;
	}
	if (got_signal || R.fatal) {
		/* read, not written: searching, waiting for an engine, or
		   finished and waiting for the records before them */
		uint64_t unfinished = R.tail - R.head;
		if (got_signal)
			pf_warnx("interrupted by signal %d: %llu records read "
			    "but not written", (int)got_signal,
			    (unsigned long long)unfinished);
		else if (unfinished || !R.input_done)
			pf_warnx("stopped: %llu records read but not written",
			    (unsigned long long)unfinished);
		incomplete = got_signal || unfinished || !R.input_done;
		R.status = PF_EXIT_DATA;
	}
	if (incomplete) {
		/* The finished records are kept, but the stream gets no end
		   block, so that every reader sees it is incomplete. */
		if (!R.broken && pf_writer_flush(R.w) == -1 &&
		    !pf_writer_broken_pipe(R.w)) {
			pf_warnx("%s", pf_writer_error(R.w));
			R.broken = 1;
		}
	} else if (!R.broken && pf_writer_close(R.w) == -1) {
		if (!pf_writer_broken_pipe(R.w)) {
			pf_warnx("%s", pf_writer_error(R.w));
			R.status = PF_EXIT_DATA;
		}
	} else if (R.broken && !pf_writer_broken_pipe(R.w)) {
		R.status = PF_EXIT_DATA;
	}
	if (R.notable)
		pf_warnx("%llu positions without a complete per-move table "
		    "(the limit ended the search too early)",
		    (unsigned long long)R.notable);
	if (R.badtable) {
		/* an engine fault */
		pf_warnx("%llu positions without a complete per-move table: "
		    "the engine named a move twice, or an illegal one, in "
		    "its MultiPV lines", (unsigned long long)R.badtable);
		R.status = PF_EXIT_DATA;
	}
	if (R.fewlines) {
		/* an engine fault too */
		pf_warnx("%llu positions without a complete per-move table: "
		    "the engine reported fewer MultiPV lines than asked at the "
		    "depth limit", (unsigned long long)R.fewlines);
		R.status = PF_EXIT_DATA;
	}
	progress(&R, 1);
out:
	stop_engines(&R);
	if (R.r)
		close_input(&R);
	r = R.w != NULL && R.broken && !pf_writer_broken_pipe(R.w);
	pf_writer_free(R.w);
	/* An output file left empty by a failed write is removed (it would
	   read as a complete empty stream). */
	if (pf_close_output(o.out.output, fd, r) == -1 &&
	    R.status == PF_EXIT_OK) {
		pf_warn("%s", o.out.output);
		R.status = PF_EXIT_DATA;
	}
	if (R.win)
		for (size_t i = 0; i < R.cap; i++) {
			pf_extbuf_free(&R.win[i].in);
			pf_extbuf_free(&R.win[i].add);
		}
	pf_extbuf_free(&R.scratch);
	for (int i = 0; R.wk != NULL && i < R.neng; i++) {
		pf_extbuf_free(&R.wk[i].pre);
		pf_extbuf_free(&R.wk[i].post);
		pf_extbuf_free(&R.wk[i].hold);
		free(R.wk[i].tab);
	}
	free(R.mix);
	free(R.items);
	free(R.win);
	free(R.hists);
	free(R.wk);
	free(R.fl.key);
	free(R.fl.seq);
	pf_evalcache_free(R.cache);
	free((void *)o.pool.options);
	if (devnull_fd >= 0)
		close(devnull_fd);
	return R.status;
}
