/*
 * uci.h - talking to a UCI chess engine: one engine process behind two
 * pipes, a line reader that survives partial lines and garbage, a parser
 * for "info" lines, and a search accumulator that turns the lines of one
 * "go" into an evaluation and per-move score tables.
 *
 * The process part is made for a single-threaded poll(2) loop over many
 * engines: pf_uci_fd() is the descriptor to poll, pf_uci_fill() reads what
 * is there without blocking, pf_uci_getline() hands out complete lines.
 * pf_uci_wait_line() is the blocking form for simple drivers and tests.
 *
 * Every engine runs in its own process group (and, on Linux, dies with its
 * parent), so pf_uci_kill() also ends any children it started, and every
 * process is reaped: no zombies, no orphans.  The caller must ignore
 * SIGPIPE (pf_prog_init does) so that writing to a dead engine is an error
 * return, not a signal.
 *
 * Nothing here prints or exits; errors are returned as -1 with the reason
 * available from pf_uci_error() or the search's err field.
 */
#ifndef PF_UCI_H
#define PF_UCI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "chess.h"
#include "ext.h"

#define PF_UCI_LINE_MAX		(256u << 10)	/* longer lines are a fault */
#define PF_UCI_GARBAGE_MAX	1000	/* unparsable lines in one search */

/* ---- the engine process ----------------------------------------------- */

typedef struct pf_uci pf_uci;

/*
 * Start path (looked up on PATH when it has no '/') with no arguments,
 * stdin and stdout on pipes, stderr inherited.  NULL with the reason in
 * err if the program cannot be started (exec failure is detected here, not
 * later).
 */
pf_uci	*pf_uci_spawn(const char *path, char *err, size_t errlen);
/* The engine to run: given when not NULL, else $POSFLOW_ENGINE, else
   "stockfish" on $PATH, else /usr/games/stockfish (Debian's).  The result
   stays valid until the next call. */
const char *pf_uci_find_engine(const char *given);
/*
 * The XXH64 of the engine's file (found as execvp finds it: on PATH for a
 * name without '/'), into *digest: which engine a path names, for cache
 * keys (an upgrade at the same path is another engine; the same binary
 * elsewhere is the same).  0, or -1 when it cannot be read (errno).
 */
int	 pf_uci_engine_digest(const char *engine, uint64_t *digest);
/* The XXH64 of the file named (as it is, relative to the current
   directory), into *digest.  0, or -1 (errno). */
int	 pf_uci_file_digest(const char *file, uint64_t *digest);
int	 pf_uci_fd(const pf_uci *u);	/* read end, non-blocking */
pid_t	 pf_uci_pid(const pf_uci *u);
/* The reason of the last failure; valid until the next call on u. */
const char *pf_uci_error(const pf_uci *u);

/* Write line plus '\n' (line may hold several '\n'-separated commands).
   0, or -1 if the engine is gone. */
