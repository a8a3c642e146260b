/*
 * pgn2pos - turn PGN games (or EPD lines) into a posflow record stream:
 * one record per position of each game's main line.
 *
 * Input goes through lib/input.c (plain, compressed, tar, zip: detected
 * from content) and lib/pgn.c (tokenizer, tags, SAN).  This file owns the
 * policy: which games and positions to write (filters), the record fields
 * and extensions, the warnings, the summary and the exit status.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "games.h"
#include "input.h"
#include "pgn.h"
#include "posflow.h"

#define USAGE \
"usage: pgn2pos [-fqz] [-j jobs] [-o file] [--epd | --pgn] [--no-meta]\n" \
"               [--skip-plies n] [--max-plies n] [--min-elo n] [--max-elo n]\n" \
"               [--time-control class[,class...]] [--sample p] [--per-game k]\n" \
"               [--seed n] [--unique] [--unique-mem mib] [--strict]\n" \
"               [--strict-games] [--stats] [--chunks n] [--mate-moves]\n" \
"               [file ...]\n"

#define BLOOM_K		8	/* bits set per position in its 512-bit block */

struct opts {
	const char *output;
	int force, zstd, quiet, stats;
	int format;
	int no_meta;
	long skip_plies, max_plies;
	long min_elo, max_elo;		/* -1: no limit */
	unsigned tc_mask;		/* 1 << PF_TC_*; 0: any */
	double sample;			/* 1: keep all */
	long per_game;			/* 0: all */
	uint64_t seed;
	int unique;
	long unique_mem;		/* MiB */
	int mate_moves;			/* engine comments' M: moves */
	int strict, strict_games;
	long chunks;			/* --chunks: games per file; 0 off */
	int jobs;			/* -j: parser threads */
};

/* Games skipped, by reason (summary order). */
enum { SK_VARIANT, SK_FEN, SK_TAG, SK_BINARY, SK_STRICT, SK_ELO, SK_TC,
    SK_N };
static const char *const skip_names[SK_N] = { "variant", "invalid FEN",
    "bad tag", "bad text", "strict", "elo", "time control" };

/*
 * What makes a game's records.  With -j the games are written by the
 * parser threads in turn (see games.h): one builder, one writer, used by
 * one thread at a time.
 */
struct builder {
	const struct opts *o;
	uint8_t *sel;			/* per-position selection, 65536 */
	pf_extbuf ext;			/* the game's meta, then per record */
	size_t meta_len;
	int clk_tmpl;			/* ext holds meta + a clock extension
					   whose values put_record sets */
	pf_eval e;			/* an evaluation's, big */
};

struct state {
	const struct opts *o;
	pf_writer *w;
	int broken;			/* downstream closed: stop quietly */
	int write_err;
	int rc;				/* an input could not be read */
	uint64_t games, kept, truncated, skipped[SK_N], positions;
	uint64_t stray;			/* stretches of text between games */
	uint64_t units;			/* games and stray text: --chunks */
	uint64_t problems;		/* games with any problem (--strict) */
	uint64_t dups, bloom_new;
	uint64_t frames;		/* zstd frames decompressed in parallel */
	/* records encoded in place in the writer's block (emit) */
	uint8_t *room;			/* NULL: none asked for */
	size_t room_len, pend_len;
	uint32_t pend_n;
	uint64_t *bloom;		/* nblocks x 8 words */
	uint64_t nblocks;
	struct builder *b;		/* -j 1: the records are made here */
	/* --chunks: the chunk being written (st->w NULL when its file was
	   already there), its file under a temporary name, then final */
	long chunk;			/* -1: none open */
	int chunks_stopped;		/* after an input error: no more */
	uint64_t chunk_pos0;		/* positions before that chunk */
	char *input_names;		/* the inputs' paths (chunks_inputs) */
	int chunk_fd;
	char chunk_tmp[4096], chunk_final[4096];
	uint64_t chunks_written, chunks_there;
};

static void
usage(void)
{
	fputs(USAGE, stderr);
}

static uint64_t
splitmix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* ---- --unique: a blocked Bloom filter --------------------------------- */

/* 1 if h was (probably) seen before; else remembers it and returns 0. */
static int
bloom_seen(struct state *st, uint64_t h)
{
	uint64_t *blk = st->bloom + 8 * (uint64_t)(((unsigned __int128)h *
	    st->nblocks) >> 64);
	uint64_t x = splitmix(h), need[8] = { 0 };
	int j, seen = 1;

	for (j = 0; j < BLOOM_K; j++) {
		unsigned bit;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		bit = (unsigned)(x >> 55);
		need[bit >> 6] |= 1ULL << (bit & 63);
	}
	for (j = 0; j < 8; j++) {
		if ((blk[j] & need[j]) != need[j])
			seen = 0;
		blk[j] |= need[j];
	}
	if (!seen)
		st->bloom_new++;
	return seen;
}

/*
 * The chance that a new position is taken for a seen one, given n
 * positions in m blocks: the block loads are Poisson(n/m); a block holding
 * j keys has each bit set with probability 1 - (1 - 1/512)^(8j).
 */
static double
bloom_fp_rate(uint64_t n, uint64_t m)
{
	double lambda = (double)n / (double)m, sum = 0, logp;
	long j, hi = (long)(lambda + 12 * sqrt(lambda) + 60);

	for (j = 0; j <= hi; j++) {
		double fill = 1 - pow(1 - 1.0 / 512, (double)BLOOM_K * j);

		logp = -lambda + j * log(lambda > 0 ? lambda : 1e-300) -
		    lgamma((double)j + 1);
		sum += exp(logp) * pow(fill, BLOOM_K);
	}
	return sum;
}

/* ---- per-game filters (before moves are resolved) --------------------- */

/* 0 keeps the game, else SK_* + 1.  Called from the parser threads: it
   reads the options only. */
