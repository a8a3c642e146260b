/*
 * repair-mark - find the positions whose evaluation a quick look gets
 * wrong, and repair their values (METHODS.md sections 4 and 5).
 *
 *   --mode candidates (seed 001): Q of a shallow and of a deep evaluation
 *     on each record; a repair candidate when they differ by at least
 *     --threshold.  A pure filter.
 *   --mode panda (seed 000): whole games in ply order, each position with
 *     an evaluation; every game is walked from its last position back to
 *     its first, each position A of each triple (A, B, C) classed as
 *     definitely, maybe or not mis-evaluated, and a mis-evaluated A
 *     re-scored by a search of every move but the one played, so that a
 *     repaired value feeds the triple before it.  Games are independent:
 *     they are spread over a pool of engines (lib/pool.c), each game's
 *     searches on one engine in order, so the output does not depend on -j.
 *
 * Both write a repair extension (posflow(5)) on every record they judge
 * and pass every other extension through.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "posflow.h"
#include "evalsel.h"
#include "filter.h"
#include "pool.h"
#include "repair.h"
#include "target.h"
#include "uci.h"

#define MAX_GAME	4096	/* records of one game held at most */

enum { MODE_CANDIDATES, MODE_PANDA };
enum { Q_LOGISTIC, Q_WDL };

struct opts {
	int mode;
	int have_shallow, have_deep, have_eval;
	int have_q, have_alpha, have_threshold, have_seed;
	pf_evalsel shallow, deep, eval;
	int q;
	double alpha, threshold;
	const char *book;
	uint64_t seed;
	pf_pool_opts pool;	/* -e, -j, -O, --retries, --timeout */
	int limit_kind;		/* 0: the evaluation's own */
	uint64_t limit;
	pf_filter_opts out;	/* -o, -f, -z */
};

/* One game of panda mode: its records, values and where its walk is. */
struct game {
	int n;
	pf_record *rec;		/* ext pointers into bytes */
	uint8_t *bytes;
	size_t nbytes, capbytes;
	size_t *off;
	uint64_t *recno;
	int32_t *value, *orig;	/* cp, side to move's view */
	uint8_t *cls, *flags;
	int cap;
	int skip;		/* left unrepaired (reported) */
	int i;			/* the next A of the walk, from n-3 down */
	int searching;		/* a re-score of record i is under way */
	int engine;		/* the engine its searches go to, or -1 */
	int searches;
	int done;
	const char *name;	/* its input, for messages */
};

struct run {
	struct opts *o;
	pf_filter f;
	pf_extbuf eb;
	FILE *book;
	/* panda */
	pf_pool *pool;
	struct game *q;		/* games in input order, a ring */
	int qcap, qhead, qn;
	struct game *cur;	/* the game being read, or NULL */
	int dead;		/* no engine left: the rest passes through */
	/* counters */
	uint64_t records, judged, candidates, missing, games, unrepaired,
	    cls[4], rescored, search_ms, eval_ms, failed, single;
};

static volatile sig_atomic_t got_signal;

static const char synopsis[] =
    "usage: repair-mark [-fhVz] [--mode candidates | panda] "
    "[--shallow sel] [--deep sel]\n"
    "                   [--q logistic | wdl] [--alpha cp] "
    "[--threshold q] [--book file]\n"
    "                   [--eval sel] [--seed n] [-d depth | -n nodes] "
    "[-e engine] [-j jobs]\n"
    "                   [-O name=value] [--retries n] [--timeout ms] "
    "[-o file] [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

static void
on_signal(int sig)
{
	if (got_signal) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	got_signal = sig;
}

/* ---- options ------------------------------------------------------------ */

