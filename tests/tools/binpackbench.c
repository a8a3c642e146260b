/*
 * binpackbench - time the binpack codec in-process (for a later
 * scripts/bench-binpack).
 *
 * usage: binpackbench [-n entries] [-k] file.binpack [dir]
 *
 * Reads the entries of file.binpack into memory, writes them over and
 * over (in file order, so chains stay as long as the file's) until n
 * entries (default 5000000) are written to a binpack in dir (default
 * /tmp), then reads that file back (the best of three reads, so the page
 * cache is warm).  Prints entries/s of both steps, bytes per entry of the
 * input and of the output, and the ratios to the goals of issue 13
 * (import 5 million entries/s, export 3 million on one core).  The file
 * is removed unless -k.  Nothing here is a test: it prints what it
 * measured.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binpack.h"

#define READ_GOAL	5e6
#define WRITE_GOAL	3e6

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
usage(void)
{
	fprintf(stderr, "usage: binpackbench [-n entries] [-k] file.binpack "
	    "[dir]\n");
	exit(2);
}

/* Read every entry of path: the count, or -1 (reported). */
static long
read_file(const char *path, pf_sfentry **out, long cap)
{
	pf_binpack_reader *r;
	pf_sfentry e;
	long n = 0;
	int fd, rc;

	if ((fd = open(path, O_RDONLY)) == -1) {
		perror(path);
		return -1;
	}
	if ((r = pf_binpack_reader_open(fd, path)) == NULL) {
		perror("binpackbench");
		close(fd);
		return -1;
	}
	while ((rc = pf_binpack_read(r, &e)) != 0) {
		if (rc == -1) {
			fprintf(stderr, "binpackbench: %s\n",
			    pf_binpack_reader_error(r));
			n = -1;
			break;
		}
		if (out != NULL) {
			if (n == cap) {
				cap = cap ? 2 * cap : 65536;
				if ((*out = realloc(*out, (size_t)cap *
				    sizeof(**out))) == NULL) {
					perror("binpackbench");
					n = -1;
					break;
				}
			}
			(*out)[n] = e;
		}
		n++;
	}
	pf_binpack_reader_free(r);
	close(fd);
	return n;
}

int
main(int argc, char *argv[])
{
	pf_binpack_writer *w;
	pf_sfentry *e = NULL;
	const char *dir = "/tmp";
	char path[1024];
	long n = 5000000, have, i, got;
	double t, tw, tr = 0;
	struct stat in_st, out_st;
	int ch, keep = 0, fd, k, rc = 1;

	while ((ch = getopt(argc, argv, "kn:")) != -1) {
		switch (ch) {
		case 'k':
			keep = 1;
			break;
		case 'n':
			if ((n = strtol(optarg, NULL, 10)) <= 0)
				usage();
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2)
		usage();
	if (argc == 2)
		dir = argv[1];
	if ((have = read_file(argv[0], &e, 0)) <= 0 ||
	    stat(argv[0], &in_st) == -1) {
		if (have == 0)
			fprintf(stderr, "binpackbench: %s: no entries\n",
			    argv[0]);
		free(e);
		return 1;
	}
	printf("input %s: %ld entries, %lld bytes, %.3f bytes/entry\n",
	    argv[0], have, (long long)in_st.st_size,
	    (double)in_st.st_size / (double)have);

	snprintf(path, sizeof(path), "%s/binpackbench.%ld.binpack", dir,
	    (long)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1) {
		perror(path);
		free(e);
		return 1;
	}
	if ((w = pf_binpack_writer_open(fd, path)) == NULL) {
		perror("binpackbench");
		goto out;
	}
	t = now();
	for (i = 0; i < n; i++)
		if (pf_binpack_write(w, &e[i % have]) == -1)
			break;
	if (i < n || pf_binpack_writer_close(w) == -1) {
		fprintf(stderr, "binpackbench: %s\n",
		    pf_binpack_writer_error(w));
		pf_binpack_writer_free(w);
		close(fd);
		goto out;
	}
	tw = now() - t;
	pf_binpack_writer_free(w);
	close(fd);
	if (stat(path, &out_st) == -1) {
		perror(path);
		goto out;
	}
	printf("write: %ld entries in %.3f s: %.2f M entries/s, "
	    "%.3f bytes/entry (%.2f x the %.0f M/s goal)\n", n, tw,
	    (double)n / tw / 1e6, (double)out_st.st_size / (double)n,
	    (double)n / tw / WRITE_GOAL, WRITE_GOAL / 1e6);

	for (k = 0; k < 3; k++) {
		t = now();
		got = read_file(path, NULL, 0);
		t = now() - t;
		if (got != n) {
			fprintf(stderr, "binpackbench: %s: %ld entries read, "
			    "%ld written\n", path, got, n);
			goto out;
		}
		if (k == 0 || t < tr)
			tr = t;
	}
	printf("read: %ld entries in %.3f s: %.2f M entries/s (%.2f x the "
	    "%.0f M/s goal)\n", n, tr, (double)n / tr / 1e6,
	    (double)n / tr / READ_GOAL, READ_GOAL / 1e6);
	rc = 0;
out:
	if (keep)
		printf("# kept %s\n", path);
	else
		unlink(path);
	free(e);
	return rc;
}