static int
accept_game(const pf_pgn_game *g, void *arg)
{
	const struct opts *o = arg;

	if (o->min_elo >= 0 && (g->white_elo == 0 || g->black_elo == 0 ||
	    g->white_elo < o->min_elo || g->black_elo < o->min_elo))
		return SK_ELO + 1;
	if (o->max_elo >= 0 && (g->white_elo == 0 || g->black_elo == 0 ||
	    g->white_elo > o->max_elo || g->black_elo > o->max_elo))
		return SK_ELO + 1;
	if (o->tc_mask != 0 && !(o->tc_mask & (1u << g->tc_class)))
		return SK_TC + 1;
	return 0;
}

/* ---- records ---------------------------------------------------------- */

static void
build_meta(struct builder *st, const pf_pgn_game *g)
{
	pf_meta m;

	memset(&m, 0, sizeof(m));
	m.white_elo = g->white_elo;
	m.black_elo = g->black_elo;
	m.base_s = g->tc_class == PF_TC_CORRESPONDENCE ? PF_U32_UNKNOWN :
	    g->base_s;
	m.inc_s = g->inc_s == PF_U32_UNKNOWN ? 0 : g->inc_s;
	if (m.base_s == PF_U32_UNKNOWN)
		m.inc_s = 0;
	m.termination = g->termination;
	m.event = g->event.s;
	m.event_len = g->event.len;
	m.site = g->site.s;
	m.site_len = g->site.len;
	m.white = g->white.s;
	m.white_len = g->white.len;
	m.black = g->black.s;
	m.black_len = g->black.len;
	m.date = g->date.s;
	m.date_len = g->date.len;
	m.term_text = g->term_text.s;
	m.term_text_len = g->term_text.len;
	if (pf_meta_encode(&m, &st->ext) < 0)
		pf_extbuf_reset(&st->ext);
}

/* Mark the positions [0, npos) to write: plies, --per-game, --sample. */
static int
select_positions(struct builder *st, const pf_pgn_game *g, int npos)
{
	const struct opts *o = st->o;
	long lo = o->skip_plies, hi = npos, i, avail, want;
	uint64_t rng;
	int nsel = 0;

	if (o->max_plies < hi)
		hi = o->max_plies;
	memset(st->sel, 0, (size_t)npos);
	if (lo >= hi)
		return 0;
	avail = hi - lo;
	want = o->per_game > 0 && o->per_game < avail ? o->per_game : avail;
	if (want == avail && o->sample >= 1.0) {	/* no random choice */
		memset(st->sel + lo, 1, (size_t)avail);
		return (int)avail;
	}
	rng = splitmix(o->seed ^ splitmix(g->id ^ 0x5045524741ULL));
	/* Knuth's selection sampling: each subset of size want equally
	   likely, in one pass, reproducible from (seed, game id). */
	for (i = lo; i < hi && want > 0; i++, avail--) {
		rng = splitmix(rng);
		if ((rng >> 11) * (1.0 / 9007199254740992.0) * avail < want) {
			want--;
			if (o->sample < 1.0 && (double)(splitmix(o->seed ^
			    g->id ^ (uint64_t)i * 0xD1B54A32D192ED03ULL) >> 11) *
			    (1.0 / 9007199254740992.0) >= o->sample)
				continue;
			st->sel[i] = 1;
			nsel++;
		}
	}
	return nsel;
}

/* A write failed: the run stops writing.  -1. */
static int
write_failed(struct state *st)
{
	if (pf_writer_broken_pipe(st->w))
		st->broken = 1;
	else {
		pf_warnx("%s", pf_writer_error(st->w));
		st->write_err = 1;
	}
	return -1;
}

/* Count the records encoded in the writer's block in (at the end of each
   game: nothing is left pending between games).  0, or -1. */
static int
out_advance(struct state *st)
{
	uint32_t n = st->pend_n;
	size_t len = st->pend_len;

	st->room = NULL;
	st->room_len = st->pend_len = 0;
	st->pend_n = 0;
	if (n > 0 && pf_writer_advance(st->w, len, n) < 0)
		return write_failed(st);
	return 0;
}

/*
 * A record to the output (or dropped as a duplicate), its packed position
 * at pos (rec->pos is not set): encoded in place in the writer's block,
 * whose room is asked for once a game or so (its ext is the meta, clock
 * and eval extensions made here, well formed as they are made).
 * write_game has seen that the output takes records.  0, or -1 to stop
 * the game.
 */
static int
emit(struct state *st, const pf_record *rec, const uint8_t *pos,
    uint64_t hash)
{
	size_t len = (size_t)PF_CORE_SIZE + rec->ext_len;

	if (st->o->unique && bloom_seen(st, hash)) {
		st->dups++;
		return 0;
	}
	if (st->room == NULL || len > st->room_len - st->pend_len) {
		if (out_advance(st) < 0)
			return -1;
		if ((st->room = pf_writer_room(st->w, len,
		    &st->room_len)) == NULL)
			return write_failed(st);
	}
	pf_record_encode_pos(rec, pos, st->room + st->pend_len);
	st->pend_len += len;
	st->pend_n++;
	st->positions++;
	return 0;
}

/*
 * Make the record of position i of g and write it to out.  stm is its
 * side to move (for the eval's point of view); clk is NULL or the clocks
 * as of the position.  st->ext holds the game's meta extension in its
 * first st->meta_len bytes.
 */
