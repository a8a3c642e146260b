/*
 * boardchain.h - a record's board from the record before it.
 *
 * Records of a game usually arrive in order, so a record's board is
 * mostly the previous record's board after its move: making that move and
 * comparing the packed result with the record's 28 bytes is much cheaper
 * than unpacking and validating them.  A tool that needs the board of
 * every record asks pf_boardchain_next(); one that skips a record calls
 * pf_boardchain_reset() so that the next record is not chained to an
 * older board.
 *
 * Nothing here prints or exits.
 */
#ifndef PF_BOARDCHAIN_H
#define PF_BOARDCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "chess.h"
#include "record.h"

typedef struct pf_boardchain {
	int valid;		/* b is the previous record's board */
	pf_board b;		/* the current record's board */
	pf_move move;		/* the previous record's move */
	uint16_t chess960;
	uint64_t game_id;	/* the next record of the game has this id */
	uint16_t ply;		/* and the ply after this one */
	uint64_t chained;	/* boards made from the previous one */
} pf_boardchain;

void	pf_boardchain_reset(pf_boardchain *c);
/*
 * The board of rec into c->b: from the previous record's board when rec
 * is the next record of its game (same game id, the next ply, the same
 * Chess960 flag, the previous move legal, and the packed board after it
 * equal to rec's), else unpacked and validated.  0, or -1 with the reason
 * in err (the chain is then reset).  On 0, c remembers rec for the next
 * call.
 */
int	pf_boardchain_next(pf_boardchain *c, const pf_record *rec, char *err,
	    size_t errlen);

#endif
