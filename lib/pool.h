/*
 * pool.h - a pool of UCI engine processes driven from one poll(2) loop:
 * the engine side shared by uci-eval and repair-mark.
 *
 * The pool starts every engine (uci, the caller's setoptions after
 * checking them against what the engine declares, UCI_ShowWDL when the
 * engine has it, isready), gives one search at a time to an idle engine,
 * and watches each with a deadline.  A fault (the engine crashed, closed
 * its output, hung, printed garbage or an illegal bestmove) kills the
 * engine, starts it anew and sends the same search again, up to `retries`
 * times; what to search next, and in which order, is the caller's.
 *
 * The caller polls with pf_pool_poll (adding its own descriptors, such as
 * its input) and then takes the finished searches from
 * pf_pool_next_event.  Nothing here prints or exits: what the user should
 * hear of (a fault, a restart, an engine given up) goes to the warn
 * callback, whose caller adds where it happened; a setup error that must
 * stop the run (an -O option the engine refuses, or an engine that has
 * failed every search of the first jobs + 2 positions and made none) is
 * in pf_pool_fatal.
 */
#ifndef PF_POOL_H
#define PF_POOL_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>

#include "chess.h"
#include "uci.h"

typedef struct pf_pool pf_pool;

typedef struct pf_pool_opts {
	const char *engine;		/* path of the UCI engine */
	const char *const *options;	/* "name=value" or "name", -O */
	int noptions;
	int jobs;			/* engines, 1 to 256 */
	int timeout_ms;			/* per search; 0: scaled to the limit */
	int retries;			/* searches again after a fault */
	/* Set (by a signal handler, say) to stop restarting engines. */
	volatile sig_atomic_t *stop;
	/* A message for the user, with the search's user pointer or NULL. */
	void (*warn)(void *ctx, void *user, const char *msg);
	void *ctx;
} pf_pool_opts;

/* One search.  The pool copies it. */
typedef struct pf_pool_job {
	pf_board board;
	uint8_t limit_kind;		/* PF_LIMIT_DEPTH, _NODES, _MOVETIME */
	uint64_t limit;
	int multipv;			/* lines wanted; PF_MAX_MOVES: all */
	int keep_depths;		/* keep every depth's table */
	int newgame;			/* "ucinewgame" and isready first */
	/* > 0: "searchmoves" these only; the lines wanted and the table
	   (complete when it lists them all) count among them. */
	int nsearchmoves;
	pf_move searchmoves[PF_MAX_MOVES];
	int attempts;			/* faults so far (a returned job's) */
	/* not NULL: board is searched as the end of these moves ("position
	   fen start moves ..."), which must stay valid while the job runs */
	const pf_uci_history *history;
	void *user;
} pf_pool_job;

enum {
	PF_POOL_DONE = 1,	/* search holds the result */
	PF_POOL_FAILED,		/* faulted more than `retries` times */
	PF_POOL_RETURNED	/* its engine was given up: search it elsewhere */
};

typedef struct pf_pool_event {
	int type;
	int engine;			/* index, 0 .. jobs-1 */
	void *user;
	int attempts;			/* faults the job met */
	/* PF_POOL_DONE: valid until the engine's next pf_pool_start. */
	const pf_uci_search *search;
	char why[512];			/* PF_POOL_FAILED: the last fault */
} pf_pool_event;

/* The getopt values of the long engine options; a tool numbers its own
   long options below these. */
#define PF_POOL_OPT_RETRIES	0x1000
#define PF_POOL_OPT_TIMEOUT	0x1001

/* The defaults: one engine per processor online, two retries, the
   timeout scaled to the limit, no -O options. */
void	 pf_pool_opts_init(pf_pool_opts *o);
/*
 * Take one of the engine options every tool that runs engines shares:
 * ch 'e' the engine, 'j' jobs (1 to 256), 'O' name=value or name (added
 * to o->options, which the caller frees), PF_POOL_OPT_RETRIES (0 to 100),
 * PF_POOL_OPT_TIMEOUT (ms, 1 to 1e9).  1 taken; 0 when ch is none of
 * them; -1 refused, with the reason in err ("-j 0: too small"); -2 out of
 * memory (errno set).
 */
int	 pf_pool_opts_take(pf_pool_opts *o, int ch, const char *arg,
	    char *err, size_t errlen);

/* Start the engines (the handshakes go on in pf_pool_poll).  NULL on
   allocation failure. */
pf_pool	*pf_pool_new(const pf_pool_opts *o);
/* Quit idle engines politely (unless stopping), kill the rest. */
void	 pf_pool_free(pf_pool *p);

int	 pf_pool_size(const pf_pool *p);
/* 1 when engine i is started and waiting for a search. */
int	 pf_pool_idle(const pf_pool *p, int i);
/* Engines not given up. */
int	 pf_pool_live(const pf_pool *p);
/* Engines searching (or clearing for a new game). */
int	 pf_pool_searching(const pf_pool *p);
/* 1 when engine i was given up (it could not be started again). */
int	 pf_pool_dead(const pf_pool *p, int i);
/* Engine restarts so far. */
uint64_t pf_pool_restarts(const pf_pool *p);
/* 1 when some engine is starting or searching: a poll has something to
   wait for besides the caller's descriptors. */
int	 pf_pool_working(const pf_pool *p);

/* Give idle engine i a search.  0, or -1 when i is not idle. */
int	 pf_pool_start(pf_pool *p, int i, const pf_pool_job *job);

/*
 * Wait up to timeout_ms (less when a deadline comes first) for engine
 * output or for the caller's descriptors (their revents are set), then
 * read every engine's lines and check the deadlines.  0, or -1 when
 * poll(2) failed (errno; EINTR is not a failure).
 */
int	 pf_pool_poll(pf_pool *p, struct pollfd *extra, int nextra,
	    int timeout_ms);
/* The next finished search: 1 with ev filled, 0 when there is none. */
int	 pf_pool_next_event(pf_pool *p, pf_pool_event *ev);

/* The engine's "id name" (empty before the first handshake). */
const char *pf_pool_engine_name(const pf_pool *p);
/* Why the run cannot go on (an option the engine refuses), or NULL. */
const char *pf_pool_fatal(const pf_pool *p);

#endif
