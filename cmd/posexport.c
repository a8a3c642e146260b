/*
 * posexport - a record stream in a trainer's native format: Stockfish's
 * binpack, plain text and bin, bullet's marlinformat and viriformat, and
 * NumPy arrays.  Records a format cannot hold (no evaluation, no move) are
 * skipped and counted, or with --require reported as errors.
 *
 * Each format is a small exporter: open, put one record, close.  The
 * codecs live in lib/ (binpack.c, sfformats.c, npy.c, loader.c); this
 * program only chooses the one asked for and runs the filter loop.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "posflow.h"
#include "evalsel.h"
#include "filter.h"
#include "loader.h"
#include "binpack.h"
#include "boardchain.h"
#include "lc0.h"
#include "npy.h"
#include "sfentry.h"
#include "sfformats.h"
#include "target.h"

#define NPY_ROWS	4096	/* rows buffered before they are written */
#define NPY_MAX		16	/* arrays */
#define GAME_MAX	2048	/* lc0: positions of one game kept */

struct opts {
	const char *format;
	const char *output;
	const char *eval;
	int force, require;
	/* npy */
	unsigned blocks;	/* PF_FEAT_* of features */
	int perspective, opposite, policy_width, pqr, planes, value_method;
};

struct exporter;

struct run {
	const struct opts *o;
	const struct exporter *x;
	pf_evalsel sel;
	pf_boardchain chain;	/* boards from the record before */
	uint64_t records, written, no_eval, no_move, no_policy, invalid,
	    no_result;
	/* lc0: the game being gathered, written as one chunk file */
	struct lc0pos {
		pf_board board;
		uint16_t ply;
		int rep;
		pf_lc0_v6 v;
	} *game;
	int ngame;
	uint64_t game_id, chunks;
	/* the Stockfish and bullet formats */
	pf_binpack_writer *bp;
	pf_viri_writer *viri;
	uint8_t *buf;		/* bytes not yet written to f->fd */
	size_t buflen;
	/* npy */
	pf_loader *loader;
	pf_batch batch;
	size_t rows;
	int narrays;
	struct npyarray {
		const char *name;
		void **slot;		/* the pf_batch field */
		size_t rowbytes;
		pf_npy *f;
	} arrays[NPY_MAX];
};

/* One format. */
struct exporter {
	const char *name;
	const char *what;
	int directory;		/* -o names a directory it creates */
	int (*open)(struct run *R, pf_filter *f);
	void (*put)(struct run *R, pf_filter *f, const pf_record *rec,
	    uint64_t recno);
	int (*close)(struct run *R, pf_filter *f);
};

static const char synopsis[] =
    "usage: posexport [-fhV] -F format [--eval selector] [--require] "
    "[-o file | dir]\n"
    "                 [--features list] [--opposite] [--perspective stm | "
    "white]\n"
    "                 [--planes] [--policy-width k] [--pqr] [--value "
    "method] [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

/* ---- npy: one .npy file per array in a directory ---------------------- */

