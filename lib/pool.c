/*
 * pool.c - a pool of UCI engines, each a small state machine (starting,
 * ready, idle, new game, searching) with a deadline, all read from one
 * poll(2) loop: no threads, no locks.  See pool.h.
 */
#ifdef __linux__
#define _GNU_SOURCE		/* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#endif
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pool.h"
#include "prog.h"

#define START_TIMEOUT_MS 10000

enum { E_DEAD, E_UCI, E_READY, E_IDLE, E_NEWGAME, E_SEARCH };

struct engine {
	int id;			/* 1-based, for messages */
	pf_uci *u;
	int state;
	int64_t deadline;
	int has_job;
	pf_pool_job job;
	int multipv, chess960;	/* what the engine is set to */
	int start_failures;
	unsigned gen;		/* bumped at every restart */
	pf_uci_search *search;
	/* what it said (info string) since it started or its search
	   began: an engine that dies often says why there */
	char said[320];
};

struct pf_pool {
	pf_pool_opts o;
	struct engine *eng;
	int n;
	pf_pool_event *ev;	/* a ring of finished searches */
	int nev, ev_head, ev_cap;
	struct pollfd *pfd;
	int *idx;
	uint64_t restarts;
	uint64_t done, failed;	/* searches finished; jobs given up */
	char name[256];
	char fatal[768];
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
warn(pf_pool *p, void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
warn(pf_pool *p, void *user, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (p->o.warn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->o.warn(p->o.ctx, user, msg);
}

static int
stopping(const pf_pool *p)
{
	return p->o.stop != NULL && *p->o.stop != 0;
}

/* Queue an event for the engine's job, which it no longer holds. */
static void
push(pf_pool *p, struct engine *E, int type, const char *why)
{
	pf_pool_event *ev;

	if (p->nev == p->ev_cap)	/* cannot happen: one per job */
		return;
	ev = &p->ev[(p->ev_head + p->nev++) % p->ev_cap];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->engine = E->id - 1;
	ev->user = E->job.user;
	ev->attempts = E->job.attempts;
	ev->search = type == PF_POOL_DONE ? E->search : NULL;
	if (why)
		snprintf(ev->why, sizeof(ev->why), "%s", why);
	E->has_job = 0;
	/* An engine that has failed every search of more positions than
	   there are engines, and made none, cannot search (a network it
	   cannot load, say): its fault, not the positions'. */
	if (type == PF_POOL_DONE)
		p->done++;
	else if (type == PF_POOL_FAILED && ++p->failed >= (uint64_t)p->n +
	    2 && p->done == 0 && !p->fatal[0])
		snprintf(p->fatal, sizeof(p->fatal), "every search of the "
		    "first %llu positions failed, and none succeeded: the "
		    "engine cannot search (see its messages above); stopped",
		    (unsigned long long)p->failed);
}

static int64_t
search_timeout(const pf_pool *p, const pf_pool_job *j, int lines)
{
	double ms;

	if (p->o.timeout_ms)
		return p->o.timeout_ms;
	switch (j->limit_kind) {
	case PF_LIMIT_DEPTH:
		ms = 1000.0 * pow(1.5, (double)j->limit);
		break;
	case PF_LIMIT_NODES:
		ms = (double)j->limit / 10.0;
		break;
	default:
		ms = 2.0 * (double)j->limit;
		break;
	}
	ms = 30000.0 + ms * (lines > 1 ? lines : 1);
	return ms > 86400000.0 ? 86400000 : (int64_t)ms;
}

static void	start_engine(pf_pool *, struct engine *);

/* Kill the engine, count the fault against its search, start anew. */
static void
fault(pf_pool *p, struct engine *E, const char *why_in)
{
	char how[64] = "", why[512];
	int starting = E->state == E_UCI || E->state == E_READY;
	int searching = E->state == E_NEWGAME || E->state == E_SEARCH;

	/* why is often the engine's own error text, freed with it below. */
	snprintf(why, sizeof(why), "%s", why_in);
	if (E->u) {
		pf_uci_kill(E->u);
		pf_uci_exit_text(E->u, how, sizeof(how));
	}
	warn(p, E->has_job ? E->job.user : NULL, "engine %d (pid %ld): %s%s%s%s",
	    E->id, E->u ? (long)pf_uci_pid(E->u) : -1L, why, *how ? " (" : "",
	    how, *how ? ")" : "");
	pf_uci_free(E->u);
	E->u = NULL;
	E->gen++;
	p->restarts++;
	if (E->has_job && searching && ++E->job.attempts > p->o.retries)
		push(p, E, PF_POOL_FAILED, why);
	if (starting && ++E->start_failures > p->o.retries + 1) {
		warn(p, NULL, "engine %d: failed to start %d times, giving up",
		    E->id, E->start_failures);
		E->state = E_DEAD;
		if (E->has_job)
			push(p, E, PF_POOL_RETURNED, why);
		return;
	}
	if (stopping(p)) {
		E->state = E_DEAD;
		if (E->has_job)
			push(p, E, PF_POOL_RETURNED, why);
		return;
	}
	start_engine(p, E);
}

static void
start_engine(pf_pool *p, struct engine *E)
{
	char err[256];

	E->multipv = 1;
	E->chess960 = 0;
	E->said[0] = '\0';
	if ((E->u = pf_uci_spawn(p->o.engine, err, sizeof(err))) == NULL) {
		warn(p, NULL, "engine %d: %s", E->id, err);
		E->state = E_DEAD;
		if (E->has_job)
			push(p, E, PF_POOL_RETURNED, err);
		return;
	}
	E->state = E_UCI;
	E->deadline = now_ms() + (p->o.timeout_ms > START_TIMEOUT_MS ?
	    p->o.timeout_ms : START_TIMEOUT_MS);
	if (pf_uci_send(E->u, "uci") == -1)
		fault(p, E, pf_uci_error(E->u));
}

/* uciok: the options, checked against the engine's own, then isready. */
static void
ready(pf_pool *p, struct engine *E)
{
	char cmd[2048], name[512], why[600];
	size_t n = 0;

	if (pf_uci_has_option(E->u, "UCI_ShowWDL"))
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
		    "setoption name UCI_ShowWDL value true\n");
	for (int i = 0; i < p->o.noptions; i++) {
		const char *o = p->o.options[i], *eq = strchr(o, '=');

		snprintf(name, sizeof(name), "%.*s",
		    eq ? (int)(eq - o) : (int)strlen(o), o);
		if (pf_uci_check_option(E->u, name, eq ? eq + 1 : NULL, why,
		    sizeof(why)) == -1) {
			snprintf(p->fatal, sizeof(p->fatal), "-O %s: %s", o,
			    why);
			return;
		}
		if (eq)
			n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
			    "setoption name %s value %s\n", name, eq + 1);
		else
			n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
			    "setoption name %s\n", name);
		if (n >= sizeof(cmd) - 16) {
			snprintf(p->fatal, sizeof(p->fatal),
			    "too many -O options");
			return;
		}
	}
	snprintf(cmd + n, sizeof(cmd) - n, "isready");
	snprintf(p->name, sizeof(p->name), "%s", pf_uci_name(E->u));
	E->state = E_READY;
	if (pf_uci_send(E->u, cmd) == -1)
		fault(p, E, pf_uci_error(E->u));
}

