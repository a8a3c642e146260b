/*
 * uci.c - UCI engine processes, line reading, info parsing and the search
 * accumulator (uci.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "uci.h"

struct pf_uci {
	pid_t pid;
	int reaped;
	int status;		/* wait status once reaped */
	int to_fd;		/* engine stdin */
	int from_fd;		/* engine stdout */
	int eof;
	char *buf;		/* received bytes [start, end) */
	size_t start, end, cap;
	char name[256];
	char **options;
	size_t noptions;
	char err[256];
};

static int
set_cloexec_pipe(int p[2])
{
	if (pipe(p) == -1)
		return -1;
	if (fcntl(p[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(p[1], F_SETFD, FD_CLOEXEC) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	return 0;
}

static void
child_exec(const char *path, int in_fd, int out_fd, int err_fd,
    pid_t parent)
{
	char *argv[2];
	sigset_t none;
	int e;

	setpgid(0, 0);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died before the line above: then no signal
	   will come, and the engine must not outlive it. */
	if (getppid() != parent)
		_exit(127);
#endif
	/* The parent ignores SIGPIPE and may catch INT/TERM; an ignored
	   disposition survives exec, so restore the defaults. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in_fd, 0) == -1 || dup2(out_fd, 1) == -1)
		goto fail;
	argv[0] = (char *)path;
	argv[1] = NULL;
	execvp(path, argv);
fail:
	e = errno;
	while (write(err_fd, &e, sizeof(e)) == -1 && errno == EINTR)
		;
	_exit(127);
}

pf_uci *
pf_uci_spawn(const char *path, char *err, size_t errlen)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, ex[2] = { -1, -1 };
	pf_uci *u;
	ssize_t n;
	pid_t parent;
	int e;

	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (u->buf = malloc(u->cap = 64u << 10)) == NULL) {
		if (err)
			snprintf(err, errlen, "out of memory");
		if (u)
			free(u);
		return NULL;
	}
	u->to_fd = u->from_fd = -1;
	if (set_cloexec_pipe(in) == -1 || set_cloexec_pipe(out) == -1 ||
	    set_cloexec_pipe(ex) == -1) {
		if (err)
			snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	parent = getpid();
	u->pid = fork();
	if (u->pid == -1) {
		if (err)
			snprintf(err, errlen, "fork: %s", strerror(errno));
		goto fail;
	}
	if (u->pid == 0)
		child_exec(path, in[0], out[1], ex[1], parent);
	setpgid(u->pid, u->pid);	/* both sides: no race */
	close(in[0]);
	close(out[1]);
	close(ex[1]);
	in[0] = out[1] = ex[1] = -1;
	do
		n = read(ex[0], &e, sizeof(e));
	while (n == -1 && errno == EINTR);
	close(ex[0]);
	ex[0] = -1;
	u->to_fd = in[1];
	u->from_fd = out[0];
	if (n == (ssize_t)sizeof(e)) {
		if (err)
			snprintf(err, errlen, "cannot run %s: %s", path,
			    strerror(e));
		pf_uci_free(u);
		return NULL;
	}
	fcntl(u->from_fd, F_SETFL, fcntl(u->from_fd, F_GETFL) | O_NONBLOCK);
	return u;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] != -1)
			close(in[i]);
		if (out[i] != -1)
			close(out[i]);
		if (ex[i] != -1)
			close(ex[i]);
	}
	free(u->buf);
	free(u);
	return NULL;
}

int
pf_uci_fd(const pf_uci *u)
{
	return u->from_fd;
}

pid_t
pf_uci_pid(const pf_uci *u)
{
	return u->pid;
}

const char *
pf_uci_error(const pf_uci *u)
{
	return u->err;
}

int
pf_uci_send(pf_uci *u, const char *line)
{
	size_t len = strlen(line), off = 0;
	char stackbuf[1024], *p = stackbuf;
	ssize_t n;

	if (len + 1 > sizeof(stackbuf) && (p = malloc(len + 1)) == NULL) {
		snprintf(u->err, sizeof(u->err), "out of memory");
		return -1;
	}
	memcpy(p, line, len);
	p[len++] = '\n';
	while (off < len) {
		n = write(u->to_fd, p + off, len - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(u->err, sizeof(u->err), "write to engine: %s",
			    strerror(errno));
			if (p != stackbuf)
				free(p);
			return -1;
		}
		off += (size_t)n;
	}
	if (p != stackbuf)
		free(p);
	return 0;
}

