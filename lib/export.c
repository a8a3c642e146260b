/*
 * export.c - records into a trainer's native format (export.h).
 *
 * Each format is a small exporter: open, put one record, close.  The
 * codecs live in binpack.c, sfformats.c, lc0.c, npy.c and loader.c; this
 * module converts records (sfentry.c) and manages the outputs.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "binpack.h"
#include "boardchain.h"
#include "evalsel.h"
#include "export.h"
#include "ext.h"
#include "lc0.h"
#include "loader.h"
#include "npy.h"
#include "sfentry.h"
#include "sfformats.h"
#include "target.h"

#define OUTBUF		(1u << 16)
#define NPY_ROWS	4096	/* rows buffered before they are written */
#define NPY_MAX		16	/* arrays */
#define GAME_MAX	2048	/* lc0: positions of one game kept */

struct format;

struct pf_export {
	const struct format *fmt;
	pf_export_opts o;
	char *dir, *name;
	int fd;
	pf_evalsel sel;
	pf_boardchain chain;	/* boards from the record before */
	uint64_t written, unknown;
	char err[512];
	/* the stream formats */
	pf_binpack_writer *bp;
	pf_viri_writer *viri;
	uint8_t *buf;		/* bytes not yet written to fd */
	size_t buflen;
	/* npy */
	pf_loader *loader;
	pf_batch batch;
	size_t rows;
	int narrays;
	struct npyarray {
		void **slot;		/* the pf_batch field */
		pf_npy *f;
	} arrays[NPY_MAX];
	/* lc0: the game being gathered, written as one chunk file */
	struct lc0pos {
		pf_board board;
		uint16_t ply;
		int rep;
		int ep_only;	/* an en passant square for lc0 alone */
		pf_lc0_v6 v;
	} *game;
	int ngame;
	uint64_t game_id, chunks;
	pf_policy pol;		/* the record's policy target */
	uint8_t rec[PF_LC0_V6_SIZE];	/* one encoded record */
};

struct format {
	const char *name;
	const char *suffix;
	int directory;
	unsigned info;		/* PF_EXPORT_TEXT, ... (export.h) */
	int (*open)(pf_export *x);
	int (*put)(pf_export *x, const pf_record *rec, int *why);
	int (*idle)(pf_export *x);	/* NULL: nothing to hand on */
	int (*close)(pf_export *x);
	/* the 32-byte boards (marlinformat, bulletformat): board_put */
	void (*encode)(const pf_sfentry *e, uint8_t *out);
};

