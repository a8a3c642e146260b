/*
 * complexity - find the positions a quick look gets wrong (METHODS.md
 * section 3; seed 004 sections 5.7.3-5.7.4, seed 003).
 *
 *   --mode depth (the default): the per-depth move tables of uci-eval
 *     --multipv all --keep-depths, each turned into probabilities by the
 *     policy code softtarget uses (lib/target.c, the same options and
 *     defaults); the complexity is the first depth at which a move that
 *     had probability below --low at the first depth becomes the most
 *     probable move with probability above --high, else 0.
 *   --mode nodes: a shallow and a deep evaluation on the record (say
 *     uci-eval -n 100 | uci-eval -n 100000 --multipv all); complex (1)
 *     when the shallow best move differs from the deep one and scores at
 *     least --loss centipawns below the deep best in the deep
 *     evaluation's table (which must list it), or when the two Q values
 *     differ by at least --threshold.
 *
 * Writes a complexity extension (posflow(5)) on every record it measures,
 * replacing one of the same mode, and passes everything else through;
 * --min keeps only the records of at least that complexity.  A pure
 * filter: one pass, no engine.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posflow.h"
#include "evalsel.h"
#include "filter.h"
#include "policyopt.h"
#include "target.h"

#define USAGE \
"usage: complexity [-fhVz] [--mode depth | nodes] [--policy method]\n" \
"                  [--drop fraction] [--power p] [--temperature t]\n" \
"                  [--low p] [--high p] [--shallow selector]\n" \
"                  [--deep selector] [--loss cp] [--threshold q] [--min c]\n" \
"                  [--require] [-o file] [file ...]\n"

/* The tables that make depth mode's input, and the evaluations node
   mode's: named in the messages about records without them. */
#define DEPTH_HINT	"uci-eval --multipv all --keep-depths"
#define NODES_HINT	"uci-eval -n 100 | uci-eval -n 100000 --multipv all"

/* Defaults: the thresholds of seed 004; node mode's loss is one pawn, the
   usual line between an inaccuracy and a mistake, and its Q threshold
   seed 001's repair threshold (repair-mark's default). */
#define DEF_LOW		0.05
#define DEF_HIGH	0.40
#define DEF_LOSS	100
#define DEF_THRESHOLD	0.55

/* At most this many tables of one evaluation (depths 1 to 255 and the
   final one), and of one record. */
#define MAX_TABLES	256
#define MAX_EXTS	4096

/* Options given, to refuse those the mode does not use. */
enum { SET_LOW = 1, SET_HIGH = 2, SET_SHALLOW = 4, SET_DEEP = 8,
	SET_LOSS = 16, SET_THRESHOLD = 32, SET_POLICY = 64 };

struct opts {
	int mode;		/* PF_COMPLEXITY_* */
	pf_policy_opts po;
	pf_policy_params pp;
	double low, high;
	pf_evalsel shallow, deep;
	int32_t loss;
	double threshold;
	unsigned min;		/* 0: keep every record */
	int require;
	pf_filter_opts out;	/* -o, -f, -z */
	unsigned set;
};

/* One per-move table, decoded: moves and scores (mates mapped). */
struct table {
	uint16_t depth;
	int n;
	int top;		/* the most probable move's index */
	pf_move move[PF_MAX_MOVES];
	int32_t cp[PF_MAX_MOVES];
	double prob[PF_MAX_MOVES];
};

struct run {
	const struct opts *o;
	pf_filter f;
	pf_extbuf eb;
	struct table base, t;	/* the first depth's, the one at hand */
	uint32_t gen, seen_gen;	/* stamps of slot and seen, 1..0xFFFFFF */
	uint32_t slot[1u << 12];	/* the base table's moves */
	uint32_t seen[1u << 12];	/* another table's, for repeats */
	pf_ext ms[MAX_EXTS];	/* the record's per-move tables */
	int nms;
	pf_ext series[MAX_TABLES];
	pf_eval shallow, deep;	/* node mode */
	/* counters */
	uint64_t records, measured, complex, missing, terminal, written;
	uint64_t partial;	/* measured on a first table of some moves */
};