static int
parse_sel(const char *opt, const char *s, pf_evalsel *sel)
{
	char err[256];

	if (pf_evalsel_parse(s, sel, err, sizeof(err)) == -1) {
		pf_warnx("%s %s: %s", opt, s, err);
		return -1;
	}
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_MODE = 256, O_SHALLOW, O_DEEP, O_Q, O_ALPHA, O_THRESHOLD,
	    O_BOOK, O_EVAL, O_SEED };
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, O_MODE },
		{ "shallow", required_argument, NULL, O_SHALLOW },
		{ "deep", required_argument, NULL, O_DEEP },
		{ "q", required_argument, NULL, O_Q },
		{ "alpha", required_argument, NULL, O_ALPHA },
		{ "threshold", required_argument, NULL, O_THRESHOLD },
		{ "book", required_argument, NULL, O_BOOK },
		{ "eval", required_argument, NULL, O_EVAL },
		{ "seed", required_argument, NULL, O_SEED },
		{ "depth", required_argument, NULL, 'd' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "engine", required_argument, NULL, 'e' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "option", required_argument, NULL, 'O' },
		{ "retries", required_argument, NULL, PF_POOL_OPT_RETRIES },
		{ "timeout", required_argument, NULL, PF_POOL_OPT_TIMEOUT },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr, *what;
	char err[512];
	int ch, r, engine_use = 0;

	memset(o, 0, sizeof(*o));
	pf_pool_opts_init(&o->pool);
	o->alpha = PF_LOGISTIC_ALPHA;
	o->threshold = 0.55;
	while ((ch = pf_filter_getopt(argc, argv,
	    "d:n:e:j:O:" PF_FILTER_SHORTOPTS, longopts, NULL, &o->out,
	    synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		errstr = NULL;
		what = NULL;
		if ((r = pf_pool_opts_take(&o->pool, ch, optarg, err,
		    sizeof(err))) == -2) {
			pf_warn("malloc");
			return 1;
		} else if (r == -1) {
			pf_warnx("%s", err);
			goto bad;
		} else if (r == 1) {
			engine_use = 1;
			continue;
		}
		switch (ch) {
		case O_MODE:
			if (strcmp(optarg, "candidates") == 0)
				o->mode = MODE_CANDIDATES;
			else if (strcmp(optarg, "panda") == 0)
				o->mode = MODE_PANDA;
			else
				errstr = "expected candidates or panda";
			what = "--mode";
			break;
		case O_SHALLOW:
			if (parse_sel("--shallow", optarg, &o->shallow) == -1)
				goto bad;
			o->have_shallow = 1;
			break;
		case O_DEEP:
			if (parse_sel("--deep", optarg, &o->deep) == -1)
				goto bad;
			o->have_deep = 1;
			break;
		case O_EVAL:
			if (parse_sel("--eval", optarg, &o->eval) == -1)
				goto bad;
			o->have_eval = 1;
			break;
		case O_Q:
			if (strcmp(optarg, "logistic") == 0)
				o->q = Q_LOGISTIC;
			else if (strcmp(optarg, "wdl") == 0)
				o->q = Q_WDL;
			else
				errstr = "expected logistic or wdl";
			what = "--q";
			o->have_q = 1;
			break;
		case O_ALPHA:
			o->alpha = pf_strtod(optarg, 1e-3, 1e6, &errstr);
			what = "--alpha";
			o->have_alpha = 1;
			break;
		case O_THRESHOLD:
			o->threshold = pf_strtod(optarg, 0, 2, &errstr);
			what = "--threshold";
			o->have_threshold = 1;
			break;
		case O_BOOK:
			o->book = optarg;
			break;
		case O_SEED:
			o->seed = (uint64_t)pf_strtonum(optarg, 0, LLONG_MAX,
			    &errstr);
			what = "--seed";
			o->have_seed = 1;
			break;
		case 'd':
		case 'n':
			if (o->limit_kind) {
				pf_warnx("give only one of --depth, --nodes");
				goto bad;
			}
			o->limit_kind = ch == 'd' ? PF_LIMIT_DEPTH :
			    PF_LIMIT_NODES;
			o->limit = (uint64_t)pf_strtonum(optarg, 1,
			    ch == 'd' ? 255 : (long long)1e15, &errstr);
			what = ch == 'd' ? "-d" : "-n";
			engine_use = 1;
			break;
		default:
			goto bad;
		}
		if (errstr != NULL) {
			pf_warnx("%s %s: %s", what, optarg, errstr);
			goto bad;
		}
	}
	/* Options of the other mode are refused, not ignored, also when
	   given at their defaults. */
	if (o->mode == MODE_CANDIDATES && (engine_use || o->have_eval ||
	    o->have_seed)) {
		pf_warnx("--eval, --seed and the engine options are for "
		    "--mode panda");
		goto bad;
	}
	if (o->mode == MODE_PANDA && (o->have_shallow || o->have_deep ||
	    o->book || o->have_q || o->have_alpha || o->have_threshold)) {
		pf_warnx("--shallow, --deep, --q, --alpha, --threshold and "
		    "--book are for --mode candidates");
		goto bad;
	}
	/* A PGN's %eval has no search limit to re-score at. */
	if (o->mode == MODE_PANDA && o->have_eval &&
	    o->eval.kind == PF_EVALSEL_PGN && !o->limit_kind) {
		pf_warnx("--eval pgn: a PGN's evaluations have no search "
		    "limit: give -d or -n");
		goto bad;
	}
	if (!o->have_shallow)
		o->shallow.kind = PF_EVALSEL_SHALLOWEST;
	if (!o->have_deep)
		o->deep.kind = PF_EVALSEL_DEEPEST;
	if (!o->have_eval)
		o->eval.kind = PF_EVALSEL_DEEPEST;
	o->pool.engine = pf_uci_find_engine(o->pool.engine);
	return -1;
bad:
	usage();
	return 2;
}

/* ---- candidates ------------------------------------------------------- */

/* Q of evaluation e (decoded, so of a known score kind); *ok 1, or 0
   when --q wdl finds no W/D/L. */
static double
q_of(const struct opts *o, const pf_eval *e, int *ok)
{
	*ok = 1;
	if (o->q == Q_WDL) {
		if (!(e->flags & PF_EVF_WDL)) {
			*ok = 0;
			return 0;
		}
		return ((double)e->wdl[0] - (double)e->wdl[2]) / 1000.0;
	}
	return pf_value_logistic(pf_score_cp(e->score_kind, e->score),
	    o->alpha);
}

/* The record with its old repair extension replaced by r. */
static void
put_with(struct run *R, const pf_record *rec, const pf_repair *r)
{
	pf_record out = *rec;

	pf_extbuf_reset(&R->eb);
	if (pf_extbuf_copy_except(&R->eb, rec, PF_EXT_REPAIR) == -1 ||
	    pf_repair_encode(r, &R->eb) == -1) {
		pf_warnx("out of memory");
		R->f.status = PF_EXIT_DATA;
		R->f.stop = 1;
		return;
	}
	out.ext = R->eb.data;
	out.ext_len = (uint32_t)R->eb.len;
	pf_filter_put(&R->f, &out);
}

static void
book_line(struct run *R, const pf_record *rec)
{
	pf_board b;
	char fen[PF_FEN_MAX], *sp;
	int k = 0;

	if (pf_board_unpack(&b, rec->pos, (rec->flags & PF_RF_CHESS960) != 0,
	    NULL, 0) == -1)
		return;
	pf_board_to_fen(&b, fen);
	/* EPD: the four position fields of the FEN. */
	for (sp = fen; *sp; sp++)
		if (*sp == ' ' && ++k == 4) {
			*sp = '\0';
			break;
		}
	fprintf(R->book, "%s c0 \"game %016" PRIx64 " ply %u\";\n", fen,
	    rec->game_id, (unsigned)rec->ply);
}

static void
candidate(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;
	const struct opts *o = R->o;
	pf_eval es, ed;
	pf_ext xs, xd;
	pf_repair r;
	int have_s, have_d, ok_s, ok_d;
	double qs, qd;

	R->records++;
	have_s = pf_evalsel_find_ext(&o->shallow, rec, &es, &xs);
	have_d = pf_evalsel_find_ext(&o->deep, rec, &ed, &xd);
	if (have_s == -1 || have_d == -1) {
		pf_filter_error(f, recno, "malformed evaluation; passed "
		    "through");
		pf_filter_put(f, rec);
		return;
	}
	if (have_s != 1 || have_d != 1) {
		if (R->missing++ < 10)
			pf_filter_error(f, recno, "no %s evaluation%s (make "
			    "them with uci-eval, e.g. uci-eval -d 1 | "
			    "uci-eval -d 12); passed through", have_s != 1 ?
			    "shallow" : "deep", R->missing == 10 ?
			    "; further such records are only counted" : "");
		f->status = PF_EXIT_DATA;
		pf_filter_put(f, rec);
		return;
	}
	qs = q_of(o, &es, &ok_s);
	qd = q_of(o, &ed, &ok_d);
	if (!ok_s || !ok_d) {
		if (R->missing++ < 10)
			pf_filter_error(f, recno, "--q wdl: the %s evaluation "
			    "has no W/D/L; passed through", !ok_s ? "shallow" :
			    "deep");
		f->status = PF_EXIT_DATA;
		pf_filter_put(f, rec);
		return;
	}
	/* one evaluation, compared with itself: never a candidate */
	if (xs.data == xd.data)
		R->single++;
	memset(&r, 0, sizeof(r));
	r.mode = PF_REPAIR_CANDIDATES;
	r.flags = o->q == Q_WDL ? PF_REPAIRF_WDL : 0;
	r.q_shallow = (float)qs;
	r.q_deep = (float)qd;
	r.cls = fabs(qs - qd) >= o->threshold;
	R->judged++;
	if (r.cls) {
		R->candidates++;
		if (R->book)
			book_line(R, rec);
	}
	put_with(R, rec, &r);
}

/* ---- panda: games --------------------------------------------------------- */

static void
game_reset(struct game *g)
{
	g->n = 0;
	g->nbytes = 0;
	g->skip = g->searching = g->searches = g->done = 0;
	g->engine = -1;
}

static void
game_free(struct game *g)
{
	free(g->rec);
	free(g->bytes);
	free(g->off);
	free(g->recno);
	free(g->value);
	free(g->orig);
	free(g->cls);
	free(g->flags);
}

/* Resize *p to n elements of size each: 0, or -1 (left as it was). */
static int
grow(void *p, size_t n, size_t size)
{
	void *t = realloc(*(void **)p, n * size);

	if (t == NULL)
		return -1;
	*(void **)p = t;
	return 0;
}

static int
game_add(struct game *g, const pf_record *rec, uint64_t recno)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? (size_t)g->cap * 2 : 128;

		if (grow(&g->rec, cap, sizeof(*g->rec)) == -1 ||
		    grow(&g->off, cap, sizeof(*g->off)) == -1 ||
		    grow(&g->recno, cap, sizeof(*g->recno)) == -1 ||
		    grow(&g->value, cap, sizeof(*g->value)) == -1 ||
		    grow(&g->orig, cap, sizeof(*g->orig)) == -1 ||
		    grow(&g->cls, cap, sizeof(*g->cls)) == -1 ||
		    grow(&g->flags, cap, sizeof(*g->flags)) == -1)
			return -1;
		g->cap = (int)cap;
	}
	if (g->nbytes + rec->ext_len > g->capbytes) {
		size_t cap = g->capbytes ? g->capbytes : 4096;
		uint8_t *t;

		while (cap < g->nbytes + rec->ext_len)
			cap *= 2;
		if ((t = realloc(g->bytes, cap)) == NULL)
			return -1;
		g->bytes = t;
		g->capbytes = cap;
	}
	memcpy(g->bytes + g->nbytes, rec->ext, rec->ext_len);
	g->rec[g->n] = *rec;
	g->off[g->n] = g->nbytes;
	g->recno[g->n] = recno;
	g->nbytes += rec->ext_len;
	g->n++;
	return 0;
}

