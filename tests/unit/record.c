/*
 * record.c - unit tests of the record stream (lib/record.c): round trips
 * through plain, zstd and gzip streams, concatenation, empty and
 * header-only input, truncation at every byte, checksum errors, bad
 * headers, bad records, flushing through pipes, broken pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "t.h"
#include "posflow.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

/* A growable byte string: streams are built and read in memory. */
typedef struct bytes {
	uint8_t *p;
	size_t n;
} bytes;

static void
bytes_add(bytes *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->n + n + 1);
	if (b->p == NULL)
		abort();
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* Test records: core fields and ext bytes owned here. */
typedef struct trec {
	pf_record r;
	uint8_t ext[1200];
} trec;

static uint8_t startpos[PF_PACKED_SIZE];

static void
make_rec(trec *t, int i)
{
	pf_extbuf b = { 0 };
	int k, next = rnd() % 4;

	memset(t, 0, sizeof(*t));
	if (i % 3 == 0)
		memcpy(t->r.pos, startpos, PF_PACKED_SIZE);
	else
		for (k = 0; k < PF_PACKED_SIZE; k++)
			t->r.pos[k] = (uint8_t)rnd();
	t->r.game_id = ((uint64_t)rnd() << 32) | (uint64_t)i;
	t->r.ply = (uint16_t)i;
	t->r.move = (pf_move)rnd();
	t->r.result = (uint8_t)(rnd() % 4);
	t->r.flags = (uint16_t)rnd();
	for (k = 0; k < next; k++) {
		uint16_t type = (rnd() % 2) ? (uint16_t)(1 + rnd() % 9) :
		    (uint16_t)(0x8000 + rnd() % 100);
		uint32_t len = rnd() % 200, j;
		uint8_t *p = pf_extbuf_add(&b, type, len);

		for (j = 0; j < len; j++)
			p[j] = (uint8_t)rnd();
		/* A reserved field must pass through too. */
		if (k == 1)
			pf_put16(b.data + b.len - len - 6, 0xabcd);
	}
	if (b.len > 0)
		memcpy(t->ext, b.data, b.len);
	t->r.ext = t->ext;
	t->r.ext_len = (uint32_t)b.len;
	pf_extbuf_free(&b);
}

static int
same_rec(const pf_record *a, const pf_record *b)
{
	return memcmp(a->pos, b->pos, PF_PACKED_SIZE) == 0 &&
	    a->game_id == b->game_id && a->ply == b->ply &&
	    a->move == b->move && a->result == b->result &&
	    a->flags == b->flags && a->ext_len == b->ext_len &&
	    (a->ext_len == 0 || memcmp(a->ext, b->ext, a->ext_len) == 0);
}

/*
 * Records into w as a caller of pf_writer_room does: runs of up to most
 * records encoded in place (as many as fit the room given), then counted
 * in.
 */
static void
put_in_place(pf_writer *w, const trec *recs, int n, int most)
{
	int i = 0;

	while (i < n) {
		size_t len = PF_CORE_SIZE + recs[i].r.ext_len, avail, used = 0;
		uint8_t *p = pf_writer_room(w, len, &avail);
		uint32_t k = 0;

		if (p == NULL || avail < len)
			abort();
		while (i < n && (int)k < most &&
		    (len = PF_CORE_SIZE + recs[i].r.ext_len) <= avail - used) {
			used += pf_record_encode(&recs[i].r, p + used);
			i++, k++;
		}
		if (pf_writer_advance(w, used, k) == -1)
			abort();
	}
}

/* Write records through a pf_writer into a temporary file, with
   pf_writer_put (in_place 0) or put_in_place (runs of up to in_place
   records); return the bytes of the file. */
static bytes
write_stream_how(const trec *recs, int n, int level, size_t block,
    int in_place)
{
	pf_writer_opts o = { .zstd_level = level, .block_size = block,
	    .flush_ms = -1 };
	char path[] = "/tmp/pf-record-XXXXXX";
	bytes out = { 0 };
	uint8_t buf[65536];
	pf_writer *w;
	ssize_t got;
	int fd, i;

	if ((fd = mkstemp(path)) == -1)
		abort();
	unlink(path);
	w = pf_writer_open_fd(fd, "tmp", &o);
	if (in_place > 0)
		put_in_place(w, recs, n, in_place);
	else
		for (i = 0; i < n; i++)
			if (pf_writer_put(w, &recs[i].r) == -1)
				abort();
	if (pf_writer_close(w) == -1)
		abort();
	pf_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		bytes_add(&out, buf, (size_t)got);
	close(fd);
	return out;
}

static bytes
write_stream(const trec *recs, int n, int level, size_t block)
{
	return write_stream_how(recs, n, level, block, 0);
}

/* A reader on a file holding data[0..n). */
static pf_reader *
reader_on(const uint8_t *data, size_t n)
{
	char path[] = "/tmp/pf-record-XXXXXX";
	pf_reader *r;
	int fd = mkstemp(path);

	if (fd == -1 || (n > 0 && write(fd, data, n) != (ssize_t)n))
		abort();
	close(fd);
	if ((r = pf_reader_open_path(path)) == NULL)
		abort();
	unlink(path);
	return r;
}

/* What reading a whole input gave. */
typedef struct result {
	int records;		/* records returned */
	int matched;		/* of those, equal to the expected ones */
	int errors;
	char err[4][600];	/* the first errors */
	uint64_t end_off[512];	/* offset after each of the first records */
} result;

static result
read_all(const uint8_t *data, size_t n, const trec *want, int nwant)
{
	pf_reader *r = reader_on(data, n);
	pf_record rec;
	result res;
	int rc, guard = 0;

	memset(&res, 0, sizeof(res));
	while ((rc = pf_reader_next(r, &rec)) != 0 && guard++ < 100000) {
		if (rc == -1) {
			if (res.errors < 4)
				snprintf(res.err[res.errors], sizeof(res.err[0]),
				    "%s", pf_reader_error(r));
			res.errors++;
			continue;
		}
		if (res.records < 512)
			res.end_off[res.records] = pf_reader_offset(r);
		if (want != NULL && res.records < nwant &&
		    same_rec(&rec, &want[res.records].r))
			res.matched++;
		res.records++;
	}
	pf_reader_free(r);
	return res;
}

static bytes
gzip_bytes(const bytes *in)
{
	z_stream z;
	bytes out = { 0 };
	uint8_t buf[65536];
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = in->p;
	z.avail_in = (uInt)in->n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		rc = deflate(&z, Z_FINISH);
		bytes_add(&out, buf, sizeof(buf) - z.avail_out);
	} while (rc == Z_OK);
	deflateEnd(&z);
	return out;
}

