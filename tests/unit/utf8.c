/*
 * utf8.c - unit tests of lib/utf8.c: the validity of every 1- to 3-byte
 * sequence and a sweep of 4-byte ones against a decoder written here from
 * the definition (code point ranges, not byte ranges), cutting at
 * character boundaries, and pf_utf8_convert against a reference built the
 * slow way (convert all, then cut) on hand-picked and random inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "utf8.h"

/*
 * The reference: the length of the character at s if it is a valid UTF-8
 * encoding, decoded and checked by code point (shortest form, no
 * surrogates, at most U+10FFFF), else 0.
 */
static size_t
ref_seq(const unsigned char *s, size_t len)
{
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	else if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* 1 when s[0..len), len < 4, is the start of some valid character but not
   all of one: some completion with continuation bytes is valid. */
static int
ref_incomplete(const unsigned char *s, size_t len)
{
	unsigned char buf[4];
	unsigned c;

	if (len == 0 || len >= 4 || ref_seq(s, len) != 0)
		return 0;
	for (c = 0x80; c <= 0xbf; c++) {
		memcpy(buf, s, len);
		memset(buf + len, 0x80, 4 - len);
		if (len == 1)
			buf[1] = (unsigned char)c;
		if (ref_seq(buf, 4) > len)
			return 1;
	}
	return 0;
}

/* The reference conversion: every byte that does not start a valid
   character taken as Latin-1, all of it; then cut to cap before the first
   character that does not fit; the incomplete tail of a src of cap bytes
   or more dropped first. */
static size_t
ref_convert(unsigned char *dst, size_t cap, const unsigned char *src,
    size_t len)
{
	unsigned char *all = malloc(2 * len + 1);
	size_t i, o = 0, n, k, out = 0;

	if (len >= cap)
		for (k = 1; k < 4 && k <= len; k++)
			if (ref_incomplete(src + len - k, k)) {
				len -= k;
				break;
			}
	for (i = 0; i < len; i += n) {
		if ((n = ref_seq(src + i, len - i)) > 0) {
			memcpy(all + o, src + i, n);
			o += n;
		} else {
			all[o++] = (unsigned char)(0xc0 | src[i] >> 6);
			all[o++] = (unsigned char)(0x80 | (src[i] & 0x3f));
			n = 1;
		}
	}
	for (i = 0; i < o; i += n) {
		n = ref_seq(all + i, o - i);
		if (i + n > cap)
			break;
		out = i + n;
	}
	memcpy(dst, all, out);
	free(all);
	return out;
}

static void
test_seq(void)
{
	unsigned char b[4];
	uint32_t v;
	unsigned a, c;
	long bad = 0;

	for (v = 0; v < 0x100; v++) {
		b[0] = (unsigned char)v;
		CHECK_QUIET(pf_utf8_seq((char *)b, 1) == ref_seq(b, 1),
		    "1 byte %02x", v);
	}
	for (v = 0; v < 0x10000; v++) {
		b[0] = (unsigned char)(v >> 8), b[1] = (unsigned char)v;
		if (pf_utf8_seq((char *)b, 2) != ref_seq(b, 2))
			bad++;
	}
	for (v = 0; v < 0x1000000; v++) {
		b[0] = (unsigned char)(v >> 16), b[1] = (unsigned char)(v >> 8);
		b[2] = (unsigned char)v;
		if (pf_utf8_seq((char *)b, 3) != ref_seq(b, 3))
			bad++;
	}
	/* 4 bytes: every lead and second byte, the others from a sweep. */
	for (v = 0; v < 0x10000; v++)
		for (a = 0; a < 256; a += 17)
			for (c = 0; c < 256; c += 51) {
				b[0] = (unsigned char)(v >> 8);
				b[1] = (unsigned char)v;
				b[2] = (unsigned char)a, b[3] = (unsigned char)c;
				if (pf_utf8_seq((char *)b, 4) != ref_seq(b, 4))
					bad++;
			}
	CHECK(bad == 0 && t_failed == 0,
	    "every 1- to 3-byte sequence and a 4-byte sweep agree with the "
	    "code point definition (%ld differ)", bad);
	CHECK(pf_utf8_seq("\xe2\x82\xac", 3) == 3 &&
	    pf_utf8_seq("\xe2\x82\xac", 2) == 0 &&
	    pf_utf8_seq("\xf0\x9f\x98\x80", 4) == 4 &&
	    pf_utf8_seq("\xc3\xa9", 2) == 2 && pf_utf8_seq("\xe9", 1) == 0,
	    "euro, emoji and e-acute whole; cut short or Latin-1 refused");
	CHECK(pf_utf8_seq("\xc0\xaf", 2) == 0 &&
	    pf_utf8_seq("\xe0\x80\xaf", 3) == 0 &&
	    pf_utf8_seq("\xed\xa0\x80", 3) == 0 &&
	    pf_utf8_seq("\xf4\x90\x80\x80", 4) == 0 &&
	    pf_utf8_seq("\xf5\x80\x80\x80", 4) == 0 &&
	    pf_utf8_seq("\x80", 1) == 0,
	    "overlong forms, surrogates, above U+10FFFF, a lone continuation "
	    "refused");
	CHECK(pf_utf8_valid("", 0) && pf_utf8_valid("a\0b", 3) &&
	    pf_utf8_valid("a\xe2\x82\xac\xc3\xa9", 6) &&
	    !pf_utf8_valid("a\xe2\x82", 3) && !pf_utf8_valid("Caf\xe9", 4),
	    "pf_utf8_valid on whole strings");
}

static void
test_cut(void)
{
	const char *s = "a\xe2\x82\xac\xe2\x82\xac";	/* a, euro, euro */

	CHECK(pf_utf8_cut(s, 7, 7) == 7 && pf_utf8_cut(s, 7, 100) == 7,
	    "a string that fits is not cut");
	CHECK(pf_utf8_cut(s, 7, 6) == 4 && pf_utf8_cut(s, 7, 5) == 4 &&
	    pf_utf8_cut(s, 7, 4) == 4 && pf_utf8_cut(s, 7, 3) == 1 &&
	    pf_utf8_cut(s, 7, 1) == 1 && pf_utf8_cut(s, 7, 0) == 0,
	    "cut at the boundary at or before the limit");
}

static void
test_convert(void)
{
	char out[512], src[1024];
	unsigned char ref[512];
	size_t n, m, i, cap, len;
	long bad = 0, round;

	n = pf_utf8_convert(out, sizeof(out), "M\xfcller, Ren\xe9", 12);
	CHECK(n == 14 && memcmp(out, "M\xc3\xbcller, Ren\xc3\xa9", 14) == 0,
	    "Latin-1 bytes become their UTF-8 encoding");
	n = pf_utf8_convert(out, sizeof(out), "\xe2\x82\xac \xe9\xc3\xa9",
	    7);
	CHECK(n == 8 && memcmp(out, "\xe2\x82\xac \xc3\xa9\xc3\xa9", 8) == 0,
	    "UTF-8 and Latin-1 mixed: each byte read the way it can be");
	n = pf_utf8_convert(out, sizeof(out), "x\xed\xa0\x80\xc0\xaf", 6);
	CHECK(n == 11 && pf_utf8_valid(out, n) &&
	    memcmp(out, "x\xc3\xad\xc2\xa0\xc2\x80\xc3\x80\xc2\xaf", 11) == 0,
	    "a surrogate and an overlong form are bytes, not characters");
	/* "a" and 200 euro signs into 255 bytes: 84 of them fit. */
	src[0] = 'a';
	for (i = 0; i < 200; i++)
		memcpy(src + 1 + 3 * i, "\xe2\x82\xac", 3);
	n = pf_utf8_convert(out, 255, src, 601);
	CHECK(n == 253 && memcmp(out, src, 253) == 0,
	    "a long UTF-8 string is cut at a character boundary (%zu)", n);
	/* The same, cut at 255 bytes before (in the middle of the 85th
	   euro): the broken tail is dropped, not read as Latin-1. */
	n = pf_utf8_convert(out, 255, src, 255);
	CHECK(n == 253 && memcmp(out, src, 253) == 0,
	    "a string cut mid-character at the limit loses the broken tail");
	n = pf_utf8_convert(out, 253, src + 1, 253);
	CHECK(n == 252 && memcmp(out, src + 1, 252) == 0,
	    "... a lone lead byte at the end too");
	/* Shorter than the limit: a trailing partial is Latin-1. */
	n = pf_utf8_convert(out, 255, "Caf\xe9", 4);
	CHECK(n == 5 && memcmp(out, "Caf\xc3\xa9", 5) == 0,
	    "a short string ending in a Latin-1 byte keeps it");
	n = pf_utf8_convert(out, 255, "ab\xe2\x82", 4);
	CHECK(n == 6 && memcmp(out, "ab\xc3\xa2\xc2\x82", 6) == 0,
	    "a short string ending in a partial character: Latin-1 too");
	/* 200 Latin-1 bytes become 400: cut to 254. */
	memset(src, 0xe9, 200);
	n = pf_utf8_convert(out, 255, src, 200);
	CHECK(n == 254 && pf_utf8_valid(out, n) &&
	    memcmp(out, "\xc3\xa9\xc3\xa9", 4) == 0,
	    "Latin-1 that grows past the limit is cut at a boundary (%zu)", n);
	CHECK(pf_utf8_convert(out, 0, "abc", 3) == 0 &&
	    pf_utf8_convert(out, 1, "\xe9", 1) == 0 &&
	    pf_utf8_convert(out, 10, "", 0) == 0, "no room, nothing to do");

	/* Random strings, biased to bytes that make UTF-8 interesting. */
	srand(12345);
	for (round = 0; round < 200000; round++) {
		static const unsigned char pick[] = { 'a', 0x00, 0x7f, 0x80,
		    0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
		    0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x82, 0xac };

		len = (size_t)(rand() % 40);
		cap = (size_t)(rand() % 48);
		for (i = 0; i < len; i++)
			src[i] = rand() % 3 == 0 ? (char)(rand() & 0xff) :
			    (char)pick[rand() % (int)sizeof(pick)];
		n = pf_utf8_convert(out, cap, src, len);
		m = ref_convert(ref, cap, (unsigned char *)src, len);
		if (n != m || memcmp(out, ref, n) != 0 || n > cap ||
		    !pf_utf8_valid(out, n))
			bad++;
		/* Converting again changes nothing. */
		if (pf_utf8_convert(src + 512, cap, out, n) != n ||
		    memcmp(src + 512, out, n) != 0)
			bad++;
		/* Valid UTF-8 that fits passes unchanged. */
		if (pf_utf8_valid(src, len) && len <= cap &&
		    (n != len || memcmp(out, src, len) != 0))
			bad++;
	}
	CHECK(bad == 0, "200000 random strings: as the reference, valid, "
	    "within the limit, converting twice is once (%ld bad)", bad);

	/* Mostly ASCII, as tag values are: runs of eight and more (read a
	   word at a time) broken at every offset, and cut by every cap. */
	bad = 0;
	for (round = 0; round < 200000; round++) {
		len = (size_t)(rand() % 64);
		cap = (size_t)(rand() % 72);
		for (i = 0; i < len; i++)
			src[i] = rand() % 10 != 0 ? (char)(' ' + rand() % 95) :
			    rand() % 2 ? (char)0xc3 : (char)(rand() & 0xff);
		n = pf_utf8_convert(out, cap, src, len);
		m = ref_convert(ref, cap, (unsigned char *)src, len);
		if (n != m || memcmp(out, ref, n) != 0)
			bad++;
	}
	CHECK(bad == 0, "200000 mostly ASCII strings: as the reference "
	    "(%ld bad)", bad);
}

int
main(void)
{
	test_seq();
	test_cut();
	test_convert();
	return t_done();
}
