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

#define INBUF	(1u << 20)

struct opts {
	const char *format;
	pf_filter_opts out;	/* -o, -f, -z */
};

struct run {
	const struct opts *o;
	pf_filter *f;
	const char *file;	/* the input, for messages */
	const char *name;	/* it, or "file: member" in an archive */
	/* the record waiting for its successor (to know whether it ends its
	   game), with its extension bytes */
	int have;
	pf_record pend;
	pf_extbuf eb;
	pf_board board;		/* the pending record's board */
	/* lc0: the reader, a record and its decoding */
	pf_lc0_reader *lc0;
	uint8_t *rec;
	pf_lc0_entry *lc;
	uint64_t games, entries, damaged;
	uint64_t file_damaged;	/* in the current file */
};

/* Damaged places named per file; the summary counts them all (a file of
   something else altogether is not a screenful of offsets per entry). */
#define DAMAGE_NAMED	10

static const char synopsis[] =
    "usage: posimport [-fhVz] -F format [-o file] [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

/* Write the pending record, flagged as its game's last when last. */
static void
flush_pending(struct run *R, int last)
{
	if (!R->have)
		return;
	if (last)
		R->pend.flags |= PF_RF_LAST;
	pf_filter_put(R->f, &R->pend);
	R->have = 0;
}

/*
 * Does e follow the pending record: the position after its move (the
 * decoders return legal moves only), one ply on?
 */
static int
follows(struct run *R, const pf_sfentry *e)
{
	pf_board after;
	pf_undo u;

	if (!R->have || R->pend.move == PF_MOVE_NONE ||
	    e->ply != R->pend.ply + 1)
		return 0;
	after = R->board;
	pf_make_move(&after, R->pend.move, &u);
	return after.key == e->board.key;
}

/* lc0: the extensions, the evaluation with W/D/L and best move, and the
   policy (the core is pf_sfentry_to_core's). */
static int
lc0_exts(struct run *R, const pf_lc0_entry *lc)
{
	pf_extbuf_reset(&R->eb);
	if (pf_lc0_entry_exts(lc, &R->eb) == -1)
		return -1;
	R->pend.ext = R->eb.data;
	R->pend.ext_len = (uint32_t)R->eb.len;
	return 0;
}

/*
 * One entry (lc, for lc0, its W/D/L, best move and policy).  link: 1 the entry continues the pending record's game (a
 * binpack chain says so), -1 it starts a game whatever it follows (a
 * viriformat game's first position), 0 it continues the game when it is
 * the position after the pending record's move, one ply on.
 */
static void
take(struct run *R, const pf_sfentry *e, int link, const pf_lc0_entry *lc)
{
	uint8_t packed[PF_PACKED_SIZE], prev[PF_PACKED_SIZE];
	pf_move prev_move = PF_MOVE_NONE;
	uint64_t game;
	int follows_it;

	follows_it = link == 1 ? R->have : link == 0 ? follows(R, e) : 0;
	if (follows_it) {
		memcpy(prev, R->pend.pos, PF_PACKED_SIZE);
		prev_move = R->pend.move;
	}
	flush_pending(R, !follows_it);
	if (follows_it)
		game = R->pend.game_id;
	else {
		/* A game id from the run's game count and the first
		   position: distinct within a run, the same on a rerun. */
		pf_board_pack(&e->board, packed);
		game = XXH64(packed, sizeof(packed), ++R->games);
	}
	if (lc != NULL)
		pf_sfentry_to_core(e, game, follows_it ? prev : NULL,
		    prev_move, &R->pend);
	if ((lc == NULL ? pf_sfentry_to_record(e, game, follows_it ? prev :
	    NULL, prev_move, &R->eb, &R->pend) : lc0_exts(R, lc)) == -1) {
		pf_warn("out of memory");
		R->f->status = PF_EXIT_DATA;
		R->f->stop = 1;
		return;
	}
	R->have = 1;
	R->entries++;
	R->board = e->board;
}

/* A damaged place, msg its whole message. */
static void
damaged(struct run *R, const char *msg)
{
	if (++R->file_damaged <= DAMAGE_NAMED)
		pf_warnx("%s", msg);
	else if (R->file_damaged == DAMAGE_NAMED + 1)
		pf_warnx("%s: more damage, not named (the summary counts "
		    "it)", R->file);
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
			flush_pending(R, 1);
			continue;
		}
		take(R, &e, pf_binpack_reader_chained(r), NULL);
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
 * it needs more.
 */
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
		if (eof && len > 0) {
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
	take(R, &e, 0, NULL);
	return 1;
}

