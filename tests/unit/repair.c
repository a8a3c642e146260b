/*
 * repair.c - Panda's classification (METHODS.md section 5): the two worked
 * examples, the edges of each class, and the maybe case's probability over
 * many draws, within binomial bounds.
 */
#include <math.h>
#include <stdint.h>

#include "ext.h"
#include "repair.h"
#include "t.h"

static void
test_worked_examples(void)
{
	/* (1) vA = +1.0, vB = +1.5, vC = -2.0: -2.0 <= -1.5 <= 1.0. */
	for (double u = 0; u < 1; u += 0.125)
		CHECK_QUIET(pf_panda_class(100, 150, -200, u) ==
		    PF_REPAIR_DEFINITE, "example 1, u %g", u);
	CHECK(pf_panda_class(100, 150, -200, 0.5) == PF_REPAIR_DEFINITE,
	    "example 1 (vA +1.0, vB +1.5, vC -2.0) is definitely mis-evaluated");
	/* (2) vA = +1.0, vB = 0.0, vC = +0.1: maybe, p = 0.9.  u = u01 in
	   [0, 1] pawns: above 0.1 when u01 > 0.1. */
	CHECK(pf_panda_class(100, 0, 10, 0.05) == PF_REPAIR_MAYBE_NO &&
	    pf_panda_class(100, 0, 10, 0.10) == PF_REPAIR_MAYBE_NO &&
	    pf_panda_class(100, 0, 10, 0.11) == PF_REPAIR_MAYBE_YES &&
	    pf_panda_class(100, 0, 10, 0.99) == PF_REPAIR_MAYBE_YES,
	    "example 2 (vA +1.0, vB 0, vC +0.1) is a maybe, yes when u > vC");
}

static void
test_edges(void)
{
	/* vC == -vB: both conditions hold; definite comes first. */
	CHECK(pf_panda_class(100, 50, -50, 0.5) == PF_REPAIR_DEFINITE,
	    "vC = -vB <= vA: definite");
	/* -vB == vA: definite when vC <= -vB (both <= hold), else none
	   (the maybe case needs vC < vA). */
	CHECK(pf_panda_class(100, -100, 20, 0.5) == PF_REPAIR_DEFINITE &&
	    pf_panda_class(100, -100, 100, 0.5) == PF_REPAIR_DEFINITE &&
	    pf_panda_class(100, -100, 150, 0.5) == PF_REPAIR_NONE &&
	    pf_panda_class(-100, 100, -300, 0.5) == PF_REPAIR_DEFINITE,
	    "-vB = vA: definite when vC <= -vB, else none");
	/* -vB < vA <= vC: the reply only confirmed A: none. */
	CHECK(pf_panda_class(100, 0, 100, 0.99) == PF_REPAIR_NONE &&
	    pf_panda_class(100, 0, 250, 0.99) == PF_REPAIR_NONE,
	    "-vB < vA <= vC: not mis-evaluated");
	/* vA <= -vB: A's move did at least as well as A thought: none. */
	CHECK(pf_panda_class(-50, 0, -300, 0.99) == PF_REPAIR_NONE &&
	    pf_panda_class(-50, -20, 0, 0.99) == PF_REPAIR_NONE,
	    "vA < -vB: not mis-evaluated");
}

static void
test_maybe_rate(void)
{
	const int n = 200000;
	int yes = 0;
	double p = 0.9, sd = sqrt(n * p * (1 - p)), u;
	int in_range = 1, distinct = 0;
	double prev = -1;

	for (int k = 0; k < n; k++) {
		/* many seeds, many games, many plies */
		u = pf_panda_draw((uint64_t)k * 7919u, 0x1234abcdULL + (uint64_t)k / 300,
		    (uint16_t)(k % 300));
		in_range &= u >= 0 && u < 1;
		distinct += u != prev;
		prev = u;
		yes += pf_panda_class(100, 0, 10, u) == PF_REPAIR_MAYBE_YES;
	}
	CHECK(in_range && distinct == n, "draws lie in [0, 1) and vary");
	/* within 4.5 standard deviations of n p (a false alarm about once in
	   300,000 runs; the draws are fixed, so this is exact per build) */
	CHECK(fabs(yes - n * p) < 4.5 * sd,
	    "example 2 judged mis-evaluated in %d of %d draws (expected %.0f "
	    "+- %.0f)", yes, n, n * p, 4.5 * sd);
	/* a second probability: vA 2.0, vB -0.5, vC 1.0: p = 1/1.5 */
	yes = 0;
	for (int k = 0; k < n; k++)
		yes += pf_panda_class(200, -50, 100,
		    pf_panda_draw(42, (uint64_t)k, 7)) == PF_REPAIR_MAYBE_YES;
	p = 100.0 / 150.0;
	sd = sqrt(n * p * (1 - p));
	CHECK(fabs(yes - n * p) < 4.5 * sd,
	    "vA 2.0, vB -0.5, vC 1.0: %d of %d (expected %.0f)", yes, n, n * p);
	/* reproducible: the same seed, game and ply give the same number */
	CHECK(pf_panda_draw(5, 77, 12) == pf_panda_draw(5, 77, 12) &&
	    pf_panda_draw(5, 77, 12) != pf_panda_draw(6, 77, 12) &&
	    pf_panda_draw(5, 77, 12) != pf_panda_draw(5, 78, 12) &&
	    pf_panda_draw(5, 77, 12) != pf_panda_draw(5, 77, 13),
	    "the draw depends on the seed, the game and the ply, and on nothing "
	    "else");
}

int
main(void)
{
	test_worked_examples();
	test_edges();
	test_maybe_rate();
	return t_done();
}