/* Check the game and take each record's value; 0, or -1 when it is left
   unrepaired (reported). */
static int
game_values(struct run *R, struct game *g)
{
	pf_eval e;
	pf_board b;
	char err[128];
	int rv;

	for (int k = 0; k < g->n; k++) {
		g->cls[k] = PF_REPAIR_NONE;
		g->flags[k] = 0;
	}
	for (int k = 0; k < g->n; k++) {
		if (k > 0 && g->rec[k].ply != g->rec[k - 1].ply + 1) {
			pf_warnx("%s: record %" PRIu64 ": game %016" PRIx64
			    ": ply %u follows ply %u (a gap); game left "
			    "unrepaired", g->name, g->recno[k],
			    g->rec[k].game_id, (unsigned)g->rec[k].ply,
			    (unsigned)g->rec[k - 1].ply);
			return -1;
		}
		/* a search needs A's moves: never guessed over a position
		   that cannot be read */
		if (pf_board_unpack(&b, g->rec[k].pos,
		    (g->rec[k].flags & PF_RF_CHESS960) != 0, err,
		    sizeof(err)) == -1) {
			pf_warnx("%s: record %" PRIu64 ": game %016" PRIx64
			    ": invalid position: %s; game left unrepaired",
			    g->name, g->recno[k], g->rec[k].game_id, err);
			return -1;
		}
		/* B is the position after A's move: a position followed by
		   another must hold the legal move played from it */
		if (k < g->n - 1 && (g->rec[k].move == PF_MOVE_NONE ||
		    !pf_is_legal(&b, g->rec[k].move))) {
			pf_warnx("%s: record %" PRIu64 ": game %016" PRIx64
			    ": %s; game left unrepaired", g->name,
			    g->recno[k], g->rec[k].game_id,
			    g->rec[k].move == PF_MOVE_NONE ? "no move played "
			    "before the next position" : "the move played is "
			    "not legal here");
			return -1;
		}
		if ((rv = pf_evalsel_find(&R->o->eval, &g->rec[k], &e)) != 1) {
			pf_warnx("%s: record %" PRIu64 ": game %016" PRIx64
			    ": %s; game left unrepaired", g->name,
			    g->recno[k], g->rec[k].game_id, rv < 0 ?
			    "malformed evaluation or extension area" :
			    "no evaluation matches --eval");
			return -1;
		}
		/* a position that may be re-scored needs a limit */
		if (!R->o->limit_kind && k < g->n - 2 &&
		    e.limit_kind == PF_LIMIT_NONE) {
			pf_warnx("%s: record %" PRIu64 ": game %016" PRIx64
			    ": the evaluation --eval chooses has no search "
			    "limit to re-score at (give -d or -n); game left "
			    "unrepaired", g->name, g->recno[k],
			    g->rec[k].game_id);
			return -1;
		}
		g->value[k] = g->orig[k] = pf_score_cp(e.score_kind, e.score);
	}
	return 0;
}

