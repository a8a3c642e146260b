/*
 * pgn.h - PGN and EPD game reader for pgn2pos.
 *
 * A pf_pgn parses the text of one pf_input member into games: the tags it
 * needs, the starting position, the main-line moves (resolved to legal
 * pf_move values with the chess core), and the %eval / %clk annotations of
 * each position.  Variations, comments, NAGs and escape lines are skipped.
 * EPD input gives one game of zero moves per line.
 *
 * Bad text never stops the reader: a problem ends or skips the game it is
 * in and is described in the game (problem, problem_ply, text); the caller
 * decides what to print.  Nothing here prints or exits.
 */
#ifndef PF_PGN_H
#define PF_PGN_H

#include <stddef.h>
#include <stdint.h>

#include "chess.h"
#include "input.h"

#define PF_PGN_MAX_PLIES	65535	/* moves kept per game (u16 ply) */
#define PF_PGN_STR_MAX		255	/* longest tag value kept */
#define PF_PGN_TEXT_MAX		100	/* longest offending text kept */

enum pf_pgn_format { PF_PGN_AUTO = 0, PF_PGN_PGN, PF_PGN_EPD };

/* What went wrong in a game (problem); see pf_pgn_problem_name(). */
enum pf_pgn_problem {
	PF_PGNP_NONE = 0,
	PF_PGNP_ILLEGAL,	/* move text not legal here: truncated */
	PF_PGNP_COMMENT,	/* unterminated comment: truncated */
	PF_PGNP_BINARY,		/* binary data: truncated or skipped */
	PF_PGNP_EOF,		/* input ends inside the game: truncated */
	PF_PGNP_TOO_LONG,	/* more than PF_PGN_MAX_PLIES moves */
	PF_PGNP_TAG,		/* unterminated tag: skipped */
	PF_PGNP_FEN,		/* invalid FEN tag or EPD line: skipped */
	PF_PGNP_VARIANT,	/* variant other than chess / Chess960 */
	PF_PGNP_BADTAG,		/* malformed tag: skipped */
	PF_PGNP_VARIATION,	/* unterminated variation: truncated */
	PF_PGNP_TAG_LONG	/* a tag over 64 KiB: skipped */
};

enum { PF_PGN_EVAL_NONE = 0, PF_PGN_EVAL_CP, PF_PGN_EVAL_MATE };
/* A position's flags: the values of record.h's PF_RF_CHECK and
   PF_RF_INSUFFICIENT, so that they go into a record as they are. */
#define PF_PGN_CHECK		0x0001	/* side to move in check */
#define PF_PGN_INSUFFICIENT	0x0080	/* pf_insufficient_material */

/* Time-control classes (Lichess rule on base + 40 x increment). */
enum { PF_TC_UNKNOWN = 0, PF_TC_ULTRABULLET, PF_TC_BULLET, PF_TC_BLITZ,
    PF_TC_RAPID, PF_TC_CLASSICAL, PF_TC_CORRESPONDENCE };

typedef struct pf_pgn_str {
	uint16_t len;
	char s[PF_PGN_STR_MAX + 1];	/* NUL-terminated too */
} pf_pgn_str;

/*
 * One game.  Position i (0 <= i <= nmoves) is the start position after i
 * moves; moves[i] is played from position i and packed[], pflags[] (and
 * hash[]) describe it, for every game that is not skipped or filtered.  eval_kind / eval / depth and
 * clk_ms describe position i as annotated after the move that led to it
 * (index 0: a comment before the first move).  Evaluations are from
 * White's point of view as the PGN writes them (centipawns or mate in n
 * moves); clk_ms is the clock of the side that made move i-1, in ms, or
 * UINT32_MAX when not given.
 */
typedef struct pf_pgn_game {
	uint64_t number;	/* 1-based, within the member (EPD: per line);
				   stray text: the game's before it, or 0 */
	uint64_t line;		/* EPD: the line number */
	uint64_t id;		/* stable game id (see pgn2pos(1)) */
	pf_board start;
	pf_board final;		/* after the last kept move */
	int nmoves;
	pf_move *moves;
	uint8_t *eval_kind;	/* nmoves + 1 entries each */
	int32_t *eval;
	uint16_t *eval_depth;
	uint32_t *clk_ms;
	int has_eval, has_clk;
	uint8_t *packed;	/* position i: PF_PACKED_SIZE bytes at 28 i */
	uint16_t *pflags;	/* position i: PF_PGN_CHECK | PF_PGN_INSUFFICIENT */
	uint64_t *hash;		/* position i: pf_board_hash (pf_pgn_want_hash) */

	/* tags */
	uint16_t white_elo, black_elo;	/* 0 unknown */
	uint32_t base_s, inc_s;		/* UINT32_MAX unknown / none */
	int tc_class;			/* PF_TC_* */
	uint8_t termination;		/* PF_TERM_* of ext.h */
	uint8_t result_tag;		/* PF_RESULT_* from [Result] */
	uint8_t result_marker;		/* PF_RESULT_* from the movetext */
	int has_marker;			/* a termination marker was seen */
	pf_pgn_str event, site, white, black, date, term_text, variant;

	/* evaluations dropped as out of range (%eval, or EPD ce / acd):
	   the game is kept without them */
	int bad_evals;			/* how many */
	int bad_eval_ply;		/* the position of the first */
	char bad_eval_text[48];		/* its text, printable */

	/* problem */
	int problem;			/* PF_PGNP_* */
	int skip;			/* 1: write nothing of this game */
	int stray;			/* 1: no game but text between games
					   (no tag line, no move played, no
					   termination marker) with a
					   problem, given for it (skip set);
					   it takes no game number */
	int filtered;			/* > 0: the accept callback's reason */
	char text[PF_PGN_TEXT_MAX + 8];	/* printable offending text */
	char detail[128];		/* why (invalid FEN), or empty */
} pf_pgn_game;

