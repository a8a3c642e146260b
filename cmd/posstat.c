/*
 * posstat - the report on a dataset: counts (records, games, unique
 * positions), results, Elo and time controls, positions by ply and by
 * piece count, evaluations, complexity and repair rates, the repeat rate
 * by ply (seed 003, Fig. 4, by position) and the rank of the played move in the
 * engine's per-move table (seed 004, section 6.5.2).  Text, JSON or a
 * self-contained HTML page with SVG plots; --by splits every figure.
 *
 * A pure reader: no record is written.  The per-record work is kept light
 * (no board unpacking, no move generation): the piece count is the
 * popcount of the occupancy, a position's key the XXH3 of its 25 bytes
 * without clocks.  Games are counted with an exact key set of an eighth of
 * --memory, probed only when the game id changes from the record before;
 * once it is full, a change of game id starts a game.  Unique positions
 * and repeats come from a key log (hll.h) per group sharing the rest of
 * --memory: each record appends its position's key with its ply in bits
 * 1 to 16 (bit 0 is the log's mark of a key taken more than once), the
 * log is sorted and made unique when full and at the end, and then the
 * distinct positions are the distinct keys less their ply, and the
 * repeats at ply p the records at p less the keys at p taken once (every
 * record whose position another record at p shares is a repeat, the
 * first too, as seed 003 counts its repeated games).  When the log is
 * frozen (memory full), unique positions come from a HyperLogLog sketch
 * kept from the start, and a later record counts as a repeat when its
 * key is among the logged ones (which marks that one): a lower bound.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "posflow.h"
#include "show.h"
#include "evalsel.h"
#include "field.h"
#include "filter.h"
#include "hll.h"
#include "utf8.h"

#define MAX_GROUPS	32
#define OTHER_GROUP	"(other)"
#define ELO_BINS	656	/* 65535 / 100 + 1 */
#define EVAL_BINS	22	/* < -1000, 20 bins of 100 cp, >= 1000 */
#define CPLX_BINS	65	/* 0..63, 64 and more */
#define TC_MAX		4096	/* distinct time controls kept per group */
#define TC_CAP		8192
#define TC_UNKNOWN	UINT64_MAX
#define MEMORY_MIN	(64u << 10)
#define MEMORY_DEFAULT	(256u << 20)

enum { BY_NONE, BY_FILE, BY_TC, BY_EXPR, BY_GAME };

struct opts {
	int json;
	const char *html;
	const char *by;
	int by_kind;
	uint64_t memory;
	int top;
	const char *output;
};

struct tc_entry {
	uint64_t key;		/* base << 32 | inc, TC_UNKNOWN for "-" */
	uint64_t games;
};

/* Every figure, for all records or for one --by group. */
struct stats {
	char *label;
	int gid;		/* -1: all records */
	uint64_t records;
	uint64_t pos_results[4];	/* PF_RESULT_* */
	/* games */
	uint64_t games, game_results[4];
	int games_exact;
	uint64_t prev_game;
	int have_prev;
	uint64_t elo[ELO_BINS], elo_unknown;
	struct tc_entry *tc;
	size_t ntc;
	uint64_t tc_overflow;
	/* positions */
	uint64_t *ply_n, *ply_rep;
	size_t ply_cap;
	long max_ply;
	uint64_t pieces[65];	/* 33..64: a damaged occupancy */
	uint64_t eval[EVAL_BINS], eval_none, mate_for, mate_against;
	uint64_t unique;
	int unique_exact, repeat_exact;
	double unique_n;	/* the count reported (log_finish) */
	int unique_lower;	/* it is the frozen log's, a lower bound */
	pf_hll *hll;
	pf_keylog *log;		/* position keys with their ply */
	uint64_t *ply_n0;	/* frozen: the records per ply logged */
	uint64_t *ply_found;	/* frozen: later ones found in the log */
	/* complexity and repair */
	uint64_t cplx_records, cplx_positive, cplx[CPLX_BINS];
	uint64_t rep_records, rep_marked, rep_class[3][5];
	/* played-move rank: the run of the current game */
	uint64_t run_game;
	int run_active, run_skip;
	double run_sum;
	uint64_t run_n;
	uint64_t rank_games, rank_moves, rank_mate_games, rank_missing;
	double rank_sum;
	uint64_t rank_hist[10];
};

/* What one record holds, worked out once for all its groups. */
struct recinfo {
	const pf_record *rec;
	uint64_t pos_key;	/* XXH3 of the position without clocks */
	int pieces;
	int has_meta, meta_state;	/* meta_state 0 not decoded, 1 ok, -1 bad */
	pf_ext meta_x;
	pf_meta meta;
	int eval_bin;		/* -1 none, -2 mate for, -3 mate against */
	int rank_state;		/* 0 no table, 1 ranked, 2 mate, 3 missing */
	unsigned rank, rank_n;
	int has_cplx;
	unsigned cplx;
	int has_repair;
	pf_repair repair;
};

struct run {
	const struct opts *o;
	pf_filter *f;
	pf_keyset *set;		/* game ids */
	size_t budget;		/* bytes left for the key logs */
	struct stats all;
	struct stats *group[MAX_GROUPS + 1];
	int ngroups;
	pf_expr *expr;
	const char *file;	/* the input being read (--by file) */
	struct stats *file_group;
	double last_value;
	uint64_t last_game;
	struct stats *last_group;
	pf_evalsel deepest;
	int oom;
};

static const char synopsis[] =
    "usage: posstat [-hV] [--json] [--html file] [--by field] "
    "[--memory size] [--top n]\n"
    "               [-o file] [file ...]\n";

static const char *const result_names[4] = { "*", "1-0", "0-1", "1/2-1/2" };

static void
usage(void)
{
	fputs(synopsis, stderr);
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_JSON = 256, O_HTML, O_BY, O_MEMORY, O_TOP };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "html", required_argument, NULL, O_HTML },
		{ "by", required_argument, NULL, O_BY },
		{ "memory", required_argument, NULL, O_MEMORY },
		{ "top", required_argument, NULL, O_TOP },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr, *what;
	int ch;

	memset(o, 0, sizeof(*o));
	o->memory = MEMORY_DEFAULT;
	o->top = 20;
	while ((ch = getopt_long(argc, argv, "o:hV", longopts, NULL)) != -1) {
		errstr = what = NULL;
		switch (ch) {
		case O_JSON:
			o->json = 1;
			break;
		case O_HTML:
			if (*optarg == '\0') {
				pf_warnx("--html: empty file name");
				usage();
				return 2;
			}
			o->html = optarg;
			break;
		case O_BY:
			o->by = optarg;
			break;
		case O_MEMORY:
			o->memory = pf_strtosize(optarg, MEMORY_MIN,
			    (uint64_t)1 << 40, &errstr);
			what = "--memory";
			break;
		case O_TOP:
			o->top = (int)pf_strtonum(optarg, 1, 10000, &errstr);
			what = "--top";
			break;
		case 'o':
			o->output = optarg;
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
	if (o->by == NULL)
		o->by_kind = BY_NONE;
	else if (strcmp(o->by, "file") == 0)
		o->by_kind = BY_FILE;
	else if (strcmp(o->by, "tc") == 0)
		o->by_kind = BY_TC;
	else
		o->by_kind = BY_EXPR;
	return -1;
}

/* ---- keys ---------------------------------------------------------------- */

static inline uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* A key of the shared set made a group's own (gid -1: all records). */
static inline uint64_t
group_key(uint64_t k, int gid)
{
	return gid < 0 ? k : mix64(k + 0x9e3779b97f4a7c15ULL *
	    (uint64_t)(gid + 1));
}

/* ---- groups -------------------------------------------------------------- */

static int
stats_init(struct stats *s, const char *label, int gid, size_t *budget)
{
	memset(s, 0, sizeof(*s));
	s->gid = gid;
	s->max_ply = -1;
	s->games_exact = s->unique_exact = s->repeat_exact = 1;
	if ((s->label = strdup(label)) == NULL ||
	    (s->hll = pf_hll_new(PF_HLL_PRECISION)) == NULL ||
	    (s->log = pf_keylog_new(budget)) == NULL)
		return -1;
	return 0;
}

static void
stats_free(struct stats *s)
{
	if (s == NULL)
		return;
	free(s->label);
	free(s->tc);
	free(s->ply_n);
	free(s->ply_rep);
	free(s->ply_n0);
	free(s->ply_found);
	pf_hll_free(s->hll);
	pf_keylog_free(s->log);
}

/* The group of label: an existing one, a new one while there are fewer
   than MAX_GROUPS, else OTHER_GROUP.  NULL when out of memory. */
static struct stats *
group_of(struct run *R, const char *label)
{
	struct stats *s;
	int i;

	for (i = 0; i < R->ngroups; i++)
		if (strcmp(R->group[i]->label, label) == 0)
			return R->group[i];
	if (R->ngroups >= MAX_GROUPS) {
		for (i = 0; i < R->ngroups; i++)
			if (strcmp(R->group[i]->label, OTHER_GROUP) == 0)
				return R->group[i];
		label = OTHER_GROUP;
	}
	if ((s = malloc(sizeof(*s))) == NULL)
		return NULL;
	if (stats_init(s, label, R->ngroups, &R->budget) == -1) {
		stats_free(s);
		free(s);
		return NULL;
	}
	R->group[R->ngroups++] = s;
	return s;
}

/* ---- one record ---------------------------------------------------------- */

static int
meta_of(struct recinfo *ri)
{
	if (ri->meta_state == 0)
		ri->meta_state = ri->has_meta &&
		    pf_meta_decode(&ri->meta_x, &ri->meta) == 0 ? 1 : -1;
	return ri->meta_state == 1;
}

static void
tc_label(uint64_t key, char *buf, size_t len)
{
	if (key == TC_UNKNOWN)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu64 "+%" PRIu64, key >> 32,
		    key & 0xffffffffu);
}