static void	game_step(struct run *, struct game *);

/* Send the re-score of A = record i: every legal move but the one played. */
static int
rescore(struct run *R, struct game *g, int i, pf_pool_job *job)
{
	const pf_record *a = &g->rec[i];
	pf_move moves[PF_MAX_MOVES];
	pf_eval e;
	int n;

	memset(job, 0, sizeof(*job));
	if (pf_board_unpack(&job->board, a->pos,
	    (a->flags & PF_RF_CHESS960) != 0, NULL, 0) == -1)
		return 0;	/* checked by game_values: cannot happen */
	n = pf_gen_legal(&job->board, moves);
	for (int k = 0; k < n; k++)
		if (moves[k] != a->move)
			job->searchmoves[job->nsearchmoves++] = moves[k];
	if (job->nsearchmoves == 0)
		return 0;	/* the played move was the only one */
	if (R->o->limit_kind) {
		job->limit_kind = (uint8_t)R->o->limit_kind;
		job->limit = R->o->limit;
	} else if (pf_evalsel_find(&R->o->eval, a, &e) == 1 &&
	    e.limit_kind != PF_LIMIT_NONE) {
		job->limit_kind = e.limit_kind;
		job->limit = e.limit;
	} else
		return 0;	/* checked by game_values: cannot happen */
	job->multipv = 1;
	job->user = g;
	return 1;
}

