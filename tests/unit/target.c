/*
 * target.c - unit tests for lib/target.c: the value formulas (Table 5.1 of
 * seed 004), the mate mapping, hand-worked zeman distributions, softmax
 * limits, quantisation to exactly 65535, the blend, the linear reward over
 * a whole game, and the policy builder against real positions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posflow.h"
#include "target.h"
#include "t.h"

#define NEAR(a, b, eps)	(fabs((a) - (b)) <= (eps))

static int
probs_near(const double *got, const double *want, int n, double eps)
{
	int i;

	for (i = 0; i < n; i++)
		if (!NEAR(got[i], want[i], eps))
			return 0;
	return 1;
}

static void
print_probs(const char *what, const double *p, int n)
{
	int i;

	printf("# %s:", what);
	for (i = 0; i < n; i++)
		printf(" %.6f", p[i]);
	printf("\n");
}

/* Run a policy method on cp[] and compare with want[] to eps. */
static int
policy_is(int method, double param1, double param2, const int32_t *cp,
    int n, const double *want, double eps)
{
	pf_policy_params p;
	double prob[PF_MAX_MOVES];

	pf_policy_params_default(&p, method);
	if (method == PF_POLICY_ZEMAN) {
		p.drop = param1;
		p.power = param2;
	} else
		p.temperature = param1;
	if (pf_policy_probs(&p, cp, n, prob) == -1) {
		printf("# pf_policy_probs failed\n");
		return 0;
	}
	if (!probs_near(prob, want, n, eps)) {
		print_probs("got", prob, n);
		return 0;
	}
	return 1;
}

static void
test_tanh_table(void)
{
	/* Seed 004, Table 5.1: material down by pawns -> |Q|, two decimals. */
	static const int pawns[] = { 1, 3, 5, 9, 12, 14, 17, 20 };
	static const char *const want[] = { "0.10", "0.29", "0.46", "0.72",
		"0.83", "0.89", "0.94", "0.96" };
	char buf[16], neg[16];
	size_t i;

	for (i = 0; i < sizeof(pawns) / sizeof(pawns[0]); i++) {
		snprintf(buf, sizeof(buf), "%.2f",
		    pf_value_tanh(100.0 * pawns[i], PF_TANH_SPREAD));
		snprintf(neg, sizeof(neg), "%.2f",
		    -pf_value_tanh(-100.0 * pawns[i], PF_TANH_SPREAD));
		CHECK(strcmp(buf, want[i]) == 0 && strcmp(neg, want[i]) == 0,
		    "tanh s=0.2, %d pawns: %s (want %s, mirrored %s)",
		    pawns[i], buf, want[i], neg);
	}
	CHECK(pf_value_tanh(0, 0.2) == 0, "tanh of 0 is 0");
	/* The seed's form (1 - e^-sp) / (1 + e^-sp) is the same function. */
	CHECK(NEAR(pf_value_tanh(250, 0.2),
	    (1 - exp(-0.2 * 2.5)) / (1 + exp(-0.2 * 2.5)), 1e-12),
	    "tanh equals the seed's (1 - e^-sp) / (1 + e^-sp)");
	CHECK(pf_value_tanh(31900, 0.2) <= 1 && pf_value_tanh(31900, 0.2) > 0.999,
	    "tanh of a mate score is about 1");
}

static void
test_value_formulas(void)
{
	CHECK(pf_value_logistic(0, 170) == 0, "logistic of 0 is 0");
	CHECK(NEAR(pf_value_logistic(170, 170), 0.4621171572600098, 1e-12),
	    "logistic(170, alpha 170) = 2/(1+e^-1)-1");
	CHECK(NEAR(pf_value_logistic(-170, 170), -0.4621171572600098, 1e-12),
	    "logistic is odd");
	CHECK(pf_value_logistic(-32000, 1) == -1 &&
	    pf_value_logistic(32000, 1) == 1,
	    "logistic saturates without NaN");
	CHECK(pf_value_wdl(37, 37, 100) == 0.5, "wdl: S(a) = 0.5");
	CHECK(NEAR(pf_value_wdl(137, 37, 100), 0.7310585786300049, 1e-12),
	    "wdl: S(a + b) = 1/(1+e^-1)");
	CHECK(NEAR(pf_value_wdl(0, 0, PF_WDL_B) +
	    pf_value_wdl(0, 0, PF_WDL_B), 1, 1e-12), "wdl default centred");
	CHECK(NEAR(pf_value_wdl_engine(500, 300, 200), 0.65, 1e-12),
	    "wdl engine: (W + D/2)/1000");
	CHECK(pf_value_wdl_engine(0, 1000, 0) == 0.5, "wdl engine: a draw");
}

static void
test_mate_mapping(void)
{
	CHECK(pf_score_cp(PF_SCORE_MATE, 1) == 31900, "mate 1 -> 31900");
	CHECK(pf_score_cp(PF_SCORE_MATE, -3) == -31700, "mate -3 -> -31700");
	CHECK(pf_score_cp(PF_SCORE_MATE, 0) == -PF_MATE_CP,
	    "mate 0 (checkmated) -> -32000");
	CHECK(pf_score_cp(PF_SCORE_CP, 42) == 42 &&
	    pf_score_cp(PF_SCORE_CP, -7) == -7, "cp unchanged");
}