static int
fail(pf_export *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->err, sizeof(x->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- entries: the Stockfish and bullet formats ------------------------ */

/* Write the buffered bytes.  0 / -1 (errno kept). */
static int
out_flush(pf_export *x)
{
	size_t off = 0;
	ssize_t n;

	while (off < x->buflen) {
		if ((n = write(x->fd, x->buf + off, x->buflen - off)) == -1) {
			if (errno == EINTR)
				continue;
			x->buflen = 0;
			return fail(x, "%s: %s", x->name, strerror(errno));
		}
		off += (size_t)n;
	}
	x->buflen = 0;
	return 0;
}

static int
out_put(pf_export *x, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (x->buflen + n > OUTBUF && out_flush(x) == -1)
		return -1;
	memcpy(x->buf + x->buflen, p, n);
	x->buflen += n;
	return 0;
}

/* The move binpack, plain, bin and lc0 hold (PF_SFMOVE_*). */
static int
sfmove(const pf_export *x)
{
	return x->o.best_move ? PF_SFMOVE_BEST : PF_SFMOVE_PLAYED;
}

/* A record as an entry, its move move_from (PF_SFMOVE_*): 1, or 0 with
   *why. */
static int
entry(pf_export *x, const pf_record *rec, int move_from, pf_sfentry *e,
    int *why)
{
	const char *reason = NULL;
	int rc;

	rc = pf_sfentry_from_record(rec, &x->sel, move_from, &x->chain, e,
	    &reason);
	if (rc == 1) {
		if (rec->result == PF_RESULT_UNKNOWN)
			x->unknown++;
		return 1;
	}
	if (rc == -1) {
		*why = PF_EXPORT_INVALID;
		snprintf(x->err, sizeof(x->err), "%s", reason);
	} else if (strcmp(reason, "no evaluation") == 0)
		*why = PF_EXPORT_NO_EVAL;
	else if (strcmp(reason, "no move") == 0)
		*why = PF_EXPORT_NO_MOVE;
	else {
		*why = PF_EXPORT_INVALID;
		snprintf(x->err, sizeof(x->err), "%s", reason);
	}
	return 0;
}

static int
buf_open(pf_export *x)
{
	if ((x->buf = malloc(OUTBUF)) == NULL)
		return fail(x, "%s", strerror(ENOMEM));
	return 0;
}

static int
buf_close(pf_export *x)
{
	return out_flush(x);
}

static int
binpack_open(pf_export *x)
{
	if ((x->bp = pf_binpack_writer_open(x->fd, x->name)) == NULL)
		return fail(x, "%s", strerror(ENOMEM));
	return 0;
}

static int
binpack_put(pf_export *x, const pf_record *rec, int *why)
{
	pf_sfentry e;

	if (!entry(x, rec, sfmove(x), &e, why))
		return 0;
	if (pf_binpack_write(x->bp, &e) == -1) {
		uint8_t stem[PF_BINPACK_STEM_SIZE];

		if (pf_binpack_writer_failed(x->bp))
			return fail(x, "%s", pf_binpack_writer_error(x->bp));
		/* refused (entry() has checked the board and move): what the
		   format cannot hold, the reason without the writer's
		   "name: entry N: " */
		if (pf_binpack_stem_encode(&e, stem, x->err,
		    sizeof(x->err)) == 0)
			snprintf(x->err, sizeof(x->err), "%s",
			    pf_binpack_writer_error(x->bp));
		*why = PF_EXPORT_UNFIT;
		return 0;
	}
	return 1;
}

static int
binpack_close(pf_export *x)
{
	if (pf_binpack_writer_close(x->bp) == -1)
		return fail(x, "%s", pf_binpack_writer_error(x->bp));
	return 0;
}

static int
plain_put(pf_export *x, const pf_record *rec, int *why)
{
	pf_sfentry e;
	char text[PF_PLAIN_MAX];

	if (!entry(x, rec, sfmove(x), &e, why))
		return 0;
	return out_put(x, text, pf_plain_encode(&e, text)) == -1 ? -1 : 1;
}

static int
bin_put(pf_export *x, const pf_record *rec, int *why)
{
	pf_sfentry e;
	uint8_t out[PF_BIN_SIZE];

	if (!entry(x, rec, sfmove(x), &e, why))
		return 0;
	/* entry() has checked the board and move: what is refused here is
	   what the format cannot hold */
	if (pf_bin_encode(&e, out, x->err, sizeof(x->err)) == -1) {
		*why = PF_EXPORT_UNFIT;
		return 0;
	}
	return out_put(x, out, sizeof(out)) == -1 ? -1 : 1;
}

_Static_assert(PF_MARLIN_SIZE == 32 && PF_BULLET_SIZE == 32,
    "the boards of board_put are 32 bytes");

/* An entry of a format of 32-byte boards (its encode). */
static int
board_put(pf_export *x, const pf_record *rec, int *why)
{
	pf_sfentry e;
	uint8_t out[32];

	if (!entry(x, rec, PF_SFMOVE_ANY, &e, why))
		return 0;
	x->fmt->encode(&e, out);
	return out_put(x, out, sizeof(out)) == -1 ? -1 : 1;
}

static int
viri_open(pf_export *x)
{
	if (buf_open(x) == -1)
		return -1;
	if ((x->viri = pf_viri_writer_new()) == NULL)
		return fail(x, "%s", strerror(ENOMEM));
	return 0;
}

static int
viri_end(pf_export *x)
{
	const uint8_t *p;
	size_t n;

	pf_viri_writer_end(x->viri, &p, &n);
	return out_put(x, p, n);
}

static int
viri_add(pf_export *x, const pf_record *rec, int *why)
{
	pf_sfentry e;

	if (!entry(x, rec, PF_SFMOVE_PLAYED, &e, why))
		return 0;
	if (!pf_viri_writer_follows(x->viri, &e) && viri_end(x) == -1)
		return -1;
	if (pf_viri_writer_add(x->viri, &e, x->err, sizeof(x->err)) == -1) {
		/* a game whose result changes mid-way: a new one */
		if (viri_end(x) == -1)
			return -1;
		if (pf_viri_writer_add(x->viri, &e, x->err,
		    sizeof(x->err)) == -1) {
			*why = PF_EXPORT_INVALID;
			return 0;
		}
	}
	return 1;
}

/* As lc0_put: a game ends at its last record. */
static int
viri_put(pf_export *x, const pf_record *rec, int *why)
{
	int r = viri_add(x, rec, why);

	if (r != -1 && (rec->flags & PF_RF_LAST) && viri_end(x) == -1)
		return -1;
	return r;
}

static int
viri_close(pf_export *x)
{
	if (viri_end(x) == -1)
		return -1;
	return buf_close(x);
}

/* ---- npy: one .npy file per array in a directory ---------------------- */

static int
npy_add(pf_export *x, const char *name, void **slot, const char *descr,
    size_t size, int ntail, const uint32_t *tail)
{
	struct npyarray *a = &x->arrays[x->narrays];
	char path[PATH_MAX];
	size_t rowbytes = size;
	int i;

	for (i = 0; i < ntail; i++)
		rowbytes *= tail[i];
	if ((*slot = calloc(NPY_ROWS, rowbytes)) == NULL)
		return fail(x, "%s", strerror(ENOMEM));
	a->slot = slot;
	x->narrays++;
	snprintf(path, sizeof(path), "%s/%s.npy", x->dir, name);
	if ((a->f = pf_npy_create(path, descr, size, ntail, tail)) == NULL)
		return fail(x, "%s: %s", path, strerror(errno));
	return 0;
}

static int
npy_open(pf_export *x)
{
	const pf_export_opts *o = &x->o;
	pf_loader_opts lo;
	pf_batch *b = &x->batch;
	uint32_t w, k = (uint32_t)o->policy_width, pl[3] = { 14, 8, 8 };

	memset(&lo, 0, sizeof(lo));
	lo.features = o->features;
	lo.perspective = o->perspective;
	lo.policy_width = o->policy_width;
	lo.eval = o->eval;
	lo.value_method = o->value_method;
	if ((x->loader = pf_loader_open(NULL, 0, &lo, x->err,
	    sizeof(x->err))) == NULL)
		return -1;
	w = (uint32_t)pf_loader_width(x->loader);
	if (npy_add(x, "features", (void **)&b->features, "<i4", 4, 1,
	    &w) == -1 ||
	    (o->opposite && npy_add(x, "features_opp",
	    (void **)&b->features_opp, "<i4", 4, 1, &w) == -1) ||
	    npy_add(x, "value", (void **)&b->value, "<f4", 4, 0, NULL) ==
	    -1 ||
	    npy_add(x, "score", (void **)&b->score, "<f4", 4, 0, NULL) ==
	    -1 ||
	    npy_add(x, "result", (void **)&b->result, "<f4", 4, 0, NULL) ==
	    -1 ||
	    npy_add(x, "move", (void **)&b->move, "<i4", 4, 0, NULL) == -1 ||
	    npy_add(x, "best", (void **)&b->best, "<i4", 4, 0, NULL) == -1 ||
	    npy_add(x, "ply", (void **)&b->ply, "<i4", 4, 0, NULL) == -1 ||
	    npy_add(x, "game_id", (void **)&b->game_id, "<u8", 8, 0,
	    NULL) == -1)
		return -1;
	if (o->policy_width > 0 && (npy_add(x, "policy_index",
	    (void **)&b->policy_index, "<i4", 4, 1, &k) == -1 ||
	    npy_add(x, "policy_prob", (void **)&b->policy_prob, "<f4", 4, 1,
	    &k) == -1))
		return -1;
	if (o->planes && npy_add(x, "planes", (void **)&b->planes, "|u1", 1,
	    3, pl) == -1)
		return -1;
	if (o->pqr && (npy_add(x, "features_q", (void **)&b->features_q,
	    "<i4", 4, 1, &w) == -1 ||
	    npy_add(x, "features_r", (void **)&b->features_r, "<i4", 4, 1,
	    &w) == -1 ||
	    npy_add(x, "has_pqr", (void **)&b->has_pqr, "|b1", 1, 0,
	    NULL) == -1))
		return -1;
	return 0;
}

/* Write the buffered rows. */
static int
npy_flush(pf_export *x)
{
	int i;

	for (i = 0; i < x->narrays; i++)
		if (pf_npy_append(x->arrays[i].f, *x->arrays[i].slot,
		    x->rows) == -1)
			return fail(x, "%s", pf_npy_error(x->arrays[i].f));
	x->rows = 0;
	return 0;
}

/* Write the buffered rows and hand on what the files hold. */
static int
npy_idle(pf_export *x)
{
	int i;

	if (npy_flush(x) == -1)
		return -1;
	for (i = 0; i < x->narrays; i++)
		if (pf_npy_flush(x->arrays[i].f) == -1)
			return fail(x, "%s", pf_npy_error(x->arrays[i].f));
	return 0;
}

static int
npy_put(pf_export *x, const pf_record *rec, int *why)
{
	if (pf_loader_row(x->loader, &x->batch, x->rows, rec) == -1) {
		snprintf(x->err, sizeof(x->err), "%s",
		    pf_loader_error(x->loader));
		*why = PF_EXPORT_INVALID;
		return 0;
	}
	if (++x->rows == NPY_ROWS && npy_flush(x) == -1)
		return -1;
	return 1;
}

static int
npy_close(pf_export *x)
{
	int i, rc = 0;

	if (npy_flush(x) == -1)
		return -1;
	for (i = 0; i < x->narrays; i++) {
		if (rc == 0 && pf_npy_close(x->arrays[i].f, x->err,
		    sizeof(x->err)) == -1)
			rc = -1;
		else if (rc == -1)
			pf_npy_discard(x->arrays[i].f);
		x->arrays[i].f = NULL;
	}
	return rc;
}

/* ---- lc0: V6TrainingData chunk files, one game each ------------------- */

static int
lc0_open(pf_export *x)
{
	if (pf_lc0_input_name(x->o.lc0_input != 0 ? x->o.lc0_input :
	    PF_LC0_CLASSIC) == NULL)
		return fail(x, "lc0 input format %d: not 1 to 5, 132 or 133",
		    x->o.lc0_input);
	if ((x->game = calloc(GAME_MAX, sizeof(*x->game))) == NULL)
		return fail(x, "%s", strerror(ENOMEM));
	return 0;
}

/* Write the gathered game as DIR/training.N.gz (gzip, as lc0 writes its
   chunks).  0 / -1. */
static int
lc0_flush(pf_export *x)
{
	uint8_t *rec = x->rec;
	const pf_board *hist[PF_LC0_LOOKBACK + 1];
	char path[PATH_MAX], tmp[PATH_MAX];
	int rep[PF_LC0_LOOKBACK + 1], i, h, n, end, look;
	gzFile gz;

	if (x->ngame == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/training.%" PRIu64 ".gz", x->dir,
	    x->chunks);
	snprintf(tmp, sizeof(tmp), "%s/.tmp-training.%" PRIu64 ".gz", x->dir,
	    x->chunks);
	n = x->ngame;
	x->ngame = 0;
	if ((gz = gzopen(tmp, "wb")) == NULL)
		return fail(x, "%s: %s", tmp, strerror(errno));
	/* moves left: to the game's end as far as the input shows it */
	end = x->game[n - 1].ply + 1;
	/* the positions the format looks at, and the one before the last
	   of them (its en passant square for lc0) */
	look = (pf_lc0_base_format(x->o.lc0_input) == PF_LC0_CANONICAL_V2 ?
	    PF_LC0_LOOKBACK : PF_LC0_HISTORY) + 1;
	for (i = 0; i < n; i++) {
		int nh;

		for (h = 0, nh = 0; h < look && i - h >= 0; h++) {
			/* history only through consecutive plies */
			if (h > 0 && x->game[i - h].ply + 1 !=
			    x->game[i - h + 1].ply)
				break;
			hist[nh] = &x->game[i - h].board;
			rep[nh++] = x->game[i - h].rep;
		}
		x->game[i].v.plies_left = (float)(end - x->game[i].ply);
		pf_lc0_v6_encode(hist, rep, nh, &x->game[i].v, rec);
		if (gzwrite(gz, rec, PF_LC0_V6_SIZE) != PF_LC0_V6_SIZE) {
			gzclose(gz);
			(void)unlink(tmp);
			return fail(x, "%s: write error", tmp);
		}
	}
	if (gzclose(gz) != Z_OK || rename(tmp, path) == -1) {
		(void)unlink(tmp);
		return fail(x, "%s: %s", path, strerror(errno));
	}
	x->chunks++;
	return 0;
}

static int
lc0_add(pf_export *x, const pf_record *rec, int *why)
{
	pf_sfentry e;
	pf_policy *pol = NULL;
	pf_value val, tmpval;
	pf_eval ev;
	pf_ext xt;
	pf_ext_iter it;
	struct lc0pos *g;
	pf_move moves[PF_MAX_MOVES];
	int nm, i, k, black, have_val = 0, have_eval, idx, tf;
	const char *bad = NULL;
	float q, d, best;

	if (!entry(x, rec, sfmove(x), &e, why))
		return 0;
	memset(&val, 0, sizeof(val));	/* read only with have_val */
	have_eval = pf_evalsel_find(&x->sel, rec, &ev) == 1;
	pf_ext_iter_init(&it, rec);
	while (pf_ext_next(&it, &xt) == 1) {
		/* a malformed target is an invalid record, as npy's */
		if (xt.type == PF_EXT_POLICY) {
			if (pf_policy_decode(&xt, &x->pol) == -1) {
				bad = "malformed policy";
				break;
			}
			pol = &x->pol;
		} else if (xt.type == PF_EXT_VALUE) {
			if (pf_value_decode(&xt, &tmpval) == -1) {
				bad = "malformed value target";
				break;
			}
			/* the wanted one: a later value of another method
			   must not overwrite it */
			if (pf_value_wanted(x->o.value_method,
			    tmpval.method)) {
				val = tmpval;
				have_val = 1;
			}
		}
	}
	if (bad != NULL) {
		*why = PF_EXPORT_INVALID;
		snprintf(x->err, sizeof(x->err), "%s", bad);
		return 0;
	}
	if (pol == NULL) {
		*why = PF_EXPORT_NO_POLICY;
		return 0;
	}
	/* a record of no game is a game of its own */
	if (x->ngame > 0 && (rec->game_id != x->game_id || rec->game_id == 0 ||
	    x->ngame == GAME_MAX) && lc0_flush(x) == -1)
		return -1;
	x->game_id = rec->game_id;
	g = &x->game[x->ngame];
	memset(g, 0, sizeof(*g));
	g->board = e.board;
	g->ply = e.ply;
	/* a repeat: the same position earlier in the game, for lc0 (whose
	   boards differ by an en passant square this one need not have) */
	g->ep_only = x->ngame > 0 && x->game[x->ngame - 1].ply + 1 == e.ply &&
	    pf_lc0_ep(&e.board, &x->game[x->ngame - 1].board) != e.board.ep;
	for (i = 0; i < x->ngame && !g->ep_only; i++)
		if (x->game[i].board.key == e.board.key && !x->game[i].ep_only)
			g->rep = 1;
	black = e.board.stm == PF_BLACK;
	g->v.input_format = x->o.lc0_input;
	tf = g->v.transform = pf_lc0_transform(&e.board, x->o.lc0_input);
	/* the policy: legal moves their probability, the others -1 */
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		g->v.probabilities[i] = -1;
	nm = pf_gen_legal(&e.board, moves);
	for (i = 0; i < nm; i++)
		if ((idx = pf_lc0_index_tf(moves[i], black, tf)) >= 0)
			g->v.probabilities[idx] = 0;
	best = -1;
	for (k = 0; k < pol->n; k++)
		if ((idx = pf_lc0_index_tf(pol->move[k], black, tf)) >= 0) {
			g->v.probabilities[idx] = pol->prob[k] / 65535.0f;
			if (pol->prob[k] > best) {
				best = pol->prob[k];
				g->v.best_idx = (uint16_t)idx;
			}
		}
	if (have_eval && ev.best != PF_MOVE_NONE &&
	    (idx = pf_lc0_index_tf(ev.best, black, tf)) >= 0)
		g->v.best_idx = (uint16_t)idx;
	g->v.played_idx = (uint16_t)pf_lc0_index_tf(e.move, black, tf);
	/* Q and D: the engine's W/D/L, else the value target, else the
	   score by METHODS.md's logistic (alpha 170) */
	if (have_eval && (ev.flags & PF_EVF_WDL)) {
		q = (ev.wdl[0] - ev.wdl[2]) / 1000.0f;
		d = ev.wdl[1] / 1000.0f;
	} else if (have_val) {
		q = val.scale == 1 ? 2 * val.target - 1 : val.target;
		d = 0;
	} else {
		q = (float)pf_value_logistic(pf_score_cp(ev.score_kind,
		    ev.score), 170);
		d = 0;
	}
	g->v.root_q = g->v.best_q = g->v.played_q = q;
	g->v.root_d = g->v.best_d = g->v.played_d = d;
	/* an unknown result as a draw, as every format writes it */
	g->v.result_q = (float)e.result;
	g->v.result_d = rec->result == PF_RESULT_DRAW ||
	    rec->result == PF_RESULT_UNKNOWN;
	g->v.orig_q = g->v.orig_d = g->v.orig_m = NAN;
	x->ngame++;
	return 1;
}

/* A record flagged last ends its game: the chunk is written now, not
   when the next game begins, so that it flows from a waiting pipe. */
static int
lc0_put(pf_export *x, const pf_record *rec, int *why)
{
	int r = lc0_add(x, rec, why);

	if (r != -1 && (rec->flags & PF_RF_LAST || rec->game_id == 0) &&
	    x->ngame > 0 && rec->game_id == x->game_id && lc0_flush(x) == -1)
		return -1;
	return r;
}

static int
lc0_close(pf_export *x)
{
	return lc0_flush(x);
}

/* ---- the formats ------------------------------------------------------- */

/* binpack's and lc0's chunks go out whole, when complete: no idle */
static const struct format formats[] = {
	{ "binpack", ".binpack", 0, PF_EXPORT_DRAWS | PF_EXPORT_OPT_BEST,
	    binpack_open, binpack_put, NULL, binpack_close, NULL },
	{ "plain", ".plain", 0, PF_EXPORT_TEXT | PF_EXPORT_DRAWS |
	    PF_EXPORT_OPT_BEST, buf_open, plain_put, out_flush, buf_close,
	    NULL },
	{ "bin", ".bin", 0, PF_EXPORT_DRAWS | PF_EXPORT_OPT_BEST,
	    buf_open, bin_put, out_flush, buf_close, NULL },
	{ "marlinformat", ".marlin", 0, PF_EXPORT_DRAWS,
	    buf_open, board_put, out_flush, buf_close, pf_marlin_encode },
	{ "bulletformat", ".bullet", 0, PF_EXPORT_DRAWS,
	    buf_open, board_put, out_flush, buf_close, pf_bullet_encode },
	{ "viriformat", ".viri", 0, PF_EXPORT_DRAWS,
	    viri_open, viri_put, out_flush, viri_close, NULL },
	{ "npy", "", 1, PF_EXPORT_OPT_NPY | PF_EXPORT_OPT_VALUE,
	    npy_open, npy_put, npy_idle, npy_close, NULL },
	{ "lc0", "", 1, PF_EXPORT_DRAWS | PF_EXPORT_OPT_BEST |
	    PF_EXPORT_OPT_VALUE | PF_EXPORT_OPT_LC0INPUT, lc0_open, lc0_put,
	    NULL, lc0_close, NULL },
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const char *const pf_export_formats[] = { "binpack", "plain", "bin",
	"marlinformat", "bulletformat", "viriformat", "npy", "lc0", NULL };

static const struct format *
find(const char *name)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

int
pf_export_directory(const char *format)
{
	const struct format *f = find(format);

	return f == NULL ? -1 : f->directory;
}

const char *
pf_export_suffix(const char *format)
{
	const struct format *f = find(format);

	return f == NULL ? NULL : f->suffix;
}

int
pf_export_move_word(const char *word)
{
	return strcmp(word, "best") == 0 ? 1 : strcmp(word, "played") == 0 ?
	    0 : -1;
}

unsigned
pf_export_info(const char *format)
{
	const struct format *f = find(format);

	return f == NULL ? 0 : f->info;
}

int
pf_export_best_move(const char *format)
{
	return (pf_export_info(format) & PF_EXPORT_OPT_BEST) != 0;
}

pf_export *
pf_export_open(const char *format, int fd, const char *dir, const char *name,
    const pf_export_opts *o, char *err, size_t errlen)
{
	const struct format *f;
	pf_export *x;

	if ((f = find(format)) == NULL) {
		snprintf(err, errlen, "%s: unknown format", format);
		return NULL;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL ||
	    (x->name = strdup(name)) == NULL ||
	    (f->directory && (x->dir = strdup(dir)) == NULL)) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		pf_export_free(x);
		return NULL;
	}
	x->fmt = f;
	x->o = *o;
	x->fd = fd;
	if (o->best_move && !(f->info & PF_EXPORT_OPT_BEST)) {
		snprintf(err, errlen, "%s holds no best move in place of the "
		    "move played (binpack, plain, bin and lc0 do)", format);
		pf_export_free(x);
		return NULL;
	}
	if (pf_evalsel_parse(o->eval ? o->eval : "deepest", &x->sel, err,
	    errlen) == -1) {
		pf_export_free(x);
		return NULL;
	}
	if (f->directory && mkdir(dir, 0777) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		pf_export_free(x);
		return NULL;
	}
	if (f->open(x) == -1) {
		snprintf(err, errlen, "%s", x->err);
		pf_export_free(x);
		return NULL;
	}
	return x;
}

int
pf_export_put(pf_export *x, const pf_record *rec, int *why)
{
	int rc;

	*why = 0;
	if ((rc = x->fmt->put(x, rec, why)) == 1)
		x->written++;
	return rc;
}

int
pf_export_close(pf_export *x)
{
	return x->fmt->close(x);
}

void
pf_export_free(pf_export *x)
{
	int i;

	if (x == NULL)
		return;
	for (i = 0; i < x->narrays; i++) {
		if (x->arrays[i].f != NULL)
			pf_npy_discard(x->arrays[i].f);
		free(*x->arrays[i].slot);
	}
	pf_loader_free(x->loader);
	pf_binpack_writer_free(x->bp);
	if (x->viri != NULL)
		pf_viri_writer_free(x->viri);
	free(x->buf);
	free(x->game);
	free(x->dir);
	free(x->name);
	free(x);
}

int
pf_export_idle(pf_export *x)
{
	return x->fmt->idle == NULL ? 0 : x->fmt->idle(x);
}

const char *
pf_export_error(const pf_export *x)
{
	return x->err;
}

uint64_t
pf_export_written(const pf_export *x)
{
	return x->written;
}

uint64_t
pf_export_unknown_results(const pf_export *x)
{
	return x->unknown;
}