static int
contains(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

#define NREC 3000

static trec recs[2 * NREC];

static void
test_codec(void)
{
	uint8_t buf[2048];
	pf_record out;
	char err[200];
	long n;

	n = (long)pf_record_encode(&recs[1].r, buf);
	CHECK(n == PF_CORE_SIZE + (long)recs[1].r.ext_len,
	    "encode returns the record length");
	CHECK(pf_get32(buf) == (uint32_t)n, "length field is the length");
	CHECK(pf_record_decode(buf, (size_t)n, &out, err, sizeof(err)) == n &&
	    same_rec(&out, &recs[1].r), "decode inverts encode");
	CHECK(out.ext == buf + PF_CORE_SIZE, "ext points into the buffer");
	CHECK(pf_record_decode(buf, (size_t)n - 1, &out, err,
	    sizeof(err)) == -1 && contains(err, "out of range"),
	    "decode refuses a record longer than the buffer: %s", err);
	pf_put32(buf, 20);
	CHECK(pf_record_decode(buf, (size_t)n, &out, err, sizeof(err)) == -1,
	    "decode refuses a length below the core");
	CHECK(pf_record_decode(buf, 3, &out, err, sizeof(err)) == -1,
	    "decode refuses a cut length field");
	/* A core and 3 stray bytes. */
	memset(buf, 0, 51);
	pf_put32(buf, 51);
	CHECK(pf_record_decode(buf, 51, &out, err, sizeof(err)) == -1 &&
	    contains(err, "stray"), "decode refuses stray bytes: %s", err);
	/* An extension of 99 bytes in an 8-byte room. */
	pf_put32(buf, 56);
	pf_put16(buf + 48, 2);
	pf_put32(buf + 52, 99);
	CHECK(pf_record_decode(buf, 56, &out, err, sizeof(err)) == -1 &&
	    contains(err, "extension type 2 length 99 runs past the end of "
	    "the record"), "decode refuses an extension overrun: %s", err);
}

static void
test_round_trips(void)
{
	static const struct { int level; size_t block; const char *what; }
	    kinds[] = {
		{ 0, 0, "plain, default blocks" },
		{ 0, 1000, "plain, 1000-byte blocks" },
		{ 1, 0, "zstd 1" },
		{ 3, 4096, "zstd 3, 4096-byte blocks" },
		{ 19, 0, "zstd 19" },
	};
	size_t k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bytes s = write_stream(recs, NREC, kinds[k].level,
		    kinds[k].block);
		result res = read_all(s.p, s.n, recs, NREC);

		CHECK(res.records == NREC && res.matched == NREC &&
		    res.errors == 0, "round trip %s: %d of %d records, %d "
		    "errors %s", kinds[k].what, res.matched, NREC, res.errors,
		    res.err[0]);
		if (k == 0) {
			bytes gz = gzip_bytes(&s);

			res = read_all(gz.p, gz.n, recs, NREC);
			CHECK(res.matched == NREC && res.errors == 0,
			    "round trip gzip: %d of %d records %s",
			    res.matched, NREC, res.err[0]);
			free(gz.p);
		}
		free(s.p);
	}
}

static void
test_concatenation(void)
{
	bytes a = write_stream(recs, NREC, 0, 0);
	bytes b = write_stream(recs + NREC, NREC, 0, 2000);
	bytes za = write_stream(recs, NREC, 1, 0);
	bytes zb = write_stream(recs + NREC, NREC, 3, 0);
	bytes gb = gzip_bytes(&b);
	bytes cat = { 0 };
	result res;

	bytes_add(&cat, a.p, a.n);
	bytes_add(&cat, b.p, b.n);
	res = read_all(cat.p, cat.n, recs, 2 * NREC);
	CHECK(res.matched == 2 * NREC && res.errors == 0,
	    "plain + plain: %d records in order %s", res.matched, res.err[0]);
	cat.n = 0;
	bytes_add(&cat, za.p, za.n);
	bytes_add(&cat, zb.p, zb.n);
	res = read_all(cat.p, cat.n, recs, 2 * NREC);
	CHECK(res.matched == 2 * NREC && res.errors == 0,
	    "zstd + zstd: %d records in order %s", res.matched, res.err[0]);
	cat.n = 0;
	bytes_add(&cat, a.p, a.n);
	bytes_add(&cat, zb.p, zb.n);
	res = read_all(cat.p, cat.n, recs, 2 * NREC);
	CHECK(res.matched == 2 * NREC && res.errors == 0,
	    "plain + zstd: %d records in order %s", res.matched, res.err[0]);
	cat.n = 0;
	bytes_add(&cat, za.p, za.n);
	bytes_add(&cat, gb.p, gb.n);
	bytes_add(&cat, za.p, za.n);
	res = read_all(cat.p, cat.n, NULL, 0);
	CHECK(res.records == 3 * NREC && res.errors == 0,
	    "zstd + gzip + zstd: %d records %s", res.records, res.err[0]);
	cat.n = 0;
	bytes_add(&cat, gb.p, gb.n);
	bytes_add(&cat, gb.p, gb.n);
	res = read_all(cat.p, cat.n, NULL, 0);
	CHECK(res.records == 2 * NREC && res.errors == 0,
	    "gzip + gzip (two members): %d records %s", res.records,
	    res.err[0]);
	cat.n = 0;
	bytes_add(&cat, gb.p, gb.n);
	bytes_add(&cat, a.p, a.n);
	res = read_all(cat.p, cat.n, NULL, 0);
	CHECK(res.records == 2 * NREC && res.errors == 0,
	    "gzip + plain: %d records %s", res.records, res.err[0]);
	free(a.p), free(b.p), free(za.p), free(zb.p), free(gb.p);
	free(cat.p);
}

static void
test_empty(void)
{
	bytes s = write_stream(recs, 0, 0, 0);
	bytes z = write_stream(recs, 0, 3, 0);
	result res;

	res = read_all((const uint8_t *)"", 0, NULL, 0);
	CHECK(res.records == 0 && res.errors == 0,
	    "empty input is an empty stream");
	CHECK(s.n == PF_HEADER_SIZE + PF_BLOCK_HEADER_SIZE,
	    "an empty run writes header and end block (%zu bytes)", s.n);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.records == 0 && res.errors == 0,
	    "an empty stream reads as no records %s", res.err[0]);
	res = read_all(z.p, z.n, NULL, 0);
	CHECK(res.records == 0 && res.errors == 0,
	    "an empty zstd stream reads as no records %s", res.err[0]);
	res = read_all(s.p, PF_HEADER_SIZE, NULL, 0);
	CHECK(res.records == 0 && res.errors == 1 &&
	    strcmp(res.err[0], "tmp: truncated: stream ends without an end "
	    "block after record 0") != 0 && contains(res.err[0],
	    "truncated: stream ends without an end block after record 0 at "
	    "offset 16"),
	    "header only: %s", res.err[0]);
	free(s.p), free(z.p);
}

