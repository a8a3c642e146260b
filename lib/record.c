/*
 * record.c - reader and writer of the posflow record stream (posflow(5)).
 *
 * The reader keeps one buffer of decoded stream bytes.  A whole block
 * (header and payload) is made contiguous in it, its checksum is verified
 * once, and records are then decoded in place: a record's ext pointer
 * points into that buffer, so nothing is copied per record.  Compressed
 * input (zstd frames, gzip members) is decoded into the same buffer from a
 * second one holding raw bytes; the kind of input is found from its magic
 * bytes at every stream or frame boundary, so plain, zstd and gzip streams
 * may follow each other in one input.
 *
 * The writer fills a block in memory and writes it with one write(2) (or
 * one zstd flush), so a reader downstream always sees whole blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "record.h"

#define STREAM_MAGIC	"\x89PFS"
#define BLOCK_MAGIC	"\x89PFB"
#define HEADER_LEN_MAX	65536u
#define READ_CHUNK	(256u << 10)	/* bytes asked of read(2) at once */
#define RAW_CHUNK	(128u << 10)	/* compressed bytes read at once */
#define ERR_MAX		512

/* ---- raw codec --------------------------------------------------------- */

/* check_ext_area() without the reason: the writer's fast test. */
static inline int
ext_area_ok(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;

	while ((size_t)(end - p) >= PF_EXT_HEADER_SIZE) {
		uint32_t elen = pf_get32(p + 4);

		if (elen > (size_t)(end - p) - PF_EXT_HEADER_SIZE)
			return 0;
		p += PF_EXT_HEADER_SIZE + elen;
	}
	return p == end;
}

/*
 * Check that ext[0..len) is a chain of extensions that fills it exactly.
 * 0, or -1 with the reason in err.
 */
static int
check_ext_area(const uint8_t *p, size_t len, char *err, size_t errlen)
{
	const uint8_t *end = p + len;

	while (p < end) {
		size_t left = (size_t)(end - p);
		uint32_t elen;

		if (left < PF_EXT_HEADER_SIZE) {
			if (err != NULL)
				snprintf(err, errlen, "%zu stray bytes after the "
				    "last extension", left);
			return -1;
		}
		elen = pf_get32(p + 4);
		if (elen > left - PF_EXT_HEADER_SIZE) {
			if (err != NULL)
				snprintf(err, errlen, "extension type %u length "
				    "%u runs past the end of the record",
				    (unsigned)pf_get16(p), (unsigned)elen);
			return -1;
		}
		p += PF_EXT_HEADER_SIZE + elen;
	}
	return 0;
}

long
pf_record_decode(const uint8_t *buf, size_t len, pf_record *rec, char *err,
    size_t errlen)
{
	uint32_t rlen;

	if (len < 4) {
		if (err != NULL)
			snprintf(err, errlen, "record length field cut short "
			    "(%zu bytes left)", len);
		return -1;
	}
	rlen = pf_get32(buf);
	if (rlen < PF_CORE_SIZE || rlen > len) {
		if (err != NULL)
			snprintf(err, errlen, "record length %u out of range "
			    "(%u to %zu)", (unsigned)rlen,
			    (unsigned)PF_CORE_SIZE, len);
		return -1;
	}
	memcpy(rec->pos, buf + 4, PF_PACKED_SIZE);
	rec->game_id = pf_get64(buf + 32);
	rec->ply = pf_get16(buf + 40);
	rec->move = pf_get16(buf + 42);
	rec->result = buf[44];
	rec->flags = pf_get16(buf + 46);
	rec->ext = buf + PF_CORE_SIZE;
	rec->ext_len = rlen - PF_CORE_SIZE;
	if (rec->ext_len > 0 &&
	    check_ext_area(rec->ext, rec->ext_len, err, errlen) == -1)
		return -1;
	return (long)rlen;
}

/* ---- reader ------------------------------------------------------------ */

enum { M_PLAIN, M_ZSTD, M_GZIP };
enum { S_HEADER, S_BLOCK, S_RECORDS, S_DONE };

struct pf_reader {
	int fd, own_fd;
	char *name;
	char err[ERR_MAX];
	char ioerr[256];	/* read or decompression failure, if any */

	int mode;		/* M_*: how raw bytes become stream bytes */
	int boundary;		/* a compressed frame just ended */
	uint8_t *in;		/* raw (compressed) bytes */
	size_t in_pos, in_end, in_cap;
	int in_eof;
	ZSTD_DStream *zd;
	size_t zwant;		/* zstd: the input its next step takes */
	int zfull;		/* zstd: output of a block waits to go out */
	z_stream zs;
	int zs_init;

	uint8_t *buf;		/* decoded stream bytes */
	size_t pos, end, cap;
	uint64_t base;		/* stream offset of buf[0] */
	int eof;		/* nothing more will be decoded */

	int state;		/* S_* */
	uint64_t streams;	/* stream headers read */
	unsigned sflags;	/* the current stream's header flags */
	uint64_t blocks;	/* block headers read */
	uint64_t recno;		/* records accounted for, lost ones included */
	uint64_t returned;

	/* The block being read (state S_RECORDS). */
	const uint8_t *pay, *bp, *bend;
	uint64_t blk_off;	/* stream offset of its header */
	uint64_t pay_off;	/* stream offset of its payload */
	uint64_t blk_first;	/* recno before its first record */
	uint32_t blk_count, blk_done;
	int blk_cut;		/* the input ends inside this block */
	uint64_t cut_off;	/* where it ends */

	struct pf_writer *flush;
	int (*idle)(void *, int);
	void *idle_arg;
};

