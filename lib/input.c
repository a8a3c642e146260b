/*
 * input.c - streaming text input through libarchive (see input.h).
 *
 * Only the raw, empty, tar and zip formats are enabled: "all formats"
 * would let mtree or cpio bidders claim ordinary text.  The compression
 * filters are gzip, bzip2, xz, lzma, lzip, zstd, lz4 and compress; the
 * content decides which.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"

#define CAP	(PF_INPUT_BUFSIZE + PF_INPUT_KEEP)

struct pf_input {
	struct archive *a;
	int fd;
	int own_fd;
	int regular;		/* a regular file: seekable, never blocks */
	void (*idle)(void *);	/* called before a read that would block */
	void *idle_arg;
	char *rbuf;		/* raw bytes read from fd */
	size_t pre_len;		/* bytes read ahead to detect the format */
	int pre_pending;	/* rbuf holds pre_len bytes not yet used */
	int direct;		/* plain PGN from a pipe: read fd directly */
	int opened;		/* archive_read_open done */
	int done;		/* no more members */
	int member_eof;		/* current member fully read */
	int raw;		/* plain or compressed file, not an archive */
	uint64_t consumed;	/* member bytes moved out of the buffer */
	char *buf;		/* CAP + 1 bytes; buf[len] is always NUL */
	size_t len;		/* valid bytes in buf */
	const char *blk;	/* rest of the last libarchive block */
	size_t blk_len;
	char *name;
	char *member;
	char err[256];
};

pf_input *
pf_input_open(const char *path, const char *name)
{
	pf_input *in;
	int fd;

	if (path == NULL || strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
		if (name == NULL)
			name = "stdin";
	} else {
		struct stat st;

		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			return NULL;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			errno = EISDIR;
			return NULL;
		}
		if (name == NULL)
			name = path;
	}
	if ((in = calloc(1, sizeof(*in))) == NULL ||
	    (in->buf = malloc(CAP + 1)) == NULL ||
	    (in->rbuf = malloc(PF_INPUT_BUFSIZE)) == NULL ||
	    (in->name = strdup(name)) == NULL ||
	    (in->a = archive_read_new()) == NULL) {
		int saved = errno;

		if (fd != STDIN_FILENO)
			close(fd);
		if (in != NULL) {
			free(in->buf);
			free(in->rbuf);
			free(in->name);
			free(in);
		}
		errno = saved ? saved : ENOMEM;
		return NULL;
	}
	in->fd = fd;
	in->own_fd = fd != STDIN_FILENO;
	{
		struct stat st;

		in->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	}
	in->buf[0] = '\0';
	/* Not filter_all: the uudecode bidder reads far ahead looking for
	   "begin", which stalls a slow pipe; rpm and the external-program
	   filters are of no use for text. */
	archive_read_support_filter_gzip(in->a);
	archive_read_support_filter_bzip2(in->a);
	archive_read_support_filter_xz(in->a);
	archive_read_support_filter_lzma(in->a);
	archive_read_support_filter_lzip(in->a);
	archive_read_support_filter_zstd(in->a);
	archive_read_support_filter_lz4(in->a);
	archive_read_support_filter_compress(in->a);
	archive_read_support_format_tar(in->a);
	archive_read_support_format_zip(in->a);
	archive_read_support_format_empty(in->a);
	archive_read_support_format_raw(in->a);
	return in;
}

void
pf_input_free(pf_input *in)
{
	if (in == NULL)
		return;
	if (in->a != NULL)
		archive_read_free(in->a);
	if (in->own_fd)
		close(in->fd);
	free(in->buf);
	free(in->rbuf);
	free(in->name);
	free(in->member);
	free(in);
}

void
pf_input_set_idle(pf_input *in, void (*idle)(void *), void *arg)
{
	in->idle = idle;
	in->idle_arg = arg;
}

/*
 * One read(2) into rbuf.  Before a read that would wait (a pipe or
 * terminal with nothing ready) the caller's idle hook runs, so that it can
 * flush its output.  EINTR is retried; a non-blocking descriptor with no
 * data (EAGAIN) is waited for, as a blocking one would be.
 */
