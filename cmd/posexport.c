/*
 * posexport - a record stream in a trainer's native format: Stockfish's
 * binpack, plain text and bin, bullet's marlinformat, bulletformat and
 * viriformat, lczero-training's V6 chunks and NumPy arrays.  Records a
 * format cannot hold (no evaluation, no move, no policy) are skipped and
 * counted, or with --require reported as errors.
 *
 * The exporters live in lib/export.c (shard --format uses them too);
 * this program chooses the one asked for and runs the filter loop.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posflow.h"
#include "evalsel.h"
#include "export.h"
#include "filter.h"
#include "lc0.h"
#include "loader.h"

struct opts {
	const char *format;
	pf_filter_opts out;	/* -o, -f (no -z: the formats are not
				   posflow streams) */
	const char *eval;
	int require, best_move;
	int lc0_input;		/* lc0: --input-type, PF_LC0_* */
	/* npy */
	unsigned blocks;	/* PF_FEAT_* of features */
	int perspective, opposite, policy_width, pqr, planes, value_method;
	const char *npy_only;	/* the last option given that only npy has */
};

struct run {
	const struct opts *o;
	pf_export *x;
	pf_filter *f;
	uint64_t records, no_eval, no_move, no_policy, invalid, unfit;
};

static const char synopsis[] =
    "usage: posexport [-fhV] -F format [--eval selector] [--move played | "
    "best]\n"
    "                 [--require] [-o file | dir] [--input-type type]\n"
    "                 [--features list] [--opposite]\n"
    "                 [--perspective stm | white] [--planes] "
    "[--policy-width k]\n"
    "                 [--pqr] [--value method] [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

/* The input waits: what is held goes out (posflow(7): a stage passes
   records on as soon as it has them). */
static int
idle(void *arg, int fd)
{
	struct run *R = arg;

	(void)fd;
	if (pf_export_idle(R->x) == -1) {
		if (errno != EPIPE) {
			pf_warnx("%s", pf_export_error(R->x));
			R->f->status = PF_EXIT_DATA;
			R->f->write_failed = 1;
		}
		R->f->stop = 1;
		return -1;
	}
	return 0;
}