static void
rerr(pf_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "%s: ", r->name);
	if (n < 0 || (size_t)n >= sizeof(r->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
}

static pf_reader *
reader_new(int fd, int own_fd, const char *name)
{
	pf_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->fd = fd;
	r->own_fd = own_fd;
	r->cap = 2 * READ_CHUNK;
	if ((r->name = strdup(name != NULL ? name : "stdin")) == NULL ||
	    (r->buf = malloc(r->cap)) == NULL) {
		free(r->name);
		free(r);
		return NULL;
	}
	r->mode = M_PLAIN;
	r->state = S_HEADER;
	return r;
}

pf_reader *
pf_reader_open_fd(int fd, const char *name)
{
	return reader_new(fd, 0, name);
}

pf_reader *
pf_reader_open_path(const char *path)
{
	pf_reader *r;
	int fd, saved;

	if (strcmp(path, "-") == 0)
		return reader_new(STDIN_FILENO, 0, "stdin");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((r = reader_new(fd, 1, path)) == NULL) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return r;
}

void
pf_reader_free(pf_reader *r)
{
	if (r == NULL)
		return;
	if (r->own_fd)
		close(r->fd);
	ZSTD_freeDStream(r->zd);
	if (r->zs_init)
		inflateEnd(&r->zs);
	free(r->in);
	free(r->buf);
	free(r->name);
	free(r);
}

void
pf_reader_set_flush(pf_reader *r, struct pf_writer *w)
{
	r->flush = w;
}

void
pf_reader_set_idle(pf_reader *r, int (*fn)(void *, int), void *arg)
{
	r->idle = fn;
	r->idle_arg = arg;
}

const char *
pf_reader_error(const pf_reader *r)
{
	return r->err;
}

const char *
pf_reader_name(const pf_reader *r)
{
	return r->name;
}

uint64_t
pf_reader_records(const pf_reader *r)
{
	return r->returned;
}

uint64_t
pf_reader_recno(const pf_reader *r)
{
	return r->recno;
}

int
pf_reader_buffered(const pf_reader *r)
{
	const uint8_t *h;
	size_t avail;

	if (r->state == S_RECORDS && r->bp < r->bend)
		return 1;
	if (r->state != S_BLOCK && !(r->state == S_RECORDS && !r->blk_cut))
		return 0;
	/* The next block is already decoded whole: reading it takes no
	   read(2).  (An end block or a stream header may need one.) */
	avail = r->end - r->pos;
	h = r->buf + r->pos;
	return avail >= PF_BLOCK_HEADER_SIZE &&
	    memcmp(h, BLOCK_MAGIC, 4) == 0 && pf_get32(h + 8) > 0 &&
	    pf_get32(h + 4) > 0 &&
	    avail - PF_BLOCK_HEADER_SIZE >= (size_t)pf_get32(h + 4);
}

uint64_t
pf_reader_offset(const pf_reader *r)
{
	if (r->state == S_RECORDS)
		return r->pay_off + (uint64_t)(r->bp - r->pay);
	return r->base + r->pos;
}

uint64_t
pf_reader_position(const pf_reader *r)
{
	off_t at = lseek(r->fd, 0, SEEK_CUR);
	uint64_t fed, made, taken = pf_reader_offset(r);

	if (at < 0 || r->mode == M_PLAIN)
		return taken;
	fed = (uint64_t)at - (r->in_end - r->in_pos);
	made = r->base + r->end;
	return made > 0 && taken < made ?
	    (uint64_t)((double)fed * (double)taken / (double)made) : fed;
}

/*
 * read(2) into p.  Before a read that would block, the linked writer
 * hands its buffered records downstream.  Returns bytes read, 0 at end of
 * input, -1 on error (reason in ioerr).
 */
static ssize_t
read_raw(pf_reader *r, uint8_t *p, size_t n)
{
	ssize_t got;

	if ((r->flush != NULL && pf_writer_pending(r->flush) > 0) ||
	    r->idle != NULL) {
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

		if (poll(&pfd, 1, 0) == 0) {
			if (r->flush != NULL)
				(void)pf_writer_flush(r->flush);
			if (r->idle != NULL && r->idle(r->idle_arg, r->fd) ==
			    -1) {
				snprintf(r->ioerr, sizeof(r->ioerr),
				    "interrupted");
				return -1;
			}
		}
	}
	for (;;) {
		got = read(r->fd, p, n);
		if (got >= 0)
			return got;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

			(void)poll(&pfd, 1, -1);
			continue;
		}
		snprintf(r->ioerr, sizeof(r->ioerr), "read error: %s",
		    strerror(errno));
		return -1;
	}
}

/* Magic numbers of compressed data at p[0..n): M_ZSTD, M_GZIP or M_PLAIN. */
static int
sniff(const uint8_t *p, size_t n)
{
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f &&
	    p[3] == 0xfd)
		return M_ZSTD;
	if (n >= 4 && (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d &&
	    p[3] == 0x18)
		return M_ZSTD;		/* skippable frame */
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return M_GZIP;
	return M_PLAIN;
}

/* Get the decoder for mode ready for a new frame.  0 / -1. */
static int
start_codec(pf_reader *r, int mode)
{
	r->mode = mode;
	r->boundary = 0;
	if (mode == M_ZSTD) {
		if (r->zd == NULL && (r->zd = ZSTD_createDStream()) == NULL)
			goto nomem;
		ZSTD_initDStream(r->zd);
		r->zwant = 0;
		r->zfull = 0;
	} else if (mode == M_GZIP) {
		if (!r->zs_init) {
			memset(&r->zs, 0, sizeof(r->zs));
			if (inflateInit2(&r->zs, 16 + MAX_WBITS) != Z_OK)
				goto nomem;
			r->zs_init = 1;
		} else
			inflateReset(&r->zs);
	}
	return 0;
nomem:
	snprintf(r->ioerr, sizeof(r->ioerr), "out of memory");
	return -1;
}

/*
 * Switch from plain to compressed input: the bytes at buf[pos..end) are
 * really compressed, so they move to the raw buffer.  0 / -1.
 */
static int
plain_to_codec(pf_reader *r, int mode)
{
	size_t n = r->end - r->pos;

	if (r->in == NULL) {
		r->in_cap = n > RAW_CHUNK ? n : RAW_CHUNK;
		if ((r->in = malloc(r->in_cap)) == NULL)
			goto nomem;
	} else if (n > r->in_cap) {
		uint8_t *p = realloc(r->in, n);

		if (p == NULL)
			goto nomem;
		r->in = p;
		r->in_cap = n;
	}
	memcpy(r->in, r->buf + r->pos, n);
	r->in_pos = 0;
	r->in_end = n;
	r->in_eof = r->eof;
	r->eof = 0;
	r->end = r->pos;
	return start_codec(r, mode);
nomem:
	snprintf(r->ioerr, sizeof(r->ioerr), "out of memory");
	return -1;
}