static uint64_t
tc_key(struct recinfo *ri)
{
	if (!meta_of(ri) || ri->meta.base_s == PF_U32_UNKNOWN)
		return TC_UNKNOWN;
	return (uint64_t)ri->meta.base_s << 32 | ri->meta.inc_s;
}

static int
tc_count(struct stats *s, uint64_t key)
{
	size_t i;

	if (s->tc == NULL && (s->tc = calloc(TC_CAP, sizeof(*s->tc))) == NULL)
		return -1;
	for (i = mix64(key) & (TC_CAP - 1); s->tc[i].games != 0;
	    i = (i + 1) & (TC_CAP - 1))
		if (s->tc[i].key == key) {
			s->tc[i].games++;
			return 0;
		}
	if (s->ntc >= TC_MAX) {
		s->tc_overflow++;
		return 0;
	}
	s->tc[i].key = key;
	s->tc[i].games = 1;
	s->ntc++;
	return 0;
}

/* Grow one per-ply array from old to cap entries, zeroed. */
static int
grow_u64(uint64_t **a, size_t old, size_t cap)
{
	uint64_t *n;

	if ((n = realloc(*a, cap * sizeof(*n))) == NULL)
		return -1;
	memset(n + old, 0, (cap - old) * sizeof(*n));
	*a = n;
	return 0;
}

static int
ply_grow(struct stats *s, size_t ply)
{
	size_t cap = s->ply_cap ? s->ply_cap : 256;

	while (cap <= ply)
		cap *= 2;
	if (grow_u64(&s->ply_n, s->ply_cap, cap) == -1 ||
	    grow_u64(&s->ply_rep, s->ply_cap, cap) == -1 ||
	    (s->ply_n0 != NULL && (grow_u64(&s->ply_n0, s->ply_cap, cap) ==
	    -1 || grow_u64(&s->ply_found, s->ply_cap, cap) == -1)))
		return -1;
	s->ply_cap = cap;
	return 0;
}

/* The log is full: from now on the records per ply it holds stay as they
   are (this record's not among them) and later ones are looked up. */
static int
freeze(struct stats *s, uint16_t ply)
{
	if ((s->ply_n0 = malloc(s->ply_cap * sizeof(uint64_t))) == NULL ||
	    (s->ply_found = calloc(s->ply_cap, sizeof(uint64_t))) == NULL)
		return -1;
	memcpy(s->ply_n0, s->ply_n, s->ply_cap * sizeof(uint64_t));
	s->ply_n0[ply]--;
	s->unique_exact = s->repeat_exact = 0;
	return 0;
}

/* At the end: unique positions and repeats per ply from the log. */
static void
log_finish(struct stats *s)
{
	const uint64_t *k;
	size_t n, i;
	uint64_t prev = 0;

	n = pf_keylog_finish(s->log, &k);
	for (i = 0; i < n; i++) {
		uint16_t ply = (uint16_t)(k[i] >> 1 & 0xffff);

		if (i == 0 || k[i] >> 17 != prev)
			s->unique++;
		prev = k[i] >> 17;
		if (ply < s->ply_cap && !(k[i] & 1))
			s->ply_rep[ply]++;	/* keys at ply taken once */
	}
	for (i = 0; i < s->ply_cap; i++) {
		uint64_t logged = s->ply_n0 ? s->ply_n0[i] : s->ply_n[i];

		s->ply_rep[i] = logged - s->ply_rep[i] +
		    (s->ply_found ? s->ply_found[i] : 0);
	}
	/* Not exact: the estimate, but at least the distinct positions the
	   frozen log holds, which are certain (then a lower bound). */
	s->unique_n = (double)s->unique;
	if (!s->unique_exact) {
		double e = pf_hll_estimate(s->hll);

		s->unique_lower = s->unique_n >= e;
		s->unique_n = fmax(e, s->unique_n);
	}
}

static void
run_close(struct stats *s)
{
	if (s->run_active && s->run_n > 0) {
		s->rank_games++;
		s->rank_sum += s->run_sum / (double)s->run_n;
	}
	s->run_active = 0;
}

/* Count a new game's figures (from its first record). */
static void
game_first(struct run *R, struct stats *s, struct recinfo *ri)
{
	const pf_record *rec = ri->rec;

	s->games++;
	s->game_results[rec->result & 3]++;
	if (meta_of(ri)) {
		uint16_t elo[2] = { ri->meta.white_elo, ri->meta.black_elo };

		for (int k = 0; k < 2; k++)
			if (elo[k] == 0)
				s->elo_unknown++;
			else
				s->elo[elo[k] / 100]++;
	} else
		s->elo_unknown += 2;
	if (tc_count(s, tc_key(ri)) == -1)
		R->oom = 1;
}

static void
account(struct run *R, struct stats *s, struct recinfo *ri)
{
	const pf_record *rec = ri->rec;

	s->records++;
	s->pos_results[rec->result & 3]++;
	s->pieces[ri->pieces]++;
	if ((size_t)rec->ply >= s->ply_cap && ply_grow(s, rec->ply) == -1) {
		R->oom = 1;
		return;
	}
	s->ply_n[rec->ply]++;
	if ((long)rec->ply > s->max_ply)
		s->max_ply = rec->ply;

	/* Games: a change of game id starts one unless the set knows it. */
	if (!s->have_prev || rec->game_id != s->prev_game) {
		int r = pf_keyset_add(R->set, group_key(mix64(rec->game_id ^
		    0x6a09e667f3bcc908ULL), s->gid));

		if (r == -1)
			s->games_exact = 0;
		if (r != 0)
			game_first(R, s, ri);
		s->prev_game = rec->game_id;
		s->have_prev = 1;
	}

	switch (ri->eval_bin) {
	case -1: s->eval_none++; break;
	case -2: s->mate_for++; break;
	case -3: s->mate_against++; break;
	default: s->eval[ri->eval_bin]++; break;
	}
	if (ri->has_cplx) {
		s->cplx_records++;
		s->cplx_positive += ri->cplx > 0;
		s->cplx[ri->cplx < CPLX_BINS - 1 ? ri->cplx : CPLX_BINS - 1]++;
	}
	if (ri->has_repair) {
		int m = ri->repair.mode == PF_REPAIR_CANDIDATES ? 1 :
		    ri->repair.mode == PF_REPAIR_PANDA ? 2 : 0;

		s->rep_records++;
		s->rep_marked += ri->repair.cls != 0;
		s->rep_class[m][ri->repair.cls < 4 ? ri->repair.cls : 4]++;
	}

	/* The played-move rank, per run of one game id. */
	if (!s->run_active || rec->game_id != s->run_game) {
		run_close(s);
		s->run_active = 1;
		s->run_game = rec->game_id;
		s->run_sum = 0;
		s->run_n = 0;
		s->run_skip = 0;
	}
	if (ri->rank_state != 0 && !s->run_skip) {
		if (ri->rank_state == 2) {
			s->run_skip = 1;
			s->rank_mate_games++;
		} else if (ri->rank_state == 3)
			s->rank_missing++;
		else {
			double frac = (double)ri->rank / ri->rank_n;

			s->run_sum += frac;
			s->run_n++;
			s->rank_moves++;
			s->rank_hist[(ri->rank * 10 - 1) / ri->rank_n]++;
		}
	}

	{
		uint64_t k = group_key(ri->pos_key, s->gid);
		uint64_t lk = (k & ~0x1ffffULL) | (uint64_t)rec->ply << 1;

		pf_hll_add(s->hll, k);
		if (s->ply_found == NULL && pf_keylog_add(s->log, lk) == 1 &&
		    freeze(s, rec->ply) == -1) {
			R->oom = 1;
			return;
		}
		if (s->ply_found != NULL && pf_keylog_has(s->log, lk))
			s->ply_found[rec->ply]++;
	}
}

/* The rank of the played move in the deepest final complete table. */
static void
rank_of(struct recinfo *ri, const pf_ext *x)
{
	const pf_record *rec = ri->rec;
	unsigned n, i;

	if (x->len < 14 || !(x->data[1] & PF_MSF_COMPLETE) ||
	    (x->data[1] & PF_MSF_INTERMEDIATE))
		return;
	n = pf_get16(x->data + 12);
	if (n == 0 || x->len < 14 + 8 * n)
		return;
	if (x->data[14 + 2] == PF_SCORE_MATE) {
		ri->rank_state = 2;
		return;
	}
	ri->rank_state = 3;
	for (i = 0; i < n; i++)
		if (pf_get16(x->data + 14 + 8 * i) == rec->move) {
			ri->rank_state = 1;
			ri->rank = i + 1;
			ri->rank_n = n;
			return;
		}
}