static void
test_zeman(void)
{
	static const int32_t one[] = { 37 };
	static const double one_w[] = { 1 };
	static const int32_t eq[] = { 10, 10, 10, 10 };
	static const double eq_w[] = { 1.0 / 3, 1.0 / 3, 1.0 / 3, 0 };
	static const int32_t eq3[] = { -5, -5, -5 };
	static const double eq3_w[] = { 1.0 / 3, 1.0 / 3, 1.0 / 3 };
	static const int32_t three[] = { 100, 50, 0 };
	static const double three_w[] = { 16.0 / 17, 1.0 / 17, 0 };
	static const int32_t two[] = { 30, -20 };
	static const double two_w[] = { 1, 0 };
	static const int32_t five[] = { 200, 100, 50, 0, -300 };
	static const double five_w[] = { 256.0 / 273, 16.0 / 273, 1.0 / 273,
		0, 0 };
	static const int32_t unsorted[] = { 50, -300, 200, 0, 100 };
	static const double unsorted_w[] = { 1.0 / 273, 0, 256.0 / 273, 0,
		16.0 / 273 };
	static const int32_t mates[] = { 31800, 31500, 0, -50 };
	static const double mates_w[] = { 0.5094776086073642,
		0.4905223913926358, 0, 0 };
	static const int32_t mated[] = { 10, -31900, -31800, 0 };
	static const double mated_w[] = { 0.5003144159334785, 0, 0,
		0.4996855840665215 };
	static const int32_t tie_low[] = { 0, 0, 50, 0 };
	static const double tie_low_w[] = { 0, 0, 1, 0 };
	static const int32_t tie_top[] = { 40, 40, 0, 0 };
	static const double tie_top_w[] = { 0.5, 0.5, 0, 0 };
	static const double three_p2_w[] = { 0.8, 0.2, 0 };
	static const int32_t eight[] = { 80, 70, 60, 50, 40, 30, 20, 10 };
	static const double eight_half_w[] = { 81.0 / 98, 16.0 / 98, 1.0 / 98,
		0, 0, 0, 0, 0 };
	int32_t many[100];
	double want[100];
	pf_policy_params p;
	int i;

	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, one, 1, one_w, 0),
	    "zeman: one legal move gets 1");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, eq, 4, eq_w, 1e-15),
	    "zeman: 4 equal moves: the last listed is dropped, 1/3 each");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, eq3, 3, eq3_w, 1e-15),
	    "zeman: 3 equal moves (n < 4, none dropped): 1/3 each");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, three, 3, three_w, 1e-15),
	    "zeman: 100 50 0 (n < 4) -> 16/17 1/17 0");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, two, 2, two_w, 0),
	    "zeman: two moves -> 1 0");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, five, 5, five_w, 1e-15),
	    "zeman: 200 100 50 0 -300 -> 256/273 16/273 1/273 0 0");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, unsorted, 5, unsorted_w,
	    1e-15), "zeman: table order does not matter");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, mates, 4, mates_w, 1e-12),
	    "zeman: mate in 2 and mate in 5 share, cp moves get 0");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, mated, 4, mated_w, 1e-12),
	    "zeman: moves that get mated: the weakest dropped, next min 0");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, tie_low, 4, tie_low_w, 0),
	    "zeman: tie at the drop boundary: the later listed is dropped");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.25, 4, tie_top, 4, tie_top_w, 0),
	    "zeman: two best moves tied share equally");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0, 2, three, 3, three_p2_w, 1e-15),
	    "zeman --drop 0 --power 2: 100 50 0 -> 0.8 0.2 0");
	CHECK(policy_is(PF_POLICY_ZEMAN, 0.5, 4, eight, 8, eight_half_w,
	    1e-15), "zeman --drop 0.5: 8 moves, 4 dropped: 80 70 60 50 "
	    "scaled 1 2/3 1/3 0 -> 81/98 16/98 1/98 0");

	/* floor(0.29 * 100) must be 29 although 0.29 * 100 < 29 in binary:
	   100 moves with distinct scores, 29 dropped, 71 kept. */
	for (i = 0; i < 100; i++)
		many[i] = 1000 - 10 * i;
	pf_policy_params_default(&p, PF_POLICY_ZEMAN);
	p.drop = 0.29;
	p.power = 1;
	{
		double prob[100], sum = 0;
		int zeros = 0;

		for (i = 0; i < 71; i++)
			sum += (double)(70 - i) / 70;
		for (i = 0; i < 100; i++)
			want[i] = i < 71 ? (double)(70 - i) / 70 / sum : 0;
		CHECK(pf_policy_probs(&p, many, 100, prob) == 0 &&
		    probs_near(prob, want, 100, 1e-12),
		    "zeman --drop 0.29 --power 1 over 100 moves");
		for (i = 0; i < 100; i++)
			zeros += prob[i] == 0;
		CHECK(zeros == 30, "zeman: 29 dropped + the kept minimum = 30 "
		    "zeros (got %d)", zeros);
	}
	CHECK(pf_policy_probs(&p, many, 0, want) == 0, "zeman: n = 0 is fine");
}

