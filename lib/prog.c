/*
 * prog.c - the parts every posflow program shares (see prog.h).  This is
 * the one library module that writes to stderr; it never exits.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prog.h"

static const char *progname = "posflow";

void
pf_prog_init(char *argv[])
{
	const char *slash = strrchr(argv[0], '/');

	progname = slash ? slash + 1 : argv[0];
	argv[0] = (char *)progname;
	/* A closed pipe must surface as EPIPE so tools can stop quietly. */
	signal(SIGPIPE, SIG_IGN);
}

const char *
pf_progname(void)
{
	return progname;
}

static void
vwarn(int with_errno, const char *fmt, va_list ap)
{
	int saved = errno;
	char buf[4096];
	int n;

	/* One write per message, so messages of parallel tools do not mix. */
	n = snprintf(buf, sizeof(buf), "%s: ", progname);
	if (n < 0)
		return;
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (with_errno && n < (int)sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, ": %s",
		    strerror(saved));
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	fwrite(buf, 1, n, stderr);
	fflush(stderr);
	errno = saved;
}

void
pf_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(0, fmt, ap);
	va_end(ap);
}

void
pf_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(1, fmt, ap);
	va_end(ap);
}

void
pf_print_version(void)
{
	printf("%s (posflow) %s\n", progname, PF_VERSION);
}

long long
pf_strtonum(const char *s, long long min, long long max, const char **errstr)
{
	char *end;
	long long v;

	*errstr = "not a whole number";
	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0')
		return 0;
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*errstr = "too small";
		return 0;
	}
	if ((errno == ERANGE && v == LLONG_MAX) || v > max) {
		*errstr = "too large";
		return 0;
	}
	*errstr = NULL;
	return v;
}

double
pf_strtod(const char *s, double min, double max, const char **errstr)
{
	char *end;
	double v;

	*errstr = "not a decimal number";
	/* decimal only: strtod would take "0x1p-3", "inf" and "nan" too */
	if (s == NULL || *s == '\0' || strspn(s, PF_DECIMAL_CHARS) !=
	    strlen(s))
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || isnan(v))
		return 0;
	if (v < min || v == -HUGE_VAL) {
		*errstr = "too small";
		return 0;
	}
	if (v > max || v == HUGE_VAL) {
		*errstr = "too large";
		return 0;
	}
	*errstr = NULL;
	return v;
}

