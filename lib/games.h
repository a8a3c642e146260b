/*
 * games.h - the games of one input file, parsed in the calling thread or
 * in several.
 *
 * With one thread a pf_games is pf_input + pf_pgn, game by game.  With
 * more, a reader thread reads the file (decompressing it, member by
 * member) and cuts each member's text into pieces of about 256 KiB at
 * lines where a game begins for certain (pf_pgn_cut); threads - 1 worker
 * threads parse the pieces, each with its own pf_pgn, and so does the
 * caller's thread while the piece it is to hand out next is not parsed
 * (one thread fewer to wake); from PF_GAMES_FRAMES threads on, a regular
 * file of zstd frames is decompressed by these parsers too, a group of
 * frames at a time, the reader cutting their text in order (what they
 * cannot decompress, pf_input reads from that frame on); the caller gets
 * the games in input order, numbered as one reader would number them.
 * The events and games are the same for any number of threads, byte for
 * byte: a piece reads exactly as the same stretch of the member read
 * whole (see pf_pgn_start_mem).
 *
 * Memory: 3 x threads + 6 pieces in flight, each its text and its parsed
 * games (and what prepare made of them); a piece is about PF_GAMES_PIECE
 * bytes, more only when no game begins for that long (one game with
 * megabytes of comments).  With zstd frames, threads + 2 groups of
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
	pf_pgn_accept_fn accept;	/* see pgn.h; called from any parser
					   thread when threads > 1 */
	void *accept_arg;
	/* called in the caller's thread before it waits for input (a
	   pipeline stage flushes its output there); may be NULL */
	void (*idle)(void *);
	void *idle_arg;
	size_t piece;		/* bytes per piece; 0: PF_GAMES_PIECE */
	int frames_from;	/* the parsers decompress zstd frames from
				   this many threads on; 0: PF_GAMES_FRAMES */
	/*
	 * Work on each game done in the parser threads, where the game is
	 * at hand (threads > 1 only): prep_new(prep_arg) makes a state for
	 * each parser thread (NULL: no memory), prepare(state, g, &bytes,
	 * &len) returns 0 and bytes valid until its next call in that
	 * thread (or -1: no memory), which the game's event hands out as
	 * prep / prep_len; prep_free frees a state.  prepare NULL: none.
	 */
	void	*(*prep_new)(void *prep_arg);
	void	 (*prep_free)(void *state);
	int	 (*prepare)(void *state, const pf_pgn_game *g,
		    const void **bytes, size_t *len);
	void	*prep_arg;
} pf_games_opts;

enum pf_games_kind {
	PF_GAMES_END = 0,	/* no more events */
	PF_GAMES_MEMBER,	/* a member begins: member (NULL: no archive) */
	PF_GAMES_GAME,		/* game */
	PF_GAMES_READ_ERROR,	/* the member could not be read further:
				   error; the next event is the next member
				   or the end */
	PF_GAMES_INPUT_ERROR	/* the input cannot be read further (not
				   recognised, damaged archive): error; the
				   next event is the end */
};

typedef struct pf_games_event {
	int kind;		/* PF_GAMES_* */
	const char *member;
	pf_pgn_game *game;	/* valid until the next call */
	int prepared;		/* prepare ran: prep, prep_len are its */
	const void *prep;
	size_t prep_len;
	int epd;		/* the member is EPD (as far as known) */
	const char *error;
} pf_games_event;

/* NULL with errno set when the file cannot be opened or memory is short
   (path, name: as pf_input_open). */
pf_games	*pf_games_open(const char *path, const char *name,
		    const pf_games_opts *o);
/* 1 with *ev set, or 0 after PF_GAMES_END (then again 0); -1 when memory
   or a thread could not be had (pf_games_error). */
int		 pf_games_next(pf_games *gs, pf_games_event *ev);
const char	*pf_games_error(const pf_games *gs);
/* zstd frames (of text; skippable ones not counted) decompressed in the
   parser threads so far: 0 with one thread, or when the input is no
   file of zstd frames. */
uint64_t	 pf_games_frames(pf_games *gs);
/* Stops the threads (early, too) and frees everything. */
void		 pf_games_close(pf_games *gs);

#endif
