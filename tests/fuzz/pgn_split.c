/*
 * pgn_split.c - libFuzzer target: pgn2pos -j's pieces (lib/games.c, and
 * pf_pgn_cut / pf_pgn_start_mem of lib/pgn.c) against one reader.
 *
 * The input is two control bytes and a file: the file is read through
 * pf_games with one thread (pf_input + pf_pgn, game by game), and again
 * with two or three parser threads cutting it into pieces of a few dozen
 * to a thousand bytes, so that cuts fall everywhere they may.  The format
 * is auto, PGN or EPD, and an accept callback filters games on their tags
 * (a function of the game alone, as -j requires).  Properties:
 *   - both give the same events in the same order: members, games, read
 *     and input errors with the same text, the same EPD flag; never two
 *     calls of the event function at once;
 *   - every game is the same, field by field (numbers and EPD line
 *     numbers counted over the whole member, the id, the problem and its
 *     text, the tags, the start and final boards), and for a game that is
 *     kept its moves, packed positions, flags, hashes, evaluations and
 *     clocks;
 *   - nothing fails for want of memory or with an internal error.
 * With bit 3 of the second control byte set, the file is zstd frames of
 * a few to a few hundred bytes of text each (the frames are then
 * decompressed by the parser threads), and with bit 4 one byte of it is
 * changed (damage: the frames after it are read by pf_input).
 */
#include <zstd.h>

#include "fuzz.h"
#include "games.h"
#include "pgn.h"
#include "record.h"

#define MAX_EVENTS	4096

static int
accept(const pf_pgn_game *g, void *arg)
{
	(void)arg;
	return (g->white_elo + g->event.len) % 5 == 1 ? 3 : 0;
}

struct ev {
	int kind, epd;
	char member[64], error[64];
	pf_pgn_game g;		/* arrays pointed at the copies below */
	size_t n;
	pf_move *moves;
	uint8_t *packed, *kind_;
	uint16_t *pflags, *depth;
	int32_t *eval;
	uint32_t *clk;
	uint64_t *hash;
};

static void *
copy_of(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);

	FUZZ_CHECK(d != NULL);
	if (n)
		memcpy(d, p, n);
	return d;
}

static void
keep(struct ev *e, const pf_games_event *ev)
{
	memset(e, 0, sizeof(*e));
	e->kind = ev->kind;
	e->epd = ev->epd;
	if (ev->member != NULL)
		snprintf(e->member, sizeof(e->member), "%s", ev->member);
	if (ev->error != NULL)
		snprintf(e->error, sizeof(e->error), "%s", ev->error);
	if (ev->kind != PF_GAMES_GAME)
		return;
	e->g = *ev->game;
	if (ev->game->skip || ev->game->filtered)
		return;
	e->n = (size_t)ev->game->nmoves + 1;
	e->moves = copy_of(ev->game->moves, (e->n - 1) * sizeof(pf_move));
	e->packed = copy_of(ev->game->packed, e->n * PF_PACKED_SIZE);
	e->pflags = copy_of(ev->game->pflags, e->n * 2);
	e->kind_ = copy_of(ev->game->eval_kind, e->n);
	e->eval = copy_of(ev->game->eval, e->n * 4);
	e->depth = copy_of(ev->game->eval_depth, e->n * 2);
	e->clk = copy_of(ev->game->clk_ms, e->n * 4);
	e->hash = copy_of(ev->game->hash, e->n * 8);
}

static void
drop(struct ev *e)
{
	free(e->moves);
	free(e->packed);
	free(e->pflags);
	free(e->kind_);
	free(e->eval);
	free(e->depth);
	free(e->clk);
	free(e->hash);
}

static void
same_str(const pf_pgn_str *a, const pf_pgn_str *b)
{
	FUZZ_CHECK(a->len == b->len && memcmp(a->s, b->s, a->len) == 0);
}

static void
same_board(const pf_board *a, const pf_board *b)
{
	char fa[128], fb[128];

	pf_board_to_fen(a, fa);
	pf_board_to_fen(b, fb);
	FUZZ_CHECK(strcmp(fa, fb) == 0);
	FUZZ_CHECK(a->chess960 == b->chess960);
}