char *
pf_shortest(double v, int flt, char *buf, size_t len)
{
	/* a double from DBL_DIG digits: where fewer read back, that many
	   show the same (%g drops the zeros) but for a subnormal number */
	int prec = flt ? 1 : DBL_DIG;
	int most = flt ? FLT_DECIMAL_DIG : DBL_DECIMAL_DIG;

	if (isnan(v)) {
		snprintf(buf, len, "nan");	/* glibc would write "-nan" */
		return buf;
	}
	for (; prec < most; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (flt ? strtof(buf, NULL) == (float)v :
		    strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, len, "%.*g", most, v);
	return buf;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* pf_set_inputs' operands, pf_add_input's files, and whether
   pf_open_output refused one. */
static const char *const *inputs;
static int ninputs, refused_input;
static const char *extra[8];
static int nextra;

void
pf_set_inputs(int argc, const char *const *argv)
{
	inputs = argv;
	ninputs = argc;
}

void
pf_add_input(const char *path)
{
	if (path != NULL && nextra < (int)(sizeof(extra) / sizeof(extra[0])))
		extra[nextra++] = path;
}

/* The i-th file the output must not be: the operands, then the others. */
static const char *
input_at(int i)
{
	return i < ninputs ? inputs[i] : extra[i - ninputs];
}

/*
 * A path as it will name a file once made: the real path of its
 * directory and its last name (a dangling link as its target's), so that
 * "new.pos" and "./new.pos" compare equal before either exists.  0 / -1.
 */
static int
canon(const char *path, char *buf, size_t len)
{
	char link[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	const char *base, *slash;
	ssize_t n;
	int k;

	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {		/* a link to nothing: where it points */
		link[n] = '\0';
		if (link[0] != '/' && (slash = strrchr(path, '/')) != NULL) {
			k = snprintf(dir, sizeof(dir), "%.*s/%s",
			    (int)(slash - path), path, link);
			if (k < 0 || (size_t)k >= sizeof(dir))
				return -1;
			memcpy(link, dir, (size_t)k + 1);
		}
		path = link;
	}
	if ((slash = strrchr(path, '/')) == NULL) {
		base = path;
		k = snprintf(dir, sizeof(dir), ".");
	} else {
		base = slash + 1;
		k = snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 :
		    (int)(slash - path), path);
	}
	if (k < 0 || (size_t)k >= sizeof(dir) || realpath(dir, real) == NULL)
		return -1;
	k = snprintf(buf, len, "%s/%s", real, base);
	return k < 0 || (size_t)k >= len ? -1 : 0;
}

int
pf_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char ca[2 * PATH_MAX], cb[2 * PATH_MAX];
	int ea, eb;

	if (a == NULL || b == NULL || strcmp(a, "-") == 0 ||
	    strcmp(b, "-") == 0)
		return 0;
	ea = stat(a, &sa) == 0;
	eb = stat(b, &sb) == 0;
	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return !ea && !eb && canon(a, ca, sizeof(ca)) == 0 &&
	    canon(b, cb, sizeof(cb)) == 0 && strcmp(ca, cb) == 0;
}

int
pf_output_is_input(const char *path)
{
	struct stat out, in;
	int std = ninputs == 0;	/* standard input is read */

	char a[2 * PATH_MAX], b[2 * PATH_MAX];

	if (path == NULL || strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &out) == -1) {
		/* not there yet: made by the open, it would be read back */
		if (canon(path, a, sizeof(a)) == -1)
			return 0;
		for (int i = 0; i < ninputs + nextra; i++)
			if (strcmp(input_at(i), "-") != 0 &&
			    stat(input_at(i), &in) == -1 &&
			    canon(input_at(i), b, sizeof(b)) == 0 &&
			    strcmp(a, b) == 0)
				return 1;
		return 0;
	}
	if (!S_ISREG(out.st_mode))
		return 0;
	for (int i = 0; i < ninputs + nextra; i++) {
		if (strcmp(input_at(i), "-") == 0)
			std = 1;
		else if (stat(input_at(i), &in) == 0 &&
		    in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return 1;
	}
	return std && fstat(STDIN_FILENO, &in) == 0 &&
	    in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

int
pf_open_output(const char *path, int force, int *compress)
{
	int fd;

	refused_input = 0;
	if (path == NULL || strcmp(path, "-") == 0) {
		fd = STDOUT_FILENO;
	} else {
		if (compress != NULL && ends_with(path, ".zst"))
			*compress = 1;
		if (pf_output_is_input(path)) {
			refused_input = 1;
			errno = EEXIST;
			return -1;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd == -1)
			return -1;
	}
	if (!force && isatty(fd)) {
		if (fd != STDOUT_FILENO)
			close(fd);
		errno = ENOTTY;
		return -1;
	}
	return fd;
}

int
pf_lock_dir(const char *dir)
{
	int fd, e;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		pf_warn("%s", dir);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			pf_warnx("%s: in use by another run writing there",
			    dir);
		else {
			errno = e;
			pf_warn("%s", dir);
		}
		return -1;
	}
	return fd;
}

int
pf_close_output(const char *path, int fd, int failed)
{
	struct stat st, named;
	int rc;

	if (fd < 0 || fd == STDOUT_FILENO || path == NULL ||
	    strcmp(path, "-") == 0)
		return 0;
	/* Only the file this fd is, still under that name. */
	if (failed && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size == 0 && stat(path, &named) == 0 &&
	    named.st_dev == st.st_dev && named.st_ino == st.st_ino)
		(void)unlink(path);
	rc = close(fd);
	return rc == -1 && errno != EINTR ? -1 : 0;
}

void
pf_warn_output(const char *path)
{
	if (errno == ENOTTY)
		pf_warnx("refusing to write binary output to a terminal "
		    "(use -f to force)");
	else if (refused_input)
		pf_warnx("%s: %s", path, PF_OUTPUT_IS_INPUT);
	else
		pf_warn("%s", path == NULL ? "stdout" : path);
}

pf_writer_opts
pf_default_writer_opts(int compress)
{
	pf_writer_opts o;

	memset(&o, 0, sizeof(o));
	o.zstd_level = compress ? 3 : 0;
	return o;
}

const char *
pf_input_name(const char *path)
{
	return path == NULL || strcmp(path, "-") == 0 ? "stdin" : path;
}

uint64_t
pf_strtosize(const char *s, uint64_t min, uint64_t max, const char **errstr)
{
	char num[32];
	size_t n = strlen(s), i, dots = 0, digits = 0;
	double v, unit = 1;

	*errstr = NULL;
	if (n > 0 && strchr("kKmMgG", s[n - 1]) != NULL) {
		unit = strchr("kK", s[n - 1]) ? 1024.0 :
		    strchr("mM", s[n - 1]) ? 1024.0 * 1024 :
		    1024.0 * 1024 * 1024;
		n--;
	}
	for (i = 0; i < n; i++) {	/* digits, with at most one '.' */
		if (s[i] == '.')
			dots++;
		else if (isdigit((unsigned char)s[i]))
			digits++;
		else
			break;
	}
	if (i < n || dots > 1 || digits == 0 || n >= sizeof(num)) {
		*errstr = "not a size (a number, then k, m or g)";
		return 0;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	v = pf_strtod(num, 0, 1e18, errstr);
	if (*errstr != NULL)
		return 0;
	v *= unit;
	if (v < (double)min) {
		*errstr = "too small";
		return 0;
	}
	if (v > (double)max) {
		*errstr = "too large";
		return 0;
	}
	return (uint64_t)v;
}
