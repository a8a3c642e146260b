/*
 * boardchain.c - a record's board from the record before it
 * (boardchain.h).
 */
#include <string.h>

#include "boardchain.h"

void
pf_boardchain_reset(pf_boardchain *c)
{
	c->valid = 0;
}

/* 0 when rec's board followed from the previous one into c->b. */
static int
chained(pf_boardchain *c, const pf_record *rec)
{
	uint8_t packed[PF_PACKED_SIZE];
	pf_undo u;

	/* A shuffled stream: the record is not the next of the previous
	   one's game, so the board cannot be it either (skip the work). */
	if (!c->valid || c->move == PF_MOVE_NONE ||
	    c->chess960 != (rec->flags & PF_RF_CHESS960) ||
	    rec->game_id != c->game_id ||
	    rec->ply != (uint16_t)(c->ply + 1))
		return -1;
	if (!pf_is_legal(&c->b, c->move))
		return -1;
	pf_make_move(&c->b, c->move, &u);
	pf_board_pack(&c->b, packed);
	if (memcmp(packed, rec->pos, PF_PACKED_SIZE) != 0)
		return -1;
	return 0;
}

int
pf_boardchain_next(pf_boardchain *c, const pf_record *rec, char *err,
    size_t errlen)
{
	if (chained(c, rec) == 0)
		c->chained++;
	else if (pf_board_unpack(&c->b, rec->pos,
	    (rec->flags & PF_RF_CHESS960) != 0, err, errlen) == -1) {
		c->valid = 0;
		return -1;
	}
	c->valid = 1;
	c->move = rec->move;
	c->chess960 = rec->flags & PF_RF_CHESS960;
	c->game_id = rec->game_id;
	c->ply = rec->ply;
	return 0;
}