static void
test_softmax(void)
{
	static const int32_t a[] = { 10, 30, 20 };
	static const double argmax[] = { 0, 1, 0 };
	static const double uniform[] = { 1.0 / 3, 1.0 / 3, 1.0 / 3 };
	static const int32_t tie[] = { 30, 30, 0 };
	static const double tie_w[] = { 0.5, 0.5, 0 };
	static const int32_t b[] = { 100, 0 };
	static const double b_w[] = { 0.7310585786300049, 0.2689414213699951 };
	static const int32_t mates[] = { 31900, -31900, 0 };
	static const double mates_w[] = { 1, 0, 0 };
	static const int32_t wp[] = { 100, -100 };
	static const double wp_w[] = { 0.9902546469938494,
		0.0097453530061506 };
	pf_policy_params p;
	double prob[4];

	CHECK(policy_is(PF_POLICY_SOFTMAX, 1e-9, 0, a, 3, argmax, 0),
	    "softmax: T -> 0 is argmax");
	CHECK(policy_is(PF_POLICY_SOFTMAX, 1e-9, 0, tie, 3, tie_w, 0),
	    "softmax: T -> 0 with a tie for best: equal shares");
	CHECK(policy_is(PF_POLICY_SOFTMAX, 1e12, 0, a, 3, uniform, 1e-9),
	    "softmax: large T is uniform");
	CHECK(policy_is(PF_POLICY_SOFTMAX, 100, 0, b, 2, b_w, 1e-12),
	    "softmax T=100: 100 0 -> e/(e+1)");
	CHECK(policy_is(PF_POLICY_SOFTMAX, 100, 0, mates, 3, mates_w, 1e-12),
	    "softmax: mate scores do not overflow");
	CHECK(policy_is(PF_POLICY_WINPROB, 1e-9, 0, a, 3, argmax, 0),
	    "winprob: T -> 0 is argmax");
	CHECK(policy_is(PF_POLICY_WINPROB, 1e9, 0, a, 3, uniform, 1e-9),
	    "winprob: large T is uniform");
	pf_policy_params_default(&p, PF_POLICY_WINPROB);
	CHECK(p.temperature == PF_WINPROB_T && p.wdl_b == PF_WDL_B,
	    "winprob defaults");
	p.wdl_a = 0;
	p.wdl_b = 100;
	p.temperature = 0.1;
	CHECK(pf_policy_probs(&p, wp, 2, prob) == 0 &&
	    probs_near(prob, wp_w, 2, 1e-12),
	    "winprob a=0 b=100 T=0.1: 100 -100 -> %.6f %.6f", prob[0],
	    prob[1]);

	pf_policy_params_default(&p, PF_POLICY_SOFTMAX);
	p.temperature = 0;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1, "softmax: T = 0 refused");
	p.temperature = -5;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1,
	    "softmax: negative T refused");
	p.temperature = NAN;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1, "softmax: NaN T refused");
	pf_policy_params_default(&p, PF_POLICY_ZEMAN);
	p.drop = 1;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1, "zeman: drop 1 refused");
	p.drop = NAN;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1, "zeman: NaN drop refused");
	p.drop = 0.25;
	p.power = 0;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1, "zeman: power 0 refused");
	p.power = 4;
	p.method = 99;
	CHECK(pf_policy_probs(&p, a, 3, prob) == -1, "unknown method refused");
}

static int
sum_q(const uint16_t *q, int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++)
		s += q[i];
	return s;
}

/* Reference largest remainder: sort by remainder (double), then index. */
static double ref_rem[PF_MAX_MOVES];

static int
ref_cmp(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;

	if (ref_rem[i] != ref_rem[j])
		return ref_rem[i] > ref_rem[j] ? -1 : 1;
	return i - j;
}

static void
ref_quantize(const double *p, int n, uint16_t *q)
{
	int idx[PF_MAX_MOVES], i, nc = 0, total = 0;

	for (i = 0; i < n; i++) {
		q[i] = (uint16_t)floor(p[i] * 65535);
		ref_rem[i] = p[i] * 65535 - q[i];
		total += q[i];
		if (p[i] > 0)
			idx[nc++] = i;
	}
	qsort(idx, (size_t)nc, sizeof(idx[0]), ref_cmp);
	for (i = 0; total < 65535; i++, total++)
		q[idx[i % nc]]++;
}