/* Make sure the raw buffer holds at least want bytes unless at its end.
   0 / -1. */
static int
raw_fill(pf_reader *r, size_t want)
{
	ssize_t got;

	while (r->in_end - r->in_pos < want && !r->in_eof) {
		if (r->in_pos > 0) {
			memmove(r->in, r->in + r->in_pos, r->in_end - r->in_pos);
			r->in_end -= r->in_pos;
			r->in_pos = 0;
		}
		got = read_raw(r, r->in + r->in_end, r->in_cap - r->in_end);
		if (got < 0)
			return -1;
		if (got == 0)
			r->in_eof = 1;
		r->in_end += (size_t)got;
	}
	return 0;
}

/*
 * A compressed frame ended: find out what the raw bytes after it are.
 * 0 / -1.
 */
static int
after_frame(pf_reader *r)
{
	int mode;

	if (raw_fill(r, 4) == -1)
		return -1;
	if (r->in_pos == r->in_end) {
		r->eof = 1;
		r->boundary = 0;
		return 0;
	}
	mode = sniff(r->in + r->in_pos, r->in_end - r->in_pos);
	if (mode != M_PLAIN)
		return start_codec(r, mode);
	/* Plain bytes follow: hand them over to the stream buffer. */
	r->mode = M_PLAIN;
	r->boundary = 0;
	if (r->in_end - r->in_pos > r->cap - r->end) {
		/* No record points into buf while it is being filled. */
		size_t cap = r->end + (r->in_end - r->in_pos) + READ_CHUNK;
		uint8_t *p = realloc(r->buf, cap);

		if (p == NULL) {
			snprintf(r->ioerr, sizeof(r->ioerr), "out of memory");
			return -1;
		}
		r->buf = p;
		r->cap = cap;
	}
	memcpy(r->buf + r->end, r->in + r->in_pos, r->in_end - r->in_pos);
	r->end += r->in_end - r->in_pos;
	r->in_pos = r->in_end = 0;
	if (r->in_eof)
		r->eof = 1;
	return 0;
}

/*
 * Add decoded bytes at buf[end..cap), which has room for at least
 * RAW_CHUNK bytes.  0 (maybe setting eof) or -1 on a read or decoding
 * error (the reason in ioerr).
 */
static int
produce(pf_reader *r)
{
	size_t before, in_before;
	ssize_t got;

	if (r->mode == M_PLAIN) {
		got = read_raw(r, r->buf + r->end, r->cap - r->end);
		if (got < 0)
			return -1;
		if (got == 0)
			r->eof = 1;
		r->end += (size_t)got;
		return 0;
	}
	if (r->boundary)
		return after_frame(r);
	if (r->in_pos == r->in_end && raw_fill(r, 1) == -1)
		return -1;
	/* Called even without input: the decoder may hold output. */
	before = r->end;
	in_before = r->in_pos;
	if (r->mode == M_ZSTD) {
		/*
		 * libzstd hands out nothing of a call that fails, so a call
		 * is given the input of one step (a frame's header, a
		 * block's header or its content, less the next block's
		 * header the hint counts) and none while output of the
		 * block before waits to go out: the records decoded before
		 * damage are read (input.c's zstd_more does the same).
		 */
		size_t want = r->zwant > 3 ? r->zwant - 3 :
		    r->zwant ? r->zwant : 5;
		ZSTD_inBuffer zin = { r->in, r->in_end, r->in_pos };
		ZSTD_outBuffer zout = { r->buf, r->cap, r->end };
		size_t ret;

		if (r->zfull)
			zin.size = zin.pos;
		else if (want < zin.size - zin.pos)
			zin.size = zin.pos + want;
		ret = ZSTD_decompressStream(r->zd, &zout, &zin);
		if (ZSTD_isError(ret)) {
			snprintf(r->ioerr, sizeof(r->ioerr), "zstd: %s",
			    ZSTD_getErrorName(ret));
			return -1;
		}
		r->in_pos = zin.pos;
		r->end = zout.pos;
		r->zwant = ret;
		r->zfull = zout.pos == zout.size;
		if (ret == 0)
			r->boundary = 1;
	} else {
		int ret;

		r->zs.next_in = r->in + r->in_pos;
		r->zs.avail_in = (uInt)(r->in_end - r->in_pos);
		r->zs.next_out = r->buf + r->end;
		r->zs.avail_out = (uInt)(r->cap - r->end);
		ret = inflate(&r->zs, Z_NO_FLUSH);
		r->in_pos = r->in_end - r->zs.avail_in;
		r->end = r->cap - r->zs.avail_out;
		if (ret == Z_STREAM_END)
			r->boundary = 1;
		else if (ret != Z_OK && ret != Z_BUF_ERROR) {
			snprintf(r->ioerr, sizeof(r->ioerr), "gzip: %s",
			    r->zs.msg != NULL ? r->zs.msg : "bad data");
			return -1;
		}
	}
	if (!r->boundary && r->end == before && r->in_pos == in_before &&
	    r->in_pos == r->in_end && r->in_eof) {
		/* The input ends inside a compressed frame. */
		snprintf(r->ioerr, sizeof(r->ioerr), "truncated %s data",
		    r->mode == M_ZSTD ? "zstd" : "gzip");
		return -1;
	}
	return 0;
}

/*
 * Make buf[pos..end) hold at least need bytes, or all that is left.  A
 * read or decoding error ends the input (eof) and is kept in ioerr.
 */
static int
fill(pf_reader *r, size_t need)
{
	if (r->end - r->pos >= need)
		return 0;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->base += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	if (need + READ_CHUNK > r->cap) {
		size_t cap = need + READ_CHUNK;
		uint8_t *p = realloc(r->buf, cap);

		if (p == NULL) {
			snprintf(r->ioerr, sizeof(r->ioerr), "out of memory");
			r->eof = 1;
			return -1;
		}
		r->buf = p;
		r->cap = cap;
	}
	while (r->end - r->pos < need && !r->eof) {
		if (produce(r) == -1) {
			r->eof = 1;
			return -1;
		}
	}
	return 0;
}

