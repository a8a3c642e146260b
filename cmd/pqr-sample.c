/*
 * pqr-sample - P/Q/R triples (METHODS.md section 6, seed 002): for each
 * record with a played move, Q = the position after it and R = the
 * position after another legal move drawn at random, stored as packed
 * positions in PQR extensions (posflow(5)) with R's move, so that a trainer
 * needs no move generator.  A pure filter: every record is passed on, every
 * other extension through untouched; a rerun replaces its own extensions.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posflow.h"
#include "filter.h"
#include "pqr.h"

struct opts {
	int per_position;
	int min_legal;
	uint64_t seed;
	pf_filter_opts out;	/* -o, -f, -z */
};

struct run {
	const struct opts *o;
	pf_extbuf eb;
	uint64_t records, sampled, triples, no_move, terminal, few, invalid;
};

static const char synopsis[] =
    "usage: pqr-sample [-fhVz] [--min-legal k] [--per-position n] "
    "[--seed n] [-o file]\n"
    "                  [file ...]\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_PER = 256, O_MIN, O_SEED };
	static const struct option longopts[] = {
		{ "per-position", required_argument, NULL, O_PER },
		{ "min-legal", required_argument, NULL, O_MIN },
		{ "seed", required_argument, NULL, O_SEED },
		PF_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *errstr, *what;
	int ch;

	memset(o, 0, sizeof(*o));
	o->per_position = 1;
	o->min_legal = 2;
	while ((ch = pf_filter_getopt(argc, argv, PF_FILTER_SHORTOPTS,
	    longopts, NULL, &o->out, synopsis)) != -1) {
		if (ch == PF_FILTER_EXIT)
			return 0;	/* help or version */
		errstr = what = NULL;
		switch (ch) {
		case O_PER:
			o->per_position = (int)pf_strtonum(optarg, 1, 64,
			    &errstr);
			what = "--per-position";
			break;
		case O_MIN:
			o->min_legal = (int)pf_strtonum(optarg, 2,
			    PF_MAX_MOVES, &errstr);
			what = "--min-legal";
			break;
		case O_SEED:
			o->seed = (uint64_t)pf_strtonum(optarg, 0, LLONG_MAX,
			    &errstr);
			what = "--seed";
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

static void
sample(pf_filter *f, void *ctx, const pf_record *rec, uint64_t recno)
{
	struct run *R = ctx;
	pf_board p, q;
	pf_move moves[PF_MAX_MOVES], r_moves[64];
	pf_undo u;
	pf_pqr x;
	pf_record out = *rec;
	char err[128];
	int n, legal;

	R->records++;
	pf_extbuf_reset(&R->eb);
	if (pf_extbuf_copy_except(&R->eb, rec, PF_EXT_PQR) == -1) {
		pf_filter_error(f, recno, "malformed extension area; passed "
		    "through");
		pf_filter_put(f, rec);
		return;
	}
	if (rec->move == PF_MOVE_NONE) {
		R->no_move++;
		goto put;
	}
	if (pf_board_unpack(&p, rec->pos, (rec->flags & PF_RF_CHESS960) != 0,
	    err, sizeof(err)) == -1) {
		R->invalid++;
		pf_filter_error(f, recno, "invalid position: %s; passed "
		    "through unsampled", err);
		goto put;
	}
	/* One move generation serves the terminal check, --min-legal and
	   the draw. */
	if ((legal = pf_gen_legal(&p, moves)) == 0) {
		R->terminal++;	/* mate or stalemate */
		goto put;
	}
	if (legal < R->o->min_legal) {
		R->few++;
		goto put;
	}
	n = pf_pqr_draw(moves, legal, rec->move, R->o->seed, rec->game_id,
	    rec->ply, R->o->per_position, r_moves);
	if (n == 0) {
		R->invalid++;
		pf_filter_error(f, recno, "the move played is not legal here; "
		    "passed through unsampled");
		goto put;
	}
	memset(&x, 0, sizeof(x));
	q = p;
	pf_make_move(&q, rec->move, &u);
	pf_board_pack(&q, x.q);
	for (int k = 0; k < n; k++) {
		pf_board r = p;

		pf_make_move(&r, r_moves[k], &u);
		pf_board_pack(&r, x.r);
		x.r_move = r_moves[k];
		if (pf_pqr_encode(&x, &R->eb) == -1) {
			pf_warnx("out of memory");
			f->status = PF_EXIT_DATA;
			f->stop = 1;
			return;
		}
	}
	R->sampled++;
	R->triples += (uint64_t)n;
put:
	out.ext = R->eb.data;
	out.ext_len = (uint32_t)R->eb.len;
	pf_filter_put(f, &out);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run R;
	pf_filter f;
	int r, i;

	pf_prog_init(argv);
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	argc -= optind;
	argv += optind;
	memset(&R, 0, sizeof(R));
	R.o = &o;
	if (pf_filter_open(&f, o.out.output, o.out.force, o.out.zstd) == 0) {
		for (i = 0; (i == 0 || i < argc) && !f.stop; i++)
			pf_filter_file(&f, argc ? argv[i] : "-", sample, &R);
		if (pf_filter_complete(&f))
			pf_warnx("%" PRIu64 " records: %" PRIu64 " sampled "
			    "(%" PRIu64 " triples); not sampled: %" PRIu64
			    " without a move, %" PRIu64 " terminal, %" PRIu64
			    " with fewer than %d legal moves, %" PRIu64
			    " invalid", R.records, R.sampled, R.triples,
			    R.no_move, R.terminal, R.few, o.min_legal,
			    R.invalid);
	}
	pf_extbuf_free(&R.eb);
	return pf_filter_close(&f);
}