static void
test_quantize(void)
{
	static const double third[] = { 1.0 / 3, 1.0 / 3, 1.0 / 3, 0 };
	static const double half[] = { 0.5, 0.5 };
	static const double one[] = { 1 };
	static const double zero[] = { 0, 0 };
	static const double bad[] = { 0.5, NAN };
	static const double neg[] = { 1.5, -0.5 };
	static const double skew[] = { 0.9, 0.05, 0.05 };
	uint16_t q[PF_MAX_MOVES], ref[PF_MAX_MOVES];
	double p[PF_MAX_MOVES], sum;
	int i, j, n, ok = 1, zeros_ok = 1, nil = 0, same = 1;

	CHECK(pf_policy_quantize(third, 4, q) == 0 && q[0] == 21845 &&
	    q[1] == 21845 && q[2] == 21845 && q[3] == 0,
	    "quantize 1/3 1/3 1/3 0 -> 21845 x3, 0");
	CHECK(pf_policy_quantize(half, 2, q) == 0 && q[0] == 32768 &&
	    q[1] == 32767, "quantize 1/2 1/2 -> 32768 32767 (tie: first)");
	CHECK(pf_policy_quantize(one, 1, q) == 0 && q[0] == 65535,
	    "quantize 1 -> 65535");
	CHECK(pf_policy_quantize(skew, 3, q) == 0 && sum_q(q, 3) == 65535 &&
	    q[0] == 58981 && q[1] == 3277 && q[2] == 3277,
	    "quantize 0.9 0.05 0.05 -> %u %u %u", q[0], q[1], q[2]);
	CHECK(pf_policy_quantize(zero, 2, q) == -1, "quantize all-zero: -1");
	CHECK(pf_policy_quantize(bad, 2, q) == -1, "quantize NaN: -1");
	CHECK(pf_policy_quantize(neg, 2, q) == -1, "quantize negative: -1");
	CHECK(pf_policy_quantize(one, 0, q) == -1, "quantize n = 0: -1");

	srand(12345);
	for (i = 0; i < 20000; i++) {
		n = 1 + rand() % PF_MAX_MOVES;
		sum = 0;
		for (j = 0; j < n; j++) {
			/* A quarter exact zeros, the rest skewed. */
			p[j] = rand() % 4 == 0 ? 0 :
			    pow((double)rand() / RAND_MAX, 4);
			sum += p[j];
		}
		if (sum == 0) {
			p[0] = 1;
			sum = 1;
		}
		for (j = 0; j < n; j++)
			p[j] /= sum;
		if (pf_policy_quantize(p, n, q) != 0 || sum_q(q, n) != 65535)
			ok = 0;
		ref_quantize(p, n, ref);
		if (memcmp(q, ref, (size_t)n * sizeof(q[0])) != 0)
			same = 0;
		for (j = 0; j < n; j++) {
			if (p[j] == 0 && q[j] != 0)
				zeros_ok = 0;
			/* Each entry is within one quantum of its share. */
			if (fabs(q[j] - p[j] * 65535) >= 1.0 + 1e-6)
				ok = 0;
		}
		nil += n;
	}
	CHECK(ok, "quantize: 20000 random vectors sum to exactly 65535, each "
	    "within one quantum (%d entries)", nil);
	CHECK(zeros_ok, "quantize: zero probabilities stay 0");
	CHECK(same, "quantize: the same quanta as a sorting largest-remainder "
	    "reference on all 20000 vectors");
}

static void
test_blend_result(void)
{
	CHECK(pf_result_stm(PF_RESULT_WHITE, PF_WHITE) == 1 &&
	    pf_result_stm(PF_RESULT_WHITE, PF_BLACK) == 0 &&
	    pf_result_stm(PF_RESULT_BLACK, PF_WHITE) == 0 &&
	    pf_result_stm(PF_RESULT_BLACK, PF_BLACK) == 1 &&
	    pf_result_stm(PF_RESULT_DRAW, PF_WHITE) == 0.5 &&
	    pf_result_stm(PF_RESULT_DRAW, PF_BLACK) == 0.5 &&
	    pf_result_stm(PF_RESULT_UNKNOWN, PF_WHITE) == -1,
	    "game result from the side to move's view");
	CHECK(NEAR(pf_value_blend(0.8, 1, 1, 0.75), 0.85, 1e-12),
	    "blend S: 0.75 * 0.8 + 0.25 * 1 = 0.85");
	CHECK(NEAR(pf_value_blend(0.6, 0, 1, 0.75), 0.7, 1e-12),
	    "blend Q: Q 0.6 (S 0.8), win, lambda 0.75 -> Q 0.7 (S 0.85)");
	CHECK(NEAR(pf_value_blend(-0.2, 0, 0.5, 0.5), -0.1, 1e-12),
	    "blend Q with a draw pulls towards 0");
	CHECK(pf_value_blend(0.3, 1, 0, 1) == 0.3, "lambda 1: the eval");
	CHECK(pf_value_blend(0.3, 1, 0, 0) == 0 &&
	    pf_value_blend(0.3, 0, 0, 0) == -1, "lambda 0: the result");
}

static void
test_linear(void)
{
	/* A game of 9 plies won by white (white mates with ply 8's move):
	   white is to move at even plies. */
	int k, ok = 1, draw_ok = 1;
	double q, r;

	for (k = 0; k <= 9; k++) {
		r = pf_result_stm(PF_RESULT_WHITE, k % 2 ? PF_BLACK : PF_WHITE);
		q = pf_value_linear(k, 9, r);
		if (!NEAR(q, (k % 2 ? -1.0 : 1.0) * k / 9, 1e-15))
			ok = 0;
		if (pf_value_linear(k, 9, 0.5) != 0)
			draw_ok = 0;
	}
	CHECK(ok, "linear: white wins in 9 plies: +-k/9 for the side to move");
	CHECK(pf_value_linear(0, 9, 1) == 0, "linear: 0 at the start");
	CHECK(pf_value_linear(9, 9, 0) == -1,
	    "linear: -1 for the mated side at the end");
	CHECK(NEAR(pf_value_linear(4, 10, pf_result_stm(PF_RESULT_BLACK,
	    PF_WHITE)), -0.4, 1e-15), "linear: black wins, white at ply 4");
	CHECK(draw_ok, "linear: 0 throughout a draw");
	CHECK(pf_value_linear(0, 0, 1) == 0, "linear: a game of one position");
}

static pf_move
uci(const pf_board *b, const char *s)
{
	pf_move m = 0;

	if (pf_move_from_uci(b, s, strlen(s), &m) == -1)
		printf("# %s not legal\n", s);
	return m;
}

