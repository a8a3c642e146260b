/*
 * softtarget - policy and value training targets from engine scores.
 *
 * Reads a record stream, and for every record that carries what a target
 * needs, appends a policy target (PF_EXT_POLICY: a probability for every
 * legal move, from the per-move scores of uci-eval --multipv all) and value
 * targets (PF_EXT_VALUE: one per --value method, from an evaluation, the
 * game result, or both).  Everything else passes through byte for byte.
 * The formulas are those of METHODS.md sections 1 and 2 (lib/target.c).
 *
 * With --policy-depths A-B the policy is the average of the policies of
 * the tables of depths A to B of one search (uci-eval --keep-depths
 * stores every depth's table); a record without a complete table of
 * every depth in the range gets the single table's policy, and is
 * counted (an error with --require).
 *
 * The linear reward needs a game's length, so with --value linear the
 * records of one game (consecutive, same game id, increasing ply, the last
 * flagged PF_RF_LAST) are held until the game ends, at most
 * --max-game-plies of them.
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

#include "boardchain.h"
#include "evalsel.h"
#include "filter.h"
#include "policyopt.h"
#include "posflow.h"
#include "target.h"

#define USAGE \
"usage: softtarget [-fhVz] [--policy method] [--drop fraction]\n" \
"                  [--power p] [--temperature t] [--policy-depths A-B]\n" \
"                  [--value method] [--spread s] [--alpha a] [--wdl-a a]\n" \
"                  [--wdl-b b] [--lambda l] [--eval selector] [--require]\n" \
"                  [--max-game-plies n] [-o file] [file ...]\n"

/* Value methods as options name them (wdl covers PF_VALUE_WDL and
   PF_VALUE_WDL_ENGINE). */
enum { VM_TANH, VM_LOGISTIC, VM_WDL, VM_LINEAR, VM_N };
static const char *const vm_names[VM_N] = { "tanh", "logistic", "wdl",
	"linear" };

/* Value options given, to refuse those that do not apply (the policy
   options: lib/policyopt.c). */
enum { SET_SPREAD = 1, SET_ALPHA = 2, SET_WDL_A = 4, SET_WDL_B = 8,
	SET_LAMBDA = 16, SET_MAXPLIES = 32 };

/* --policy-depths: the depths a range may name (uci-eval --depth's). */
#define DEPTH_MIN	1
#define DEPTH_MAX	255

struct opts {
	pf_policy_opts po;	/* as given */
	pf_policy_params pp;	/* pp.method 0: no policy target */
	int depth_lo, depth_hi;	/* --policy-depths; 0: not given */
	int nvalues;
	int values[VM_N];	/* VM_*, in the order given */
	double spread, alpha, wdl_a, wdl_b, lambda;
	pf_evalsel sel;		/* which evaluation and table (--eval) */
	int repaired;		/* --eval repaired: repair-mark's value */
	int require;
	int max_game_plies;
	pf_filter_opts out;	/* -o, -f, -z */
	unsigned set;
};

/* One record held back for the linear reward. */
struct held {
	pf_record rec;		/* ext is set when written */
	size_t off, len;	/* its ext bytes in game.bytes */
	size_t linear_at;	/* where among them the reward goes */
	int made;		/* build() gave it a target */
	uint64_t recno;
	int ok;			/* 0: an error, write it as it came */
};

struct game {
	struct held *recs;
	size_t n, cap;
	uint8_t *bytes;
	size_t blen, bcap;
	uint64_t id;
	uint16_t last_ply;
	int overflow;		/* this game outgrew --max-game-plies */
	uint64_t overflow_id;
	uint16_t overflow_ply;
};

struct run {
	const struct opts *o;
	pf_boardchain chain;	/* boards from the record before */
	int chain_used;		/* the previous record's board is in it */
	pf_target *target;
	pf_extbuf eb;
	int tail;		/* build(): eb holds only the new extensions,
				   to follow the record's own unchanged */
	size_t linear_at;	/* build(): where in eb the reward goes */
	int made;		/* build(): the record got a target */
	uint64_t records, targeted;	/* read; given a target */
	struct game game;
	pf_filter f;		/* output, current input, status */
	/* --policy-depths: the picked search's tables by depth - lo. */
	pf_ext depth_table[DEPTH_MAX];
	uint8_t have_depth[DEPTH_MAX];
	int depth_open;		/* the intermediate tables met belong to it */
	uint64_t averaged;	/* policies averaged over the range */
	uint64_t single;	/* policies of the single table instead */
};