/* One pass over the extensions.  -1 when the area or an extension this
   tool reads is malformed (what was read before still counts). */
static int
read_exts(struct run *R, struct recinfo *ri)
{
	pf_evalsel_pick ev, tab;
	pf_ext_iter it;
	pf_ext x;
	pf_eval v;
	int r, bad = 0;

	memset(&ev, 0, sizeof(ev));
	memset(&tab, 0, sizeof(tab));
	pf_ext_iter_init(&it, ri->rec);
	while ((r = pf_ext_next(&it, &x)) == 1) {
		switch (x.type) {
		case PF_EXT_META:
			if (!ri->has_meta) {
				ri->has_meta = 1;
				/* field by field: a copy of the whole
				   struct reads what pf_ext_next has just
				   written in parts, and waits (store
				   forwarding fails) */
				ri->meta_x.type = x.type;
				ri->meta_x.len = x.len;
				ri->meta_x.data = x.data;
			}
			break;
		case PF_EXT_EVAL:
			if (pf_eval_decode_head(&x, &v) == -1)
				bad = 1;
			else
				pf_evalsel_offer_eval(&R->deepest, &ev, &x, &v);
			break;
		case PF_EXT_MOVESCORES:
			if (pf_evalsel_offer_table(&R->deepest, &tab, &x) == -1)
				bad = 1;
			break;
		case PF_EXT_COMPLEXITY:
			if (x.len >= PF_COMPLEXITY_HEAD_SIZE) {
				ri->has_cplx = 1;
				ri->cplx = pf_get16(x.data + 2);
			} else
				bad = 1;
			break;
		case PF_EXT_REPAIR:
			if (pf_repair_decode(&x, &ri->repair) == 0)
				ri->has_repair = 1;
			else
				bad = 1;
			break;
		default:
			break;
		}
	}
	if (ev.found && pf_eval_decode_head(&ev.x, &v) == 0) {
		if (v.score_kind == PF_SCORE_MATE)
			ri->eval_bin = v.score > 0 ? -2 : -3;
		else {
			int32_t cp = pf_score_cp(v.score_kind, v.score);

			ri->eval_bin = cp < -1000 ? 0 : cp >= 1000 ?
			    EVAL_BINS - 1 : 1 + (cp + 1000) / 100;
		}
	}
	if (tab.found && ri->rec->move != PF_MOVE_NONE)
		rank_of(ri, &tab.x);
	return r == -1 || bad ? -1 : 0;
}

/* The --by group of a record; NULL when out of memory. */
static struct stats *
by_group(struct run *R, struct recinfo *ri, uint64_t recno)
{
	char label[128], err[256];
	double v;

	switch (R->o->by_kind) {
	case BY_FILE:
		if (R->file_group == NULL)
			R->file_group = group_of(R, R->file);
		return R->file_group;
	case BY_TC:
		tc_label(tc_key(ri), label, sizeof(label));
		return group_of(R, label);
	case BY_GAME:
		/* the id as posdump shows it: as the expression's value, a
		   double, ids that differ past 2^53 would share a group */
		if (R->last_group != NULL && ri->rec->game_id == R->last_game)
			return R->last_group;
		snprintf(label, sizeof(label), "%016" PRIx64,
		    ri->rec->game_id);
		R->last_game = ri->rec->game_id;
		return R->last_group = group_of(R, label);
	default:
		if (pf_expr_eval(R->expr, ri->rec, &v, err, sizeof(err)) == -1)
			pf_filter_error(R->f, recno, "--by: %s", err);
		/* Equal values (NaN too) fall in the same group as the last
		   record's without printing a label. */
		if (R->last_group != NULL && (v == R->last_value ||
		    (isnan(v) && isnan(R->last_value))))
			return R->last_group;
		pf_expr_label(R->expr, v, label, sizeof(label));
		R->last_value = v;
		return R->last_group = group_of(R, label);
	}
}

static void
take(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;
	struct recinfo ri;
	struct stats *g = NULL;

	/* Field by field: the struct is large (pf_meta) and mostly unused. */
	ri.rec = rec;
	ri.has_meta = ri.meta_state = 0;
	ri.eval_bin = -1;
	ri.rank_state = 0;
	ri.has_cplx = ri.has_repair = 0;
	ri.pos_key = XXH3_64bits(rec->pos, PF_POS_KEY_SIZE);
	ri.pieces = pf_popcount_swar(pf_get64(rec->pos));
	if (rec->ext_len > 0 && read_exts(R, &ri) == -1)
		pf_filter_error(f, recno, "malformed extension; the rest of "
		    "the record is counted");
	if (R->o->by_kind != BY_NONE && (g = by_group(R, &ri, recno)) == NULL)
		R->oom = 1;
	account(R, &R->all, &ri);
	if (g != NULL)
		account(R, g, &ri);
	/* decoded where it is read: at a game's first record, or for --by */
	if (ri.has_meta && ri.meta_state == -1)
		pf_filter_error(f, recno, "malformed meta extension; the "
		    "game's Elo and time control are counted as unknown");
	if (R->oom) {
		pf_warnx("out of memory");
		f->status = PF_EXIT_DATA;
		f->stop = 1;
	}
}

/* ---- output helpers ------------------------------------------------------ */

/* A report file written under a temporary name and renamed when complete,
   so that a failed run never leaves half a report under the name. */
struct outfile {
	const char *path;
	char *tmp;
	FILE *fp;
	int direct;		/* a device or pipe, written as it is */
};