static void
test_builder(void)
{
	pf_policy_params p;
	pf_target *t;
	pf_board b;
	pf_movescores *s;
	pf_policy *out;
	int i, sum, ok;
	char err[128];

	s = calloc(1, sizeof(*s));
	out = calloc(1, sizeof(*out));
	pf_policy_params_default(&p, PF_POLICY_ZEMAN);
	t = pf_target_new(&p);
	CHECK(t && s && out, "pf_target_new");
	if (!t || !s || !out)
		goto done;

	/* Start position, a table of 3 of the 20 moves. */
	pf_board_startpos(&b);
	s->n = 3;
	s->m[0].move = uci(&b, "d2d4");
	s->m[0].score = 25;
	s->m[1].move = uci(&b, "g1f3");
	s->m[1].score = 0;
	s->m[2].move = uci(&b, "e2e4");
	s->m[2].score = 50;
	CHECK(pf_target_policy(t, &b, s, out) == 0, "startpos, 3 of 20 moves");
	for (i = sum = 0; i < out->n; i++)
		sum += out->prob[i];
	CHECK(out->n == 20 && sum == 65535,
	    "every legal move listed (n %d), sum %d", out->n, sum);
	CHECK(out->move[0] == s->m[2].move && out->move[1] == s->m[0].move &&
	    out->move[2] == s->m[1].move, "table moves first, best first");
	/* 16/17 and 1/17 of 65535: 61680 and 3855 exactly. */
	CHECK(out->prob[0] == 61680 && out->prob[1] == 3855 &&
	    out->prob[2] == 0, "probabilities 61680 3855 0 (got %u %u %u)",
	    out->prob[0], out->prob[1], out->prob[2]);
	for (i = 3, ok = 1; i < 20; i++)
		if (out->prob[i] != 0 || !pf_is_legal(&b, out->move[i]))
			ok = 0;
	CHECK(ok, "missing moves are legal and get 0");
	CHECK(out->method == PF_POLICY_ZEMAN && out->param1 == 0.25f &&
	    out->param2 == 4.0f, "method and parameters recorded");

	/* An illegal move names itself. */
	s->m[1].move = PF_MAKE_MOVE(12, 36, PF_MK_NORMAL, 0);	/* e2e5 */
	CHECK(pf_target_policy(t, &b, s, out) == -1 &&
	    strstr(pf_target_error(t), "e2e5") != NULL,
	    "illegal move refused: %s", pf_target_error(t));
	s->m[1].move = s->m[0].move;
	CHECK(pf_target_policy(t, &b, s, out) == -1 &&
	    strstr(pf_target_error(t), "twice") != NULL,
	    "duplicate move refused: %s", pf_target_error(t));
	s->m[1].move = uci(&b, "g1f3");
	s->m[1].score_kind = 7;
	CHECK(pf_target_policy(t, &b, s, out) == -1,
	    "unknown score kind refused: %s", pf_target_error(t));
	s->m[1].score_kind = PF_SCORE_CP;
	s->n = 0;
	CHECK(pf_target_policy(t, &b, s, out) == -1,
	    "empty table for a position with moves refused: %s",
	    pf_target_error(t));

	/* One legal move: probability 1 (65535). */
	if (pf_board_from_fen(&b, "7k/8/8/8/8/8/1r6/K1r5 w - - 0 1", err,
	    sizeof(err)) == -1)
		printf("# %s\n", err);
	s->n = 1;
	s->m[0].move = uci(&b, "a1b2");
	s->m[0].score_kind = PF_SCORE_CP;
	s->m[0].score = -900;
	CHECK(pf_target_policy(t, &b, s, out) == 0 && out->n == 1 &&
	    out->prob[0] == 65535, "one legal move gets 65535");

	/* Checkmated: no legal moves, empty table, n = 0. */
	if (pf_board_from_fen(&b, "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/"
	    "RNBQKBNR w KQkq - 1 3", err, sizeof(err)) == -1)
		printf("# %s\n", err);
	s->n = 0;
	CHECK(pf_target_policy(t, &b, s, out) == 0 && out->n == 0,
	    "checkmated: no policy entries");

	/* Promotions: four moves share from and to. */
	if (pf_board_from_fen(&b, "8/P7/8/8/8/8/8/k6K w - - 0 1", err,
	    sizeof(err)) == -1)
		printf("# %s\n", err);
	s->n = 4;
	s->m[0].move = uci(&b, "a7a8n");
	s->m[0].score = 100;
	s->m[1].move = uci(&b, "a7a8q");
	s->m[1].score = 900;
	s->m[2].move = uci(&b, "a7a8r");
	s->m[2].score = 500;
	s->m[3].move = uci(&b, "a7a8b");
	s->m[3].score = 300;
	for (i = 0; i < 4; i++)
		s->m[i].score_kind = PF_SCORE_CP;
	CHECK(pf_target_policy(t, &b, s, out) == 0 &&
	    out->move[0] == s->m[1].move && out->move[1] == s->m[2].move &&
	    out->move[2] == s->m[3].move, "promotions told apart");
	for (i = sum = 0; i < out->n; i++)
		sum += out->prob[i];
	CHECK(sum == 65535 && out->prob[3] == 0 && out->prob[4] == 0,
	    "promotions: sum 65535, knight dropped (n %d)", out->n);
	/* 900 500 300 kept, scaled 1 1/3 0 -> 81/82 1/82 0. */
	CHECK(out->prob[0] == 64736 && out->prob[1] == 799,
	    "promotions: 81/82 and 1/82 of 65535 (got %u %u)", out->prob[0],
	    out->prob[1]);

	/* Castling (king takes rook inside) and en passant are found. */
	if (pf_board_from_fen(&b, "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
	    err, sizeof(err)) == -1)
		printf("# %s\n", err);
	s->n = 3;
	s->m[0].move = uci(&b, "e1g1");
	s->m[0].score = 100;
	s->m[1].move = uci(&b, "e5d6");
	s->m[1].score = 50;
	s->m[2].move = uci(&b, "e1c1");
	s->m[2].score = 0;
	for (i = 0; i < 3; i++)
		s->m[i].score_kind = PF_SCORE_CP;
	CHECK(s->m[0].move != 0 && s->m[1].move != 0 && s->m[2].move != 0 &&
	    pf_target_policy(t, &b, s, out) == 0 &&
	    out->move[0] == s->m[0].move && out->prob[0] == 61680 &&
	    out->move[1] == s->m[1].move && out->prob[1] == 3855 &&
	    out->n == pf_gen_legal(&b, (pf_move[PF_MAX_MOVES]){ 0 }),
	    "castling and en passant moves matched (%s)",
	    pf_target_error(t));
done:
	pf_target_free(t);
	free(s);
	free(out);
}