typedef struct pf_pgn pf_pgn;

/*
 * accept: called once the tags of a game are read (before its moves are
 * resolved); 0 keeps the game; a reason > 0 marks it filtered (the reason
 * is kept in g->filtered) and its moves are skipped without being
 * resolved (fast).  It must depend on the game alone (pgn2pos -j calls it
 * from several threads).  May be NULL.
 */
typedef int (*pf_pgn_accept_fn)(const pf_pgn_game *g, void *arg);

pf_pgn	*pf_pgn_new(int format, pf_pgn_accept_fn accept, void *arg);
void	 pf_pgn_free(pf_pgn *p);

/* Also keep pf_board_hash() of every position (for --unique). */
void	 pf_pgn_want_hash(pf_pgn *p, int on);

/* In an engine match's comments ("+M5/20"), M counts moves (fastchess)
   rather than plies (cutechess, the default). */
void	 pf_pgn_mate_moves(pf_pgn *p, int on);

/* Start reading the current member of in (after pf_input_next_member). */
void	 pf_pgn_start(pf_pgn *p, pf_input *in);

/*
 * Start reading a piece of a member from memory: [buf, buf + len) must
 * stay put while it is read.  format: the member's (pf_pgn_sniff), or
 * PF_PGN_AUTO for the format given to pf_pgn_new.  soft_end: the piece
 * ends at a cut (pf_pgn_cut), where the next piece starts with a game;
 * else it ends the member.  Game numbers and EPD line numbers count from
 * the piece's start: the caller adds the games and the newlines
 * (pf_pgn_newlines) of the pieces before it.  A piece cut by pf_pgn_cut
 * reads as the same stretch of the whole member reads; pf_pgn_clean_end
 * says 0 if that was not so (a bug to report, not bad input).
 */
void	 pf_pgn_start_mem(pf_pgn *p, const char *buf, size_t len, int format,
	    int soft_end);
/* The piece just started ends where a read error cut the member: a game
   (or EPD line) that runs into its end is not read, as pf_pgn_next drops
   one that runs into a read error of its own input. */
void	 pf_pgn_damaged_end(pf_pgn *p);
int	 pf_pgn_clean_end(const pf_pgn *p);
uint64_t pf_pgn_newlines(const pf_pgn *p);

/*
 * Where to cut buf (the text of a member from its start or from an
 * earlier cut) so that the pieces read as the whole does: before a line
 * of buf that begins a game the reader cannot take for part of the one
 * before ("[Event" and a quoted value, after a game that ended or had its
 * [Event] tag: see lib/pgn.c); for EPD (format PF_PGN_EPD) and text that
 * is blank so far (PF_PGN_AUTO), after any line.  pf_pgn_cut gives the
 * last such offset at or after from, pf_pgn_cut_from the first; 0 when
 * there is none.
 */
size_t	 pf_pgn_cut(const char *buf, size_t len, size_t from, int format);
size_t	 pf_pgn_cut_from(const char *buf, size_t len, size_t from,
	    int format);
/*
 * The format pf_pgn_next would detect for a member starting with buf
 * (format_opt: the one given to pf_pgn_new, returned when not AUTO);
 * PF_PGN_AUTO when buf is blank so far, or (eof 0) its first line is not
 * complete.
 */
int	 pf_pgn_sniff(const char *buf, size_t len, int format_opt, int eof);

/*
 * Next game: 1 and *g set (valid until the next call), 0 at the end of the
 * member, -1 when the input could not be read further (pf_pgn_error();
 * games before it were all returned).  A game with skip = 0 has at least
 * its start position.
 */
int	 pf_pgn_next(pf_pgn *p, pf_pgn_game **g);
const char *pf_pgn_error(const pf_pgn *p);
/* The format of the current member once detected (PF_PGN_PGN / EPD). */
int	 pf_pgn_format(const pf_pgn *p);

/* "illegal move", "unterminated comment", ... */
const char *pf_pgn_problem_name(int problem);
/* The game's result: st is pf_board_status(&g->final) for a complete game
   (PF_ONGOING for one that ended early): checkmate or stalemate decide,
   else the [Result] tag, else the termination marker. */
uint8_t	 pf_pgn_result(const pf_pgn_game *g, enum pf_status st);
/* Class of a TimeControl: base + 40 x inc in seconds, Lichess limits. */
int	 pf_tc_class(uint32_t base_s, uint32_t inc_s);
const char *pf_tc_name(int tc_class);

#endif