static int
put_record(struct builder *st, const pf_pgn_game *g, int i, int stm,
    uint8_t result, uint16_t flags, const uint32_t *clk, struct state *out)
{
	pf_record rec;
	int r, has_eval = g->eval_kind[i] != PF_PGN_EVAL_NONE;

	rec.game_id = g->id;
	rec.ply = (uint16_t)i;
	rec.move = i < g->nmoves ? g->moves[i] : PF_MOVE_NONE;
	rec.result = result;
	rec.flags = flags;
	if (st->clk_tmpl && !has_eval) {
		/* the usual record: meta and clocks, set in place */
		uint8_t *c = st->ext.data + st->meta_len + PF_EXT_HEADER_SIZE;

		pf_put32(c, clk[PF_WHITE]);
		pf_put32(c + 4, clk[PF_BLACK]);
		clk = NULL;
	} else
		st->ext.len = st->meta_len;
	if (has_eval) {
		pf_eval *e = &st->e;
		int32_t v = g->eval[i];

		memset(e, 0, offsetof(pf_eval, pv));
		e->source = PF_SRC_PGN;
		e->score_kind = g->eval_kind[i] == PF_PGN_EVAL_MATE ?
		    PF_SCORE_MATE : PF_SCORE_CP;
		e->score = stm == PF_WHITE ? v : -v;
		e->depth = g->eval_depth[i];
		e->limit_kind = e->depth ? PF_LIMIT_DEPTH : PF_LIMIT_NONE;
		e->limit = e->depth;
		e->multipv = 1;
		pf_eval_encode(e, &st->ext);
	}
	if (clk != NULL) {
		pf_clock c = { clk[PF_WHITE], clk[PF_BLACK] };

		pf_clock_encode(&c, &st->ext);
	}
	rec.ext = st->ext.len ? st->ext.data : NULL;
	rec.ext_len = (uint32_t)st->ext.len;
	r = emit(out, &rec, g->packed + (size_t)i * PF_PACKED_SIZE,
	    st->o->unique ? g->hash[i] : 0);
	if (st->clk_tmpl && has_eval) {
		/* the record is out: the clock template comes back after
		   the meta */
		pf_clock c = { 0, 0 };

		st->ext.len = st->meta_len;
		st->clk_tmpl = pf_clock_encode(&c, &st->ext) == 0;
	}
	return r;
}

/* How the game ended on the board: checkmate or stalemate decide its
   result. */
static enum pf_status
game_status(const pf_pgn_game *g)
{
	if (g->problem == PF_PGNP_NONE || g->problem == PF_PGNP_EOF)
		return pf_board_status(&g->final);
	return PF_ONGOING;
}

/* Write the records of the selected positions of a game (kept packed by
   the parser) to out. */
static void
write_game(struct builder *st, const pf_pgn_game *g, struct state *out)
{
	int npos = g->nmoves + 1, i, nsel, stm = g->start.stm;
	uint32_t clk[2] = { PF_U32_UNKNOWN, PF_U32_UNKNOWN };
	uint16_t base = 0, last_flags = PF_RF_LAST;
	enum pf_status status;
	uint8_t result;

	/* The output takes no more records (a write failed, or the chunk
	   was there already): emit does not look again. */
	if (out->broken || out->write_err || out->w == NULL)
		return;
	if ((nsel = select_positions(st, g, npos)) == 0)
		return;
	pf_extbuf_reset(&st->ext);
	st->meta_len = 0;
	status = game_status(g);
	if (!st->o->no_meta) {
		build_meta(st, g);
		st->meta_len = st->ext.len;
	}
	st->clk_tmpl = 0;
	if (g->has_clk) {
		pf_clock c = { 0, 0 };

		st->clk_tmpl = pf_clock_encode(&c, &st->ext) == 0;
		if (!st->clk_tmpl)
			st->ext.len = st->meta_len;
	}
	/* The clocks at the start: the base, when it is known and fits a
	   u32 of milliseconds (a base of 49.7 days or more does not). */
	if (g->has_clk && g->base_s != PF_U32_UNKNOWN &&
	    g->tc_class != PF_TC_CORRESPONDENCE &&
	    g->base_s <= (PF_U32_UNKNOWN - 1) / 1000u)
		clk[0] = clk[1] = g->base_s * 1000u;
	result = pf_pgn_result(g, status);
	if (status == PF_CHECKMATE)
		last_flags |= PF_RF_MATE;
	else if (status == PF_STALEMATE)
		last_flags |= PF_RF_STALEMATE;
	if (g->problem)
		last_flags |= PF_RF_TRUNCATED;
	if (g->start.chess960)
		base |= PF_RF_CHESS960;
	for (i = 0; i < npos; i++, stm ^= 1) {
		/* clk_ms[i]: the clock of the side that made move i - 1 */
		if (i > 0 && g->clk_ms[i] != PF_U32_UNKNOWN)
			clk[stm ^ 1] = g->clk_ms[i];
		if (st->sel[i]) {
			/* the parser's flags are the record's (pgn.h) */
			uint16_t flags = base | g->pflags[i] |
			    (i == npos - 1 ? last_flags : 0);

			if (put_record(st, g, i, stm, result, flags,
			    g->has_clk ? clk : NULL, out) < 0 ||
			    --nsel == 0)
				break;
		}
	}
	(void)out_advance(out);
}

/* ---- where records go ------------------------------------------------- */

static struct builder *
builder_new(const struct opts *o)
{
	struct builder *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->o = o;
	if ((b->sel = malloc(PF_PGN_MAX_PLIES + 1)) == NULL) {
		free(b);
		return NULL;
	}
	return b;
}

static void
builder_free(struct builder *b)
{
	if (b == NULL)
		return;
	pf_extbuf_free(&b->ext);
	free(b->sel);
	free(b);
}

/* Does do_game write this game's records? */
static int
writes_game(const struct opts *o, const pf_pgn_game *g)
{
	return !g->skip && !g->filtered && !(g->problem && o->strict_games);
}

/* ---- games ------------------------------------------------------------ */

/* One warning per bad game, in the forms pgn2pos(1) lists; what is
   "kept N positions", "game skipped", "game dropped" or "line skipped". */
