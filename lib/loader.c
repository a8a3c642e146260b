/*
 * loader.c - posflow streams into training batches (loader.h).
 *
 * The features come straight from the packed position (occupancy and one
 * nibble per piece): no board is built, so a batch costs little more than
 * reading its records.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalsel.h"
#include "ext.h"
#include "loader.h"
#include "policyindex.h"
#include "prog.h"
#include "record.h"
#include "show.h"

struct pf_loader {
	char **paths;
	size_t npaths, next;	/* next path to open */
	pf_reader *r;
	pf_loader_opts o;
	pf_evalsel sel;
	unsigned blocks;
	int width, nfeat;
	int block_off[5];	/* feature offset of each requested block */
	uint64_t seen;		/* records read, over all paths */
	int pending;		/* an error to report on the next call */
	char err[512];
	char *json;		/* pf_loader_next_json's line */
	size_t json_size;
	FILE *json_fp;
};

static const int block_size[5] = { 768, 96, 96, 180, 180 };

const char *
pf_version(void)
{
	return "posflow " PF_VERSION;
}

pf_loader *
pf_loader_open(const char *const *paths, size_t n, const pf_loader_opts *o,
    char *err, size_t errlen)
{
	pf_loader *l;
	size_t i;
	int b, off;

	if (o->features & ~PF_FEAT_KNOWN) {
		snprintf(err, errlen, "unknown feature block");
		return NULL;
	}
	if (o->perspective != PF_PERSP_STM &&
	    o->perspective != PF_PERSP_WHITE) {
		snprintf(err, errlen, "unknown perspective");
		return NULL;
	}
	if (o->policy_width < 0 || o->policy_width > PF_MAX_MOVES) {
		snprintf(err, errlen, "policy width not in 0..%d",
		    PF_MAX_MOVES);
		return NULL;
	}
	if (o->stride != 0 && o->offset >= o->stride) {
		snprintf(err, errlen, "offset not below stride");
		return NULL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->paths = calloc(n > 0 ? n : 1, sizeof(*l->paths))) == NULL) {
		free(l);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	l->o = *o;
	l->o.eval = NULL;
	if (pf_evalsel_parse(o->eval != NULL ? o->eval : "deepest", &l->sel,
	    err, errlen) == -1) {
		free(l->paths);
		free(l);
		return NULL;
	}
	l->npaths = n;
	for (i = 0; i < n; i++)
		if ((l->paths[i] = strdup(paths[i])) == NULL) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			pf_loader_free(l);
			return NULL;
		}
	l->blocks = o->features != 0 ? o->features : PF_FEAT_ALL;
	for (b = 0, off = 0; b < 5; b++)
		if (l->blocks & (1u << b)) {
			l->block_off[b] = off;
			off += block_size[b];
			l->width += PF_FEAT_BLOCK;
		}
	l->nfeat = off;
	return l;
}

int
pf_loader_width(const pf_loader *l)
{
	return l->width;
}

int
pf_loader_feature_count(const pf_loader *l)
{
	return l->nfeat;
}

const char *
pf_loader_error(const pf_loader *l)
{
	return l->err;
}

uint64_t
pf_loader_records(const pf_loader *l)
{
	return l->seen;
}

void
pf_loader_free(pf_loader *l)
{
	size_t i;

	if (l == NULL)
		return;
	if (l->r != NULL)
		pf_reader_free(l->r);
	for (i = 0; i < l->npaths; i++)
		free(l->paths[i]);
	free(l->paths);
	if (l->json_fp != NULL)
		fclose(l->json_fp);
	free(l->json);
	free(l);
}

/*
 * The next record to use (stride applied): 1, 0 at the end of the last
 * input, -1 with l->err set.
 */