/* Walk the game back from where it stands until it needs a search. */
static void
game_step(struct run *R, struct game *g)
{
	pf_pool_job job;

	while (!g->searching && g->i >= 0) {
		int i = g->i, c;

		c = pf_panda_class(g->value[i], g->value[i + 1],
		    g->value[i + 2], pf_panda_draw(R->o->seed,
		    g->rec[i].game_id, g->rec[i].ply));
		g->cls[i] = (uint8_t)c;
		if (c == PF_REPAIR_DEFINITE || c == PF_REPAIR_MAYBE_YES) {
			if (rescore(R, g, i, &job)) {
				/* One engine per game, a fresh hash at its
				   first search: results do not depend on -j. */
				job.newgame = g->searches == 0;
				g->searching = 1;
				if (g->engine >= 0 &&
				    pf_pool_start(R->pool, g->engine, &job) == 0)
					return;
				g->engine = -1;
				/* waits in the queue for an idle engine */
				g->searching = 2;
				return;
			}
			g->value[i] = -g->value[i + 1];
		}
		g->i--;
	}
	if (g->i < 0)
		g->done = 1;
}

/* A re-score came back: vA := -u if the alternative is better, else -vB. */
static void
rescored(struct run *R, struct game *g, const pf_uci_search *s)
{
	int i = g->i;
	pf_eval e;
	int32_t alt;

	memset(&e, 0, sizeof(e));
	pf_uci_search_eval(s, &e);
	alt = pf_score_cp(e.score_kind, e.score);
	g->value[i] = alt > -g->value[i + 1] ? alt : -g->value[i + 1];
	g->flags[i] |= PF_REPAIRF_RESCORED;
	g->searching = 0;
	g->searches++;
	R->rescored++;
	R->search_ms += e.time_ms;
	g->i--;
	game_step(R, g);
}