static void
warn_game(const char *where, const pf_pgn_game *g, int epd,
    const char *what)
{
	const char *unit = epd ? "line" : "game";
	uint64_t n = epd ? g->line : g->number;
	char at[48];

	if (g->stray) {
		/* text between games that is no game: placed by the game
		   before it (it takes no number of its own) */
		if (g->number == 0)
			snprintf(at, sizeof(at), "before the first game");
		else
			snprintf(at, sizeof(at), "after game %" PRIu64,
			    g->number);
		if (g->problem == PF_PGNP_ILLEGAL)
			pf_warnx("%s: %s: illegal move \"%s\"; text skipped",
			    where, at, g->text);
		else
			pf_warnx("%s: %s: %s; text skipped", where, at,
			    pf_pgn_problem_name(g->problem));
		return;
	}
	switch (g->problem) {
	case PF_PGNP_ILLEGAL:
		pf_warnx("%s: %s %" PRIu64 " (ply %d): illegal move \"%s\"; %s",
		    where, unit, n, g->nmoves, g->text, what);
		break;
	case PF_PGNP_TAG:
	case PF_PGNP_TAG_LONG:
	case PF_PGNP_BADTAG:
		pf_warnx("%s: %s %" PRIu64 ": %s; %s", where, unit, n,
		    pf_pgn_problem_name(g->problem), what);
		break;
	case PF_PGNP_FEN:
		pf_warnx("%s: %s %" PRIu64 ": invalid FEN \"%s\": %s; %s",
		    where, unit, n, g->text, g->detail, what);
		break;
	case PF_PGNP_BINARY:
		if (g->skip)
			pf_warnx("%s: %s %" PRIu64 ": binary data; %s", where,
			    unit, n, what);
		else
			pf_warnx("%s: %s %" PRIu64 " (ply %d): binary data; %s",
			    where, unit, n, g->nmoves, what);
		break;
	case PF_PGNP_VARIANT:
		break;		/* counted in the summary only */
	default:
		pf_warnx("%s: %s %" PRIu64 " (ply %d): %s; %s", where, unit, n,
		    g->nmoves, pf_pgn_problem_name(g->problem), what);
		break;
	}
}

/* Evaluations the game had that do not fit a record: dropped, the game
   kept. */
static void
warn_evals(const char *where, const pf_pgn_game *g, int epd)
{
	char more[64] = "";

	if (g->bad_evals > 1)
		snprintf(more, sizeof(more), " (and %d more in the %s)",
		    g->bad_evals - 1, epd ? "line" : "game");
	if (epd)
		pf_warnx("%s: line %" PRIu64 ": evaluation out of range "
		    "\"%s\"; dropped%s", where, g->line, g->bad_eval_text,
		    more);
	else
		pf_warnx("%s: game %" PRIu64 " (ply %d): evaluation out of "
		    "range \"%s\"; dropped%s", where, g->number,
		    g->bad_eval_ply, g->bad_eval_text, more);
}

/*
 * --chunks: finish the chunk being written (its file renamed to its final
 * name once complete, so a half-written chunk is never taken for one).
 * 0, or -1 after a message.
 */
static int
chunk_close(struct state *st)
{
	int rv = 0;

	if (st->chunk < 0)
		return 0;
	st->chunk = -1;
	if (st->w == NULL)
		return 0;
	if (pf_writer_close(st->w) < 0) {
		pf_warnx("%s", pf_writer_error(st->w));
		rv = -1;
	}
	pf_writer_free(st->w);
	st->w = NULL;
	if (close(st->chunk_fd) == -1 && rv == 0) {
		pf_warn("%s", st->chunk_tmp);
		rv = -1;
	}
	if (rv == 0 && rename(st->chunk_tmp, st->chunk_final) == -1) {
		pf_warn("%s", st->chunk_final);
		rv = -1;
	}
	if (rv == -1) {
		unlink(st->chunk_tmp);
		st->write_err = 1;
	} else
		st->chunks_written++;
	return rv;
}

/*
 * --chunks: the chunks in dir are of these inputs.  Their real paths,
 * sizes and modification times are kept in dir/.inputs (standard input
 * only by its name: it cannot be checked); a rerun on inputs that
 * changed since (a file grown or replaced) would take chunks of the old
 * ones for its own, so where chunks are there and .inputs names other
 * inputs the run is refused.  A run stopped by an input error keeps only
 * their paths there (chunks_stop): its chunks hold the games before the
 * error, and a rerun on the same inputs mended takes them.  0, or -1
 * after a message.
 */
/* One input file in .inputs: its path, size and time; in *names its
   path alone. */
static void
put_input(FILE *fp, FILE *names, const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0)
		fprintf(fp, "%s\t%lld\t%lld.%09ld\n", path,
		    (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
		    sb.st_mtim.tv_nsec);
	else
		fprintf(fp, "%s\n", path);
	fprintf(names, "%s\n", path);
}

static int
chunks_inputs(struct state *st, int argc, char **argv)
{
	const char *dir = st->o->output;
	char path[4096], *old = NULL, *now = NULL;
	size_t len = 0, oldlen = 0, nlen = 0;
	struct dirent *de;
	struct stat sb;
	FILE *fp, *names;
	DIR *d;
	int chunks = 0, rv = 0;

	if ((fp = open_memstream(&now, &len)) == NULL)
		goto nomem;
	if ((names = open_memstream(&st->input_names, &nlen)) == NULL) {
		fclose(fp);
		goto nomem;
	}
	for (int i = 0; i == 0 || i < argc; i++) {
		const char *f = argc ? argv[i] : "-";
		char **paths = NULL, **why = NULL, err[256], real[PATH_MAX];
		size_t n = 0;

		/* named as the file it is: "./g.pgn" is "g.pgn" */
		if (strcmp(f, "-") != 0 && realpath(f, real) != NULL)
			f = real;
		/* a directory: every file under it */
		if (strcmp(f, "-") != 0 && stat(f, &sb) == 0 &&
		    S_ISDIR(sb.st_mode) && pf_input_dir_files(f, &paths, &why,
		    &n, err, sizeof(err)) == 0) {
			for (size_t k = 0; k < n; k++)
				put_input(fp, names, paths[k]);
			pf_input_free_paths(paths, n);
			pf_input_free_paths(why, n);
		} else
			put_input(fp, names, f);
	}
	if ((fclose(names) == EOF) | (fclose(fp) == EOF))
		goto nomem;
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			chunks |= strncmp(de->d_name, "chunk-", 6) == 0;
		closedir(d);
	}
	/* a run stopped by an input error kept the names alone: the mended
	   inputs have other sizes and times */
	snprintf(path, sizeof(path), "%s/.inputs", dir);
	if (chunks && (fp = fopen(path, "r")) != NULL) {
		ssize_t n = getdelim(&old, &oldlen, '\0', fp);
		int stopped = n >= 8 && memcmp(old, "stopped\n", 8) == 0;
		const char *o = stopped ? old + 8 : old, *w = stopped ?
		    st->input_names : now;
		size_t ol = stopped ? (size_t)n - 8 : (size_t)n, wl = stopped ?
		    nlen : len;

		fclose(fp);
		if (n >= 0 && (ol != wl || memcmp(o, w, wl) != 0)) {
			pf_warnx("%s: holds chunks of other inputs (changed "
			    "since, by name, size or time: %s): remove them or "
			    "give another directory", dir, path);
			rv = -1;
			goto out;
		}
	}
	if ((fp = fopen(path, "w")) == NULL || fwrite(now, 1, len, fp) != len ||
	    fclose(fp) == EOF) {
		pf_warn("%s", path);
		rv = -1;
	}
