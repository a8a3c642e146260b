/*
 * record_valid.c - libFuzzer target: the record stream reader with the
 * block checksums made valid, so that the record and extension decoders
 * behind the checksum see the mutated bytes.
 *
 * Input: one control byte, then stream bytes.  Before reading, every block
 * header found (walking stream headers and blocks, and scanning byte by
 * byte over anything else) gets the checksum of its payload, XXH3-64 or
 * XXH64 as the current stream header's flags say (posflow(5)); with bit 2
 * of the control byte also the record count its payload really holds.
 * Bits 0-1 then choose how the fixed stream reaches the reader: 0 plain,
 * 1 zstd (two frames, split in the middle), 2 gzip (two members, split in
 * the middle), 3 a zstd frame then a gzip member.  Properties as in
 * record.c (stream.h); the reference parser sees the fixed plain bytes, so
 * a well-formed stream must read exactly the same whichever way it is
 * compressed.
 */
#include <zlib.h>
#include <zstd.h>

#include "stream.h"

/* The records a block payload p[0..n) holds, by their length fields. */
static uint32_t
count_records(const uint8_t *p, size_t n)
{
	size_t at = 0;
	uint32_t c = 0, rlen;

	while (n - at >= 4) {
		rlen = pf_get32(p + at);
		if (rlen < PF_CORE_SIZE || rlen > n - at)
			break;
		at += rlen;
		c++;
	}
	return c;
}

static void
fix_checksums(uint8_t *p, size_t n, int fix_counts)
{
	size_t at = 0;
	unsigned flags = 0;

	while (n - at >= 4) {
		if (memcmp(p + at, "\x89PFS", 4) == 0 &&
		    n - at >= PF_HEADER_SIZE) {
			uint32_t hlen = pf_get32(p + at + 8);

			flags = pf_get16(p + at + 6);
			at += hlen >= PF_HEADER_SIZE && hlen <= n - at ? hlen :
			    PF_HEADER_SIZE;
			continue;
		}
		if (memcmp(p + at, "\x89PFB", 4) == 0 &&
		    n - at >= PF_BLOCK_HEADER_SIZE &&
		    pf_get32(p + at + 4) <= n - at - PF_BLOCK_HEADER_SIZE) {
			uint32_t blen = pf_get32(p + at + 4);
			uint8_t *pay = p + at + PF_BLOCK_HEADER_SIZE;

			if (fix_counts)
				pf_put32(p + at + 8, count_records(pay, blen));
			pf_put64(p + at + 16,
			    pf_block_checksum(flags, pay, blen));
			at += PF_BLOCK_HEADER_SIZE + (size_t)blen;
			continue;
		}
		at++;
	}
}

/* Append zstd frame / gzip member of p[0..n) to out at *len. */
static void
add_zstd(uint8_t *out, size_t *len, size_t cap, const uint8_t *p, size_t n)
{
	size_t r = ZSTD_compress(out + *len, cap - *len, p, n, 1);

	FUZZ_CHECK(!ZSTD_isError(r));
	*len += r;
}

static void
add_gzip(uint8_t *out, size_t *len, size_t cap, const uint8_t *p, size_t n)
{
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	FUZZ_CHECK(deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8,
	    Z_DEFAULT_STRATEGY) == Z_OK);
	zs.next_in = (uint8_t *)p;
	zs.avail_in = (uInt)n;
	zs.next_out = out + *len;
	zs.avail_out = (uInt)(cap - *len);
	FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
	*len = cap - zs.avail_out;
	deflateEnd(&zs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *plain, *out;
	size_t n, half, cap, len = 0;
	int mode;

	if (size < 1)
		return 0;
	mode = data[0] & 3;
	n = size - 1;
	half = n / 2;
	if ((plain = malloc(n + 1)) == NULL)
		return 0;
	memcpy(plain, data + 1, n);
	fix_checksums(plain, n, data[0] & 4);
	if (mode == 0) {
		fuzz_scratch_write(plain, n);
		read_stream(n, plain, n);
		free(plain);
		return 0;
	}
	cap = 2 * ZSTD_compressBound(n) + 2 * compressBound((uLong)n) + 256;
	FUZZ_CHECK((out = malloc(cap)) != NULL);
	if (mode == 1) {
		add_zstd(out, &len, cap, plain, half);
		add_zstd(out, &len, cap, plain + half, n - half);
	} else if (mode == 2) {
		add_gzip(out, &len, cap, plain, half);
		add_gzip(out, &len, cap, plain + half, n - half);
	} else {
		add_zstd(out, &len, cap, plain, half);
		add_gzip(out, &len, cap, plain + half, n - half);
	}
	fuzz_scratch_write(out, len);
	read_stream(len, plain, n);
	free(out);
	free(plain);
	return 0;
}