static void
usage(void)
{
	fputs(USAGE, stderr);
}

/* ---- options ---------------------------------------------------------- */

static int
parse_double(const char *opt, const char *s, double min, double max,
    double *out)
{
	char err[256];

	if (pf_opt_double(opt, s, min, max, 0, out, err, sizeof(err)) == -1) {
		pf_warnx("%s", err);
		return -1;
	}
	return 0;
}

static int
parse_selector(const char *opt, const char *s, pf_evalsel *sel)
{
	char err[256];

	if (pf_evalsel_parse(s, sel, err, sizeof(err)) == -1) {
		pf_warnx("%s: %s: %s", opt, s, err);
		return -1;
	}
	return 0;
}

/* Refuse options that the mode does not use; fill the policy. */
static int
check_combination(struct opts *o)
{
	char err[256];

	if (o->mode == PF_COMPLEXITY_DEPTH) {
		if (o->set & (SET_SHALLOW | SET_DEEP | SET_LOSS |
		    SET_THRESHOLD)) {
			pf_warnx("--shallow, --deep, --loss and --threshold "
			    "need --mode nodes");
			return -1;
		}
		if (pf_policy_opts_params(&o->po, &o->pp, err,
		    sizeof(err)) == -1) {
			pf_warnx("%s", err);
			return -1;
		}
		return 0;
	}
	/* --policy counts as given whatever its method, the default
	   zeman too: node mode makes no probabilities. */
	if ((o->set & (SET_LOW | SET_HIGH | SET_POLICY)) || o->po.given) {
		pf_warnx("--policy, --drop, --power, --temperature, --low and "
		    "--high need --mode depth");
		return -1;
	}
	return 0;
}

/* 0, or PF_EXIT_USAGE (message printed), or -1 for --help / --version. */
static int
parse_options(int argc, char *argv[], struct opts *o, int *optindp)
{
	enum { O_MODE = 256, O_POLICY, O_DROP, O_POWER, O_TEMP, O_LOW, O_HIGH,
		O_SHALLOW, O_DEEP, O_LOSS, O_THRESHOLD, O_MIN, O_REQUIRE };
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, O_MODE },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "drop", required_argument, NULL, O_DROP },
		{ "power", required_argument, NULL, O_POWER },
		{ "temperature", required_argument, NULL, O_TEMP },
		{ "low", required_argument, NULL, O_LOW },
		{ "high", required_argument, NULL, O_HIGH },
		{ "shallow", required_argument, NULL, O_SHALLOW },
		{ "deep", required_argument, NULL, O_DEEP },
		{ "loss", required_argument, NULL, O_LOSS },
		{ "threshold", required_argument, NULL, O_THRESHOLD },
		{ "min", required_argument, NULL, O_MIN },
		{ "require", no_argument, NULL, O_REQUIRE },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr;
	char err[256];
	int ch, li;

	memset(o, 0, sizeof(*o));
	o->mode = PF_COMPLEXITY_DEPTH;
	pf_policy_opts_init(&o->po);
	o->low = DEF_LOW;
	o->high = DEF_HIGH;
	o->shallow.kind = PF_EVALSEL_SHALLOWEST;
	o->deep.kind = PF_EVALSEL_DEEPEST;
	o->loss = DEF_LOSS;
	o->threshold = DEF_THRESHOLD;
	while ((ch = pf_filter_getopt(argc, argv, PF_FILTER_SHORTOPTS,
	    longopts, &li, &o->out, USAGE)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return -1;	/* help or version */
		switch (ch) {
		case O_MODE:
			if (strcmp(optarg, "depth") == 0)
				o->mode = PF_COMPLEXITY_DEPTH;
			else if (strcmp(optarg, "nodes") == 0)
				o->mode = PF_COMPLEXITY_NODES;
			else {
				pf_warnx("--mode: %s: unknown mode (depth, "
				    "nodes)", optarg);
				goto bad;
			}
			break;
		case O_POLICY:
		case O_DROP:
		case O_POWER:
		case O_TEMP:
			if (pf_policy_option(&o->po, longopts[li].name, optarg,
			    0, err, sizeof(err)) == -1) {
				pf_warnx("%s", err);
				goto bad;
			}
			if (ch == O_POLICY)
				o->set |= SET_POLICY;
			break;
		case O_LOW:
			if (parse_double("--low", optarg, 0, 1, &o->low) == -1)
				goto bad;
			o->set |= SET_LOW;
			break;
		case O_HIGH:
			if (parse_double("--high", optarg, 0, 1, &o->high) == -1)
				goto bad;
			o->set |= SET_HIGH;
			break;
		case O_SHALLOW:
			if (parse_selector("--shallow", optarg,
			    &o->shallow) == -1)
				goto bad;
			o->set |= SET_SHALLOW;
			break;
		case O_DEEP:
			if (parse_selector("--deep", optarg, &o->deep) == -1)
				goto bad;
			o->set |= SET_DEEP;
			break;
		case O_LOSS:
			o->loss = (int32_t)pf_strtonum(optarg, 0,
			    2 * PF_MATE_CP, &errstr);
			if (errstr != NULL) {
				pf_warnx("--loss: %s: %s (want 0 to %d)",
				    optarg, errstr, 2 * PF_MATE_CP);
				goto bad;
			}
			o->set |= SET_LOSS;
			break;
		case O_THRESHOLD:
			if (parse_double("--threshold", optarg, 0, 2,
			    &o->threshold) == -1)
				goto bad;
			o->set |= SET_THRESHOLD;
			break;
		case O_MIN:
			o->min = (unsigned)pf_strtonum(optarg, 1, 65535,
			    &errstr);
			if (errstr != NULL) {
				pf_warnx("--min: %s: %s (want 1 to 65535)",
				    optarg, errstr);
				goto bad;
			}
			break;
		case O_REQUIRE:
			o->require = 1;
			break;
		default:
			goto bad;
		}
	}
	if (check_combination(o) == -1)
		goto bad;
	*optindp = optind;
	return 0;
bad:
	usage();
	return PF_EXIT_USAGE;
}