static void
usage(void)
{
	fputs(USAGE, stderr);
}

/* ---- options ---------------------------------------------------------- */

static int
parse_double(const char *opt, const char *s, double min, double max,
    int positive, double *out)
{
	char err[256];

	if (pf_opt_double(opt, s, min, max, positive, out, err,
	    sizeof(err)) == -1) {
		pf_warnx("%s", err);
		return -1;
	}
	return 0;
}

static int
parse_method(const char *opt, const char *s, const char *const *names,
    int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	pf_warnx("%s: %s: unknown method", opt, s);
	return -1;
}

/* Refuse options that the chosen methods do not use. */
static int
check_combination(struct opts *o)
{
	int want[VM_N] = { 0 }, i, eval_values = 0;
	char err[256];

	for (i = 0; i < o->nvalues; i++) {
		want[o->values[i]] = 1;
		if (o->values[i] != VM_LINEAR)
			eval_values = 1;
	}
	if (o->po.method == 0 && o->nvalues == 0) {
		pf_warnx("--policy none needs a --value");
		return -1;
	}
	if (pf_policy_opts_params(&o->po, &o->pp, err, sizeof(err)) == -1) {
		pf_warnx("%s", err);
		return -1;
	}
	if (o->depth_lo > 0 && o->po.method == 0) {
		pf_warnx("--policy-depths needs a policy");
		return -1;
	}
	if ((o->set & SET_SPREAD) && !want[VM_TANH]) {
		pf_warnx("--spread needs --value tanh");
		return -1;
	}
	if ((o->set & SET_ALPHA) && !want[VM_LOGISTIC]) {
		pf_warnx("--alpha needs --value logistic");
		return -1;
	}
	if ((o->set & (SET_WDL_A | SET_WDL_B)) && !want[VM_WDL] &&
	    o->pp.method != PF_POLICY_WINPROB) {
		pf_warnx("--wdl-a and --wdl-b need --value wdl or "
		    "--policy winprob");
		return -1;
	}
	if ((o->set & SET_LAMBDA) && !eval_values) {
		pf_warnx("--lambda needs --value tanh, logistic or wdl");
		return -1;
	}
	if ((o->set & SET_MAXPLIES) && !want[VM_LINEAR]) {
		pf_warnx("--max-game-plies needs --value linear");
		return -1;
	}
	o->pp.wdl_a = o->wdl_a;
	o->pp.wdl_b = o->wdl_b;
	return 0;
}

