/*
 * input.c - streaming text input through libarchive (see input.h).
 *
 * Only the raw, empty, tar and zip formats are enabled: "all formats"
 * would let mtree or cpio bidders claim ordinary text.  The compression
 * filters are gzip, bzip2, xz, lzma, lzip, zstd, lz4 and compress; the
 * content decides which.
 *
 * Nothing is lost quietly where libarchive would: a zero block at the
 * start makes libarchive see an empty tar archive, so such an input is
 * read again as text (the reader then reports the binary data and keeps
 * the games after it); bytes after the end of compressed data, which
 * libarchive's gzip and bzip2 readers skip, are an error; a tar header
 * with a bad checksum, which libarchive hands on as text, is an error; a
 * damaged zip member does not end the archive.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "input.h"
#include "record.h"

#define CAP	(PF_INPUT_BUFSIZE + PF_INPUT_KEEP)

/* What an input's head says: zstd or gzip text (read natively), PGN
   text in a file or gzip data kept as stored (read directly), or none of
   those (libarchive). */
enum { NATIVE_NONE, NATIVE_ZSTD, NATIVE_GZIP, READ_DIRECT };
#define REPLAY_MAX	(16u << 20)	/* raw bytes kept to read a pipe
					   again (see reopen_text) */

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
	int text_only;		/* reopened without the archive formats */
	int headers;		/* archive headers read so far */
	int member_failed;	/* the current member ended in an error */
	int member_warned;	/* libarchive warned while reading it */
	int skipping;		/* past a damaged header: libarchive looks
				   for the next good one */
	int fail_pending;	/* an error found while prefetching: the
				   next pf_input_fill returns it */
	int sniffed;		/* the member's head was looked at
				   (wide_text) */
	int binary;		/* pf_input_set_binary: no text rules */
	int keep_gzip;		/* pf_input_keep_gzip */
	const char *rpos, *rend;	/* pf_input_read's window */
	int rstate;		/* pf_input_read: 0 new member, 1 reading,
				   2 at its end, 3 an error to return */
	off_t start_off;	/* offset of the input in a regular file */
	uint64_t raw_read;	/* raw bytes handed to libarchive */
	const char *last_blk;	/* the last raw block handed to */
	size_t last_n;		/* libarchive (rbuf or replay) */
	char *replay;		/* pipe: raw bytes handed to libarchive
				   before the first header, to read again */
	size_t replay_len, replay_cap;
	int recording;		/* read_cb appends its blocks to replay */
	int replay_lost;	/* too much to keep: replay is incomplete */
	int replay_pending;	/* read_cb hands out replay first */
	uint64_t consumed;	/* member bytes moved out of the buffer */
	char *buf;		/* CAP + 1 bytes; buf[len] is always NUL */
	size_t len;		/* valid bytes in buf */
	const char *blk;	/* rest of the last libarchive block */
	size_t blk_len;
	char *name;
	char *member;
	char err[256];
	/* zstd or gzip text, decompressed here (see zstd_more, gz_more) */
	int native;		/* NATIVE_* */
	ZSTD_DStream *zd;
	z_stream *gz;
	int zmid;		/* inside a frame or a gzip member */
	size_t zwant;		/* zstd: the input its next step takes */
	int zfull;		/* zstd: text of a block waits to go out */
	char first[4];		/* the input's first bytes (cut_header) */
	size_t first_n;
	size_t zin_pos, zin_len;	/* compressed bytes in rbuf */
};

/*
 * The compression filters and, with archives set, the archive formats.
 * Not filter_all: the uudecode bidder reads far ahead looking for
 * "begin", which stalls a slow pipe; rpm and the external-program filters
 * are of no use for text.
 */
static void
setup_archive(struct archive *a, int archives, int binary)
{
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	/* lzma data has no magic number: its bidder guesses from the
	   first bytes, and took an lc0 record (06 00 00 00 01 ...) for a
	   header.  Text cannot look like one; binary data can. */
	if (!binary)
		archive_read_support_filter_lzma(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_compress(a);
	if (archives) {
		archive_read_support_format_tar(a);
		archive_read_support_format_zip(a);
		archive_read_support_format_empty(a);
	}
	archive_read_support_format_raw(a);
}

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
	if (in->regular && (in->start_off = lseek(fd, 0, SEEK_CUR)) < 0)
		in->start_off = 0;
	in->recording = !in->regular;
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
	free(in->replay);
	ZSTD_freeDStream(in->zd);
	if (in->gz != NULL)
		inflateEnd(in->gz);
	free(in->gz);
	free(in);
}

void
pf_input_set_binary(pf_input *in)
{
	in->binary = 1;
}

void
pf_input_keep_gzip(pf_input *in)
{
	in->keep_gzip = 1;
}

void
pf_input_set_idle(pf_input *in, void (*idle)(void *), void *arg)
{
	in->idle = idle;
	in->idle_arg = arg;
}

/*
 * One read(2) of up to size bytes into p.  Before a read that would wait
 * (a pipe or terminal with nothing ready) the caller's idle hook runs, so
 * that it can flush its output.  EINTR is retried; a non-blocking
 * descriptor with no data (EAGAIN) is waited for, as a blocking one would
 * be.
 */
