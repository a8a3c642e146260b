/*
 * utf8.h - UTF-8 checks, and the one conversion every string takes on its
 * way into a stream (posflow(5), Extension types).
 *
 * Stream strings hold UTF-8, but what the inputs hold is not always that:
 * PGN files from old databases are Latin-1 (ISO-8859-1), and a string that
 * an earlier step cut at a byte limit may end inside a character.  The
 * rule, applied by the extension encoders (ext.c), so by every writer:
 *
 *  - bytes that form valid UTF-8 are kept (shortest form, no surrogates,
 *    nothing above U+10FFFF);
 *  - any other byte is read as Latin-1 and becomes its UTF-8 encoding
 *    (0xe9 becomes U+00E9, two bytes);
 *  - the result is cut to the field's byte limit at a character boundary.
 *
 * Nothing here allocates, prints or exits.
 */
#ifndef PF_UTF8_H
#define PF_UTF8_H

#include <stddef.h>

/* Length (1 to 4) of the valid UTF-8 character at s, or 0 when the bytes
   at s do not start one.  len is the number of bytes readable at s, > 0. */
size_t	pf_utf8_seq(const char *s, size_t len);

/* 1 when s[0..len) is valid UTF-8 throughout, else 0. */
int	pf_utf8_valid(const char *s, size_t len);

/* The length of the longest prefix of s that is at most max bytes and does
   not end inside a character: len when len <= max.  For valid UTF-8. */
size_t	pf_utf8_cut(const char *s, size_t len, size_t max);

/*
 * Convert src[0..len) by the rule above into dst, writing at most cap bytes
 * (no NUL is added), and return the number written.  dst holds valid
 * UTF-8 and never ends inside a character.  dst and src must not overlap.
 * Valid UTF-8 that fits comes out unchanged, so converting twice is
 * converting once.
 *
 * One case is not read as Latin-1: when src is at least cap bytes long,
 * an incomplete character at its very end (a lead byte and the
 * continuation bytes that follow it up to the end, too few) is dropped.
 * Such a src was most likely cut at the same limit by an older writer or
 * a reader's buffer, and read as Latin-1 its bytes would come out longer
 * than the room left, so at most one character of them would be kept,
 * and that one wrong.
 */
size_t	pf_utf8_convert(char *dst, size_t cap, const char *src, size_t len);

#endif