/* 0, or PF_EXIT_USAGE (message printed), or -1 for --help / --version. */
static int
parse_options(int argc, char *argv[], struct opts *o, int *optindp)
{
	enum { O_POLICY = 256, O_DROP, O_POWER, O_TEMP, O_DEPTHS, O_VALUE,
		O_SPREAD, O_ALPHA, O_WDL_A, O_WDL_B, O_LAMBDA, O_EVAL,
		O_REQUIRE, O_MAXPLIES };
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, O_POLICY },
		{ "drop", required_argument, NULL, O_DROP },
		{ "power", required_argument, NULL, O_POWER },
		{ "temperature", required_argument, NULL, O_TEMP },
		{ "policy-depths", required_argument, NULL, O_DEPTHS },
		{ "value", required_argument, NULL, O_VALUE },
		{ "spread", required_argument, NULL, O_SPREAD },
		{ "alpha", required_argument, NULL, O_ALPHA },
		{ "wdl-a", required_argument, NULL, O_WDL_A },
		{ "wdl-b", required_argument, NULL, O_WDL_B },
		{ "lambda", required_argument, NULL, O_LAMBDA },
		{ "eval", required_argument, NULL, O_EVAL },
		{ "require", no_argument, NULL, O_REQUIRE },
		{ "max-game-plies", required_argument, NULL, O_MAXPLIES },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr;
	char err[256];
	int ch, m, i, li;

	memset(o, 0, sizeof(*o));
	o->spread = PF_TANH_SPREAD;
	o->alpha = PF_LOGISTIC_ALPHA;
	o->wdl_a = PF_WDL_A;
	o->wdl_b = PF_WDL_B;
	o->lambda = 1;
	o->sel.kind = PF_EVALSEL_DEEPEST;
	o->max_game_plies = 4096;
	pf_policy_opts_init(&o->po);
	while ((ch = pf_filter_getopt(argc, argv, PF_FILTER_SHORTOPTS,
	    longopts, &li, &o->out, USAGE)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return -1;	/* help or version */
		switch (ch) {
		case O_POLICY:
		case O_DROP:
		case O_POWER:
		case O_TEMP:
			if (pf_policy_option(&o->po, longopts[li].name, optarg,
			    1, err, sizeof(err)) == -1) {
				pf_warnx("%s", err);
				goto bad;
			}
			break;
		case O_DEPTHS:
			if (pf_opt_range("--policy-depths", optarg, DEPTH_MIN,
			    DEPTH_MAX, &o->depth_lo, &o->depth_hi, err,
			    sizeof(err)) == -1) {
				pf_warnx("%s", err);
				goto bad;
			}
			break;
		case O_VALUE:
			if ((m = parse_method("--value", optarg, vm_names,
			    VM_N)) < 0)
				goto bad;
			for (i = 0; i < o->nvalues; i++)
				if (o->values[i] == m) {
					pf_warnx("--value %s given twice",
					    optarg);
					goto bad;
				}
			o->values[o->nvalues++] = m;
			break;
		case O_SPREAD:
			if (parse_double("--spread", optarg, 0, 1000, 1,
			    &o->spread) == -1)
				goto bad;
			o->set |= SET_SPREAD;
			break;
		case O_ALPHA:
			if (parse_double("--alpha", optarg, 0, 1e6, 1,
			    &o->alpha) == -1)
				goto bad;
			o->set |= SET_ALPHA;
			break;
		case O_WDL_A:
			if (parse_double("--wdl-a", optarg, -PF_MATE_CP,
			    PF_MATE_CP, 0, &o->wdl_a) == -1)
				goto bad;
			o->set |= SET_WDL_A;
			break;
		case O_WDL_B:
			if (parse_double("--wdl-b", optarg, 0, 1e6, 1,
			    &o->wdl_b) == -1)
				goto bad;
			o->set |= SET_WDL_B;
			break;
		case O_LAMBDA:
			if (parse_double("--lambda", optarg, 0, 1, 0,
			    &o->lambda) == -1)
				goto bad;
			o->set |= SET_LAMBDA;
			break;
		case O_EVAL:
			if (strcmp(optarg, "repaired") == 0) {
				o->repaired = 1;	/* tables: deepest */
				o->sel.kind = PF_EVALSEL_DEEPEST;
				break;
			}
			o->repaired = 0;
			if (pf_evalsel_parse(optarg, &o->sel, err,
			    sizeof(err)) == -1) {
				pf_warnx("--eval: %s: %s", optarg, err);
				goto bad;
			}
			break;
		case O_REQUIRE:
			o->require = 1;
			break;
		case O_MAXPLIES:
			o->max_game_plies = (int)pf_strtonum(optarg, 1, 65536,
			    &errstr);
			if (errstr != NULL) {
				pf_warnx("--max-game-plies: %s: %s", optarg,
				    errstr);
				goto bad;
			}
			o->set |= SET_MAXPLIES;
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

/* ---- per record ------------------------------------------------------- */


/* Does this record already carry a target of a kind this run writes? */
static int
replaced(const struct opts *o, const pf_ext *x)
{
	int i, m;

	if (x->type == PF_EXT_POLICY)
		return o->pp.method != 0 && x->len >= 1 &&
		    x->data[0] == o->pp.method;
	if (x->type != PF_EXT_VALUE || x->len < 1)
		return 0;
	m = x->data[0];
	for (i = 0; i < o->nvalues; i++) {
		switch (o->values[i]) {
		case VM_TANH:
			if (m == PF_VALUE_TANH)
				return 1;
			break;
		case VM_LOGISTIC:
			if (m == PF_VALUE_LOGISTIC)
				return 1;
			break;
		case VM_WDL:
			if (m == PF_VALUE_WDL || m == PF_VALUE_WDL_ENGINE)
				return 1;
			break;
		case VM_LINEAR:
			if (m == PF_VALUE_LINEAR)
				return 1;
			break;
		}
	}
	return 0;
}

/* Side to move from the packed position (chess.h: stm_ep bit 7). */
static int
packed_stm(const pf_record *rec)
{
	return rec->pos[24] & 0x80 ? PF_BLACK : PF_WHITE;
}

static int
add_value(struct run *run, int method, int scale, double p1, double p2,
    double lambda, double target)
{
	pf_value v;

	v.method = (uint8_t)method;
	v.scale = (uint8_t)scale;
	v.param1 = (float)p1;
	v.param2 = (float)p2;
	v.lambda = (float)lambda;
	v.target = (float)target;
	return pf_value_encode(&v, &run->eb);
}

/* Would pf_movescores_decode() accept this table?  Checked before the
   board is built, so a bad table is reported as such; the table is then
   read in place by pf_target_policy_payload(). */
static int
table_well_formed(const pf_ext *x)
{
	return x->len >= PF_MOVESCORES_FIXED &&
	    pf_get16(x->data + 12) <= PF_MAX_MOVES &&
	    (x->len - PF_MOVESCORES_FIXED) / PF_MOVESCORE_SIZE >=
	    pf_get16(x->data + 12);
}

/*
 * --policy-depths: keep the tables of the search whose final table the
 * selector picks (picked: pf_evalsel_offer_table() took x), that is that
 * final table and the intermediate tables of the same limit that follow
 * it before the next final table (uci-eval --keep-depths writes them
 * so), one per depth in the range, the later on a repeat.  x is at least
 * PF_MOVESCORES_FIXED bytes long.
 */
static void
offer_depth(struct run *run, const pf_evalsel_pick *pick, const pf_ext *x,
    int picked)
{
	const struct opts *o = run->o;
	int d;

	if (!(x->data[1] & PF_MSF_INTERMEDIATE)) {
		run->depth_open = picked;
		if (!picked)
			return;
		memset(run->have_depth, 0, sizeof(run->have_depth));
	} else if (!run->depth_open || x->data[0] != pick->x.data[0] ||
	    pf_get64(x->data + 4) != pf_get64(pick->x.data + 4))
		return;
	d = pf_get16(x->data + 2);
	if (d < o->depth_lo || d > o->depth_hi)
		return;
	run->have_depth[d - o->depth_lo] = 1;
	run->depth_table[d - o->depth_lo] = *x;
}

/* depth_policy(): no complete table of some depth in the range. */
#define NO_RANGE	(-2)

/*
 * The averaged policy of the kept tables (offer_depth()) into dst, for
 * the position in run->chain.b: its payload's length; NO_RANGE when the
 * position has no legal moves, or when a depth of the range has no table
 * or only one that lacks a legal move (counted); or -1 after reporting a
 * bad table, or the missing table under --require.
 */
static int
depth_policy(struct run *run, uint64_t recno, uint8_t *dst)
{
	const struct opts *o = run->o;
	const pf_ext *x;
	int d, rv;

	if (pf_target_mix_begin(run->target, &run->chain.b) == 0)
		return NO_RANGE;
	for (d = o->depth_lo; d <= o->depth_hi; d++)
		if (!run->have_depth[d - o->depth_lo])
			goto missing;
	for (d = o->depth_lo; d <= o->depth_hi; d++) {
		x = &run->depth_table[d - o->depth_lo];
		if (!table_well_formed(x)) {
			pf_filter_error(&run->f, recno, "per-move scores "
			    "(depth %d): malformed extension", d);
			return -1;
		}
		if ((rv = pf_target_mix_add(run->target, x->data,
		    x->len)) < 0) {
			pf_filter_error(&run->f, recno, "%s (depth %d)",
			    pf_target_error(run->target), d);
			return -1;
		}
		if (rv == 0)
			goto missing;
	}
	if ((rv = pf_target_mix_payload(run->target, dst)) < 0) {
		pf_filter_error(&run->f, recno, "%s",
		    pf_target_error(run->target));
		return -1;
	}
	run->averaged++;
	return rv;
missing:
	if (o->require) {
		pf_filter_error(&run->f, recno, "no complete per-move table of "
		    "every depth %d-%d (--require)", o->depth_lo, o->depth_hi);
		return -1;
	}
	run->single++;
	return NO_RANGE;
}

/*
 * Build the record's new extension area in run->eb: its extensions minus
 * the targets this run replaces, then the policy and the value targets
 * (the linear reward is added later, when the game is complete).  When
 * nothing is replaced and joined is 0, eb holds only the new extensions,
 * to be written after the record's own (run->tail is set): the record's
 * extensions are not copied.  0, or -1 after reporting an error (the
 * record is then written as it came).
 */
static int
build(struct run *run, const pf_record *rec, uint64_t recno, int joined)
{
	const struct opts *o = run->o;
	pf_ext_iter it;
	pf_ext x, table;
	/* The chosen table and evaluation (lib/evalsel.c); only the chosen
	   evaluation is decoded whole (pf_eval is large). */
	pf_evalsel_pick tpick = { 0 }, epick = { 0 };
	size_t kept;
	pf_eval v, best;
	int rv, nrepl = 0, have_table, have_eval, have_repaired = 0, i, plen;
	int picked;
	pf_repair rp;
	uint8_t *p;
	double r = -1, cp;
	char err[128];

	/* The chain holds only from one record to the next. */
	if (!run->chain_used)
		pf_boardchain_reset(&run->chain);
	run->chain_used = 0;

	/* One pass over the extensions: the table and evaluation to use,
	   and whether anything is replaced. */
	if (o->depth_lo > 0) {
		run->depth_open = 0;
		memset(run->have_depth, 0, sizeof(run->have_depth));
	}
	pf_ext_iter_init(&it, rec);
	while ((rv = pf_ext_next(&it, &x)) == 1) {
		if (replaced(o, &x))
			nrepl++;
		if (x.type == PF_EXT_MOVESCORES && o->pp.method != 0) {
			if ((picked = pf_evalsel_offer_table(&o->sel, &tpick,
			    &x)) < 0) {
				pf_filter_error(&run->f, recno, "per-move scores: "
				    "extension too short (%" PRIu32 " bytes)",
				    x.len);
				return -1;
			}
			if (o->depth_lo > 0)
				offer_depth(run, &tpick, &x, picked);
		} else if (x.type == PF_EXT_EVAL && o->nvalues > 0) {
			if (pf_eval_decode_head(&x, &v) == -1) {
				pf_filter_error(&run->f, recno, "malformed evaluation "
				    "(%" PRIu32 " bytes)", x.len);
				return -1;
			}
			pf_evalsel_offer_eval(&o->sel, &epick, &x, &v);
		} else if (x.type == PF_EXT_REPAIR && o->repaired) {
			if (pf_repair_decode(&x, &rp) == -1) {
				pf_filter_error(&run->f, recno, "malformed repair "
				    "extension (%" PRIu32 " bytes)", x.len);
				return -1;
			}
			have_repaired = rp.mode == PF_REPAIR_PANDA;
		}
	}
	if (rv < 0) {
		pf_filter_error(&run->f, recno, "malformed extension area");
		return -1;
	}
	have_table = tpick.found;
	table = tpick.x;
	have_eval = epick.found;
	if (have_eval)
		(void)pf_eval_decode_head(&epick.x, &best);	/* checked above */
	if (o->repaired) {
		/* Panda's repaired value, in centipawns (mates mapped); no
		   engine W/D/L goes with it. */
		have_eval = have_repaired;
		memset(&best, 0, sizeof(best));
		best.score_kind = PF_SCORE_CP;
		best.score = have_repaired ? rp.repaired : 0;
	}

	/* The board, checked whatever the targets (built in the chain, so
	   that the next record can follow from it). */
	if (pf_boardchain_next(&run->chain, rec, err, sizeof(err)) < 0) {
		pf_filter_error(&run->f, recno, "bad position: %s", err);
		return -1;
	}
	run->chain_used = 1;

	pf_extbuf_reset(&run->eb);
	run->tail = nrepl == 0 && !joined;
	if (nrepl == 0 && joined) {
		if (pf_extbuf_append_raw(&run->eb, rec->ext, rec->ext_len) < 0)
			goto nomem;
	} else if (nrepl > 0) {
		pf_ext_iter_init(&it, rec);
		while (pf_ext_next(&it, &x) == 1)
			if (!replaced(o, &x) &&
			    pf_extbuf_append_raw(&run->eb, x.data -
			    PF_EXT_HEADER_SIZE, PF_EXT_HEADER_SIZE + x.len) < 0)
				goto nomem;
	}
	kept = run->eb.len;

	/* Policy. */
	if (o->pp.method != 0) {
		if (have_table) {
			if (!table_well_formed(&table)) {
				pf_filter_error(&run->f, recno,
				    "per-move scores: malformed extension");
				return -1;
			}
			/* Room for the largest policy, then cut to size. */
			if ((p = pf_extbuf_add(&run->eb, PF_EXT_POLICY,
			    PF_POLICY_PAYLOAD_MAX)) == NULL)
				goto nomem;
			run->eb.len -= PF_EXT_HEADER_SIZE +
			    PF_POLICY_PAYLOAD_MAX;
			plen = NO_RANGE;
			if (o->depth_lo > 0 &&
			    (plen = depth_policy(run, recno, p)) == -1)
				return -1;
			if (plen == NO_RANGE && (plen =
			    pf_target_policy_payload(run->target,
			    &run->chain.b, table.data, table.len, p)) < 0) {
				pf_filter_error(&run->f, recno, "%s",
				    pf_target_error(run->target));
				return -1;
			}
			if (plen > 0) {
				pf_put32(p - PF_EXT_HEADER_SIZE + 4,
				    (uint32_t)plen);
				run->eb.len += PF_EXT_HEADER_SIZE +
				    (size_t)plen;
			}
		} else if (o->require) {
			pf_move moves[PF_MAX_MOVES];

			if (pf_gen_legal(&run->chain.b, moves) > 0) {
				pf_filter_error(&run->f, recno, "no per-move scores "
				    "(--require)");
				return -1;
			}
		}
	}

	/* Values from the evaluation. */
	for (i = 0; i < o->nvalues; i++) {
		int m = o->values[i];
		double q, s;

		if (m == VM_LINEAR) {	/* added in its place later */
			run->linear_at = run->eb.len;
			continue;
		}
		if (!have_eval) {
			if (o->require) {
				pf_filter_error(&run->f, recno, "no %s to make a %s "
				    "value from (--require)", o->repaired ?
				    "repaired value (repair-mark --mode panda)" :
				    "evaluation", vm_names[m]);
				return -1;
			}
			continue;
		}
		if (o->lambda < 1) {
			r = pf_result_stm(rec->result, packed_stm(rec));
			if (r < 0) {
				if (o->require) {
					pf_filter_error(&run->f, recno, "unknown game "
					    "result for --lambda (--require)");
					return -1;
				}
				continue;
			}
		}
		cp = pf_score_cp(best.score_kind, best.score);
		switch (m) {
		case VM_TANH:
			q = pf_value_tanh(cp, o->spread);
			if (o->lambda < 1)
				q = pf_value_blend(q, 0, r, o->lambda);
			rv = add_value(run, PF_VALUE_TANH, 0, o->spread, 0,
			    o->lambda, q);
			break;
		case VM_LOGISTIC:
			q = pf_value_logistic(cp, o->alpha);
			if (o->lambda < 1)
				q = pf_value_blend(q, 0, r, o->lambda);
			rv = add_value(run, PF_VALUE_LOGISTIC, 0, o->alpha, 0,
			    o->lambda, q);
			break;
		default:
			if (best.flags & PF_EVF_WDL) {
				s = pf_value_wdl_engine(best.wdl[0],
				    best.wdl[1], best.wdl[2]);
				if (o->lambda < 1)
					s = pf_value_blend(s, 1, r, o->lambda);
				rv = add_value(run, PF_VALUE_WDL_ENGINE, 1, 0,
				    0, o->lambda, s);
			} else {
				s = pf_value_wdl(cp, o->wdl_a, o->wdl_b);
				if (o->lambda < 1)
					s = pf_value_blend(s, 1, r, o->lambda);
				rv = add_value(run, PF_VALUE_WDL, 1, o->wdl_a,
				    o->wdl_b, o->lambda, s);
			}
			break;
		}
		if (rv < 0)
			goto nomem;
	}
	run->made = run->eb.len > kept;
	return 0;
nomem:
	pf_filter_error(&run->f, recno, "out of memory");
	return -1;
}

/* ---- games, for the linear reward ------------------------------------- */

static int
want_linear(const struct opts *o)
{
	int i;

	for (i = 0; i < o->nvalues; i++)
		if (o->values[i] == VM_LINEAR)
			return 1;
	return 0;
}

/* Why a held game gets no linear reward. */
enum { GAME_COMPLETE, GAME_UNFINISHED, GAME_TRUNCATED, GAME_TOO_LONG };

/*
 * Write the held game.  GAME_COMPLETE: its last record has ply plies and
 * each record gets its linear reward; otherwise the game's length is not
 * known (it ended without its last position, or was cut short where its
 * move text went bad) or it was too long to hold, so no record can.
 */
static void
flush_game(struct run *run, int how, int plies)
{
	struct game *g = &run->game;
	struct held *h;
	size_t i;
	double r;

	if (g->n == 0)
		return;
	if (how == GAME_UNFINISHED && run->o->require)
		pf_filter_error(&run->f, g->recs[g->n - 1].recno,
		    "game %016" PRIx64 " ends without its last position: no "
		    "linear reward (--require)", g->id);
	if (how == GAME_TRUNCATED && run->o->require)
		pf_filter_error(&run->f, g->recs[g->n - 1].recno,
		    "game %016" PRIx64 " was cut short (truncated): no linear "
		    "reward (--require)", g->id);
	for (i = 0; i < g->n; i++) {
		h = &g->recs[i];
		/* the reward among the values, in the order asked */
		pf_extbuf_reset(&run->eb);
		if (pf_extbuf_append_raw(&run->eb, g->bytes + h->off,
		    h->linear_at) < 0) {
			pf_filter_error(&run->f, h->recno, "out of memory");
			continue;
		}
		if (h->ok && how == GAME_COMPLETE) {
			r = pf_result_stm(h->rec.result, packed_stm(&h->rec));
			if (r >= 0) {
				if (add_value(run, PF_VALUE_LINEAR, 0, plies,
				    0, 0, pf_value_linear(h->rec.ply, plies,
				    r)) < 0)
					pf_filter_error(&run->f, h->recno,
					    "out of memory");
				else
					h->made = 1;
			} else if (run->o->require)
				pf_filter_error(&run->f, h->recno, "unknown game "
				    "result: no linear reward (--require)");
		}
		if (pf_extbuf_append_raw(&run->eb, g->bytes + h->off +
		    h->linear_at, h->len - h->linear_at) < 0) {
			pf_filter_error(&run->f, h->recno, "out of memory");
			continue;
		}
		h->rec.ext = run->eb.data;
		h->rec.ext_len = (uint32_t)run->eb.len;
		run->targeted += h->made;
		pf_filter_put(&run->f, &h->rec);
	}
	g->n = 0;
	g->blen = 0;
}

static int
hold(struct run *run, const pf_record *rec, const uint8_t *ext, size_t len,
    uint64_t recno, int ok)
{
	struct game *g = &run->game;
	struct held *h;
	void *p;
	size_t cap;

	if (g->n == g->cap) {
		cap = g->cap ? 2 * g->cap : 256;
		if ((p = realloc(g->recs, cap * sizeof(*g->recs))) == NULL)
			return -1;
		g->recs = p;
		g->cap = cap;
	}
	if (g->blen + len > g->bcap) {
		cap = g->bcap ? g->bcap : 1 << 16;
		while (cap < g->blen + len)
			cap *= 2;
		if ((p = realloc(g->bytes, cap)) == NULL)
			return -1;
		g->bytes = p;
		g->bcap = cap;
	}
	h = &g->recs[g->n++];
	h->rec = *rec;
	h->rec.ext = NULL;
	h->off = g->blen;
	h->len = len;
	h->linear_at = ok ? run->linear_at : len;
	h->made = ok && run->made;
	h->recno = recno;
	h->ok = ok;
	if (len > 0)
		memcpy(g->bytes + g->blen, ext, len);
	g->blen += len;
	return 0;
}

/* Build the targets and write the record now. */
static void
emit(struct run *run, const pf_record *rec, uint64_t recno)
{
	pf_record out = *rec;

	if (build(run, rec, recno, 0) < 0) {
		pf_filter_put(&run->f, rec);
		return;
	}
	run->targeted += run->made;
	if (run->tail) {
		pf_filter_put_tail(&run->f, rec, run->eb.data, run->eb.len);
		return;
	}
	out.ext = run->eb.data;
	out.ext_len = (uint32_t)run->eb.len;
	pf_filter_put(&run->f, &out);
}

static void
process(struct run *run, const pf_record *rec, uint64_t recno)
{
	struct game *g = &run->game;
	const uint8_t *ext = rec->ext;
	size_t len = rec->ext_len;
	int ok;

	if (!want_linear(run->o)) {
		emit(run, rec, recno);
		return;
	}
	/* A game too long to hold: its remaining records go straight on. */
	if (g->overflow && rec->game_id == g->overflow_id &&
	    rec->ply > g->overflow_ply) {
		g->overflow_ply = rec->ply;
		emit(run, rec, recno);
		return;
	}
	g->overflow = 0;
	if (g->n > 0 && (rec->game_id != g->id || rec->ply <= g->last_ply))
		flush_game(run, GAME_UNFINISHED, 0);
	if (g->n >= (size_t)run->o->max_game_plies) {
		pf_filter_error(&run->f, recno, "game %016" PRIx64 " has more "
		    "than %d positions (--max-game-plies): no linear reward",
		    rec->game_id, run->o->max_game_plies);
		flush_game(run, GAME_TOO_LONG, 0);
		g->overflow = 1;
		g->overflow_id = rec->game_id;
		g->overflow_ply = rec->ply;
		emit(run, rec, recno);
		return;
	}
	if ((ok = build(run, rec, recno, 1) == 0)) {
		ext = run->eb.data;
		len = run->eb.len;
	}
	if (hold(run, rec, ext, len, recno, ok) < 0) {
		pf_filter_error(&run->f, recno, "out of memory");
		flush_game(run, GAME_TOO_LONG, 0);
		pf_filter_put(&run->f, rec);
		return;
	}
	g->id = rec->game_id;
	g->last_ply = rec->ply;
	if (rec->flags & PF_RF_LAST)
		flush_game(run, rec->flags & PF_RF_TRUNCATED ? GAME_TRUNCATED :
		    GAME_COMPLETE, rec->ply);
}

/* The shared loop's callback. */
static void
record(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	(void)f;
	((struct run *)ctx)->records++;
	process(ctx, rec, recno);
}

static void
run_file(struct run *run, const char *path)
{
	pf_filter_file(&run->f, path, record, run);
	/* A game cut by the end of this input cannot get its reward. */
	flush_game(run, GAME_UNFINISHED, 0);
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct run run;
	int i, rv;

	pf_prog_init(argv);
	if ((rv = parse_options(argc, argv, &o, &i)) != 0)
		return rv < 0 ? PF_EXIT_OK : rv;
	argc -= i;
	argv += i;

	memset(&run, 0, sizeof(run));
	run.o = &o;
	if (pf_filter_open(&run.f, o.out.output, o.out.force,
	    o.out.zstd) == 0) {
		if ((run.target = pf_target_new(&o.pp)) == NULL) {
			pf_warn("out of memory");
			run.f.status = PF_EXIT_DATA;
			run.f.stop = 1;
		}
		if (argc == 0 && !run.f.stop)
			run_file(&run, "-");
		for (i = 0; i < argc && !run.f.stop; i++)
			run_file(&run, argv[i]);
	}
	/* A pipeline that asked for nothing it can make, said once. */
	if (run.records > 0 && run.targeted == 0 &&
	    pf_filter_complete(&run.f))
		pf_warnx("%" PRIu64 " records, none given a target: a policy "
		    "needs per-move scores (uci-eval --multipv), a value target "
		    "--value and an evaluation; the records pass through, "
		    "less any old target of these methods", run.records);
	if (run.single > 0)
		pf_warnx("--policy-depths %d-%d: %" PRIu64 " of %" PRIu64
		    " records lacked a complete per-move table of some depth "
		    "in the range: their policy is the final table's alone",
		    o.depth_lo, o.depth_hi, run.single,
		    run.single + run.averaged);
	pf_target_free(run.target);
	pf_extbuf_free(&run.eb);
	free(run.game.recs);
	free(run.game.bytes);
	return pf_filter_close(&run.f);
}