static ssize_t
read_into(pf_input *in, char *p, size_t size)
{
	struct pollfd pfd = { .fd = in->fd, .events = POLLIN };
	ssize_t n;

	if (in->idle != NULL && !in->regular && poll(&pfd, 1, 0) == 0)
		in->idle(in->idle_arg);
	for (;;) {
		if ((n = read(in->fd, p, size)) >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			(void)poll(&pfd, 1, -1);
		else if (errno != EINTR)
			return n;
	}
}

/* One read(2) into rbuf (read_into). */
static ssize_t
read_some(pf_input *in)
{
	return read_into(in, in->rbuf, PF_INPUT_BUFSIZE);
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

	if (in->replay_pending) {
		in->replay_pending = 0;
		in->last_blk = in->replay;
		in->last_n = in->replay_len;
		*buf = in->replay;
		return (la_ssize_t)in->replay_len;
	}
	if (in->pre_pending) {
		in->pre_pending = 0;
		n = (ssize_t)in->pre_len;
	} else if ((n = read_some(in)) < 0) {
		archive_set_error(a, errno, "%s", strerror(errno));
		return ARCHIVE_FATAL;
	}
	in->raw_read += (uint64_t)n;
	if (n > 0) {
		in->last_blk = in->rbuf;
		in->last_n = (size_t)n;
	}
	if (in->recording && n > 0) {
		/* Kept until the first header is read: a pipe that turns
		   out to need reading again as text (see reopen_text). */
		if (in->replay_len + (size_t)n > in->replay_cap) {
			size_t cap = in->replay_cap ? in->replay_cap : 65536;
			char *r;

			while (cap < in->replay_len + (size_t)n)
				cap *= 2;
			if (cap > REPLAY_MAX ||
			    (r = realloc(in->replay, cap)) == NULL) {
				in->recording = 0;
				in->replay_lost = 1;
				free(in->replay);
				in->replay = NULL;
				in->replay_len = in->replay_cap = 0;
				goto out;
			}
			in->replay = r;
			in->replay_cap = cap;
		}
		memcpy(in->replay + in->replay_len, in->rbuf, (size_t)n);
		in->replay_len += (size_t)n;
	}
out:
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
	/* The input starts at start_off (a standard input opened on a
	   file and read past its start): offsets count from there. */
	if (whence == SEEK_SET)
		offset += in->start_off;
	if ((r = lseek(in->fd, offset, whence)) < 0) {
		archive_set_error(a, errno, "%s", strerror(errno));
		return ARCHIVE_FATAL;
	}
	return r < in->start_off ? 0 : r - in->start_off;
}

static void
set_archive_error(pf_input *in, const char *what)
{
	const char *s = archive_error_string(in->a);

	if (s == NULL || *s == '\0') {
		/* libarchive gave no reason */
		snprintf(in->err, sizeof(in->err), "%s", what != NULL ? what :
		    "unknown error");
		return;
	}
	if (what != NULL)
		snprintf(in->err, sizeof(in->err), "%s: %s", what, s);
	else
		snprintf(in->err, sizeof(in->err), "%s", s);
}

/* Direct reads (PGN text from a pipe or a file): one read(2) of at most
   size bytes into p (read_into), 0 at the end, -1 with in->err set. */
static ssize_t
direct_read(pf_input *in, char *p, size_t size)
{
	ssize_t n;

	if ((n = read_into(in, p, size)) < 0)
		snprintf(in->err, sizeof(in->err), "%s", strerror(errno));
	return n;
}

/* Read the input directly from here on (pf_input_fill), as one member. */
static int
start_direct(pf_input *in)
{
	in->opened = in->direct = in->raw = 1;
	in->done = 1;	/* one member only */
	in->member_eof = 0;
	in->len = 0;
	in->buf[0] = '\0';
	return 1;
}

/* 1 when the input's first n bytes are a PGN tag's start (after an
   optional byte-order mark) and no tar header. */
static int
pgn_head(const char *head, size_t n)
{
	const unsigned char *b = (const unsigned char *)head;
	size_t i = 0;

	if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
		i = 3;
	if (n <= i || b[i] != '[')
		return 0;
	return n < 262 || memcmp(b + 257, "ustar", 5) != 0;
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
	ssize_t n;

	in->pre_pending = 0;
	if ((n = direct_read(in, in->rbuf, PF_INPUT_BUFSIZE)) < 0)
		return -1;
	in->pre_len = (size_t)n;
	in->pre_pending = 1;
	return !in->binary && pgn_head(in->rbuf, (size_t)n);
}

/* Hand our fd to libarchive; 0, or -1 with in->err set. */
static int
open_archive(pf_input *in)
{
	setup_archive(in->a, !in->text_only, in->binary);
	archive_read_set_callback_data(in->a, in);
	archive_read_set_read_callback(in->a, read_cb);
	archive_read_set_skip_callback(in->a, skip_cb);
	if (in->regular)
		archive_read_set_seek_callback(in->a, seek_cb);
	if (archive_read_open1(in->a) != ARCHIVE_OK) {
		set_archive_error(in, "cannot read");
		return -1;
	}
	return 0;
}

/*
 * libarchive takes a zero block at the start of the input for the end of
 * an empty tar archive, and would say no more.  Such an input is read
 * again with the archive formats off: as text, whose NUL bytes the reader
 * then reports as binary data, keeping the games after them.  A regular
 * file is read again from where it started, a pipe from the bytes kept in
 * replay.  0, or -1 with in->err set.
 */
static int
reopen_text(pf_input *in)
{
	in->recording = 0;
	archive_read_free(in->a);
	if ((in->a = archive_read_new()) == NULL) {
		snprintf(in->err, sizeof(in->err), "out of memory");
		return -1;
	}
	in->text_only = 1;
	if (in->regular) {
		if (lseek(in->fd, in->start_off, SEEK_SET) < 0) {
			snprintf(in->err, sizeof(in->err), "cannot read the "
			    "input again after a zero block: %s",
			    strerror(errno));
			return -1;
		}
	} else {
		if (in->replay_lost) {
			snprintf(in->err, sizeof(in->err), "starts with a "
			    "zero block and cannot be read again from a pipe");
			return -1;
		}
		in->replay_pending = in->replay_len > 0;
	}
	return open_archive(in);
}

/*
 * The first bytes of a plain member are a tar header that libarchive did
 * not take (its tar reader refuses a header whose checksum does not
 * match): the archive is damaged, and its bytes are no text.  The magic
 * is "ustar\0" (POSIX) or "ustar  \0" (GNU).  NULL, or the reason.
 */
static const char *
bad_tar_header(const pf_input *in)
{
	/* The numeric fields a tar header must have: mode, uid, gid, size,
	   mtime and the checksum, octal digits padded with spaces or NULs. */
	static const struct { int off, len; } num[] = {
		{ 100, 8 }, { 108, 8 }, { 116, 8 }, { 124, 12 }, { 136, 12 },
		{ 148, 8 }
	};
	const unsigned char *h = (const unsigned char *)in->buf;
	unsigned long sum = 0, want = 0;
	int i, digits = 0;

	if (in->len < 512 || memcmp(h + 257, "ustar", 5) != 0 ||
	    (h[262] != '\0' && h[262] != ' '))
		return NULL;
	/* "ustar" alone proves nothing (a player called Gustar, say): text
	   whose numeric fields are not octal is text. */
	for (size_t k = 0; k < sizeof(num) / sizeof(num[0]); k++) {
		int nd = 0;

		for (i = num[k].off; i < num[k].off + num[k].len; i++) {
			if (h[i] >= '0' && h[i] <= '7')
				nd++;
			else if (h[i] != ' ' && h[i] != '\0')
				return NULL;
		}
		if (nd == 0)
			return NULL;
	}
	for (i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	for (i = 148; i < 156 && h[i] == ' '; i++)
		;
	for (; i < 156 && h[i] >= '0' && h[i] <= '7'; i++, digits++)
		want = want * 8 + (unsigned long)(h[i] - '0');
	if (digits == 0 || sum != want)
		return "damaged tar archive: header checksum mismatch";
	return "damaged tar archive: header not readable";
}

/* 1 if the n bytes at p are all zero. */
static int
all_zero(const char *p, size_t n)
{
	while (n > 0 && *p == '\0') {
		p++;
		n--;
	}
	return n == 0;
}

/*
 * extra bytes after the compressed data so far, garbage if not all zero;
 * read_on: the rest of the input (read_some) is more of them.  0 for
 * zero padding, or -1 with in->err naming the garbage.
 */
static int
trailing(pf_input *in, uint64_t extra, int garbage, int read_on)
{
	ssize_t n;

	while (read_on && (n = read_some(in)) > 0) {
		extra += (uint64_t)n;
		garbage |= !all_zero(in->rbuf, (size_t)n);
	}
	if (!garbage)
		return 0;
	snprintf(in->err, sizeof(in->err), "%llu byte%s of trailing garbage "
	    "after the compressed data", (unsigned long long)extra,
	    extra == 1 ? "" : "s");
	return -1;
}

/*
 * At the end of a plain compressed member: the compressed data must end
 * where the input ends.  libarchive's gzip and bzip2 readers stop at
 * whatever is not a next member and say nothing; zero bytes (padding to
 * a block size) are let through as gzip(1) lets them.  From a pipe, the
 * rest is read to its end to count it.  0, or -1 with in->err set.
 */
static int
check_trailing(pf_input *in)
{
	la_int64_t used = archive_filter_bytes(in->a, -1);
	uint64_t extra = 0;
	int garbage = 0;

	if (archive_filter_count(in->a) < 2 || used < 0)
		return 0;	/* not compressed */
	if (in->regular) {
		struct stat st;
		off_t at = in->start_off + (off_t)used;

		if (fstat(in->fd, &st) < 0 || st.st_size <= at)
			return 0;
		extra = (uint64_t)(st.st_size - at);
		while (!garbage && at < st.st_size) {
			ssize_t n = pread(in->fd, in->rbuf, PF_INPUT_BUFSIZE,
			    at);

			if (n <= 0) {
				garbage = 1;
				break;
			}
			garbage = !all_zero(in->rbuf, (size_t)n);
			at += n;
		}
	} else {
		if (in->raw_read > (uint64_t)used) {
			extra = in->raw_read - (uint64_t)used;
			/* the tail of the last block handed out; anything
			   before it is no longer at hand */
			garbage = extra > in->last_n ||
			    !all_zero(in->last_blk + in->last_n - extra,
			    (size_t)extra);
		}
		return trailing(in, extra, garbage, 1);
	}
	return trailing(in, extra, garbage, 0);
}

/*
 * Compressed bytes at hand in rbuf (read when none are left): 1, 0 at
 * the end of the input between frames or members, -1 with in->err set
 * (truncated: the message for an end inside one).
 */
static int
native_input(pf_input *in, const char *truncated)
{
	ssize_t n;

	if (in->zin_pos < in->zin_len)
		return 1;
	if ((n = read_some(in)) < 0) {
		snprintf(in->err, sizeof(in->err), "%s", strerror(errno));
		return -1;
	}
	if (n == 0) {
		if (!in->zmid)
			return 0;
		snprintf(in->err, sizeof(in->err), "%s", truncated);
		return -1;
	}
	in->zin_pos = 0;
	in->zin_len = (size_t)n;
	return 1;
}

/*
 * zstd text (native_head: gzip's is gz_more) is decompressed here rather
 * than by libarchive, whose zstd reader drops the text it has decoded but
 * not handed out when it meets damage (tens of games before a damaged
 * frame or garbage at the end): here every byte decoded before the
 * damage is handed out.  libzstd hands out nothing of a call that fails,
 * so a call is given the input of one step (a frame's header, a block's
 * header or its content), and none while text of the block before waits
 * to go out.  Damage only the frame's checksum finds (a block that
 * decodes, to other text) is found at the frame's end.  The messages are
 * libarchive's.  The text goes straight into buf.  1 (text added), 0 at
 * the end, -1 with in->err set.
 */
static int
zstd_more(pf_input *in)
{
	size_t was = in->len;

	for (;;) {
		ZSTD_inBuffer zi;
		ZSTD_outBuffer zo = { in->buf, CAP, in->len };
		/* the step libzstd asks for less the next block's header it
		   would read with it (a damaged one would fail the call); at
		   a frame's start its magic number and descriptor */
		size_t r, want = in->zwant > 3 ? in->zwant - 3 :
		    in->zwant ? in->zwant : 5;
		int k;

		if ((k = native_input(in, "Truncated zstd input")) <= 0)
			return k;
		zi.src = in->rbuf;
		zi.pos = in->zin_pos;
		zi.size = in->zin_len;
		if (in->zfull)
			zi.size = zi.pos;
		else if (want < zi.size - zi.pos)
			zi.size = zi.pos + want;
		r = ZSTD_decompressStream(in->zd, &zo, &zi);
		in->zin_pos = zi.pos;
		in->len = zo.pos;
		if (ZSTD_isError(r)) {
			snprintf(in->err, sizeof(in->err), "Zstd "
			    "decompression failed: %s", ZSTD_getErrorName(r));
			return -1;
		}
		in->zmid = r != 0;
		in->zwant = r;
		in->zfull = zo.pos == zo.size;
		if (in->len > was)
			return 1;
	}
}

static int
is_blank_ctl(char c)
{
	return c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	    c == '\v';
}

/*
 * After the last frame or member: the rest of the input, from rbuf on,
 * must be zero bytes (padding); anything else is named as libarchive's
 * check_trailing names it.  0 at a clean end, -1 with in->err set.
 */
static int
native_trailing(pf_input *in)
{
	uint64_t extra = in->zin_len - in->zin_pos;
	int garbage = !all_zero(in->rbuf + in->zin_pos, (size_t)extra);

	in->zin_pos = in->zin_len;
	return trailing(in, extra, garbage, 1);
}

/*
 * After a member, with compressed bytes at hand: do the next two start a
 * member (1f 8b)?  1 or 0, -1 with in->err set.  A lone 1f at the end of
 * the input is a member cut short, as gzip(1) reads it.
 */
static int
gz_magic(pf_input *in)
{
	ssize_t n;

	if ((unsigned char)in->rbuf[in->zin_pos] != 0x1f)
		return 0;
	if (in->zin_len - in->zin_pos == 1) {	/* the second byte tells */
		in->rbuf[0] = 0x1f;
		in->zin_pos = 0;
		in->zin_len = 1;
		if ((n = read_into(in, in->rbuf + 1,
		    PF_INPUT_BUFSIZE - 1)) < 0) {
			snprintf(in->err, sizeof(in->err), "%s",
			    strerror(errno));
			return -1;
		}
		if (n == 0) {
			snprintf(in->err, sizeof(in->err),
			    "truncated gzip input");
			return -1;
		}
		in->zin_len += (size_t)n;
	}
	return (unsigned char)in->rbuf[in->zin_pos + 1] == 0x8b;
}

/*
 * gzip text, as zstd_more: every byte decoded before damage is handed
 * out (libarchive's gzip reader, like its zstd reader, dropped what it
 * had decoded: tens of games before a cut, every game of a small file).
 * Members follow one another; after the last, only zero bytes may
 * follow.  The messages are libarchive's, zlib's reason added.
 */
static int
gz_more(pf_input *in)
{
	z_stream *z = in->gz;
	size_t was = in->len;

	for (;;) {
		int r;

		if ((r = native_input(in, "truncated gzip input")) <= 0)
			return r;
		if (!in->zmid) {
			/* the next member (its magic, 1f 8b, as gzip(1)
			   tells one), or the end: zeros or garbage */
			if ((r = gz_magic(in)) <= 0)
				return r < 0 ? -1 : native_trailing(in);
			inflateReset(z);
			in->zmid = 1;
		}
		z->next_in = (unsigned char *)in->rbuf + in->zin_pos;
		z->avail_in = (uInt)(in->zin_len - in->zin_pos);
		z->next_out = (unsigned char *)in->buf + in->len;
		z->avail_out = (uInt)(CAP - in->len);
		r = inflate(z, Z_NO_FLUSH);
		in->zin_pos = in->zin_len - z->avail_in;
		in->len = CAP - z->avail_out;
		if (r == Z_STREAM_END)
			in->zmid = 0;
		else if (r != Z_OK && !(r == Z_BUF_ERROR && z->avail_in == 0)) {
			snprintf(in->err, sizeof(in->err), "gzip decompression "
			    "failed%s%s", z->msg != NULL ? ": " : "",
			    z->msg != NULL ? z->msg : "");
			return -1;
		}
		if (in->len > was)
			return 1;
	}
}

/*
 * Read the text of kind (NATIVE_ZSTD or NATIVE_GZIP) from here on: from
 * byte at of the file (a frame's or a member's start), or (at < 0, a
 * pipe) from the block in rbuf read ahead.
 */
static int
native_start(pf_input *in, int kind, int64_t at)
{
	if (kind == NATIVE_ZSTD) {
		if (in->zd == NULL &&
		    (in->zd = ZSTD_createDStream()) == NULL)
			goto nomem;
		ZSTD_DCtx_reset(in->zd, ZSTD_reset_session_only);
	} else if (in->gz == NULL) {
		if ((in->gz = calloc(1, sizeof(*in->gz))) == NULL)
			goto nomem;
		if (inflateInit2(in->gz, 16 + MAX_WBITS) != Z_OK) {
			free(in->gz);
			in->gz = NULL;
			goto nomem;
		}
	}
	in->zin_pos = in->zin_len = 0;
	if (at < 0) {
		in->zin_len = in->pre_len;
		in->pre_pending = 0;
	} else if (lseek(in->fd, (off_t)at, SEEK_SET) < 0) {
		snprintf(in->err, sizeof(in->err), "%s", strerror(errno));
		return -1;
	}
	in->native = kind;
	in->zmid = 0;
	in->zwant = 0;
	in->zfull = 0;
	in->len = 0;
	in->buf[0] = '\0';
	in->consumed = 0;
	in->blk_len = 0;
	in->member_eof = in->fail_pending = 0;
	in->done = 1;		/* the member is the whole input */
	return 0;
nomem:
	snprintf(in->err, sizeof(in->err), "out of memory");
	return -1;
}

/* The first cap bytes of zstd text src decodes to, into head; *bad: it
   met damage (or cannot go on). */
static size_t
zstd_head(pf_input *in, const char *src, size_t n, char *head, size_t cap,
    int *bad)
{
	ZSTD_inBuffer zi = { src, n, 0 };
	ZSTD_outBuffer zo = { head, cap, 0 };

	if (in->zd == NULL && (in->zd = ZSTD_createDStream()) == NULL) {
		*bad = 1;
		return 0;
	}
	ZSTD_DCtx_reset(in->zd, ZSTD_reset_session_only);
	while (zo.pos < zo.size && zi.pos < zi.size) {
		size_t was = zi.pos + zo.pos;

		if (ZSTD_isError(ZSTD_decompressStream(in->zd, &zo, &zi)) ||
		    zi.pos + zo.pos == was) {
			*bad = 1;
			break;
		}
	}
	return zo.pos;
}

/* The same for gzip (the first member: its end ends the look). */
static size_t
gz_head(const char *src, size_t n, char *head, size_t cap, int *bad)
{
	z_stream z;
	size_t len;
	int r;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		*bad = 1;
		return 0;
	}
	z.next_in = (unsigned char *)src;
	z.avail_in = (uInt)n;
	z.next_out = (unsigned char *)head;
	z.avail_out = (uInt)cap;
	r = inflate(&z, Z_NO_FLUSH);
	if (r != Z_OK && !(r == Z_BUF_ERROR && z.avail_in == 0))
		*bad = 1;	/* damage, or the member's end */
	len = cap - z.avail_out;
	inflateEnd(&z);
	return len;
}

/*
 * The compression the n bytes at b start with: NATIVE_ZSTD (a zstd
 * frame, or a skippable frame first, as pzstd writes), NATIVE_GZIP
 * (deflate), NATIVE_NONE; -1 when n is too short to tell and b could
 * still begin one.
 */
static int
magic_kind(const char *b, size_t n)
{
	static const char zm[4] = "\x28\xb5\x2f\xfd", gm[3] = "\x1f\x8b\x08";
	static const char sm[3] = "\x50\x2a\x4d";	/* skippable: 0x5? */
	size_t k = n < 4 ? n : 4;

	if (n >= 4 && (memcmp(b, zm, 4) == 0 ||
	    (pf_get32((const uint8_t *)b) & ZSTD_MAGIC_SKIPPABLE_MASK) ==
	    ZSTD_MAGIC_SKIPPABLE_START))
		return NATIVE_ZSTD;
	if (n >= 3 && memcmp(b, gm, 3) == 0)
		return NATIVE_GZIP;
	if (n < 4 && (memcmp(b, zm, k) == 0 ||
	    (n < 3 && memcmp(b, gm, k) == 0) ||
	    (n > 0 && ((unsigned char)b[0] & 0xf0) == 0x50 &&
	    memcmp(b + 1, sm + 1, k - 1) == 0)))
		return -1;
	return NATIVE_NONE;
}

/*
 * Do the n bytes at src start zstd or gzip text: do the first 512 bytes
 * it decodes to (or all it decodes to, up to damage or the end: ended,
 * no more input after src) have no control bytes but white space, and no
 * tar header?  Then no archive and no other compressed data is inside,
 * and the text can be read here (zstd_more, gz_more) rather than by
 * libarchive, which drops the text it decoded but did not hand out when
 * it meets damage.  NATIVE_ZSTD or NATIVE_GZIP, NATIVE_NONE (0) when not,
 * -1 when it is text so far and more input is needed to tell.  Binary
 * data may hold any bytes: then only an archive inside (tar, zip) or
 * another compression (zstd in gzip, say) leaves it to libarchive.
 */
static int
text_head(pf_input *in, const char *src, size_t n, int ended)
{
	char head[512];
	size_t len, i;
	int kind, bad = 0;

	if ((kind = magic_kind(src, n)) <= 0)
		return kind < 0 && !ended ? -1 : 0;
	len = kind == NATIVE_ZSTD ?
	    zstd_head(in, src, n, head, sizeof(head), &bad) :
	    gz_head(src, n, head, sizeof(head), &bad);
	for (i = 0; i < len && !in->binary; i++)
		if ((unsigned char)head[i] < 0x20 && !is_blank_ctl(head[i]))
			return 0;
	if (!bad && !ended && len < sizeof(head))
		return -1;
	if (len == 0 || (len >= 262 && memcmp(head + 257, "ustar", 5) == 0))
		return 0;
	if (in->binary && (magic_kind(head, len) != NATIVE_NONE ||
	    (len >= 4 && memcmp(head, "PK\3\4", 4) == 0)))
		return 0;
	return kind;
}

/*
 * Is the input zstd or gzip text (text_head)?  Then it is read here
 * (native_start), from a file and from a pipe alike, and libarchive never
 * opens it.  A file's first block tells; a pipe is read on into rbuf
 * (after the block detect_direct read) while it cannot tell: a slow
 * writer's first block may end inside the first frame's header.  The
 * first bytes are kept for cut_header.  A file whose head is PGN text
 * (pgn_head, as detect_direct tells it of a pipe) is READ_DIRECT: read
 * directly too, as is gzip data the caller inflates (keep_gzip).  The
 * kind, 0, or -1 on a read error.
 */
static int
native_head(pf_input *in)
{
	ssize_t n;
	int t;

	if (in->regular) {
		n = pread(in->fd, in->rbuf, PF_INPUT_BUFSIZE, in->start_off);
		in->first_n = n < 4 ? (n > 0 ? (size_t)n : 0) : 4;
		memcpy(in->first, in->rbuf, in->first_n);
		/* (a read error: libarchive's to say) */
		if (n <= 0)
			return 0;
		if ((t = text_head(in, in->rbuf, (size_t)n, 1)) == 0 &&
		    !in->binary && pgn_head(in->rbuf, (size_t)n))
			t = READ_DIRECT;
		return t == NATIVE_GZIP && in->keep_gzip ? READ_DIRECT : t;
	}
	while ((t = text_head(in, in->rbuf, in->pre_len,
	    in->pre_len == PF_INPUT_BUFSIZE)) < 0) {
		if ((n = read_into(in, in->rbuf + in->pre_len,
		    PF_INPUT_BUFSIZE - in->pre_len)) < 0) {
			snprintf(in->err, sizeof(in->err), "%s",
			    strerror(errno));
			return -1;
		}
		if (n == 0) {
			t = text_head(in, in->rbuf, in->pre_len, 1);
			break;
		}
		in->pre_len += (size_t)n;
	}
	in->first_n = in->pre_len < 4 ? in->pre_len : 4;
	memcpy(in->first, in->rbuf, in->first_n);
	return t == NATIVE_GZIP && in->keep_gzip ? READ_DIRECT : t;
}

/*
 * libarchive reads a gzip or zstd file cut inside its header as plain
 * data (no filter takes it): the input's first bytes are the magic of
 * one, and its "text" would be the compressed bytes.  The reason, or
 * NULL.
 */
static const char *
cut_header(const pf_input *in)
{
	switch (magic_kind((const char *)in->first, in->first_n)) {
	case NATIVE_GZIP:
		return "cannot read: truncated or damaged gzip input";
	case NATIVE_ZSTD:
		return "cannot read: truncated or damaged zstd input";
	}
	return NULL;
}

int
pf_input_next_member(pf_input *in)
{
	struct archive_entry *e;
	int r, failed = in->member_failed;

	in->member_failed = in->member_warned = 0;
	in->fail_pending = in->sniffed = 0;
	in->rstate = 0;
	if (in->done)
		return 0;
	if (!in->opened && !in->regular) {
		int d = detect_direct(in);

		if (d < 0) {
			in->done = 1;
			return -1;
		}
		if (d == 1)
			return start_direct(in);
	}
	if (!in->opened) {
		int kind = native_head(in);

		if (kind == READ_DIRECT)	/* read(2) on from start_off */
			return start_direct(in);
		in->opened = 1;
		if (kind < 0 || (kind > 0 && native_start(in, kind,
		    in->regular ? (int64_t)in->start_off : -1) < 0)) {
			in->done = 1;
			return -1;
		}
		if (kind > 0)
			goto native;
		if (open_archive(in) < 0) {
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
		if (r == ARCHIVE_EOF && in->headers == 0 && !in->text_only &&
		    (archive_format(in->a) & ARCHIVE_FORMAT_BASE_MASK) ==
		    ARCHIVE_FORMAT_TAR) {
			/* a zero block first: no archive, read it as text */
			if (reopen_text(in) < 0) {
				in->done = 1;
				return -1;
			}
			continue;
		}
		if (in->recording) {	/* not needed again */
			in->recording = 0;
			free(in->replay);
			in->replay = NULL;
			in->replay_len = in->replay_cap = 0;
		}
		if (r == ARCHIVE_EOF) {
			in->done = 1;
			return 0;
		}
		if (r == ARCHIVE_RETRY) {
			/* a damaged header (a tar checksum): libarchive
			   looks for the next good one, a block at a time.
			   The stretch is a member of its own that fails. */
			if (in->skipping)
				continue;
			set_archive_error(in, "damaged header; the archive "
			    "is read on from the next good one");
			if ((in->member = strdup("(damaged header)")) ==
			    NULL) {
				snprintf(in->err, sizeof(in->err),
				    "out of memory");
				in->done = 1;
				return -1;
			}
			in->skipping = 1;
			in->member_failed = 1;
			in->member_eof = in->fail_pending = 1;
			return 1;
		}
		in->skipping = 0;
		if (r < ARCHIVE_WARN) {
			set_archive_error(in, failed ? "cannot read past the "
			    "damaged member" : "cannot read");
			in->done = 1;
			return -1;
		}
		in->headers++;
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
	if (0) {
native:
		in->raw = 1;
		in->headers++;
	}
	in->member_eof = 0;
	if (in->raw && !in->native &&
	    archive_format(in->a) == ARCHIVE_FORMAT_EMPTY)
		in->member_eof = 1;
	if (in->raw && !in->native && !in->member_eof && !in->text_only &&
	    archive_filter_count(in->a) == 1) {
		const char *why = cut_header(in);

		if (why != NULL) {
			snprintf(in->err, sizeof(in->err), "%s", why);
			in->member_eof = in->done = 1;
			return -1;
		}
	}
	if (in->raw && !in->member_eof) {
		/* The first block, to look at: a tar header here is one
		   libarchive refused. */
		const char *pos = NULL, *end = NULL, *why;

		if (pf_input_fill(in, &pos, &end, 512) < 0)
			in->fail_pending = 1;
		else if ((why = bad_tar_header(in)) != NULL) {
			snprintf(in->err, sizeof(in->err), "%s", why);
			in->len = 0;
			in->buf[0] = '\0';
			in->member_eof = in->done = 1;
			return -1;
		}
	}
	return 1;
}

int
pf_input_zstd_text(const pf_input *in, int *fd, uint64_t *start)
{
	if (in->native != NATIVE_ZSTD || !in->regular || in->member_eof ||
	    in->fail_pending)
		return 0;
	*fd = in->fd;
	*start = (uint64_t)in->start_off;
	return 1;
}

int
pf_input_resume(pf_input *in, uint64_t at)
{
	if (native_start(in, NATIVE_ZSTD, (int64_t)at) < 0) {
		in->member_eof = 1;
		return -1;
	}
	return 0;
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

/*
 * Text in UTF-16 or UTF-32 (as Windows editors save "Unicode"), told by
 * its byte-order mark or, without one, by ASCII in every other unit: it
 * would read as binary data or bad tags, game by game.  The n bytes at b
 * are a member's first.  The encoding's name, or NULL.
 */
static const char *
wide_text(const unsigned char *b, size_t n)
{
	size_t i, k;
	int le = 1, be = 1;

	if (n >= 4 && memcmp(b, "\xff\xfe\0\0", 4) == 0)
		return "UTF-32LE";
	if (n >= 4 && memcmp(b, "\0\0\xfe\xff", 4) == 0)
		return "UTF-32BE";
	if (n >= 2 && b[0] == 0xff && b[1] == 0xfe)
		return "UTF-16LE";
	if (n >= 2 && b[0] == 0xfe && b[1] == 0xff)
		return "UTF-16BE";
	/* no mark: printable ASCII or white space, each byte paired with a
	   NUL, through the first 16 bytes (or all there are) */
	if ((k = n < 16 ? n & ~(size_t)1 : 16) < 4)
		return NULL;
	for (i = 0; i < k; i += 2) {
		int lo = (b[i] >= 0x20 && b[i] < 0x7f) || is_blank_ctl(
		    (char)b[i]), hi = (b[i + 1] >= 0x20 && b[i + 1] < 0x7f) ||
		    is_blank_ctl((char)b[i + 1]);

		le &= lo && b[i + 1] == 0;
		be &= b[i] == 0 && hi;
	}
	return le ? "UTF-16LE" : be ? "UTF-16BE" : NULL;
}

/* An error in pf_input_fill: the window is what was read before it. */
static int
fill_failed(pf_input *in, const char **pos, const char **end)
{
	in->member_eof = 1;
	in->buf[in->len] = '\0';
	*pos = in->buf;
	*end = in->buf + in->len;
	return -1;
}

int
pf_input_fill(pf_input *in, const char **pos, const char **end, size_t want)
{
	size_t unread;
	int added = 0;

	if (want > PF_INPUT_KEEP)
		want = PF_INPUT_KEEP;
	if (*pos == NULL || *end == NULL) {
		/* a new window: what pf_input_next_member read ahead */
		*pos = in->buf;
		*end = in->buf + in->len;
		/* from a pipe, enough when it ends a line (as below) */
		if (!in->regular && !in->binary && in->len > 0 &&
		    memchr(in->buf, '\n', in->len) != NULL)
			return 1;
	}
	unread = (size_t)(*end - *pos);
	if (in->member_eof) {
		if (in->fail_pending) {
			in->fail_pending = 0;
			return -1;
		}
		return 0;
	}
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

		if (in->native) {
			int r = in->native == NATIVE_ZSTD ? zstd_more(in) :
			    gz_more(in);

			if (r == 0) {
				in->member_eof = 1;
				break;
			}
			if (r < 0)
				return fill_failed(in, pos, end);
			added = 1;
			/* from a pipe, as below: what ends a line, when
			   the bytes read so far are used up */
			if (!in->regular && !in->binary &&
			    in->zin_pos == in->zin_len &&
			    in->buf[in->len - 1] == '\n')
				break;
			continue;
		}
		if (in->blk_len == 0 && in->direct && in->pre_pending) {
			/* the block detect_direct read: copied below */
			in->pre_pending = 0;
			in->blk = in->rbuf;
			in->blk_len = in->pre_len;
			continue;
		}
		if (in->blk_len == 0 && in->direct) {
			/* read(2) straight into the window: no copy */
			ssize_t r = direct_read(in, in->buf + in->len,
			    CAP - in->len);

			if (r == 0) {
				in->member_eof = 1;
				break;
			}
			if (r < 0)
				return fill_failed(in, pos, end);
			in->len += (size_t)r;
			added = 1;
			/* from a pipe, as below */
			if (!in->regular && !in->binary &&
			    in->buf[in->len - 1] == '\n')
				break;
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
				if (in->member_warned) {
					/* the data is all there but wrong (a
					   zip member's CRC): say so; the
					   archive itself goes on */
					in->member_failed = 1;
					return fill_failed(in, pos, end);
				}
				if (in->raw && check_trailing(in) < 0) {
					in->done = 1;
					return fill_failed(in, pos, end);
				}
				break;
			}
			if (r == ARCHIVE_WARN && !in->member_warned) {
				set_archive_error(in, NULL);
				in->member_warned = 1;
			}
			if (r < ARCHIVE_WARN) {
				set_archive_error(in, NULL);
				/* Zip members are compressed one by one: the
				   next one may well be intact. */
				if ((archive_format(in->a) &
				    ARCHIVE_FORMAT_BASE_MASK) ==
				    ARCHIVE_FORMAT_ZIP)
					in->member_failed = 1;
				else
					in->done = 1;
				return fill_failed(in, pos, end);
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
		if (!in->regular && !in->binary && in->blk_len == 0 &&
		    in->buf[in->len - 1] == '\n')
			break;
	}
	if (!in->sniffed && !in->binary && (in->len >= 16 ||
	    in->member_eof || in->consumed > 0)) {
		const char *wide = NULL;

		in->sniffed = 1;
		if (in->consumed == 0)
			wide = wide_text((const unsigned char *)in->buf,
			    in->len);
		if (wide != NULL) {
			/* its bytes are no text: none is handed out, and an
			   archive goes on to its next member */
			snprintf(in->err, sizeof(in->err), "%s text, not "
			    "UTF-8 (convert it: iconv -f %s -t UTF-8)", wide,
			    wide);
			in->len = 0;
			return fill_failed(in, pos, end);
		}
	}
	in->buf[in->len] = '\0';
	*pos = in->buf;
	*end = in->buf + in->len;
	/* 0 only at the end of the member: a window that already held want
	   bytes is not an end. */
	return added || !in->member_eof;
}

ssize_t
pf_input_read(pf_input *in, void *buf, size_t n)
{
	size_t k;
	int r;

	for (;;) {
		/* the window's bytes first, also before an end or error */
		if (in->rstate != 0 && in->rpos < in->rend) {
			k = (size_t)(in->rend - in->rpos);
			if (k > n)
				k = n;
			memcpy(buf, in->rpos, k);
			in->rpos += k;
			return (ssize_t)k;
		}
		switch (in->rstate) {
		case 0:		/* the member's first window */
			in->rpos = in->rend = NULL;
			in->rstate = 1;
			break;
		case 2:
			return 0;
		case 3:
			in->rstate = 2;
			return -1;
		}
		/* the window's bytes are all handed out: a new one, with
		   what comes at once (as read(2): a pipe's reader goes on
		   with what it has, and its idle hook runs before a wait) */
		if ((r = pf_input_fill(in, &in->rpos, &in->rend, 1)) <= 0)
			in->rstate = r < 0 ? 3 : 2;
	}
}

ssize_t
pf_input_source(void *in, void *buf, size_t n, char *err, size_t errsize)
{
	ssize_t r = pf_input_read(in, buf, n);

	if (r < 0)
		snprintf(err, errsize, "%s", pf_input_error(in));
	return r;
}

int
pf_input_natcmp(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a,
	    *q = (const unsigned char *)b;

	while (*p != '\0' && *q != '\0') {
		if (*p >= '0' && *p <= '9' && *q >= '0' && *q <= '9') {
			const unsigned char *i = p, *j = q;
			size_t m, n;

			/* leading zeros count for nothing */
			while (*i == '0')
				i++;
			while (*j == '0')
				j++;
			for (m = 0; i[m] >= '0' && i[m] <= '9'; m++)
				;
			for (n = 0; j[n] >= '0' && j[n] <= '9'; n++)
				;
			if (m != n)
				return m < n ? -1 : 1;
			for (; m > 0; m--, i++, j++)
				if (*i != *j)
					return *i < *j ? -1 : 1;
			p = i;
			q = j;
			continue;
		}
		if (*p != *q)
			return *p < *q ? -1 : 1;
		p++;
		q++;
	}
	if (*p != *q)
		return *p < *q ? -1 : 1;
	/* equal as numbers ("07" and "7"): the bytes decide */
	return strcmp(a, b);
}

static int
natcmp_paths(const void *a, const void *b)
{
	return pf_input_natcmp(*(char *const *)a, *(char *const *)b);
}

struct pathlist {
	char **v;	/* the paths */
	char **why;	/* NULL, or why v[i] is not read (malloc'd) */
	size_t n, cap;
};

/* Add p, and why (NULL or a reason it is not read), to l (l owns them
   then).  0 / -1. */
static int
add_path(struct pathlist *l, char *p, char *why)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		char **v, **w;

		if ((v = realloc(l->v, cap * sizeof(*v))) == NULL)
			return -1;
		l->v = v;
		if ((w = realloc(l->why, cap * sizeof(*w))) == NULL)
			return -1;
		l->why = w;
		l->cap = cap;
	}
	l->v[l->n] = p;
	l->why[l->n++] = why;
	return 0;
}

/*
 * A directory on the way down from the operand to the one walked, that
 * one included: a directory with the same device and inode as one of
 * them is that one again (a link to "." or "..", a bind mount), and
 * walking it would go round, down ever more paths.
 */
struct ancestor {
	dev_t			 dev;
	ino_t			 ino;
	const char		*path;
	const struct ancestor	*up;
};

/*
 * The regular files under dir into l (up: dir and the directories above
 * it; depth: levels left); what cannot be looked at below it (a link to
 * nothing, a subdirectory that cannot be read) goes in too, for the
 * caller's open to name, and a directory that is one of up again goes
 * in with the reason it is not entered.  0 / -1 (dir itself cannot be
 * read, or memory is short).
 */
static int
dir_walk(const char *dir, const struct ancestor *up, struct pathlist *l,
    int depth, char *err, size_t errsize)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	struct pathlist here = { NULL, NULL, 0, 0 };
	const struct ancestor *a;
	struct ancestor self;
	size_t i, len;
	char *p, *why;
	int rc = 0;

	if ((d = opendir(dir)) == NULL) {
		snprintf(err, errsize, "%s: %s", dir, strerror(errno));
		return -1;
	}
	/* this directory's entries, sorted, then each taken in turn (a
	   subdirectory's files where its name sorts) */
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		len = strlen(dir) + strlen(de->d_name) + 2;
		if ((p = malloc(len)) == NULL)
			goto nomem;
		snprintf(p, len, "%s/%s", dir, de->d_name);
		if (add_path(&here, p, NULL) == -1) {
			free(p);
			goto nomem;
		}
	}
	if (errno != 0) {
		snprintf(err, errsize, "%s: %s", dir, strerror(errno));
		rc = -1;
		goto out;
	}
	if (here.n > 0)
		qsort(here.v, here.n, sizeof(*here.v), natcmp_paths);
	for (i = 0; i < here.n && rc == 0; i++) {
		int ok = stat(here.v[i], &st) == 0;

		for (a = ok && S_ISDIR(st.st_mode) ? up : NULL; a != NULL;
		    a = a->up)
			if (a->dev == st.st_dev && a->ino == st.st_ino)
				break;
		if (a != NULL) {
			len = strlen(a->path) + 64;
			if ((why = malloc(len)) == NULL)
				goto nomem;
			snprintf(why, len, "a directory loop (%s again), "
			    "not entered", a->path);
			if (add_path(l, here.v[i], why) == -1) {
				free(why);
				goto nomem;
			}
			here.v[i] = NULL;
			continue;
		}
		if (ok && S_ISDIR(st.st_mode) && depth > 1 &&
		    access(here.v[i], R_OK | X_OK) == 0) {
			self.dev = st.st_dev;
			self.ino = st.st_ino;
			self.path = here.v[i];
			self.up = up;
			rc = dir_walk(here.v[i], &self, l, depth - 1, err,
			    errsize);
			continue;
		}
		/* a regular file, or what cannot be looked at (the caller's
		   open names why); fifos, sockets and devices are left out */
		if (!ok || S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
			if (add_path(l, here.v[i], NULL) == -1)
				goto nomem;
			here.v[i] = NULL;
		}
	}
	goto out;
nomem:
	snprintf(err, errsize, "out of memory");
	rc = -1;
out:
	closedir(d);
	pf_input_free_paths(here.v, here.n);
	free(here.why);
	return rc;
}