int
pf_uci_sendf(pf_uci *u, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		snprintf(u->err, sizeof(u->err), "command too long");
		return -1;
	}
	return pf_uci_send(u, buf);
}

int
pf_uci_fill(pf_uci *u)
{
	ssize_t n;

	if (u->eof) {
		snprintf(u->err, sizeof(u->err), "engine closed its output");
		return -1;
	}
	if (u->start > 0 && (u->start == u->end || u->end == u->cap)) {
		memmove(u->buf, u->buf + u->start, u->end - u->start);
		u->end -= u->start;
		u->start = 0;
	}
	if (u->end == u->cap) {
		size_t ncap = u->cap * 2;
		char *nb;

		if (ncap > PF_UCI_LINE_MAX + 1)
			ncap = PF_UCI_LINE_MAX + 1;
		if (ncap == u->cap)
			return 0;	/* getline reports the long line */
		if ((nb = realloc(u->buf, ncap)) == NULL) {
			snprintf(u->err, sizeof(u->err), "out of memory");
			return -1;
		}
		u->buf = nb;
		u->cap = ncap;
	}
	for (;;) {
		n = read(u->from_fd, u->buf + u->end, u->cap - u->end);
		if (n > 0) {
			u->end += (size_t)n;
			return (int)n;
		}
		if (n == 0) {
			u->eof = 1;
			snprintf(u->err, sizeof(u->err),
			    "engine closed its output");
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		snprintf(u->err, sizeof(u->err), "read from engine: %s",
		    strerror(errno));
		return -1;
	}
}

int
pf_uci_getline(pf_uci *u, char **line)
{
	char *s = u->buf + u->start, *nl;
	size_t avail = u->end - u->start, len;

	nl = memchr(s, '\n', avail);
	if (nl == NULL) {
		if (avail > PF_UCI_LINE_MAX) {
			snprintf(u->err, sizeof(u->err),
			    "engine line longer than %u bytes",
			    PF_UCI_LINE_MAX);
			return -1;
		}
		return 0;
	}
	len = (size_t)(nl - s);
	u->start += len + 1;
	*nl = '\0';
	if (len > 0 && s[len - 1] == '\r')
		s[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\0')
			s[i] = '?';
	*line = s;
	return 1;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
pf_uci_wait_line(pf_uci *u, int timeout_ms, char **line)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd pfd;
	int r;

	for (;;) {
		if ((r = pf_uci_getline(u, line)) != 0)
			return r;
		if (u->eof) {
			snprintf(u->err, sizeof(u->err),
			    "engine closed its output");
			return -1;
		}
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			snprintf(u->err, sizeof(u->err),
			    "no answer within %d ms", timeout_ms);
			return 0;
		}
		pfd.fd = u->from_fd;
		pfd.events = POLLIN;
		r = poll(&pfd, 1, (int)left);
		if (r == -1 && errno != EINTR) {
			snprintf(u->err, sizeof(u->err), "poll: %s",
			    strerror(errno));
			return -1;
		}
		if (r > 0 && pf_uci_fill(u) == -1 &&
		    pf_uci_getline(u, line) != 1)
			return -1;
		else if (r > 0 && u->eof)
			return 1;	/* the last line before the end */
	}
}

static int
starts_with_word(const char *line, const char *word, const char **rest)
{
	size_t n = strlen(word);

	if (strncmp(line, word, n) != 0 ||
	    (line[n] != '\0' && line[n] != ' ' && line[n] != '\t'))
		return 0;
	if (rest) {
		line += n;
		while (*line == ' ' || *line == '\t')
			line++;
		*rest = line;
	}
	return 1;
}

int
pf_uci_handshake_line(pf_uci *u, const char *line)
{
	const char *rest, *end;
	char **no;

	while (*line == ' ' || *line == '\t')
		line++;
	if (starts_with_word(line, "uciok", NULL))
		return 1;
	if (starts_with_word(line, "id", &rest) &&
	    starts_with_word(rest, "name", &rest)) {
		snprintf(u->name, sizeof(u->name), "%s", rest);
		return 0;
	}
	if (starts_with_word(line, "option", &rest) &&
	    starts_with_word(rest, "name", &rest)) {
		size_t nlen, slen;
		char *o;

		end = strstr(rest, " type ");
		if (end == NULL)
			end = rest + strlen(rest);
		nlen = (size_t)(end - rest);
		slen = strlen(end);
		no = realloc(u->options, (u->noptions + 1) * sizeof(*no));
		if (no == NULL)
			return 0;
		u->options = no;
		/* The name, a NUL, then the rest (" type spin default ..."). */
		if ((o = malloc(nlen + slen + 2)) != NULL) {
			memcpy(o, rest, nlen);
			o[nlen] = '\0';
			memcpy(o + nlen + 1, end, slen + 1);
			no[u->noptions++] = o;
		}
	}
	return 0;
}

/*
 * Send cmd, then read lines until done(u, line) says the answer has come
 * (1), all within timeout_ms.  0, or -1 with the reason in u->err.
 */
static int
send_and_wait(pf_uci *u, const char *cmd, int (*done)(pf_uci *, const char *),
    const char *what, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	char *line;
	int r;

	if (pf_uci_send(u, cmd) == -1)
		return -1;
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left < 0)
			left = 0;
		r = pf_uci_wait_line(u, (int)left, &line);
		if (r == 0)
			snprintf(u->err, sizeof(u->err), "no %s within %d ms",
			    what, timeout_ms);
		if (r != 1)
			return -1;
		if (done(u, line))
			return 0;
	}
}

