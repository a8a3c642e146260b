/*
 * posimport - a trainer's training data (Stockfish's binpack, plain text
 * and bin, bullet's marlinformat, bulletformat and viriformat, lc0's
 * chunks) as a record stream, so that existing data can be re-scored,
 * re-targeted, filtered and sharded by the other tools.  Files come
 * through pf_input in binary mode: compressed or not, alone or in tar and
 * zip archives, each archive member read as its own input.
 *
 * Each entry becomes one record: the position, the move, the result from
 * the side to move's view, and the score as an evaluation of source
 * "import" (sfentry.h converts the units).  Entries that follow one
 * another in a game (the next position is the one after the move, one ply
 * later) get one game id, and the last record of each game is flagged; a
 * viriformat game is a game.  Damage is reported with the byte offset
 * after every entry before it is written.
 *
 * lc0's chunks, inflating 8 KiB a record, are the slow format: with -j
 * each chunk is read whole and decoded in a worker thread (lib/workq.c),
 * and the main thread writes what became of them in input order, giving
 * the game ids, so that the output is that of one thread.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "posflow.h"
#include "binpack.h"
#include "filter.h"
#include "lc0.h"
#include "sfentry.h"
#include "sfformats.h"
#include "workq.h"

#define INBUF	(1u << 20)
#define JOBS_MAX	256	/* -j */

struct opts {
	const char *format;
	int jobs;		/* -j */
	pf_filter_opts out;	/* -o, -f, -z */
};

/*
 * The records of an input's games as its reader takes them: the last one
 * waits for its successor, to know whether it ends its game.  emit()
 * gets each in turn (new_game: it begins one; the game id is given
 * there, in input order), damage() each damaged place's message.  One
 * gathers in the main thread, straight to the output; with -j, one per
 * lc0 chunk in a worker thread, into the chunk's job.
 */
struct gather {
	int have, pend_new;
	pf_record pend;
	pf_extbuf eb;
	pf_board board;		/* the pending record's board */
	int oom;		/* memory ran short: the rest is lost */
	uint64_t noscore;	/* entries of no score (VALUE_NONE) */
	void (*emit)(void *arg, pf_record *rec, int new_game);
	void (*damage)(void *arg, const char *msg);
	void *arg;
};

struct run {
	const struct opts *o;
	pf_filter *f;
	const char *file;	/* the input, for messages */
	const char *name;	/* it, or "file: member" in an archive */
	struct gather G;	/* the main thread's */
	uint64_t game;		/* the id of the game being written */
	/* lc0: the reader, a record and its decoding */
	pf_lc0_reader *lc0;
	uint8_t *rec;
	pf_lc0_entry *lc;
	pf_workq *q;		/* -j: lc0 chunks decoded in threads */
	struct worker *w;	/* their room */
	int nw;
	size_t job_max;		/* JOB_MAX; tests set less */
	uint64_t games, entries, damaged;
	/* the input operand being read, and the one whose damaged places
	   are being counted (with -j the jobs of an earlier one may still
	   be written): its number and name */
	uint64_t fileno, shown;
	char *shown_name;
	uint64_t file_damaged;	/* in that one */
};

/* Damaged places named per file; the summary counts them all (a file of
   something else altogether is not a screenful of offsets per entry). */
#define DAMAGE_NAMED	10

static const char synopsis[] =
    "usage: posimport [-fhVz] -F format [-j jobs] [-o file] [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

/* Pass on the pending record, flagged as its game's last when last. */
static void
flush_pending(struct gather *G, int last)
{
	if (!G->have)
		return;
	if (last)
		G->pend.flags |= PF_RF_LAST;
	G->emit(G->arg, &G->pend, G->pend_new);
	G->have = 0;
}

/*
 * Does e follow the pending record: the position after its move (the
 * decoders return legal moves only), one ply on, of the same result?
 */
static int
follows(struct gather *G, const pf_sfentry *e)
{
	pf_board after;
	pf_undo u;

	uint8_t result;

	if (!G->have || G->pend.move == PF_MOVE_NONE ||
	    e->ply != G->pend.ply + 1)
		return 0;
	/* one game has one result (nnue-pytorch's check too) */
	result = e->result == 0 ? PF_RESULT_DRAW : (e->result > 0) !=
	    (e->board.stm == PF_BLACK) ? PF_RESULT_WHITE : PF_RESULT_BLACK;
	if (result != G->pend.result)
		return 0;
	after = G->board;
	pf_make_move(&after, G->pend.move, &u);
	return after.key == e->board.key;
}

