/*
 * utf8.c - libFuzzer target: the UTF-8 checks and the conversion every
 * string takes on its way into a stream (lib/utf8.h).
 *
 * Input: one byte, the field limit cap (0-255), then the string.  Against
 * a byte-by-byte reading of RFC 3629 written here:
 *   - pf_utf8_valid and pf_utf8_seq agree with it;
 *   - pf_utf8_convert writes at most cap bytes of valid UTF-8, keeps
 *     valid UTF-8 that fits unchanged, is idempotent, and writes a prefix
 *     of the unlimited conversion (each valid character kept, each other
 *     byte read as Latin-1), the longest that ends at a character boundary
 *     unless the string filled the field (then a character cut at its very
 *     end may be dropped, utf8.h);
 *   - pf_utf8_cut of valid UTF-8 is the longest prefix of at most max
 *     bytes that ends at a character boundary.
 */
#include "fuzz.h"
#include "utf8.h"

/* Length of the valid character at s[0..n), or 0. */
static size_t
naive_char(const uint8_t *s, size_t n)
{
	uint32_t c = s[0];
	size_t k, j;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		k = 1, c &= 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		k = 2, c &= 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		k = 3, c &= 0x07;
	else
		return 0;
	if (n - 1 < k)
		return 0;
	for (j = 1; j <= k; j++) {
		if ((s[j] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (s[j] & 0x3F);
	}
	if ((k == 2 && c < 0x800) || (k == 3 && (c < 0x10000 ||
	    c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	return k + 1;
}

static int
naive_valid(const uint8_t *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = naive_char(s + i, n - i)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

/* The longest prefix of valid s[0..n) of at most max bytes ending at a
   character boundary. */
static size_t
naive_cut(const uint8_t *s, size_t n, size_t max)
{
	size_t i = 0, k;

	while (i < n && (k = naive_char(s + i, n - i)) <= max - i)
		i += k;
	return i;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *src, *full, *dst, *again;
	size_t cap, n, i, o, fo, o2, k;

	if (size < 1)
		return 0;
	cap = data[0];
	n = size - 1;
	/* Exact-size copies: an over-read is an ASan report. */
	src = malloc(n + 1);
	full = malloc(2 * n + 1);
	dst = malloc(cap + 1);
	again = malloc(cap + 1);
	FUZZ_CHECK(src && full && dst && again);
	memcpy(src, data + 1, n);

	FUZZ_CHECK(pf_utf8_valid((char *)src, n) == naive_valid(src, n));
	for (i = 0; i < n; i++)
		FUZZ_CHECK(pf_utf8_seq((char *)src + i, n - i) ==
		    naive_char(src + i, n - i));

	/* The unlimited conversion, by hand. */
	for (i = 0, fo = 0; i < n;) {
		if ((k = naive_char(src + i, n - i)) > 0) {
			memcpy(full + fo, src + i, k);
			fo += k;
			i += k;
		} else {
			full[fo++] = (uint8_t)(0xC0 | src[i] >> 6);
			full[fo++] = (uint8_t)(0x80 | (src[i] & 0x3F));
			i++;
		}
	}
	FUZZ_CHECK(naive_valid(full, fo));
	FUZZ_CHECK(pf_utf8_convert((char *)full + fo, 0, (char *)src, n) == 0);

	o = pf_utf8_convert((char *)dst, cap, (char *)src, n);
	FUZZ_CHECK(o <= cap);
	FUZZ_CHECK(naive_valid(dst, o));
	FUZZ_CHECK(o <= fo && memcmp(dst, full, o) == 0);
	if (n < cap)
		FUZZ_CHECK(o == naive_cut(full, fo, cap));
	else
		FUZZ_CHECK(o <= naive_cut(full, fo, cap));
	if (n <= cap && naive_valid(src, n))
		FUZZ_CHECK(o == n && memcmp(dst, src, n) == 0);
	o2 = pf_utf8_convert((char *)again, cap, (char *)dst, o);
	FUZZ_CHECK(o2 == o && memcmp(again, dst, o) == 0);

	FUZZ_CHECK(pf_utf8_cut((char *)full, fo, cap) ==
	    naive_cut(full, fo, cap));

	free(src);
	free(full);
	free(dst);
	free(again);
	return 0;
}
