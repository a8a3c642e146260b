/*
 * input.c - pf_input's binary mode and pf_input_read: trainers' data
 * read as it is stored, whatever its bytes, through the same packaging
 * as text; damaged compressed data hands out every byte decoded before
 * the damage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "input.h"
#include "t.h"

#define N	(600u << 10)

static char path[] = "/tmp/posflow-input-XXXXXX";

static void
put_file(const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/*
 * The member of the file at path (binary: 1 binary mode, 2 that and
 * keep_gzip) read in pieces of piece bytes: into out
 * (cap bytes), *got the count; the last call's result (0 or -1), then
 * whether one more call returns 0.  err: the error, if any.
 */
static int
read_all(int binary, size_t piece, uint8_t *out, size_t cap, size_t *got,
    int *then_zero, char *err, size_t errsize)
{
	pf_input *in;
	ssize_t r;

	*got = 0;
	err[0] = '\0';
	if ((in = pf_input_open(path, "t")) == NULL)
		return -2;
	if (binary)
		pf_input_set_binary(in);
	if (binary == 2)
		pf_input_keep_gzip(in);
	if (pf_input_next_member(in) != 1) {	/* -3: none, err: why */
		snprintf(err, errsize, "%s", pf_input_error(in));
		pf_input_free(in);
		return -3;
	}
	while ((r = pf_input_read(in, out + *got, *got + piece <= cap ?
	    piece : cap - *got)) > 0)
		*got += (size_t)r;
	if (r < 0)
		snprintf(err, errsize, "%s", pf_input_error(in));
	*then_zero = pf_input_read(in, out, 1) == 0;
	pf_input_free(in);
	return (int)r;
}

/* Binary data: lc0-like records (06 00 00 00 01 00 00 00, which
   libarchive's lzma bidder took for a header), NULs, line ends. */
static void
fill_data(uint8_t *d, size_t n)
{
	size_t i;
	uint32_t x = 12345;

	for (i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		d[i] = (i % 8356) < 8 ? (uint8_t)"\6\0\0\0\1\0\0\0"[i % 8356] :
		    (i % 7 == 0) ? '\n' : (i % 3 == 0) ? 0 : (uint8_t)(x >> 28);
	}
}