/* Cut a stream at every byte: the complete records before the cut come
   back, then exactly one error. */
static void
test_truncation(void)
{
	bytes s = write_stream(recs, 40, 0, 600);
	bytes z = write_stream(recs, 12, 3, 600);
	result full = read_all(s.p, s.n, recs, 40), res;
	size_t cut;
	int want, i, bad = 0, badz = 0, msg_ok = 1;

	CHECK(full.records == 40 && full.errors == 0,
	    "truncation test stream reads whole");
	for (cut = 1; cut < s.n; cut++) {
		for (want = 0, i = 0; i < 40; i++)
			if (full.end_off[i] <= cut)
				want++;
		res = read_all(s.p, cut, recs, 40);
		if (res.records != want || res.matched != want ||
		    res.errors != 1) {
			if (bad++ < 5)
				printf("# cut %zu: %d records (want %d), %d "
				    "errors: %s\n", cut, res.records, want,
				    res.errors, res.err[0]);
		}
		if (!contains(res.err[0], "truncated") ||
		    (!contains(res.err[0], "offset") &&
		    !contains(res.err[0], "end block")))
			msg_ok = 0;
	}
	CHECK(bad == 0, "cut at each of %zu bytes: complete records, then "
	    "one error", s.n - 1);
	CHECK(msg_ok, "every truncation message says truncated and where");
	res = read_all(s.p, 700, NULL, 0);
	CHECK(contains(res.err[0], ": truncated at offset 700 in block 2 "
	    "after record"), "message: %s", res.err[0]);
	for (cut = 1; cut < z.n; cut++) {
		res = read_all(z.p, cut, recs, 12);
		if (res.errors != 1 || res.matched != res.records) {
			if (badz++ < 5)
				printf("# zstd cut %zu: %d records, %d good, "
				    "%d errors: %s\n", cut, res.records,
				    res.matched, res.errors, res.err[0]);
		}
	}
	CHECK(badz == 0, "zstd cut at each of %zu bytes: good records, then "
	    "one error", z.n - 1);
	free(s.p), free(z.p);
}

/* Find the offset of block number b (1-based) in a plain stream. */
static size_t
block_at(const bytes *s, int b)
{
	size_t off = PF_HEADER_SIZE;

	while (--b > 0)
		off += PF_BLOCK_HEADER_SIZE + pf_get32(s->p + off + 4);
	return off;
}

/* Re-checksum every block of s (end blocks too) as header flags say. */
static void
rechecksum(bytes *s, unsigned flags)
{
	size_t off = PF_HEADER_SIZE;
	uint32_t len;

	pf_put16(s->p + 6, (uint16_t)flags);
	while (off + PF_BLOCK_HEADER_SIZE <= s->n) {
		len = pf_get32(s->p + off + 4);
		pf_put64(s->p + off + 16, pf_block_checksum(flags, s->p + off +
		    PF_BLOCK_HEADER_SIZE, len));
		off += PF_BLOCK_HEADER_SIZE + len;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
static unsigned
xgetbv(unsigned which)
{
	unsigned lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(which));
	(void)hi;
	return lo;
}

/* XINUSE (XGETBV with ECX 1): 1 if the upper halves of ymm0-15 or zmm0-15
   are in use, 0 if not, -1 where the CPU cannot say (or the system has
   not turned AVX on). */
static int
upper_in_use(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) ||
	    !(c & bit_AVX) || (xgetbv(0) & 6) != 6 ||
	    !__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & (1u << 2)))
		return -1;
	return (xgetbv(1) & 0x44) != 0;
}

/* Sets the upper half of ymm0 and returns with it set, as libxxhash's
   AVX2 code does (in assembly: GCC would clear it before the return). */
void	dirty_upper(void);
__asm__(".text\n"
    "\t.type dirty_upper, @function\n"
    "dirty_upper:\n"
    "\tvpcmpeqb %ymm0, %ymm0, %ymm0\n"
    "\tret\n"
    "\t.size dirty_upper, .-dirty_upper\n");
#endif

/*
 * pf_block_checksum leaves the upper halves of the vector registers clear
 * (libxxhash's AVX2 and AVX-512 code does not, and the SSE code after it
 * slows on Intel CPUs).  Read from XINUSE, after a block big enough for
 * the library's vector paths; checked first on a state set on purpose.
 */
static void
test_checksum_upper(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	static uint8_t buf[65536];
	uint64_t h;
	int set, after;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	if (upper_in_use() < 0) {
		printf("# checksum upper state: not checked (this CPU "
		    "does not report it)\n");
		return;
	}
	dirty_upper();
	set = upper_in_use();
	h = pf_block_checksum(PF_SF_XXH3, buf, sizeof(buf));
	after = upper_in_use();
	CHECK(set == 1 && after == 0 && h == XXH3_64bits(buf, sizeof(buf)),
	    "pf_block_checksum leaves the vector registers' upper halves "
	    "clear (set before %d, after %d)", set, after);
#endif
}

/*
 * The two checksums of posflow(5): the writer sets PF_SF_XXH3 and uses
 * XXH3-64; a stream without the flag (the first writers') has XXH64
 * blocks and still reads; each kind is checked as its stream's flag says.
 */