static int
out_open(struct outfile *o, const char *path)
{
	struct stat st;
	mode_t mask;
	int fd;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (path == NULL || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return 0;
	}
	/* A device or a pipe is written as it is: only a regular file is
	   written under a temporary name and renamed over.  So is a link
	   (the rename would replace the link, not write where it points). */
	if ((lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) ||
	    (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
		if ((o->fp = fopen(path, "w")) == NULL) {
			pf_warn("%s", path);
			return -1;
		}
		o->direct = 1;
		return 0;
	}
	if ((o->tmp = malloc(strlen(path) + 16)) == NULL)
		return -1;
	sprintf(o->tmp, "%s.tmpXXXXXX", path);
	if ((fd = mkstemp(o->tmp)) == -1) {
		pf_warn("%s", path);
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	/* the mode of a file made by open(2): mkstemp's is 0600 */
	mask = umask(0);
	(void)umask(mask);
	if (fchmod(fd, 0666 & ~mask) == -1 ||
	    (o->fp = fdopen(fd, "w")) == NULL) {
		pf_warn("%s", path);
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	return 0;
}

/* Finish (ok) or abandon the file.  0, or -1 after a message.  A pipe
   whose reader went away (EPIPE) is no error: 0, quietly, as for every
   posflow tool. */
static int
out_close(struct outfile *o, int ok)
{
	int rv = 0;

	if (o->fp == NULL)
		return 0;
	if (o->tmp == NULL) {
		if ((fflush(o->fp) == EOF || ferror(o->fp)) &&
		    errno != EPIPE) {
			pf_warn("%s", o->direct ? o->path : "stdout");
			rv = -1;
		}
		if (o->direct && fclose(o->fp) == EOF && rv == 0 &&
		    errno != EPIPE) {
			pf_warn("%s", o->path);
			rv = -1;
		}
		o->fp = NULL;
		return rv;
	}
	if (ferror(o->fp) || fflush(o->fp) == EOF) {
		if (ok)
			pf_warn("%s", o->path);
		ok = 0;
	}
	if (fclose(o->fp) == EOF && ok) {
		pf_warn("%s", o->path);
		ok = 0;
	}
	o->fp = NULL;
	if (ok && rename(o->tmp, o->path) == -1) {
		pf_warn("%s", o->path);
		ok = 0;
	}
	if (!ok)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return ok ? 0 : -1;
}

static double
share(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

/* (W+L)/D over games; NaN when there is no draw. */
static double
decisive_per_draw(const struct stats *s)
{
	uint64_t d = s->game_results[PF_RESULT_DRAW];

	return d ? (double)(s->game_results[PF_RESULT_WHITE] +
	    s->game_results[PF_RESULT_BLACK]) / (double)d : NAN;
}

static double
rank_mean(const struct stats *s)
{
	return s->rank_games ? s->rank_sum / (double)s->rank_games : NAN;
}

static void
eval_bin_label(int i, char *buf, size_t len)
{
	if (i == 0)
		snprintf(buf, len, "< -1000");
	else if (i == EVAL_BINS - 1)
		snprintf(buf, len, ">= 1000");
	else
		snprintf(buf, len, "%d..%d", -1000 + 100 * (i - 1),
		    -1000 + 100 * (i - 1) + 99);
}

static const char *
repair_class_name(int mode, int cls)
{
	static const char *const cand[] = { "not", "candidate" };

	if (cls == 4)
		return "other";
	if (mode == 1)
		return cls < 2 ? cand[cls] : "other";
	if (mode == 2)
		return pf_show_panda_class(cls);
	return cls == 0 ? "zero" : "nonzero";
}

static const char *const repair_mode_names[3] = { "other", "candidates",
    "panda" };

/* Time controls by games, most first (then by base and increment). */
static int
tc_cmp(const void *a, const void *b)
{
	const struct tc_entry *x = a, *y = b;

	if (x->games != y->games)
		return x->games > y->games ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The time controls of s sorted; *n set.  NULL when there are none or no
   memory (then *n is 0). */
static struct tc_entry *
tc_sorted(const struct stats *s, size_t *n)
{
	struct tc_entry *v;
	size_t k = 0;

	*n = 0;
	if (s->ntc == 0 || (v = malloc(s->ntc * sizeof(*v))) == NULL)
		return NULL;
	for (size_t i = 0; i < TC_CAP; i++)
		if (s->tc[i].games != 0)
			v[k++] = s->tc[i];
	qsort(v, k, sizeof(*v), tc_cmp);
	*n = k;
	return v;
}

static uint64_t
tc_games(const struct stats *s, uint64_t key)
{
	if (s->tc == NULL)
		return 0;
	for (size_t i = mix64(key) & (TC_CAP - 1); s->tc[i].games != 0;
	    i = (i + 1) & (TC_CAP - 1))
		if (s->tc[i].key == key)
			return s->tc[i].games;
	return 0;
}

static int
elo_range(const struct stats *s, int *lo, int *hi)
{
	*lo = -1;
	*hi = -1;
	for (int i = 0; i < ELO_BINS; i++)
		if (s->elo[i]) {
			if (*lo < 0)
				*lo = i;
			*hi = i;
		}
	return *lo >= 0;
}

/* ---- text ---------------------------------------------------------------- */

static void
text_pct(FILE *o, uint64_t a, uint64_t b)
{
	if (b)
		fprintf(o, " %8.2f", 100.0 * (double)a / (double)b);
	else
		fprintf(o, " %8s", "-");
}

static void
text_stats(FILE *o, const struct stats *s, const struct opts *op)
{
	char lab[64];
	double x;
	int lo, hi;

	fprintf(o, "Counts\n");
	fprintf(o, "  %-28s %14" PRIu64 "\n", "records", s->records);
	fprintf(o, "  %-28s %14" PRIu64 "%s\n", "games", s->games,
	    s->games_exact ? "" : "  (estimated: memory full, a game is a "
	    "change of game id)");
	if (s->unique_exact)
		fprintf(o, "  %-28s %14" PRIu64 "\n", "unique positions",
		    s->unique);
	else if (s->unique_lower)
		fprintf(o, "  %-28s %14.0f  (lower bound: the positions the "
		    "full memory holds)\n", "unique positions",
		    s->unique_n);
	else
		fprintf(o, "  %-28s %14.0f  (HyperLogLog estimate, standard "
		    "error 0.8 %%)\n", "unique positions", s->unique_n);
	x = share((uint64_t)0, 0);
	if (s->records) {
		uint64_t rep = 0;

		for (long p = 0; p <= s->max_ply; p++)
			rep += s->ply_rep[p];
		x = share(rep, s->records);
	}
	if (isnan(x))
		fprintf(o, "  %-28s %14s\n", "repeat rate (all plies)", "-");
	else
		fprintf(o, "  %-28s %14.4f%s\n", "repeat rate (all plies)", x,
		    s->repeat_exact ? "" : "  (lower bound: memory full)");

	fprintf(o, "\nResults %27s %8s %14s %8s\n", "games", "%", "positions",
	    "%");
	for (int r = 1; r <= 4; r++) {
		int k = r & 3;	/* 1-0, 0-1, 1/2-1/2, * */

		fprintf(o, "  %-18s %14" PRIu64, result_names[k],
		    s->game_results[k]);
		text_pct(o, s->game_results[k], s->games);
		fprintf(o, " %14" PRIu64, s->pos_results[k]);
		text_pct(o, s->pos_results[k], s->records);
		fputc('\n', o);
	}
	x = decisive_per_draw(s);
	if (isnan(x))
		fprintf(o, "  %-18s %14s\n", "(W+L)/D", "-");
	else
		fprintf(o, "  %-18s %14.4f\n", "(W+L)/D", x);

	fprintf(o, "\nElo (both players of each game, bins of 100)\n");
	fprintf(o, "  %-18s %14s %8s\n", "Elo", "players", "%");
	if (elo_range(s, &lo, &hi))
		for (int i = lo; i <= hi; i++) {
			snprintf(lab, sizeof(lab), "%d-%d", i * 100,
			    i * 100 + 99);
			fprintf(o, "  %-18s %14" PRIu64, lab, s->elo[i]);
			text_pct(o, s->elo[i], 2 * s->games);
			fputc('\n', o);
		}
	fprintf(o, "  %-18s %14" PRIu64, "unknown", s->elo_unknown);
	text_pct(o, s->elo_unknown, 2 * s->games);
	fputc('\n', o);

	fprintf(o, "\nTime control (games; the %d most common)\n", op->top);
	{
		size_t n;
		struct tc_entry *v = tc_sorted(s, &n);
		uint64_t other = s->tc_overflow;

		for (size_t i = 0; i < n; i++) {
			if ((int)i >= op->top) {
				other += v[i].games;
				continue;
			}
			tc_label(v[i].key, lab, sizeof(lab));
			fprintf(o, "  %-18s %14" PRIu64, lab, v[i].games);
			text_pct(o, v[i].games, s->games);
			fputc('\n', o);
		}
		if (other || n > (size_t)op->top) {
			fprintf(o, "  %-18s %14" PRIu64, "other", other);
			text_pct(o, other, s->games);
			fputc('\n', o);
		}
		free(v);
	}

	fprintf(o, "\nPositions by ply (10 plies a row; repeats: another "
	    "record has the position at that ply)\n");
	fprintf(o, "  %-18s %14s %8s %14s %12s\n", "plies", "positions", "%",
	    "repeats", "repeat rate");
	for (long p = 0; p <= s->max_ply; p += 10) {
		uint64_t n = 0, r = 0;

		for (long q = p; q < p + 10 && q <= s->max_ply; q++) {
			n += s->ply_n[q];
			r += s->ply_rep[q];
		}
		if (n == 0)
			continue;
		snprintf(lab, sizeof(lab), "%ld-%ld", p, p + 9);
		fprintf(o, "  %-18s %14" PRIu64, lab, n);
		text_pct(o, n, s->records);
		fprintf(o, " %14" PRIu64 " %12.4f\n", r, share(r, n));
	}
	if (!s->repeat_exact)
		fprintf(o, "  (repeat rates are lower bounds: the memory was "
		    "full)\n");

	fprintf(o, "\nPositions by piece count\n");
	fprintf(o, "  %-18s %14s %8s\n", "pieces", "positions", "%");
	for (int i = 0; i <= 64; i++)
		if (s->pieces[i]) {
			fprintf(o, "  %-18d %14" PRIu64, i, s->pieces[i]);
			text_pct(o, s->pieces[i], s->records);
			fputc('\n', o);
		}

	fprintf(o, "\nEvaluation (deepest; cp, side to move's view)\n");
	fprintf(o, "  %-18s %14s %8s\n", "cp", "positions", "%");
	fprintf(o, "  %-18s %14" PRIu64, "mate against", s->mate_against);
	text_pct(o, s->mate_against, s->records);
	fputc('\n', o);
	for (int i = 0; i < EVAL_BINS; i++) {
		eval_bin_label(i, lab, sizeof(lab));
		fprintf(o, "  %-18s %14" PRIu64, lab, s->eval[i]);
		text_pct(o, s->eval[i], s->records);
		fputc('\n', o);
	}
	fprintf(o, "  %-18s %14" PRIu64, "mate for", s->mate_for);
	text_pct(o, s->mate_for, s->records);
	fputc('\n', o);
	fprintf(o, "  %-18s %14" PRIu64, "none", s->eval_none);
	text_pct(o, s->eval_none, s->records);
	fputc('\n', o);

	fprintf(o, "\nPlayed-move rank (rank in the deepest complete per-move "
	    "table / its moves; mean per game, then over games)\n");
	x = rank_mean(s);
	if (isnan(x))
		fprintf(o, "  %-28s %14s\n", "mean", "-");
	else
		fprintf(o, "  %-28s %14.4f\n", "mean", x);
	fprintf(o, "  %-28s %14" PRIu64 "\n", "games", s->rank_games);
	fprintf(o, "  %-28s %14" PRIu64 "\n", "moves", s->rank_moves);
	fprintf(o, "  %-28s %14" PRIu64 "\n", "games cut at a mate",
	    s->rank_mate_games);
	fprintf(o, "  %-28s %14" PRIu64 "\n", "played move not in table",
	    s->rank_missing);
	if (s->rank_moves) {
		fprintf(o, "  %-18s %14s %8s\n", "rank", "moves", "%");
		for (int i = 0; i < 10; i++) {
			snprintf(lab, sizeof(lab), "%.1f-%.1f", i / 10.0,
			    (i + 1) / 10.0);
			fprintf(o, "  %-18s %14" PRIu64, lab, s->rank_hist[i]);
			text_pct(o, s->rank_hist[i], s->rank_moves);
			fputc('\n', o);
		}
	}

	if (s->cplx_records) {
		fprintf(o, "\nComplexity\n");
		fprintf(o, "  %-28s %14" PRIu64 "\n", "records with one",
		    s->cplx_records);
		fprintf(o, "  %-28s %14.4f\n", "share with complexity > 0",
		    share(s->cplx_positive, s->cplx_records));
		fprintf(o, "  %-18s %14s %8s\n", "complexity", "positions",
		    "%");
		for (int i = 0; i < CPLX_BINS; i++)
			if (s->cplx[i]) {
				snprintf(lab, sizeof(lab), i == CPLX_BINS - 1 ?
				    "%d+" : "%d", i);
				fprintf(o, "  %-18s %14" PRIu64, lab,
				    s->cplx[i]);
				text_pct(o, s->cplx[i], s->cplx_records);
				fputc('\n', o);
			}
	}
	if (s->rep_records) {
		fprintf(o, "\nRepair\n");
		fprintf(o, "  %-28s %14" PRIu64 "\n", "records judged",
		    s->rep_records);
		fprintf(o, "  %-28s %14.4f\n", "share with class != 0",
		    share(s->rep_marked, s->rep_records));
		fprintf(o, "  %-28s %14s %8s\n", "mode/class", "positions",
		    "%");
		for (int m = 0; m < 3; m++)
			for (int c = 0; c < 5; c++)
				if (s->rep_class[m][c]) {
					snprintf(lab, sizeof(lab), "%s/%s",
					    repair_mode_names[m],
					    repair_class_name(m, c));
					fprintf(o, "  %-28s %14" PRIu64, lab,
					    s->rep_class[m][c]);
					text_pct(o, s->rep_class[m][c],
					    s->rep_records);
					fputc('\n', o);
				}
	}
}

static void
text_report(FILE *o, const struct run *R)
{
	int est = 0;

	fprintf(o, "posstat: all records\n\n");
	text_stats(o, &R->all, R->o);
	if (R->o->by_kind == BY_NONE)
		return;
	fprintf(o, "\nBy %s\n", R->o->by);
	fprintf(o, "  %-20s %12s %10s %12s %8s %8s %8s %8s %9s %8s\n", "group",
	    "records", "games", "unique", "1-0", "0-1", "1/2-1/2", "*",
	    "(W+L)/D", "rank");
	for (int i = 0; i < R->ngroups; i++) {
		const struct stats *s = R->group[i];
		double d = decisive_per_draw(s), rk = rank_mean(s);
		char games[32], uniq[32];

		/* an estimate (the memory full) marked, as in the sections */
		snprintf(games, sizeof(games), "%s%" PRIu64,
		    s->games_exact ? "" : "~", s->games);
		snprintf(uniq, sizeof(uniq), "%s%.0f",
		    s->unique_exact ? "" : "~", s->unique_n);
		est |= !s->games_exact || !s->unique_exact;
		fprintf(o, "  %-20s %12" PRIu64 " %10s %12s %8" PRIu64 " %8"
		    PRIu64 " %8" PRIu64 " %8" PRIu64, s->label, s->records,
		    games, uniq, s->game_results[1], s->game_results[2],
		    s->game_results[3], s->game_results[0]);
		if (isnan(d))
			fprintf(o, " %9s", "-");
		else
			fprintf(o, " %9.4f", d);
		if (isnan(rk))
			fprintf(o, " %8s\n", "-");
		else
			fprintf(o, " %8.4f\n", rk);
	}
	if (est)
		fprintf(o, "  ~ estimated (or, for unique positions, a lower "
		    "bound): the memory for counting (--memory) was full\n");
	for (int i = 0; i < R->ngroups; i++) {
		fprintf(o, "\n\nposstat: %s = %s\n\n", R->o->by,
		    R->group[i]->label);
		text_stats(o, R->group[i], R->o);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void
json_num(FILE *o, double x)
{
	if (isnan(x) || isinf(x))
		fputs("null", o);
	else
		fprintf(o, "%.10g", x);
}

static void
json_bool(FILE *o, int b)
{
	fputs(b ? "true" : "false", o);
}

static void
json_u64s(FILE *o, const uint64_t *v, size_t n)
{
	fputc('[', o);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s%" PRIu64, i ? "," : "", v[i]);
	fputc(']', o);
}

static void
json_results(FILE *o, const uint64_t *r)
{
	fprintf(o, "{\"1-0\": %" PRIu64 ", \"0-1\": %" PRIu64 ", \"1/2-1/2\": %"
	    PRIu64 ", \"*\": %" PRIu64 "}", r[PF_RESULT_WHITE],
	    r[PF_RESULT_BLACK], r[PF_RESULT_DRAW], r[PF_RESULT_UNKNOWN]);
}

/* The keys of one stats object, each line indented by ind. */
static void
json_stats(FILE *o, const struct stats *s, const struct opts *op,
    const char *ind)
{
	char lab[64];
	int lo, hi;
	uint64_t rep = 0;

	fprintf(o, "%s\"records\": %" PRIu64 ",\n", ind, s->records);
	fprintf(o, "%s\"games\": %" PRIu64 ",\n", ind, s->games);
	fprintf(o, "%s\"games_exact\": ", ind);
	json_bool(o, s->games_exact);
	fprintf(o, ",\n%s\"unique_positions\": ", ind);
	if (s->unique_exact)
		fprintf(o, "%" PRIu64, s->unique);
	else
		fprintf(o, "%.0f", s->unique_n);
	fprintf(o, ",\n%s\"unique_positions_exact\": ", ind);
	json_bool(o, s->unique_exact);
	fprintf(o, ",\n%s\"unique_positions_estimator\": ", ind);
	fputs(s->unique_exact ? "null" : s->unique_lower ?
	    "\"lower bound: the positions the full memory holds\"" :
	    "\"hyperloglog p=14, standard error 0.8 %\"", o);
	fprintf(o, ",\n%s\"results\": ", ind);
	json_results(o, s->game_results);
	fprintf(o, ",\n%s\"decisive_per_draw\": ", ind);
	json_num(o, decisive_per_draw(s));
	fprintf(o, ",\n%s\"position_results\": ", ind);
	json_results(o, s->pos_results);

	fprintf(o, ",\n%s\"elo\": {\"bin\": 100, \"unknown\": %" PRIu64
	    ", \"bins\": [", ind, s->elo_unknown);
	if (elo_range(s, &lo, &hi))
		for (int i = lo; i <= hi; i++)
			fprintf(o, "%s{\"from\": %d, \"to\": %d, \"players\": %"
			    PRIu64 "}", i > lo ? ", " : "", i * 100,
			    i * 100 + 99, s->elo[i]);
	fprintf(o, "]}");

	fprintf(o, ",\n%s\"time_controls\": [", ind);
	{
		size_t n;
		struct tc_entry *v = tc_sorted(s, &n);
		uint64_t other = s->tc_overflow;
		int first = 1;

		for (size_t i = 0; i < n; i++) {
			if ((int)i >= op->top) {
				other += v[i].games;
				continue;
			}
			tc_label(v[i].key, lab, sizeof(lab));
			fprintf(o, "%s{\"tc\": ", first ? "" : ", ");
			pf_show_json_string(o, lab, strlen(lab));
			fprintf(o, ", \"games\": %" PRIu64 "}", v[i].games);
			first = 0;
		}
		if (other || n > (size_t)op->top)
			fprintf(o, "%s{\"tc\": \"other\", \"games\": %" PRIu64
			    "}", first ? "" : ", ", other);
		free(v);
	}
	fprintf(o, "]");

	fprintf(o, ",\n%s\"positions_by_ply\": ", ind);
	json_u64s(o, s->ply_n, (size_t)(s->max_ply + 1));
	fprintf(o, ",\n%s\"repeats_by_ply\": ", ind);
	json_u64s(o, s->ply_rep, (size_t)(s->max_ply + 1));
	fprintf(o, ",\n%s\"repeat_rate_by_ply\": [", ind);
	for (long p = 0; p <= s->max_ply; p++) {
		if (p)
			fputc(',', o);
		json_num(o, share(s->ply_rep[p], s->ply_n[p]));
		rep += s->ply_rep[p];
	}
	fprintf(o, "],\n%s\"repeat_rate\": ", ind);
	json_num(o, share(rep, s->records));
	fprintf(o, ",\n%s\"repeat_rate_exact\": ", ind);
	json_bool(o, s->repeat_exact);
	fprintf(o, ",\n%s\"positions_by_pieces\": ", ind);
	{
		size_t n = 65;

		while (n > 33 && s->pieces[n - 1] == 0)
			n--;
		json_u64s(o, s->pieces, n);
	}

	fprintf(o, ",\n%s\"eval\": {\"none\": %" PRIu64 ", \"mate_against\": %"
	    PRIu64 ", \"mate_for\": %" PRIu64 ", \"bins\": [", ind,
	    s->eval_none, s->mate_against, s->mate_for);
	for (int i = 0; i < EVAL_BINS; i++) {
		fprintf(o, "%s{", i ? ", " : "");
		if (i > 0)
			fprintf(o, "\"from\": %d, ", -1000 + 100 * (i - 1));
		if (i < EVAL_BINS - 1)
			fprintf(o, "\"to\": %d, ", -1000 + 100 * i - 1);
		fprintf(o, "\"positions\": %" PRIu64 "}", s->eval[i]);
	}
	fprintf(o, "]}");

	fprintf(o, ",\n%s\"played_move_rank\": {\"mean\": ", ind);
	json_num(o, rank_mean(s));
	fprintf(o, ", \"games\": %" PRIu64 ", \"moves\": %" PRIu64
	    ", \"games_cut_at_mate\": %" PRIu64 ", \"not_in_table\": %" PRIu64
	    ", \"histogram\": ", s->rank_games, s->rank_moves,
	    s->rank_mate_games, s->rank_missing);
	json_u64s(o, s->rank_hist, 10);
	fprintf(o, "}");

	fprintf(o, ",\n%s\"complexity\": ", ind);
	if (s->cplx_records == 0)
		fputs("null", o);
	else {
		int first = 1;

		fprintf(o, "{\"records\": %" PRIu64 ", \"positive\": %" PRIu64
		    ", \"rate\": ", s->cplx_records, s->cplx_positive);
		json_num(o, share(s->cplx_positive, s->cplx_records));
		fprintf(o, ", \"histogram\": {");
		for (int i = 0; i < CPLX_BINS; i++)
			if (s->cplx[i]) {
				fprintf(o, "%s\"%d%s\": %" PRIu64, first ? "" :
				    ", ", i, i == CPLX_BINS - 1 ? "+" : "",
				    s->cplx[i]);
				first = 0;
			}
		fprintf(o, "}}");
	}
	fprintf(o, ",\n%s\"repair\": ", ind);
	if (s->rep_records == 0)
		fputs("null", o);
	else {
		int first = 1;

		fprintf(o, "{\"records\": %" PRIu64 ", \"marked\": %" PRIu64
		    ", \"rate\": ", s->rep_records, s->rep_marked);
		json_num(o, share(s->rep_marked, s->rep_records));
		fprintf(o, ", \"by_class\": {");
		for (int m = 0; m < 3; m++)
			for (int c = 0; c < 5; c++)
				if (s->rep_class[m][c]) {
					fprintf(o, "%s\"%s/%s\": %" PRIu64,
					    first ? "" : ", ",
					    repair_mode_names[m],
					    repair_class_name(m, c),
					    s->rep_class[m][c]);
					first = 0;
				}
		fprintf(o, "}}");
	}
}

static void
json_report(FILE *o, const struct run *R)
{
	fprintf(o, "{\n");
	json_stats(o, &R->all, R->o, "  ");
	if (R->o->by_kind != BY_NONE) {
		fprintf(o, ",\n  \"by\": ");
		pf_show_json_string(o, R->o->by, strlen(R->o->by));
		fprintf(o, ",\n  \"groups\": [");
		for (int i = 0; i < R->ngroups; i++) {
			fprintf(o, "%s\n    {\n      \"by\": ", i ? "," : "");
			pf_show_json_string(o, R->group[i]->label,
			    strlen(R->group[i]->label));
			fprintf(o, ",\n");
			json_stats(o, R->group[i], R->o, "      ");
			fprintf(o, "\n    }");
		}
		fprintf(o, "\n  ]");
	}
	fprintf(o, "\n}\n");
}

/* ---- HTML ---------------------------------------------------------------- */

/* Text escaped for HTML and XML; a byte that is not UTF-8 (a file name's)
   is read as Latin-1, as the JSON report reads it, so the page stays
   UTF-8. */
static void
html_text(FILE *o, const char *s)
{
	size_t len = strlen(s), n;

	for (; *s; s += n, len -= n) {
		n = 1;
		switch (*s) {
		case '&': fputs("&amp;", o); break;
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '"': fputs("&quot;", o); break;
		default:
			if ((unsigned char)*s >= 0x80) {
				if ((n = pf_utf8_seq(s, len)) > 0)
					fwrite(s, 1, n, o);
				else {
					n = 1;
					fputc(0xc0 | (unsigned char)*s >> 6, o);
					fputc(0x80 | (*s & 0x3f), o);
				}
			} else if ((unsigned char)*s >= 0x20 || *s == '\n' ||
			    *s == '\t')
				fputc(*s, o);
		}
	}
}

static const char *const palette[] = { "#4e79a7", "#f28e2b", "#e15759",
    "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
    "#bab0ac" };
#define NPALETTE	(sizeof(palette) / sizeof(palette[0]))

/*
 * The colour of series i as "#rrggbb" in buf (8 bytes): the palette's,
 * then, for the groups past it (up to MAX_GROUPS + 1), hues a golden
 * angle apart in two lightnesses, so that no two series share one.
 */
static const char *
series_colour(int i, char *buf, size_t len)
{
	double h, l, c, x, m, rgb[3];

	if (i < (int)NPALETTE)
		return palette[i];
	h = fmod((i - (int)NPALETTE) * 137.50776 + 15, 360) / 60;
	l = i % 2 ? 0.38 : 0.62;
	c = (1 - fabs(2 * l - 1)) * 0.7;
	x = c * (1 - fabs(fmod(h, 2) - 1));
	m = l - c / 2;
	rgb[0] = h < 1 || h >= 5 ? c : h < 2 || h >= 4 ? x : 0;
	rgb[1] = h >= 1 && h < 3 ? c : h < 4 ? x : 0;
	rgb[2] = h >= 3 && h < 5 ? c : h >= 2 ? x : 0;
	snprintf(buf, len, "#%02x%02x%02x", (int)lround(255 * (rgb[0] + m)),
	    (int)lround(255 * (rgb[1] + m)), (int)lround(255 * (rgb[2] + m)));
	return buf;
}

/* A chart: ncat categories (x labels), ns series of values (NaN: none),
   drawn as grouped bars or as lines. */
struct chart {
	const char *title, *ylabel, *note;
	int ncat, ns, lines;
	char **cat;
	const char **name;
	double *v;		/* v[s * ncat + c] */
};

static int
chart_init(struct chart *c, const char *title, const char *ylabel, int ncat,
    int ns, int lines)
{
	memset(c, 0, sizeof(*c));
	c->title = title;
	c->ylabel = ylabel;
	c->ncat = ncat;
	c->ns = ns;
	c->lines = lines;
	c->cat = calloc((size_t)(ncat > 0 ? ncat : 1), sizeof(*c->cat));
	c->name = calloc((size_t)ns, sizeof(*c->name));
	c->v = malloc((size_t)(ncat > 0 ? ncat : 1) * (size_t)ns *
	    sizeof(*c->v));
	if (c->cat == NULL || c->name == NULL || c->v == NULL)
		return -1;
	for (int i = 0; i < ncat * ns; i++)
		c->v[i] = NAN;
	return 0;
}

static void
chart_free(struct chart *c)
{
	if (c->cat != NULL)
		for (int i = 0; i < c->ncat; i++)
			free(c->cat[i]);
	free(c->cat);
	free(c->name);
	free(c->v);
}

static void
chart_cat(struct chart *c, int i, const char *fmt, ...)
{
	va_list ap;
	char buf[64];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(c->cat[i]);
	c->cat[i] = strdup(buf);
}

/* A round number at or above x for the top of the y axis. */
static double
nice_top(double x)
{
	double p, f;

	if (!(x > 0))
		return 1;
	p = pow(10, floor(log10(x)));
	f = x / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) *
	    p;
}

static void
svg_chart(FILE *o, const struct chart *c)
{
	const double left = 70, right = 20, top = 20, bottom = 50;
	double pw, ph = 260, top_v = 0, gw, bw, width, height;
	int legend_rows = c->ns > 1 ? (c->ns + 3) / 4 : 0, step;

	width = 60 + (double)c->ncat * (c->lines ? 4 : 10.0 * c->ns + 8);
	width = width < 720 ? 720 : width > 1400 ? 1400 : width;
	pw = width - left - right;
	height = top + ph + bottom + 20.0 * legend_rows;
	for (int i = 0; i < c->ncat * c->ns; i++)
		if (!isnan(c->v[i]) && c->v[i] > top_v)
			top_v = c->v[i];
	top_v = nice_top(top_v);
	gw = c->ncat > 0 ? pw / c->ncat : pw;
	bw = gw * 0.8 / c->ns;
	if (bw > 40)
		bw = 40;
	/* One x label every step categories, each at least 48 px apart. */
	step = gw >= 48 ? 1 : (int)ceil(48 / gw);

	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	    "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
	    width, height, width, height);
	fprintf(o, "<title>");
	html_text(o, c->title);
	fprintf(o, "</title>\n");
	fprintf(o, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
	    "fill=\"#ffffff\"/>\n", width, height);
	/* y axis: five ticks with grid lines */
	for (int t = 0; t <= 5; t++) {
		double y = top + ph - ph * t / 5.0, val = top_v * t / 5.0;

		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		    "y2=\"%.1f\" stroke=\"#dddddd\"/>\n", left, y, left + pw, y);
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		    "text-anchor=\"end\">%.6g</text>\n", left - 4, y + 4, val);
	}
	fprintf(o, "<text x=\"14\" y=\"%.1f\" font-size=\"12\" "
	    "text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
	    top + ph / 2, top + ph / 2);
	html_text(o, c->ylabel);
	fprintf(o, "</text>\n");
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	    "stroke=\"#333333\"/>\n", left, top + ph, left + pw, top + ph);
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	    "stroke=\"#333333\"/>\n", left, top, left, top + ph);
	for (int i = 0; i < c->ncat; i += step) {
		double x = left + gw * (i + 0.5);

		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		    "text-anchor=\"middle\">", x, top + ph + 16);
		html_text(o, c->cat[i] ? c->cat[i] : "");
		fprintf(o, "</text>\n");
	}
	for (int s = 0; s < c->ns; s++) {
		char colbuf[8];
		const char *col = series_colour(s, colbuf, sizeof(colbuf));
		const double *v = c->v + (size_t)s * c->ncat;

		if (c->lines) {
			int pen = 0;

			fprintf(o, "<path fill=\"none\" stroke=\"%s\" "
			    "stroke-width=\"1.5\" d=\"", col);
			for (int i = 0; i < c->ncat; i++) {
				/* A ply without positions is passed over: the
				   line joins its neighbours. */
				if (isnan(v[i]))
					continue;
				fprintf(o, "%s%.1f %.1f ", pen ? "L" : "M",
				    left + gw * (i + 0.5),
				    top + ph - ph * v[i] / top_v);
				pen = 1;
			}
			fprintf(o, "\"/>\n");
			continue;
		}
		for (int i = 0; i < c->ncat; i++) {
			double h;

			if (isnan(v[i]) || v[i] <= 0)
				continue;
			h = ph * v[i] / top_v;
			fprintf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			    "height=\"%.2f\" fill=\"%s\"><title>", left +
			    gw * i + (gw - bw * c->ns) / 2 + bw * s,
			    top + ph - h, bw, h,
			    col);
			html_text(o, c->name[s]);
			fprintf(o, " ");
			html_text(o, c->cat[i] ? c->cat[i] : "");
			fprintf(o, ": %.6g</title></rect>\n", v[i]);
		}
	}
	for (int s = 0; c->ns > 1 && s < c->ns; s++) {
		double x = left + (s % 4) * (pw / 4), y = top + ph + 36 +
		    20.0 * (s / 4);
		char colbuf[8];

		fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
		    "height=\"12\" fill=\"%s\"/>\n", x, y - 10,
		    series_colour(s, colbuf, sizeof(colbuf)));
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">",
		    x + 16, y);
		html_text(o, c->name[s]);
		fprintf(o, "</text>\n");
	}
	fprintf(o, "</svg>\n");
}