/* lc0: the extensions, the evaluation with W/D/L and best move, and the
   policy (the core is pf_sfentry_to_core's). */
static int
lc0_exts(struct gather *G, const pf_lc0_entry *lc)
{
	pf_extbuf_reset(&G->eb);
	if (pf_lc0_entry_exts(lc, &G->eb) == -1)
		return -1;
	G->pend.ext = G->eb.data;
	G->pend.ext_len = (uint32_t)G->eb.len;
	return 0;
}

/*
 * One entry (lc, for lc0, its W/D/L, best move and policy).  link: 1 the
 * entry continues the pending record's game (a binpack chain says so),
 * -1 it starts a game whatever it follows (a viriformat game's first
 * position), 0 it continues the game when it is the position after the
 * pending record's move, one ply on.  The game id is emit()'s to give.
 */
static void
take(struct gather *G, const pf_sfentry *e, int link,
    const pf_lc0_entry *lc)
{
	uint8_t prev[PF_PACKED_SIZE];
	pf_move prev_move = PF_MOVE_NONE;
	int follows_it, rc;

	if (G->oom)
		return;
	follows_it = link == 1 ? G->have : link == 0 ? follows(G, e) : 0;
	if (follows_it) {
		memcpy(prev, G->pend.pos, PF_PACKED_SIZE);
		prev_move = G->pend.move;
	}
	flush_pending(G, !follows_it);
	if (lc != NULL)
		pf_sfentry_to_core(e, 0, follows_it ? prev : NULL,
		    prev_move, &G->pend);
	rc = lc == NULL ? pf_sfentry_to_record(e, 0, follows_it ? prev :
	    NULL, prev_move, &G->eb, &G->pend) : lc0_exts(G, lc);
	if (rc == -1) {
		G->oom = 1;
		return;
	}
	G->noscore += rc == 1;
	G->have = 1;
	G->pend_new = !follows_it;
	G->board = e->board;
}

/*
 * The main thread's emit(): a game id from the run's game count and the
 * game's first position (distinct within a run, the same on a rerun),
 * then the record is written.
 */
static void
put_record(void *arg, pf_record *rec, int new_game)
{
	struct run *R = arg;

	if (new_game)
		R->game = XXH64(rec->pos, PF_PACKED_SIZE, ++R->games);
	rec->game_id = R->game;
	R->entries++;
	pf_filter_put(R->f, rec);
}

/* Damaged places are counted per input operand: file is the one the
   next messages are about, fileno its number in the run. */
static void
at_file(struct run *R, uint64_t fileno, const char *file)
{
	char *s;

	if (fileno == R->shown && R->shown_name != NULL)
		return;
	if ((s = strdup(file)) == NULL)
		return;		/* the old name stands */
	free(R->shown_name);
	R->shown_name = s;
	R->shown = fileno;
	R->file_damaged = 0;
}

/* A damaged place, msg its whole message. */
static void
damaged(void *arg, const char *msg)
{
	struct run *R = arg;

	if (++R->file_damaged <= DAMAGE_NAMED)
		pf_warnx("%s", msg);
	else if (R->file_damaged == DAMAGE_NAMED + 1)
		pf_warnx("%s: more damage, not named (the summary counts "
		    "it)", R->shown_name);
	R->f->status = PF_EXIT_DATA;
	R->damaged++;
}

static void
damage(struct run *R, uint64_t offset, const char *why)
{
	char msg[640];

	snprintf(msg, sizeof(msg), "%s: offset %" PRIu64 ": %s", R->name,
	    offset, why);
	damaged(R, msg);
}

/* ---- readers ----------------------------------------------------------- */