static void
send_search(pf_pool *p, struct engine *E)
{
	const pf_pool_job *j = &E->job;
	char cmd[1024 + PF_MAX_MOVES * 8 + PF_UCI_POSITION_MAX];
	char pos[PF_UCI_POSITION_MAX];
	char uci[PF_UCI_MAX];
	size_t n = 0;
	int want;

	E->said[0] = '\0';
	pf_uci_search_begin(E->search, &j->board, j->multipv, j->keep_depths);
	pf_uci_search_limit(E->search, j->limit_kind, j->limit);
	if (j->nsearchmoves > 0)
		pf_uci_search_restrict(E->search, j->searchmoves,
		    j->nsearchmoves);
	want = E->search->want;
	if (want != E->multipv) {
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
		    "setoption name MultiPV value %d\n", want);
		E->multipv = want;
	}
	if (j->board.chess960 != E->chess960) {
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
		    "setoption name UCI_Chess960 value %s\n",
		    j->board.chess960 ? "true" : "false");
		E->chess960 = j->board.chess960;
	}
	n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s\ngo %s %llu",
	    j->history != NULL ? pf_uci_position_history(j->history, pos) :
	    pf_uci_position(&j->board, pos),
	    j->limit_kind == PF_LIMIT_DEPTH ? "depth" :
	    j->limit_kind == PF_LIMIT_NODES ? "nodes" : "movetime",
	    (unsigned long long)j->limit);
	if (j->nsearchmoves > 0)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " searchmoves");
	for (int i = 0; i < j->nsearchmoves && n < sizeof(cmd); i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s",
		    pf_move_to_uci(&j->board, j->searchmoves[i], uci));
	E->state = E_SEARCH;
	E->deadline = now_ms() + search_timeout(p, j, want);
	if (pf_uci_send(E->u, cmd) == -1)
		fault(p, E, pf_uci_error(E->u));
}