static void
test_checksum_kinds(void)
{
	bytes s = write_stream(recs, 60, 0, 1000);
	size_t b1 = PF_HEADER_SIZE;
	uint32_t len = pf_get32(s.p + b1 + 4);
	result res;

	CHECK(pf_get16(s.p + 6) == PF_SF_XXH3, "the writer sets PF_SF_XXH3 "
	    "(flags 0x%04x)", pf_get16(s.p + 6));
	CHECK(pf_get64(s.p + b1 + 16) == XXH3_64bits(s.p + b1 +
	    PF_BLOCK_HEADER_SIZE, len), "a block's checksum is XXH3-64");
	CHECK(pf_get64(s.p + s.n - 8) == XXH3_64bits(NULL, 0),
	    "the end block's checksum is XXH3-64 of nothing");
	CHECK(XXH3_64bits(NULL, 0) == 0x2d06800538d394c2ULL &&
	    XXH64(NULL, 0, 0) == 0xef46db3751d8e999ULL,
	    "the checksums of nothing are posflow(5)'s");
	CHECK(pf_block_checksum(PF_SF_XXH3, s.p, s.n) == XXH3_64bits(s.p,
	    s.n) && pf_block_checksum(0, s.p, s.n) == XXH64(s.p, s.n, 0),
	    "pf_block_checksum() is XXH3-64 or XXH64 as the flags say");
	res = read_all(s.p, s.n, recs, 60);
	CHECK(res.errors == 0 && res.matched == 60, "an XXH3 stream reads "
	    "(%d errors, %d matched)", res.errors, res.matched);

	rechecksum(&s, 0);
	CHECK(pf_get64(s.p + b1 + 16) == XXH64(s.p + b1 +
	    PF_BLOCK_HEADER_SIZE, len, 0), "re-checksummed with XXH64");
	res = read_all(s.p, s.n, recs, 60);
	CHECK(res.errors == 0 && res.matched == 60, "an XXH64 stream (flags "
	    "0) still reads (%d errors, %d matched)", res.errors, res.matched);

	/* The flag decides: XXH64 blocks under PF_SF_XXH3 are damage. */
	pf_put16(s.p + 6, PF_SF_XXH3);
	res = read_all(s.p, s.n, recs, 60);
	CHECK(res.errors >= 1 && contains(res.err[0], "block 1 at offset 16: "
	    "checksum mismatch") && res.records == 0, "XXH64 blocks in an "
	    "XXH3 stream are refused: %s", res.err[0]);
	free(s.p);

	/* Concatenated streams of both kinds, in one input. */
	{
		bytes a = write_stream(recs, 30, 0, 1000);
		bytes b = write_stream(recs + 30, 30, 0, 1000);
		bytes ab = { 0 };

		rechecksum(&a, 0);
		bytes_add(&ab, a.p, a.n);
		bytes_add(&ab, b.p, b.n);
		res = read_all(ab.p, ab.n, recs, 60);
		CHECK(res.errors == 0 && res.matched == 60, "an XXH64 stream "
		    "then an XXH3 one (%d errors, %d matched)", res.errors,
		    res.matched);
		free(a.p);
		free(b.p);
		free(ab.p);
	}
}

static void
test_checksum(void)
{
	bytes s = write_stream(recs, 60, 0, 1000);
	size_t b2 = block_at(&s, 2), b3 = block_at(&s, 3);
	uint32_t n1 = pf_get32(s.p + PF_HEADER_SIZE + 8);
	uint32_t n2 = pf_get32(s.p + b2 + 8);
	char want[200];
	result res;

	s.p[b2 + PF_BLOCK_HEADER_SIZE + 100] ^= 0x10;
	res = read_all(s.p, s.n, NULL, 0);
	snprintf(want, sizeof(want), ": block 2 at offset %zu: checksum "
	    "mismatch (records %u..%u lost)", b2, n1 + 1, n1 + n2);
	CHECK(res.errors == 1 && contains(res.err[0], want),
	    "flipped byte: '%s'", res.err[0]);
	CHECK(res.records == 60 - (int)n2, "every other block still read "
	    "(%d records)", res.records);
	/* Records after the bad block keep their numbers: break block 3's
	   first record with a valid checksum. */
	s.p[b2 + PF_BLOCK_HEADER_SIZE + 100] ^= 0x10;
	pf_put32(s.p + b3 + PF_BLOCK_HEADER_SIZE + 4 + 48, 5000);
	pf_put32(s.p + b3 + PF_BLOCK_HEADER_SIZE, 5000);
	pf_put64(s.p + b3 + 16, pf_block_checksum(PF_SF_WRITE, s.p + b3 +
	    PF_BLOCK_HEADER_SIZE, pf_get32(s.p + b3 + 4)));
	res = read_all(s.p, s.n, NULL, 0);
	snprintf(want, sizeof(want), ": record %u at offset %zu: record "
	    "length 5000 out of range", n1 + n2 + 1,
	    b3 + PF_BLOCK_HEADER_SIZE);
	CHECK(res.errors == 1 && contains(res.err[0], want),
	    "corrupt record length field: '%s'", res.err[0]);
	CHECK(res.records == 60 - (int)pf_get32(s.p + b3 + 8),
	    "the rest of that block is skipped, later blocks read (%d)",
	    res.records);
	free(s.p);

	/* A flipped byte in a block header's length: the reader finds the
	   next block and goes on. */
	s = write_stream(recs, 60, 0, 1000);
	s.p[b2 + 5] ^= 0x01;
	res = read_all(s.p, s.n, recs, 60);
	snprintf(want, sizeof(want), "resuming at offset %zu", b3);
	CHECK(res.errors == 1 && contains(res.err[0], "block 2 at offset") &&
	    contains(res.err[0], "checksum mismatch") &&
	    contains(res.err[0], want), "damaged length: '%s'", res.err[0]);
	CHECK(res.records == 60 - (int)n2 && res.matched == (int)n1,
	    "the blocks after it are read (%d records)", res.records);
	s.p[b2 + 5] ^= 0x01;
	/* A damaged block magic. */
	s.p[b2 + 1] = 'X';
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "block 2 at offset") &&
	    contains(res.err[0], "bad block magic") &&
	    contains(res.err[0], want) && res.records == 60 - (int)n2,
	    "damaged block magic: '%s', %d records", res.err[0], res.records);
	s.p[b2 + 1] = 'P';
	/* Junk between two blocks. */
	{
		bytes j = { 0 };
		uint8_t junk[100];

		memset(junk, 0x89, sizeof(junk));
		bytes_add(&j, s.p, b2);
		bytes_add(&j, junk, sizeof(junk));
		bytes_add(&j, s.p + b2, s.n - b2);
		res = read_all(j.p, j.n, recs, 60);
		CHECK(res.errors == 1 && contains(res.err[0], "bad block "
		    "magic; resuming at offset") && contains(res.err[0],
		    "(100 bytes skipped)") && res.matched == 60,
		    "junk between blocks: '%s', %d records", res.err[0],
		    res.matched);
		/* Junk to the end: a block magic is never found. */
		j.n = b2 + 50;
		res = read_all(j.p, j.n, NULL, 0);
		CHECK(res.errors == 1 && contains(res.err[0], "no block "
		    "follows (50 bytes skipped)") && res.records == (int)n1,
		    "junk to the end: '%s'", res.err[0]);
		free(j.p);
	}
	free(s.p);
}