static void
pool_warn(void *ctx, void *user, const char *msg)
{
	const struct game *g = user;

	(void)ctx;
	if (g != NULL && g->i >= 0 && g->i < g->n)
		pf_warnx("%s: record %" PRIu64 ": %s", g->name,
		    g->recno[g->i], msg);
	else
		pf_warnx("%s", msg);
}

/*
 * No engine can search: the games held, and every game after them, are
 * written unrepaired, as they came (records are never lost).
 */
static void
give_up(struct run *R)
{
	pf_warnx("the games from here on are written unrepaired");
	R->f.status = PF_EXIT_DATA;
	R->dead = 1;
	for (int k = 0; k < R->qn; k++) {
		struct game *g = &R->q[(R->qhead + k) % R->qcap];

		if (g == R->cur || g->done)
			continue;
		R->unrepaired++;
		g->skip = 1;
		g->done = 1;
		g->searching = 0;
	}
}

/* Give waiting games idle engines; take finished searches (waiting at
   most wait_ms, and for extra too when not NULL). */
static void
pump_with(struct run *R, int wait_ms, struct pollfd *extra)
{
	pf_pool_event ev;
	pf_pool_job job;
	const char *fatal;

	for (int k = 0; k < R->qn; k++) {
		struct game *g = &R->q[(R->qhead + k) % R->qcap];

		if (g->searching != 2)
			continue;
		for (int e = 0; e < pf_pool_size(R->pool); e++) {
			int busy = 0;

			if (!pf_pool_idle(R->pool, e))
				continue;
			for (int m = 0; m < R->qn && !busy; m++) {
				struct game *h = &R->q[(R->qhead + m) %
				    R->qcap];

				busy = h->engine == e && !h->done;
			}
			if (busy)
				continue;
			(void)rescore(R, g, g->i, &job);
			job.newgame = 1;
			if (pf_pool_start(R->pool, e, &job) == 0) {
				g->engine = e;
				g->searching = 1;
			}
			break;
		}
	}
	if (R->dead)
		return;
	if (pf_pool_poll(R->pool, extra, extra != NULL, wait_ms) == -1) {
		pf_warn("poll");
		R->f.status = PF_EXIT_DATA;
		R->f.stop = 1;
		return;
	}
	if ((fatal = pf_pool_fatal(R->pool)) != NULL) {
		pf_warnx("%s", fatal);
		give_up(R);
		return;
	}
	while (pf_pool_next_event(R->pool, &ev)) {
		struct game *g = ev.user;

		switch (ev.type) {
		case PF_POOL_DONE:
			rescored(R, g, ev.search);
			break;
		case PF_POOL_FAILED:
			pf_warnx("%s: record %" PRIu64 ": re-scoring failed "
			    "after %d attempts: %s; its value is left as it "
			    "was", g->name, g->recno[g->i], ev.attempts,
			    ev.why);
			R->f.status = PF_EXIT_DATA;
			R->failed++;
			/* its class stands; not re-scored */
			g->searching = 0;
			g->i--;
			game_step(R, g);
			break;
		default:	/* its engine was given up: another one */
			g->engine = -1;
			g->searching = 2;
			break;
		}
	}
	if (pf_pool_live(R->pool) == 0) {
		pf_warnx("no engine left running");
		give_up(R);
	}
}

static void
pump(struct run *R, int wait_ms)
{
	pump_with(R, wait_ms, NULL);
}