/* Send the job held: after "ucinewgame" when asked, on a running engine. */
static void
begin_job(pf_pool *p, struct engine *E, int fresh)
{
	if (E->job.newgame && !fresh) {
		E->state = E_NEWGAME;
		E->deadline = now_ms() + search_timeout(p, &E->job, 1);
		if (pf_uci_send(E->u, "ucinewgame\nisready") == -1)
			fault(p, E, pf_uci_error(E->u));
	} else {
		send_search(p, E);
	}
}

/* An "info string" line kept for a fault's message: the first ones, as
   much as fits, joined by " / ". */
static void
keep_said(struct engine *E, const char *line)
{
	size_t n = strlen(E->said), room = sizeof(E->said) - n;

	if (strncmp(line, "info string ", 12) != 0 || room < 8)
		return;
	line += 12;
	if (n > 0) {
		memcpy(E->said + n, " / ", 4);
		n += 3;
		room -= 3;
	}
	if (strlen(line) < room)
		memcpy(E->said + n, line, strlen(line) + 1);
	else {
		memcpy(E->said + n, line, room - 4);
		memcpy(E->said + n + room - 4, "...", 4);
	}
}

static void
engine_line(pf_pool *p, struct engine *E, const char *line)
{
	int r;

	keep_said(E, line);
	switch (E->state) {
	case E_UCI:
		if (pf_uci_handshake_line(E->u, line))
			ready(p, E);
		break;
	case E_READY:
		if (!pf_uci_is_readyok(line))
			break;
		/* A restarted engine goes on with the search it held: it is
		   fresh, so no "ucinewgame" is needed. */
		if (E->has_job)
			begin_job(p, E, 1);
		else
			E->state = E_IDLE;
		break;
	case E_NEWGAME:
		if (pf_uci_is_readyok(line))
			send_search(p, E);
		break;
	case E_SEARCH:
		r = pf_uci_search_line(E->search, line);
		if (r == 1) {
			E->start_failures = 0;
			E->state = E_IDLE;
			push(p, E, PF_POOL_DONE, NULL);
		} else if (r == -1) {
			fault(p, E, E->search->err);
		}
		break;
	default:
		break;	/* idle: stray output is ignored */
	}
}

static void
engine_input(pf_pool *p, struct engine *E)
{
	char *line;
	unsigned gen = E->gen;
	int r, eof;

	eof = pf_uci_fill(E->u) == -1;
	while (E->u && E->state != E_DEAD &&
	    (r = pf_uci_getline(E->u, &line)) != 0) {
		if (r == -1) {
			fault(p, E, pf_uci_error(E->u));
			return;
		}
		engine_line(p, E, line);
		if (E->gen != gen || p->fatal[0])
			return;	/* restarted: the old lines are gone */
	}
	if (eof && E->u && E->gen == gen) {
		char why[sizeof(E->said) + 64];

		snprintf(why, sizeof(why), "engine died or closed its output%s"
		    "%s%s%s", E->state == E_SEARCH ? " during a search" : "",
		    *E->said ? "; it said \"" : "", E->said, *E->said ? "\"" :
		    "");
		fault(p, E, why);
	}
}