static void
read_binpack(struct run *R, pf_input *in)
{
	pf_binpack_reader *r;
	pf_sfentry e;
	int rc;

	if ((r = pf_binpack_reader_open_source(pf_input_source, in,
	    R->name)) == NULL) {
		pf_warn("out of memory");
		R->f->status = PF_EXIT_DATA;
		return;
	}
	while (!R->f->stop && (rc = pf_binpack_read(r, &e)) != 0) {
		if (rc == -1) {
			damaged(R, pf_binpack_reader_error(r));
			flush_pending(&R->G, 1);
			continue;
		}
		take(&R->G, &e, pf_binpack_reader_chained(r), NULL);
	}
	pf_binpack_reader_free(r);
}

/*
 * Fill buf[*len..INBUF) from in: 1 more bytes, 0 at the end of the
 * member, -1 on a read error (reported where the bytes before it end).
 */
static int
fill(struct run *R, pf_input *in, uint8_t *buf, size_t *len,
    uint64_t offset)
{
	ssize_t n;

	if ((n = pf_input_read(in, buf + *len, INBUF - *len)) > 0) {
		*len += (size_t)n;
		return 1;
	}
	if (n < 0)
		damage(R, offset + *len, pf_input_error(in));
	return n;
}

/*
 * The fixed-size formats (bin, marlinformat, bulletformat) and the
 * variable ones (plain, viriformat) share one loop: decode() takes what
 * it can from buf[0..len) and says how many bytes it used; 0 used means
 * it needs more.  eof: 0 more may come, EOF_END the input ends there,
 * EOF_FAILED it ends at a read error, already named (what is whole is
 * taken, and the cut is not named again).
 */
enum { EOF_END = 1, EOF_FAILED };

typedef int (*decode_fn)(struct run *R, const uint8_t *p, size_t len,
    int eof, uint64_t offset, size_t *used);

static int
dec_fixed(struct run *R, const uint8_t *p, size_t len, int eof,
    uint64_t offset, size_t *used)
{
	pf_sfentry e;
	char err[128];
	size_t size = strcmp(R->o->format, "bin") == 0 ? PF_BIN_SIZE :
	    PF_MARLIN_SIZE;
	int rc;

	*used = 0;
	if (len < size) {
		if (eof == EOF_END && len > 0) {
			snprintf(err, sizeof(err), "truncated entry (%zu of "
			    "%zu bytes)", len, size);
			damage(R, offset, err);
			*used = len;
		}
		return 0;
	}
	if (strcmp(R->o->format, "bin") == 0)
		rc = pf_bin_decode(p, &e, err, sizeof(err));
	else if (strcmp(R->o->format, "bulletformat") == 0)
		rc = pf_bullet_decode(p, &e, err, sizeof(err));
	else
		rc = pf_marlin_decode(p, &e, err, sizeof(err));
	*used = size;
	if (rc == -1) {
		damage(R, offset, err);
		return 0;
	}
	take(&R->G, &e, 0, NULL);
	return 1;
}

static int
dec_plain(struct run *R, const uint8_t *p, size_t len, int eof,
    uint64_t offset, size_t *used)
{
	pf_sfentry e;
	char err[128];
	int rc;

	rc = pf_plain_decode((const char *)p, len, eof == EOF_END, &e, used,
	    err, sizeof(err));
	if (rc == -1) {
		damage(R, offset, err);
		return 0;
	}
	if (rc == 1)
		take(&R->G, &e, 0, NULL);
	return rc;
}

static int
dec_viri(struct run *R, const uint8_t *p, size_t len, int eof,
    uint64_t offset, size_t *used)
{
	pf_viri_game g;
	pf_sfentry e;
	char err[128];
	long size;
	size_t off;
	int rc = 1, first = 1, cut = 0;

	*used = 0;
	if ((size = pf_viri_game_size(p, len)) == 0) {
		if (!eof || len == 0)
			return 0;
		/* cut short: the moves before the cut are entries too */
		*used = len;
		if (len < PF_VIRI_HEADER_SIZE) {
			if (eof == EOF_END) {
				snprintf(err, sizeof(err), "truncated game "
				    "(begun at offset %" PRIu64 ", in its "
				    "first position)", offset);
				damage(R, offset + len, err);
			}
			return 0;
		}
		size = (long)len;
		cut = 1;
	} else
		*used = (size_t)size;
	if (pf_viri_game_begin(&g, p, err, sizeof(err)) == -1) {
		damage(R, offset, err);
		return 0;
	}
	for (off = PF_VIRI_HEADER_SIZE; off + PF_VIRI_PAIR_SIZE <=
	    (size_t)size; off += PF_VIRI_PAIR_SIZE) {
		if ((rc = pf_viri_game_next(&g, p + off, &e, err,
		    sizeof(err))) == 0)
			break;
		if (rc == -1) {
			damage(R, offset + off, err);
			break;
		}
		take(&R->G, &e, first ? -1 : 1, NULL);
		first = 0;
	}
	if (cut && rc == 1 && eof == EOF_END) {
		snprintf(err, sizeof(err), "truncated game (begun at offset %"
		    PRIu64 "; its %" PRIu32 " moves before the cut kept)",
		    offset, g.nmoves);
		damage(R, offset + len, err);
	}
	return 1;
}