/*
 * pf_legal_sets_fill(), _take() and _empty() against pf_gen_legal() and
 * pf_is_legal() over trees of positions with checks, pins, en passant,
 * castling (Chess960 too) and promotions: the count matches; taking a move
 * code removes one move exactly when the code is legal and not yet taken
 * (every one of the 65536 codes at the roots and their children; near
 * codes deeper); the sets are empty exactly when every legal move was
 * taken.
 */
static long sets_bad, sets_positions;

/* Moves left in s. */
static int
sets_left(const pf_legal_sets *ls)
{
	uint64_t bb = ls->own;
	int n = 0, i;

	while (bb) {
		n += __builtin_popcountll(ls->from[__builtin_ctzll(bb)]);
		bb &= bb - 1;
	}
	for (i = 0; i < ls->nspecial; i++)
		n += ls->special[i] != PF_MOVE_NONE;
	return n;
}

static void
sets_check(pf_legal_sets *ls, const pf_board *b, int all)
{
	pf_move moves[PF_MAX_MOVES];
	int n, i, bad = 0, before;
	unsigned c;

	n = pf_gen_legal(b, moves);
	sets_positions++;
	if (pf_legal_sets_fill(b, ls) != n || ls->count != n ||
	    sets_left(ls) != n)
		bad = 1;
	if (all) {
		for (c = 0; c < 65536; c++) {
			before = sets_left(ls);
			pf_legal_sets_take(ls, (pf_move)c);
			if (before - sets_left(ls) !=
			    pf_is_legal(b, (pf_move)c))
				bad = 1;
		}
	} else {
		/* Codes near the legal ones first: same squares, other
		   kinds; then the legal ones, each once. */
		for (i = 0; i < n; i++)
			for (c = 1; c < 16; c++) {
				pf_move m = (pf_move)(moves[i] ^ c << 12);

				if (!pf_is_legal(b, m))
					pf_legal_sets_take(ls, m);
			}
		if (sets_left(ls) != n)
			bad = 1;
		for (i = 0; i < n; i++) {
			if (i == n - 1 && pf_legal_sets_empty(ls))
				bad = 1;	/* one is left */
			before = sets_left(ls);
			pf_legal_sets_take(ls, moves[i]);
			if (before - sets_left(ls) != 1)
				bad = 1;
		}
	}
	if (!pf_legal_sets_empty(ls) || sets_left(ls) != 0)
		bad = 1;
	/* A second round takes nothing. */
	for (i = 0; i < n; i++)
		pf_legal_sets_take(ls, moves[i]);
	if (!pf_legal_sets_empty(ls))
		bad = 1;
	if (bad) {
		char fen[PF_FEN_MAX];

		if (sets_bad++ < 5)
			printf("# legal sets wrong: %s\n",
			    pf_board_to_fen(b, fen));
	}
}

static void
sets_walk(pf_legal_sets *ls, pf_board *b, int depth, int all)
{
	pf_move moves[PF_MAX_MOVES];
	pf_undo u;
	int n, i;

	sets_check(ls, b, all > 0);
	if (depth == 0)
		return;
	n = pf_gen_legal(b, moves);
	for (i = 0; i < n; i++) {
		pf_make_move(b, moves[i], &u);
		sets_walk(ls, b, depth - 1, all - 1);
		pf_unmake_move(b, moves[i], &u);
	}
}

static void
test_legal_sets(void)
{
	static const char *const fens[] = {
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w "
		    "KQkq - 0 1",
		"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq "
		    "- 0 1",
		"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
		"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/"
		    "R4RK1 w - - 0 10",
		"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf "
		    "- 2 9",
		"8/8/3k4/2pP4/8/8/8/4K3 w - c6 0 2",
		"4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
		/* pinned sliders whose pin line reaches the last rank */
		"4r1k1/8/8/8/8/4Q3/4K3/8 w - - 0 1",
		"8/4k3/4q3/8/8/8/8/4R1K1 b - - 0 1",
		"qbbnnrkr/2pp2pp/p7/1p2p3/8/P3QQ2/1NPP1KPP/QBBNNR1R w hf - "
		    "5 9",
	};
	pf_legal_sets *ls = calloc(1, sizeof(*ls));
	pf_board b;
	char err[128];
	size_t i;

	if (ls == NULL) {
		CHECK(0, "legal sets: out of memory");
		return;
	}
	for (i = 0; i < sizeof(fens) / sizeof(fens[0]); i++) {
		if (pf_board_from_fen(&b, fens[i], err, sizeof(err)) == -1) {
			CHECK(0, "legal sets: %s: %s", fens[i], err);
			continue;
		}
		sets_walk(ls, &b, 3, 2);
	}
	CHECK(sets_bad == 0 && sets_positions > 10000,
	    "legal sets agree with the generator (%ld positions, %ld wrong)",
	    sets_positions, sets_bad);
	free(ls);
}

