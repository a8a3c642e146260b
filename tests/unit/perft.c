/*
 * perft.c - the perft checker: counts the leaf nodes of the legal move
 * tree of every position in a perft file and compares them with the known
 * counts.  Perft is the ground truth for move generation: one missing or
 * extra move anywhere in the tree changes the count.
 *
 * Two public file forms are read, mixed freely:
 *   (a) "epd FEN" lines, each followed by "perft D N" lines (python-chess,
 *       Stockfish's chess960 list); "id ..." lines are ignored;
 *   (b) EPD lines "FEN ;D1 N ;D2 N ..." (the chessprogramming suites).
 * Blank lines and lines starting with '#' are ignored.
 *
 * perft [-d maxdepth] [--tap | --nps] file ...
 * perft [-d depth] [--divide] --fen FEN
 *
 * Every mismatch is printed; the exit status is 1 if there was one (or a
 * file or FEN could not be read), 0 otherwise, 2 for a usage error.
 * --tap prints one TAP line per count checked (tests/run-all counts them).
 * --nps runs only the deepest count of each position that -d allows and
 * prints nodes, seconds and nodes per second, then the totals; it is the
 * benchmark mode used by scripts/bench-perft.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chess.h"

#define MAX_DEPTHS 16

struct opts {
	int	 maxdepth;
	int	 tap;
	int	 nps;
	int	 divide;
	const char *fen;
};

struct state {
	int	 n;		/* TAP test number */
	int	 failed;
	uint64_t total_nodes;
	double	 total_secs;
};

