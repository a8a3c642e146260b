/*
 * posfilter - choose positions: an expression over documented record
 * fields (lib/field.h) and the sampling rules trainers use, each drawn per
 * record from the seed, the game id and the ply so that a rerun, another
 * order or another chunking keeps the same records.  A pure filter: the
 * records it keeps are written unchanged, in input order.
 *
 * Rules, in this order (a record must pass each to be kept):
 *   expression     true (known and not 0)
 *   --early-skip N ply > N (nnue-pytorch's early_fen_skipping)
 *   --piece-curve  kept with the file's rate for its piece count
 *   --wdl-skip     kept with probability P(result | eval) under
 *                  nnue-pytorch's win-rate model (its wld_filtered)
 *   --keep P       kept with probability P
 *   --keep-games P kept with its game, each game with probability P
 * --invert keeps exactly the records the rules drop, so that a run with
 * and without it splits the input in two (say, training and validation).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posflow.h"
#include "evalsel.h"
#include "field.h"
#include "filter.h"

#include <xxhash.h>

enum { R_EXPR, R_EARLY, R_CURVE, R_WDL, R_KEEP, R_GAMES, NRULES };
static const char *const rule_names[NRULES] = { "expression",
    "early-skip", "piece-curve", "wdl-skip", "keep", "keep-games" };

#define MAX_PIECES	32
#define MAX_OCCUPIED	64	/* a damaged occupancy's popcount */

struct opts {
	const char *expr;
	int early;		/* -1: off */
	const char *curve;
	int wdl;
	pf_evalsel eval;
	double keep;		/* <0: off */
	double keep_games;	/* <0: off */
	uint64_t seed;
	int invert, count;
	pf_filter_opts out;
};

struct run {
	const struct opts *o;
	pf_expr *expr;
	/* --piece-curve, by the occupancy's popcount: above 32 (a damaged
	   record) a count no file names, kept */
	double rate[MAX_OCCUPIED + 1];
	uint64_t records, kept, damaged, unjudged;
	uint64_t offered[NRULES], passed[NRULES];
};

