/*
 * sfentry.h - one training entry as Stockfish's training-data formats
 * (binpack, plain, bin) and bullet's (marlinformat, viriformat) hold it:
 * a position, the move played from it, a score and the game result, both
 * from the side to move's view.  The codecs (binpack.h, sfformats.h)
 * read and write these; posexport and posimport convert them from and to
 * records.
 */
#ifndef PF_SFENTRY_H
#define PF_SFENTRY_H

#include <stdint.h>

#include "chess.h"

/* The largest game ply taken from a full-move number (binpack's). */
#define PF_SFENTRY_PLY_MAX	0x3FFF

typedef struct pf_sfentry {
	pf_board board;		/* the position; board.chess960 as stored */
	pf_move move;		/* played from board; PF_MOVE_NONE if none */
	int16_t score;		/* Stockfish's internal units (cp = 100 s /
				   208), the side to move's view; mates as
				   +-(32000 - plies to mate) */
	uint16_t ply;		/* the game ply of board, as Stockfish counts
				   it: the record's, or 2 (full-move number
				   - 1) + 1 if black is to move when that is
				   2 or more larger (and at most
				   PF_SFENTRY_PLY_MAX) */
	int8_t result;		/* 1 win, 0 draw, -1 loss for the side to
				   move */
} pf_sfentry;

/*
 * Scores.  Stockfish's internal unit is 1/208 of a pawn over 100
 * centipawns (nnue-pytorch reads cp = 100 s / 208).  A centipawn score
 * becomes s = round(cp * 2.08), clamped to +-PF_SF_MAX_EVAL so that it
 * never reads as a mate; a mate in n moves for the side to move becomes
 * 32000 - (2n - 1) (plies to mate), being mated in n -(32000 - 2n), being
 * checkmated -32000; n beyond PF_SF_MATE_MOVES, which the units cannot
 * hold (Stockfish's MAX_PLY), becomes PF_SF_MATE_MOVES.  Back:
 * |s| > PF_SF_MAX_EVAL is a mate in (32000 - |s| + 1) / 2 moves
 * (negative when s < 0; +32000, which no search returns, a mate in 1),
 * else cp = round(s / 2.08); a centipawn score, or a mate, survives the
 * round trip exactly.  |s| > 32000 is no score:
 * Stockfish's VALUE_INFINITE (32001) and VALUE_NONE (32002, which its
 * tools write for an entry without one and nnue-pytorch's loader skips).
 */
#define PF_SF_MATE	32000
#define PF_SF_MAX_EVAL	(32000 - 247)	/* Stockfish's VALUE_MATE_IN_MAX_PLY - 1 */
#define PF_SF_NONE	32002		/* Stockfish's VALUE_NONE */
/* The farthest mate the units hold: 123 moves, 246 plies (MAX_PLY) */
#define PF_SF_MATE_MOVES	((PF_SF_MATE - PF_SF_MAX_EVAL) / 2)

int16_t	pf_sf_score(uint8_t score_kind, int32_t score);
/* Into *kind (PF_SCORE_CP or PF_SCORE_MATE) and *score: 0, or -1 (and
   nothing set) when s is no score (|s| > 32000). */
int	pf_sf_unscore(int16_t s, uint8_t *kind, int32_t *score);

struct pf_record;
struct pf_evalsel;
struct pf_extbuf;
struct pf_boardchain;

/* An entry's move (pf_sfentry_from_record): */
enum {
	PF_SFMOVE_ANY,		/* the move played, or none */
	PF_SFMOVE_PLAYED,	/* the move played: a record needs one */
	PF_SFMOVE_BEST		/* the chosen evaluation's best move */
};

/*
 * A record as an entry: the score of the evaluation sel chooses, the move
 * move_from (PF_SFMOVE_*) says.  1 done, 0 the record cannot be one (*why
 * says: "no evaluation", "no move" (with PF_SFMOVE_PLAYED none played,
 * with PF_SFMOVE_BEST the evaluation has no best move), "invalid
 * position", "the move played is not legal", "the best move is not
 * legal"), -1 a malformed record (*why says: "malformed evaluation", one
 * pf_eval_decode refuses, or "malformed extension area").  With a chain
 * (boardchain.h) the board comes from the previous record's where it
 * can; every record of the input must then pass through here.
 */
int	pf_sfentry_from_record(const struct pf_record *rec,
	    const struct pf_evalsel *sel, int move_from,
	    struct pf_boardchain *chain, pf_sfentry *e, const char **why);
/*
 * An entry as a record of game game_id (e->move legal or PF_MOVE_NONE, as
 * the decoders guarantee): the core, and an evaluation
 * (source PF_SRC_IMPORT, depth 0) in ext (reset first); rec->ext points
 * into ext.  prev, when not NULL, is the packed position before e's, from
 * which prev_move led to it (the previous entry of a chain): the board is
 * packed from it (pf_board_pack_next), quicker than from the board alone.
 * A score of "mated now" (-32000) where the side to move has a move is
 * read as mated in 1, and in stalemate as 0.  A score that centipawns only
 * round (most of Stockfish's units) is kept too, as the evaluation's
 * sf_score (PF_EVF_SF), which pf_sfentry_from_record gives back while
 * the evaluation's score is unchanged.  0; 1 when e's score is no
 * score (pf_sf_unscore), and the record has no evaluation; -1 on
 * allocation failure.
 */
int	pf_sfentry_to_record(const pf_sfentry *e, uint64_t game_id,
	    const uint8_t *prev, pf_move prev_move, struct pf_extbuf *ext,
	    struct pf_record *rec);
/* The core alone (no extensions): for a reader that adds its own
   (posimport -F lc0). */
void	pf_sfentry_to_core(const pf_sfentry *e, uint64_t game_id,
	    const uint8_t *prev, pf_move prev_move, struct pf_record *rec);

#endif