static ssize_t
read_some(pf_input *in)
{
	struct pollfd pfd = { .fd = in->fd, .events = POLLIN };
	ssize_t n;

	if (in->idle != NULL && !in->regular && poll(&pfd, 1, 0) == 0)
		in->idle(in->idle_arg);
	for (;;) {
		if ((n = read(in->fd, in->rbuf, PF_INPUT_BUFSIZE)) >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			(void)poll(&pfd, 1, -1);
		else if (errno != EINTR)
			return n;
	}
}

/*
 * libarchive callbacks on our fd: the read callback gives the caller a
 * chance to flush its output before blocking on a pipe or terminal, so
 * records flow through a pipeline while the input is slow.
 */
static la_ssize_t
read_cb(struct archive *a, void *arg, const void **buf)
{
	pf_input *in = arg;
	ssize_t n;

	if (in->pre_pending) {
		in->pre_pending = 0;
		*buf = in->rbuf;
		return (la_ssize_t)in->pre_len;
	}
	if ((n = read_some(in)) < 0) {
		archive_set_error(a, errno, "%s", strerror(errno));
		return ARCHIVE_FATAL;
	}
	*buf = in->rbuf;
	return n;
}

static la_int64_t
skip_cb(struct archive *a, void *arg, la_int64_t request)
{
	pf_input *in = arg;

	(void)a;
	if (!in->regular || lseek(in->fd, request, SEEK_CUR) < 0)
		return 0;	/* libarchive then reads and discards */
	return request;
}

static la_int64_t
seek_cb(struct archive *a, void *arg, la_int64_t offset, int whence)
{
	pf_input *in = arg;
	off_t r;

	if (!in->regular)
		return ARCHIVE_FATAL;
	if ((r = lseek(in->fd, offset, whence)) < 0) {
		archive_set_error(a, errno, "%s", strerror(errno));
		return ARCHIVE_FATAL;
	}
	return r;
}

static void
set_archive_error(pf_input *in, const char *what)
{
	const char *s = archive_error_string(in->a);

	if (s == NULL)
		s = "unknown error";
	if (what != NULL)
		snprintf(in->err, sizeof(in->err), "%s: %s", what, s);
	else
		snprintf(in->err, sizeof(in->err), "%s", s);
}

/* Direct reads (plain text from a pipe): one block, 0 at the end. */
static ssize_t
direct_read(pf_input *in)
{
	ssize_t n;

	if (in->pre_pending) {
		in->pre_pending = 0;
		return (ssize_t)in->pre_len;
	}
	if ((n = read_some(in)) < 0)
		snprintf(in->err, sizeof(in->err), "%s", strerror(errno));
	return n;
}

/*
 * From a pipe, libarchive's format detection waits for 512 bytes or more,
 * which stalls a slow feed of small games.  Text that starts with a PGN
 * tag (after an optional byte-order mark) and is no tar header is read
 * directly instead.  Returns 1 for direct, 0 for libarchive, -1 on error.
 */
static int
detect_direct(pf_input *in)
{
	const unsigned char *b = (const unsigned char *)in->rbuf;
	ssize_t n;
	size_t i = 0;

	in->pre_pending = 0;
	if ((n = direct_read(in)) < 0)
		return -1;
	in->pre_len = (size_t)n;
	in->pre_pending = 1;
	if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		i = 3;
	if ((size_t)n <= i || b[i] != '[')
		return 0;
	if (n >= 262 && memcmp(b + 257, "ustar", 5) == 0)
		return 0;
	return 1;
}

int
pf_input_next_member(pf_input *in)
{
	struct archive_entry *e;
	int r;

	if (in->done)
		return 0;
	if (!in->opened && !in->regular) {
		int d = detect_direct(in);

		if (d < 0) {
			in->done = 1;
			return -1;
		}
		if (d == 1) {
			in->opened = in->direct = in->raw = 1;
			in->done = 1;	/* one member only */
			in->member_eof = 0;
			in->len = 0;
			in->buf[0] = '\0';
			return 1;
		}
	}
	if (!in->opened) {
		in->opened = 1;
		archive_read_set_callback_data(in->a, in);
		archive_read_set_read_callback(in->a, read_cb);
		archive_read_set_skip_callback(in->a, skip_cb);
		if (in->regular)
			archive_read_set_seek_callback(in->a, seek_cb);
		if (archive_read_open1(in->a) != ARCHIVE_OK) {
			set_archive_error(in, "cannot read");
			in->done = 1;
			return -1;
		}
	}
	free(in->member);
	in->member = NULL;
	in->len = 0;
	in->buf[0] = '\0';
	in->consumed = 0;
	in->blk_len = 0;
	for (;;) {
		r = archive_read_next_header(in->a, &e);
		if (r == ARCHIVE_EOF) {
			in->done = 1;
			return 0;
		}
		if (r < ARCHIVE_WARN) {
			set_archive_error(in, "cannot read");
			in->done = 1;
			return -1;
		}
		if (archive_format(in->a) == ARCHIVE_FORMAT_RAW ||
		    archive_format(in->a) == ARCHIVE_FORMAT_EMPTY) {
			in->raw = 1;
			break;
		}
		/* Directories, links and devices carry no text. */
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;
		if ((in->member = strdup(archive_entry_pathname(e) ?
		    archive_entry_pathname(e) : "?")) == NULL) {
			snprintf(in->err, sizeof(in->err), "out of memory");
			in->done = 1;
			return -1;
		}
		break;
	}
	in->member_eof = 0;
	if (in->raw && archive_format(in->a) == ARCHIVE_FORMAT_EMPTY)
		in->member_eof = 1;
	return 1;
}

int
pf_input_regular(const pf_input *in)
{
	return in->regular;
}

const char *
pf_input_member(const pf_input *in)
{
	return in->member;
}

const char *
pf_input_filename(const pf_input *in)
{
	return in->name;
}

const char *
pf_input_error(const pf_input *in)
{
	return in->err;
}

uint64_t
pf_input_offset(const pf_input *in, const char *pos)
{
	return in->consumed + (uint64_t)(pos - in->buf);
}

int
pf_input_fill(pf_input *in, const char **pos, const char **end, size_t want)
{
	size_t unread;
	int added = 0;

	if (want > PF_INPUT_KEEP)
		want = PF_INPUT_KEEP;
	if (*pos == NULL || *end == NULL) {
		*pos = *end = in->buf;
	}
	unread = (size_t)(*end - *pos);
	if (in->member_eof)
		return 0;
	if (*pos != in->buf) {
		in->consumed += (uint64_t)(*pos - in->buf);
		memmove(in->buf, *pos, unread);
	}
	in->len = unread;
	/*
	 * Zero-copy blocks from libarchive, copied here: a decompression
	 * error then loses nothing that was decoded before it.
	 */
	while (in->len < want && in->len < CAP) {
		size_t n;

		if (in->blk_len == 0 && in->direct) {
			ssize_t r = direct_read(in);

			if (r == 0) {
				in->member_eof = 1;
				break;
			}
			if (r < 0) {
				in->member_eof = 1;
				in->buf[in->len] = '\0';
				*pos = in->buf;
				*end = in->buf + in->len;
				return -1;
			}
			in->blk = in->rbuf;
			in->blk_len = (size_t)r;
			continue;
		}
		if (in->blk_len == 0) {
			const void *blk;
			size_t size;
			la_int64_t off;
			int r = archive_read_data_block(in->a, &blk, &size,
			    &off);

			if (r == ARCHIVE_EOF) {
				in->member_eof = 1;
				break;
			}
			if (r < ARCHIVE_WARN) {
				set_archive_error(in, NULL);
				in->member_eof = 1;
				in->done = 1;
				in->buf[in->len] = '\0';
				*pos = in->buf;
				*end = in->buf + in->len;
				return -1;
			}
			in->blk = blk;
			in->blk_len = size;
			continue;
		}
		n = CAP - in->len;
		if (n > in->blk_len)
			n = in->blk_len;
		memcpy(in->buf + in->len, in->blk, n);
		in->blk += n;
		in->blk_len -= n;
		in->len += n;
		added = 1;
		/* From a pipe, text that ends a line is enough for now: the
		   reader must not wait for more while it could work (and
		   flush its output) on what it has. */
		if (!in->regular && in->blk_len == 0 &&
		    in->buf[in->len - 1] == '\n')
			break;
	}
	in->buf[in->len] = '\0';
	*pos = in->buf;
	*end = in->buf + in->len;
	/* 0 only at the end of the member: a window that already held want
	   bytes is not an end. */
	return added || !in->member_eof;
}
