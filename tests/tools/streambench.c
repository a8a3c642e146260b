/*
 * streambench - time the record stream in-process (scripts/bench-stream).
 *
 * usage: streambench [-n records] [-k] [dir]
 *
 * Writes n core-only records (default 5000000) to dir (default /tmp) as
 * a plain stream, a zstd level 1 and a zstd level 3 stream, reads each
 * back (the best of three reads, so the page cache is warm), and prints
 * records/s and MB/s (of the decoded stream) for every step, then the
 * ratio of the plain read rate to the 10 million records/s goal.  The
 * files are removed unless -k; their names are printed either way.
 * Nothing here is a test: it prints what it measured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "posflow.h"

#define GOAL	10e6

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
write_file(const char *path, long n, int level, const uint8_t *pos)
{
	pf_writer_opts o = { .zstd_level = level };
	pf_record rec;
	pf_writer *w;
	double t;
	long i;
	FILE *f;

	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	memset(&rec, 0, sizeof(rec));
	memcpy(rec.pos, pos, PF_PACKED_SIZE);
	w = pf_writer_open_fd(fileno(f), path, &o);
	t = now();
	for (i = 0; i < n; i++) {
		rec.game_id = (uint64_t)(i / 80);
		rec.ply = (uint16_t)(i % 80);
		rec.move = (pf_move)(i * 2654435761u);
		rec.pos[26] = (uint8_t)(i % 80 / 2 + 1);
		if (pf_writer_put(w, &rec) == -1)
			break;
	}
	if (pf_writer_close(w) == -1) {
		fprintf(stderr, "streambench: %s\n", pf_writer_error(w));
		exit(1);
	}
	t = now() - t;
	pf_writer_free(w);
	fclose(f);
	return t;
}

/* Read the whole file; returns seconds, sets *bytes (decoded) and
   *sum (a checksum of the fields, so no work is optimised away). */
static double
read_file(const char *path, long n, uint64_t *bytes, uint64_t *sum)
{
	pf_reader *r;
	pf_record rec;
	long got = 0;
	double t;
	int rc;

	if ((r = pf_reader_open_path(path)) == NULL) {
		perror(path);
		exit(1);
	}
	*sum = 0;
	t = now();
	while ((rc = pf_reader_next(r, &rec)) == 1) {
		*sum += rec.game_id + rec.ply + rec.move + rec.pos[26];
		got++;
	}
	t = now() - t;
	if (rc == -1 || got != n) {
		fprintf(stderr, "streambench: %s: %ld of %ld records %s\n",
		    path, got, n, pf_reader_error(r));
		exit(1);
	}
	*bytes = pf_reader_offset(r);
	pf_reader_free(r);
	return t;
}

int
main(int argc, char **argv)
{
	static const int levels[] = { 0, 1, 3 };
	const char *dir = "/tmp";
	uint8_t pos[PF_PACKED_SIZE];
	double plain_read = 0;
	long n = 5000000;
	int c, keep = 0;
	size_t i;
	pf_board b;

	while ((c = getopt(argc, argv, "kn:")) != -1) {
		switch (c) {
		case 'k':
			keep = 1;
			break;
		case 'n':
			n = atol(optarg);
			if (n > 0)
				break;
			/* FALLTHROUGH */
		default:
			fprintf(stderr, "usage: streambench [-n records] [-k] "
			    "[dir]\n");
			return 2;
		}
	}
	if (optind < argc)
		dir = argv[optind];
	pf_board_startpos(&b);
	pf_board_pack(&b, pos);
	printf("%-14s %10s %14s %10s %12s\n", "stream", "step",
	    "records/s", "MB/s", "file bytes");
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		char path[4096], name[32];
		double tw, tr = 1e30, t;
		uint64_t bytes = 0, sum;
		struct stat st;
		int k;

		snprintf(name, sizeof(name), levels[i] ? "zstd -%d" : "plain",
		    levels[i]);
		snprintf(path, sizeof(path), "%s/streambench-%d.pos%s", dir,
		    levels[i], levels[i] ? ".zst" : "");
		tw = write_file(path, n, levels[i], pos);
		for (k = 0; k < 3; k++)
			if ((t = read_file(path, n, &bytes, &sum)) < tr)
				tr = t;
		stat(path, &st);
		printf("%-14s %10s %14.0f %10.1f %12lld\n", name, "write",
		    n / tw, bytes / tw / 1e6, (long long)st.st_size);
		printf("%-14s %10s %14.0f %10.1f %12s\n", name, "read",
		    n / tr, bytes / tr / 1e6, "");
		if (levels[i] == 0)
			plain_read = n / tr;
		if (keep)
			printf("# kept %s\n", path);
		else
			unlink(path);
	}
	printf("plain read: %.1f million records/s, %.2f x the goal of "
	    "%.0f million/s\n", plain_read / 1e6, plain_read / GOAL,
	    GOAL / 1e6);
	return 0;
}
