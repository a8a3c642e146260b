/*
 * prog.h - what every posflow program shares: the program name, messages
 * in the form "prog: file: record N: reason", the range-checked number
 * parser, and opening the binary output (refused on a terminal unless
 * forced, zstd when asked or when the name ends in .zst).
 *
 * This is the one library module meant for cmd/ only: pf_warn/pf_warnx
 * write to stderr (that is their job).  Like the rest of lib/, nothing here
 * exits; the program decides its status (0 ok, 1 data / I/O / engine,
 * 2 usage).
 */
#ifndef PF_PROG_H
#define PF_PROG_H

#include <stdint.h>

#include "record.h"

#define PF_VERSION	"0.1.0"

enum { PF_EXIT_OK = 0, PF_EXIT_DATA = 1, PF_EXIT_USAGE = 2 };

/* Set the program name used in messages from argv[0], and shorten argv[0]
   to it so that getopt's own messages read "prog: ..." too; ignores
   SIGPIPE so that a closed pipe shows up as EPIPE (which tools end on
   quietly). */
void	pf_prog_init(char *argv[]);
const char *pf_progname(void);

/* "prog: " + formatted message + "\n" on stderr. pf_warn appends
   ": strerror(errno)". */
void	pf_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	pf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "prog --version" output: "prog (posflow) 0.1.0". */
void	pf_print_version(void);

/*
 * Parse a whole decimal integer in [min, max].  On error returns 0 and sets
 * *errstr to "not a whole number", "too small" or "too large" (as OpenBSD
 * strtonum, which says "invalid" for the first); on success *errstr = NULL.
 */
long long pf_strtonum(const char *s, long long min, long long max,
	    const char **errstr);
/*
 * Same for a finite decimal number in [min, max] ("not a decimal number":
 * no hexadecimal, inf or nan: only PF_DECIMAL_CHARS).
 */
#define PF_DECIMAL_CHARS	"0123456789.eE+-"
double	pf_strtod(const char *s, double min, double max, const char **errstr);
/*
 * The other way: v as the fewest significant digits that read back as v,
 * in %g's form (0.1 is "0.1", not "0.10000000000000001"), read back as a
 * float when flt is set (v a float's value: 0.2f is "0.2", not
 * "0.200000003"); a subnormal double takes 15 digits at least.  "nan",
 * "inf" or "-inf" when not finite.  Returns buf (25 bytes hold any).
 */
char	*pf_shortest(double v, int flt, char *buf, size_t len);
/*
 * A size in bytes: a number of digits and at most one '.', then an
 * optional K, M or G (powers of 1024), in [min, max].  "abc", " 5", "1e3"
 * and "0x10" are "not a size (a number, then k, m or g)"; otherwise errors
 * as pf_strtonum.
 */
uint64_t pf_strtosize(const char *s, uint64_t min, uint64_t max,
	    const char **errstr);

/*
 * The input operands (argc of them in argv; "-" is standard input), which
 * an output must not be: pf_filter_getopt sets them at the end of the
 * options, a tool with its own option loop calls this.  Kept, not copied.
 */
void	pf_set_inputs(int argc, const char *const *argv);
/* A file besides the operands that the output must not be (a cache, a
   curve read from an option; up to 8; kept, not copied). */
void	pf_add_input(const char *path);
/* 1 when path is an existing file that is one of those inputs (the same
   file under any name), which opening it for output would destroy, or
   names one that is not there yet (the open would make it). */
int	pf_output_is_input(const char *path);
/* 1 when a and b name one file: the same one, or, neither there yet, one
   path ("x" and "./x"); "-" and NULL are no file. */
int	pf_same_file(const char *a, const char *b);
#define PF_OUTPUT_IS_INPUT \
	"is also an input (give the output another name)"

/*
 * Open the binary output: path NULL or "-" is stdout.  Refuses a terminal
 * unless force (returns -1, errno ENOTTY), and a file that is one of the
 * inputs (pf_set_inputs; errno EEXIST, pf_warn_output says why).
 * *compress is set to 1 when the name ends in ".zst".  Returns the fd, or
 * -1 with errno set.
 */
int	pf_open_output(const char *path, int force, int *compress);

/*
 * Lock directory dir for this run (flock(2) on it, not blocking), so that
 * a second run writing there is refused rather than mixed in.  The fd to
 * keep open while writing (the lock goes with it), or -1 after a message
 * ("dir: in use by another run writing there", or why it cannot be
 * opened).
 */
int	pf_lock_dir(const char *dir);

/*
 * Close the output fd that pf_open_output returned for path (standard
 * output is left open).  When writing it failed (failed != 0) and the file
 * holds nothing, it is removed: zero bytes read as a valid empty stream,
 * and the empty file of a failed run (a disk already full) must not be
 * taken for a complete one.  Returns 0, or -1 with errno set when close(2)
 * reports an error (on some file systems the first sign of a full disk).
 */
int	pf_close_output(const char *path, int fd, int failed);

/* Report a failed pf_open_output: for a terminal, "refusing to write
   binary output to a terminal (use -f to force)", for an input, "path:
   PF_OUTPUT_IS_INPUT", else path: strerror. */
void	pf_warn_output(const char *path);

/* Writer options for a tool: zstd level 3 when compress, else none. */
pf_writer_opts pf_default_writer_opts(int compress);

/* The name to use in messages for an input operand ("-" -> "stdin"). */
const char *pf_input_name(const char *path);

#endif
