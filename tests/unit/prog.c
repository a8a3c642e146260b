/*
 * prog.c - the range-checked number parsers every tool's options go
 * through: a whole number or nothing, and errors that say which.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "posflow.h"
#include "t.h"

#define NUM	"not a whole number"
#define DBL	"not a decimal number"
#define SIZE	"not a size (a number, then k, m or g)"

static int
num(const char *s, long long min, long long max, long long want,
    const char *want_err)
{
	const char *err;
	long long v = pf_strtonum(s, min, max, &err);

	if (want_err == NULL)
		return err == NULL && v == want;
	return err != NULL && strcmp(err, want_err) == 0;
}

static int
dbl(const char *s, double min, double max, double want, const char *want_err)
{
	const char *err;
	double v = pf_strtod(s, min, max, &err);

	if (want_err == NULL)
		return err == NULL && v == want;
	return err != NULL && strcmp(err, want_err) == 0;
}

static int
size(const char *s, uint64_t min, uint64_t max, uint64_t want,
    const char *want_err)
{
	const char *err;
	uint64_t v = pf_strtosize(s, min, max, &err);

	if (want_err == NULL)
		return err == NULL && v == want;
	return err != NULL && strcmp(err, want_err) == 0;
}

static int
shortest(double v, int flt, const char *want)
{
	char buf[32];

	return strcmp(pf_shortest(v, flt, buf, sizeof(buf)), want) == 0;
}

/* Every text reads back as its number. */
static void
round_trips(void)
{
	uint64_t x = 88172645463325252ull;
	char buf[32];
	float f;
	double d;
	uint32_t u;
	int i, bad = 0;

	for (i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		u = (uint32_t)x;
		memcpy(&f, &u, sizeof(f));
		memcpy(&d, &x, sizeof(d));
		if (!isnan(f))
			bad += strtof(pf_shortest(f, 1, buf, sizeof(buf)),
			    NULL) != f;
		if (!isnan(d))
			bad += strtod(pf_shortest(d, 0, buf, sizeof(buf)),
			    NULL) != d;
	}
	CHECK(bad == 0, "shortest text reads back, %d of 400000 do not", bad);
}

int
main(void)
{
	CHECK(num("12", 0, 100, 12, NULL) && num("-3", -5, 5, -3, NULL),
	    "whole numbers in range");
	CHECK(num("abc", 0, 9, 0, NUM) && num("", 0, 9, 0, NUM) &&
	    num("5x", 0, 9, 0, NUM) && num("0x10", 0, 99, 0, NUM),
	    "not a number is invalid, never 0");
	CHECK(num(" 5", 0, 9, 0, NUM) && num("\n5", 0, 9, 0, NUM) &&
	    num("\t5", 0, 9, 0, NUM) && num("5 ", 0, 9, 0, NUM),
	    "white space before or after is invalid");
	CHECK(num("10", 0, 9, 0, "too large") && num("-1", 0, 9, 0,
	    "too small") && num("99999999999999999999", 0, 9, 0,
	    "too large"), "out of range says which way");
	CHECK(dbl("0.25", 0, 1, 0.25, NULL) && dbl("1e2", 0, 1000, 100, NULL),
	    "finite numbers in range");
	CHECK(dbl("nan", 0, 1, 0, DBL) && dbl("\n1", 0, 9, 0,
	    DBL) && dbl("1,5", 0, 9, 0, DBL),
	    "NaN, leading white space and junk are invalid");
	CHECK(dbl("inf", 0, 1e300, 0, DBL) && dbl("0x1p-1", 0, 1, 0,
	    DBL) && dbl("0X.8", 0, 1, 0, DBL) && dbl("1e-1", 0,
	    1, 0.1, NULL), "decimal only: no infinity, no hex float");
	CHECK(dbl("1e999", 0, 1e300, 0, "too large") &&
	    dbl("-1e999", -1, 1, 0, "too small") &&
	    dbl("-0.5", 0, 1, 0, "too small"), "out of range says which way");
	CHECK(size("0", 0, 100, 0, NULL) && size("64M", 0, 1ull << 40,
	    64ull << 20, NULL) && size("1.5k", 0, 1ull << 40, 1536, NULL) &&
	    size("2G", 0, 1ull << 40, 2ull << 30, NULL) &&
	    size("16K", 16384, 1ull << 40, 16384, NULL),
	    "sizes with K, M, G (powers of 1024) and fractions");
	CHECK(size("lots", 0, 99, 0, SIZE) && size(" 5", 0, 99, 0,
	    SIZE) && size("1e3", 0, 9999, 0, SIZE) &&
	    size("0x10", 0, 99, 0, SIZE) && size("", 0, 99, 0,
	    SIZE) && size("M", 0, 99, 0, SIZE) &&
	    size("1.2.3", 0, 99, 0, SIZE) && size(".", 0, 99, 0, SIZE) &&
	    size("1..2M", 0, 1ull << 40, 0, SIZE),
	    "sizes that are not numbers are invalid");
	CHECK(size("1K", 16384, 1ull << 40, 0, "too small") &&
	    size("2G", 0, 1ull << 30, 0, "too large"),
	    "sizes out of range say which way");
	CHECK(shortest(0.1, 0, "0.1") && shortest(1.0 / 3, 0,
	    "0.3333333333333333") && shortest(0.2f, 1, "0.2") &&
	    shortest(1.0f / 3, 1, "0.33333334") && shortest(1e-45f, 1,
	    "1e-45") && shortest(-2.5e-7, 0, "-2.5e-07") &&
	    shortest(5e-324, 0, "4.94065645841247e-324"),
	    "the fewest digits that read back (a double from 15)");
	CHECK(shortest(NAN, 0, "nan") && shortest(-NAN, 1, "nan") &&
	    shortest(INFINITY, 1, "inf") && shortest(-INFINITY, 0, "-inf"),
	    "not finite: nan, inf, -inf");
	round_trips();
	return t_done();
}