static const char *
state_wait(int state)
{
	switch (state) {
	case E_UCI: return "uciok";
	case E_READY: case E_NEWGAME: return "readyok";
	default: return "bestmove";
	}
}

static void
check_deadlines(pf_pool *p)
{
	int64_t now = now_ms();
	char why[128];

	for (int i = 0; i < p->n; i++) {
		struct engine *E = &p->eng[i];

		if (E->state == E_DEAD || E->state == E_IDLE ||
		    now < E->deadline)
			continue;
		snprintf(why, sizeof(why), "no %s in time (hung)",
		    state_wait(E->state));
		fault(p, E, why);
	}
}

/* The processors this process may run on: its affinity (the CPU set a
   Slurm job or taskset gives it), else those online. */
static long
usable_cpus(void)
{
#ifdef __linux__
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 &&
	    CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
#endif
	return sysconf(_SC_NPROCESSORS_ONLN);
}

void
pf_pool_opts_init(pf_pool_opts *o)
{
	long ncpu = usable_cpus();

	memset(o, 0, sizeof(*o));
	o->jobs = ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
	o->retries = 2;
}

int
pf_pool_opts_take(pf_pool_opts *o, int ch, const char *arg, char *err,
    size_t errlen)
{
	const char *errstr = NULL, *name;
	const char **t;

	switch (ch) {
	case 'e':
		o->engine = arg;
		return 1;
	case 'j':
		name = "-j";
		o->jobs = (int)pf_strtonum(arg, 1, 256, &errstr);
		break;
	case 'O':
		name = "-O";
		if (arg[0] == '=' || arg[0] == '\0' || strchr(arg, '\n')) {
			errstr = "expected name=value";
			break;
		}
		if ((t = realloc((void *)o->options,
		    (size_t)(o->noptions + 1) * sizeof(*t))) == NULL)
			return -2;
		t[o->noptions++] = arg;
		o->options = t;
		return 1;
	case PF_POOL_OPT_RETRIES:
		name = "--retries";
		o->retries = (int)pf_strtonum(arg, 0, 100, &errstr);
		break;
	case PF_POOL_OPT_TIMEOUT:
		name = "--timeout";
		o->timeout_ms = (int)pf_strtonum(arg, 1, 1000000000LL, &errstr);
		break;
	default:
		return 0;
	}
	if (errstr != NULL) {
		snprintf(err, errlen, "%s %s: %s", name, arg, errstr);
		return -1;
	}
	return 1;
}

pf_pool *
pf_pool_new(const pf_pool_opts *o)
{
	pf_pool *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->o = *o;
	p->n = o->jobs;
	p->ev_cap = 2 * o->jobs + 4;
	p->eng = calloc((size_t)p->n, sizeof(*p->eng));
	p->ev = calloc((size_t)p->ev_cap, sizeof(*p->ev));
	p->pfd = calloc((size_t)p->n + 8, sizeof(*p->pfd));
	p->idx = calloc((size_t)p->n + 8, sizeof(*p->idx));
	if (p->eng == NULL || p->ev == NULL || p->pfd == NULL ||
	    p->idx == NULL)
		goto fail;
	for (int i = 0; i < p->n; i++) {
		p->eng[i].id = i + 1;
		if ((p->eng[i].search = pf_uci_search_new()) == NULL)
			goto fail;
	}
	for (int i = 0; i < p->n; i++)
		start_engine(p, &p->eng[i]);
	return p;
fail:
	pf_pool_free(p);
	return NULL;
}