static int
next_record(pf_loader *l, pf_record *rec)
{
	int rc;

	for (;;) {
		if (l->r == NULL) {
			if (l->next == l->npaths)
				return 0;
			if ((l->r = pf_reader_open_path(
			    l->paths[l->next])) == NULL) {
				snprintf(l->err, sizeof(l->err), "%s: %s",
				    l->paths[l->next], strerror(errno));
				l->next++;
				return -1;
			}
			l->next++;
		}
		rc = pf_reader_next(l->r, rec);
		if (rc == 0) {
			pf_reader_free(l->r);
			l->r = NULL;
			continue;
		}
		if (rc == -1) {
			snprintf(l->err, sizeof(l->err), "%s",
			    pf_reader_error(l->r));
			return -1;
		}
		if (l->o.stride > 1 &&
		    l->seen++ % l->o.stride != l->o.offset)
			continue;
		if (l->o.stride <= 1)
			l->seen++;
		return 1;
	}
}

/*
 * The indices of the requested blocks for packed position p into out
 * [width], -1 padded.  flip: mirror by rank and swap colours (the side to
 * move's view of a black-to-move position, or the other side's view of a
 * white-to-move one).  -1 on a bad piece code.
 */
static int
features(const pf_loader *l, const uint8_t *p, int flip, int32_t *out)
{
	uint64_t occ = pf_get64(p);
	int n = 0, i, sq, s, f, k, code, c, r, cr;
	int32_t *row;

	for (i = 0; i < l->width; i++)
		out[i] = -1;
	while (occ != 0 && n < 32) {
		sq = __builtin_ctzll(occ);
		occ &= occ - 1;
		code = p[8 + n / 2] >> (n & 1 ? 4 : 0) & 0xF;
		r = code & 7;
		if (r == 6)		/* a rook with a castling right */
			r = PF_ROOK;
		else if (r == 7)
			return -1;
		c = code >> 3;
		s = sq;
		if (flip) {
			s ^= 56;
			c ^= 1;
		}
		cr = c * 6 + r;
		f = s & 7;
		k = s >> 3;
		row = out;
		if (l->blocks & PF_FEAT_ALL) {
			row[n] = l->block_off[0] + cr * 64 + s;
			row += PF_FEAT_BLOCK;
		}
		if (l->blocks & PF_FEAT_H) {
			row[n] = l->block_off[1] + cr * 8 + f;
			row += PF_FEAT_BLOCK;
		}
		if (l->blocks & PF_FEAT_V) {
			row[n] = l->block_off[2] + cr * 8 + k;
			row += PF_FEAT_BLOCK;
		}
		if (l->blocks & PF_FEAT_D1) {
			row[n] = l->block_off[3] + cr * 15 + f - k + 7;
			row += PF_FEAT_BLOCK;
		}
		if (l->blocks & PF_FEAT_D2)
			row[n] = l->block_off[4] + cr * 15 + f + k;
		n++;
	}
	return occ != 0 ? -1 : 0;	/* more than 32 pieces */
}

/* Seed 004's 14 planes of packed position p into out[14 * 64]: -1 when
   the position is invalid. */
static int
planes(const uint8_t *p, int chess960, uint8_t *out)
{
	pf_board b;
	int sq, s, pc, us, flip;

	if (pf_board_unpack(&b, p, chess960, NULL, 0) == -1)
		return -1;
	memset(out, 0, 14 * 64);
	us = b.stm;
	flip = us == PF_BLACK ? 56 : 0;
	for (sq = 0; sq < 64; sq++) {
		s = sq ^ flip;
		pc = b.squares[sq];
		if (pc != PF_NO_PIECE)
			out[(PF_PIECE_COLOUR(pc) == us ? 0 : 6) * 64 +
			    PF_PIECE_TYPE(pc) * 64 + s] = 1;
		if (pf_square_attacked(&b, sq, us))
			out[12 * 64 + s] = 1;
		if (pf_square_attacked(&b, sq, !us))
			out[13 * 64 + s] = 1;
	}
	return 0;
}

static int
black_to_move(const uint8_t *p)
{
	return p[24] >> 7;
}

/* Row i of a PQR feature array (NULL: not asked for) from packed
   position p, each from its own side to move; p NULL: a row of -1. */