int	 pf_uci_send(pf_uci *u, const char *line);
int	 pf_uci_sendf(pf_uci *u, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * Read what the engine has written, without blocking.  Returns the number
 * of bytes read (0 if none were ready), or -1 at end of output (the engine
 * closed it or died) or on a read error.
 */
int	 pf_uci_fill(pf_uci *u);
/*
 * Next complete line already read: 1 and *line set (NUL-terminated, "\r"
 * and the newline removed; valid until the next pf_uci_fill, getline or
 * wait_line call on u), 0 if no complete line is buffered, -1 if a line
 * longer than PF_UCI_LINE_MAX is being received.  A line holding a NUL
 * byte is returned with the NUL replaced by '?', so it is garbage to every
 * parser.
 */
int	 pf_uci_getline(pf_uci *u, char **line);
/* Blocking: 1 line, 0 timeout, -1 end of output or error. */
int	 pf_uci_wait_line(pf_uci *u, int timeout_ms, char **line);

/*
 * The "uci" handshake, blocking: send "uci", wait for "uciok" within
 * timeout_ms, keep the "id name" (see pf_uci_name) and the option names
 * (pf_uci_has_option).  0 / -1.
 */
int	 pf_uci_handshake(pf_uci *u, int timeout_ms);
/* Feed one handshake line (the non-blocking form): 1 at "uciok", else 0. */
int	 pf_uci_handshake_line(pf_uci *u, const char *line);
/* "id name" of the engine, "" if it gave none.  Valid while u lives. */
const char *pf_uci_name(const pf_uci *u);
/* 1 if the engine listed the option (names compare case-insensitively). */
int	 pf_uci_has_option(const pf_uci *u, const char *name);
/*
 * Check "setoption name NAME [value VALUE]" (value NULL: none) against the
 * option the engine listed: it must exist, a spin takes a whole number in
 * [min, max], a check true or false, a combo one of its vars, a button no
 * value, every other type some value.  0, or -1 with the reason in why.
 * An engine can crash on a value its option does not allow.
 */
int	 pf_uci_check_option(const pf_uci *u, const char *name,
	    const char *value, char *why, size_t len);
/* 1 if line is "readyok", blanks around it allowed (UCI allows any
   between tokens), else 0. */
int	 pf_uci_is_readyok(const char *line);
/* "isready" and wait for "readyok", blocking.  0 / -1. */
int	 pf_uci_sync(pf_uci *u, int timeout_ms);

/* 1 while the process has not been seen to exit. */
int	 pf_uci_alive(pf_uci *u);
/*
 * Stop the engine: "quit", up to grace_ms for it to exit, then SIGKILL to
 * its process group; the process is always reaped.  Idempotent.  Returns
 * the wait status, or -1 if it was already reaped.
 */
int	 pf_uci_stop(pf_uci *u, int grace_ms);
/* SIGKILL to the process group at once and reap. */
void	 pf_uci_kill(pf_uci *u);
/* Describe how the process ended ("exited 3", "killed by signal 6")
   into buf; "" while alive. */
const char *pf_uci_exit_text(const pf_uci *u, char *buf, size_t len);
/* Kill (if needed), reap, close, free.  NULL is a no-op. */
void	 pf_uci_free(pf_uci *u);

/* ---- parsing ------------------------------------------------------------ */

#define PF_UCI_HAS_DEPTH	0x0001
#define PF_UCI_HAS_SELDEPTH	0x0002
#define PF_UCI_HAS_MULTIPV	0x0004
#define PF_UCI_HAS_SCORE	0x0008
#define PF_UCI_HAS_WDL		0x0010
#define PF_UCI_HAS_NODES	0x0020
#define PF_UCI_HAS_TIME		0x0040
#define PF_UCI_HAS_PV		0x0080

typedef struct pf_uci_info {
	unsigned has;		/* PF_UCI_HAS_* */
	int depth, seldepth, multipv;
	uint8_t score_kind;	/* PF_SCORE_CP / PF_SCORE_MATE */
	uint8_t bound;		/* PF_EVF_LOWER / PF_EVF_UPPER or 0 */
	int32_t score;
	uint16_t wdl[3];
	uint64_t nodes;
	uint32_t time_ms;
	const char *pv;		/* into the line: the moves after "pv" */
} pf_uci_info;

/*
 * Parse an "info" line.  1: it carries a score (a principal variation
 * line), 0: another info line (currmove, string, ...), -1: not an info
 * line or malformed (a number that is not one, a score without value).
 */
int	pf_uci_parse_info(const char *line, pf_uci_info *info);

/*
 * Format "position fen FEN" for b into buf (at least PF_FEN_MAX + 16).
 */
char	*pf_uci_position(const pf_board *b, char *buf);

/*
 * A game's moves since its last capture or pawn move: what an engine
 * needs to see repetitions (no position before such a move can recur).
 * The moves lead from start to the position; at most PF_UCI_HISTORY_MAX,
 * the oldest dropped beyond (a half-move clock stops at 255).
 */
#define PF_UCI_HISTORY_MAX	255
typedef struct pf_uci_history {
	pf_board start;
	int n;
	pf_move moves[PF_UCI_HISTORY_MAX];
} pf_uci_history;

/* A history of b alone. */
void	pf_uci_history_reset(pf_uci_history *h, const pf_board *b);
/* m, legal in h's position, made: after is the position it gives.  A
   capture or pawn move (after's clock 0) begins the history again. */
void	pf_uci_history_push(pf_uci_history *h, pf_move m,
	    const pf_board *after);
/* A hash of the start position (as the engine gets it, the clocks and
   the full-move number in) and the moves. */
uint64_t pf_uci_history_hash(const pf_uci_history *h);
/* "position fen FEN moves m1 m2 ..." (no moves: as pf_uci_position) into
   buf of at least PF_UCI_POSITION_MAX bytes. */
#define PF_UCI_POSITION_MAX	(PF_FEN_MAX + 16 + 6 * PF_UCI_HISTORY_MAX)
char	*pf_uci_position_history(const pf_uci_history *h, char *buf);

/* ---- one search --------------------------------------------------------- */

/* One principal variation line as reported. */
typedef struct pf_uci_pvline {
	uint16_t depth, seldepth;
	uint8_t score_kind, flags;	/* flags: PF_EVF_WDL */
	int32_t score;
	uint16_t wdl[3];
	uint64_t nodes;
	uint32_t time_ms;
	uint16_t pv_len;
	pf_move pv[PF_PV_MAX];
} pf_uci_pvline;

/*
 * The state of one "go": feed it every line the engine prints until
 * pf_uci_search_line() returns 1 (bestmove).  Tables: the per-move scores
 * of a depth are complete when every MultiPV index 1..K (K = the lines
 * asked for, at most the legal moves) was reported at that depth without a
 * bound flag; lines of a shallower depth that arrive later (the unfinished
 * part of an interrupted iteration) and lines with lowerbound/upperbound
 * are not used.  The evaluation is the last multipv-1 line without a bound
 * flag.  Allocate with pf_uci_search_new (it is large).
 */
typedef struct pf_uci_search {
	pf_board board;
	int nlegal, want;		/* moves it may report, lines expected */
	int asked;			/* the multipv of pf_uci_search_begin */
	int keep_depths;
	uint64_t stop_nodes, stop_ms;	/* pf_uci_search_limit's; 0: none */
	int nallowed;			/* > 0: pf_uci_search_restrict's moves */
	pf_move allowed[PF_MAX_MOVES];
	int have_best;
	pf_uci_pvline best;		/* last unbounded multipv-1 line */
	int best_cut;			/* it came after the limit */
	int have_done;
	pf_uci_pvline done;		/* the last one before the limit */
	pf_move bestmove;
	int tab_depth;			/* depth of the table being filled */
	int tab_seen;
	uint8_t seen[PF_MAX_MOVES];
	pf_movescore cur[PF_MAX_MOVES];	/* by multipv index - 1 */
	int have_table;
	pf_movescores table;		/* deepest complete table */
	pf_movescores *hist;		/* keep_depths: every complete depth */
	int nhist, caphist;
	unsigned garbage;		/* lines ignored as unparsable */
	unsigned table_faults;		/* lines of the table that cannot be
					   (a move named twice, an illegal
					   first move) */
	char err[160];
} pf_uci_search;

pf_uci_search *pf_uci_search_new(void);
void	pf_uci_search_free(pf_uci_search *s);
/* Begin a search of b expecting multipv lines (1, K, or the number of
   legal moves for "all"); keep_depths keeps every complete table. */
void	pf_uci_search_begin(pf_uci_search *s, const pf_board *b, int multipv,
	    int keep_depths);
/*
 * Restrict a begun search to the n moves given, as "go searchmoves" does:
 * at most n lines are expected, a table is complete when it lists all n,
 * and a line whose first move is not one of them (an engine that ignores
 * searchmoves) is left out of the tables.  n <= 0 lifts the restriction.
 */
void	pf_uci_search_restrict(pf_uci_search *s, const pf_move *moves, int n);
/*
 * Tell a begun search its limit (PF_LIMIT_*; a depth changes nothing).  A
 * line reporting at least the nodes or the milliseconds of a nodes or
 * movetime limit was printed after the limit stopped the search, from the
 * iteration it cut short, and is left out of the tables: Stockfish
 * prints the stopped iteration's lines at its depth, the moves it had not
 * searched again with their scores of the depth before.  The evaluation
 * still takes the engine's last line, as its bestmove does, unless that
 * line gives the score and first move of the last one before the limit
 * again: that one then, at its depth (see pf_uci_search_eval).
 */
void	pf_uci_search_limit(pf_uci_search *s, int kind, uint64_t limit);
/*
 * Feed one line.  0: consumed (or ignored), 1: a legal "bestmove" ended
 * the search with at least one score line, -1: a fault (illegal bestmove,
 * bestmove without any score, too many garbage lines), reason in s->err.
 */
int	pf_uci_search_line(pf_uci_search *s, const char *line);
/*
 * Fill the engine-reported fields of e (score, W/D/L, depth, seldepth,
 * best move, nodes, time, pv) from a finished search: its last unbounded
 * line, or, when that came after a nodes or movetime limit and gives the
 * score and first move of the last line before it again (Stockfish
 * reports the moves it had not searched again at the new depth with their
 * old scores), that line, at its depth, with the nodes and time of the
 * whole search.  The caller sets source, limit, multipv and engine.
 */
void	pf_uci_search_eval(const pf_uci_search *s, pf_eval *e);

#endif