void
pf_pool_free(pf_pool *p)
{
	if (p == NULL)
		return;
	/* Ask every idle engine to quit first, so they exit in parallel. */
	for (int i = 0; p->eng && i < p->n; i++)
		if (p->eng[i].u && p->eng[i].state == E_IDLE && !stopping(p))
			(void)pf_uci_send(p->eng[i].u, "quit");
	for (int i = 0; p->eng && i < p->n; i++) {
		struct engine *E = &p->eng[i];

		if (E->u) {
			if (E->state == E_IDLE && !stopping(p))
				pf_uci_stop(E->u, 500);
			pf_uci_free(E->u);
		}
		pf_uci_search_free(E->search);
	}
	free(p->eng);
	free(p->ev);
	free(p->pfd);
	free(p->idx);
	free(p);
}

int
pf_pool_size(const pf_pool *p)
{
	return p->n;
}

int
pf_pool_idle(const pf_pool *p, int i)
{
	return p->eng[i].state == E_IDLE && !p->eng[i].has_job;
}

int
pf_pool_dead(const pf_pool *p, int i)
{
	return p->eng[i].state == E_DEAD;
}

int
pf_pool_live(const pf_pool *p)
{
	int n = 0;

	for (int i = 0; i < p->n; i++)
		n += p->eng[i].state != E_DEAD;
	return n;
}

int
pf_pool_searching(const pf_pool *p)
{
	int n = 0;

	for (int i = 0; i < p->n; i++)
		n += p->eng[i].state == E_SEARCH ||
		    p->eng[i].state == E_NEWGAME;
	return n;
}

int
pf_pool_working(const pf_pool *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->eng[i].state != E_DEAD && p->eng[i].state != E_IDLE)
			return 1;
	return 0;
}

uint64_t
pf_pool_restarts(const pf_pool *p)
{
	return p->restarts;
}

int
pf_pool_start(pf_pool *p, int i, const pf_pool_job *job)
{
	struct engine *E = &p->eng[i];

	if (!pf_pool_idle(p, i))
		return -1;
	E->job = *job;
	E->has_job = 1;
	begin_job(p, E, 0);
	return 0;
}

int
pf_pool_poll(pf_pool *p, struct pollfd *extra, int nextra, int timeout_ms)
{
	int64_t now = now_ms(), wait = timeout_ms;
	int n = 0, r;

	for (int i = 0; i < p->n; i++) {
		struct engine *E = &p->eng[i];

		if (E->state == E_DEAD || E->u == NULL)
			continue;
		p->pfd[n].fd = pf_uci_fd(E->u);
		p->pfd[n].events = POLLIN;
		p->pfd[n].revents = 0;
		p->idx[n++] = i;
		if (E->state != E_IDLE && E->deadline - now < wait)
			wait = E->deadline - now;
	}
	for (int k = 0; k < nextra && k < 8; k++) {
		p->pfd[n] = extra[k];
		p->pfd[n].revents = 0;
		p->idx[n++] = -1 - k;
	}
	if (wait < 0)
		wait = 0;
	r = poll(p->pfd, (nfds_t)n, (int)wait);
	if (r == -1 && errno != EINTR)
		return -1;
	for (int k = 0; k < n; k++) {
		int i = p->idx[k];

		if (i < 0) {
			extra[-1 - i].revents = r > 0 ? p->pfd[k].revents : 0;
			continue;
		}
		/* A restarted engine has a new descriptor: not this one. */
		if (r > 0 && p->pfd[k].revents && p->eng[i].u != NULL &&
		    pf_uci_fd(p->eng[i].u) == p->pfd[k].fd && !p->fatal[0])
			engine_input(p, &p->eng[i]);
	}
	if (!p->fatal[0])
		check_deadlines(p);
	return 0;
}

int
pf_pool_next_event(pf_pool *p, pf_pool_event *ev)
{
	if (p->nev == 0)
		return 0;
	*ev = p->ev[p->ev_head];
	p->ev_head = (p->ev_head + 1) % p->ev_cap;
	p->nev--;
	return 1;
}

const char *
pf_pool_engine_name(const pf_pool *p)
{
	return p->name;
}

const char *
pf_pool_fatal(const pf_pool *p)
{
	return p->fatal[0] ? p->fatal : NULL;
}