static int
pqr_features(const pf_loader *l, int32_t *out, size_t i, const uint8_t *p)
{
	int j;

	if (out == NULL)
		return 0;
	out += i * (size_t)l->width;
	if (p == NULL) {
		for (j = 0; j < l->width; j++)
			out[j] = -1;
		return 0;
	}
	return features(l, p, l->o.perspective == PF_PERSP_STM &&
	    black_to_move(p), out);
}

/* Fill row i of b from rec: 0, or -1 with l->err set. */
int
pf_loader_row(pf_loader *l, pf_batch *b, size_t i, const pf_record *rec)
{
	pf_ext_iter it;
	pf_ext x;
	pf_eval v;
	pf_value val, tmpval;
	pf_evalsel_pick pick;
	pf_policy pol;
	pf_pqr pqr;
	int black = black_to_move(rec->pos), flip, rc, k, j, w, idx;
	size_t wd = (size_t)l->width;

	memset(&val, 0, sizeof(val));	/* read only when have_value */
	int have_value = 0, have_pqr = 0, have_policy = 0;
	const char *what = NULL;
	float res;

	flip = l->o.perspective == PF_PERSP_STM && black;
	if (b->features != NULL &&
	    features(l, rec->pos, flip, b->features + i * wd) == -1)
		what = "bad packed position";
	if (what == NULL && b->features_opp != NULL &&
	    features(l, rec->pos, !flip, b->features_opp + i * wd) == -1)
		what = "bad packed position";
	if (what == NULL && b->planes != NULL && planes(rec->pos,
	    rec->flags & PF_RF_CHESS960, b->planes + i * 14 * 64) == -1)
		what = "invalid position";
	memset(&pick, 0, sizeof(pick));
	pf_ext_iter_init(&it, rec);
	while (what == NULL && (rc = pf_ext_next(&it, &x)) != 0) {
		if (rc == -1) {
			what = "malformed extension area";
			break;
		}
		switch (x.type) {
		case PF_EXT_EVAL:
			if (b->score == NULL && b->best == NULL)
				break;
			if (pf_eval_decode_head(&x, &v) == -1)
				what = "malformed evaluation";
			else
				pf_evalsel_offer_eval(&l->sel, &pick, &x, &v);
			break;
		case PF_EXT_VALUE:
			if (b->value == NULL)
				break;
			if (pf_value_decode(&x, &tmpval) == -1)
				what = "malformed value target";
			else if (pf_value_wanted(l->o.value_method,
			    tmpval.method)) {
				val = tmpval;
				have_value = 1;
			}
			break;
		case PF_EXT_POLICY:
			if (b->policy_index == NULL && b->policy_prob == NULL)
				break;
			if (pf_policy_decode(&x, &pol) == -1)
				what = "malformed policy";
			else
				have_policy = 1;
			break;
		case PF_EXT_PQR:
			if (b->features_q == NULL && b->features_r == NULL &&
			    b->has_pqr == NULL)
				break;
			if (pf_pqr_decode(&x, &pqr) == -1)
				what = "malformed PQR triple";
			else
				have_pqr = 1;
			break;
		}
	}
	if (what == NULL && (b->score != NULL || b->best != NULL)) {
		if (b->score != NULL)
			b->score[i] = NAN;
		if (b->best != NULL)
			b->best[i] = -1;
		if (pick.found && pf_eval_decode_head(&pick.x, &v) == -1)
			what = "malformed evaluation";
		else if (pick.found) {
			if (b->score != NULL)
				b->score[i] = (float)pf_score_cp(v.score_kind,
				    v.score);
			if (b->best != NULL && v.best != PF_MOVE_NONE)
				b->best[i] = pf_lc0_index(v.best, black);
		}
	}
	if (b->value != NULL)
		b->value[i] = have_value ? val.target : NAN;
	if (b->result != NULL) {
		switch (rec->result) {
		case PF_RESULT_WHITE:
			res = black ? 0.0f : 1.0f;
			break;
		case PF_RESULT_BLACK:
			res = black ? 1.0f : 0.0f;
			break;
		case PF_RESULT_DRAW:
			res = 0.5f;
			break;
		default:
			res = NAN;
		}
		b->result[i] = res;
	}
	w = l->o.policy_width;
	if (b->policy_index != NULL)
		for (j = 0; j < w; j++)
			b->policy_index[i * w + j] = -1;
	if (b->policy_prob != NULL)
		for (j = 0; j < w; j++)
			b->policy_prob[i * w + j] = 0;
	if (have_policy && w > 0) {
		/* Keep the w most probable moves when the row is narrower
		   than the list (a stable selection by probability). */
		for (k = 0, j = 0; k < pol.n && j < w; k++) {
			if (pol.n > w) {
				int m, better = 0;

				for (m = 0; m < pol.n; m++)
					if (pol.prob[m] > pol.prob[k] ||
					    (pol.prob[m] == pol.prob[k] &&
					    m < k))
						better++;
				if (better >= w)
					continue;
			}
			idx = pf_lc0_index(pol.move[k], black);
			if (idx < 0)
				continue;
			if (b->policy_index != NULL)
				b->policy_index[i * w + j] = idx;
			if (b->policy_prob != NULL)
				b->policy_prob[i * w + j] =
				    pol.prob[k] / 65535.0f;
			j++;
		}
	}
	if (b->move != NULL)
		b->move[i] = rec->move != PF_MOVE_NONE ?
		    pf_lc0_index(rec->move, black) : -1;
	if (b->ply != NULL)
		b->ply[i] = rec->ply;
	if (b->game_id != NULL)
		b->game_id[i] = rec->game_id;
	if (b->has_pqr != NULL)
		b->has_pqr[i] = (int8_t)have_pqr;
	if (what == NULL && pqr_features(l, b->features_q, i,
	    have_pqr ? pqr.q : NULL) == -1)
		what = "bad packed position in PQR's Q";
	if (what == NULL && pqr_features(l, b->features_r, i,
	    have_pqr ? pqr.r : NULL) == -1)
		what = "bad packed position in PQR's R";
	if (what != NULL) {
		if (l->r != NULL)
			snprintf(l->err, sizeof(l->err), "%s: record %llu: %s",
			    pf_reader_name(l->r),
			    (unsigned long long)pf_reader_recno(l->r), what);
		else
			snprintf(l->err, sizeof(l->err), "%s", what);
		return -1;
	}
	return 0;
}