/* ---- depth mode ------------------------------------------------------- */

/*
 * The series of per-depth tables among the record's tables (run->ms, in
 * record order, each at least PF_MOVESCORES_FIXED bytes): the deepest
 * final table (a later one on equal depth, as the deepest selector of
 * evalsel.h picks it), then the intermediate tables of the same search
 * limit that follow it, up to the next final table (uci-eval
 * --keep-depths writes them so).  Fills run->series; returns how many
 * tables, 0 when there is no final table, or -1 after reporting too many.
 */
static int
find_series(struct run *run, uint64_t recno)
{
	const pf_ext *x;
	int i, at = -1, n = 1;

	for (i = 0; i < run->nms; i++)
		if (!(run->ms[i].data[1] & PF_MSF_INTERMEDIATE) && (at < 0 ||
		    pf_get16(run->ms[i].data + 2) >=
		    pf_get16(run->ms[at].data + 2)))
			at = i;
	if (at < 0)
		return 0;
	run->series[0] = run->ms[at];
	for (i = at + 1; i < run->nms; i++) {
		x = &run->ms[i];
		if (!(x->data[1] & PF_MSF_INTERMEDIATE))
			break;
		if (x->data[0] != run->ms[at].data[0] ||
		    pf_get64(x->data + 4) != pf_get64(run->ms[at].data + 4))
			continue;
		if (n == MAX_TABLES) {
			pf_filter_error(&run->f, recno, "more than %d "
			    "per-depth tables", MAX_TABLES);
			return -1;
		}
		run->series[n++] = *x;
	}
	return n;
}

/* Check that table x holds the entries it counts: 0, or -1 (reported). */
static int
table_size(struct run *run, const pf_ext *x, uint64_t recno)
{
	int n = pf_get16(x->data + 12);

	if (n <= PF_MAX_MOVES && (x->len - PF_MOVESCORES_FIXED) /
	    PF_MOVESCORE_SIZE >= (uint32_t)n && n > 0)
		return n;
	pf_filter_error(&run->f, recno, "per-move scores (depth %u): %s",
	    pf_get16(x->data + 2), n == 0 ? "empty table" :
	    "malformed extension");
	return -1;
}

