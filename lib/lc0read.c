/*
 * lc0read.c - lc0's training data, record by record (lc0.h): a chunk
 * file, or a tar archive of them, through libarchive (gzip, bzip2, xz or
 * zstd around either); a chunk that is
 * gzip data (as lc0 writes every chunk, and as the published tar archives
 * hold them) is inflated here, since libarchive leaves archive members as
 * they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <zlib.h>

#include "lc0.h"
#include "record.h"

#define INSIZE	(64u << 10)

struct pf_lc0_reader {
	struct archive *a;
	int fd, opened, done;
	/* the input's first bytes, looked at before libarchive reads them;
	   direct: a lone gzip chunk, inflated straight from fd */
	uint8_t buf[INSIZE];
	size_t peek_len, peek_pos;
	int direct;
	int in_chunk;		/* a chunk is being read */
	int gz;			/* it is gzip data */
	int gz_open;		/* z is initialised */
	int gz_ended;		/* at the end of a gzip member */
	z_stream z;
	const uint8_t *in;	/* the chunk's bytes not yet used */
	size_t in_len;
	int in_end;		/* archive_read_data said the chunk ended */
	char *chunk;		/* its name in an archive */
	uint64_t recno;
	char err[512];
};

pf_lc0_reader *
pf_lc0_reader_open(int fd)
{
	pf_lc0_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if ((r->a = archive_read_new()) == NULL) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	/* the filters that know their data by a magic number: lzma's would
	   take a record's first bytes for its header */
	archive_read_support_filter_gzip(r->a);
	archive_read_support_filter_bzip2(r->a);
	archive_read_support_filter_xz(r->a);
	archive_read_support_filter_zstd(r->a);
	archive_read_support_format_tar(r->a);
	archive_read_support_format_empty(r->a);
	archive_read_support_format_raw(r->a);
	r->fd = fd;
	return r;
}

void
pf_lc0_reader_free(pf_lc0_reader *r)
{
	if (r == NULL)
		return;
	if (r->gz_open)
		inflateEnd(&r->z);
	archive_read_free(r->a);
	free(r->chunk);
	free(r);
}

const char *
pf_lc0_reader_chunk(const pf_lc0_reader *r)
{
	return r->chunk;
}

uint64_t
pf_lc0_reader_recno(const pf_lc0_reader *r)
{
	return r->recno;
}

const char *
pf_lc0_reader_error(const pf_lc0_reader *r)
{
	return r->err;
}

static int
fail(pf_lc0_reader *r, const char *fmt, const char *s)
{
	snprintf(r->err, sizeof(r->err), fmt, s);
	return -1;
}

/* The input's next bytes: the peeked ones first, then fd's.  The count,
   0 at the end, -1 with errno. */
static ssize_t
next_bytes(pf_lc0_reader *r, const void **buf)
{
	ssize_t n;

	if (r->peek_pos < r->peek_len) {
		*buf = r->buf + r->peek_pos;
		n = (ssize_t)(r->peek_len - r->peek_pos);
		r->peek_pos = r->peek_len;
		return n;
	}
	do
		n = read(r->fd, r->buf, sizeof(r->buf));
	while (n == -1 && errno == EINTR);
	*buf = r->buf;
	return n;
}

static la_ssize_t
read_cb(struct archive *a, void *arg, const void **buf)
{
	pf_lc0_reader *r = arg;
	ssize_t n = next_bytes(r, buf);

	if (n < 0)
		archive_set_error(a, errno, "%s", strerror(errno));
	return n;
}

/*
 * Look at the input's first bytes: a lone gzip chunk (gzip data that
 * inflates to a V3 to V7 record's version) is read directly, so that every
 * record before damage comes out (libarchive's filter keeps back what it
 * decoded last); anything else goes to libarchive.  0 or -1.
 */
static int
peek(pf_lc0_reader *r)
{
	z_stream z;
	uint8_t head[4];
	ssize_t n;

	while (r->peek_len < 512) {
		n = read(r->fd, r->buf + r->peek_len, sizeof(r->buf) -
		    r->peek_len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return fail(r, "%s", strerror(errno));
		if (n == 0)
			break;
		r->peek_len += (size_t)n;
	}
	if (r->peek_len >= 2 && r->buf[0] == 0x1f && r->buf[1] == 0x8b) {
		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, 15 + 16) != Z_OK)
			return fail(r, "%s", strerror(ENOMEM));
		z.next_in = r->buf;
		z.avail_in = (uInt)r->peek_len;
		z.next_out = head;
		z.avail_out = sizeof(head);
		(void)inflate(&z, Z_NO_FLUSH);
		r->direct = z.avail_out == 0 && pf_get32(head) >= 3 &&
		    pf_get32(head) <= 7;
		inflateEnd(&z);
	}
	if (!r->direct && archive_read_open(r->a, r, NULL, read_cb, NULL) !=
	    ARCHIVE_OK)
		return fail(r, "%s", archive_error_string(r->a));
	return 0;
}