/* The input ends (or failed) inside a stream: report it, then stop. */
static int
cut(pf_reader *r, uint64_t at, const char *where)
{
	if (r->ioerr[0] != '\0')
		rerr(r, "%s at offset %llu %s after record %llu", r->ioerr,
		    (unsigned long long)at, where,
		    (unsigned long long)r->recno);
	else
		rerr(r, "truncated at offset %llu %s after record %llu",
		    (unsigned long long)at, where,
		    (unsigned long long)r->recno);
	r->state = S_DONE;
	return -1;
}

/* Read a stream header: 1 read, 0 clean end of input, -1 error. */
static int
read_header(pf_reader *r)
{
	const uint8_t *h;
	uint64_t off;
	size_t avail;
	uint32_t hlen;
	uint16_t version, flags;
	int mode;

	fill(r, 4);
	avail = r->end - r->pos;
	if (r->mode == M_PLAIN && avail > 0 &&
	    (mode = sniff(r->buf + r->pos, avail)) != M_PLAIN) {
		/* A decoding error in fill() is kept in ioerr and reported
		   where the data ends. */
		if (plain_to_codec(r, mode) == -1) {
			rerr(r, "%s", r->ioerr);
			r->state = S_DONE;
			return -1;
		}
		fill(r, 4);
		avail = r->end - r->pos;
	}
	off = r->base + r->pos;
	if (avail == 0) {
		r->state = S_DONE;
		if (r->ioerr[0] != '\0') {
			rerr(r, "%s at offset %llu after record %llu",
			    r->ioerr, (unsigned long long)off,
			    (unsigned long long)r->recno);
			return -1;
		}
		return 0;
	}
	if (memcmp(r->buf + r->pos, STREAM_MAGIC,
	    avail < 4 ? avail : 4) != 0) {
		rerr(r, "not a posflow stream (bad magic at offset %llu)",
		    (unsigned long long)off);
		r->state = S_DONE;
		return -1;
	}
	fill(r, PF_HEADER_SIZE);
	if (r->end - r->pos < PF_HEADER_SIZE)
		return cut(r, r->base + r->end, "in a stream header");
	h = r->buf + r->pos;
	version = pf_get16(h + 4);
	flags = pf_get16(h + 6);
	hlen = pf_get32(h + 8);
	r->state = S_DONE;
	if (version > PF_STREAM_VERSION) {
		rerr(r, "offset %llu: stream version %u is newer than this "
		    "reader (%d)", (unsigned long long)off, (unsigned)version,
		    PF_STREAM_VERSION);
		return -1;
	}
	if (version == 0) {
		rerr(r, "offset %llu: bad stream version 0",
		    (unsigned long long)off);
		return -1;
	}
	if (flags & ~PF_SF_KNOWN) {
		rerr(r, "offset %llu: unknown stream header flags 0x%04x",
		    (unsigned long long)off, (unsigned)(flags & ~PF_SF_KNOWN));
		return -1;
	}
	if (hlen < PF_HEADER_SIZE || hlen > HEADER_LEN_MAX) {
		rerr(r, "offset %llu: bad stream header length %u",
		    (unsigned long long)off, (unsigned)hlen);
		return -1;
	}
	fill(r, hlen);
	if (r->end - r->pos < hlen)
		return cut(r, r->base + r->end, "in a stream header");
	r->pos += hlen;
	r->sflags = flags;
	r->streams++;
	r->state = S_BLOCK;
	return 1;
}

/* 1 if p[0..4) starts a block or a stream. */
static int
is_magic(const uint8_t *p)
{
	return p[0] == 0x89 && p[1] == 'P' && p[2] == 'F' &&
	    (p[3] == 'B' || p[3] == 'S');
}

/*
 * The offset in p[0..n) of the first header that proves itself: a block
 * whose payload is all there and matches its checksum, or a version-1
 * stream header; 0 if none.  (A magic alone can occur inside records.)
 */
static size_t
verified_header(const uint8_t *p, size_t n, unsigned sflags)
{
	const uint8_t *q = p, *end = p + n;
	uint32_t len;

	while (end - q >= 4 && (q = memchr(q, 0x89, (size_t)(end - q))) !=
	    NULL && end - q >= 4) {
		if (memcmp(q, BLOCK_MAGIC, 4) == 0 &&
		    end - q >= PF_BLOCK_HEADER_SIZE) {
			len = pf_get32(q + 4);
			if ((size_t)(end - q) - PF_BLOCK_HEADER_SIZE >= len &&
			    pf_block_checksum(sflags, q +
			    PF_BLOCK_HEADER_SIZE, len) ==
			    pf_get64(q + 16))
				return (size_t)(q - p);
		} else if (memcmp(q, STREAM_MAGIC, 4) == 0 &&
		    end - q >= PF_HEADER_SIZE && pf_get16(q + 4) == 1)
			return (size_t)(q - p);
		q++;
	}
	return 0;
}

/*
 * After a damaged block header, find the next block (or stream) header
 * after the byte at pos, so that one flipped byte does not lose the rest
 * of the input.  Appends to the error message already in err where
 * reading resumes; returns -1 (the error stands either way).
 */
static int
resync(pf_reader *r)
{
	uint64_t from = r->base + r->pos;
	size_t n = strlen(r->err);
	const uint8_t *p, *end;

	r->pos++;
	for (;;) {
		fill(r, 4);
		end = r->buf + r->end;
		for (p = r->buf + r->pos; end - p >= 4; p++) {
			p = memchr(p, 0x89, (size_t)(end - p));
			if (p == NULL || end - p < 4)
				break;
			if (is_magic(p))
				goto found;
		}
		if (r->end - r->pos < 4 && r->eof) {
			snprintf(r->err + n, sizeof(r->err) - n, "; no block "
			    "follows (%llu bytes skipped)",
			    (unsigned long long)(r->base + r->end - from));
			r->pos = r->end;
			r->state = S_DONE;
			return -1;
		}
		/* Keep a possible partial magic at the end. */
		if (r->end - r->pos > 3)
			r->pos = r->end - 3;
	}
found:
	r->pos = (size_t)(p - r->buf);
	r->state = p[3] == 'B' ? S_BLOCK : S_HEADER;
	snprintf(r->err + n, sizeof(r->err) - n, "; resuming at offset %llu "
	    "(%llu bytes skipped)", (unsigned long long)(r->base + r->pos),
	    (unsigned long long)(r->base + r->pos - from));
	return -1;
}