long
pf_loader_fill(pf_loader *l, pf_batch *b, size_t max)
{
	pf_record rec;
	size_t n = 0;
	int rc;

	if (l->pending) {
		l->pending = 0;
		return -1;
	}
	while (n < max) {
		if ((rc = next_record(l, &rec)) == 0)
			break;
		if (rc == 1 && pf_loader_row(l, b, n, &rec) == 0) {
			n++;
			continue;
		}
		/* Damage: the rows before it first, the error next call. */
		if (n == 0)
			return -1;
		l->pending = 1;
		break;
	}
	return (long)n;
}
int
pf_loader_next_json(pf_loader *l, const char **json, size_t *len)
{
	pf_record rec;
	int rc;

	if (l->pending) {
		l->pending = 0;
		return -1;
	}
	if ((rc = next_record(l, &rec)) != 1)
		return rc;
	if (l->json_fp == NULL &&
	    (l->json_fp = open_memstream(&l->json, &l->json_size)) == NULL) {
		snprintf(l->err, sizeof(l->err), "%s", strerror(errno));
		return -1;
	}
	rewind(l->json_fp);
	pf_show_json(l->json_fp, &rec);
	if (fflush(l->json_fp) != 0 || ferror(l->json_fp)) {
		snprintf(l->err, sizeof(l->err), "%s", strerror(ENOMEM));
		return -1;
	}
	*json = l->json;
	*len = (size_t)ftello(l->json_fp);
	return 1;
}