static int
npy_add(struct run *R, const char *dir, const char *name, void **slot,
    const char *descr, size_t size, int ntail, const uint32_t *tail)
{
	struct npyarray *a = &R->arrays[R->narrays];
	char path[PATH_MAX];
	size_t rowbytes = size;
	int i;

	for (i = 0; i < ntail; i++)
		rowbytes *= tail[i];
	if ((*slot = calloc(NPY_ROWS, rowbytes)) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
	if ((a->f = pf_npy_create(path, descr, size, ntail, tail)) == NULL) {
		pf_warn("%s", path);
		return -1;
	}
	a->name = name;
	a->slot = slot;
	a->rowbytes = rowbytes;
	R->narrays++;
	return 0;
}

static int
npy_open(struct run *R, pf_filter *f)
{
	const struct opts *o = R->o;
	pf_loader_opts lo;
	pf_batch *b = &R->batch;
	char err[256];
	uint32_t w, k = (uint32_t)o->policy_width, pl[3] = { 14, 8, 8 };
	int rc = 0;

	(void)f;
	memset(&lo, 0, sizeof(lo));
	lo.features = o->blocks;
	lo.perspective = o->perspective;
	lo.policy_width = o->policy_width;
	lo.eval = o->eval;
	lo.value_method = o->value_method;
	if ((R->loader = pf_loader_open(NULL, 0, &lo, err, sizeof(err))) ==
	    NULL) {
		pf_warnx("%s", err);
		return -1;
	}
	if (mkdir(o->output, 0777) == -1 && errno != EEXIST) {
		pf_warn("%s", o->output);
		return -1;
	}
	w = (uint32_t)pf_loader_width(R->loader);
	rc |= npy_add(R, o->output, "features", (void **)&b->features, "<i4",
	    4, 1, &w);
	if (o->opposite)
		rc |= npy_add(R, o->output, "features_opp",
		    (void **)&b->features_opp, "<i4", 4, 1, &w);
	rc |= npy_add(R, o->output, "value", (void **)&b->value, "<f4", 4, 0,
	    NULL);
	rc |= npy_add(R, o->output, "score", (void **)&b->score, "<f4", 4, 0,
	    NULL);
	rc |= npy_add(R, o->output, "result", (void **)&b->result, "<f4", 4,
	    0, NULL);
	rc |= npy_add(R, o->output, "move", (void **)&b->move, "<i4", 4, 0,
	    NULL);
	rc |= npy_add(R, o->output, "ply", (void **)&b->ply, "<i4", 4, 0,
	    NULL);
	rc |= npy_add(R, o->output, "game_id", (void **)&b->game_id, "<u8", 8,
	    0, NULL);
	if (o->policy_width > 0) {
		rc |= npy_add(R, o->output, "policy_index",
		    (void **)&b->policy_index, "<i4", 4, 1, &k);
		rc |= npy_add(R, o->output, "policy_prob",
		    (void **)&b->policy_prob, "<f4", 4, 1, &k);
	}
	if (o->planes)
		rc |= npy_add(R, o->output, "planes", (void **)&b->planes,
		    "|u1", 1, 3, pl);
	if (o->pqr) {
		rc |= npy_add(R, o->output, "features_q",
		    (void **)&b->features_q, "<i4", 4, 1, &w);
		rc |= npy_add(R, o->output, "features_r",
		    (void **)&b->features_r, "<i4", 4, 1, &w);
		rc |= npy_add(R, o->output, "has_pqr", (void **)&b->has_pqr,
		    "|i1", 1, 0, NULL);
	}
	return rc ? -1 : 0;
}

/* Write the buffered rows. */
static int
npy_flush(struct run *R)
{
	int i;

	for (i = 0; i < R->narrays; i++)
		if (pf_npy_append(R->arrays[i].f, *R->arrays[i].slot,
		    R->rows) == -1) {
			pf_warnx("%s", pf_npy_error(R->arrays[i].f));
			return -1;
		}
	R->rows = 0;
	return 0;
}

static void
npy_put(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno)
{
	if (pf_loader_row(R->loader, &R->batch, R->rows, rec) == -1) {
		pf_filter_error(f, recno, "%s; skipped",
		    pf_loader_error(R->loader));
		R->invalid++;
		return;
	}
	R->written++;
	if (++R->rows == NPY_ROWS && npy_flush(R) == -1) {
		f->status = PF_EXIT_DATA;
		f->write_failed = 1;
		f->stop = 1;
	}
}

static int
npy_close(struct run *R, pf_filter *f)
{
	char err[512];
	int i, rc = 0;

	if (!f->write_failed && npy_flush(R) == -1)
		rc = -1;
	for (i = 0; i < R->narrays; i++) {
		if (rc == -1 || f->write_failed)
			pf_npy_discard(R->arrays[i].f);
		else if (pf_npy_close(R->arrays[i].f, err, sizeof(err)) ==
		    -1) {
			pf_warnx("%s", err);
			rc = -1;
		}
		free(*R->arrays[i].slot);
	}
	pf_loader_free(R->loader);
	return rc;
}

/* ---- entries: binpack, plain, bin, marlinformat, bulletformat, viri -- */

#define OUTBUF	(1u << 16)

/* Write the buffered bytes; a closed pipe downstream ends the run
   quietly, another error is reported.  0 / -1. */
static int
out_flush(struct run *R, pf_filter *f)
{
	size_t off = 0;
	ssize_t n;

	while (off < R->buflen) {
		if ((n = write(f->fd, R->buf + off, R->buflen - off)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EPIPE) {
				pf_warn("%s", f->output ? f->output :
				    "stdout");
				f->status = PF_EXIT_DATA;
				f->write_failed = 1;
			}
			f->stop = 1;
			R->buflen = 0;
			return -1;
		}
		off += (size_t)n;
	}
	R->buflen = 0;
	return 0;
}

static void
out_put(struct run *R, pf_filter *f, const void *p, size_t n)
{
	if (R->buflen + n > OUTBUF && out_flush(R, f) == -1)
		return;
	memcpy(R->buf + R->buflen, p, n);
	R->buflen += n;
}

/* A record as an entry, or a count (and with --require an error) of why
   it cannot be one: 1 / 0. */
static int
entry(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno,
    int need_move, pf_sfentry *e)
{
	const char *why = NULL;
	int rc;

	rc = pf_sfentry_from_record(rec, &R->sel, need_move, &R->chain, e,
	    &why);
	if (rc == 1) {
		if (rec->result == PF_RESULT_UNKNOWN)
			R->no_result++;
		return 1;
	}
	if (rc == -1) {
		pf_filter_error(f, recno, "malformed extension area; skipped");
		R->invalid++;
		return 0;
	}
	if (strcmp(why, "no evaluation") == 0)
		R->no_eval++;
	else if (strcmp(why, "no move") == 0)
		R->no_move++;
	else {
		pf_filter_error(f, recno, "%s; skipped", why);
		R->invalid++;
		return 0;
	}
	if (R->o->require)
		pf_filter_error(f, recno, "%s: -F %s cannot hold it", why,
		    R->o->format);
	return 0;
}

static int
buf_open(struct run *R, pf_filter *f)
{
	(void)f;
	if ((R->buf = malloc(OUTBUF)) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	return 0;
}

static int
buf_close(struct run *R, pf_filter *f)
{
	int rc = 0;

	if (!f->stop && out_flush(R, f) == -1 && f->write_failed)
		rc = -1;
	free(R->buf);
	return rc;
}

static int
binpack_open(struct run *R, pf_filter *f)
{
	if ((R->bp = pf_binpack_writer_open(f->fd, f->output ? f->output :
	    "stdout")) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	return 0;
}

static void
binpack_put(struct run *R, pf_filter *f, const pf_record *rec,
    uint64_t recno)
{
	pf_sfentry e;

	if (!entry(R, f, rec, recno, 1, &e))
		return;
	if (pf_binpack_write(R->bp, &e) == -1) {
		pf_warnx("%s", pf_binpack_writer_error(R->bp));
		f->status = PF_EXIT_DATA;
		f->write_failed = 1;
		f->stop = 1;
		return;
	}
	R->written++;
}

static int
binpack_close(struct run *R, pf_filter *f)
{
	int rc = 0;

	if (!f->stop && pf_binpack_writer_close(R->bp) == -1) {
		if (errno != EPIPE) {
			pf_warnx("%s", pf_binpack_writer_error(R->bp));
			rc = -1;
		}
	}
	pf_binpack_writer_free(R->bp);
	return rc;
}

static void
plain_put(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno)
{
	pf_sfentry e;
	char text[PF_PLAIN_MAX];

	if (!entry(R, f, rec, recno, 1, &e))
		return;
	out_put(R, f, text, pf_plain_encode(&e, text));
	R->written++;
}

static void
bin_put(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno)
{
	pf_sfentry e;
	uint8_t out[PF_BIN_SIZE];
	char err[128];

	if (!entry(R, f, rec, recno, 1, &e))
		return;
	if (pf_bin_encode(&e, out, err, sizeof(err)) == -1) {
		pf_filter_error(f, recno, "%s; skipped", err);
		R->invalid++;
		return;
	}
	out_put(R, f, out, sizeof(out));
	R->written++;
}

static void
marlin_put(struct run *R, pf_filter *f, const pf_record *rec,
    uint64_t recno)
{
	pf_sfentry e;
	uint8_t out[PF_MARLIN_SIZE];

	if (!entry(R, f, rec, recno, 0, &e))
		return;
	if (strcmp(R->o->format, "bulletformat") == 0)
		pf_bullet_encode(&e, out);
	else
		pf_marlin_encode(&e, out);
	out_put(R, f, out, sizeof(out));
	R->written++;
}

static int
viri_open(struct run *R, pf_filter *f)
{
	if (buf_open(R, f) == -1)
		return -1;
	if ((R->viri = pf_viri_writer_new()) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	return 0;
}

static void
viri_end(struct run *R, pf_filter *f)
{
	const uint8_t *p;
	size_t n;

	pf_viri_writer_end(R->viri, &p, &n);
	out_put(R, f, p, n);
}

static void
viri_put(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno)
{
	pf_sfentry e;
	char err[128];

	if (!entry(R, f, rec, recno, 1, &e))
		return;
	if (!pf_viri_writer_follows(R->viri, &e))
		viri_end(R, f);
	if (pf_viri_writer_add(R->viri, &e, err, sizeof(err)) == -1) {
		/* a game whose result changes mid-way: a new one */
		viri_end(R, f);
		if (pf_viri_writer_add(R->viri, &e, err, sizeof(err)) == -1) {
			pf_filter_error(f, recno, "%s; skipped", err);
			R->invalid++;
			return;
		}
	}
	R->written++;
}

static int
viri_close(struct run *R, pf_filter *f)
{
	if (!f->stop)
		viri_end(R, f);
	pf_viri_writer_free(R->viri);
	return buf_close(R, f);
}

/* ---- lc0: V6TrainingData chunk files, one game each ------------------- */

static int
lc0_open(struct run *R, pf_filter *f)
{
	(void)f;
	if (mkdir(R->o->output, 0777) == -1 && errno != EEXIST) {
		pf_warn("%s", R->o->output);
		return -1;
	}
	if ((R->game = calloc(GAME_MAX, sizeof(*R->game))) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	return 0;
}

/* Write the gathered game as DIR/training.N.gz (gzip, as lc0 writes its
   chunks).  0 / -1. */
static int
lc0_flush(struct run *R, pf_filter *f)
{
	static uint8_t rec[PF_LC0_V6_SIZE];
	const pf_board *hist[PF_LC0_HISTORY];
	char path[PATH_MAX], tmp[PATH_MAX];
	int rep[PF_LC0_HISTORY], i, h, n, end;
	gzFile gz;

	if (R->ngame == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/training.%" PRIu64 ".gz",
	    R->o->output, R->chunks);
	snprintf(tmp, sizeof(tmp), "%s/.tmp-training.%" PRIu64 ".gz",
	    R->o->output, R->chunks);
	if ((gz = gzopen(tmp, "wb")) == NULL) {
		pf_warn("%s", tmp);
		goto fail;
	}
	/* moves left: to the game's end as far as the input shows it */
	end = R->game[R->ngame - 1].ply + 1;
	for (i = 0; i < R->ngame; i++) {
		for (h = 0, n = 0; h < PF_LC0_HISTORY && i - h >= 0; h++) {
			/* history only through consecutive plies */
			if (h > 0 && R->game[i - h].ply + 1 !=
			    R->game[i - h + 1].ply)
				break;
			hist[n] = &R->game[i - h].board;
			rep[n++] = R->game[i - h].rep;
		}
		R->game[i].v.plies_left = (float)(end - R->game[i].ply);
		pf_lc0_v6_encode(hist, rep, n, &R->game[i].v, rec);
		if (gzwrite(gz, rec, sizeof(rec)) != (int)sizeof(rec)) {
			pf_warnx("%s: write error", tmp);
			gzclose(gz);
			(void)unlink(tmp);
			goto fail;
		}
	}
	if (gzclose(gz) != Z_OK || rename(tmp, path) == -1) {
		pf_warn("%s", path);
		(void)unlink(tmp);
		goto fail;
	}
	R->chunks++;
	R->ngame = 0;
	return 0;
fail:
	f->status = PF_EXIT_DATA;
	f->write_failed = 1;
	f->stop = 1;
	R->ngame = 0;
	return -1;
}

static void
lc0_put(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno)
{
	pf_sfentry e;
	pf_policy *pol = NULL;
	pf_value val;
	pf_eval ev;
	pf_ext x;
	pf_ext_iter it;
	struct lc0pos *g;
	pf_move moves[PF_MAX_MOVES];
	int nm, i, k, black, have_val = 0, have_eval, rc, idx;
	static pf_policy polbuf;
	float q, d, best;

	if (!entry(R, f, rec, recno, 1, &e))
		return;
	have_eval = pf_evalsel_find(&R->sel, rec, &ev) == 1;
	pf_ext_iter_init(&it, rec);
	while ((rc = pf_ext_next(&it, &x)) == 1) {
		if (x.type == PF_EXT_POLICY && pf_policy_decode(&x,
		    &polbuf) == 0)
			pol = &polbuf;
		else if (x.type == PF_EXT_VALUE && pf_value_decode(&x,
		    &val) == 0 && (R->o->value_method == 0 ||
		    val.method == R->o->value_method))
			have_val = 1;
	}
	if (pol == NULL) {
		R->no_policy++;
		if (R->o->require)
			pf_filter_error(f, recno, "no policy target: -F lc0 "
			    "cannot hold it");
		return;
	}
	if (R->ngame > 0 && (rec->game_id != R->game_id ||
	    R->ngame == GAME_MAX))
		if (lc0_flush(R, f) == -1)
			return;
	R->game_id = rec->game_id;
	g = &R->game[R->ngame];
	memset(g, 0, sizeof(*g));
	g->board = e.board;
	g->ply = e.ply;
	for (i = 0; i < R->ngame; i++)
		if (R->game[i].board.key == e.board.key)
			g->rep = 1;
	black = e.board.stm == PF_BLACK;
	/* the policy: legal moves their probability, the others -1 */
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		g->v.probabilities[i] = -1;
	nm = pf_gen_legal(&e.board, moves);
	for (i = 0; i < nm; i++)
		if ((idx = pf_lc0_index(moves[i], black)) >= 0)
			g->v.probabilities[idx] = 0;
	best = -1;
	for (k = 0; k < pol->n; k++)
		if ((idx = pf_lc0_index(pol->move[k], black)) >= 0) {
			g->v.probabilities[idx] = pol->prob[k] / 65535.0f;
			if (pol->prob[k] > best) {
				best = pol->prob[k];
				g->v.best_idx = (uint16_t)idx;
			}
		}
	if (have_eval && ev.best != PF_MOVE_NONE &&
	    (idx = pf_lc0_index(ev.best, black)) >= 0)
		g->v.best_idx = (uint16_t)idx;
	g->v.played_idx = (uint16_t)pf_lc0_index(e.move, black);
	/* Q and D: the engine's W/D/L, else the value target */
	if (have_eval && (ev.flags & PF_EVF_WDL)) {
		q = (ev.wdl[0] - ev.wdl[2]) / 1000.0f;
		d = ev.wdl[1] / 1000.0f;
	} else if (have_val) {
		q = val.scale == 1 ? 2 * val.target - 1 : val.target;
		d = 0;
	} else {
		/* the score alone: METHODS.md's logistic (alpha 170) */
		q = (float)pf_value_logistic(pf_score_cp(ev.score_kind,
		    ev.score), 170);
		d = 0;
	}
	g->v.root_q = g->v.best_q = g->v.played_q = q;
	g->v.root_d = g->v.best_d = g->v.played_d = d;
	g->v.result_q = (float)e.result;
	g->v.result_d = rec->result == PF_RESULT_DRAW;
	g->v.orig_q = g->v.orig_d = g->v.orig_m = NAN;
	R->ngame++;
	R->written++;
}

static int
lc0_close(struct run *R, pf_filter *f)
{
	int rc = 0;

	if (!f->stop && lc0_flush(R, f) == -1)
		rc = -1;
	free(R->game);
	return rc;
}

/* ---- the formats ------------------------------------------------------- */

static const struct exporter exporters[] = {
	{ "binpack", "Stockfish's binpack (nnue-pytorch, bullet)", 0,
	    binpack_open, binpack_put, binpack_close },
	{ "plain", "Stockfish's plain text", 0, buf_open, plain_put,
	    buf_close },
	{ "bin", "Stockfish's 40-byte PackedSfenValue", 0, buf_open, bin_put,
	    buf_close },
	{ "marlinformat", "bullet's 32-byte marlinformat boards", 0,
	    buf_open, marlin_put, buf_close },
	{ "bulletformat", "bullet's 32-byte ChessBoard", 0, buf_open,
	    marlin_put, buf_close },
	{ "viriformat", "bullet's viriformat games", 0, viri_open, viri_put,
	    viri_close },
	{ "npy", "NumPy arrays, one .npy file each, in a directory", 1,
	    npy_open, npy_put, npy_close },
	{ "lc0", "lczero-training's V6TrainingData, gzip chunks, a game each",
	    1, lc0_open, lc0_put, lc0_close },
};
#define NEXPORTERS (sizeof(exporters) / sizeof(exporters[0]))

static const struct exporter *
find_exporter(const char *name)
{
	size_t i;

	for (i = 0; i < NEXPORTERS; i++)
		if (strcmp(exporters[i].name, name) == 0)
			return &exporters[i];
	return NULL;
}

static void
put(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;

	R->records++;
	R->x->put(R, f, rec, recno);
}

/* "ALL+H+..." into PF_FEAT_* bits: 0 when a block is unknown. */
static unsigned
feature_blocks(const char *list)
{
	static const char *const names[] = { "ALL", "H", "V", "D1", "D2" };
	const char *p, *q;
	unsigned blocks = 0;
	size_t n, i;

	for (p = list; ; p = q + 1) {
		q = p + strcspn(p, "+");
		n = (size_t)(q - p);
		for (i = 0; i < 5; i++)
			if (strlen(names[i]) == n && strncmp(p, names[i], n) ==
			    0)
				break;
		if (i == 5)
			return 0;
		blocks |= 1u << i;
		if (*q == '\0')
			return blocks;
	}
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_EVAL = 256, O_REQUIRE, O_FEATURES, O_PERSP, O_OPP, O_POLW,
		O_PQR, O_PLANES, O_VALUE };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "eval", required_argument, NULL, O_EVAL },
		{ "require", no_argument, NULL, O_REQUIRE },
		{ "features", required_argument, NULL, O_FEATURES },
		{ "perspective", required_argument, NULL, O_PERSP },
		{ "opposite", no_argument, NULL, O_OPP },
		{ "policy-width", required_argument, NULL, O_POLW },
		{ "pqr", no_argument, NULL, O_PQR },
		{ "planes", no_argument, NULL, O_PLANES },
		{ "value", required_argument, NULL, O_VALUE },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const values[] = { "tanh", "logistic", "wdl",
		"wdl_engine", "linear" };
	const char *errstr, *what;
	int ch, i;

	memset(o, 0, sizeof(*o));
	o->blocks = PF_FEAT_ALL;
	while ((ch = getopt_long(argc, argv, "F:o:fhV", longopts, NULL)) !=
	    -1) {
		errstr = what = NULL;
		switch (ch) {
		case 'F':
			o->format = optarg;
			break;
		case O_EVAL:
			o->eval = optarg;
			break;
		case O_REQUIRE:
			o->require = 1;
			break;
		case O_FEATURES:
			if ((o->blocks = feature_blocks(optarg)) == 0) {
				errstr = "unknown block (ALL, H, V, D1, D2 "
				    "joined with +)";
				what = "--features";
			}
			break;
		case O_PERSP:
			if (strcmp(optarg, "stm") == 0)
				o->perspective = PF_PERSP_STM;
			else if (strcmp(optarg, "white") == 0)
				o->perspective = PF_PERSP_WHITE;
			else {
				errstr = "stm or white";
				what = "--perspective";
			}
			break;
		case O_OPP:
			o->opposite = 1;
			break;
		case O_POLW:
			o->policy_width = (int)pf_strtonum(optarg, 0,
			    PF_MAX_MOVES, &errstr);
			what = "--policy-width";
			break;
		case O_PQR:
			o->pqr = 1;
			break;
		case O_PLANES:
			o->planes = 1;
			break;
		case O_VALUE:
			for (i = 0; i < 5; i++)
				if (strcmp(optarg, values[i]) == 0)
					o->value_method = i + 1;
			if (o->value_method == 0) {
				errstr = "tanh, logistic, wdl, wdl_engine or "
				    "linear";
				what = "--value";
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			fputs(synopsis, stdout);
			return 0;
		case 'V':
			pf_print_version();
			return 0;
		default:
			usage();
			return 2;
		}
		if (errstr != NULL) {
			pf_warnx("%s %s: %s", what, optarg, errstr);
			usage();
			return 2;
		}
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	pf_filter f;
	char err[128];
	int r, i;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	memset(&R, 0, sizeof(R));
	R.o = &o;
	if (o.format == NULL || (R.x = find_exporter(o.format)) == NULL) {
		if (o.format == NULL)
			pf_warnx("-F format is required");
		else
			pf_warnx("-F %s: unknown format", o.format);
		fputs("formats:", stderr);
		for (i = 0; i < (int)NEXPORTERS; i++)
			fprintf(stderr, " %s", exporters[i].name);
		fputs("\n", stderr);
		usage();
		return PF_EXIT_USAGE;
	}
	if (R.x->directory && o.output == NULL) {
		pf_warnx("-F %s writes a directory: -o dir is required",
		    o.format);
		usage();
		return PF_EXIT_USAGE;
	}
	if (pf_evalsel_parse(o.eval ? o.eval : "deepest", &R.sel, err,
	    sizeof(err)) == -1) {
		pf_warnx("--eval: %s: %s", o.eval, err);
		usage();
		return PF_EXIT_USAGE;
	}
	if (R.x->directory)
		pf_filter_init(&f);
	else if (pf_filter_open_raw(&f, o.output, o.force) == -1)
		return pf_filter_close(&f);
	if (R.x->open(&R, &f) == -1) {
		f.status = PF_EXIT_DATA;
		f.write_failed = 1;
		f.stop = 1;
	} else {
		for (i = 0; (i == 0 || i < argc) && !f.stop; i++)
			pf_filter_file(&f, argc ? argv[i] : "-", put, &R);
	}
	if (R.x->close(&R, &f) == -1) {
		f.status = PF_EXIT_DATA;
		f.write_failed = 1;
	}
	if (pf_filter_complete(&f) && !f.write_failed) {
		char drawn[64] = "";

		if (strcmp(o.format, "npy") != 0)
			snprintf(drawn, sizeof(drawn), "; %" PRIu64 " of "
			    "unknown result as draws", R.no_result);
		pf_warnx("%" PRIu64 " records: %" PRIu64 " written (%s%s); "
		    "skipped: %" PRIu64 " without an evaluation, %" PRIu64
		    " without a move, %" PRIu64 " without a policy, %" PRIu64
		    " invalid", R.records, R.written, o.format, drawn,
		    R.no_eval, R.no_move, R.no_policy, R.invalid);
	}
	return pf_filter_close(&f);
}