/*
 * Read a block header and payload: 1 when records are ready (S_RECORDS)
 * or an end block was read (S_HEADER), -1 on an error.
 */
static int
read_block(pf_reader *r)
{
	const uint8_t *h;
	uint64_t off, first, last;
	uint32_t len, count;
	size_t avail, next;
	char lost[128];
	int damaged_count = 0;

	fill(r, PF_BLOCK_HEADER_SIZE);
	avail = r->end - r->pos;
	off = r->base + r->pos;
	if (avail == 0) {
		r->state = S_DONE;
		if (r->ioerr[0] != '\0') {
			rerr(r, "%s at offset %llu after block %llu and record "
			    "%llu", r->ioerr, (unsigned long long)off,
			    (unsigned long long)r->blocks,
			    (unsigned long long)r->recno);
			return -1;
		}
		rerr(r, "truncated: stream ends without an end block after "
		    "record %llu at offset %llu", (unsigned long long)r->recno,
		    (unsigned long long)off);
		return -1;
	}
	h = r->buf + r->pos;
	if (avail >= 4 && memcmp(h, STREAM_MAGIC, 4) == 0) {
		/* A stream cut at a block boundary, then another stream
		   (cat cut.pos good.pos): the next stream is readable. */
		rerr(r, "truncated: stream ends without an end block after "
		    "record %llu at offset %llu", (unsigned long long)r->recno,
		    (unsigned long long)off);
		r->state = S_HEADER;
		return -1;
	}
	r->blocks++;
	if (memcmp(h, BLOCK_MAGIC, avail < 4 ? avail : 4) != 0) {
		rerr(r, "block %llu at offset %llu: bad block magic",
		    (unsigned long long)r->blocks, (unsigned long long)off);
		return resync(r);
	}
	if (avail < PF_BLOCK_HEADER_SIZE) {
		char where[64];

		snprintf(where, sizeof(where), "in block %llu",
		    (unsigned long long)r->blocks);
		return cut(r, r->base + r->end, where);
	}
	len = pf_get32(h + 4);
	count = pf_get32(h + 8);
	if (len > PF_BLOCK_MAX) {
		rerr(r, "block %llu at offset %llu: payload length %u is over "
		    "the limit (%u)", (unsigned long long)r->blocks,
		    (unsigned long long)off, (unsigned)len,
		    (unsigned)PF_BLOCK_MAX);
		return resync(r);
	}
	if (len == 0) {
		if (count != 0) {
			rerr(r, "block %llu at offset %llu: empty block claims "
			    "%u records", (unsigned long long)r->blocks,
			    (unsigned long long)off, (unsigned)count);
			return resync(r);
		}
		r->pos += PF_BLOCK_HEADER_SIZE;
		r->state = S_HEADER;
		if (pf_get64(h + 16) != pf_block_checksum(r->sflags, h, 0)) {
			/* posflow(5): every block's checksum is checked. */
			rerr(r, "block %llu at offset %llu: end block "
			    "checksum mismatch", (unsigned long long)r->blocks,
			    (unsigned long long)off);
			return -1;
		}
		return 1;
	}
	fill(r, PF_BLOCK_HEADER_SIZE + (size_t)len);
	h = r->buf + r->pos;
	avail = r->end - r->pos;
	r->blk_off = off;
	r->pay_off = off + PF_BLOCK_HEADER_SIZE;
	r->pay = r->bp = h + PF_BLOCK_HEADER_SIZE;
	r->blk_first = r->recno;
	r->blk_count = count;
	r->blk_done = 0;
	if (avail < PF_BLOCK_HEADER_SIZE + (size_t)len &&
	    (next = verified_header(h + PF_BLOCK_HEADER_SIZE,
	    avail - PF_BLOCK_HEADER_SIZE, r->sflags)) != 0) {
		/* Not a cut: the length field is damaged, for a verified
		   header follows inside the claimed payload.  Go on there.
		   (The count, unchecked, is no more than the bytes hold.) */
		r->recno += count < next / PF_CORE_SIZE ? count :
		    next / PF_CORE_SIZE;
		rerr(r, "block %llu at offset %llu: payload length %u runs "
		    "past the end of the input; resuming at offset %llu "
		    "(%llu bytes skipped)", (unsigned long long)r->blocks,
		    (unsigned long long)off, (unsigned)len,
		    (unsigned long long)(off + PF_BLOCK_HEADER_SIZE + next),
		    (unsigned long long)(PF_BLOCK_HEADER_SIZE + next));
		r->pos += PF_BLOCK_HEADER_SIZE + next;
		r->state = r->buf[r->pos + 3] == 'B' ? S_BLOCK : S_HEADER;
		return -1;
	}
	if (avail < PF_BLOCK_HEADER_SIZE + (size_t)len) {
		/* Cut inside the payload: hand out what is complete. */
		r->bend = h + avail;
		r->blk_cut = 1;
		r->cut_off = r->base + r->end;
		r->pos = r->end;
		r->state = S_RECORDS;
		return 1;
	}
	r->bend = r->bp + len;
	r->blk_cut = 0;
	if (pf_block_checksum(r->sflags, r->bp, len) == pf_get64(h + 16)) {
		r->pos += PF_BLOCK_HEADER_SIZE + (size_t)len;
		r->state = S_RECORDS;
		return 1;
	}
	first = r->recno + 1;
	if (count > len / PF_CORE_SIZE) {
		/* the count no checksum covers is damaged: the records
		   lost are no more than the payload holds */
		r->recno += len / PF_CORE_SIZE;
		snprintf(lost, sizeof(lost), "records from %llu lost, at "
		    "most %u; its record count, %u, is damaged",
		    (unsigned long long)first, (unsigned)(len / PF_CORE_SIZE),
		    (unsigned)count);
		damaged_count = 1;
	} else {
		last = r->recno + count;
		r->recno += count;
	}
	if (damaged_count)
		;
	else if (count == 0)
		snprintf(lost, sizeof(lost), "no records lost");
	else if (count == 1)
		snprintf(lost, sizeof(lost), "record %llu lost",
		    (unsigned long long)first);
	else
		snprintf(lost, sizeof(lost), "records %llu..%llu lost",
		    (unsigned long long)first, (unsigned long long)last);
	rerr(r, "block %llu at offset %llu: checksum mismatch (%s)",
	    (unsigned long long)r->blocks, (unsigned long long)off, lost);
	/* Usually the payload is damaged and the next block follows; if the
	   header itself is (its length), look for the next block. */
	next = PF_BLOCK_HEADER_SIZE + (size_t)len;
	fill(r, next + 4);
	h = r->buf + r->pos;
	avail = r->end - r->pos;
	if (avail == next || (avail >= next + 4 && is_magic(h + next))) {
		r->pos += next;
		r->state = S_BLOCK;
		return -1;
	}
	return resync(r);
}