static void
read_blocks(struct run *R, pf_input *in, decode_fn decode)
{
	uint8_t *buf;
	size_t len = 0, used, start;
	uint64_t offset = 0;
	int eof = 0, failed = 0, rc;

	if ((buf = malloc(INBUF)) == NULL) {
		pf_warn("out of memory");
		R->f->status = PF_EXIT_DATA;
		return;
	}
	while (!R->f->stop) {
		if (!eof && len < INBUF) {
			/* after a read error (named where the bytes end),
			   the whole entries read before it are all there is */
			rc = fill(R, in, buf, &len, offset);
			eof = rc <= 0;
			failed = rc < 0;
		}
		start = 0;
		while (!R->f->stop && start < len) {
			decode(R, buf + start, len - start, !eof ? 0 :
			    failed ? EOF_FAILED : EOF_END, offset + start,
			    &used);
			if (used == 0)
				break;
			start += used;
		}
		if (start == 0 && len == INBUF) {
			damage(R, offset, "entry longer than the buffer");
			start = len;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		offset += start;
		if (eof && (len == 0 || start == 0))
			break;
	}
	free(buf);
}

/*
 * lc0's chunks: each chunk is a game (its records follow one another); the
 * plies count from the chunk's first record, which lc0 does not store.  A
 * record waits for the next: V3 to V5 store no move played, so the move
 * that gives the next record's position is its move.
 */
struct lc0_held {
	int have, first;
	uint16_t ply;
	pf_lc0_entry e;
};

static void
lc0_take(struct gather *G, struct lc0_held *h, const pf_board *next)
{
	pf_move moves[PF_MAX_MOVES];
	pf_sfentry e;
	pf_board after;
	pf_undo u;
	int i, n;

	if (!h->have)
		return;
	h->have = 0;
	if (h->e.move == PF_MOVE_NONE && next != NULL)
		for (i = 0, n = pf_gen_legal(&h->e.board, moves); i < n; i++) {
			after = h->e.board;
			pf_make_move(&after, moves[i], &u);
			if (after.key == next->key) {
				h->e.move = moves[i];
				break;
			}
		}
	memset(&e, 0, sizeof(e));
	e.board = h->e.board;
	e.board.fullmove = (uint16_t)(1 + h->ply / 2);
	e.move = h->e.move;
	e.ply = h->ply;
	e.result = (int8_t)h->e.result;
	take(G, &e, h->first ? -1 : 0, &h->e);
}

/*
 * One chunk (a file, or a file in an archive), from src: a game, its
 * records through G.  name: the chunk, for messages; rec and lc the
 * caller's room for a record and its decoding.
 */
static void
lc0_chunk(struct gather *G, pf_lc0_reader *r, pf_source_fn *src, void *arg,
    const char *name, uint8_t *rec, pf_lc0_entry *lc)
{
	struct lc0_held h;
	char msg[768], err[256];
	size_t size;
	int rc, first, ply = 0;

	memset(&h, 0, sizeof(h));
	pf_lc0_reader_start(r, src, arg);
	while (!G->oom && (rc = pf_lc0_read(r, rec, &size, &first)) != 0) {
		if (rc == 1 && pf_lc0_decode(rec, lc, err, sizeof(err)) == -1)
			rc = -1;
		else if (rc == -1)
			snprintf(err, sizeof(err), "%s",
			    pf_lc0_reader_error(r));
		if (rc == -1) {
			/* a game ends at its damage; the chunk's next records
			   begin another */
			lc0_take(G, &h, NULL);
			snprintf(msg, sizeof(msg), "%s: record %" PRIu64 ": %s",
			    name, pf_lc0_reader_recno(r), err);
			G->damage(G->arg, msg);
			flush_pending(G, 1);
			ply++;
			continue;
		}
		lc0_take(G, &h, &lc->board);
		h.have = 1;
		h.first = first;
		h.ply = (uint16_t)ply++;
		h.e = *lc;
	}
	lc0_take(G, &h, NULL);
	flush_pending(G, 1);
}

/* ---- -j: lc0 chunks decoded in threads --------------------------------- */

#define JOB_MAX		(64u << 20)	/* a chunk's stored bytes decoded
					   in a thread: larger ones in the
					   main thread, as they are read */

/* What a chunk's job holds: its stored bytes, then what became of them,
   in order (records, whose extensions and messages are in pool). */
struct ev {
	int kind;		/* EV_RECORD, EV_DAMAGE */
	int new_game;
	pf_record rec;
	size_t off;		/* its extensions', or message's, bytes */
};
enum { EV_RECORD, EV_DAMAGE };

struct job {
	uint64_t fileno;	/* the input operand's number */
	char *file, *name;	/* the input, and "file: member" */
	uint8_t *raw;		/* the chunk's stored bytes */
	size_t raw_len, raw_pos;
	char *raw_err;		/* the input's error after them, or NULL */
	int oom;
	struct ev *ev;
	size_t nev, cap_ev;
	char *pool;
	size_t pool_len, pool_cap;
};

/* Append n bytes to the job's pool; their offset, or -1. */
static long
pool_add(struct job *j, const void *p, size_t n)
{
	size_t off = j->pool_len;

	if (j->pool_len + n > j->pool_cap) {
		size_t cap = j->pool_cap ? 2 * j->pool_cap : 65536;
		char *q;

		while (cap < j->pool_len + n)
			cap *= 2;
		if ((q = realloc(j->pool, cap)) == NULL)
			return -1;
		j->pool = q;
		j->pool_cap = cap;
	}
	if (n > 0)
		memcpy(j->pool + off, p, n);
	j->pool_len += n;
	return (long)off;
}

static struct ev *
ev_add(struct job *j, int kind, const void *p, size_t n)
{
	long off;

	if (j->nev == j->cap_ev) {
		size_t cap = j->cap_ev ? 2 * j->cap_ev : 256;
		struct ev *e = realloc(j->ev, cap * sizeof(*e));

		if (e == NULL)
			return NULL;
		j->ev = e;
		j->cap_ev = cap;
	}
	if ((off = pool_add(j, p, n)) < 0)
		return NULL;
	j->ev[j->nev].kind = kind;
	j->ev[j->nev].off = (size_t)off;
	return &j->ev[j->nev++];
}

/* The job's emit() and damage(): kept for the main thread. */
static void
job_record(void *arg, pf_record *rec, int new_game)
{
	struct job *j = arg;
	struct ev *e;

	if ((e = ev_add(j, EV_RECORD, rec->ext, rec->ext_len)) == NULL) {
		j->oom = 1;
		return;
	}
	e->rec = *rec;
	e->rec.ext = NULL;
	e->new_game = new_game;
}

static void
job_damage(void *arg, const char *msg)
{
	struct job *j = arg;

	if (ev_add(j, EV_DAMAGE, msg, strlen(msg) + 1) == NULL)
		j->oom = 1;
}

/* The chunk's stored bytes as a source: then the input's error, if it
   had one there. */
static ssize_t
job_source(void *arg, void *buf, size_t n, char *err, size_t errsize)
{
	struct job *j = arg;
	size_t k = j->raw_len - j->raw_pos;

	if (k == 0 && j->raw_err != NULL) {
		snprintf(err, errsize, "%s", j->raw_err);
		free(j->raw_err);
		j->raw_err = NULL;
		return -1;
	}
	if (k > n)
		k = n;
	memcpy(buf, j->raw + j->raw_pos, k);
	j->raw_pos += k;
	return (ssize_t)k;
}

/* A thread's room: its reader, a record and its decoding. */
struct worker {
	pf_lc0_reader *r;
	uint8_t *rec;
	pf_lc0_entry *lc;
	struct gather G;
};

/* A thread's work: the chunk decoded into its job. */
static void
job_run(void *job, void *arg, int thread)
{
	struct worker *w = (struct worker *)arg + thread;
	struct job *j = job;

	w->G.emit = job_record;
	w->G.damage = job_damage;
	w->G.arg = j;
	w->G.oom = w->G.have = 0;
	lc0_chunk(&w->G, w->r, job_source, j, j->name, w->rec, w->lc);
	j->oom |= w->G.oom;
	free(j->raw);
	j->raw = NULL;
}

static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->file);
	free(j->name);
	free(j->raw);
	free(j->raw_err);
	free(j->ev);
	free(j->pool);
	free(j);
}

