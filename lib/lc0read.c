/*
 * lc0read.c - lc0's training data, record by record (lc0.h): one chunk
 * at a time from a source of bytes (a pf_input's member); a chunk that is
 * gzip data (as lc0 writes every chunk, and as the published tar archives
 * hold them) is inflated here, since an archive's members come as they
 * are stored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "lc0.h"
#include "record.h"

#define INSIZE	(64u << 10)

struct pf_lc0_reader {
	pf_source_fn *src;
	void *arg;
	int started;		/* the chunk's first bytes were looked at */
	int ended;		/* nothing more from this chunk */
	int in_end;		/* the source said the chunk ended */
	int gz;			/* the chunk is gzip data */
	int gz_open;		/* z is initialised */
	int gz_ended;		/* at the end of a gzip member */
	z_stream z;
	uint8_t buf[INSIZE];
	const uint8_t *in;	/* the chunk's bytes not yet used */
	size_t in_len;
	uint64_t recno;
	char err[512];
};

pf_lc0_reader *
pf_lc0_reader_open(void)
{
	pf_lc0_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->ended = 1;
	return r;
}

void
pf_lc0_reader_free(pf_lc0_reader *r)
{
	if (r == NULL)
		return;
	if (r->gz_open)
		inflateEnd(&r->z);
	free(r);
}

void
pf_lc0_reader_start(pf_lc0_reader *r, pf_source_fn *src, void *arg)
{
	r->src = src;
	r->arg = arg;
	r->started = r->ended = r->in_end = r->gz = 0;
	r->in_len = 0;
	r->recno = 0;
	r->err[0] = '\0';
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
	r->ended = 1;
	return -1;
}

/* More of the chunk's stored bytes into r->in, after the keep bytes
   at r->buf: 1, 0 at its end, -1. */
static int
more_after(pf_lc0_reader *r, size_t keep)
{
	char why[256];
	ssize_t n;

	if (r->in_end)
		return 0;
	if ((n = r->src(r->arg, r->buf + keep, sizeof(r->buf) - keep, why,
	    sizeof(why))) < 0)
		return fail(r, "%s", why);
	if (n == 0) {
		r->in_end = 1;
		return 0;
	}
	r->in = r->buf;
	r->in_len = keep + (size_t)n;
	return 1;
}

static int
more(pf_lc0_reader *r)
{
	return more_after(r, 0);
}

/* The chunk's first bytes: gzip data (1f 8b) is inflated.  0 or -1. */
static int
start(pf_lc0_reader *r)
{
	r->started = 1;
	/* two bytes tell; a source may hand out one at a time */
	while (r->in_len < 2) {
		int rc;

		if (r->in_len == 1)
			r->buf[0] = r->in[0];
		if ((rc = more_after(r, r->in_len)) <= 0)
			return rc;
	}
	if (r->in[0] != 0x1f || r->in[1] != 0x8b)
		return 0;
	if (!r->gz_open) {
		memset(&r->z, 0, sizeof(r->z));
		if (inflateInit2(&r->z, 15 + 32) != Z_OK)
			return fail(r, "%s", strerror(ENOMEM));
		r->gz_open = 1;
	} else
		inflateReset(&r->z);
	r->gz = 1;
	r->gz_ended = 0;
	return 0;
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
	char what[80];

	if (r->ended)
		return 0;
	if (!r->started && start(r) == -1) {
		r->recno++;
		return -1;
	}
	/* the version says the size; a chunk's first says what it is, as
	   lczero-training's chunkparser reads it: no version it knows, and
	   the chunk is no lc0 data (its rest is not read as records) */
	if ((n = get(r, rec, 0, 4)) == 4 && r->recno == 0 &&
	    (pf_get32(rec) < 3 || pf_get32(rec) > 7)) {
		snprintf(what, sizeof(what), "version %u, not 3 to 7: not "
		    "lc0's training data", pf_get32(rec));
		r->recno++;
		return fail(r, "%s", what);
	}
	if (n == 4)
		n = get(r, rec, 4, want = pf_lc0_record_size(pf_get32(rec)));
	else
		want = PF_LC0_V6_SIZE;
	if (n == -1) {
		r->recno++;
		return -1;
	}
	if ((size_t)n == want) {
		*size = want;
		*first = r->recno++ == 0;
		return 1;
	}
	r->ended = 1;
	if (n == 0)
		return 0;
	snprintf(what, sizeof(what), "truncated record (%ld of %zu bytes)",
	    n, want);
	r->recno++;
	return fail(r, "%s", what);
}