out:
	free(old);
	free(now);
	return rv;
nomem:
	pf_warn("out of memory");
	free(now);
	return -1;
}

/*
 * --chunks after an input error: the chunk being written and every later
 * one are left unwritten.  A rerun with the input mended numbers the games
 * after the error differently (a game more in the damaged place, a file
 * that was missing), and would take chunks of this run for its own; the
 * finished chunks before the error hold the same games either way.  Stops
 * the reading (returns -1 for do_event).
 */
static int
chunks_stop(struct state *st)
{
	char path[4096];
	FILE *fp;

	if (st->o->chunks <= 0)
		return 0;
	if (!st->chunks_stopped) {
		if (st->w != NULL) {
			pf_writer_free(st->w);
			st->w = NULL;
			close(st->chunk_fd);
			unlink(st->chunk_tmp);
			st->positions = st->chunk_pos0;
		}
		/* the chunks kept hold games before the error: a rerun on the
		   same inputs mended takes them (chunks_inputs) */
		snprintf(path, sizeof(path), "%s/.inputs", st->o->output);
		if ((fp = fopen(path, "w")) == NULL ||
		    fprintf(fp, "stopped\n%s", st->input_names ?
		    st->input_names : "") < 0 || fclose(fp) == EOF)
			(void)unlink(path);
		pf_warnx("%s: chunk %06ld and later not written: after an "
		    "input error a rerun numbers the games differently (mend "
		    "the input and run again)", st->o->output, st->chunk < 0 ?
		    (long)(st->units / (uint64_t)st->o->chunks) : st->chunk);
		st->chunk = -1;
		st->chunks_stopped = 1;
	}
	return -1;
}

/*
 * The writer's options: blocks go out full, or when the input would block
 * (flush_idle), never on a timer, so the bytes written depend on the
 * input alone, with any -j.  Compressed to a file, zstd compresses in -j
 * threads of its own (at least one, so the bytes are the same for any
 * -j): compression takes longer than parsing, and no turn waits for it.
 */
static pf_writer_opts
out_opts(const struct opts *o, int zstd)
{
	pf_writer_opts wo = pf_default_writer_opts(zstd);

	wo.flush_ms = -1;
	wo.zstd_workers = o->jobs;
	return wo;
}

/* Start chunk k: its file, or nothing when a finished one is there (the
   split is deterministic: a rerun writes the same chunk). */
static int
chunk_open(struct state *st, long k)
{
	const struct opts *o = st->o;
	const char *ext = o->zstd ? ".pos.zst" : ".pos";
	pf_writer_opts wo = out_opts(o, o->zstd);

	if (chunk_close(st) == -1)
		return -1;
	st->chunk = k;
	st->chunk_pos0 = st->positions;
	snprintf(st->chunk_final, sizeof(st->chunk_final),
	    "%s/chunk-%06ld%s", o->output, k, ext);
	if (access(st->chunk_final, F_OK) == 0) {
		st->chunks_there++;
		return 0;
	}
	snprintf(st->chunk_tmp, sizeof(st->chunk_tmp), "%s/.chunk-%06ld%s.part",
	    o->output, k, ext);
	if ((st->chunk_fd = open(st->chunk_tmp, O_WRONLY | O_CREAT | O_TRUNC,
	    0666)) == -1) {
		pf_warn("%s", st->chunk_tmp);
		st->write_err = 1;
		st->chunk = -1;
		return -1;
	}
	if ((st->w = pf_writer_open_fd(st->chunk_fd, st->chunk_final, &wo)) ==
	    NULL) {
		pf_warn("out of memory");
		close(st->chunk_fd);
		unlink(st->chunk_tmp);
		st->write_err = 1;
		st->chunk = -1;
		return -1;
	}
	return 0;
}

/* A game writes_game says no to: counted by its reason, and warned of. */
static void
drop_game(struct state *st, const char *where, const pf_pgn_game *g, int epd)
{
	if (g->skip) {
		switch (g->problem) {
		case PF_PGNP_VARIANT: st->skipped[SK_VARIANT]++; break;
		case PF_PGNP_FEN: st->skipped[SK_FEN]++; break;
		case PF_PGNP_TAG:
		case PF_PGNP_TAG_LONG:
		case PF_PGNP_BADTAG: st->skipped[SK_TAG]++; break;
		default: st->skipped[SK_BINARY]++; break;
		}
		warn_game(where, g, epd, epd ? "line skipped" : "game skipped");
	} else if (g->filtered)
		st->skipped[g->filtered - 1]++;
	else {			/* a problem, with --strict-games */
		st->skipped[SK_STRICT]++;
		warn_game(where, g, epd, "game dropped");
	}
}

static void
do_game(struct state *st, const char *where, const pf_pgn_game *g, int epd)
{
	const struct opts *o = st->o;
	char what[64];

	/* --chunks counts stray text too: a rerun splits the same way */
	if (o->chunks > 0 && (long)(st->units / (uint64_t)o->chunks) !=
	    st->chunk && chunk_open(st, (long)(st->units /
	    (uint64_t)o->chunks)) == -1)
		return;
	st->units++;
	if (g->problem)
		st->problems++;
	if (g->stray) {		/* text between games: no game */
		st->stray++;
		warn_game(where, g, epd, "text skipped");
		return;
	}
	st->games++;
	if (!writes_game(o, g)) {
		drop_game(st, where, g, epd);
		return;
	}
	if (g->bad_evals > 0) {
		warn_evals(where, g, epd);
		if (!g->problem)
			st->problems++;		/* --strict */
	}
	if (g->problem) {
		st->truncated++;
		snprintf(what, sizeof(what), "kept %d position%s",
		    g->nmoves + 1, g->nmoves == 0 ? "" : "s");
		warn_game(where, g, epd, what);
	}
	st->kept++;
	write_game(st->b, g, st);
}