static const char synopsis[] =
    "usage: posfilter [-fhVz] [--count] [--early-skip n] [--eval sel] "
    "[--invert] [--keep p]\n"
    "                 [--keep-games p] [--piece-curve file] [--seed n] "
    "[--wdl-skip] [-o file]\n"
    "                 [-e expression | expression] [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_COUNT = 256, O_EARLY, O_EVAL, O_INVERT, O_KEEP, O_GAMES,
	    O_CURVE, O_SEED, O_WDL };
	static const struct option longopts[] = {
		{ "count", no_argument, NULL, O_COUNT },
		{ "early-skip", required_argument, NULL, O_EARLY },
		{ "eval", required_argument, NULL, O_EVAL },
		{ "invert", no_argument, NULL, O_INVERT },
		{ "keep", required_argument, NULL, O_KEEP },
		{ "keep-games", required_argument, NULL, O_GAMES },
		{ "piece-curve", required_argument, NULL, O_CURVE },
		{ "seed", required_argument, NULL, O_SEED },
		{ "wdl-skip", no_argument, NULL, O_WDL },
		{ "expression", required_argument, NULL, 'e' },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr, *what;
	char err[256];
	int ch;

	memset(o, 0, sizeof(*o));
	o->early = -1;
	o->keep = o->keep_games = -1;
	o->eval.kind = PF_EVALSEL_DEEPEST;
	while ((ch = pf_filter_getopt(argc, argv, "e:" PF_FILTER_SHORTOPTS,
	    longopts, NULL, &o->out, synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		errstr = what = NULL;
		switch (ch) {
		case 'e':
			o->expr = optarg;
			break;
		case O_COUNT:
			o->count = 1;
			break;
		case O_EARLY:
			o->early = (int)pf_strtonum(optarg, 0, 65535, &errstr);
			what = "--early-skip";
			break;
		case O_EVAL:
			if (pf_evalsel_parse(optarg, &o->eval, err,
			    sizeof(err)) == -1) {
				pf_warnx("--eval %s: %s", optarg, err);
				usage();
				return 2;
			}
			break;
		case O_INVERT:
			o->invert = 1;
			break;
		case O_KEEP:
			o->keep = pf_strtod(optarg, 0, 1, &errstr);
			what = "--keep";
			break;
		case O_GAMES:
			o->keep_games = pf_strtod(optarg, 0, 1, &errstr);
			what = "--keep-games";
			break;
		case O_CURVE:
			o->curve = optarg;
			break;
		case O_SEED:
			o->seed = (uint64_t)pf_strtonum(optarg, 0, LLONG_MAX,
			    &errstr);
			what = "--seed";
			break;
		case O_WDL:
			o->wdl = 1;
			break;
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
	if (o->count && (o->out.output != NULL || o->out.zstd)) {
		pf_warnx("--count writes no records: -o and -z are not for it");
		usage();
		return 2;
	}
	return -1;
}

/*
 * The piece curve: lines "PIECES RATE" or "FROM-TO RATE" (piece counts
 * 2..32, kings included; rate in [0, 1]); '#' starts a comment.  Counts
 * the file does not name keep every record.  0, or -1 after a message.
 */
static int
read_curve(const char *path, double *rate)
{
	char line[256], *p, *tok[3], *save;
	const char *errstr;
	FILE *fp;
	int lineno = 0, n, lo, hi, rv = 0, given[MAX_PIECES + 1] = { 0 };
	double r;

	for (int i = 0; i <= MAX_OCCUPIED; i++)
		rate[i] = 1;
	if ((fp = fopen(path, "r")) == NULL) {
		pf_warn("--piece-curve %s", path);
		return -1;
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		if ((p = strchr(line, '#')) != NULL)
			*p = '\0';
		n = 0;
		for (p = strtok_r(line, " \t\r\n", &save); p != NULL && n < 3;
		    p = strtok_r(NULL, " \t\r\n", &save))
			tok[n++] = p;
		if (n == 0)
			continue;
		if (n != 2) {
			pf_warnx("--piece-curve %s: line %d: expected "
			    "\"PIECES RATE\"", path, lineno);
			rv = -1;
			break;
		}
		if ((p = strchr(tok[0], '-')) != NULL)
			*p++ = '\0';
		lo = (int)pf_strtonum(tok[0], 2, MAX_PIECES, &errstr);
		hi = errstr == NULL && p != NULL ?
		    (int)pf_strtonum(p, 2, MAX_PIECES, &errstr) : lo;
		if (errstr != NULL || hi < lo) {
			pf_warnx("--piece-curve %s: line %d: piece count %s "
			    "(2 to 32)", path, lineno,
			    errstr != NULL ? errstr : "range reversed");
			rv = -1;
			break;
		}
		r = pf_strtod(tok[1], 0, 1, &errstr);
		if (errstr != NULL) {
			pf_warnx("--piece-curve %s: line %d: rate %s: %s "
			    "(0 to 1)", path, lineno, tok[1], errstr);
			rv = -1;
			break;
		}
		for (int i = lo; i <= hi; i++) {
			if (given[i]) {
				pf_warnx("--piece-curve %s: line %d: %d pieces "
				    "given on line %d too", path, lineno, i,
				    given[i]);
				rv = -1;
				break;
			}
			given[i] = lineno;
			rate[i] = r;
		}
		if (rv == -1)
			break;
	}
	if (rv == 0 && ferror(fp)) {
		pf_warn("--piece-curve %s", path);
		rv = -1;
	}
	fclose(fp);
	return rv;
}

/* Offer rec to rule k: 1 when it passes. */
static int
pass(struct run *R, int k, int ok)
{
	R->offered[k]++;
	R->passed[k] += ok != 0;
	return ok != 0;
}

static int
draw(const struct run *R, const pf_record *rec, int k, double p)
{
	return pf_rec_uniform(R->o->seed, rec->game_id, rec->ply,
	    (uint32_t)k) < p;
}

/* --keep-games: drawn from the seed and the game id alone (a record of
   no game by its position less its clocks, as shard places it), so a
   game is kept or dropped whole. */
static int
draw_game(const struct run *R, const pf_record *rec, double p)
{
	uint64_t g = rec->game_id;

	if (g == 0)
		g = XXH3_64bits(rec->pos, PF_POS_KEY_SIZE);
	return pf_rec_uniform(R->o->seed, g, 0, R_GAMES) < p;
}

/* The WDL rule: 1 keep, 0 skip; records it cannot judge are kept. */
static int
wdl_keep(struct run *R, pf_filter *f, const pf_record *rec, uint64_t recno)
{
	pf_eval v;
	int stm = rec->pos[24] >> 7, res, r;

	if (rec->result == PF_RESULT_UNKNOWN) {
		R->unjudged++;
		return 1;
	}
	if ((r = pf_evalsel_find(&R->o->eval, rec, &v)) != 1) {
		if (r == -1)
			pf_filter_error(f, recno, "malformed evaluation; "
			    "not judged by --wdl-skip");
		R->unjudged++;
		return 1;
	}
	res = rec->result == PF_RESULT_DRAW ? 0 :
	    (rec->result == PF_RESULT_WHITE) == (stm == PF_WHITE) ? 1 : -1;
	return draw(R, rec, R_WDL, pf_wdl_result_prob(pf_score_cp(
	    v.score_kind, v.score), rec->ply, res, NULL, NULL, NULL));
}

static void
record(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;
	const struct opts *o = R->o;
	char err[256];
	double v;
	int keep = 1;

	R->records++;
	if (R->expr != NULL) {
		if (pf_expr_eval(R->expr, rec, &v, err, sizeof(err)) == -1) {
			pf_filter_error(f, recno, "%s; dropped", err);
			R->damaged++;
			return;
		}
		keep = pass(R, R_EXPR, pf_expr_true(v));
	}
	if (keep && o->early >= 0)
		keep = pass(R, R_EARLY, rec->ply > o->early);
	if (keep && o->curve != NULL)
		keep = pass(R, R_CURVE, draw(R, rec, R_CURVE,
		    R->rate[pf_popcount_swar(pf_get64(rec->pos))]));
	if (keep && o->wdl)
		keep = pass(R, R_WDL, wdl_keep(R, f, rec, recno));
	if (keep && o->keep >= 0)
		keep = pass(R, R_KEEP, draw(R, rec, R_KEEP, o->keep));
	if (keep && o->keep_games >= 0)
		keep = pass(R, R_GAMES, draw_game(R, rec, o->keep_games));
	if (keep == o->invert)
		return;
	R->kept++;
	if (!o->count)
		pf_filter_put(f, rec);
}

static void
summary(const struct run *R)
{
	char buf[1024] = "";
	size_t n = 0;

	for (int k = 0; k < NRULES; k++)
		if (R->offered[k] > 0 || (k == R_EXPR && R->expr != NULL))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			    "%s %s %" PRIu64 "/%" PRIu64, n ? "," : ";",
			    rule_names[k], R->passed[k], R->offered[k]);
	pf_warnx("%" PRIu64 " records, %" PRIu64 " kept%s%s",
	    R->records, R->kept, R->o->invert ? " (inverted)" : "", buf);
	if (R->damaged)
		pf_warnx("%" PRIu64 " dropped as damaged", R->damaged);
	if (R->unjudged)
		pf_warnx("%" PRIu64 " not judged by --wdl-skip (no "
		    "evaluation or result)", R->unjudged);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	pf_filter f;
	char err[256];
	int r, i, col;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	if (o.expr == NULL && argc > 0) {
		o.expr = argv[0];
		argc--;
		argv++;
		pf_set_inputs(argc, (const char *const *)argv);	/* files */
	}
	memset(&R, 0, sizeof(R));
	R.o = &o;
	if (o.expr != NULL && *o.expr != '\0' &&
	    (R.expr = pf_expr_compile(o.expr, &col, err, sizeof(err))) ==
	    NULL) {
		pf_warnx("expression: column %d: %s", col, err);
		fprintf(stderr, "  %s\n  %*s^\n", o.expr, col > 0 ? col - 1 :
		    0, "");
		if (access(o.expr, F_OK) == 0 || strcmp(o.expr, "-") == 0)
			pf_warnx("%s is an input: the first operand is the "
			    "expression ('' keeps every record; or use -e)",
			    o.expr);
		return col > 0 ? PF_EXIT_USAGE : PF_EXIT_DATA;
	}
	pf_add_input(o.curve);
	if (o.curve != NULL && read_curve(o.curve, R.rate) == -1) {
		pf_expr_free(R.expr);
		return PF_EXIT_USAGE;
	}
	if (o.count)
		pf_filter_init(&f);
	if (o.count || pf_filter_open(&f, o.out.output, o.out.force,
	    o.out.zstd) == 0) {
		for (i = 0; (i == 0 || i < argc) && !f.stop; i++)
			pf_filter_file(&f, argc ? argv[i] : "-", record, &R);
		if (o.count && (printf("%" PRIu64 "\n", R.kept) < 0 ||
		    fflush(stdout) == EOF) && errno != EPIPE) {
			pf_warn("stdout");
			f.status = PF_EXIT_DATA;
		}
		if (pf_filter_complete(&f))
			summary(&R);
	}
	pf_expr_free(R.expr);
	return pf_filter_close(&f);
}