/* A one-block stream whose only record carries ext[0..n), checksummed. */
static bytes
handmade(const uint8_t *ext, uint32_t n)
{
	bytes s = write_stream(recs, 1, 0, 0);
	bytes out = { 0 };
	uint8_t core[PF_CORE_SIZE], bh[PF_BLOCK_HEADER_SIZE];
	uint8_t *pay;
	pf_record r = recs[0].r;

	r.ext_len = 0;
	pf_record_encode(&r, core);
	pf_put32(core, PF_CORE_SIZE + n);
	pay = malloc(PF_CORE_SIZE + n);
	memcpy(pay, core, PF_CORE_SIZE);
	memcpy(pay + PF_CORE_SIZE, ext, n);
	memcpy(bh, "\x89PFB", 4);
	pf_put32(bh + 4, PF_CORE_SIZE + n);
	pf_put32(bh + 8, 1);
	pf_put32(bh + 12, 0);
	pf_put64(bh + 16, pf_block_checksum(PF_SF_WRITE, pay, PF_CORE_SIZE + n));
	bytes_add(&out, s.p, PF_HEADER_SIZE);
	bytes_add(&out, bh, sizeof(bh));
	bytes_add(&out, pay, PF_CORE_SIZE + n);
	bytes_add(&out, s.p + s.n - PF_BLOCK_HEADER_SIZE,
	    PF_BLOCK_HEADER_SIZE);
	free(pay);
	free(s.p);
	return out;
}

static void
test_bad_input(void)
{
	bytes s = write_stream(recs, 5, 0, 0), h;
	uint8_t ext[16] = { 0 };
	result res;

	res = read_all((const uint8_t *)"hello, world\n", 13, NULL, 0);
	CHECK(res.errors == 1 && strcmp(res.err[0], "tmp: not a posflow "
	    "stream (bad magic at offset 0)") != 0 && contains(res.err[0],
	    "not a posflow stream (bad magic at offset 0)"),
	    "bad magic: %s", res.err[0]);
	CHECK(res.records == 0, "nothing read from a text file");
	pf_put16(s.p + 4, 2);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "stream version 2 is "
	    "newer than this reader (1)") && contains(res.err[0], "offset 0"),
	    "future version: %s", res.err[0]);
	pf_put16(s.p + 4, 1);
	pf_put16(s.p + 6, 4);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "unknown stream header "
	    "flags 0x0004"), "unknown flags: %s", res.err[0]);
	pf_put16(s.p + 6, PF_SF_WRITE);
	pf_put32(s.p + 8, 8);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "bad stream header "
	    "length 8"), "short header length: %s", res.err[0]);
	pf_put32(s.p + 8, 16);
	memcpy(s.p + PF_HEADER_SIZE, "\x89PFX", 4);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "block 1 at offset 16: "
	    "bad block magic"), "bad block magic: %s", res.err[0]);
	memcpy(s.p + PF_HEADER_SIZE, "\x89PFB", 4);
	pf_put32(s.p + PF_HEADER_SIZE + 4, PF_BLOCK_MAX + 1);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "over the limit"),
	    "huge block: %s", res.err[0]);
	free(s.p);

	/* Extension type 2 saying 99 bytes with 8 left. */
	pf_put16(ext, 2);
	pf_put32(ext + 4, 99);
	h = handmade(ext, 16);
	res = read_all(h.p, h.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], ": record 1 at "
	    "offset 40: extension type 2 length 99 runs past the end of the "
	    "record"), "extension overrun: %s", res.err[0]);
	CHECK(res.records == 0, "the bad record is not handed out");
	free(h.p);
	pf_put32(ext + 4, 8);
	h = handmade(ext, 16);
	res = read_all(h.p, h.n, NULL, 0);
	CHECK(res.errors == 0 && res.records == 1,
	    "the same record with a fitting extension reads %s", res.err[0]);
	free(h.p);
	/* A block whose header count disagrees with its records. */
	h = handmade(ext, 16);
	pf_put32(h.p + PF_HEADER_SIZE + 8, 3);
	res = read_all(h.p, h.n, NULL, 0);
	CHECK(res.errors == 1 && res.records == 1 && contains(res.err[0],
	    "holds 1 records but its header says 3"), "count mismatch: %s",
	    res.err[0]);
	free(h.p);
	/* A stream cut at a block boundary, then a good stream. */
	s = write_stream(recs, 30, 0, 1000);
	h.p = NULL;
	h.n = 0;
	bytes_add(&h, s.p, block_at(&s, 3));
	bytes_add(&h, s.p, s.n);
	res = read_all(h.p, h.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "truncated: stream "
	    "ends without an end block after record") && res.records == 30 +
	    (int)(pf_get32(s.p + PF_HEADER_SIZE + 8) + pf_get32(s.p +
	    block_at(&s, 2) + 8)), "cut stream then a good one: %s, %d records",
	    res.err[0], res.records);
	free(h.p);
	/* Cut inside a block, then a good stream: the reader resumes. */
	h.p = NULL;
	h.n = 0;
	bytes_add(&h, s.p, block_at(&s, 3) - 10);
	bytes_add(&h, s.p, s.n);
	res = read_all(h.p, h.n, NULL, 0);
	CHECK(res.errors == 1 && contains(res.err[0], "resuming at offset") &&
	    res.records >= 30, "cut inside a block then a good stream: %s, "
	    "%d records", res.err[0], res.records);
	free(h.p);
	free(s.p);
	/* Garbage after an end block. */
	s = write_stream(recs, 5, 0, 0);
	bytes_add(&s, "junk", 4);
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.records == 5 && res.errors == 1 && contains(res.err[0],
	    "bad magic at offset"), "junk after a stream: %s", res.err[0]);
	free(s.p);
	/* A corrupt zstd frame. */
	s = write_stream(recs, 200, 3, 0);
	s.p[s.n / 2] ^= 0xff;
	res = read_all(s.p, s.n, NULL, 0);
	CHECK(res.errors >= 1 && contains(res.err[0], "offset"),
	    "corrupt zstd data: %s", res.err[0]);
	free(s.p);
	/* Damage in a later block of a frame: the blocks before it are
	   read (libzstd hands out nothing of a call that fails). */
	s = write_stream(recs, 200, 3, 1024);
	s.p[s.n * 3 / 4] ^= 0xff;
	res = read_all(s.p, s.n, recs, 200);
	CHECK(res.errors >= 1 && contains(res.err[0], "record") &&
	    res.records >= 100 && res.matched >= 100,
	    "corrupt zstd data, late: %d records (%d matched): %s",
	    res.records, res.matched, res.err[0]);
	free(s.p);
}

static void
test_big_record(void)
{
	static uint8_t ext[300000];
	pf_extbuf b = { 0 };
	trec t[3];
	uint8_t *p;
	bytes s;
	result res;

	p = pf_extbuf_add(&b, 0x9000, 200000);
	memset(p, 0x5a, 200000);
	memcpy(ext, b.data, b.len);
	t[0] = recs[0];
	t[0].r.ext = recs[0].ext;
	t[1] = recs[1];
	t[1].r.ext = ext;
	t[1].r.ext_len = (uint32_t)b.len;
	t[2] = recs[2];
	t[2].r.ext = recs[2].ext;
	s = write_stream(t, 3, 0, 0);
	res = read_all(s.p, s.n, t, 3);
	CHECK(res.matched == 3 && res.errors == 0,
	    "a record larger than the block target round-trips");
	CHECK(pf_get32(s.p + block_at(&s, 2) + 8) == 1,
	    "and gets a block of its own");
	free(s.p);
	pf_extbuf_free(&b);
}