/* The input would block: pass on what is buffered (pipelines flow). */
static void
flush_idle(void *arg)
{
	struct state *st = arg;

	if (st->broken || st->write_err || st->w == NULL ||
	    pf_writer_pending(st->w) == 0)
		return;
	if (pf_writer_flush(st->w) < 0) {
		if (pf_writer_broken_pipe(st->w))
			st->broken = 1;
		else {
			pf_warnx("%s", pf_writer_error(st->w));
			st->write_err = 1;
		}
	}
}

/* A positive number from the environment variable name (at most max),
   or 0 when it is not set or not such a number: bytes per -j piece
   ($POSFLOW_PGN_PIECE, for tests that want many cuts in little text),
   the -j from which the parsers decompress zstd frames
   ($POSFLOW_PGN_FRAMES, for tests and benchmarks). */
static long long
env_number(const char *name, long long max)
{
	const char *v = getenv(name), *errstr = NULL;
	long long n;

	if (v == NULL || *v == '\0')
		return 0;
	n = pf_strtonum(v, 1, max, &errstr);
	return errstr == NULL ? n : 0;
}

/* The file being read: what its messages say. */
struct file {
	struct state *st;
	const char *name;
	char where[1024];	/* name, or name: member */
	uint64_t last;		/* the last game (or line) read */
	int rc;
};

/* One event of the file (with -j, from whichever parser thread has the
   turn).  0, or -1 to stop reading. */
static int
do_event(const pf_games_event *ev, void *arg)
{
	struct file *f = arg;
	struct state *st = f->st;

	switch (ev->kind) {
	case PF_GAMES_MEMBER:
		if (ev->member != NULL)
			snprintf(f->where, sizeof(f->where), "%s: %s", f->name,
			    ev->member);
		else
			snprintf(f->where, sizeof(f->where), "%s", f->name);
		f->last = 0;
		break;
	case PF_GAMES_GAME:
		f->last = ev->epd ? ev->game->line : ev->game->number;
		do_game(st, f->where, ev->game, ev->epd);
		break;
	case PF_GAMES_READ_ERROR:
		if (f->last == 0)
			pf_warnx("%s: read error before the first %s: %s",
			    f->where, ev->epd ? "line" : "game", ev->error);
		else
			pf_warnx("%s: read error after %s %" PRIu64 ": %s",
			    f->where, ev->epd ? "line" : "game", f->last,
			    ev->error);
		f->rc = 1;
		/* on to the next member: a damaged zip member leaves the
		   others readable */
		return chunks_stop(st);
	case PF_GAMES_INPUT_ERROR:
		pf_warnx("%s: %s", f->name, ev->error);
		f->rc = 1;
		return chunks_stop(st);
	}
	return st->broken || st->write_err ? -1 : 0;
}

/* One input file; returns 0, or 1 when it could not be read. */
static int
do_file(struct state *st, const char *path)
{
	const struct opts *o = st->o;
	struct file f;
	pf_games_opts go;
	pf_games *gs;
	uint64_t units0 = st->units, bad0 = st->skipped[SK_BINARY];
	uint64_t stray0 = st->stray;

	memset(&f, 0, sizeof(f));
	f.st = st;
	f.name = pf_input_name(path);
	snprintf(f.where, sizeof(f.where), "%s", f.name);
	memset(&go, 0, sizeof(go));
	go.threads = o->jobs;
	go.format = o->format;
	go.want_hash = o->unique;
	go.mate_moves = o->mate_moves;
	go.accept = accept_game;
	go.accept_arg = (void *)o;
	go.idle = flush_idle;
	go.idle_arg = st;
	go.piece = (size_t)env_number("POSFLOW_PGN_PIECE", 1LL << 30);
	go.frames_from = (int)env_number("POSFLOW_PGN_FRAMES",
	    PF_GAMES_MAX_THREADS);
	if ((gs = pf_games_open(path, f.name, &go)) == NULL) {
		pf_warn("%s", f.name);
		return 1;
	}
	if (!st->broken && !st->write_err &&
	    pf_games_run(gs, do_event, &f) < 0) {
		pf_warnx("%s: %s", f.where, pf_games_error(gs));
		f.rc = 1;
	}
	st->frames += pf_games_frames(gs);
	pf_games_close(gs);
	/* Read to its end, yet every game in it was text or bytes that are
	   no game: not what was meant (a wrong file, an unknown format). */
	if (f.rc == 0 && !st->broken && !st->write_err &&
	    st->units > units0 && st->skipped[SK_BINARY] - bad0 +
	    st->stray - stray0 == st->units - units0) {
		pf_warnx("%s: no PGN or EPD game in it", f.name);
		f.rc = 1;
	}
	return f.rc;
}

/* pf_input_each_file's call: do_file, its result gathered in st->rc, or
   path named with why it is not read (an error, as a file that cannot be
   read is); nonzero stops (the output is gone). */
static int
each_file(void *arg, const char *path, const char *why)
{
	struct state *st = arg;

	if (why != NULL) {
		pf_warnx("%s: %s", path, why);
		st->rc = 1;
		return 0;
	}
	/* a loop is skipped alike on every run; a file unread is not */
	if (do_file(st, path) != 0) {
		st->rc = 1;
		(void)chunks_stop(st);
	}
	return st->broken || st->write_err || st->chunks_stopped;
}