int
pf_uci_is_readyok(const char *line)
{
	const char *rest;

	while (*line == ' ' || *line == '\t')
		line++;
	return starts_with_word(line, "readyok", &rest) && *rest == '\0';
}

static int
is_readyok(pf_uci *u, const char *line)
{
	(void)u;
	return pf_uci_is_readyok(line);
}

int
pf_uci_handshake(pf_uci *u, int timeout_ms)
{
	return send_and_wait(u, "uci", pf_uci_handshake_line, "uciok",
	    timeout_ms);
}

const char *
pf_uci_name(const pf_uci *u)
{
	return u->name;
}

int
pf_uci_has_option(const pf_uci *u, const char *name)
{
	for (size_t i = 0; i < u->noptions; i++)
		if (strcasecmp(u->options[i], name) == 0)
			return 1;
	return 0;
}

/* The word after key in an option's spec, into buf; 0 if there is none. */
static int
spec_word(const char *spec, const char *key, char *buf, size_t len)
{
	size_t k = strlen(key), n;
	const char *p = spec;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == spec || p[-1] == ' ') && p[k] == ' ') {
			p += k + 1;
			n = strcspn(p, " ");
			if (n == 0 || n >= len)
				return 0;
			memcpy(buf, p, n);
			buf[n] = '\0';
			return 1;
		}
		p += k;
	}
	return 0;
}

/* The values of a combo's "var" words (each up to the next keyword). */
static int
combo_has(const char *spec, const char *value)
{
	const char *p = spec, *end;
	size_t n;

	while ((p = strstr(p, " var ")) != NULL) {
		p += 5;
		end = strstr(p, " var ");
		n = end ? (size_t)(end - p) : strlen(p);
		if (strlen(value) == n && strncasecmp(p, value, n) == 0)
			return 1;
	}
	return 0;
}

int
pf_uci_check_option(const pf_uci *u, const char *name, const char *value,
    char *why, size_t len)
{
	const char *spec = NULL;
	char type[32], lo[32], hi[32];

	for (size_t i = 0; i < u->noptions; i++)
		if (strcasecmp(u->options[i], name) == 0) {
			spec = u->options[i] + strlen(u->options[i]) + 1;
			break;
		}
	if (spec == NULL) {
		snprintf(why, len, "the engine has no option \"%s\"", name);
		return -1;
	}
	if (!spec_word(spec, "type", type, sizeof(type)))
		return 0;	/* no type given: nothing to check */
	if (strcmp(type, "button") == 0) {
		if (value != NULL) {
			snprintf(why, len, "\"%s\" is a button: give no value",
			    name);
			return -1;
		}
		return 0;
	}
	if (value == NULL) {
		snprintf(why, len, "\"%s\" needs a value", name);
		return -1;
	}
	if (strcmp(type, "spin") == 0) {
		long long v, min = LLONG_MIN, max = LLONG_MAX;
		char *e;

		if (spec_word(spec, "min", lo, sizeof(lo)))
			min = strtoll(lo, NULL, 10);
		if (spec_word(spec, "max", hi, sizeof(hi)))
			max = strtoll(hi, NULL, 10);
		errno = 0;
		v = strtoll(value, &e, 10);
		if (e == value || *e != '\0' || errno || v < min || v > max) {
			snprintf(why, len, "\"%s\" takes a whole number from "
			    "%lld to %lld", name, min, max);
			return -1;
		}
	} else if (strcmp(type, "check") == 0) {
		if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0) {
			snprintf(why, len, "\"%s\" takes true or false", name);
			return -1;
		}
	} else if (strcmp(type, "combo") == 0) {
		if (strstr(spec, " var ") != NULL && !combo_has(spec, value)) {
			snprintf(why, len, "\"%s\" takes one of the values "
			    "the engine lists", name);
			return -1;
		}
	}
	return 0;
}