static int
readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static void
test_flush(void)
{
	pf_writer_opts never = { .flush_ms = -1 }, soon = { .flush_ms = 1 };
	pf_writer_opts zs = { .zstd_level = 3, .flush_ms = -1 };
	const pf_writer_opts *opts[2] = { &never, &zs };
	pf_record rec;
	pf_reader *r;
	pf_writer *w;
	int fds[2], i, k, got;
	struct timespec ms5 = { 0, 5000000 };

	for (k = 0; k < 2; k++) {
		if (pipe(fds) == -1)
			abort();
		w = pf_writer_open_fd(fds[1], "pipe", opts[k]);
		for (i = 0; i < 3; i++)
			pf_writer_put(w, &recs[i].r);
		CHECK(!readable(fds[0], 0) && pf_writer_pending(w) == 3,
		    "%s: nothing written before a flush",
		    k ? "zstd" : "plain");
		CHECK(pf_writer_flush(w) == 0 && pf_writer_pending(w) == 0,
		    "flush writes the partial block");
		r = pf_reader_open_fd(fds[0], "pipe");
		for (got = 0, i = 0; i < 3; i++)
			if (pf_reader_next(r, &rec) == 1 &&
			    same_rec(&rec, &recs[i].r))
				got++;
		CHECK(got == 3, "%s: a reader sees flushed records before "
		    "close", k ? "zstd" : "plain");
		pf_writer_put(w, &recs[3].r);
		pf_writer_close(w);
		pf_writer_free(w);
		close(fds[1]);
		CHECK(pf_reader_next(r, &rec) == 1 && same_rec(&rec,
		    &recs[3].r) && pf_reader_next(r, &rec) == 0,
		    "then the rest and a clean end");
		pf_reader_free(r);
		close(fds[0]);
	}

	/* The idle interval: tick flushes once flush_ms has passed. */
	if (pipe(fds) == -1)
		abort();
	w = pf_writer_open_fd(fds[1], "pipe", &soon);
	pf_writer_put(w, &recs[0].r);
	nanosleep(&ms5, NULL);
	nanosleep(&ms5, NULL);
	CHECK(pf_writer_tick(w) == 0 && readable(fds[0], 0) &&
	    pf_writer_pending(w) == 0, "tick flushes after flush_ms");
	pf_writer_free(w);
	close(fds[0]), close(fds[1]);
	if (pipe(fds) == -1)
		abort();
	w = pf_writer_open_fd(fds[1], "pipe", &never);
	pf_writer_put(w, &recs[0].r);
	nanosleep(&ms5, NULL);
	CHECK(pf_writer_tick(w) == 0 && !readable(fds[0], 0),
	    "tick never flushes with flush_ms < 0");
	pf_writer_free(w);
	close(fds[0]), close(fds[1]);
}

/* The bytes of the file fd (from its start, at any offset). */
static bytes
file_bytes(int fd)
{
	bytes out = { 0 };
	uint8_t buf[65536];
	ssize_t got;
	off_t at = 0;

	while ((got = pread(fd, buf, sizeof(buf), at)) > 0) {
		bytes_add(&out, buf, (size_t)got);
		at += got;
	}
	return out;
}

/* How many of the records in s read back, in order, as recs[i % (2 x
   NREC)] (as many as were written that way); *errors: the read errors. */
static int
read_cycled(const bytes *s, int *errors)
{
	pf_reader *r = reader_on(s->p, s->n);
	pf_record rec;
	int rc, n = 0, guard = 0;

	*errors = 0;
	while ((rc = pf_reader_next(r, &rec)) != 0 && guard++ < 1000000) {
		if (rc == -1)
			(*errors)++;
		else if (same_rec(&rec, &recs[n % (2 * NREC)].r))
			n++;
		else
			break;
	}
	pf_reader_free(r);
	return n;
}

/*
 * zstd_workers: to a regular file, zstd's workers compress the blocks
 * (several jobs of them here), and the bytes are the same for any number
 * of workers (pgn2pos -j N gives -j 1's bytes); a flush puts every record
 * before it in the file; on a pipe the workers are not used: each block
 * is there for the reader downstream as soon as it is written.
 */
static void
test_zstd_workers(void)
{
	enum { N = 16 * NREC };		/* about 8 MiB: four jobs */
	const int workers[3] = { 1, 3, 0 };
	bytes s[3], mid;
	pf_writer_opts o = { .zstd_level = 3, .flush_ms = -1 };
	pf_record rec;
	pf_reader *r;
	pf_writer *w;
	int k, i, n, errors, fd, fds[2], written;

	for (k = 0; k < 3; k++) {
		char path[] = "/tmp/pf-record-XXXXXX";

		if ((fd = mkstemp(path)) == -1)
			abort();
		unlink(path);
		o.zstd_workers = workers[k];
		w = pf_writer_open_fd(fd, "tmp", &o);
		for (i = 0; i < N; i++) {
			if (pf_writer_put(w, &recs[i % (2 * NREC)].r) == -1)
				abort();
			if (i + 1 == N / 2) {
				CHECK(pf_writer_flush(w) == 0, "flush");
				if (k > 0)
					continue;
				mid = file_bytes(fd);
				n = read_cycled(&mid, &errors);
				CHECK(n == N / 2 && errors == 1, "with zstd "
				    "workers, a flush puts every record before "
				    "it in the file (%d of %d read, then the "
				    "missing end: %d errors)", n, N / 2, errors);
				free(mid.p);
			}
		}
		if (pf_writer_close(w) == -1)
			abort();
		pf_writer_free(w);
		s[k] = file_bytes(fd);
		close(fd);
		n = read_cycled(&s[k], &errors);
		CHECK(n == N && errors == 0, "%d zstd workers: %d of %d "
		    "records read back, %d errors", workers[k], n, N, errors);
	}
	CHECK(s[0].n == s[1].n && memcmp(s[0].p, s[1].p, s[0].n) == 0,
	    "the same bytes with 1 and with 3 zstd workers (%zu, %zu)",
	    s[0].n, s[1].n);
	CHECK(s[0].n != s[2].n || memcmp(s[0].p, s[2].p, s[0].n) != 0,
	    "and the workers made them (not the bytes of the caller's "
	    "thread, block by block)");
	for (k = 0; k < 3; k++)
		free(s[k].p);

	/* On a pipe: block by block, at once. */
	if (pipe(fds) == -1)
		abort();
	o.zstd_workers = 2;
	o.block_size = 4096;
	w = pf_writer_open_fd(fds[1], "pipe", &o);
	for (i = 0; i < 40; i++)
		pf_writer_put(w, &recs[i].r);
	written = 40 - (int)pf_writer_pending(w);
	CHECK(written > 0 && readable(fds[0], 0), "on a pipe, with zstd "
	    "workers asked for, the blocks written (%d records) are in the "
	    "pipe at once", written);
	r = pf_reader_open_fd(fds[0], "pipe");
	for (n = 0, i = 0; i < written; i++)
		if (pf_reader_next(r, &rec) == 1 && same_rec(&rec, &recs[i].r))
			n++;
	CHECK(n == written, "and read back (%d of %d)", n, written);
	pf_writer_free(w);
	pf_reader_free(r);
	close(fds[0]), close(fds[1]);
}