static void
summary(const struct state *st)
{
	char reasons[512] = "", tail[256] = "", stray[64] = "";
	size_t n = 0;
	uint64_t skipped = 0;
	int i;

	for (i = 0; i < SK_N; i++) {
		if (st->skipped[i] == 0)
			continue;
		skipped += st->skipped[i];
		n += (size_t)snprintf(reasons + n, sizeof(reasons) - n,
		    "%s%" PRIu64 " %s", n ? ", " : " (", st->skipped[i],
		    skip_names[i]);
	}
	if (n)
		snprintf(reasons + n, sizeof(reasons) - n, ")");
	if (st->o->unique)
		snprintf(tail, sizeof(tail), ", %" PRIu64 " duplicates dropped "
		    "(false-positive rate %.2g)", st->dups,
		    bloom_fp_rate(st->bloom_new, st->nblocks));
	if (st->o->chunks > 0)
		snprintf(tail + strlen(tail), sizeof(tail) - strlen(tail),
		    "; %" PRIu64 " chunks written, %" PRIu64 " already there "
		    "(their positions not counted)", st->chunks_written,
		    st->chunks_there);
	/* after a write error, some of them never reached the output */
	if (st->stray > 0)
		snprintf(stray, sizeof(stray), "; %" PRIu64 " stretch%s of "
		    "text between games skipped", st->stray, st->stray == 1 ?
		    "" : "es");
	pf_warnx("%" PRIu64 " games read, %" PRIu64 " kept (%" PRIu64
	    " truncated), %" PRIu64 " skipped%s%s; %" PRIu64 " positions %s%s",
	    st->games, st->kept, st->truncated, skipped, reasons, stray,
	    st->positions, st->write_err ? "made, the output cut short by "
	    "the write error" : "written", tail);
}

static int
parse_tc_list(const char *s, unsigned *mask)
{
	static const char *names[] = { "ultrabullet", "bullet", "blitz",
	    "rapid", "classical", "correspondence" };
	static const int classes[] = { PF_TC_ULTRABULLET, PF_TC_BULLET,
	    PF_TC_BLITZ, PF_TC_RAPID, PF_TC_CLASSICAL, PF_TC_CORRESPONDENCE };

	while (*s) {
		size_t len = strcspn(s, ","), i;

		for (i = 0; i < 6; i++)
			if (strlen(names[i]) == len &&
			    strncmp(s, names[i], len) == 0)
				break;
		if (i == 6)
			return -1;
		*mask |= 1u << classes[i];
		s += len;
		if (*s == ',' && *++s == '\0')
			return -1;
	}
	return *mask ? 0 : -1;
}