/* More of the chunk's raw bytes into r->in: 1, 0 at its end, -1. */
static int
more(pf_lc0_reader *r)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int rc;

	if (r->in_end)
		return 0;
	if (r->direct) {
		ssize_t n = next_bytes(r, &buf);

		if (n <= 0) {
			r->in_end = 1;
			if (n < 0) {
				r->done = 1;
				return fail(r, "%s", strerror(errno));
			}
			return 0;
		}
		r->in = buf;
		r->in_len = (size_t)n;
		return 1;
	}
	rc = archive_read_data_block(r->a, &buf, &len, &off);
	if (rc == ARCHIVE_EOF) {
		r->in_end = 1;
		return 0;
	}
	if (rc < ARCHIVE_WARN) {
		r->done = 1;
		return fail(r, "%s", archive_error_string(r->a));
	}
	r->in = buf;
	r->in_len = len;
	return 1;
}

/* The next chunk: 1, 0 none left, -1. */
static int
next_chunk(pf_lc0_reader *r)
{
	struct archive_entry *ent;
	const char *name = NULL;
	int rc;

	if (!r->opened) {
		r->opened = 1;
		if (peek(r) == -1) {
			r->done = 1;
			return -1;
		}
	} else if (r->direct) {
		r->done = 1;
		return 0;
	}
	for (;;) {
		if (r->direct) {
			name = NULL;
			break;
		}
		rc = archive_read_next_header(r->a, &ent);
		if (rc == ARCHIVE_EOF) {
			r->done = 1;
			return 0;
		}
		if (rc < ARCHIVE_WARN) {
			r->done = 1;
			return fail(r, "%s", archive_error_string(r->a));
		}
		if (archive_format(r->a) == ARCHIVE_FORMAT_EMPTY ||
		    (archive_format(r->a) != ARCHIVE_FORMAT_RAW &&
		    archive_entry_filetype(ent) != AE_IFREG))
			continue;
		break;
	}
	free(r->chunk);
	r->chunk = NULL;
	if (!r->direct && archive_format(r->a) != ARCHIVE_FORMAT_RAW)
		name = archive_entry_pathname(ent);
	if (name != NULL && (r->chunk = strdup(name)) == NULL) {
		r->done = 1;
		return fail(r, "%s", strerror(ENOMEM));
	}
	r->in_chunk = 1;
	r->in_end = 0;
	r->in_len = 0;
	r->recno = 0;
	r->gz = 0;
	/* gzip data (1f 8b) is inflated */
	if ((rc = more(r)) == -1)
		return -1;
	if (rc == 1 && r->in_len >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
		if (!r->gz_open) {
			memset(&r->z, 0, sizeof(r->z));
			if (inflateInit2(&r->z, 15 + 32) != Z_OK) {
				r->done = 1;
				return fail(r, "%s", strerror(ENOMEM));
			}
			r->gz_open = 1;
		} else
			inflateReset(&r->z);
		r->gz = 1;
		r->gz_ended = 0;
	}
	return 1;
}

/*
 * Fill out[have..want) from the chunk: the bytes out then holds (less than
 * want at its end), or -1.
 */
static long
get(pf_lc0_reader *r, uint8_t *out, size_t have, size_t want)
{
	size_t n;
	int rc;

	while (have < want) {
		if (r->in_len == 0) {
			if ((rc = more(r)) == -1)
				return -1;
			if (rc == 0) {
				if (r->gz && !r->gz_ended)
					return fail(r, "%s",
					    "gzip data cut short");
				break;
			}
		}
		if (!r->gz) {
			n = r->in_len < want - have ? r->in_len : want - have;
			memcpy(out + have, r->in, n);
			r->in += n;
			r->in_len -= n;
			have += n;
			continue;
		}
		r->z.next_in = (Bytef *)(uintptr_t)r->in;
		r->z.avail_in = (uInt)r->in_len;
		r->z.next_out = out + have;
		r->z.avail_out = (uInt)(want - have);
		rc = inflate(&r->z, Z_NO_FLUSH);
		have = want - r->z.avail_out;
		r->in = r->z.next_in;
		r->in_len = r->z.avail_in;
		if (rc == Z_STREAM_END) {
			/* another gzip member may follow */
			r->gz_ended = 1;
			if (r->in_len == 0 && (rc = more(r)) <= 0) {
				if (rc == -1)
					return -1;
				break;
			}
			inflateReset(&r->z);
			r->gz_ended = 0;
		} else if (rc != Z_OK && rc != Z_BUF_ERROR)
			return fail(r, "gzip data damaged (%s)", r->z.msg ?
			    r->z.msg : "inflate");
	}
	return (long)have;
}

int
pf_lc0_read(pf_lc0_reader *r, uint8_t rec[PF_LC0_MAX_SIZE], size_t *size,
    int *first)
{
	long n;
	size_t want;
	int rc;
	char what[64];

	for (;;) {
		if (r->done)
			return 0;
		if (!r->in_chunk) {
			if ((rc = next_chunk(r)) <= 0)
				return rc;
		}
		/* the version says the size */
		if ((n = get(r, rec, 0, 4)) == 4)
			n = get(r, rec, 4, want =
			    pf_lc0_record_size(pf_get32(rec)));
		else
			want = PF_LC0_V6_SIZE;
		if (n == -1) {
			r->in_chunk = 0;
			r->recno++;
			return -1;
		}
		if ((size_t)n == want) {
			*size = want;
			*first = r->recno++ == 0;
			return 1;
		}
		r->in_chunk = 0;
		if (n > 0) {
			snprintf(what, sizeof(what), "truncated record (%ld of "
			    "%zu bytes)", n, want);
			r->recno++;
			return fail(r, "%s", what);
		}
	}
}