/* Write what became of a job's chunk, as the main thread would have. */
static void
job_write(struct run *R, struct job *j)
{
	size_t i;

	at_file(R, j->fileno, j->file);
	for (i = 0; i < j->nev && !R->f->stop; i++) {
		struct ev *e = &j->ev[i];

		if (e->kind == EV_DAMAGE)
			damaged(R, j->pool + e->off);
		else {
			e->rec.ext = (const uint8_t *)j->pool + e->off;
			put_record(R, &e->rec, e->new_game);
		}
	}
	if (j->oom) {
		pf_warn("out of memory");
		R->f->status = PF_EXIT_DATA;
		R->f->stop = 1;
	}
	job_free(j);
}

/* Write every job out, in order: before the main thread writes. */
static void
jobs_drain(struct run *R)
{
	struct job *j;

	if (R->q == NULL)
		return;
	while ((j = pf_workq_take(R->q)) != NULL)
		job_write(R, j);
}

/* A chunk too large for a job: the bytes read so far, then the rest of
   the member. */
struct rest {
	struct job *j;
	pf_input *in;
};

static ssize_t
lc0_rest(void *arg, void *buf, size_t n, char *err, size_t errsize)
{
	struct rest *r = arg;

	if (r->j->raw_pos < r->j->raw_len)
		return job_source(r->j, buf, n, err, errsize);
	return pf_input_source(r->in, buf, n, err, errsize);
}