int
main(void)
{
	uint8_t *data, *out, *z;
	size_t got, zn, i;
	int fd, r, zero;
	char err[256];
	static const size_t pieces[] = { 1, 7, 8356, 1u << 20 };

	if ((fd = mkstemp(path)) == -1) {
		perror(path);
		return 1;
	}
	close(fd);
	data = malloc(N);
	out = malloc(N + 16);
	z = malloc(compressBound(N) + 64);
	if (data == NULL || out == NULL || z == NULL)
		return 1;
	fill_data(data, N);

	/* stored as it is, read in any piece size */
	put_file(data, N);
	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		r = read_all(1, pieces[i], out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == 0 && got == N && memcmp(out, data, N) == 0 && zero,
		    "binary: a raw file read whole in pieces of %zu bytes "
		    "(%zu read, %s)", pieces[i], got, err);
	}

	/* gzip, and gzip cut short: every byte zlib decodes from the cut
	   data, then the error, then the end */
	{
		z_stream s;
		uint8_t *ref = malloc(N);
		size_t want;

		memset(&s, 0, sizeof(s));
		deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
		    Z_DEFAULT_STRATEGY);
		s.next_in = data;
		s.avail_in = N;
		s.next_out = z;
		s.avail_out = (uInt)(compressBound(N) + 64);
		deflate(&s, Z_FINISH);
		zn = s.total_out;
		deflateEnd(&s);
		put_file(z, zn);
		r = read_all(1, 8356, out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == 0 && got == N && memcmp(out, data, N) == 0,
		    "binary: gzip data inflated whole (%zu bytes)", got);

		put_file(z, zn / 2);
		memset(&s, 0, sizeof(s));
		inflateInit2(&s, 16 + MAX_WBITS);
		s.next_in = z;
		s.avail_in = (uInt)(zn / 2);
		s.next_out = ref;
		s.avail_out = N;
		inflate(&s, Z_SYNC_FLUSH);
		want = s.total_out;
		inflateEnd(&s);
		r = read_all(1, 8356, out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == -1 && got == want && want > 0 &&
		    memcmp(out, data, got) == 0 && zero && err[0] != '\0',
		    "binary: gzip cut short hands out the %zu bytes zlib "
		    "decodes (%zu), then -1 (%s), then 0", want, got, err);
		free(ref);
		/* keep_gzip: the file as stored, whole or cut */
		put_file(z, zn);
		r = read_all(2, 8356, out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == 0 && got == zn && memcmp(out, z, zn) == 0,
		    "keep_gzip: a gzip file is handed out as stored (%zu "
		    "of %zu bytes)", got, zn);
		put_file(z, zn / 2);
		r = read_all(2, 8356, out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == 0 && got == zn / 2 && memcmp(out, z, zn / 2) == 0,
		    "keep_gzip: cut short too, for the caller to find");
	}

	/* zstd in two frames (as pzstd writes), natively */
	{
		size_t a = ZSTD_compress(z, compressBound(N), data, N / 3, 3);
		size_t b = ZSTD_compress(z + a, compressBound(N) + 64 - a,
		    data + N / 3, N - N / 3, 3);

		put_file(z, a + b);
		r = read_all(1, 1000, out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == 0 && got == N && memcmp(out, data, N) == 0,
		    "binary: two zstd frames read whole (%zu bytes, %s)", got,
		    err);
		/* the second frame cut: the first whole, and more */
		put_file(z, a + b / 2);
		r = read_all(1, 1000, out, N + 16, &got, &zero, err,
		    sizeof(err));
		CHECK(r == -1 && got >= N / 3 && got < N &&
		    memcmp(out, data, got) == 0 && err[0] != '\0',
		    "binary: zstd cut in its second frame: %zu bytes, the "
		    "first frame's %u and more, then -1 (%s)", got, N / 3, err);
	}

	/* ASCII paired with NULs: UTF-16 to the text reader, data here */
	for (i = 0; i < 4096; i++)
		data[i] = (i & 1) ? 0 : (uint8_t)('A' + i % 26);
	put_file(data, 4096);
	r = read_all(0, 4096, out, N, &got, &zero, err, sizeof(err));
	CHECK(r == -1 && got == 0 && strstr(err, "UTF-16LE") != NULL,
	    "text: ASCII paired with NULs is refused as UTF-16 (%s)", err);
	r = read_all(1, 4096, out, N, &got, &zero, err, sizeof(err));
	CHECK(r == 0 && got == 4096 && memcmp(out, data, 4096) == 0,
	    "binary: the same bytes are data (%zu read)", got);

	/* an empty file: no member, and no error */
	put_file(data, 0);
	r = read_all(1, 10, out, N, &got, &zero, err, sizeof(err));
	CHECK(r == -3 && err[0] == '\0', "binary: an empty file has no "
	    "member (%d, %s)", r, err);

	/* natural order */
	{
		static const char *const order[] = { "", "a", "a0", "a01",
		    "a1", "a2", "a10", "a10b", "a010c", "a11", "b",
		    "training.2.gz", "training.10.gz", "training.100.gz",
		    "x99999999999999999999", "x100000000000000000000" };
		size_t j, k, n = sizeof(order) / sizeof(order[0]);
		int bad = 0;

		for (j = 0; j < n; j++)
			for (k = 0; k < n; k++) {
				int c = pf_input_natcmp(order[j], order[k]);

				if ((j < k && c >= 0) || (j > k && c <= 0) ||
				    (j == k && c != 0)) {
					printf("# %s against %s: %d\n",
					    order[j], order[k], c);
					bad = 1;
				}
			}
		CHECK(!bad, "natural order: digits as numbers, of any length; "
		    "equal numbers (1, 01) by their bytes");
	}

	unlink(path);
	free(data);
	free(out);
	free(z);
	return t_done();
}