int
pf_input_dir_files(const char *dir, char ***paths, char ***why, size_t *n,
    char *err, size_t errsize)
{
	struct pathlist l = { NULL, NULL, 0, 0 };
	struct ancestor root;
	struct stat st;
	size_t len = strlen(dir);
	char *top;

	*paths = *why = NULL;
	*n = 0;
	/* "chunks/" names its files "chunks/training.0.gz" */
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if ((top = strndup(dir, len)) == NULL) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	if (stat(top, &st) == -1) {
		snprintf(err, errsize, "%s: %s", top, strerror(errno));
		free(top);
		return -1;
	}
	root.dev = st.st_dev;
	root.ino = st.st_ino;
	root.path = top;
	root.up = NULL;
	if (dir_walk(top, &root, &l, 64, err, errsize) == -1) {
		free(top);
		pf_input_free_paths(l.v, l.n);
		pf_input_free_paths(l.why, l.n);
		return -1;
	}
	free(top);
	*paths = l.v;
	*why = l.why;
	*n = l.n;
	return 0;
}

void
pf_input_free_paths(char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int
pf_input_each_file(const char *path,
    int (*fn)(void *, const char *, const char *), void *arg, char *err,
    size_t errsize)
{
	struct stat st;
	char **paths, **why;
	size_t n, i;
	int rc = 0;

	if (strcmp(path, "-") == 0 || stat(path, &st) == -1 ||
	    !S_ISDIR(st.st_mode))
		return fn(arg, path, NULL);
	if (pf_input_dir_files(path, &paths, &why, &n, err, errsize) == -1)
		return -1;
	if (n == 0) {
		/* a mistake more likely than an empty input */
		snprintf(err, errsize, "%s: no files in this directory", path);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = fn(arg, paths[i], why[i]);
	pf_input_free_paths(paths, n);
	pf_input_free_paths(why, n);
	return rc;
}