/*
 * The payload path (pf_target_policy_payload(), softtarget's) against
 * the general one (pf_target_policy_ext() then pf_policy_encode()): the
 * same result, error and bytes, for tables flagged complete that are
 * (the fast path, which generates no moves) and that are not: missing a
 * move, with an illegal move, with a move listed twice, out of score
 * order.
 */
static unsigned fp_seed = 1;

static unsigned
fp_rand(void)
{
	fp_seed = fp_seed * 1103515245u + 12345u;
	return fp_seed >> 8;
}

/* Both paths on table s (encoded with flags); 1 if they agree. */
static int
fp_same(pf_target *t, const pf_board *b, const pf_movescores *s,
    int *rv, char *err, size_t errlen)
{
	static uint8_t dst[PF_POLICY_PAYLOAD_MAX];
	pf_extbuf tab = { 0 }, enc = { 0 };
	pf_policy *pol = calloc(1, sizeof(*pol));
	const uint8_t *data;
	uint32_t len;
	int r1, r2, same = 0;
	char e1[160];

	if (pol == NULL || pf_movescores_encode(s, &tab) == -1)
		goto done;
	data = tab.data + PF_EXT_HEADER_SIZE;
	len = (uint32_t)(tab.len - PF_EXT_HEADER_SIZE);
	/* The reference: the table not flagged complete, which the
	   general path matches against the generated moves. */
	tab.data[PF_EXT_HEADER_SIZE + 1] &= (uint8_t)~PF_MSF_COMPLETE;
	r1 = pf_target_policy_ext(t, b, data, len, pol);
	snprintf(e1, sizeof(e1), "%s", pf_target_error(t));
	tab.data[PF_EXT_HEADER_SIZE + 1] = s->flags;
	r2 = pf_target_policy_payload(t, b, data, len, dst);
	*rv = r2;
	snprintf(err, errlen, "%s", pf_target_error(t));
	if (r1 == -1)
		same = r2 == -1 && strcmp(e1, pf_target_error(t)) == 0;
	else if (pol->n == 0)
		same = r2 == 0;
	else
		same = pf_policy_encode(pol, &enc) == 0 &&
		    (size_t)r2 == enc.len - PF_EXT_HEADER_SIZE &&
		    memcmp(dst, enc.data + PF_EXT_HEADER_SIZE, (size_t)r2) == 0;
done:
	pf_extbuf_free(&tab);
	pf_extbuf_free(&enc);
	free(pol);
	return same;
}

/* A table of every legal move of b, scores falling (some mates, some
   ties), flagged complete. */
static int
fp_table(const pf_board *b, pf_movescores *s)
{
	pf_move moves[PF_MAX_MOVES];
	int n = pf_gen_legal(b, moves), i, j;
	int32_t score = (int32_t)(fp_rand() % 200) - 50;

	memset(s, 0, sizeof(*s));
	s->flags = PF_MSF_COMPLETE;
	s->n = (uint16_t)n;
	for (i = 0; i < n; i++) {
		pf_move x;

		j = i + (int)(fp_rand() % (unsigned)(n - i));
		x = moves[i];
		moves[i] = moves[j];
		moves[j] = x;
		s->m[i].move = moves[i];
		s->m[i].score_kind = PF_SCORE_CP;
		s->m[i].score = score;
		score -= (int32_t)(fp_rand() % 4 == 0 ? 0 : fp_rand() % 60);
	}
	if (n > 2 && fp_rand() % 8 == 0) {
		s->m[0].score_kind = PF_SCORE_MATE;
		s->m[0].score = 3;
	}
	/* Mated after the worst moves (the fast path reads the smallest
	   kept score before its pass, mapped as a mate). */
	for (i = n - 1; n > 2 && i > 0 && fp_rand() % 4 == 0; i--) {
		s->m[i].score_kind = PF_SCORE_MATE;
		s->m[i].score = -(int32_t)(n - i);
	}
	return n;
}