/*
 * pf_reader_buffered: true exactly while the current block still holds
 * records, so that a tool polling the descriptor (which those records do
 * not make readable) knows it can read without blocking.
 */
static void
test_buffered(void)
{
	pf_record rec;
	pf_reader *r;
	pf_writer *w;
	int fds[2], i, ok = 1;

	if (pipe(fds) == -1)
		abort();
	w = pf_writer_open_fd(fds[1], "pipe", NULL);
	for (i = 0; i < 3; i++)
		pf_writer_put(w, &recs[i].r);
	pf_writer_flush(w);
	r = pf_reader_open_fd(fds[0], "pipe");
	CHECK(!pf_reader_buffered(r), "nothing buffered before a read");
	for (i = 0; i < 3; i++) {
		ok &= pf_reader_next(r, &rec) == 1 &&
		    same_rec(&rec, &recs[i].r);
		ok &= pf_reader_buffered(r) == (i < 2);
		ok &= !readable(fds[0], 0);
	}
	CHECK(ok, "buffered while the block holds records, though the pipe "
	    "is empty; not after its last record");
	pf_writer_close(w);
	pf_writer_free(w);
	close(fds[1]);
	CHECK(pf_reader_next(r, &rec) == 0 && !pf_reader_buffered(r),
	    "then a clean end");
	pf_reader_free(r);
	close(fds[0]);

	/* Two blocks in the pipe before the first read: at the boundary
	   the second is already read whole, so still buffered. */
	if (pipe(fds) == -1)
		abort();
	w = pf_writer_open_fd(fds[1], "pipe", NULL);
	for (i = 0; i < 6; i++) {
		pf_writer_put(w, &recs[i].r);
		if (i == 2)
			pf_writer_flush(w);
	}
	pf_writer_flush(w);
	r = pf_reader_open_fd(fds[0], "pipe");
	for (ok = 1, i = 0; i < 6; i++) {
		ok &= pf_reader_next(r, &rec) == 1 &&
		    same_rec(&rec, &recs[i].r);
		ok &= pf_reader_buffered(r) == (i < 5);
	}
	CHECK(ok, "buffered across a block boundary when the next block is "
	    "in memory; not after the last record");
	pf_writer_free(w);
	close(fds[1]);
	pf_reader_free(r);
	close(fds[0]);
}

/*
 * A pipeline stage: the reader on pipe A is linked to the writer on pipe
 * B.  The child feeds A three records and waits (5 s at most) to see
 * them on B before it ends A.  Without the flush before the blocking
 * read, the child times out.
 */
static void
test_reader_flush(void)
{
	pf_writer_opts never = { .flush_ms = -1 };
	int a[2], b[2], status, n = 0;
	pf_record rec;
	pid_t pid;

	if (pipe(a) == -1 || pipe(b) == -1)
		abort();
	fflush(stdout);
	if ((pid = fork()) == 0) {
		pf_writer *w = pf_writer_open_fd(a[1], "a", &never);
		pf_reader *r;
		int i, ok = 0;

		close(a[0]), close(b[1]);
		for (i = 0; i < 3; i++)
			pf_writer_put(w, &recs[i].r);
		pf_writer_flush(w);
		if (readable(b[0], 5000)) {
			r = pf_reader_open_fd(b[0], "b");
			for (i = 0; i < 3; i++)
				ok += pf_reader_next(r, &rec) == 1;
		}
		pf_writer_close(w);
		_exit(ok == 3 ? 0 : 1);
	}
	close(a[1]), close(b[0]);
	{
		pf_reader *r = pf_reader_open_fd(a[0], "a");
		pf_writer *w = pf_writer_open_fd(b[1], "b", &never);

		pf_reader_set_flush(r, w);
		while (pf_reader_next(r, &rec) == 1) {
			pf_writer_put(w, &rec);
			n++;
		}
		pf_writer_close(w);
		pf_writer_free(w);
		pf_reader_free(r);
	}
	close(a[0]), close(b[1]);
	waitpid(pid, &status, 0);
	CHECK(n == 3 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "a reader about to block flushes its linked writer");
}

static void
test_broken_pipe(void)
{
	int fds[2], i, rc = 0;
	pf_writer *w;

	if (pipe(fds) == -1)
		abort();
	close(fds[0]);
	w = pf_writer_open_fd(fds[1], "pipe", NULL);
	for (i = 0; i < NREC && rc == 0; i++)
		rc = pf_writer_put(w, &recs[i].r);
	if (rc == 0)
		rc = pf_writer_close(w);
	CHECK(rc == -1 && pf_writer_broken_pipe(w) &&
	    contains(pf_writer_error(w), "pipe"),
	    "a closed pipe is reported as such: %s", pf_writer_error(w));
	pf_writer_free(w);
	close(fds[1]);

	w = pf_writer_open_fd(open("/dev/null", O_WRONLY), "null", NULL);
	CHECK(pf_writer_put(w, &recs[0].r) == 0 && pf_writer_close(w) == 0 &&
	    pf_writer_close(w) == 0 && pf_writer_put(w, &recs[0].r) == -1 &&
	    !pf_writer_broken_pipe(w), "close twice is fine, put after "
	    "close is not");
	pf_writer_free(w);
	pf_writer_free(NULL);
	pf_reader_free(NULL);
}