/*
 * The most probable move of table x: the best score, the first listed on
 * equal scores, under every policy method (each gives a better score a
 * probability at least as high and breaks ties by order), so no
 * probability is needed to find it.  Returns its index, or -1 after
 * reporting a malformed table or an unknown score kind.  With t, the
 * table's moves and scores (mates mapped) are kept there for
 * probabilities.  Every record's every table passes here: the loop
 * without t is kept to a few instructions an entry.
 */
static int
scan_table(struct run *run, const pf_ext *x, struct table *t,
    uint64_t recno)
{
	const uint8_t *e = x->data + PF_MOVESCORES_FIXED;
	uint64_t v, kinds = 0;
	int32_t cp, best = INT32_MIN;
	unsigned bad = 0;
	int i, n, top = 0;

	if ((n = table_size(run, x, recno)) < 0)
		return -1;
	/* The usual table, all centipawns: the best score and the score
	   kinds seen, four entries a turn in independent chains, then the
	   first entry with that score. */
	for (i = 0; i + 4 <= n; i += 4) {
		uint64_t v0 = pf_get64(e + PF_MOVESCORE_SIZE * i);
		uint64_t v1 = pf_get64(e + PF_MOVESCORE_SIZE * (i + 1));
		uint64_t v2 = pf_get64(e + PF_MOVESCORE_SIZE * (i + 2));
		uint64_t v3 = pf_get64(e + PF_MOVESCORE_SIZE * (i + 3));
		int32_t c0 = (int32_t)(v0 >> 32), c1 = (int32_t)(v1 >> 32);
		int32_t c2 = (int32_t)(v2 >> 32), c3 = (int32_t)(v3 >> 32);

		c0 = c0 > c1 ? c0 : c1;
		c2 = c2 > c3 ? c2 : c3;
		c0 = c0 > c2 ? c0 : c2;
		best = c0 > best ? c0 : best;
		kinds |= (v0 | v1) | (v2 | v3);
	}
	for (; i < n; i++) {
		v = pf_get64(e + PF_MOVESCORE_SIZE * i);
		cp = (int32_t)(v >> 32);
		best = cp > best ? cp : best;
		kinds |= v;
	}
	if (__builtin_expect((kinds >> 16 & 0xFF) == PF_SCORE_CP, 1)) {
		for (top = 0; (int32_t)pf_get32(e + PF_MOVESCORE_SIZE * top +
		    4) != best; top++)
			continue;
	} else {
		/* Mates (mapped) or an unknown kind. */
		best = INT32_MIN;
		for (i = 0; i < n; i++) {
			v = pf_get64(e + PF_MOVESCORE_SIZE * i);
			cp = (int32_t)(v >> 32);
			if ((v >> 16 & 0xFF) != PF_SCORE_CP) {
				bad |= (v >> 16 & 0xFF) != PF_SCORE_MATE;
				cp = pf_score_cp(PF_SCORE_MATE, cp);
			}
			top = cp > best ? i : top;
			best = cp > best ? cp : best;
		}
	}
	if (bad) {
		pf_filter_error(&run->f, recno, "per-move scores (depth %u): "
		    "unknown score kind", pf_get16(x->data + 2));
		return -1;
	}
	if (t != NULL) {
		for (i = 0; i < n; i++, e += PF_MOVESCORE_SIZE) {
			t->move[i] = pf_get16(e);
			t->cp[i] = (int32_t)pf_get32(e + 4);
			if (e[2] != PF_SCORE_CP)
				t->cp[i] = pf_score_cp(e[2], t->cp[i]);
		}
		t->depth = pf_get16(x->data + 2);
		t->n = n;
		t->top = top;
	}
	return top;
}

/* A table's moves are found by from and to square (12 bits): the entry
   holds a generation stamp and the index of the first move with those
   squares (promotions share them and are told apart by a scan). */
#define KEY(m)		((unsigned)(m) & 0x0FFFu)
#define GEN_MAX		0x00FFFFFFu

/*
 * Index t's moves in slot under a new stamp *gen, refusing a move listed
 * twice (its probability would count twice).  The moves are not checked
 * against the position: only the squares name them in a message.  0, or
 * -1 (reported).
 */