static void
same(const struct ev *a, const struct ev *b)
{
	const pf_pgn_game *x = &a->g, *y = &b->g;
	size_t i;

	FUZZ_CHECK(a->kind == b->kind);
	FUZZ_CHECK(a->epd == b->epd);
	FUZZ_CHECK(strcmp(a->member, b->member) == 0);
	FUZZ_CHECK(strcmp(a->error, b->error) == 0);
	if (a->kind != PF_GAMES_GAME)
		return;
	FUZZ_CHECK(x->number == y->number);
	FUZZ_CHECK(x->line == y->line);
	FUZZ_CHECK(x->id == y->id);
	FUZZ_CHECK(x->problem == y->problem);
	FUZZ_CHECK(x->skip == y->skip && x->filtered == y->filtered);
	FUZZ_CHECK(x->stray == y->stray && (!x->stray || x->skip));
	FUZZ_CHECK(strcmp(x->text, y->text) == 0);
	FUZZ_CHECK(strcmp(x->detail, y->detail) == 0);
	FUZZ_CHECK(x->nmoves == y->nmoves);
	FUZZ_CHECK(x->has_eval == y->has_eval && x->has_clk == y->has_clk);
	FUZZ_CHECK(x->white_elo == y->white_elo &&
	    x->black_elo == y->black_elo);
	FUZZ_CHECK(x->base_s == y->base_s && x->inc_s == y->inc_s &&
	    x->tc_class == y->tc_class);
	FUZZ_CHECK(x->termination == y->termination &&
	    x->result_tag == y->result_tag &&
	    x->result_marker == y->result_marker &&
	    x->has_marker == y->has_marker);
	same_str(&x->event, &y->event);
	same_str(&x->site, &y->site);
	same_str(&x->white, &y->white);
	same_str(&x->black, &y->black);
	same_str(&x->date, &y->date);
	same_str(&x->term_text, &y->term_text);
	same_str(&x->variant, &y->variant);
	FUZZ_CHECK(x->bad_evals == y->bad_evals);
	if (x->bad_evals > 0)
		FUZZ_CHECK(x->bad_eval_ply == y->bad_eval_ply &&
		    strcmp(x->bad_eval_text, y->bad_eval_text) == 0);
	if (x->skip || x->filtered)
		return;
	same_board(&x->start, &y->start);
	same_board(&x->final, &y->final);
	FUZZ_CHECK(a->n == b->n);
	FUZZ_CHECK(memcmp(a->moves, b->moves, (a->n - 1) * 2) == 0);
	FUZZ_CHECK(memcmp(a->packed, b->packed, a->n * PF_PACKED_SIZE) == 0);
	FUZZ_CHECK(memcmp(a->pflags, b->pflags, a->n * 2) == 0);
	FUZZ_CHECK(memcmp(a->hash, b->hash, a->n * 8) == 0);
	FUZZ_CHECK(memcmp(a->clk, b->clk, a->n * 4) == 0);
	for (i = 0; i < a->n; i++) {
		FUZZ_CHECK(a->kind_[i] == b->kind_[i]);
		if (a->kind_[i] != PF_PGN_EVAL_NONE)
			FUZZ_CHECK(a->eval[i] == b->eval[i] &&
			    a->depth[i] == b->depth[i]);
	}
}

struct sink {
	struct ev *evs;
	size_t n;
	int busy;		/* a call in progress: calls never overlap */
};

static int
collect(const pf_games_event *ev, void *arg)
{
	struct sink *k = arg;

	FUZZ_CHECK(!__atomic_exchange_n(&k->busy, 1, __ATOMIC_ACQ_REL));
	FUZZ_CHECK(k->n < MAX_EVENTS);
	keep(&k->evs[k->n++], ev);
	__atomic_store_n(&k->busy, 0, __ATOMIC_RELEASE);
	return 0;
}

/* All events of the file, read with o; returns how many. */
static size_t
read_all(const char *path, const pf_games_opts *o, struct ev *evs)
{
	struct sink k = { evs, 0, 0 };
	pf_games *gs;

	FUZZ_CHECK((gs = pf_games_open(path, "fuzz", o)) != NULL);
	/* no internal error, no memory failure */
	FUZZ_CHECK(pf_games_run(gs, collect, &k) == 0);
	pf_games_close(gs);
	return k.n;
}

static struct ev seq[MAX_EVENTS], par[MAX_EVENTS];

/* The text as zstd frames of every bytes each, one byte changed when
   damage. */
static const char *
as_frames(const uint8_t *text, size_t len, size_t every, int damage)
{
	static char z[4 * 65536 + 65536];
	size_t at = 0, n = 0;

	while (at < len) {
		size_t k = len - at < every ? len - at : every, r;

		r = ZSTD_compress(z + n, sizeof(z) - n, text + at, k, 1);
		FUZZ_CHECK(!ZSTD_isError(r));
		n += r;
		at += k;
	}
	if (damage && n > 0)
		z[(len * 7919u) % n] ^= 0x5a;
	return fuzz_scratch_write((const uint8_t *)z, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int formats[4] = { PF_PGN_AUTO, PF_PGN_PGN, PF_PGN_EPD,
	    PF_PGN_AUTO };
	pf_games_opts o;
	const char *path;
	size_t ns, np, i;

	if (size < 2 || size > 65536)
		return 0;
	memset(&o, 0, sizeof(o));
	o.format = formats[(data[1] >> 1) & 3];
	o.want_hash = 1;
	o.accept = accept;
	if (data[1] & 8)
		path = as_frames(data + 2, size - 2, 8 + (size_t)data[0] * 2,
		    data[1] & 16);
	else
		path = fuzz_scratch_write(data + 2, size - 2);
	o.threads = 1;
	ns = read_all(path, &o, seq);
	o.threads = 2 + (data[1] & 1);
	o.piece = 16 + (size_t)data[0] * 4;
	np = read_all(path, &o, par);
	FUZZ_CHECK(ns == np);
	for (i = 0; i < ns; i++)
		same(&seq[i], &par[i]);
	for (i = 0; i < ns; i++) {
		drop(&seq[i]);
		drop(&par[i]);
	}
	return 0;
}