/* The records of the current block are used up: check its count. */
static int
end_block(pf_reader *r)
{
	uint32_t count = r->blk_count, done = r->blk_done;

	if (r->blk_cut) {
		char where[64];

		snprintf(where, sizeof(where), "in block %llu",
		    (unsigned long long)r->blocks);
		return cut(r, r->cut_off, where);
	}
	r->state = S_BLOCK;
	if (done == count)
		return 0;
	r->recno = r->blk_first + (done > count ? done : count);
	rerr(r, "block %llu at offset %llu: holds %u records but its header "
	    "says %u", (unsigned long long)r->blocks,
	    (unsigned long long)r->blk_off, (unsigned)done, (unsigned)count);
	return -1;
}

int
pf_reader_next(pf_reader *r, pf_record *rec)
{
	char why[256], lost[96];
	uint64_t last;
	size_t len;
	long n;
	int rc;

	r->err[0] = '\0';
	for (;;) {
		switch (r->state) {
		case S_RECORDS:
			if (r->bp < r->bend) {
				n = pf_record_decode(r->bp,
				    (size_t)(r->bend - r->bp), rec, why,
				    sizeof(why));
				if (n > 0) {
					r->bp += n;
					r->blk_done++;
					r->recno++;
					r->returned++;
					return 1;
				}
				if (r->blk_cut && (r->bend - r->bp < 4 ||
				    pf_get32(r->bp) > (size_t)(r->bend -
				    r->bp))) {
					/* The record is cut: that is the
					   truncation, reported next. */
					r->bend = r->bp;
					continue;
				}
				len = r->bend - r->bp >= 4 ?
				    pf_get32(r->bp) : 0;
				if (len >= PF_CORE_SIZE &&
				    len <= (size_t)(r->bend - r->bp)) {
					/* its length holds (the block's
					   checksum did): the next record
					   follows it */
					rerr(r, "record %llu at offset %llu: %s",
					    (unsigned long long)r->recno + 1,
					    (unsigned long long)
					    pf_reader_offset(r), why);
					r->bp += len;
					r->blk_done++;
					r->recno++;
					return -1;
				}
				/* Nothing after a record of no length in
				   this block can be found: skip the rest. */
				last = r->blk_first + (r->blk_count >
				    r->blk_done ? r->blk_count :
				    r->blk_done + 1);
				if (r->blk_cut || last == r->recno + 1)
					lost[0] = '\0';
				else
					snprintf(lost, sizeof(lost), "; records "
					    "%llu..%llu of the block lost",
					    (unsigned long long)r->recno + 2,
					    (unsigned long long)last);
				rerr(r, "record %llu at offset %llu: %s%s",
				    (unsigned long long)r->recno + 1,
				    (unsigned long long)pf_reader_offset(r),
				    why, lost);
				if (r->blk_cut) {
					r->bend = r->bp;
				} else {
					r->recno = last;
					r->state = S_BLOCK;
				}
				return -1;
			}
			if (end_block(r) == -1)
				return -1;
			break;
		case S_BLOCK:
			if (read_block(r) == -1)
				return -1;
			break;
		case S_HEADER:
			if ((rc = read_header(r)) <= 0)
				return rc;
			break;
		default:
			return 0;
		}
	}
}

/* ---- writer ------------------------------------------------------------ */

struct pf_writer {
	int fd;
	char *name;
	char err[ERR_MAX];
	int level;
	size_t target;
	int flush_ms;

	uint8_t *blk;		/* block header space + payload */
	size_t blk_len, blk_cap;
	uint32_t blk_count;
	uint64_t first_ms;	/* when the first buffered record came */

	int header_done, closed, failed, epipe;
	uint64_t records;

	ZSTD_CCtx *cctx;
	uint8_t *zout;
	size_t zout_cap;
	int bulk;		/* zstd workers: blocks go in unflushed */
};

#define PF_ZSTD_JOB	(2 << 20)	/* bytes of a zstd worker's job */

static void
werr(pf_writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(w->err, sizeof(w->err), "%s: ", w->name);
	if (n < 0 || (size_t)n >= sizeof(w->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(w->err + n, sizeof(w->err) - n, fmt, ap);
	va_end(ap);
	w->failed = 1;
}

static int	write_header(pf_writer *);
static int	emit(pf_writer *, const uint8_t *, size_t, ZSTD_EndDirective);

static uint64_t
now_ms(void)
{
	struct timespec ts;

#ifdef CLOCK_MONOTONIC_COARSE
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == -1)
#endif
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

pf_writer *
pf_writer_open_fd(int fd, const char *name, const pf_writer_opts *opts)
{
	struct stat st;
	pf_writer *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->fd = fd;
	w->target = PF_BLOCK_TARGET;
	w->flush_ms = 200;
	if (opts != NULL) {
		w->level = opts->zstd_level;
		if (opts->block_size > 0)
			w->target = opts->block_size < PF_BLOCK_MAX ?
			    opts->block_size : PF_BLOCK_MAX;
		if (opts->flush_ms != 0)
			w->flush_ms = opts->flush_ms;
	}
	w->blk_cap = PF_BLOCK_HEADER_SIZE + w->target + 4096;
	w->blk_len = PF_BLOCK_HEADER_SIZE;
	if ((w->name = strdup(name != NULL ? name : "stdout")) == NULL ||
	    (w->blk = malloc(w->blk_cap)) == NULL)
		goto fail;
	if (w->level != 0) {
		if (w->level < ZSTD_minCLevel() ||
		    w->level > ZSTD_maxCLevel()) {
			errno = EINVAL;
			goto fail;
		}
		w->zout_cap = ZSTD_CStreamOutSize();
		if ((w->cctx = ZSTD_createCCtx()) == NULL ||
		    (w->zout = malloc(w->zout_cap)) == NULL ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx,
		    ZSTD_c_compressionLevel, w->level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx,
		    ZSTD_c_checksumFlag, 1))) {
			errno = ENOMEM;
			goto fail;
		}
	}
	/*
	 * A file outlives this process and is read without its exit status,
	 * so it starts as a stream that is visibly unfinished (a header, no
	 * end block) instead of as zero bytes, which read as a valid empty
	 * stream: a run killed before its first block is never taken for a
	 * complete one.  A failure here is kept like any write error and
	 * returned by the next call.  On a pipe the header still goes with
	 * the first block, so that nothing is written before a flush: a
	 * writer killed before its first block leaves a reader there zero
	 * bytes, and only the writer's exit status tells.
	 */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return w;
	/*
	 * To a regular file no reader waits on each block: zstd's workers
	 * may compress them, in parallel with the caller and each other
	 * (ZSTDMT's output is the same for any number of workers; a libzstd
	 * built without threads refuses, and the caller's thread does it).
	 */
	if (w->cctx != NULL && opts != NULL && opts->zstd_workers > 0 &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_nbWorkers,
	    opts->zstd_workers))) {
		/* jobs of 2 MiB (zstd's own choice at level 3 is 8 MiB):
		   about 5 MiB of memory a worker instead of 20 */
		(void)ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_jobSize,
		    PF_ZSTD_JOB);
		w->bulk = 1;
	}
	if (write_header(w) == 0 && w->cctx != NULL)
		(void)emit(w, NULL, 0, ZSTD_e_flush);
	return w;