static int
index_table(struct run *run, const struct table *t, uint32_t *slot,
    uint32_t *gen, uint64_t recno)
{
	uint32_t e;
	pf_move m;
	int i, j;

	if (++*gen > GEN_MAX) {
		memset(slot, 0, sizeof(run->slot));
		*gen = 1;
	}
	for (i = 0; i < t->n; i++) {
		m = t->move[i];
		e = slot[KEY(m)];
		if (e >> 8 != *gen) {
			slot[KEY(m)] = *gen << 8 | (uint32_t)i;
			continue;
		}
		for (j = (int)(e & 0xFF); j < i && t->move[j] != m; j++)
			continue;
		if (j < i) {
			pf_filter_error(&run->f, recno, "per-move scores "
			    "(depth %u): move %c%d%c%d (0x%04x) is listed twice",
			    t->depth, 'a' + PF_MOVE_FROM(m) % 8,
			    1 + PF_MOVE_FROM(m) / 8, 'a' + PF_MOVE_TO(m) % 8,
			    1 + PF_MOVE_TO(m) / 8, m);
			return -1;
		}
	}
	return 0;
}

/* Table x decoded into t, its moves indexed in slot (see index_table),
   and the probabilities of its moves.  0, or -1 (reported). */
static int
load_table(struct run *run, const pf_ext *x, struct table *t,
    uint32_t *slot, uint32_t *gen, uint64_t recno)
{
	if (scan_table(run, x, t, recno) < 0 ||
	    index_table(run, t, slot, gen, recno) == -1)
		return -1;
	if (pf_policy_probs(&run->o->pp, t->cp, t->n, t->prob) == 0)
		return 0;
	pf_filter_error(&run->f, recno, "invalid policy parameters");
	return -1;
}

/* The probability of m at the first depth; 0 when its table lacks m. */
static double
prob_first(const struct run *run, pf_move m)
{
	uint32_t e = run->slot[KEY(m)];
	int i;

	if (e >> 8 != run->gen)
		return 0;
	for (i = (int)(e & 0xFF); i < run->base.n; i++)
		if (run->base.move[i] == m)
			return run->base.prob[i];
	return 0;
}

/*
 * The metric of METHODS.md section 3 over the n tables of run->series,
 * into c.  The first depth is the shallowest table's (normally 1); the
 * deeper tables are taken in increasing depth, and the first whose most
 * probable move is above --high and was below --low at the first depth
 * decides.  A deeper table's probabilities are computed only when its
 * most probable move was below --low at the first depth.  With no
 * decision (complexity 0) the deepest table's most probable move is
 * recorded with its first-depth probability, and a deciding probability
 * of 0.  0, or -1 after reporting a bad table.
 */
