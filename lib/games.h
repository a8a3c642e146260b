/*
 * games.h - the games of one input file, parsed in the calling thread or
 * in several.
 *
 * With one thread a pf_games is pf_input + pf_pgn, game by game.  With
 * more, a reader thread reads the file (decompressing it, member by
 * member) and cuts each member's text into pieces of about 256 KiB at
 * lines where a game begins for certain (pf_pgn_cut); threads - 1 worker
 * threads and the caller's parse the pieces, each with its own pf_pgn
 * (from a regular file, the reader is the last of those parsers: it
 * parses a piece it has just cut whenever another is waiting); from
 * PF_GAMES_FRAMES threads on, a regular file of zstd frames is
 * decompressed by these parsers too, a group of frames at a time, the
 * reader cutting their text in order (what they cannot decompress,
 * pf_input reads from that frame on).
 *
 * The events reach the caller's function in input order, the games
 * numbered as one reader would number them, from whichever thread holds
 * the turn: the parser of the earliest piece not yet handed out.  It
 * hands out each game as it parses it, with no copy; the others keep
 * theirs (packed, in their piece's arena) until the turn reaches them.
 * So a game's records are made by the core that parsed it, while it is
 * still in that core's cache, and no thread waits for another to write.
 * The events and games are the same for any number of threads, byte for
 * byte: a piece reads exactly as the same stretch of the member read
 * whole (see pf_pgn_start_mem).
 *
 * Memory: 3 x threads + 6 pieces in flight, each its text and the games
 * parsed and not yet handed out; a piece is about PF_GAMES_PIECE bytes,
 * more only when no game begins for that long (one game with megabytes
 * of comments).  With zstd frames, threads + 2 groups of
 * frames, each up to 4 MiB of text or one larger frame (64 MiB at most:
 * a larger one is left to pf_input).
 *
 * Nothing here prints or exits.
 */
#ifndef PF_GAMES_H
#define PF_GAMES_H

#include <stddef.h>

#include "pgn.h"

#define PF_GAMES_PIECE	(256u << 10)	/* bytes of text per piece */
/*
 * From how many threads on the parsers decompress a file's zstd frames
 * (pf_games_opts.frames_from changes it, for tests and benchmarks).
 * Below, the reader does, as it does other compression: the text then
 * crosses between threads once (reader to parser) instead of twice
 * (decompressed by a parser, copied into pieces by the reader, parsed by
 * a parser): with 2 threads on two cores, 8 to 11 % less CPU time and 7
 * to 20 % less wall time (Lichess games, 2075 frames; bench-pgn2pos
 * times both).  Decompressing and cutting take about a quarter of the
 * time of parsing, so one reader would hold back three parsers or more
 * (not measured: two cores here).
 */
#define PF_GAMES_FRAMES	3
#define PF_GAMES_MAX_THREADS	256

typedef struct pf_games pf_games;

typedef struct pf_games_opts {
	int threads;		/* parsers: 1 reads in the calling thread */
	int format;		/* PF_PGN_AUTO, PF_PGN_PGN or PF_PGN_EPD */
	int want_hash;		/* pf_pgn_want_hash */
	int mate_moves;		/* pf_pgn_mate_moves */
	pf_pgn_accept_fn accept;	/* see pgn.h; called from any parser
					   thread when threads > 1, at once */
	void *accept_arg;
	/* called, as an event is (in turn), when the input would block
	   (a pipeline stage flushes its output there); may be NULL */
	void (*idle)(void *);
	void *idle_arg;
	size_t piece;		/* bytes per piece; 0: PF_GAMES_PIECE */
	int frames_from;	/* the parsers decompress zstd frames from
				   this many threads on; 0: PF_GAMES_FRAMES */
} pf_games_opts;

enum pf_games_kind {
	PF_GAMES_MEMBER = 1,	/* a member begins: member (NULL: no archive) */
	PF_GAMES_GAME,		/* game */
	PF_GAMES_READ_ERROR,	/* the member could not be read further:
				   error; the next event is the next member,
				   if any */
	PF_GAMES_INPUT_ERROR	/* the input cannot be read further (not
				   recognised, damaged archive): error; the
				   last event */
};

typedef struct pf_games_event {
	int kind;		/* PF_GAMES_* */
	const char *member;
	pf_pgn_game *game;	/* valid during the call */
	int epd;		/* the member is EPD (as far as known) */
	const char *error;
} pf_games_event;

/* NULL with errno set when the file cannot be opened or memory is short
   (path, name: as pf_input_open). */
pf_games	*pf_games_open(const char *path, const char *name,
		    const pf_games_opts *o);
/*
 * Every event of the input, in order, to fn(ev, arg); an input error is
 * the last.  fn returns 0 to go on, or -1 to stop (the games after are
 * not handed out).  With threads > 1 fn is called from any parser thread,
 * the caller's too, one call at a time: the turn passes under a lock, so
 * each call sees what the calls before it did.  0 when the input has
 * ended or fn stopped, -1 when memory ran out (pf_games_error).  Once.
 */
typedef int	 (*pf_games_fn)(const pf_games_event *ev, void *arg);
int		 pf_games_run(pf_games *gs, pf_games_fn fn, void *arg);
const char	*pf_games_error(const pf_games *gs);
/* zstd frames (of text; skippable ones not counted) decompressed in the
   parser threads so far: 0 with one thread, or when the input is no
   file of zstd frames. */
uint64_t	 pf_games_frames(pf_games *gs);
/* Stops the threads (early, too) and frees everything. */
void		 pf_games_close(pf_games *gs);

#endif
