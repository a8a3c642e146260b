/*
 * prog.c - the range-checked number parsers every tool's options go
 * through: a whole number or nothing, and errors that say which.
 */
#include <string.h>

#include "posflow.h"
#include "t.h"

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

int
main(void)
{
	CHECK(num("12", 0, 100, 12, NULL) && num("-3", -5, 5, -3, NULL),
	    "whole numbers in range");
	CHECK(num("abc", 0, 9, 0, "invalid") && num("", 0, 9, 0, "invalid") &&
	    num("5x", 0, 9, 0, "invalid") && num("0x10", 0, 99, 0, "invalid"),
	    "not a number is invalid, never 0");
	CHECK(num(" 5", 0, 9, 0, "invalid") && num("\n5", 0, 9, 0, "invalid") &&
	    num("\t5", 0, 9, 0, "invalid") && num("5 ", 0, 9, 0, "invalid"),
	    "white space before or after is invalid");
	CHECK(num("10", 0, 9, 0, "too large") && num("-1", 0, 9, 0,
	    "too small") && num("99999999999999999999", 0, 9, 0,
	    "too large"), "out of range says which way");
	CHECK(dbl("0.25", 0, 1, 0.25, NULL) && dbl("1e2", 0, 1000, 100, NULL),
	    "finite numbers in range");
	CHECK(dbl("nan", 0, 1, 0, "invalid") && dbl("\n1", 0, 9, 0,
	    "invalid") && dbl("1,5", 0, 9, 0, "invalid"),
	    "NaN, leading white space and junk are invalid");
	CHECK(dbl("1e999", 0, 1e300, 0, "too large") && dbl("inf", 0, 1e300,
	    0, "too large") && dbl("-1e999", -1, 1, 0, "too small") &&
	    dbl("-0.5", 0, 1, 0, "too small"), "out of range says which way");
	return t_done();
}