static int
measure_depth(struct run *run, int n, pf_complexity *c, uint64_t recno)
{
	const struct opts *o = run->o;
	struct table *t = &run->t;
	const pf_ext *x;
	uint16_t depth[MAX_TABLES];
	int order[MAX_TABLES];
	double p1;
	int i, j, top;
	pf_move m;

	/* By increasing depth; equal depths keep their order. */
	for (i = 0; i < n; i++) {
		depth[i] = pf_get16(run->series[i].data + 2);
		for (j = i; j > 0 && depth[order[j - 1]] > depth[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	if (load_table(run, &run->series[order[0]], &run->base, run->slot,
	    &run->gen, recno) == -1)
		return -1;
	/* a move it does not list has probability 0 there */
	run->partial += !(run->series[order[0]].data[1] & PF_MSF_COMPLETE);
	memset(c, 0, sizeof(*c));
	c->mode = PF_COMPLEXITY_DEPTH;
	c->method = (uint8_t)o->pp.method;
	c->first_depth = run->base.depth;
	c->low = (float)o->low;
	c->high = (float)o->high;
	c->depth = depth[order[n - 1]];
	for (i = 1; i < n; i++) {
		x = &run->series[order[i]];
		if ((top = scan_table(run, x, NULL, recno)) < 0)
			return -1;
		m = pf_get16(x->data + PF_MOVESCORES_FIXED +
		    PF_MOVESCORE_SIZE * top);
		p1 = prob_first(run, m);
		/* Without a decision, the deepest table's most probable
		   move is recorded, with its first-depth probability. */
		c->move = m;
		c->p_first = (float)p1;
		if (!(p1 < o->low))
			continue;
		if (load_table(run, x, t, run->seen, &run->seen_gen,
		    recno) == -1)
			return -1;
		if (t->prob[top] > o->high) {
			c->complexity = t->depth;
			c->p_decide = (float)t->prob[top];
			break;
		}
	}
	return 0;
}

/* ---- node mode -------------------------------------------------------- */

/*
 * How many centipawns the shallow best move scores below the best move
 * of the deep evaluation's table: 1 and *loss set, 0 when there is no
 * such table or it does not list the move, -1 after reporting a bad
 * table.
 */
static int
deep_loss(struct run *run, const pf_record *rec, pf_move m, int32_t *loss,
    uint64_t recno)
{
	pf_ext x;
	const uint8_t *e;
	int32_t best = INT32_MIN, mine = 0, cp;
	int i, n, found = 0, rv;

	if ((rv = pf_evalsel_table_of(rec, &run->deep, &x)) <= 0) {
		if (rv < 0)
			pf_filter_error(&run->f, recno, "per-move scores: "
			    "extension too short");
		return rv;
	}
	n = pf_get16(x.data + 12);
	if (n > PF_MAX_MOVES || (x.len - PF_MOVESCORES_FIXED) /
	    PF_MOVESCORE_SIZE < (uint32_t)n) {
		pf_filter_error(&run->f, recno, "per-move scores: malformed "
		    "extension");
		return -1;
	}
	for (i = 0; i < n; i++) {
		e = x.data + PF_MOVESCORES_FIXED + PF_MOVESCORE_SIZE * i;
		if (e[2] != PF_SCORE_CP && e[2] != PF_SCORE_MATE) {
			pf_filter_error(&run->f, recno, "per-move scores: "
			    "unknown score kind %u", e[2]);
			return -1;
		}
		cp = pf_score_cp(e[2], (int32_t)pf_get32(e + 4));
		if (cp > best)
			best = cp;
		if (pf_get16(e) == m && !found) {
			mine = cp;
			found = 1;
		}
	}
	if (found)
		*loss = best - mine;
	return found;
}

/*
 * Seed 003's view: the shallow and the deep evaluation chosen by the
 * selectors.  1 measured (c filled), 0 when the record lacks one of them
 * (or both selectors choose the same one), -1 after reporting an error.
 */
static int
measure_nodes(struct run *run, const pf_record *rec, pf_complexity *c,
    uint64_t recno)
{
	const struct opts *o = run->o;
	pf_ext xs, xd;
	int32_t cs, cd, loss = 0;
	int rs, rd, known, fired_move, fired_q;

	rs = pf_evalsel_find_ext(&o->shallow, rec, &run->shallow, &xs);
	rd = pf_evalsel_find_ext(&o->deep, rec, &run->deep, &xd);
	if (rs < 0 || rd < 0) {
		pf_filter_error(&run->f, recno, "malformed evaluation");
		return -1;
	}
	if (rs == 0 || rd == 0 || xs.data == xd.data)
		return 0;
	/* of a known kind: pf_eval_decode_head refuses any other */
	cs = pf_score_cp(run->shallow.score_kind, run->shallow.score);
	cd = pf_score_cp(run->deep.score_kind, run->deep.score);
	memset(c, 0, sizeof(*c));
	c->mode = PF_COMPLEXITY_NODES;
	c->depth = run->deep.depth;
	c->shallow_depth = run->shallow.depth;
	c->shallow_kind = run->shallow.limit_kind;
	c->deep_kind = run->deep.limit_kind;
	c->shallow_limit = run->shallow.limit;
	c->deep_limit = run->deep.limit;
	c->shallow_best = run->shallow.best;
	c->deep_best = run->deep.best;
	c->q_shallow = (float)pf_value_logistic(cs, PF_LOGISTIC_ALPHA);
	c->q_deep = (float)pf_value_logistic(cd, PF_LOGISTIC_ALPHA);
	c->min_loss = o->loss;
	c->threshold = (float)o->threshold;
	if ((known = deep_loss(run, rec, run->shallow.best, &loss,
	    recno)) < 0)
		return -1;
	if (run->shallow.best != PF_MOVE_NONE &&
	    run->deep.best != PF_MOVE_NONE &&
	    run->shallow.best != run->deep.best)
		c->flags |= PF_COMPLEXITYF_DIFFER;
	if (known) {
		c->flags |= PF_COMPLEXITYF_LOSS_KNOWN;
		c->loss = loss;
	}
	/* The move criterion needs the deep table's word on the move: a
	   changed best move alone is mostly noise between moves of nearly
	   equal value. */
	fired_move = (c->flags & PF_COMPLEXITYF_DIFFER) && known &&
	    loss >= o->loss;
	fired_q = fabs(pf_value_logistic(cs, PF_LOGISTIC_ALPHA) -
	    pf_value_logistic(cd, PF_LOGISTIC_ALPHA)) >= o->threshold;
	if (fired_move)
		c->flags |= PF_COMPLEXITYF_MOVE;
	if (fired_q)
		c->flags |= PF_COMPLEXITYF_Q;
	c->complexity = fired_move || fired_q;
	return 1;
}

/* ---- per record ------------------------------------------------------- */

/* The record's extensions minus the complexity ones of this run's mode
   (when it has any), then c, into run->eb.  0, or -1 (out of memory;
   reported). */
static int
rebuild(struct run *run, const pf_record *rec, int replace,
    const pf_complexity *c, uint64_t recno)
{
	pf_ext_iter it;
	pf_ext x;

	pf_extbuf_reset(&run->eb);
	if (!replace) {
		if (pf_extbuf_append_raw(&run->eb, rec->ext, rec->ext_len) < 0)
			goto nomem;
	} else {
		pf_ext_iter_init(&it, rec);
		while (pf_ext_next(&it, &x) == 1) {
			if (x.type == PF_EXT_COMPLEXITY && x.len >= 1 &&
			    x.data[0] == run->o->mode)
				continue;
			if (pf_extbuf_append_raw(&run->eb, x.data -
			    PF_EXT_HEADER_SIZE, PF_EXT_HEADER_SIZE + x.len) < 0)
				goto nomem;
		}
	}
	if (pf_complexity_encode(c, &run->eb) == 0)
		return 0;
nomem:
	pf_filter_error(&run->f, recno, "out of memory");
	return -1;
}

/* A record without what the mode needs: passed through and counted, or
   an error with --require. */
static void
missing(struct run *run, uint64_t recno)
{
	char s[PF_EVALSEL_NAME_MAX], d[PF_EVALSEL_NAME_MAX];

	run->missing++;
	if (!run->o->require)
		return;
	if (run->o->mode == PF_COMPLEXITY_DEPTH)
		pf_filter_error(&run->f, recno, "no per-depth move tables "
		    "(--require; " DEPTH_HINT " writes them)");
	else
		pf_filter_error(&run->f, recno, "no two evaluations for "
		    "--shallow %s and --deep %s (--require; " NODES_HINT
		    " writes them)", pf_evalsel_name(&run->o->shallow, s,
		    sizeof(s)), pf_evalsel_name(&run->o->deep, d, sizeof(d)));
}

/*
 * One pass over the extensions: the area is checked whole (so that each
 * look after may stop at the first problem without hiding another), the
 * per-move tables are listed in run->ms, and *replace says whether the
 * record holds a complexity extension of this run's mode.  0, or -1
 * (reported).
 */
static int
survey(struct run *run, const pf_record *rec, int *replace, uint64_t recno)
{
	pf_ext_iter it;
	pf_ext x;
	int rv;

	run->nms = 0;
	*replace = 0;
	pf_ext_iter_init(&it, rec);
	while ((rv = pf_ext_next(&it, &x)) == 1) {
		if (x.type == PF_EXT_MOVESCORES) {
			if (x.len < PF_MOVESCORES_FIXED) {
				pf_filter_error(&run->f, recno, "per-move "
				    "scores: extension too short (%" PRIu32
				    " bytes)", x.len);
				return -1;
			}
			if (run->nms == MAX_EXTS) {
				pf_filter_error(&run->f, recno, "more than %d "
				    "per-move tables", MAX_EXTS);
				return -1;
			}
			run->ms[run->nms++] = x;
		} else if (x.type == PF_EXT_COMPLEXITY && x.len >= 1 &&
		    x.data[0] == run->o->mode)
			*replace = 1;
	}
	if (rv < 0) {
		pf_filter_error(&run->f, recno, "malformed extension area");
		return -1;
	}
	return 0;
}

static void
record(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *run = ctx;
	const struct opts *o = run->o;
	pf_complexity c;
	pf_record out = *rec;
	int rv, n, ok = 0, replace;

	run->records++;
	if (survey(run, rec, &replace, recno) == -1)
		;
	else if (rec->flags & (PF_RF_MATE | PF_RF_STALEMATE))
		run->terminal++;	/* no moves: nothing to measure */
	else if (o->mode == PF_COMPLEXITY_DEPTH) {
		if ((n = find_series(run, recno)) == 1 || n == 0)
			missing(run, recno);
		else if (n > 1)
			ok = measure_depth(run, n, &c, recno) == 0;
	} else if ((rv = measure_nodes(run, rec, &c, recno)) == 0)
		missing(run, recno);
	else
		ok = rv == 1;
	if (ok && rebuild(run, rec, replace, &c, recno) == 0) {
		run->measured++;
		run->complex += c.complexity > 0;
		out.ext = run->eb.data;
		out.ext_len = (uint32_t)run->eb.len;
	} else
		ok = 0;
	if (o->min > 0 && (!ok || c.complexity < o->min))
		return;
	pf_filter_put(f, &out);
	run->written++;
}

/* The summary line, and a word on the records that lacked the input. */
static void
summary(const struct run *run)
{
	const char *what = run->o->mode == PF_COMPLEXITY_DEPTH ?
	    "per-depth tables" : "both evaluations";

	pf_warnx("%" PRIu64 " records: %" PRIu64 " with %s, %" PRIu64
	    " complex (%.1f%%), %" PRIu64 " without, %" PRIu64 " terminal; %"
	    PRIu64 " written", run->records, run->measured, what,
	    run->complex, run->measured ? 100.0 * (double)run->complex /
	    (double)run->measured : 0.0, run->missing, run->terminal,
	    run->written);
	if (run->partial > 0)
		pf_warnx("%" PRIu64 " records were measured on a first-depth "
		    "table of some of the moves (uci-eval --multipv K): a move "
		    "it does not list counts as probability 0, so more "
		    "positions look complex (%s lists them all)", run->partial,
		    DEPTH_HINT);
	if (run->missing > 0 && !run->o->require)
		pf_warnx("%" PRIu64 " records without %s were %s unmeasured "
		    "(%s writes them)", run->missing, what,
		    run->o->min > 0 ? "left out" : "passed through",
		    run->o->mode == PF_COMPLEXITY_DEPTH ? DEPTH_HINT :
		    NODES_HINT);
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct run *run;
	int i, rv, status;

	pf_prog_init(argv);
	if ((rv = parse_options(argc, argv, &o, &i)) != 0)
		return rv < 0 ? PF_EXIT_OK : rv;
	argc -= i;
	argv += i;

	/* The tables are large: on the heap. */
	if ((run = calloc(1, sizeof(*run))) == NULL) {
		pf_warn("out of memory");
		return PF_EXIT_DATA;
	}
	run->o = &o;
	if (pf_filter_open(&run->f, o.out.output, o.out.force,
	    o.out.zstd) == 0) {
		if (argc == 0)
			pf_filter_file(&run->f, "-", record, run);
		for (i = 0; i < argc && !run->f.stop; i++)
			pf_filter_file(&run->f, argv[i], record, run);
		if (pf_filter_complete(&run->f))
			summary(run);
	}
	status = pf_filter_close(&run->f);
	pf_extbuf_free(&run->eb);
	free(run);
	return status;
}