enum { O_EPD = 256, O_PGN, O_NO_META, O_SKIP, O_MAXP, O_MINELO, O_MAXELO,
    O_TC, O_SAMPLE, O_PERGAME, O_SEED, O_UNIQUE, O_UNIQUE_MEM, O_STRICT,
    O_STRICT_GAMES, O_STATS, O_CHUNKS, O_MATE_MOVES, O_HELP, O_VERSION };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "force", no_argument, NULL, 'f' },
	{ "zstd", no_argument, NULL, 'z' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "epd", no_argument, NULL, O_EPD },
	{ "pgn", no_argument, NULL, O_PGN },
	{ "no-meta", no_argument, NULL, O_NO_META },
	{ "skip-plies", required_argument, NULL, O_SKIP },
	{ "max-plies", required_argument, NULL, O_MAXP },
	{ "min-elo", required_argument, NULL, O_MINELO },
	{ "max-elo", required_argument, NULL, O_MAXELO },
	{ "time-control", required_argument, NULL, O_TC },
	{ "sample", required_argument, NULL, O_SAMPLE },
	{ "per-game", required_argument, NULL, O_PERGAME },
	{ "seed", required_argument, NULL, O_SEED },
	{ "unique", no_argument, NULL, O_UNIQUE },
	{ "unique-mem", required_argument, NULL, O_UNIQUE_MEM },
	{ "strict", no_argument, NULL, O_STRICT },
	{ "strict-games", no_argument, NULL, O_STRICT_GAMES },
	{ "stats", no_argument, NULL, O_STATS },
	{ "chunks", required_argument, NULL, O_CHUNKS },
	{ "mate-moves", no_argument, NULL, O_MATE_MOVES },
	{ "help", no_argument, NULL, O_HELP },
	{ "version", no_argument, NULL, O_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* Returns -1 (usage error, already reported), 0, or 1 (--help/--version
   done: exit 0). */
static int
parse_opts(int argc, char *argv[], struct opts *o)
{
	const char *errstr = NULL, *what = NULL;
	int ch;

	memset(o, 0, sizeof(*o));
	o->max_plies = 65536;
	o->min_elo = o->max_elo = -1;
	o->sample = 1.0;
	o->unique_mem = 64;
	o->jobs = 1;
	while ((ch = getopt_long(argc, argv, "fj:o:qz", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f': o->force = 1; break;
		case 'j':
			what = "-j";
			o->jobs = (int)pf_strtonum(optarg, 1,
			    PF_GAMES_MAX_THREADS, &errstr);
			break;
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'z': o->zstd = 1; break;
		case O_EPD:
		case O_PGN:
			if (o->format != 0 && o->format !=
			    (ch == O_EPD ? PF_PGN_EPD : PF_PGN_PGN)) {
				pf_warnx("give only one of --epd, --pgn");
				usage();
				return -1;
			}
			o->format = ch == O_EPD ? PF_PGN_EPD : PF_PGN_PGN;
			break;
		case O_NO_META: o->no_meta = 1; break;
		case O_SKIP:
			what = "--skip-plies";
			o->skip_plies = (long)pf_strtonum(optarg, 0, 65535,
			    &errstr);
			break;
		case O_MAXP:
			what = "--max-plies";
			o->max_plies = (long)pf_strtonum(optarg, 1, 65536,
			    &errstr);
			break;
		case O_MINELO:
			what = "--min-elo";
			o->min_elo = (long)pf_strtonum(optarg, 0, 65535, &errstr);
			break;
		case O_MAXELO:
			what = "--max-elo";
			o->max_elo = (long)pf_strtonum(optarg, 0, 65535, &errstr);
			break;
		case O_TC:
			if (parse_tc_list(optarg, &o->tc_mask) < 0) {
				pf_warnx("--time-control: invalid class list "
				    "\"%s\"", optarg);
				usage();
				return -1;
			}
			break;
		case O_SAMPLE:
			what = "--sample";
			o->sample = pf_strtod(optarg, 0, 1, &errstr);
			break;
		case O_PERGAME:
			what = "--per-game";
			o->per_game = (long)pf_strtonum(optarg, 1, 65536,
			    &errstr);
			break;
		case O_SEED:
			what = "--seed";
			o->seed = (uint64_t)pf_strtonum(optarg, 0, INT64_MAX,
			    &errstr);
			break;
		case O_UNIQUE: o->unique = 1; break;
		case O_UNIQUE_MEM:
			what = "--unique-mem";
			o->unique_mem = (long)pf_strtonum(optarg, 1, 1 << 20,
			    &errstr);
			o->unique = 1;
			break;
		case O_STRICT: o->strict = 1; break;
		case O_STRICT_GAMES: o->strict_games = 1; break;
		case O_STATS: o->stats = 1; break;
		case O_MATE_MOVES: o->mate_moves = 1; break;
		case O_CHUNKS:
			what = "--chunks";
			o->chunks = (long)pf_strtonum(optarg, 1, 1L << 40,
			    &errstr);
			break;
		case O_HELP:
			fputs(USAGE, stdout);
			return 1;
		case O_VERSION:
			pf_print_version();
			return 1;
		default:
			usage();
			return -1;
		}
		if (errstr != NULL) {
			pf_warnx("%s: %s: %s", what, optarg, errstr);
			usage();
			return -1;
		}
	}
	if (o->skip_plies >= o->max_plies) {
		pf_warnx("--skip-plies must be less than --max-plies");
		usage();
		return -1;
	}
	if (o->chunks > 0 && (o->output == NULL || *o->output == '\0' ||
	    strcmp(o->output, "-") == 0)) {
		pf_warnx("--chunks needs -o directory");
		usage();
		return -1;
	}
	if (o->min_elo >= 0 && o->max_elo >= 0 && o->min_elo > o->max_elo) {
		pf_warnx("--min-elo is greater than --max-elo");
		usage();
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct state st;
	struct timespec t0, t1;
	pf_writer_opts wo;
	char err[512];
	int fd = -1, compress = 0, rc = PF_EXIT_OK, i, r;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) != 0)
		return r < 0 ? PF_EXIT_USAGE : PF_EXIT_OK;
	argc -= optind;
	argv += optind;
	pf_set_inputs(argc, (const char *const *)argv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&st, 0, sizeof(st));
	st.o = &o;
	if ((st.b = builder_new(&o)) == NULL) {
		pf_warn("malloc");
		return PF_EXIT_DATA;
	}
	if (o.unique) {
		st.nblocks = ((uint64_t)o.unique_mem << 20) / 64;
		if ((st.bloom = calloc(st.nblocks, 64)) == NULL) {
			pf_warn("--unique-mem %ld", o.unique_mem);
			rc = PF_EXIT_DATA;
			goto out;
		}
	}
	st.chunk = -1;
	if (o.chunks > 0) {
		if (mkdir(o.output, 0777) == -1 && errno != EEXIST) {
			pf_warn("%s", o.output);
			rc = PF_EXIT_DATA;
			goto out;
		}
		/* one run writes the chunks: held to the exit */
		if (pf_lock_dir(o.output) == -1) {
			rc = PF_EXIT_DATA;
			goto out;
		}
		if (chunks_inputs(&st, argc, argv) == -1) {
			rc = PF_EXIT_DATA;
			goto out;
		}
	} else {
		if ((fd = pf_open_output(o.output, o.force, &compress)) ==
		    -1) {
			pf_warn_output(o.output);
			rc = PF_EXIT_DATA;
			goto out;
		}
		wo = out_opts(&o, compress || o.zstd);
		if ((st.w = pf_writer_open_fd(fd, o.output ? o.output :
		    "stdout", &wo)) == NULL) {
			pf_warn("out of memory");
			rc = PF_EXIT_DATA;
			goto out;
		}
	}
	if (argc == 0)
		rc |= do_file(&st, "-");
	for (i = 0; i < argc && !st.broken && !st.write_err &&
	    !st.chunks_stopped; i++)
		if (pf_input_each_file(argv[i], each_file, &st, err,
		    sizeof(err)) == -1) {
			pf_warnx("%s", err);
			st.rc = 1;
			(void)chunks_stop(&st);
		}
	rc |= st.rc;
	if (o.chunks > 0)
		chunk_close(&st);
	else if (!st.broken && !st.write_err && pf_writer_close(st.w) < 0) {
		if (pf_writer_broken_pipe(st.w))
			st.broken = 1;
		else {
			pf_warnx("%s", pf_writer_error(st.w));
			st.write_err = 1;
		}
	}
	if (st.broken)		/* a closed pipe: quietly, input errors kept */
		goto out;
	if (st.write_err)
		rc = PF_EXIT_DATA;
	if (o.strict && st.problems + st.skipped[SK_STRICT] > 0)
		rc = PF_EXIT_DATA;
	if (!o.quiet)
		summary(&st);
	if (o.stats) {
		struct rusage ru;
		double secs;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		getrusage(RUSAGE_SELF, &ru);
		pf_warnx("stats: %.3f s, %.0f positions/s, max RSS %ld KiB, "
		    "%" PRIu64 " zstd frame%s decompressed in parallel",
		    secs, secs > 0 ? (double)st.positions / secs : 0.0,
		    ru.ru_maxrss, st.frames, st.frames == 1 ? "" : "s");
	}
out:
	if (o.chunks > 0 && st.chunk >= 0 && st.w != NULL) {
		/* a failed run: the chunk being written is not kept */
		pf_writer_free(st.w);
		st.w = NULL;
		close(st.chunk_fd);
		unlink(st.chunk_tmp);
	}
	pf_writer_free(st.w);
	free(st.input_names);
	/* An output file left empty by a failed write is removed (it would
	   read as a complete empty stream). */
	if (fd >= 0 && pf_close_output(o.output, fd, st.write_err) == -1 &&
	    !st.write_err) {
		pf_warn("%s", o.output);
		rc = PF_EXIT_DATA;
	}
	builder_free(st.b);
	free(st.bloom);
	return rc ? (rc == PF_EXIT_USAGE ? PF_EXIT_USAGE : PF_EXIT_DATA) : 0;
}