static void
html_figure(FILE *o, const struct chart *c)
{
	fprintf(o, "<section>\n<h2>");
	html_text(o, c->title);
	fprintf(o, "</h2>\n");
	svg_chart(o, c);
	if (c->note != NULL) {
		fprintf(o, "<p>");
		html_text(o, c->note);
		fprintf(o, "</p>\n");
	}
	fprintf(o, "</section>\n");
}

/* The series of a page: all records alone, or every group (pct: --by,
   even when the records made a single group). */
struct series {
	int n, pct;
	const struct stats *s[MAX_GROUPS + 1];
};

/* Value of count a out of total b: the count itself for all records, the
   share in percent for groups (groups of different sizes compare). */
static double
val(const struct series *S, uint64_t a, uint64_t b)
{
	if (!S->pct)
		return (double)a;
	return b ? 100.0 * (double)a / (double)b : NAN;
}

static int
html_figures(FILE *o, const struct run *R, const struct series *S)
{
	struct chart c;
	const char *unit = S->pct ? "% of the group" : "count";
	long maxp = -1;
	int lo = ELO_BINS, hi = -1, any, rc = -1;

#define SERIES_NAMES() \
	for (int k = 0; k < S->n; k++) \
		c.name[k] = S->s[k]->label

	/* results */
	if (chart_init(&c, "Results (games)", unit, 4, S->n, 0) == -1)
		goto fail;
	SERIES_NAMES();
	for (int i = 0; i < 4; i++) {
		int r = (i + 1) & 3;

		chart_cat(&c, i, "%s", result_names[r]);
		for (int k = 0; k < S->n; k++)
			c.v[k * 4 + i] = val(S, S->s[k]->game_results[r],
			    S->s[k]->games);
	}
	html_figure(o, &c);
	chart_free(&c);

	/* Elo */
	for (int k = 0; k < S->n; k++) {
		int l, h;

		if (elo_range(S->s[k], &l, &h)) {
			lo = l < lo ? l : lo;
			hi = h > hi ? h : hi;
		}
	}
	if (hi < 0)
		lo = hi = 0;
	if (chart_init(&c, "Elo (both players of each game)", unit,
	    hi - lo + 1, S->n, 0) == -1)
		goto fail;
	SERIES_NAMES();
	c.note = "Bins of 100 Elo; players of unknown Elo are not drawn.";
	for (int i = lo; i <= hi; i++) {
		chart_cat(&c, i - lo, "%d", i * 100);
		for (int k = 0; k < S->n; k++)
			c.v[k * c.ncat + i - lo] = val(S, S->s[k]->elo[i],
			    2 * S->s[k]->games);
	}
	html_figure(o, &c);
	chart_free(&c);

	/* time control: the most common of all records */
	{
		size_t n;
		struct tc_entry *v = tc_sorted(&R->all, &n);
		int shown = (int)n < R->o->top ? (int)n : R->o->top;
		int other = (int)n > shown || R->all.tc_overflow > 0;

		if (chart_init(&c, "Time control (games)", unit, shown + other,
		    S->n, 0) == -1) {
			free(v);
			goto fail;
		}
		SERIES_NAMES();
		for (int i = 0; i < shown; i++) {
			char lab[64];

			tc_label(v[i].key, lab, sizeof(lab));
			chart_cat(&c, i, "%s", lab);
			for (int k = 0; k < S->n; k++)
				c.v[k * c.ncat + i] = val(S,
				    tc_games(S->s[k], v[i].key),
				    S->s[k]->games);
		}
		if (other) {
			chart_cat(&c, shown, "other");
			for (int k = 0; k < S->n; k++) {
				uint64_t sum = 0;

				for (int i = 0; i < shown; i++)
					sum += tc_games(S->s[k], v[i].key);
				c.v[k * c.ncat + shown] = val(S,
				    S->s[k]->games - sum, S->s[k]->games);
			}
		}
		free(v);
		html_figure(o, &c);
		chart_free(&c);
	}

	/* positions and repeat rate by ply */
	for (int k = 0; k < S->n; k++)
		maxp = S->s[k]->max_ply > maxp ? S->s[k]->max_ply : maxp;
	if (chart_init(&c, "Positions by ply", unit, (int)maxp + 1, S->n,
	    1) == -1)
		goto fail;
	SERIES_NAMES();
	for (long p = 0; p <= maxp; p++) {
		chart_cat(&c, (int)p, "%ld", p);
		for (int k = 0; k < S->n; k++)
			c.v[k * c.ncat + p] = p <= S->s[k]->max_ply ?
			    val(S, S->s[k]->ply_n[p], S->s[k]->records) :
			    NAN;
	}
	html_figure(o, &c);
	chart_free(&c);

	if (chart_init(&c, "Repeat rate by ply", "share", (int)maxp + 1, S->n,
	    1) == -1)
		goto fail;
	SERIES_NAMES();
	c.note = R->all.repeat_exact ? "The share of positions at ply p that "
	    "another record has at ply p." : "The share of positions at ply "
	    "p that another record has at ply p; a lower bound (the memory "
	    "was full).";
	for (long p = 0; p <= maxp; p++) {
		chart_cat(&c, (int)p, "%ld", p);
		for (int k = 0; k < S->n; k++)
			c.v[k * c.ncat + p] = p <= S->s[k]->max_ply ?
			    share(S->s[k]->ply_rep[p], S->s[k]->ply_n[p]) :
			    NAN;
	}
	html_figure(o, &c);
	chart_free(&c);

	/* piece count */
	if (chart_init(&c, "Positions by piece count", unit, 31, S->n,
	    0) == -1)
		goto fail;
	SERIES_NAMES();
	for (int i = 2; i <= 32; i++) {
		chart_cat(&c, i - 2, "%d", i);
		for (int k = 0; k < S->n; k++)
			c.v[k * 31 + i - 2] = val(S, S->s[k]->pieces[i],
			    S->s[k]->records);
	}
	html_figure(o, &c);
	chart_free(&c);

	/* evaluation */
	if (chart_init(&c, "Evaluation (deepest, side to move)", unit,
	    EVAL_BINS + 2, S->n, 0) == -1)
		goto fail;
	SERIES_NAMES();
	c.note = "Centipawns in bins of 100, tails below -1000 and from 1000, "
	    "mates apart; positions without an evaluation are not drawn.";
	chart_cat(&c, 0, "mated");
	chart_cat(&c, EVAL_BINS + 1, "mates");
	for (int i = 0; i < EVAL_BINS; i++)
		chart_cat(&c, i + 1, i == 0 ? "<-1000" : i == EVAL_BINS - 1 ?
		    ">=1000" : "%d", -1000 + 100 * (i - 1));
	for (int k = 0; k < S->n; k++) {
		const struct stats *s = S->s[k];

		c.v[k * c.ncat] = val(S, s->mate_against, s->records);
		c.v[k * c.ncat + EVAL_BINS + 1] = val(S, s->mate_for,
		    s->records);
		for (int i = 0; i < EVAL_BINS; i++)
			c.v[k * c.ncat + i + 1] = val(S, s->eval[i],
			    s->records);
	}
	html_figure(o, &c);
	chart_free(&c);

	/* played-move rank */
	if (chart_init(&c, "Played-move rank", S->pct ?
	    "% of the group's moves" : "moves", 10, S->n, 0) == -1)
		goto fail;
	SERIES_NAMES();
	c.note = "The rank of the played move in the deepest complete "
	    "per-move table divided by the table's moves, in tenths.";
	for (int i = 0; i < 10; i++) {
		chart_cat(&c, i, "%.1f", (i + 1) / 10.0);
		for (int k = 0; k < S->n; k++)
			c.v[k * 10 + i] = val(S, S->s[k]->rank_hist[i],
			    S->s[k]->rank_moves);
	}
	html_figure(o, &c);
	chart_free(&c);

	/* complexity and repair, when present */
	any = 0;
	for (int k = 0; k < S->n; k++)
		any |= S->s[k]->cplx_records > 0;
	if (any) {
		int top = 0;

		for (int k = 0; k < S->n; k++)
			for (int i = 0; i < CPLX_BINS; i++)
				if (S->s[k]->cplx[i] && i > top)
					top = i;
		if (chart_init(&c, "Complexity", unit, top + 1, S->n, 0) == -1)
			goto fail;
		SERIES_NAMES();
		for (int i = 0; i <= top; i++) {
			chart_cat(&c, i, i == CPLX_BINS - 1 ? "%d+" : "%d", i);
			for (int k = 0; k < S->n; k++)
				c.v[k * c.ncat + i] = val(S, S->s[k]->cplx[i],
				    S->s[k]->cplx_records);
		}
		html_figure(o, &c);
		chart_free(&c);
	}
	any = 0;
	for (int k = 0; k < S->n; k++)
		any |= S->s[k]->rep_records > 0;
	if (any) {
		int idx[15], n = 0;

		for (int m = 0; m < 3; m++)
			for (int cl = 0; cl < 5; cl++)
				for (int k = 0; k < S->n; k++)
					if (S->s[k]->rep_class[m][cl]) {
						idx[n++] = m * 5 + cl;
						break;
					}
		if (chart_init(&c, "Repair classes", unit, n, S->n, 0) == -1)
			goto fail;
		SERIES_NAMES();
		for (int i = 0; i < n; i++) {
			int m = idx[i] / 5, cl = idx[i] % 5;

			chart_cat(&c, i, "%s/%s", repair_mode_names[m],
			    repair_class_name(m, cl));
			for (int k = 0; k < S->n; k++)
				c.v[k * n + i] = val(S,
				    S->s[k]->rep_class[m][cl],
				    S->s[k]->rep_records);
		}
		html_figure(o, &c);
		chart_free(&c);
	}
#undef SERIES_NAMES
	return 0;
fail:
	chart_free(&c);
	return rc;
}