/* Write the finished games at the head of the queue, in input order. */
static void
write_games(struct run *R)
{
	pf_repair r;

	while (R->qn > 0 && R->q[R->qhead].done) {
		struct game *g = &R->q[R->qhead];

		for (int k = 0; k < g->n; k++) {
			if (g->skip) {
				pf_filter_put(&R->f, &g->rec[k]);
				continue;
			}
			memset(&r, 0, sizeof(r));
			r.mode = PF_REPAIR_PANDA;
			r.cls = g->cls[k];
			r.flags = g->flags[k];
			r.original = g->orig[k];
			r.repaired = g->value[k];
			R->cls[g->cls[k]]++;
			R->judged++;
			put_with(R, &g->rec[k], &r);
		}
		game_reset(g);
		R->qhead = (R->qhead + 1) % R->qcap;
		R->qn--;
	}
}

/*
 * The input waits (a pipe from a slow stage): go on with the searches,
 * writing each game as it is finished, until the input has more; a
 * signal ends the wait.  The reader's idle hook.
 */
static int
panda_idle(void *arg, int fd)
{
	struct run *R = arg;
	struct pollfd in;

	for (;;) {
		if (got_signal || R->f.stop) {
			R->f.stop = 1;	/* ends the input quietly */
			return -1;
		}
		write_games(R);
		if (R->f.w != NULL && pf_writer_pending(R->f.w) > 0)
			(void)pf_writer_flush(R->f.w);
		in.fd = fd;
		in.events = POLLIN;
		in.revents = 0;
		if (R->dead) {
			if (poll(&in, 1, 1000) == -1 && errno != EINTR)
				return 0;
		} else
			pump_with(R, 1000, &in);
		if (in.revents != 0)
			return 0;
	}
}

/* The game being read is complete: check it and start its walk. */
static void
close_game(struct run *R)
{
	struct game *g = R->cur;

	if (g == NULL)
		return;
	R->cur = NULL;
	/* its records' extensions are the game's copies from here on, as
	   the reader's buffer moves on (written as they came or not) */
	for (int k = 0; k < g->n; k++)
		g->rec[k].ext = g->bytes + g->off[k];
	if (g->skip) {
		g->done = 1;
		write_games(R);
		return;
	}
	R->games++;
	if (R->dead) {
		g->skip = 1;
		R->unrepaired++;
		g->done = 1;
	} else if (game_values(R, g) == -1) {
		g->skip = 1;
		R->unrepaired++;
		R->f.status = PF_EXIT_DATA;
		g->done = 1;
	} else {
		g->i = g->n - 3;
		game_step(R, g);
	}
	write_games(R);
}

static void
panda_record(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;
	struct game *g = R->cur;

	R->records++;
	if (g != NULL && (rec->game_id != g->rec[0].game_id ||
	    rec->ply <= g->rec[g->n - 1].ply ||
	    g->n == MAX_GAME)) {
		if (g->n == MAX_GAME && rec->game_id == g->rec[0].game_id)
			pf_warnx("%s: record %" PRIu64 ": game %016" PRIx64
			    " longer than %d positions; split there",
			    f->name, recno, rec->game_id, MAX_GAME);
		close_game(R);
	}
	if (R->cur == NULL) {
		/* Room in the queue: wait for engines while it is full. */
		while (R->qn == R->qcap && !f->stop && !got_signal) {
			pump(R, 1000);
			write_games(R);
		}
		if (f->stop || got_signal)
			return;
		R->cur = &R->q[(R->qhead + R->qn++) % R->qcap];
		game_reset(R->cur);
		R->cur->name = f->name;
	}
	if (game_add(R->cur, rec, recno) == -1) {
		pf_warnx("out of memory");
		f->status = PF_EXIT_DATA;
		f->stop = 1;
		return;
	}
	/* A record of no game is a game of its own, passed on as it is
	   (in its place: the output keeps the input order). */
	if (rec->game_id == 0)
		R->cur->skip = 1;
	if ((rec->flags & PF_RF_LAST) || rec->game_id == 0)
		close_game(R);
}

/* ---- main ------------------------------------------------------------------ */