static int
dec_plain(struct run *R, const uint8_t *p, size_t len, int eof,
    uint64_t offset, size_t *used)
{
	pf_sfentry e;
	char err[128];
	int rc;

	rc = pf_plain_decode((const char *)p, len, eof, &e, used, err,
	    sizeof(err));
	if (rc == -1) {
		damage(R, offset, err);
		return 0;
	}
	if (rc == 1)
		take(R, &e, 0, NULL);
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
	int rc, first = 1;

	*used = 0;
	if ((size = pf_viri_game_size(p, len)) == 0) {
		if (eof && len > 0) {
			damage(R, offset, "truncated game");
			*used = len;
		}
		return 0;
	}
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
		take(R, &e, first ? -1 : 1, NULL);
		first = 0;
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
			decode(R, buf + start, len - start, eof && !failed,
			    offset + start, &used);
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
lc0_take(struct run *R, struct lc0_held *h, const pf_board *next)
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
	take(R, &e, h->first ? -1 : 0, &h->e);
}

/* One chunk (a file, or a file in an archive): a game. */
static void
read_lc0(struct run *R, pf_input *in, pf_lc0_reader *r)
{
	struct lc0_held h;
	char msg[768], err[256];
	size_t size;
	int rc, first, ply = 0;

	memset(&h, 0, sizeof(h));
	pf_lc0_reader_start(r, pf_input_source, in);
	while (!R->f->stop && (rc = pf_lc0_read(r, R->rec, &size, &first)) !=
	    0) {
		if (rc == 1 && pf_lc0_decode(R->rec, R->lc, err, sizeof(err)) ==
		    -1)
			rc = -1;
		else if (rc == -1)
			snprintf(err, sizeof(err), "%s", pf_lc0_reader_error(r));
		if (rc == -1) {
			/* a game ends at its damage; the chunk's next records
			   begin another */
			lc0_take(R, &h, NULL);
			snprintf(msg, sizeof(msg), "%s: record %" PRIu64 ": %s",
			    R->name, pf_lc0_reader_recno(r), err);
			damaged(R, msg);
			flush_pending(R, 1);
			ply++;
			continue;
		}
		lc0_take(R, &h, &R->lc->board);
		h.have = 1;
		h.first = first;
		h.ply = (uint16_t)ply++;
		h.e = *R->lc;
	}
	lc0_take(R, &h, NULL);
}

/* The input would block: pass on what is written (pipelines flow). */
static void
idle_flush(void *arg)
{
	struct run *R = arg;

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
	R->file_damaged = 0;
	if ((in = pf_input_open(path, R->file)) == NULL) {
		pf_warn("%s", R->file);
		R->f->status = PF_EXIT_DATA;
		return;
	}
	pf_input_set_binary(in);
	pf_input_set_idle(in, idle_flush, R);
	while (!R->f->stop && (rc = pf_input_next_member(in)) != 0) {
		if (rc == -1) {
			snprintf(msg, sizeof(msg), "%s: %s", R->name,
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
		else if (strcmp(R->o->format, "lc0") == 0)
			read_lc0(R, in, R->lc0);
		else
			read_blocks(R, in, dec_fixed);
		/* games never span files */
		flush_pending(R, 1);
	}
	R->name = R->file;
	free(name);
	pf_input_free(in);
}

/* pf_input_each_file's call: nonzero stops (the output is gone). */
static int
each_file(void *arg, const char *path)
{
	struct run *R = arg;

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
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	size_t i;
	int ch;

	memset(o, 0, sizeof(*o));
	while ((ch = pf_filter_getopt(argc, argv, "F:" PF_FILTER_SHORTOPTS,
	    longopts, NULL, &o->out, synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		switch (ch) {
		case 'F':
			o->format = optarg;
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
	char err[512];
	int r, i;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	memset(&R, 0, sizeof(R));
	R.o = &o;
	R.f = &f;
	if (strcmp(o.format, "lc0") == 0 && ((R.lc0 = pf_lc0_reader_open()) ==
	    NULL || (R.rec = malloc(PF_LC0_MAX_SIZE)) == NULL ||
	    (R.lc = malloc(sizeof(*R.lc))) == NULL)) {
		pf_warn("out of memory");
		pf_lc0_reader_free(R.lc0);
		free(R.rec);
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
		if (pf_filter_complete(&f))
			pf_warnx("%" PRIu64 " entries in %" PRIu64 " games "
			    "imported (%s); %" PRIu64 " damaged places",
			    R.entries, R.games, o.format, R.damaged);
	}
	pf_extbuf_free(&R.eb);
	pf_lc0_reader_free(R.lc0);
	free(R.rec);
	free(R.lc);
	return pf_filter_close(&f);
}