static void
put(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;
	const char *what;
	int why;

	R->records++;
	switch (pf_export_put(R->x, rec, &why)) {
	case 1:
		return;
	case -1:
		if (errno != EPIPE) {
			pf_warnx("%s", pf_export_error(R->x));
			f->status = PF_EXIT_DATA;
			f->write_failed = 1;
		}
		f->stop = 1;
		return;
	}
	switch (why) {
	case PF_EXPORT_NO_EVAL:
		R->no_eval++;
		what = "no evaluation";
		break;
	case PF_EXPORT_NO_MOVE:
		R->no_move++;
		what = R->o->best_move ? "no best move" : "no move";
		break;
	case PF_EXPORT_NO_POLICY:
		R->no_policy++;
		what = "no policy target";
		break;
	case PF_EXPORT_UNFIT:
		R->unfit++;
		what = pf_export_error(R->x);
		break;
	default:
		R->invalid++;
		pf_filter_error(f, recno, "%s; skipped",
		    pf_export_error(R->x));
		return;
	}
	if (R->o->require)
		pf_filter_error(f, recno, "%s: -F %s cannot hold it", what,
		    R->o->format);
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
		O_PQR, O_PLANES, O_VALUE, O_MOVE, O_INPUT };
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
		{ "move", required_argument, NULL, O_MOVE },
		{ "input-type", required_argument, NULL, O_INPUT },
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
	while ((ch = pf_filter_getopt(argc, argv, "F:o:fhV", longopts, NULL,
	    &o->out, synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		errstr = what = NULL;
		switch (ch) {
		case O_FEATURES:
		case O_PERSP:
		case O_OPP:
		case O_POLW:
		case O_PQR:
		case O_PLANES:
			for (i = 0; longopts[i].name != NULL; i++)
				if (longopts[i].val == ch)
					o->npy_only = longopts[i].name;
			break;
		}
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
		case O_MOVE:
			if ((o->best_move = pf_export_move_word(optarg)) < 0) {
				errstr = "played or best";
				what = "--move";
			}
			break;
		case O_INPUT:
			if ((o->lc0_input = pf_lc0_input_format(optarg)) ==
			    0) {
				errstr = "classic, frc_castling, canonical, "
				    "canonical_100, canonical_v2, "
				    "canonical_armageddon or "
				    "canonical_v2_armageddon (or 1 to 5, 132, "
				    "133)";
				what = "--input-type";
			}
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
	pf_evalsel sel;
	pf_export_opts xo;
	char err[512];
	unsigned info;
	int r, i, dir;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	memset(&R, 0, sizeof(R));
	R.o = &o;
	if (o.format == NULL || (dir = pf_export_directory(o.format)) ==
	    -1) {
		if (o.format == NULL)
			pf_warnx("-F format is required");
		else
			pf_warnx("-F %s: unknown format", o.format);
		fputs("formats:", stderr);
		for (i = 0; pf_export_formats[i] != NULL; i++)
			fprintf(stderr, " %s", pf_export_formats[i]);
		fputs("\n", stderr);
		usage();
		return PF_EXIT_USAGE;
	}
	if (dir && o.out.output == NULL) {
		pf_warnx("-F %s writes a directory: -o dir is required",
		    o.format);
		usage();
		return PF_EXIT_USAGE;
	}
	info = pf_export_info(o.format);
	if (o.best_move && !(info & PF_EXPORT_OPT_BEST)) {
		pf_warnx("--move best: -F %s holds no move to replace (binpack, "
		    "plain, bin and lc0 do)", o.format);
		usage();
		return PF_EXIT_USAGE;
	}
	if (o.npy_only != NULL && !(info & PF_EXPORT_OPT_NPY)) {
		pf_warnx("--%s is npy's: -F %s has none", o.npy_only,
		    o.format);
		usage();
		return PF_EXIT_USAGE;
	}
	if (o.value_method != 0 && !(info & PF_EXPORT_OPT_VALUE)) {
		pf_warnx("--value is npy's and lc0's: -F %s has none",
		    o.format);
		usage();
		return PF_EXIT_USAGE;
	}
	if (o.lc0_input != 0 && !(info & PF_EXPORT_OPT_LC0INPUT)) {
		pf_warnx("--input-type is lc0's input format: -F %s has none",
		    o.format);
		usage();
		return PF_EXIT_USAGE;
	}
	if (pf_evalsel_parse(o.eval ? o.eval : "deepest", &sel, err,
	    sizeof(err)) == -1) {
		pf_warnx("--eval: %s: %s", o.eval, err);
		usage();
		return PF_EXIT_USAGE;
	}
	if (dir)
		pf_filter_init(&f);
	/* text (plain): a terminal may have it */
	else if (pf_filter_open_raw(&f, o.out.output, o.out.force ||
	    (info & PF_EXPORT_TEXT)) == -1)
		return pf_filter_close(&f);
	memset(&xo, 0, sizeof(xo));
	xo.eval = o.eval;
	xo.value_method = o.value_method;
	xo.best_move = o.best_move;
	xo.lc0_input = o.lc0_input;
	xo.features = o.blocks;
	xo.perspective = o.perspective;
	xo.opposite = o.opposite;
	xo.policy_width = o.policy_width;
	xo.pqr = o.pqr;
	xo.planes = o.planes;
	if ((R.x = pf_export_open(o.format, f.fd, o.out.output, o.out.output ?
	    o.out.output : "stdout", &xo, err, sizeof(err))) == NULL) {
		pf_warnx("%s", err);
		f.status = PF_EXIT_DATA;
		f.write_failed = 1;
		return pf_filter_close(&f);
	}
	R.f = &f;
	f.idle = idle;
	f.idle_arg = &R;
	for (i = 0; (i == 0 || i < argc) && !f.stop; i++)
		pf_filter_file(&f, argc ? argv[i] : "-", put, &R);
	if (!f.stop && pf_export_close(R.x) == -1 && errno != EPIPE) {
		pf_warnx("%s", pf_export_error(R.x));
		f.status = PF_EXIT_DATA;
		f.write_failed = 1;
	}
	if (pf_filter_complete(&f) && !f.write_failed) {
		char drawn[64] = "", unfit[64] = "";

		if (info & PF_EXPORT_DRAWS)
			snprintf(drawn, sizeof(drawn), "; %" PRIu64 " of "
			    "unknown result as draws",
			    pf_export_unknown_results(R.x));
		if (R.unfit > 0)
			snprintf(unfit, sizeof(unfit), ", %" PRIu64 " it "
			    "cannot hold", R.unfit);
		pf_warnx("%" PRIu64 " records: %" PRIu64 " written (%s%s); "
		    "skipped: %" PRIu64 " without an evaluation, %" PRIu64
		    " without a%s move, %" PRIu64 " without a policy, %"
		    PRIu64 " invalid%s", R.records, pf_export_written(R.x),
		    o.format, drawn, R.no_eval, R.no_move, o.best_move ?
		    " best" : "", R.no_policy, R.invalid, unfit);
	}
	pf_export_free(R.x);
	return pf_filter_close(&f);
}