static void
usage(void)
{
	fprintf(stderr, "usage: perft [-d maxdepth] [--tap | --nps] "
	    "file ...\n"
	    "       perft [-d depth] [--divide] --fen FEN\n");
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Check (or time) one position against its known counts. */
static void
check_position(const struct opts *o, struct state *st, const char *where,
    const char *fen, const uint64_t *expect, const int *have, int ndepths)
{
	pf_board b;
	char err[128];
	uint64_t nodes;
	double t0, secs;
	int d, deepest = 0;

	if (pf_board_from_fen(&b, fen, err, sizeof(err)) == -1) {
		st->failed++;
		if (o->tap)
			printf("not ok %d - %s: bad FEN \"%s\": %s\n", ++st->n,
			    where, fen, err);
		else
			printf("%s: bad FEN \"%s\": %s\n", where, fen, err);
		return;
	}
	for (d = 1; d <= ndepths && d <= o->maxdepth; d++)
		if (have[d])
			deepest = d;
	for (d = 1; d <= deepest; d++) {
		if (!have[d] || (o->nps && d != deepest))
			continue;
		t0 = now();
		nodes = pf_perft(&b, d);
		secs = now() - t0;
		if (o->nps) {
			st->total_nodes += nodes;
			st->total_secs += secs;
			printf("%s\tdepth %d\tnodes %llu\tseconds %.3f\t"
			    "nps %.0f\n", fen, d, (unsigned long long)nodes,
			    secs, secs > 0 ? (double)nodes / secs : 0.0);
		}
		if (nodes != expect[d]) {
			st->failed++;
			if (o->tap)
				printf("not ok %d - ", ++st->n);
			printf("%s: %s depth %d nodes %llu, expected %llu\n",
			    where, fen, d, (unsigned long long)nodes,
			    (unsigned long long)expect[d]);
		} else if (o->tap)
			printf("ok %d - %s depth %d nodes %llu\n", ++st->n,
			    fen, d, (unsigned long long)nodes);
	}
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' ||
	    e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* Parse "D N" (after "perft" or "D"); 0 or -1. */
static int
parse_count(const char *s, int *depth, uint64_t *nodes)
{
	char *end;
	long d;
	unsigned long long n;

	errno = 0;
	d = strtol(s, &end, 10);
	if (end == s || d < 1 || d >= MAX_DEPTHS)
		return -1;
	s = end;
	n = strtoull(s, &end, 10);
	if (end == s || errno)
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end != '\0')
		return -1;
	*depth = (int)d;
	*nodes = n;
	return 0;
}

static int
run_file(const struct opts *o, struct state *st, const char *path)
{
	FILE *fp;
	char line[1024], fen[1024] = "", where[1200], fenwhere[1200] = "";
	uint64_t expect[MAX_DEPTHS];
	int have[MAX_DEPTHS], lineno = 0, depth, pending = 0;
	uint64_t nodes;

	if ((fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r")) == NULL) {
		fprintf(stderr, "perft: %s: %s\n", path, strerror(errno));
		return -1;
	}
	memset(have, 0, sizeof(have));
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *s = trim(line), *semi;

		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		if (*s == '\0' || *s == '#' || strncmp(s, "id ", 3) == 0 ||
		    strcmp(s, "id") == 0)
			continue;
		if (strncmp(s, "epd ", 4) == 0) {
			if (pending)
				check_position(o, st, fenwhere, fen, expect,
				    have, MAX_DEPTHS - 1);
			snprintf(fen, sizeof(fen), "%s", trim(s + 4));
			snprintf(fenwhere, sizeof(fenwhere), "%s", where);
			memset(have, 0, sizeof(have));
			pending = 1;
		} else if (strncmp(s, "perft ", 6) == 0) {
			if (!pending || parse_count(s + 6, &depth,
			    &nodes) == -1)
				goto bad;
			expect[depth] = nodes;
			have[depth] = 1;
		} else if ((semi = strchr(s, ';')) != NULL) {
			if (pending)
				check_position(o, st, fenwhere, fen, expect,
				    have, MAX_DEPTHS - 1);
			pending = 0;
			memset(have, 0, sizeof(have));
			*semi = '\0';
			snprintf(fen, sizeof(fen), "%s", trim(s));
			for (s = semi + 1; s; s = semi ? semi + 1 : NULL) {
				if ((semi = strchr(s, ';')) != NULL)
					*semi = '\0';
				s = trim(s);
				if (*s == '\0')
					continue;
				if (*s != 'D' || parse_count(s + 1, &depth,
				    &nodes) == -1)
					goto bad;
				expect[depth] = nodes;
				have[depth] = 1;
			}
			check_position(o, st, where, fen, expect, have,
			    MAX_DEPTHS - 1);
		} else
			goto bad;
	}
	if (pending)
		check_position(o, st, fenwhere, fen, expect, have,
		    MAX_DEPTHS - 1);
	if (fp != stdin)
		fclose(fp);
	return 0;
bad:
	st->failed++;
	if (o->tap)
		printf("not ok %d - ", ++st->n);
	printf("%s: cannot read this line\n", where);
	if (fp != stdin)
		fclose(fp);
	return -1;
}

static int
run_fen(const struct opts *o)
{
	pf_board b;
	pf_move moves[PF_MAX_MOVES];
	pf_undo u;
	char err[128], uci[PF_UCI_MAX];
	uint64_t nodes, total = 0;
	int i, n;

	if (pf_board_from_fen(&b, o->fen, err, sizeof(err)) == -1) {
		fprintf(stderr, "perft: bad FEN: %s\n", err);
		return 1;
	}
	if (o->divide && o->maxdepth >= 1) {
		n = pf_gen_legal(&b, moves);
		for (i = 0; i < n; i++) {
			pf_make_move(&b, moves[i], &u);
			nodes = pf_perft(&b, o->maxdepth - 1);
			pf_unmake_move(&b, moves[i], &u);
			printf("%s: %llu\n", pf_move_to_uci(&b, moves[i], uci),
			    (unsigned long long)nodes);
			total += nodes;
		}
		printf("\nNodes searched: %llu\n", (unsigned long long)total);
	} else
		printf("%llu\n", (unsigned long long)pf_perft(&b,
		    o->maxdepth));
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "tap", no_argument, NULL, 't' },
		{ "nps", no_argument, NULL, 'n' },
		{ "divide", no_argument, NULL, 'D' },
		{ "fen", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { 5, 0, 0, 0, NULL };
	struct state st = { 0, 0, 0, 0.0 };
	char *end;
	int ch, i, status = 0;

	while ((ch = getopt_long(argc, argv, "d:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o.maxdepth = (int)strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' ||
			    o.maxdepth < 0 || o.maxdepth > 15) {
				fprintf(stderr, "perft: bad depth '%s'\n",
				    optarg);
				usage();
				return 2;
			}
			break;
		case 't':
			o.tap = 1;
			break;
		case 'n':
			o.nps = 1;
			break;
		case 'D':
			o.divide = 1;
			break;
		case 'F':
			o.fen = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (o.fen != NULL) {
		if (argc != 0) {
			usage();
			return 2;
		}
		return run_fen(&o);
	}
	if (argc == 0 || (o.tap && o.nps)) {
		usage();
		return 2;
	}
	for (i = 0; i < argc; i++)
		if (run_file(&o, &st, argv[i]) == -1)
			status = 1;
	if (o.nps)
		printf("total\tnodes %llu\tseconds %.3f\tnps %.0f\n",
		    (unsigned long long)st.total_nodes, st.total_secs,
		    st.total_secs > 0 ? (double)st.total_nodes /
		    st.total_secs : 0.0);
	if (o.tap)
		printf("1..%d\n", st.n);
	if (st.failed) {
		if (!o.tap)
			printf("perft: %d mismatch%s\n", st.failed,
			    st.failed == 1 ? "" : "es");
		status = 1;
	}
	return status;
}