/*
 * The member's stored bytes into a job for the threads.  A member larger
 * than JOB_MAX is read here instead, from the bytes read so far on, after
 * the jobs before it are written.
 */
static void
lc0_submit(struct run *R, pf_input *in, const char *file, const char *name)
{
	struct rest rest;

	struct job *j;
	size_t cap = 1u << 16;
	ssize_t n;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->file = strdup(file)) == NULL ||
	    (j->name = strdup(name)) == NULL ||
	    (j->raw = malloc(cap)) == NULL)
		goto nomem;
	for (;;) {
		if (j->raw_len == cap) {
			uint8_t *p;

			if (cap >= R->job_max)
				break;
			if ((p = realloc(j->raw, cap * 2)) == NULL)
				goto nomem;
			j->raw = p;
			cap *= 2;
		}
		if ((n = pf_input_read(in, j->raw + j->raw_len,
		    cap - j->raw_len)) <= 0) {
			if (n < 0 && (j->raw_err =
			    strdup(pf_input_error(in))) == NULL)
				goto nomem;
			break;
		}
		j->raw_len += (size_t)n;
	}
	if (j->raw_len == cap && cap >= R->job_max) {
		/* too large for a job: here, its bytes so far first */
		jobs_drain(R);
		at_file(R, R->fileno, file);
		rest.j = j;
		rest.in = in;
		lc0_chunk(&R->G, R->lc0, lc0_rest, &rest, name, R->rec,
		    R->lc);
		job_free(j);
		return;
	}
	j->fileno = R->fileno;
	if (pf_workq_full(R->q))
		job_write(R, pf_workq_take(R->q));
	pf_workq_submit(R->q, j);
	return;
nomem:
	job_free(j);
	pf_warn("out of memory");
	R->f->status = PF_EXIT_DATA;
	R->f->stop = 1;
}

