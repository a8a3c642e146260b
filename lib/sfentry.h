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

typedef struct pf_sfentry {
	pf_board board;		/* the position; board.chess960 as stored */
	pf_move move;		/* played from board; PF_MOVE_NONE if none */
	int16_t score;		/* Stockfish's internal units (cp = 100 s /
				   208), the side to move's view; mates as
				   +-(32000 - plies to mate) */
	uint16_t ply;		/* the game ply of board (0 = first) */
	int8_t result;		/* 1 win, 0 draw, -1 loss for the side to
				   move */
} pf_sfentry;

#endif