static void
summary(struct run *R)
{
	if (R->o->mode == MODE_CANDIDATES) {
		pf_warnx("%" PRIu64 " records: %" PRIu64 " judged, %" PRIu64
		    " candidates (%.2f%%), %" PRIu64 " without both "
		    "evaluations", R->records, R->judged, R->candidates,
		    R->judged ? 100.0 * (double)R->candidates /
		    (double)R->judged : 0.0, R->missing);
		if (R->single > 0)
			pf_warnx("%" PRIu64 " records had one evaluation that "
			    "--shallow and --deep both chose, compared with "
			    "itself (make two, e.g. uci-eval -d 1 | uci-eval "
			    "-d 12)", R->single);
		return;
	}
	pf_warnx("%" PRIu64 " records in %" PRIu64 " games: %" PRIu64
	    " definitely, %" PRIu64 " maybe (%" PRIu64 " judged so, %" PRIu64
	    " not) mis-evaluated, %" PRIu64 " re-scored by a search "
	    "(%.3f s of engine time), %" PRIu64 " games left unrepaired, %"
	    PRIu64 " searches failed", R->records, R->games,
	    R->cls[PF_REPAIR_DEFINITE],
	    R->cls[PF_REPAIR_MAYBE_YES] + R->cls[PF_REPAIR_MAYBE_NO],
	    R->cls[PF_REPAIR_MAYBE_YES], R->cls[PF_REPAIR_MAYBE_NO],
	    R->rescored, (double)R->search_ms / 1000.0, R->unrepaired,
	    R->failed);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	struct sigaction sa;
	int r, i;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0) {
		free((void *)o.pool.options);
		return r;
	}
	argc -= optind;
	argv += optind;
	memset(&R, 0, sizeof(R));
	R.o = &o;
	/* the book is written too: never over an input, nor -o */
	if (pf_output_is_input(o.book)) {
		pf_warnx("--book %s: %s", o.book, PF_OUTPUT_IS_INPUT);
		return PF_EXIT_DATA;
	}
	if (pf_same_file(o.book, o.out.output)) {
		pf_warnx("-o %s: the same file as --book %s", o.out.output,
		    o.book);
		return PF_EXIT_USAGE;
	}
	if (pf_filter_open(&R.f, o.out.output, o.out.force,
	    o.out.zstd) == -1)
		goto out;
	if (o.book && (R.book = fopen(o.book, "w")) == NULL) {
		pf_warn("%s", o.book);
		R.f.status = PF_EXIT_DATA;
		goto out;
	}
	if (o.mode == MODE_PANDA) {
		o.pool.stop = &got_signal;
		o.pool.warn = pool_warn;
		o.pool.ctx = &R;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		R.qcap = 2 * o.pool.jobs + 2;
		R.f.idle = panda_idle;
		R.f.idle_arg = &R;
		if ((R.q = calloc((size_t)R.qcap, sizeof(*R.q))) == NULL ||
		    (R.pool = pf_pool_new(&o.pool)) == NULL) {
			pf_warn("malloc");
			R.f.status = PF_EXIT_DATA;
			goto out;
		}
	}
	for (i = 0; i == 0 || i < argc; i++) {
		if (R.f.stop || got_signal)
			break;
		pf_filter_file(&R.f, argc ? argv[i] : "-", o.mode ==
		    MODE_PANDA ? panda_record : candidate, &R);
		if (o.mode == MODE_PANDA)
			close_game(&R);	/* a game cut by the end of input */
	}
	while (o.mode == MODE_PANDA && R.qn > 0 && !R.f.stop && !got_signal) {
		pump(&R, 1000);
		write_games(&R);
	}
	if (got_signal) {
		pf_warnx("interrupted by signal %d", (int)got_signal);
		R.f.status = PF_EXIT_DATA;
		R.f.write_failed = 1;
		R.f.stop = 1;
	}
	if (pf_filter_complete(&R.f))
		summary(&R);
	if (R.book && fclose(R.book) == EOF) {
		pf_warn("%s", o.book);
		R.f.status = PF_EXIT_DATA;
	}
	R.book = NULL;
out:
	pf_pool_free(R.pool);
	if (R.book)
		fclose(R.book);
	for (i = 0; R.q && i < R.qcap; i++)
		game_free(&R.q[i]);
	free(R.q);
	pf_extbuf_free(&R.eb);
	free((void *)o.pool.options);
	r = pf_filter_close(&R.f);
	return r;
}
