/*
 * sfentry.c - records to and from training entries (sfentry.h).
 */
#include <math.h>
#include <string.h>

#include "boardchain.h"
#include "evalsel.h"
#include "ext.h"
#include "record.h"
#include "sfentry.h"
#include "sfformats.h"

int16_t
pf_sf_score(uint8_t score_kind, int32_t score)
{
	if (score_kind == PF_SCORE_MATE) {
		if (score > PF_SF_MATE_MOVES)
			score = PF_SF_MATE_MOVES;
		if (score < -PF_SF_MATE_MOVES)
			score = -PF_SF_MATE_MOVES;
		if (score > 0)
			return (int16_t)(PF_SF_MATE - (2 * score - 1));
		return (int16_t)-(PF_SF_MATE + 2 * score);
	}
	/* beyond +-15266 cp every score is the largest non-mate */
	if (score > 15266)
		score = 15266;
	if (score < -15266)
		score = -15266;
	return pf_sfscore_from_cp((int16_t)score);
}

int
pf_sf_unscore(int16_t s, uint8_t *kind, int32_t *score)
{
	int plies;

	if (s > PF_SF_MATE || s < -PF_SF_MATE)
		return -1;
	if (s > PF_SF_MAX_EVAL || s < -PF_SF_MAX_EVAL) {
		plies = PF_SF_MATE - (s < 0 ? -s : s);
		*kind = PF_SCORE_MATE;
		if (s > 0)	/* +32000, plies 0: mate in 1 at least */
			*score = plies < 1 ? 1 : (plies + 1) / 2;
		else
			*score = -(plies / 2);
		return 0;
	}
	*kind = PF_SCORE_CP;
	*score = pf_sfscore_to_cp(s);
	return 0;
}

/* Does Stockfish score s read as score of kind (pf_sf_unscore)? */
static int
sf_reads_as(int16_t s, uint8_t kind, int32_t score)
{
	uint8_t k;
	int32_t v;

	return pf_sf_unscore(s, &k, &v) == 0 && k == kind && v == score;
}

int
pf_sfentry_from_record(const pf_record *rec, const pf_evalsel *sel,
    int move_from, pf_boardchain *chain, pf_sfentry *e, const char **why)
{
	pf_evalsel_pick pick;
	pf_ext_iter it;
	pf_ext x;
	pf_eval v;
	int rc, black, bad;
	long gp;

	/* The board first: a chain must see every record. */
	if (chain != NULL) {
		bad = pf_boardchain_next(chain, rec, NULL, 0) == -1;
		if (!bad)
			e->board = chain->b;
	} else
		bad = pf_board_unpack(&e->board, rec->pos,
		    rec->flags & PF_RF_CHESS960, NULL, 0) == -1;
	memset(&pick, 0, sizeof(pick));
	pf_ext_iter_init(&it, rec);
	while ((rc = pf_ext_next(&it, &x)) == 1)
		if (x.type == PF_EXT_EVAL) {
			if (pf_eval_decode_head(&x, &v) == -1) {
				*why = "malformed evaluation";
				return -1;
			}
			pf_evalsel_offer_eval(sel, &pick, &x, &v);
		}
	if (rc == -1) {
		*why = "malformed extension area";
		return -1;
	}
	if (!pick.found) {
		*why = "no evaluation";
		return 0;
	}
	(void)pf_eval_decode_head(&pick.x, &v);
	e->move = move_from == PF_SFMOVE_BEST ? v.best : rec->move;
	if (move_from != PF_SFMOVE_ANY && e->move == PF_MOVE_NONE) {
		*why = "no move";
		return 0;
	}
	if (bad) {
		*why = "invalid position";
		return 0;
	}
	if (e->move != PF_MOVE_NONE && !pf_is_legal(&e->board, e->move)) {
		*why = move_from == PF_SFMOVE_BEST ?
		    "the best move is not legal" :
		    "the move played is not legal";
		return 0;
	}
	/* an imported entry's own score, while it still reads as the
	   evaluation's (nothing has changed the score since) */
	e->score = (v.flags & PF_EVF_SF) && sf_reads_as(v.sf_score,
	    v.score_kind, v.score) ? v.sf_score :
	    pf_sf_score(v.score_kind, v.score);
	black = e->board.stm == PF_BLACK;
	/* the game ply as Stockfish counts it (pos.game_ply()): the
	   record's, or the full-move number's when it is a whole move or
	   more larger, as in a game set up from a FEN at move 300 (its
	   records count from 0; the formats would say ply 0, and
	   nnue-pytorch's reader takes the full-move number from it and skips
	   early plies by it).  The difference is the same for every record
	   of a game.  Imported data keeps its ply: its full-move number may
	   be one off (nnue-pytorch prints one low, lc0's chunks hold none).
	   Past binpack's ply limit (full-move 8192) the record's stays. */
	gp = 2 * ((long)e->board.fullmove - 1) + black;
	e->ply = gp >= (long)rec->ply + 2 && gp <= PF_SFENTRY_PLY_MAX ?
	    (uint16_t)gp : rec->ply;
	switch (rec->result) {
	case PF_RESULT_WHITE:
		e->result = black ? -1 : 1;
		break;
	case PF_RESULT_BLACK:
		e->result = black ? 1 : -1;
		break;
	default:		/* a draw, or unknown: the formats hold no such */
		e->result = 0;
		break;
	}
	return 1;
}