fail:
	{
		int saved = errno;

		pf_writer_free(w);
		errno = saved;
	}
	return NULL;
}

void
pf_writer_free(pf_writer *w)
{
	if (w == NULL)
		return;
	ZSTD_freeCCtx(w->cctx);
	free(w->zout);
	free(w->blk);
	free(w->name);
	free(w);
}

const char *
pf_writer_error(const pf_writer *w)
{
	return w->err;
}

uint64_t
pf_writer_records(const pf_writer *w)
{
	return w->records;
}

int
pf_writer_broken_pipe(const pf_writer *w)
{
	return w->epipe;
}

size_t
pf_writer_pending(const pf_writer *w)
{
	return w->blk_count;
}

/* write(2) all of p[0..n), through short writes and EINTR.  0 / -1. */
static int
write_all(pf_writer *w, const uint8_t *p, size_t n)
{
	ssize_t put;

	while (n > 0) {
		put = write(w->fd, p, n);
		if (put > 0) {
			p += put;
			n -= (size_t)put;
			continue;
		}
		if (put == -1 && errno == EINTR)
			continue;
		if (put == -1 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };

			(void)poll(&pfd, 1, -1);
			continue;
		}
		if (put == -1 && errno == EPIPE) {
			w->epipe = 1;
			werr(w, "broken pipe");
		} else
			werr(w, "write error: %s",
			    put == 0 ? "no progress" : strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Send p[0..n) out, compressing when asked.  mode is ZSTD_e_flush (a
 * block: make it decodable downstream now), ZSTD_e_end (end the frame),
 * or ZSTD_e_continue (a block for zstd's workers: taken in, and what
 * they have compressed so far written).
 */
static int
emit(pf_writer *w, const uint8_t *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { p, n, 0 };
	size_t left;

	if (w->cctx == NULL)
		return write_all(w, p, n);
	do {
		ZSTD_outBuffer out = { w->zout, w->zout_cap, 0 };

		left = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		if (ZSTD_isError(left)) {
			werr(w, "zstd: %s", ZSTD_getErrorName(left));
			return -1;
		}
		if (out.pos > 0 && write_all(w, w->zout, out.pos) == -1)
			return -1;
		/* continue: left is a hint, not what is left to flush */
	} while ((mode != ZSTD_e_continue && left != 0) || in.pos < in.size);
	return 0;
}

static int
write_header(pf_writer *w)
{
	uint8_t h[PF_HEADER_SIZE];

	if (w->header_done)
		return 0;
	memcpy(h, STREAM_MAGIC, 4);
	pf_put16(h + 4, PF_STREAM_VERSION);
	pf_put16(h + 6, PF_SF_WRITE);
	pf_put32(h + 8, PF_HEADER_SIZE);
	pf_put32(h + 12, 0);
	/* Compressed, the header goes with the first block (one flush). */
	if (w->cctx != NULL) {
		ZSTD_inBuffer in = { h, sizeof(h), 0 };
		ZSTD_outBuffer out = { w->zout, w->zout_cap, 0 };
		size_t rc = ZSTD_compressStream2(w->cctx, &out, &in,
		    ZSTD_e_continue);

		if (ZSTD_isError(rc) || in.pos != in.size) {
			werr(w, "zstd: %s", ZSTD_isError(rc) ?
			    ZSTD_getErrorName(rc) : "header not taken");
			return -1;
		}
		if (out.pos > 0 && write_all(w, w->zout, out.pos) == -1)
			return -1;
	} else if (write_all(w, h, sizeof(h)) == -1)
		return -1;
	w->header_done = 1;
	return 0;
}

/* Write the buffered block, if any.  0 / -1. */
static int
write_block(pf_writer *w)
{
	size_t len = w->blk_len - PF_BLOCK_HEADER_SIZE;
	uint8_t *h = w->blk;

	if (w->blk_count == 0)
		return 0;
	if (write_header(w) == -1)
		return -1;
	memcpy(h, BLOCK_MAGIC, 4);
	pf_put32(h + 4, (uint32_t)len);
	pf_put32(h + 8, w->blk_count);
	pf_put32(h + 12, 0);
	pf_put64(h + 16, pf_block_checksum(PF_SF_WRITE, h +
	    PF_BLOCK_HEADER_SIZE, len));
	if (emit(w, h, w->blk_len, w->bulk ? ZSTD_e_continue :
	    ZSTD_e_flush) == -1)
		return -1;
	w->blk_len = PF_BLOCK_HEADER_SIZE;
	w->blk_count = 0;
	return 0;
}

/* make_room(), when the block is full or short of space. */
static int
make_room_slow(pf_writer *w, size_t len)
{
	if (w->blk_count > 0 &&
	    w->blk_len - PF_BLOCK_HEADER_SIZE + len > w->target &&
	    write_block(w) == -1)
		return -1;
	if (w->blk_len + len > w->blk_cap) {
		size_t cap = PF_BLOCK_HEADER_SIZE + len + w->target;
		uint8_t *p = realloc(w->blk, cap);

		if (p == NULL) {
			werr(w, "out of memory");
			return -1;
		}
		w->blk = p;
		w->blk_cap = cap;
	}
	return 0;
}

/* Room at the block's end for len more bytes of records: the block is
   written out first if they would take it past its target.  0 / -1. */
static inline int
make_room(pf_writer *w, size_t len)
{
	if ((w->blk_count > 0 &&
	    w->blk_len - PF_BLOCK_HEADER_SIZE + len > w->target) ||
	    w->blk_len + len > w->blk_cap)
		return make_room_slow(w, len);
	return 0;
}

/* Write the partial block if its first record waited flush_ms or more.
   0 / -1. */
static int
flush_if_due(pf_writer *w)
{
	if (w->blk_count == 0 || w->flush_ms < 0)
		return 0;
	if (now_ms() - w->first_ms < (uint64_t)w->flush_ms)
		return 0;
	return write_block(w);
}

/* Count in n records, len bytes, just encoded at the block's end; then
   flush_if_due (the clock starts at a block's first record).  0 / -1. */
static inline int
counted(pf_writer *w, size_t len, uint32_t n)
{
	int first = w->blk_count == 0;

	w->blk_len += len;
	w->records += n;
	w->blk_count += n;
	if (w->flush_ms < 0)
		return 0;
	if (first) {
		w->first_ms = now_ms();
		return 0;
	}
	return flush_if_due(w);
}

/* A record of len bytes cannot be written: over the block limit.  -1. */
static int
too_long(pf_writer *w, size_t len)
{
	werr(w, "record %llu: %zu bytes is over the block limit",
	    (unsigned long long)w->records + 1, len);
	return -1;
}

/* Can w take more records?  0, or -1 with the error set. */
static int
open_for_records(pf_writer *w)
{
	if (w->failed || w->closed) {
		if (!w->failed)
			werr(w, "write after close");
		return -1;
	}
	return 0;
}

int
pf_writer_put(pf_writer *w, const pf_record *rec)
{
	return pf_writer_put_tail(w, rec, NULL, 0);
}

int
pf_writer_put_tail(pf_writer *w, const pf_record *rec, const uint8_t *tail,
    size_t tail_len)
{
	size_t rlen = (size_t)PF_CORE_SIZE + rec->ext_len + tail_len;
	pf_record whole;
	uint8_t *out, *ext;
	char why[200];
	int rv;

	if (open_for_records(w) == -1)
		return -1;
	if (rlen > PF_BLOCK_MAX)
		return too_long(w, rlen);
	if ((rec->ext_len > 0 && !ext_area_ok(rec->ext, rec->ext_len)) ||
	    (tail_len > 0 && !ext_area_ok(tail, tail_len))) {
		if (tail_len == 0) {
			check_ext_area(rec->ext, rec->ext_len, why,
			    sizeof(why));
			werr(w, "record %llu: %s",
			    (unsigned long long)w->records + 1, why);
			return -1;
		}
		/* The chain may still be whole across the two parts: check
		   and report it as for the joined record. */
		if ((ext = malloc(rec->ext_len + tail_len)) == NULL) {
			werr(w, "out of memory");
			return -1;
		}
		if (rec->ext_len > 0)
			memcpy(ext, rec->ext, rec->ext_len);
		memcpy(ext + rec->ext_len, tail, tail_len);
		whole = *rec;
		whole.ext = ext;
		whole.ext_len = (uint32_t)(rec->ext_len + tail_len);
		rv = pf_writer_put_tail(w, &whole, NULL, 0);
		free(ext);
		return rv;
	}
	if (make_room(w, rlen) == -1)
		return -1;
	out = w->blk + w->blk_len;
	pf_record_encode(rec, out);
	if (tail_len > 0) {
		pf_put32(out, (uint32_t)rlen);
		memcpy(out + rlen - tail_len, tail, tail_len);
	}
	return counted(w, rlen, 1);
}

uint8_t *
pf_writer_room(pf_writer *w, size_t min, size_t *avail)
{
	size_t used;

	if (open_for_records(w) == -1)
		return NULL;
	if (min > PF_BLOCK_MAX) {
		too_long(w, min);
		return NULL;
	}
	if (make_room(w, min) == -1)
		return NULL;
	/* up to the target, as pf_writer_put would fill the block; a
	   record longer than the target alone in it */
	used = w->blk_len - PF_BLOCK_HEADER_SIZE;
	*avail = used < w->target ? w->target - used : 0;
	if (*avail < min)
		*avail = min;
	return w->blk + w->blk_len;
}

int
pf_writer_advance(pf_writer *w, size_t len, uint32_t n)
{
	if (open_for_records(w) == -1)
		return -1;
	if (n == 0)
		return 0;
	return counted(w, len, n);
}

int
pf_writer_tick(pf_writer *w)
{
	if (w->failed)
		return -1;
	return flush_if_due(w);
}

int
pf_writer_flush(pf_writer *w)
{
	if (w->failed || write_block(w) == -1)
		return -1;
	/* zstd's workers hold blocks until the frame is flushed */
	if (w->bulk && w->header_done && !w->closed)
		return emit(w, NULL, 0, ZSTD_e_flush);
	return 0;
}

int
pf_writer_close(pf_writer *w)
{
	uint8_t h[PF_BLOCK_HEADER_SIZE];

	if (w->failed)
		return -1;
	if (w->closed)
		return 0;
	if (write_block(w) == -1 || write_header(w) == -1)
		return -1;
	memcpy(h, BLOCK_MAGIC, 4);
	pf_put32(h + 4, 0);
	pf_put32(h + 8, 0);
	pf_put32(h + 12, 0);
	pf_put64(h + 16, pf_block_checksum(PF_SF_WRITE, h, 0));
	if (emit(w, h, sizeof(h), ZSTD_e_end) == -1)
		return -1;
	w->closed = 1;
	return 0;
}