int
pf_uci_sync(pf_uci *u, int timeout_ms)
{
	return send_and_wait(u, "isready", is_readyok, "readyok", timeout_ms);
}

int
pf_uci_alive(pf_uci *u)
{
	siginfo_t si;

	if (u->reaped)
		return 0;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)u->pid, &si, WEXITED | WNOHANG | WNOWAIT)
	    == -1)
		return 0;
	return si.si_pid == 0;
}

static void
reap(pf_uci *u)
{
	int st;

	if (u->reaped || u->pid <= 0)
		return;
	/* Kill the group while the leader is still unreaped: its pid (and
	   so the group id) cannot have been reused yet. */
	kill(-u->pid, SIGKILL);
	while (waitpid(u->pid, &st, 0) == -1) {
		if (errno != EINTR) {
			st = -1;
			break;
		}
	}
	u->status = st;
	u->reaped = 1;
}

void
pf_uci_kill(pf_uci *u)
{
	if (u->reaped || u->pid <= 0)
		return;
	kill(u->pid, SIGKILL);
	reap(u);
}

int
pf_uci_stop(pf_uci *u, int grace_ms)
{
	int64_t deadline;

	if (u->reaped || u->pid <= 0)
		return -1;
	if (u->to_fd != -1) {
		pf_uci_send(u, "quit");
		close(u->to_fd);	/* EOF also means quit */
		u->to_fd = -1;
	}
	deadline = now_ms() + grace_ms;
	while (pf_uci_alive(u) && now_ms() < deadline) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	reap(u);
	return u->status;
}

const char *
pf_uci_exit_text(const pf_uci *u, char *buf, size_t len)
{
	if (!u->reaped)
		snprintf(buf, len, "%s", "");
	else if (WIFEXITED(u->status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(u->status));
	else if (WIFSIGNALED(u->status))
		snprintf(buf, len, "killed by signal %d",
		    WTERMSIG(u->status));
	else
		snprintf(buf, len, "ended");
	return buf;
}

void
pf_uci_free(pf_uci *u)
{
	if (u == NULL)
		return;
	pf_uci_kill(u);
	if (u->to_fd != -1)
		close(u->to_fd);
	if (u->from_fd != -1)
		close(u->from_fd);
	for (size_t i = 0; i < u->noptions; i++)
		free(u->options[i]);
	free(u->options);
	free(u->buf);
	free(u);
}

/* ---- parsing ------------------------------------------------------------ */

/* Next space-separated token of *p: start and length; 0 at the end. */
static int
token(const char **p, const char **tok, size_t *len)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0') {
		*p = s;
		return 0;
	}
	*tok = s;
	while (*s != '\0' && *s != ' ' && *s != '\t')
		s++;
	*len = (size_t)(s - *tok);
	*p = s;
	return 1;
}