void
pf_sfentry_to_core(const pf_sfentry *e, uint64_t game_id,
    const uint8_t *prev, pf_move prev_move, pf_record *rec)
{
	int black = e->board.stm == PF_BLACK;

	memset(rec, 0, sizeof(*rec));
	if (prev != NULL)
		pf_board_pack_next(prev, prev_move, &e->board, rec->pos);
	else
		pf_board_pack(&e->board, rec->pos);
	rec->game_id = game_id;
	rec->ply = e->ply;
	rec->move = e->move;
	rec->result = e->result == 0 ? PF_RESULT_DRAW :
	    (e->result > 0) != black ? PF_RESULT_WHITE : PF_RESULT_BLACK;
	if (e->board.chess960)
		rec->flags |= PF_RF_CHESS960;
	if (pf_in_check(&e->board))
		rec->flags |= PF_RF_CHECK;
	/* A position with a move played is neither mate nor stalemate:
	   only the others need the move generator. */
	if (e->move == PF_MOVE_NONE)
		switch (pf_board_status(&e->board)) {
		case PF_CHECKMATE:
			rec->flags |= PF_RF_MATE;
			break;
		case PF_STALEMATE:
			rec->flags |= PF_RF_STALEMATE;
			break;
		default:
			break;
		}
	if (pf_insufficient_material(&e->board))
		rec->flags |= PF_RF_INSUFFICIENT;
}

int
pf_sfentry_to_record(const pf_sfentry *e, uint64_t game_id,
    const uint8_t *prev, pf_move prev_move, pf_extbuf *ext, pf_record *rec)
{
	pf_eval v;

	pf_sfentry_to_core(e, game_id, prev, prev_move, rec);
	memset(&v, 0, sizeof(v));
	v.source = PF_SRC_IMPORT;
	v.limit_kind = PF_LIMIT_NONE;
	pf_extbuf_reset(ext);
	rec->ext = ext->data;
	rec->ext_len = 0;
	if (pf_sf_unscore(e->score, &v.score_kind, &v.score) == -1)
		return 1;
	/* "mated now" where there is a move (a huge negative centipawn
	   score of a bullet format, say): mated in 1 at the soonest; where
	   there is none and no check, stalemate: a draw */
	if (v.score_kind == PF_SCORE_MATE && v.score == 0) {
		pf_move moves[PF_MAX_MOVES];

		if (pf_gen_legal(&e->board, moves) > 0)
			v.score = -1;
		else if (!pf_in_check(&e->board))
			v.score_kind = PF_SCORE_CP;	/* score 0 */
	}
	/* a score centipawns only round (Stockfish's units are finer):
	   kept as it is, for posexport to give back */
	if (pf_sf_score(v.score_kind, v.score) != e->score &&
	    sf_reads_as(e->score, v.score_kind, v.score)) {
		v.flags |= PF_EVF_SF;
		v.sf_score = e->score;
	}
	if (pf_eval_encode(&v, ext) == -1)
		return -1;
	rec->ext = ext->data;
	rec->ext_len = (uint32_t)ext->len;
	return 0;
}