static void
test_records_offset(void)
{
	bytes s = write_stream(recs, 10, 0, 0);
	pf_reader *r = reader_on(s.p, s.n);
	pf_record rec;
	int n = 0;

	while (pf_reader_next(r, &rec) == 1)
		n++;
	CHECK(n == 10 && pf_reader_records(r) == 10, "records counted");
	CHECK(pf_reader_offset(r) == s.n, "offset at the end is the size "
	    "(%llu of %zu)", (unsigned long long)pf_reader_offset(r), s.n);
	CHECK(strcmp(pf_reader_name(r), pf_reader_name(r)) == 0 &&
	    contains(pf_reader_name(r), "pf-record"), "reader name is the path");
	pf_reader_free(r);
	free(s.p);
	CHECK(pf_reader_open_path("/nonexistent/x.pos") == NULL &&
	    errno == ENOENT, "open of a missing file fails with errno");
}

/*
 * pf_reader_position: how far into a file the reader is, plain or zstd,
 * even when the whole file is read at once: early on a small share, never
 * going back more than a little, the file's size at the end.
 */
static void
test_unread(void)
{
	static const int levels[2] = { 0, 3 };

	for (int k = 0; k < 2; k++) {
		bytes s = write_stream(recs, 2 * NREC, levels[k], 1024);
		char path[] = "/tmp/pf-record-XXXXXX";
		int fd = mkstemp(path), ok = 1, n = 0;
		uint64_t at, first = 0, last = 0;
		pf_reader *r;
		pf_record rec;

		if (fd == -1 || write(fd, s.p, s.n) != (ssize_t)s.n)
			abort();
		unlink(path);
		lseek(fd, 0, SEEK_SET);
		r = pf_reader_open_fd(fd, "tmp");
		while (pf_reader_next(r, &rec) == 1) {
			at = pf_reader_position(r);
			if (n++ == 0)
				first = at;
			/* (a new piece decoded may move the share back
			   a little) */
			ok &= at + s.n / 100 >= last && at <= s.n;
			last = at;
		}
		last = pf_reader_position(r);
		CHECK(ok && n == 2 * NREC && first > 0 && first < s.n / 4 &&
		    last == s.n, "%s: where the reader is: %llu of %zu after "
		    "the first record, never much back, all at the end",
		    k ? "zstd" : "plain", (unsigned long long)first, s.n);
		pf_reader_free(r);
		close(fd);
		free(s.p);
	}
}

/*
 * pf_writer_room / pf_writer_advance: records encoded in place make the
 * very stream pf_writer_put makes (the same blocks, cut at the same
 * records), whatever the runs; the room is refused after close and for a
 * record over the block limit; the idle flush counts from the first
 * record counted in.
 */
static void
test_in_place(void)
{
	static const size_t blocks[] = { 0, 1000, 5000 };
	static const int runs[] = { 1, 7, 100, NREC };
	static uint8_t ext[300000];
	pf_writer_opts soon = { .flush_ms = 1 };
	struct timespec ms5 = { 0, 5000000 };
	pf_extbuf eb = { 0 };
	trec t[3];
	size_t avail;
	pf_writer *w;
	int fds[2], differ = 0, cases = 0;
	unsigned b, k, z;

	for (z = 0; z < 2; z++)
		for (b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
			bytes want = write_stream(recs, NREC, z ? 3 : 0,
			    blocks[b]);

			for (k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
				bytes got = write_stream_how(recs, NREC,
				    z ? 3 : 0, blocks[b], runs[k]);

				cases++;
				if (got.n != want.n ||
				    memcmp(got.p, want.p, want.n) != 0) {
					differ++;
					printf("# zstd %u, block %zu, runs of "
					    "%d: streams differ\n", z,
					    blocks[b], runs[k]);
				}
				free(got.p);
			}
			free(want.p);
		}
	CHECK(differ == 0, "records encoded in place make pf_writer_put's "
	    "stream byte for byte: %d cases (plain and zstd, blocks of "
	    "64 KiB, 1000 and 5000 bytes, runs of 1 to %d records)", cases,
	    NREC);

	/* a record over the target, alone in its block, either way */
	memset(pf_extbuf_add(&eb, 0x9000, 200000), 0x5a, 200000);
	memcpy(ext, eb.data, eb.len);
	for (k = 0; k < 3; k++)
		t[k] = recs[k];
	t[1].r.ext = ext;
	t[1].r.ext_len = (uint32_t)eb.len;
	for (k = 0; k < 3; k++)
		if (k != 1)
			t[k].r.ext = recs[k].ext;
	{
		bytes want = write_stream(t, 3, 0, 0);
		bytes got = write_stream_how(t, 3, 0, 0, 3);

		CHECK(got.n == want.n && memcmp(got.p, want.p, want.n) == 0,
		    "a record over the block target: the same stream");
		free(got.p);
		free(want.p);
	}
	pf_extbuf_free(&eb);

	if (pipe(fds) == -1)
		abort();
	w = pf_writer_open_fd(fds[1], "pipe", &soon);
	CHECK(pf_writer_room(w, PF_BLOCK_MAX + 1, &avail) == NULL &&
	    contains(pf_writer_error(w), "over the block limit"),
	    "no room for a record over the block limit: %s",
	    pf_writer_error(w));
	pf_writer_free(w);
	close(fds[0]), close(fds[1]);

	if (pipe(fds) == -1)
		abort();
	w = pf_writer_open_fd(fds[1], "pipe", &soon);
	put_in_place(w, recs, 2, 2);
	CHECK(pf_writer_pending(w) == 2 && !readable(fds[0], 0),
	    "records counted in wait in the block");
	nanosleep(&ms5, NULL);
	nanosleep(&ms5, NULL);
	put_in_place(w, recs + 2, 1, 1);
	CHECK(pf_writer_pending(w) == 0 && readable(fds[0], 0),
	    "and go out once flush_ms has passed since the first");
	CHECK(pf_writer_advance(w, 0, 0) == 0, "counting in none is a no-op");
	CHECK(pf_writer_close(w) == 0 && pf_writer_room(w, 100, &avail) ==
	    NULL && contains(pf_writer_error(w), "write after close") &&
	    pf_writer_advance(w, 0, 0) == -1,
	    "no room after close: %s", pf_writer_error(w));
	pf_writer_free(w);
	close(fds[0]), close(fds[1]);
}

int
main(void)
{
	pf_board b;
	int i;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pf_board_startpos(&b);
	pf_board_pack(&b, startpos);
	for (i = 0; i < 2 * NREC; i++)
		make_rec(&recs[i], i);
	test_codec();
	test_round_trips();
	test_concatenation();
	test_empty();
	test_truncation();
	test_checksum();
	test_checksum_kinds();
	test_checksum_upper();
	test_bad_input();
	test_big_record();
	test_flush();
	test_zstd_workers();
	test_buffered();
	test_reader_flush();
	test_broken_pipe();
	test_records_offset();
	test_unread();
	test_in_place();
	return t_done();
}