/* -j: n threads with their room, up to two chunks each out.  0 / -1. */
static int
workers_open(struct run *R, int n)
{
	int i;

	if ((R->w = calloc((size_t)n, sizeof(*R->w))) == NULL)
		return -1;
	R->nw = n;
	for (i = 0; i < n; i++)
		if ((R->w[i].r = pf_lc0_reader_open()) == NULL ||
		    (R->w[i].rec = malloc(PF_LC0_MAX_SIZE)) == NULL ||
		    (R->w[i].lc = malloc(sizeof(*R->w[i].lc))) == NULL)
			return -1;
	if ((R->q = pf_workq_open(n, 2 * n, job_run, R->w)) == NULL)
		return -1;
	return 0;
}

static void
workers_free(struct run *R)
{
	struct job *j;
	int i;

	if (R->q != NULL) {
		/* (after a failed output, the jobs still out are dropped) */
		while ((j = pf_workq_take(R->q)) != NULL)
			job_free(j);
		pf_workq_free(R->q);
	}
	for (i = 0; i < R->nw; i++) {
		pf_lc0_reader_free(R->w[i].r);
		free(R->w[i].rec);
		free(R->w[i].lc);
		pf_extbuf_free(&R->w[i].G.eb);
	}
	free(R->w);
}

/* The input would block: pass on what is written (pipelines flow), the
   chunks in the threads too (they are what there is to do now). */
static void
idle_flush(void *arg)
{
	struct run *R = arg;

	jobs_drain(R);
	if (R->f->w != NULL && pf_writer_pending(R->f->w) > 0)
		(void)pf_writer_flush(R->f->w);	/* its error comes back */
}

/*
 * One input, whatever its packaging (pf_input in binary mode): a file,
 * compressed or not, or an archive of them, each read on its own.
 */
static void
import_file(struct run *R, const char *path)
{
	pf_input *in;
	const char *member;
	char *name = NULL, msg[640];
	int rc;

	R->file = R->name = pf_input_name(path);
	R->fileno++;
	/* (with -j, job_write counts each job's damage under its file; what
	   is said here comes after the jobs before it) */
	if (R->q == NULL)
		at_file(R, R->fileno, R->file);
	if ((in = pf_input_open(path, R->file)) == NULL) {
		jobs_drain(R);
		pf_warn("%s", R->file);
		R->f->status = PF_EXIT_DATA;
		return;
	}
	pf_input_set_binary(in);
	/* lc0's chunks are gzip files: inflated by the chunk reader, in
	   the worker threads with -j */
	if (R->lc0 != NULL)
		pf_input_keep_gzip(in);
	pf_input_set_idle(in, idle_flush, R);
	while (!R->f->stop && (rc = pf_input_next_member(in)) != 0) {
		if (rc == -1) {
			jobs_drain(R);
			at_file(R, R->fileno, R->file);
			snprintf(msg, sizeof(msg), "%s: %s", R->file,
			    pf_input_error(in));
			damaged(R, msg);
			break;
		}
		free(name);
		name = NULL;
		R->name = R->file;
		if ((member = pf_input_member(in)) != NULL) {
			if ((name = malloc(strlen(R->file) + strlen(member) +
			    3)) == NULL) {
				pf_warn("out of memory");
				R->f->status = PF_EXIT_DATA;
				break;
			}
			sprintf(name, "%s: %s", R->file, member);
			R->name = name;
		}
		if (strcmp(R->o->format, "binpack") == 0)
			read_binpack(R, in);
		else if (strcmp(R->o->format, "plain") == 0)
			read_blocks(R, in, dec_plain);
		else if (strcmp(R->o->format, "viriformat") == 0)
			read_blocks(R, in, dec_viri);
		else if (strcmp(R->o->format, "lc0") == 0 && R->q != NULL)
			lc0_submit(R, in, R->file, R->name);
		else if (strcmp(R->o->format, "lc0") == 0)
			lc0_chunk(&R->G, R->lc0, pf_input_source, in, R->name,
			    R->rec, R->lc);
		else
			read_blocks(R, in, dec_fixed);
		/* games never span files */
		flush_pending(&R->G, 1);
		if (R->G.oom) {
			pf_warn("out of memory");
			R->f->status = PF_EXIT_DATA;
			R->f->stop = 1;
		}
	}
	R->name = R->file;
	free(name);
	pf_input_free(in);
}

/* pf_input_each_file's call: path imported, or named with why it is not
   read (an error, as a file that cannot be read is); nonzero stops (the
   output is gone). */