static void
test_payload_paths(void)
{
	static const char *const fens[] = {
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w "
		    "KQkq - 0 1",
		"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq "
		    "- 0 1",
		"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
	};
	pf_policy_params p;
	pf_target *t, *t2 = NULL, *t3 = NULL;
	pf_movescores *s = calloc(1, sizeof(*s));
	pf_board b, c;
	pf_move moves[PF_MAX_MOVES];
	pf_undo u;
	char err[160];
	int i, k, n, rv, cases = 0, differ = 0, kind;
	int seen[5] = { 0 };
	uint8_t dst[PF_POLICY_PAYLOAD_MAX];
	pf_extbuf tab = { 0 };

	pf_policy_params_default(&p, PF_POLICY_ZEMAN);
	t = pf_target_new(&p);
	pf_policy_params_default(&p, PF_POLICY_SOFTMAX);
	t2 = pf_target_new(&p);
	pf_policy_params_default(&p, PF_POLICY_ZEMAN);
	p.drop = 0.5;
	p.power = 2;
	t3 = pf_target_new(&p);
	if (t == NULL || t2 == NULL || t3 == NULL || s == NULL) {
		CHECK(0, "payload paths: out of memory");
		goto done;
	}

	/* Hand-made cases on the start position. */
	pf_board_startpos(&b);
	n = fp_table(&b, s);
	s->m[0].score_kind = PF_SCORE_CP;
	CHECK(fp_same(t, &b, s, &rv, err, sizeof(err)) &&
	    rv == PF_POLICY_FIXED + 4 * n, "complete table: the same bytes "
	    "as the general path (%d moves)", n);
	s->n = (uint16_t)(n - 1);	/* one move missing */
	CHECK(fp_same(t, &b, s, &rv, err, sizeof(err)) &&
	    rv == PF_POLICY_FIXED + 4 * n &&
	    pf_movescores_encode(s, &tab) == 0 &&
	    pf_target_policy_payload(t, &b, tab.data + PF_EXT_HEADER_SIZE,
	    (uint32_t)(tab.len - PF_EXT_HEADER_SIZE), dst) > 0 &&
	    pf_get16(dst + PF_POLICY_FIXED + 4 * (n - 1)) == s->m[n - 1].move &&
	    pf_get16(dst + PF_POLICY_FIXED + 4 * (n - 1) + 2) == 0,
	    "table missing a move: every legal move, the missing one last "
	    "with 0");
	pf_extbuf_reset(&tab);
	s->n = (uint16_t)n;
	moves[0] = s->m[5].move;
	s->m[5].move = PF_MAKE_MOVE(12, 36, PF_MK_NORMAL, 0);	/* e2e5 */
	CHECK(fp_same(t, &b, s, &rv, err, sizeof(err)) && rv == -1 &&
	    strstr(err, "e2e5") != NULL && strstr(err, "not legal") != NULL,
	    "complete-sized table with an illegal move refused: %s", err);
	s->m[5].move = s->m[2].move;
	CHECK(fp_same(t, &b, s, &rv, err, sizeof(err)) && rv == -1 &&
	    strstr(err, "twice") != NULL,
	    "complete-sized table with a repeated move refused: %s", err);
	s->m[5].move = moves[0];
	s->m[5].score = s->m[0].score + 10;	/* out of order */
	CHECK(fp_same(t, &b, s, &rv, err, sizeof(err)) &&
	    rv == PF_POLICY_FIXED + 4 * n,
	    "complete table out of score order: the same bytes");
	s->m[5].score = s->m[4].score;
	s->m[5].score_kind = 9;
	CHECK(fp_same(t, &b, s, &rv, err, sizeof(err)) && rv == -1 &&
	    strstr(err, "score kind") != NULL,
	    "complete table with a bad score kind refused: %s", err);

	/* Positions two plies deep, with one of five changes each. */
	for (i = 0; i < (int)(sizeof(fens) / sizeof(fens[0])); i++) {
		if (pf_board_from_fen(&b, fens[i], err, sizeof(err)) == -1)
			continue;
		n = pf_gen_legal(&b, moves);
		for (k = 0; k < n; k++) {
			pf_move m2[PF_MAX_MOVES];
			int n2, k2;

			c = b;
			pf_make_move(&c, moves[k], &u);
			n2 = pf_gen_legal(&c, m2);
			for (k2 = 0; k2 <= n2; k2++) {
				pf_board d = c;
				pf_undo u2;

				if (k2 < n2)
					pf_make_move(&d, m2[k2], &u2);
				if (fp_table(&d, s) == 0)
					continue;
				kind = (int)(fp_rand() % 5);
				switch (kind) {
				case 1:		/* a move missing */
					s->m[fp_rand() % s->n] =
					    s->m[s->n - 1];
					s->n--;
					break;
				case 2:		/* any move code */
					s->m[fp_rand() % s->n].move =
					    (pf_move)fp_rand();
					break;
				case 3:		/* a repeat */
					s->m[fp_rand() % s->n].move =
					    s->m[fp_rand() % s->n].move;
					break;
				case 4:		/* not flagged complete */
					s->flags = 0;
					break;
				}
				cases++;
				seen[kind]++;
				if (!fp_same(t, &d, s, &rv, err,
				    sizeof(err)) && differ++ < 5)
					printf("# paths differ, change %d: "
					    "%s\n", kind, err);
				if (!fp_same(t2, &d, s, &rv, err,
				    sizeof(err)) && differ++ < 5)
					printf("# paths differ (softmax), "
					    "change %d: %s\n", kind, err);
				if (!fp_same(t3, &d, s, &rv, err,
				    sizeof(err)) && differ++ < 5)
					printf("# paths differ (zeman, power "
					    "2, drop 0.5), change %d: %s\n",
					    kind, err);
			}
		}
	}
	CHECK(differ == 0 && cases > 3000 && seen[0] > 500 &&
	    seen[1] > 500 && seen[2] > 500 && seen[3] > 500,
	    "payload and general paths agree on %d tables, zeman (two "
	    "settings) and softmax (%d differ)",
	    cases, differ);
done:
	pf_extbuf_free(&tab);
	pf_target_free(t);
	pf_target_free(t2);
	pf_target_free(t3);
	free(s);
}

int
main(void)
{
	test_tanh_table();
	test_value_formulas();
	test_mate_mapping();
	test_zeman();
	test_softmax();
	test_quantize();
	test_blend_result();
	test_linear();
	test_builder();
	test_legal_sets();
	test_payload_paths();
	return t_done();
}
