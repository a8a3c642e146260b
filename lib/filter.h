/*
 * filter.h - the loop every record filter shares: open the output (binary
 * refused on a terminal unless forced, zstd on -z or a .zst name), read
 * each operand (or standard input) record by record, hand each record to
 * the tool, write what it passes on, report damage as "prog: file: record
 * N: reason" and go on with the next input, and close the output so that a
 * failed run never leaves a file that reads as complete.
 *
 * Like prog.c this module is for cmd/ only: it prints its messages (that
 * is its job) but never exits; the status is in pf_filter.status.
 */
#ifndef PF_FILTER_H
#define PF_FILTER_H

#include <stdint.h>

#include "record.h"

typedef struct pf_filter {
	const char *output;	/* NULL or "-": standard output */
	int fd;
	pf_writer *w;
	const char *name;	/* the input being read, for messages */
	int status;		/* PF_EXIT_OK or PF_EXIT_DATA */
	int stop;		/* output gone: read no further */
	int write_failed;
	/* before a read that would block (pf_reader_set_idle); setting
	   stop and returning -1 ends the input quietly */
	int (*idle)(void *, int);
	void *idle_arg;
} pf_filter;

/*
 * The options every record filter takes: -o file, -f (binary to a
 * terminal), -z (zstd), -h (the synopsis on standard output), -V.  A
 * tool lists PF_FILTER_LONGOPTS in its struct option table (it includes
 * <getopt.h>), adds PF_FILTER_SHORTOPTS to its short options, and reads
 * its options with pf_filter_getopt.
 */
typedef struct pf_filter_opts {
	const char *output;
	int force, zstd;
} pf_filter_opts;

#define PF_FILTER_SHORTOPTS	"o:fzhV"
#define PF_FILTER_LONGOPTS \
	{ "output", required_argument, NULL, 'o' }, \
	{ "force", no_argument, NULL, 'f' }, \
	{ "zstd", no_argument, NULL, 'z' }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }

/*
 * getopt_long(3) that takes the options above into *o and returns only a
 * tool's own (shortopts and longopts list them, as above); after -h
 * (synopsis printed on standard output) or -V (the version), it returns
 * PF_FILTER_EXIT: the tool exits 0.
 */
#define PF_FILTER_EXIT	(-2)

struct option;
int	pf_filter_getopt(int argc, char *const argv[], const char *shortopts,
	    const struct option *longopts, int *longindex, pf_filter_opts *o,
	    const char *synopsis);

/* The tool's work on one record (recno counts from 1 in its input). */
typedef void (*pf_filter_fn)(pf_filter *f, void *ctx, const pf_record *rec,
	    uint64_t recno);

/* Open the output.  0, or -1 after a message (status PF_EXIT_DATA). */
int	pf_filter_open(pf_filter *f, const char *output, int force, int zstd);
/* Open the output as a bare descriptor (f->fd), for a tool that writes
   another format itself: no record writer.  0, or -1 after a message. */
int	pf_filter_open_raw(pf_filter *f, const char *output, int force);
/* No output: the tool writes files of its own (f->fd is -1). */
void	pf_filter_init(pf_filter *f);
/* Every record of path ("-": standard input) to fn, damage reported. */
void	pf_filter_file(pf_filter *f, const char *path, pf_filter_fn fn,
	    void *ctx);
/* Write a record; a closed pipe downstream stops the run quietly. */
void	pf_filter_put(pf_filter *f, const pf_record *rec);
/* The same with tail[0..tail_len) after its ext bytes (more extensions:
   pf_writer_put_tail()). */
void	pf_filter_put_tail(pf_filter *f, const pf_record *rec,
	    const uint8_t *tail, size_t tail_len);
/* "prog: file: record N: message"; the status becomes PF_EXIT_DATA. */
void	pf_filter_error(pf_filter *f, uint64_t recno, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/*
 * 1 when the run went to the end of its input with its output taking
 * every record, so that the tool's summary is the last word; 0 when a
 * closed pipe downstream (which ends a run quietly) or a failed write
 * (already reported) cut it short.
 */
int	pf_filter_complete(const pf_filter *f);
/* Close and free the output; returns the run's status. */
int	pf_filter_close(pf_filter *f);

#endif