static int
each_file(void *arg, const char *path, const char *why)
{
	struct run *R = arg;

	if (why != NULL) {
		/* after what the jobs before it say */
		jobs_drain(R);
		pf_warnx("%s: %s", path, why);
		R->f->status = PF_EXIT_DATA;
		return R->f->stop;
	}
	import_file(R, path);
	return R->f->stop;
}

static const char *const formats[] = { "binpack", "plain", "bin",
	"marlinformat", "bulletformat", "viriformat", "lc0" };
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "jobs", required_argument, NULL, 'j' },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr = NULL;
	size_t i;
	int ch;

	memset(o, 0, sizeof(*o));
	o->jobs = 1;
	while ((ch = pf_filter_getopt(argc, argv, "F:j:" PF_FILTER_SHORTOPTS,
	    longopts, NULL, &o->out, synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		switch (ch) {
		case 'F':
			o->format = optarg;
			break;
		case 'j':
			o->jobs = (int)pf_strtonum(optarg, 1, JOBS_MAX,
			    &errstr);
			if (errstr != NULL) {
				pf_warnx("-j: %s: %s", optarg, errstr);
				usage();
				return 2;
			}
			break;
		default:
			usage();
			return 2;
		}
	}
	for (i = 0; o->format != NULL && i < NFORMATS; i++)
		if (strcmp(o->format, formats[i]) == 0)
			return -1;
	if (o->format == NULL)
		pf_warnx("-F format is required");
	else
		pf_warnx("-F %s: unknown format", o->format);
	fputs("formats:", stderr);
	for (i = 0; i < NFORMATS; i++)
		fprintf(stderr, " %s", formats[i]);
	fputs("\n", stderr);
	usage();
	return 2;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	pf_filter f;
	const char *env, *errstr = NULL;
	char err[512], noscore[128];
	int r, i;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	memset(&R, 0, sizeof(R));
	R.o = &o;
	R.f = &f;
	R.job_max = JOB_MAX;
	if ((env = getenv("POSFLOW_LC0_JOB_MAX")) != NULL)	/* tests */
		R.job_max = (size_t)pf_strtonum(env, 1, JOB_MAX, &errstr);
	R.G.emit = put_record;
	R.G.damage = damaged;
	R.G.arg = &R;
	/* -j: lc0's chunks in threads, up to two per thread out (the other
	   formats decode faster than a record stream is written) */
	if (strcmp(o.format, "lc0") == 0 && ((R.lc0 = pf_lc0_reader_open()) ==
	    NULL || (R.rec = malloc(PF_LC0_MAX_SIZE)) == NULL ||
	    (R.lc = malloc(sizeof(*R.lc))) == NULL || (o.jobs > 1 &&
	    workers_open(&R, o.jobs) == -1))) {
		pf_warn("out of memory");
		workers_free(&R);
		pf_lc0_reader_free(R.lc0);
		free(R.rec);
		free(R.lc);
		return PF_EXIT_DATA;
	}
	if (pf_filter_open(&f, o.out.output, o.out.force, o.out.zstd) == 0) {
		/* a directory (as posexport -F lc0 writes one): every file
		   under it */
		for (i = 0; (i == 0 || i < argc) && !f.stop; i++)
			if (pf_input_each_file(argc ? argv[i] : "-", each_file,
			    &R, err, sizeof(err)) == -1) {
				pf_warnx("%s", err);
				f.status = PF_EXIT_DATA;
			}
		jobs_drain(&R);
		noscore[0] = '\0';
		if (R.G.noscore > 0)
			snprintf(noscore, sizeof(noscore), "%" PRIu64 " kept "
			    "without an evaluation (a score beyond +-32000, "
			    "as Stockfish's VALUE_NONE); ", R.G.noscore);
		if (pf_filter_complete(&f))
			pf_warnx("%" PRIu64 " entries in %" PRIu64 " games "
			    "imported (%s); %s%" PRIu64 " damaged places",
			    R.entries, R.games, o.format, noscore, R.damaged);
	}
	workers_free(&R);
	free(R.shown_name);
	pf_extbuf_free(&R.G.eb);
	pf_lc0_reader_free(R.lc0);
	free(R.rec);
	free(R.lc);
	return pf_filter_close(&f);
}