static void
html_summary_row(FILE *o, const struct stats *s)
{
	double d = decisive_per_draw(s), rk = rank_mean(s);

	fprintf(o, "<tr><td>");
	html_text(o, s->label);
	fprintf(o, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "%s</td><td>%.0f%s"
	    "</td>", s->records, s->games, s->games_exact ? "" : " (est.)",
	    s->unique_n, s->unique_exact ? "" : s->unique_lower ?
	    " (at least)" : " (HLL)");
	for (int r = 1; r <= 4; r++)
		fprintf(o, "<td>%" PRIu64 "</td>", s->game_results[r & 3]);
	if (isnan(d))
		fprintf(o, "<td>-</td>");
	else
		fprintf(o, "<td>%.4f</td>", d);
	if (isnan(rk))
		fprintf(o, "<td>-</td>");
	else
		fprintf(o, "<td>%.4f</td>", rk);
	fprintf(o, "</tr>\n");
}

static int
html_report(FILE *o, const struct run *R)
{
	struct series S;

	fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\"/>\n<title>posstat</title>\n"
	    "<style>\nbody { font-family: sans-serif; margin: 2em; "
	    "color: #222222; }\ntable { border-collapse: collapse; }\n"
	    "td, th { border: 1px solid #cccccc; padding: 2px 8px; "
	    "text-align: right; }\nsvg { display: block; }\n</style>\n"
	    "</head>\n<body>\n<h1>posstat</h1>\n");
	fprintf(o, "<table>\n<tr><th>%s</th><th>records</th><th>games</th>"
	    "<th>unique positions</th><th>1-0</th><th>0-1</th>"
	    "<th>1/2-1/2</th><th>*</th><th>(W+L)/D</th><th>rank</th></tr>\n",
	    R->o->by_kind == BY_NONE ? "" : "group");
	html_summary_row(o, &R->all);
	for (int i = 0; i < R->ngroups; i++)
		html_summary_row(o, R->group[i]);
	fprintf(o, "</table>\n");
	if (!R->all.unique_exact)
		fprintf(o, "<p>Unique positions are a HyperLogLog estimate "
		    "(standard error 0.8 %%), or at least the positions the "
		    "memory held when they are more: the memory was "
		    "full.</p>\n");
	memset(&S, 0, sizeof(S));
	S.pct = R->o->by_kind != BY_NONE;
	if (R->ngroups == 0)
		S.s[S.n++] = &R->all;
	for (int i = 0; i < R->ngroups; i++)
		S.s[S.n++] = R->group[i];
	if (R->o->by_kind != BY_NONE) {
		fprintf(o, "<p>By ");
		html_text(o, R->o->by);
		fprintf(o, ": one colour per group, values in per cent of "
		    "the group.</p>\n");
	}
	if (html_figures(o, R, &S) == -1)
		return -1;
	fprintf(o, "</body>\n</html>\n");
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static int
write_reports(struct run *R)
{
	struct outfile out, html;
	int rv = 0;

	if (R->o->html != NULL) {
		if (out_open(&html, R->o->html) == -1)
			rv = -1;
		else if (html_report(html.fp, R) == -1) {
			pf_warnx("out of memory");
			out_close(&html, 0);
			rv = -1;
		} else if (out_close(&html, 1) == -1)
			rv = -1;
	}
	if (out_open(&out, R->o->output) == -1)
		return -1;
	if (R->o->json)
		json_report(out.fp, R);
	else
		text_report(out.fp, R);
	if (out_close(&out, 1) == -1)
		rv = -1;
	return rv;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	pf_filter f;
	int r, i, status;
	size_t table;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	/* refused before the reading, not when the report is written */
	pf_set_inputs(argc, (const char *const *)argv);
	for (i = 0; i < 2; i++)
		if (pf_output_is_input(i ? o.html : o.output)) {
			pf_warnx("%s: %s", i ? o.html : o.output,
			    PF_OUTPUT_IS_INPUT);
			return PF_EXIT_DATA;
		}
	/* the two reports into one file would be neither */
	if (o.html != NULL && (o.output == NULL || strcmp(o.output, "-") == 0 ?
	    strcmp(o.html, "-") == 0 : pf_same_file(o.html, o.output))) {
		pf_warnx("--html %s: the same file as the text report (-o)",
		    o.html);
		return PF_EXIT_USAGE;
	}
	memset(&R, 0, sizeof(R));
	R.o = &o;
	R.f = &f;
	R.deepest.kind = PF_EVALSEL_DEEPEST;
	pf_filter_init(&f);
	if (o.by_kind == BY_EXPR) {
		char err[256];
		int col;

		if ((R.expr = pf_expr_compile(o.by, &col, err,
		    sizeof(err))) == NULL) {
			pf_warnx("--by: column %d: %s", col, err);
			usage();
			return PF_EXIT_USAGE;
		}
		if (pf_expr_is_game(R.expr))
			o.by_kind = BY_GAME;
	}
	/* An eighth for the game ids, the rest (less the overall sketch)
	   for the key logs. */
	table = (size_t)o.memory / 8;
	R.budget = (size_t)o.memory - table - pf_hll_bytes(PF_HLL_PRECISION);
	if ((R.set = pf_keyset_new(table)) == NULL ||
	    stats_init(&R.all, "all", -1, &R.budget) == -1) {
		pf_warnx("out of memory");
		status = PF_EXIT_DATA;
		goto out;
	}
	for (i = 0; (i == 0 || i < argc) && !f.stop; i++) {
		R.file = pf_input_name(argc ? argv[i] : "-");
		R.file_group = NULL;
		pf_filter_file(&f, argc ? argv[i] : "-", take, &R);
	}
	run_close(&R.all);
	log_finish(&R.all);
	for (i = 0; i < R.ngroups; i++) {
		run_close(R.group[i]);
		log_finish(R.group[i]);
	}
	status = f.status;
	if (!R.oom && write_reports(&R) == -1)
		status = PF_EXIT_DATA;
out:
	pf_keyset_free(R.set);
	stats_free(&R.all);
	for (i = 0; i < R.ngroups; i++) {
		stats_free(R.group[i]);
		free(R.group[i]);
	}
	pf_expr_free(R.expr);
	if (pf_filter_close(&f) != PF_EXIT_OK)
		status = PF_EXIT_DATA;
	return status;
}