static int
tok_is(const char *tok, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* A signed decimal number token into [min, max]. */
static int
tok_num(const char **p, long long min, long long max, long long *v)
{
	const char *t;
	size_t len, i = 0;
	long long x = 0;
	int neg = 0;

	if (!token(p, &t, &len))
		return -1;
	if (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-';
		i = 1;
	}
	if (i == len)
		return -1;
	for (; i < len; i++) {
		if (!isdigit((unsigned char)t[i]))
			return -1;
		if (x > (LLONG_MAX - 9) / 10)
			return -1;
		x = x * 10 + (t[i] - '0');
	}
	if (neg)
		x = -x;
	if (x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

int
pf_uci_parse_info(const char *line, pf_uci_info *info)
{
	const char *p = line, *t;
	size_t len;
	long long v;

	memset(info, 0, sizeof(*info));
	if (!token(&p, &t, &len) || !tok_is(t, len, "info"))
		return -1;
	while (token(&p, &t, &len)) {
		if (tok_is(t, len, "depth")) {
			if (tok_num(&p, 0, 65535, &v) == -1)
				return -1;
			info->depth = (int)v;
			info->has |= PF_UCI_HAS_DEPTH;
		} else if (tok_is(t, len, "seldepth")) {
			if (tok_num(&p, 0, 65535, &v) == -1)
				return -1;
			info->seldepth = (int)v;
			info->has |= PF_UCI_HAS_SELDEPTH;
		} else if (tok_is(t, len, "multipv")) {
			if (tok_num(&p, 1, PF_MAX_MOVES, &v) == -1)
				return -1;
			info->multipv = (int)v;
			info->has |= PF_UCI_HAS_MULTIPV;
		} else if (tok_is(t, len, "score")) {
			if (!token(&p, &t, &len))
				return -1;
			if (tok_is(t, len, "cp"))
				info->score_kind = PF_SCORE_CP;
			else if (tok_is(t, len, "mate"))
				info->score_kind = PF_SCORE_MATE;
			else
				return -1;
			if (tok_num(&p, -1000000, 1000000, &v) == -1)
				return -1;
			info->score = (int32_t)v;
			info->has |= PF_UCI_HAS_SCORE;
		} else if (tok_is(t, len, "lowerbound")) {
			info->bound = PF_EVF_LOWER;
		} else if (tok_is(t, len, "upperbound")) {
			info->bound = PF_EVF_UPPER;
		} else if (tok_is(t, len, "wdl")) {
			long long sum = 0;

			for (int i = 0; i < 3; i++) {
				if (tok_num(&p, 0, 1000, &v) == -1)
					return -1;
				info->wdl[i] = (uint16_t)v;
				sum += v;
			}
			/* posflow(5): per-mille chances summing to 1000;
			   anything else (an engine rounding each to 999 or
			   1001) is not a W/D/L, but the line's score is
			   still one. */
			if (sum == 1000)
				info->has |= PF_UCI_HAS_WDL;
		} else if (tok_is(t, len, "nodes")) {
			if (tok_num(&p, 0, LLONG_MAX, &v) == -1)
				return -1;
			info->nodes = (uint64_t)v;
			info->has |= PF_UCI_HAS_NODES;
		} else if (tok_is(t, len, "time")) {
			if (tok_num(&p, 0, UINT32_MAX, &v) == -1)
				return -1;
			info->time_ms = (uint32_t)v;
			info->has |= PF_UCI_HAS_TIME;
		} else if (tok_is(t, len, "nps") || tok_is(t, len, "hashfull")
		    || tok_is(t, len, "tbhits") || tok_is(t, len, "sbhits")
		    || tok_is(t, len, "cpuload") ||
		    tok_is(t, len, "currmovenumber")) {
			if (tok_num(&p, 0, LLONG_MAX, &v) == -1)
				return -1;
		} else if (tok_is(t, len, "currmove")) {
			if (!token(&p, &t, &len))
				return -1;
		} else if (tok_is(t, len, "pv")) {
			while (*p == ' ' || *p == '\t')
				p++;
			info->pv = p;
			info->has |= PF_UCI_HAS_PV;
			break;
		} else if (tok_is(t, len, "string") ||
		    tok_is(t, len, "refutation") ||
		    tok_is(t, len, "currline")) {
			break;	/* the rest of the line is theirs */
		}
		/* Unknown tokens are skipped (UCI says so). */
	}
	return (info->has & PF_UCI_HAS_SCORE) ? 1 : 0;
}

char *
pf_uci_position(const pf_board *b, char *buf)
{
	char fen[PF_FEN_MAX];

	snprintf(buf, PF_FEN_MAX + 16, "position fen %s",
	    pf_board_to_fen(b, fen));
	return buf;
}

void
pf_uci_history_reset(pf_uci_history *h, const pf_board *b)
{
	h->start = *b;
	h->n = 0;
}

void
pf_uci_history_push(pf_uci_history *h, pf_move m, const pf_board *after)
{
	pf_undo u;

	if (after->rule50 == 0) {
		pf_uci_history_reset(h, after);
		return;
	}
	if (h->n == PF_UCI_HISTORY_MAX) {
		/* the oldest move goes into the start position */
		pf_make_move(&h->start, h->moves[0], &u);
		memmove(h->moves, h->moves + 1, (size_t)(h->n - 1) *
		    sizeof(h->moves[0]));
		h->n--;
	}
	h->moves[h->n++] = m;
}

uint64_t
pf_uci_history_hash(const pf_uci_history *h)
{
	uint8_t buf[PF_PACKED_SIZE + 2 * PF_UCI_HISTORY_MAX];
	int i;

	pf_board_pack(&h->start, buf);
	for (i = 0; i < h->n; i++) {
		buf[PF_PACKED_SIZE + 2 * i] = (uint8_t)h->moves[i];
		buf[PF_PACKED_SIZE + 1 + 2 * i] = (uint8_t)(h->moves[i] >> 8);
	}
	return XXH64(buf, PF_PACKED_SIZE + 2 * (size_t)h->n,
	    0x686973746f7279ULL);
}

char *
pf_uci_position_history(const pf_uci_history *h, char *buf)
{
	pf_board b = h->start;
	pf_undo u;
	size_t n;
	int i;

	pf_uci_position(&b, buf);
	if (h->n == 0)
		return buf;
	n = strlen(buf);
	memcpy(buf + n, " moves", 7);
	n += 6;
	for (i = 0; i < h->n; i++) {
		buf[n++] = ' ';
		pf_move_to_uci(&b, h->moves[i], buf + n);
		n += strlen(buf + n);
		pf_make_move(&b, h->moves[i], &u);
	}
	return buf;
}

/* ---- one search --------------------------------------------------------- */

pf_uci_search *
pf_uci_search_new(void)
{
	return calloc(1, sizeof(pf_uci_search));
}

void
pf_uci_search_free(pf_uci_search *s)
{
	if (s == NULL)
		return;
	free(s->hist);
	free(s);
}

void
pf_uci_search_begin(pf_uci_search *s, const pf_board *b, int multipv,
    int keep_depths)
{
	pf_move moves[PF_MAX_MOVES];

	s->board = *b;
	s->nlegal = pf_gen_legal(b, moves);
	s->asked = multipv;
	s->want = multipv < s->nlegal ? multipv : s->nlegal;
	if (s->want < 1)
		s->want = 1;
	s->nallowed = 0;
	s->keep_depths = keep_depths;
	s->stop_nodes = s->stop_ms = 0;
	s->have_best = s->have_done = s->best_cut = 0;
	s->bestmove = PF_MOVE_NONE;
	s->tab_depth = -1;
	s->tab_seen = 0;
	memset(s->seen, 0, sizeof(s->seen));
	s->have_table = 0;
	s->nhist = 0;
	s->garbage = 0;
	s->table_faults = 0;
	s->err[0] = '\0';
}

void
pf_uci_search_limit(pf_uci_search *s, int kind, uint64_t limit)
{
	s->stop_nodes = kind == PF_LIMIT_NODES ? limit : 0;
	s->stop_ms = kind == PF_LIMIT_MOVETIME ? limit : 0;
}

void
pf_uci_search_restrict(pf_uci_search *s, const pf_move *moves, int n)
{
	pf_move legal[PF_MAX_MOVES];

	if (n > PF_MAX_MOVES)
		n = PF_MAX_MOVES;
	if (n <= 0) {
		s->nallowed = 0;
		s->nlegal = pf_gen_legal(&s->board, legal);
	} else {
		memcpy(s->allowed, moves, (size_t)n * sizeof(moves[0]));
		s->nallowed = s->nlegal = n;
	}
	s->want = s->asked < s->nlegal ? s->asked : s->nlegal;
	if (s->want < 1)
		s->want = 1;
}

static int
allowed(const pf_uci_search *s, pf_move m)
{
	if (s->nallowed == 0)
		return 1;
	for (int i = 0; i < s->nallowed; i++)
		if (s->allowed[i] == m)
			return 1;
	return 0;
}

/* Convert the pv text into moves, stopping at the first illegal one.
   Returns the number of moves. */
static int
parse_pv(const pf_board *root, const char *text, pf_move *pv, int max)
{
	pf_board b = *root;
	pf_undo u;
	const char *p = text, *t;
	size_t len;
	int n = 0;

	while (n < max && token(&p, &t, &len)) {
		pf_move m;

		if (pf_move_from_uci(&b, t, len, &m) == -1)
			break;
		pf_make_move(&b, m, &u);
		pv[n++] = m;
	}
	return n;
}

static void
table_done(pf_uci_search *s)
{
	pf_movescores *t = &s->table;

	t->depth = (uint16_t)s->tab_depth;
	t->n = (uint16_t)s->want;
	memcpy(t->m, s->cur, (size_t)s->want * sizeof(s->cur[0]));
	t->flags = s->want == s->nlegal ? PF_MSF_COMPLETE : 0;
	s->have_table = 1;
	if (!s->keep_depths)
		return;
	if (s->nhist > 0 && s->hist[s->nhist - 1].depth == t->depth) {
		s->hist[s->nhist - 1] = *t;
		return;
	}
	if (s->nhist == s->caphist) {
		int ncap = s->caphist ? s->caphist * 2 : 16;
		pf_movescores *nh = realloc(s->hist, (size_t)ncap *
		    sizeof(*nh));

		if (nh == NULL)
			return;	/* keeps the deepest table only */
		s->hist = nh;
		s->caphist = ncap;
	}
	s->hist[s->nhist++] = *t;
}

static int
garbage(pf_uci_search *s, const char *line)
{
	if (++s->garbage > PF_UCI_GARBAGE_MAX) {
		snprintf(s->err, sizeof(s->err),
		    "more than %d unparsable lines (last: \"%.40s\")",
		    PF_UCI_GARBAGE_MAX, line);
		return -1;
	}
	return 0;
}

static int
search_info(pf_uci_search *s, const char *line)
{
	pf_uci_info in;
	pf_uci_pvline pl;
	int r, idx, cut;

	r = pf_uci_parse_info(line, &in);
	if (r == -1)
		return garbage(s, line);
	if (r == 0)
		return 0;
	/* Mate 0 says the side to move is mated: never so in a position
	   searched (it has legal moves), so the line is wrong. */
	if (in.score_kind == PF_SCORE_MATE && in.score == 0)
		return garbage(s, line);
	if (!(in.has & PF_UCI_HAS_DEPTH))
		return 0;	/* "info depth 0 score ..." has one; else odd */
	idx = (in.has & PF_UCI_HAS_MULTIPV) ? in.multipv : 1;
	memset(&pl, 0, sizeof(pl));
	pl.depth = (uint16_t)in.depth;
	pl.seldepth = (uint16_t)in.seldepth;
	pl.score_kind = in.score_kind;
	pl.score = in.score;
	if (in.has & PF_UCI_HAS_WDL) {
		pl.flags |= PF_EVF_WDL;
		memcpy(pl.wdl, in.wdl, sizeof(pl.wdl));
	}
	pl.nodes = in.nodes;
	pl.time_ms = in.time_ms;
	if (in.pv)
		pl.pv_len = (uint16_t)parse_pv(&s->board, in.pv, pl.pv,
		    PF_PV_MAX);
	if (in.pv && pl.pv_len == 0) {
		s->table_faults++;
		return garbage(s, line);	/* an illegal first move */
	}
	if (in.bound)
		return 0;	/* neither the eval nor a table uses it */
	/* printed after the limit stopped the search: a cut-short iteration */
	cut = (s->stop_nodes > 0 && (in.has & PF_UCI_HAS_NODES) &&
	    in.nodes >= s->stop_nodes) || (s->stop_ms > 0 &&
	    (in.has & PF_UCI_HAS_TIME) && in.time_ms >= s->stop_ms);
	if (idx == 1) {
		/* the first line after the limit: keep the last one before */
		if (cut && !s->best_cut && s->have_best) {
			s->done = s->best;
			s->have_done = 1;
		}
		s->best = pl;
		s->have_best = 1;
		s->best_cut = cut;
	}
	if (idx > s->want || pl.pv_len == 0 || in.depth < s->tab_depth ||
	    !allowed(s, pl.pv[0]) || cut)
		return 0;
	if (in.depth > s->tab_depth) {
		s->tab_depth = in.depth;
		s->tab_seen = 0;
		memset(s->seen, 0, sizeof(s->seen));
	}
	s->cur[idx - 1].move = pl.pv[0];
	s->cur[idx - 1].score_kind = pl.score_kind;
	s->cur[idx - 1].score = pl.score;
	s->cur[idx - 1].depth = (uint8_t)(in.depth > 255 ? 255 : in.depth);
	if (!s->seen[idx - 1]) {
		s->seen[idx - 1] = 1;
		s->tab_seen++;
	}
	if (s->tab_seen == s->want) {
		/* Two lines naming one move: not a table. */
		for (int i = 1; i < s->want; i++)
			for (int j = 0; j < i; j++)
				if (s->cur[i].move == s->cur[j].move) {
					s->table_faults++;
					return garbage(s, line);
				}
		table_done(s);
	}
	return 0;
}

int
pf_uci_search_line(pf_uci_search *s, const char *line)
{
	const char *rest, *t, *p;
	size_t len;

	while (*line == ' ' || *line == '\t')
		line++;
	if (starts_with_word(line, "info", NULL))
		return search_info(s, line);
	if (!starts_with_word(line, "bestmove", &rest))
		return *line == '\0' ? 0 : garbage(s, line);
	p = rest;
	if (!token(&p, &t, &len) ||
	    pf_move_from_uci(&s->board, t, len, &s->bestmove) == -1) {
		snprintf(s->err, sizeof(s->err), "illegal bestmove \"%.40s\"",
		    rest);
		return -1;
	}
	if (!s->have_best) {
		snprintf(s->err, sizeof(s->err),
		    "bestmove without a score line");
		return -1;
	}
	return 1;
}

static void
fill_eval(const pf_uci_search *s, const pf_uci_pvline *b, pf_eval *e)
{
	e->score_kind = b->score_kind;
	e->score = b->score;
	e->flags = (uint8_t)((e->flags & ~(PF_EVF_WDL | PF_EVF_LOWER |
	    PF_EVF_UPPER)) | (b->flags & PF_EVF_WDL));
	memcpy(e->wdl, b->wdl, sizeof(e->wdl));
	e->depth = b->depth;
	e->seldepth = b->seldepth;
	e->best = s->bestmove;
	e->nodes = b->nodes;
	e->time_ms = b->time_ms;
	e->pv_len = b->pv_len;
	memcpy(e->pv, b->pv, (size_t)b->pv_len * sizeof(b->pv[0]));
}

void
pf_uci_search_eval(const pf_uci_search *s, pf_eval *e)
{
	const pf_uci_pvline *b = &s->best;

	/* The cut iteration's line giving the score and move of the last
	   complete one again (Stockfish's moves not searched again keep
	   their scores and take the new depth): the complete one, at its
	   depth, with the nodes and time of the whole search. */
	if (s->best_cut && s->have_done && b->score_kind ==
	    s->done.score_kind && b->score == s->done.score &&
	    b->pv_len > 0 && s->done.pv_len > 0 && b->pv[0] == s->done.pv[0]) {
		pf_uci_pvline d = s->done;

		d.nodes = b->nodes;
		d.time_ms = b->time_ms;
		fill_eval(s, &d, e);
		return;
	}
	fill_eval(s, b, e);
}


/* name found on $PATH as execvp finds it, into buf: 0, or -1 when no
   entry holds an executable of that name.  An empty entry is the
   current directory. */
static int
path_lookup(const char *name, char *buf, size_t len)
{
	const char *p, *e;
	size_t k;

	if ((p = getenv("PATH")) == NULL)
		return -1;
	for (;; p = e + 1) {
		e = p + strcspn(p, ":");
		k = (size_t)(e - p);
		if (k == 0)
			snprintf(buf, len, "%s", name);
		else
			snprintf(buf, len, "%.*s/%s", (int)k, p, name);
		if (access(buf, X_OK) == 0)
			return 0;
		if (*e == '\0')
			return -1;
	}
}

int
pf_uci_engine_digest(const char *engine, uint64_t *digest)
{
	char path[4096];

	if (strchr(engine, '/') != NULL)
		return pf_uci_file_digest(engine, digest);
	if (path_lookup(engine, path, sizeof(path)) == 0)
		return pf_uci_file_digest(path, digest);
	errno = ENOENT;
	return -1;
}

int
pf_uci_file_digest(const char *file, uint64_t *digest)
{
	char buf[1 << 16];
	XXH64_state_t st;
	ssize_t n;
	int fd, saved;

	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	XXH64_reset(&st, 0);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		XXH64_update(&st, buf, (size_t)n);
	}
	close(fd);
	*digest = XXH64_digest(&st);
	return 0;
}

/* The engine to run: given, $POSFLOW_ENGINE, stockfish on $PATH, or
   Debian's /usr/games/stockfish. */
const char *
pf_uci_find_engine(const char *given)
{
	static char buf[4096];
	const char *env;

	if (given)
		return given;
	if ((env = getenv("POSFLOW_ENGINE")) != NULL && *env)
		return env;
	if (path_lookup("stockfish", buf, sizeof(buf)) == 0)
		return buf;
	return "/usr/games/stockfish";
}
