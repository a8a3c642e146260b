/*
 * utf8.c - UTF-8 validation, cutting at character boundaries, and the
 * Latin-1 fallback for bytes that are not UTF-8 (see utf8.h).
 *
 * Validity follows RFC 3629 / Unicode table 3-7: lead bytes c2-f4, the
 * second byte's range narrowed after e0, ed, f0 and f4 so that overlong
 * forms, surrogates and code points above U+10FFFF are refused.
 */
#include <stdint.h>
#include <string.h>

#include "utf8.h"

/* Bytes in the character a lead byte starts: 0 for a byte that is not a
   lead (a continuation byte, c0, c1, f5-ff). */
static size_t
seq_need(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

static int
second_ok(unsigned char lead, unsigned char c)
{
	switch (lead) {
	case 0xe0:
		return c >= 0xa0 && c <= 0xbf;
	case 0xed:
		return c >= 0x80 && c <= 0x9f;
	case 0xf0:
		return c >= 0x90 && c <= 0xbf;
	case 0xf4:
		return c >= 0x80 && c <= 0x8f;
	default:
		return c >= 0x80 && c <= 0xbf;
	}
}

/*
 * How many bytes at s (len > 0) agree with a UTF-8 character, and in *need
 * how many that character takes (0: s[0] is no lead).  A complete character
 * is a return value equal to *need.
 */
static size_t
seq_match(const unsigned char *s, size_t len, size_t *need)
{
	size_t n, i;

	if ((n = *need = seq_need(s[0])) <= 1)
		return n;
	if (len < 2 || !second_ok(s[0], s[1]))
		return 1;
	for (i = 2; i < n && i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return i;
	return i;
}

size_t
pf_utf8_seq(const char *s, size_t len)
{
	size_t need;

	return seq_match((const unsigned char *)s, len, &need) == need ?
	    need : 0;
}

int
pf_utf8_valid(const char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if ((n = pf_utf8_seq(s + i, len - i)) == 0)
			return 0;
		i += n;
	}
	return 1;
}

size_t
pf_utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	/* s[max] is the first byte left out: back up while it continues
	   the character before it. */
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

size_t
pf_utf8_convert(char *dst, size_t cap, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, need, m, run, k;

	while (i < len) {
		/* a run of ASCII at once: most tag values are nothing else
		   (eight bytes a step while none has its top bit) */
		run = 0;
		while (len - i - run >= 8) {
			uint64_t w;

			memcpy(&w, s + i + run, 8);
			if (w & 0x8080808080808080ULL)
				break;
			run += 8;
		}
		for (; i + run < len && s[i + run] < 0x80; run++)
			;
		if (run > 0) {
			k = run < cap - o ? run : cap - o;
			memcpy(dst + o, s + i, k);
			o += k;
			i += k;
			if (k < run)
				break;	/* full */
			continue;
		}
		m = seq_match(s + i, len - i, &need);
		if (need > 0 && m == need) {	/* a whole character */
			if (need > cap - o)
				break;
			memcpy(dst + o, s + i, need);
			o += need;
			i += need;
			continue;
		}
		/* A character cut by the end of a src that filled the
		   field: see utf8.h. */
		if (need > 0 && m == len - i && len >= cap)
			break;
		/* Not UTF-8: the byte is a Latin-1 character, U+0080 to
		   U+00FF (ASCII is always valid above). */
		if (cap - o < 2)
			break;
		dst[o++] = (char)(0xc0 | s[i] >> 6);
		dst[o++] = (char)(0x80 | (s[i] & 0x3f));
		i++;
	}
	return o;
}
