/*
 * target.c - policy and value targets (see target.h and METHODS.md
 * sections 1 and 2).  Pure computation; the per-record path does not
 * allocate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

/* floor(drop * n) is computed with this tolerance, so that 0.29 * 100
   drops 29 moves and not 28. */
#define DROP_EPS	1e-9

/* Legal moves are found by from and to square (12 bits); the entry holds
   a generation stamp and the index of the first legal move with those
   squares (promotions share them and are told apart by a scan). */
#define KEY_BITS	12
#define MOVE_KEY(m)	((unsigned)(m) & 0x0FFFu)
#define GEN_MAX		0x00FFFFFFu

/* A table entry's first 32-bit word (ext.h: the move, then the score
   kind) with any of these bits set is not a normal move with a
   centipawn score (PF_SCORE_CP is 0): a castling, en passant or
   promotion move, or a mate or unknown score kind. */
#define ENTRY_UNUSUAL	0x00FFF000u

struct pf_target {
	pf_policy_params params;
	uint32_t gen;			/* 1..GEN_MAX */
	uint32_t slot[1u << KEY_BITS];	/* gen << 8 | index in legal[] */
	uint8_t used[PF_MAX_MOVES];	/* legal[i] is in the table */
	pf_legal_sets sets;		/* the fast path's legal moves */
	pf_move legal[PF_MAX_MOVES];
	pf_move tmove[PF_MAX_MOVES];	/* the table's moves, table order */
	/* A pf_movescores given to pf_target_policy(), in the encoded
	   layout that both entry points then read. */
	uint8_t raw[PF_MAX_MOVES * PF_MOVESCORE_SIZE];
	int32_t cp[PF_MAX_MOVES];
	int order[PF_MAX_MOVES];
	double prob[PF_MAX_MOVES];
	double sorted[PF_MAX_MOVES];
	int params_ok;			/* params_ok(&params), once */
	uint16_t ndrop[PF_MAX_MOVES + 1];	/* zeman: moves dropped of n */
	uint16_t q[PF_MAX_MOVES];	/* pf_target_policy_payload() */
	pf_policy pol;			/* the same, other than the fast path */
	/* Depth averaging (pf_target_mix_*), by index in legal[]. */
	int mix_nlegal;			/* -1: no position begun */
	int mix_ntables;
	double mix_sum;			/* the last table's weight sum */
	double mix_acc[PF_MAX_MOVES];	/* sum of the tables' probabilities */
	double mix_w[PF_MAX_MOVES];	/* the last table's weights */
	int mix_rank[PF_MAX_MOVES];	/* place in the last table's order */
	char err[160];
};

void
pf_policy_params_default(pf_policy_params *p, int method)
{
	memset(p, 0, sizeof(*p));
	p->method = method;
	p->drop = PF_ZEMAN_DROP;
	p->power = PF_ZEMAN_POWER;
	p->temperature = method == PF_POLICY_WINPROB ? PF_WINPROB_T :
	    PF_SOFTMAX_T;
	p->wdl_a = PF_WDL_A;
	p->wdl_b = PF_WDL_B;
}

static int
params_ok(const pf_policy_params *p)
{
	switch (p->method) {
	case PF_POLICY_ZEMAN:
		return isfinite(p->drop) && p->drop >= 0 && p->drop < 1 &&
		    isfinite(p->power) && p->power > 0;
	case PF_POLICY_SOFTMAX:
		return isfinite(p->temperature) && p->temperature > 0;
	case PF_POLICY_WINPROB:
		return isfinite(p->temperature) && p->temperature > 0 &&
		    isfinite(p->wdl_a) && isfinite(p->wdl_b) && p->wdl_b > 0;
	default:
		return 0;
	}
}

/*
 * order[0..n-1] = indices by decreasing score, ties by increasing index.
 * Insertion sort: n is small and engine tables arrive sorted, which makes
 * this linear in the usual case.
 */
static void
sort_by_score(const int32_t *cp, int n, int *order)
{
	int i, j, k;

	for (i = 0; i < n; i++) {
		k = i;
		for (j = i; j > 0 && cp[order[j - 1]] < cp[k]; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
}

/*
 * The methods produce weights w (>= 0, the best move's largest) and their
 * sum; the probabilities are w / sum.  Quantisation works from the
 * weights directly, so the per-record path normalises nothing.
 */
static double
zeman(const pf_policy_params *p, const int32_t *cp, int n, const int *order,
    double *w)
{
	int i, ndrop, kept;
	double max, min, range, inv, x, v, sum = 0;

	ndrop = (int)floor(p->drop * n + DROP_EPS);
	if (ndrop > n - 1)
		ndrop = n - 1;		/* never the best move */
	kept = n - ndrop;
	max = cp[order[0]];
	min = cp[order[kept - 1]];
	range = max - min;
	inv = range > 0 ? 1.0 / range : 0;
	for (i = 0; i < kept; i++) {
		x = range > 0 ? (cp[order[i]] - min) * inv : 1.0;
		if (p->power == 4.0)
			v = (x * x) * (x * x);
		else
			v = pow(x, p->power);
		w[order[i]] = v;
		sum += v;
	}
	for (; i < n; i++)
		w[order[i]] = 0;
	if (sum > 0)
		return sum;
	/* All zero after the power: equal shares among the kept. */
	for (i = 0; i < kept; i++)
		w[order[i]] = 1;
	return kept;
}

/* w ~ e^((x - max x) / T); order[0] holds the max. */
static double
softmax(const double *x, int n, const int *order, double t, double *w)
{
	int i;
	double max = x[order[0]], sum = 0;

	for (i = 0; i < n; i++) {
		w[i] = exp((x[i] - max) / t);
		sum += w[i];
	}
	return sum;
}

/* Weights of n >= 1 moves (params checked); returns their sum, > 0. */
static double
policy_weights(const pf_policy_params *p, const int32_t *cp, int n,
    int *order, double *w, double *scratch)
{
	int i;

	sort_by_score(cp, n, order);
	switch (p->method) {
	case PF_POLICY_ZEMAN:
		return zeman(p, cp, n, order, w);
	case PF_POLICY_SOFTMAX:
		for (i = 0; i < n; i++)
			scratch[i] = cp[i];
		return softmax(scratch, n, order, p->temperature, w);
	default:
		for (i = 0; i < n; i++)
			scratch[i] = pf_value_wdl(cp[i], p->wdl_a, p->wdl_b);
		return softmax(scratch, n, order, p->temperature, w);
	}
}

/*
 * Zeman weights of a table already in score order (cp non-increasing), the
 * same arithmetic as zeman() with order[i] = i, into w[0..n-1]; returns
 * their sum.  kept is n less the moves dropped.
 */
static double
zeman_sorted_kept(double power, int kept, const int32_t *cp, int n,
    double *w)
{
	int i;
	double max = cp[0], min = cp[kept - 1], range = max - min, inv, x, v;
	double sum = 0;

	if (range > 0) {
		inv = 1.0 / range;
		if (power == 4.0) {
			for (i = 0; i < kept; i++) {
				x = (cp[i] - min) * inv;
				v = (x * x) * (x * x);
				w[i] = v;
				sum += v;
			}
		} else {
			for (i = 0; i < kept; i++) {
				x = (cp[i] - min) * inv;
				v = pow(x, power);
				w[i] = v;
				sum += v;
			}
		}
	} else {
		/* All kept scores equal: x = 1, and 1^power is 1. */
		v = power == 4.0 ? 1.0 : pow(1.0, power);
		for (i = 0; i < kept; i++) {
			w[i] = v;
			sum += v;
		}
	}
	for (i = kept; i < n; i++)
		w[i] = 0;
	if (sum > 0)
		return sum;
	for (i = 0; i < kept; i++)
		w[i] = 1;
	return kept;
}

int
pf_policy_probs(const pf_policy_params *p, const int32_t *cp, int n,
    double *prob)
{
	int order[PF_MAX_MOVES], i, sorted = 1, ndrop;
	double scratch[PF_MAX_MOVES], inv;

	if (!params_ok(p) || n < 0 || n > PF_MAX_MOVES)
		return -1;
	if (n == 0)
		return 0;
	/* A zeman table in score order, as engines list moves, needs no
	   sort: the same weights, summed in the same order. */
	if (p->method == PF_POLICY_ZEMAN) {
		for (i = 1; i < n; i++)
			sorted &= cp[i - 1] >= cp[i];
	}
	if (p->method == PF_POLICY_ZEMAN && sorted) {
		ndrop = (int)floor(p->drop * n + DROP_EPS);
		if (ndrop > n - 1)
			ndrop = n - 1;
		inv = 1.0 / zeman_sorted_kept(p->power, n - ndrop, cp, n,
		    prob);
	} else
		inv = 1.0 / policy_weights(p, cp, n, order, prob, scratch);
	for (i = 0; i < n; i++)
		prob[i] *= inv;
	return 0;
}

/* Remainder buckets for quantize() (top bits of the fraction). */
#define RBUCKET_BITS	4
#define RBUCKETS	(1 << RBUCKET_BITS)

/*
 * Largest remainder over x_i = w_i * scale (scale = 65535 / sum w).  A
 * remainder is compared as a 32-bit fixed-point fraction, then by index
 * (lower first), so the order is total; remainders closer than 2^-32
 * count as equal.  Instead of sorting, the candidates are counted into
 * buckets by the top bits of their remainder: every bucket above the one
 * where the deficit runs out gets its quantum, and only that boundary
 * bucket is ranked exactly.  w must be finite and non-negative, with a
 * positive sum; 0 stays 0.
 *
 * x_i is computed as a 32.32 fixed-point number in one step:
 * w_i * (scale * 2^32) is exactly (w_i * scale) * 2^32, because a power
 * of two factor does not change the rounding of a normal result (and a
 * result too small to be normal has a remainder of 0 either way), so its
 * integer part is floor(x_i) and its low 32 bits are
 * floor(frac(x_i) * 2^32), the remainder.
 */
static void
quantize(const double *w, int n, double scale, uint16_t *q)
{
	uint32_t rem[PF_MAX_MOVES];
	uint16_t count[RBUCKETS];
	int idx[PF_MAX_MOVES], edge[PF_MAX_MOVES];
	long total = 0, deficit, acc;
	int i, j, k, nc = 0, ne = 0, thr, need, rank;
	const double scale32 = scale * 4294967296.0;
	const double max32 = (double)PF_POLICY_QUANTA * 4294967296.0;
	double x;
	uint64_t u;

	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++) {
		x = w[i] * scale32;
		if (x > max32)
			x = max32;
		u = (uint64_t)(int64_t)x;	/* floor: 0 <= x < 2^48 */
		q[i] = (uint16_t)(u >> 32);
		total += q[i];
		/* Branch-free: a candidate is any positive weight. */
		rem[nc] = (uint32_t)u;
		idx[nc] = i;
		count[(uint32_t)u >> (32 - RBUCKET_BITS)] += w[i] > 0;
		nc += w[i] > 0;
	}
	deficit = PF_POLICY_QUANTA - total;
	if (deficit == 0 || nc == 0)
		return;
	if (deficit > 0 && deficit < nc) {
		for (thr = RBUCKETS - 1, acc = 0; acc + count[thr] < deficit;
		    thr--)
			acc += count[thr];
		need = (int)(deficit - acc);	/* from bucket thr */
		for (i = 0; i < nc; i++) {
			int b = (int)(rem[i] >> (32 - RBUCKET_BITS));

			/* Branch-free: the remainders are random. */
			q[idx[i]] += b > thr;
			edge[ne] = i;
			ne += b == thr;
		}
		/* Rank the boundary bucket: larger remainder first, then
		   lower index (candidates are in index order). */
		for (i = 0; i < ne; i++) {
			rank = 0;
			for (j = 0; j < ne; j++)
				rank += (rem[edge[j]] > rem[edge[i]]) |
				    ((rem[edge[j]] == rem[edge[i]]) & (j < i));
			q[idx[edge[i]]] += rank < need;
		}
		return;
	}
	/* Rounding of the inputs left a deficit of nc or more, or a
	   surplus: spread it over the candidates by decreasing remainder
	   (a surplus is taken from the smallest first). */
	for (i = 1; i < nc; i++) {
		uint32_t rr = rem[i];
		int ii = idx[i];

		for (j = i; j > 0 && rem[j - 1] < rr; j--) {
			rem[j] = rem[j - 1];
			idx[j] = idx[j - 1];
		}
		rem[j] = rr;
		idx[j] = ii;
	}
	for (k = 0; deficit > 0; k++) {
		q[idx[k % nc]]++;
		deficit--;
	}
	for (k = 0; deficit < 0; k++) {
		i = idx[nc - 1 - k % nc];
		if (q[i] > 0) {
			q[i]--;
			deficit++;
		}
	}
}

/*
 * The remainder bucket where the deficit of the quantisers below runs
 * out: count holds the moves of each bucket, 0 < *need < n their sum.
 * Returns the bucket, thr; every move of a bucket above it gets a
 * quantum, and *need becomes the number of moves of bucket thr that get
 * one (1 to count[thr]).
 */
static int
boundary_bucket(const uint16_t *count, long *need)
{
	int thr;

	for (thr = RBUCKETS - 1; count[thr] < *need; thr--)
		*need -= count[thr];
	return thr;
}

/*
 * Sort the ne moves of the boundary bucket (edge[], in index order) by
 * decreasing remainder, stably (equal ones stay in index order); the
 * remainders, those of quantize(), are computed again from w and scale32
 * for these few moves.
 */
static void
sort_boundary(uint8_t *edge, int ne, const double *w, double scale32)
{
	const double max32 = (double)PF_POLICY_QUANTA * 4294967296.0;
	uint32_t rem[PF_MAX_MOVES], r;
	int i, j, k;
	double x;

	for (i = 0; i < ne; i++) {
		x = w[edge[i]] * scale32;
		x = x > max32 ? max32 : x;
		rem[i] = (uint32_t)(uint64_t)(int64_t)x;
	}
	for (i = 1; i < ne; i++) {
		k = edge[i];
		r = rem[i];
		for (j = i; j > 0 && rem[j - 1] < r; j--) {
			edge[j] = edge[j - 1];
			rem[j] = rem[j - 1];
		}
		edge[j] = (uint8_t)k;
		rem[j] = r;
	}
}

/*
 * quantize() for weights that are all positive (every one a candidate,
 * so no index map): the policy path, where the zero tail is cut off
 * before.  The same result as quantize().
 */
static void
quantize_positive(const double *w, int n, double scale, uint16_t *q)
{
	uint16_t count[RBUCKETS];
	uint8_t bkt[PF_MAX_MOVES], edge[PF_MAX_MOVES];
	long total = 0, deficit;
	int i, thr, ne = 0;
	const double scale32 = scale * 4294967296.0;
	const double max32 = (double)PF_POLICY_QUANTA * 4294967296.0;
	double x;
	uint64_t u;

	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++) {
		x = w[i] * scale32;
		x = x > max32 ? max32 : x;
		u = (uint64_t)(int64_t)x;	/* floor: 0 <= x < 2^48 */
		q[i] = (uint16_t)(u >> 32);
		total += (long)(u >> 32);
		bkt[i] = (uint8_t)((uint32_t)u >> (32 - RBUCKET_BITS));
		count[bkt[i]]++;
	}
	deficit = PF_POLICY_QUANTA - total;
	if (deficit == 0)
		return;
	if (deficit < 0 || deficit >= n) {
		quantize(w, n, scale, q);
		return;
	}
	/* Branch-free over the moves: which bucket each is in is random. */
	thr = boundary_bucket(count, &deficit);
	for (i = 0; i < n; i++) {
		q[i] += bkt[i] > thr;
		edge[ne] = (uint8_t)i;
		ne += bkt[i] == thr;
	}
	sort_boundary(edge, ne, w, scale32);
	for (i = 0; i < deficit; i++)
		q[edge[i]]++;
}

int
pf_policy_quantize(const double *prob, int n, uint16_t *q)
{
	int i, positive = 0;

	if (n < 1 || n > PF_MAX_MOVES)
		return -1;
	for (i = 0; i < n; i++) {
		if (!(prob[i] >= 0) || !isfinite(prob[i]))
			return -1;
		positive |= prob[i] > 0;
	}
	if (!positive)
		return -1;
	quantize(prob, n, PF_POLICY_QUANTA, q);
	return 0;
}

pf_target *
pf_target_new(const pf_policy_params *params)
{
	pf_target *t;

	int n, d;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->params = *params;
	t->params_ok = params_ok(params);
	t->mix_nlegal = -1;
	/* floor(drop * n) for every table size, once (see zeman()). */
	for (n = 0; n <= PF_MAX_MOVES; n++) {
		d = t->params_ok ? (int)floor(params->drop * n + DROP_EPS) : 0;
		t->ndrop[n] = (uint16_t)(d > n - 1 ? (n > 0 ? n - 1 : 0) : d);
	}
	return t;
}

void
pf_target_free(pf_target *t)
{
	free(t);
}

const char *
pf_target_error(const pf_target *t)
{
	return t->err;
}

/* UCI-like text for any move, legal or not (for messages). */
static const char *
move_name(pf_move m, char *buf)
{
	static const char promo[] = "nbrq";
	int from = PF_MOVE_FROM(m), to = PF_MOVE_TO(m);

	buf[0] = (char)('a' + (from & 7));
	buf[1] = (char)('1' + (from >> 3));
	buf[2] = (char)('a' + (to & 7));
	buf[3] = (char)('1' + (to >> 3));
	buf[4] = PF_MOVE_KIND(m) == PF_MK_PROMOTION ? promo[(m >> 14) & 3] : 0;
	buf[5] = 0;
	return buf;
}

/* Index of m in t->legal, or -1. */
static int
find_legal(const pf_target *t, int nlegal, pf_move m)
{
	uint32_t e = t->slot[MOVE_KEY(m)];
	int i;

	if (e >> 8 != t->gen)
		return -1;
	i = (int)(e & 0xFF);
	if (t->legal[i] == m)
		return i;
	for (i++; i < nlegal; i++)	/* a promotion: same squares */
		if (t->legal[i] == m)
			return i;
	return -1;
}

/* zeman_sorted_kept() with t's parameters. */
static double
zeman_sorted(const pf_target *t, const int32_t *cp, int n, double *w)
{
	return zeman_sorted_kept(t->params.power, n - t->ndrop[n], cp, n, w);
}

/*
 * The usual case, without a search: every table move is a distinct
 * legal non-promotion move with a known score kind.  The table's moves go
 * into a square-indexed slot table; one pass over the legal moves then
 * finds which are in the table and writes the others, in generation
 * order, after the table's n places in outmove.  0, or -1 when any of
 * the conditions does not hold (the caller then takes the careful path,
 * which finds the first problem in table order and names it).
 *
 * Each slot names the last table move with its squares, and a legal
 * move is in the table exactly when its slot names a table move equal to
 * it.  Distinct legal moves are distinct codes, and a slot names one
 * move, so each slot gives at most one such hit: n hits need n slots,
 * that is no two table moves with the same squares (which only
 * promotions, refused here, may share), and mean every table move is
 * legal.
 */
static int
match_fast(pf_target *t, const uint8_t *raw, int n, int nlegal,
    pf_move *outmove, int *unsorted)
{
	uint32_t *restrict slot = t->slot;
	pf_move *restrict tmove = t->tmove;
	const pf_move *restrict legal = t->legal;
	int32_t *restrict cp = t->cp;
	uint32_t gen, e;
	int i, j, r, matched = 0, bad = 0, down = 0;
	int32_t prev = INT32_MAX;

	if (++t->gen > GEN_MAX) {
		memset(t->slot, 0, sizeof(t->slot));
		t->gen = 1;
	}
	gen = t->gen;
	for (j = 0; j < n; j++, raw += PF_MOVESCORE_SIZE) {
		uint32_t lo = pf_get32(raw);
		pf_move m = (pf_move)(lo & 0xFFFFu);
		int32_t score = (int32_t)pf_get32(raw + 4);

		if (__builtin_expect((lo & ENTRY_UNUSUAL) != 0, 0)) {
			bad |= PF_MOVE_KIND(m) == PF_MK_PROMOTION;
			if (raw[2] != PF_SCORE_CP) {
				bad |= raw[2] != PF_SCORE_MATE;
				score = pf_score_cp(PF_SCORE_MATE, score);
			}
		}
		slot[MOVE_KEY(m)] = gen << 8 | (uint32_t)j;
		tmove[j] = m;
		/* The table order is the usual final order (see
		   policy_core()). */
		outmove[j] = m;
		cp[j] = score;
		down |= prev < score;
		prev = score;
	}
	/* Branch-free: which legal moves the table lacks is random.  When
	   the table is bad, r can pass PF_MAX_MOVES: the mask keeps the
	   writes inside outmove, whose contents are then discarded. */
	for (i = 0, r = n; i < nlegal; i++) {
		pf_move m = legal[i];
		int hit;

		e = slot[MOVE_KEY(m)];
		hit = ((e >> 8) == gen) & (tmove[e & 0xFF] == m);
		matched += hit;
		outmove[r & (PF_MAX_MOVES - 1)] = m;
		r += !hit;
	}
	*unsorted = down;
	return bad || matched != n ? -1 : 0;
}

/*
 * Take the move of table entry e (PF_MOVESCORE_SIZE bytes: the move in
 * bytes 0-1, the score kind in byte 2, the score in bytes 4-7) out of the
 * legal move sets and return its score in centipawns (a mate mapped);
 * *bad becomes 1 when the score kind is unknown.  The usual entry (a
 * normal move, a centipawn score: bits 12-23 of the first 32-bit word
 * all 0, PF_SCORE_CP being 0) takes no branch, and flips its move's bit
 * instead of clearing it: the sets still end empty only when every legal
 * move was named at least once (a bit flipped on by a move that is not
 * legal stays on, and one flipped twice is on again), and that is all
 * the callers conclude from (see match_sets()).
 */
static inline int32_t
take_entry(pf_legal_sets *ls, const uint8_t *e, int *bad)
{
	uint32_t lo = pf_get32(e);
	int32_t score = (int32_t)pf_get32(e + 4);

	if (__builtin_expect((lo & ENTRY_UNUSUAL) != 0, 0)) {
		pf_legal_sets_take(ls, (pf_move)(lo & 0xFFFFu));
		if (e[2] != PF_SCORE_CP) {
			*bad |= e[2] != PF_SCORE_MATE;
			score = pf_score_cp(PF_SCORE_MATE, score);
		}
	} else
		ls->from[lo & 63] ^= 1ULL << (lo >> 6 & 63);
	return score;
}

/*
 * The common case, without generating the moves: the table of n moves is
 * the complete list of legal moves (uci-eval --multipv all), each listed
 * once, with a known score kind.  n equals the number of legal moves, and
 * taking each table move out of the position's legal move sets leaves
 * them empty: a legal move leaves the sets only when some table move
 * names it, so the n table moves name the n legal moves, each once (no
 * table move is left over to be illegal or repeated), and the table is
 * every legal move.
 * Fills t->cp (table order) and *unsorted (1 when a score rises along
 * the table).  0, or -1 when any condition fails (the caller then
 * generates the moves and takes the other paths, which name the first
 * problem in table order or add the missing moves).
 */
static int
match_sets(pf_target *t, const pf_board *b, const uint8_t *raw, int n,
    int *unsorted)
{
	pf_legal_sets *ls = &t->sets;
	int32_t *restrict cp = t->cp;
	int j, bad = 0, down = 0;
	int32_t prev = INT32_MAX;

	if (pf_legal_sets_fill(b, ls) != n)
		return -1;
	for (j = 0; j < n; j++, raw += PF_MOVESCORE_SIZE) {
		int32_t score = take_entry(ls, raw, &bad);

		cp[j] = score;
		down |= prev < score;
		prev = score;
	}
	*unsorted = down;
	return !bad && pf_legal_sets_empty(ls) ? 0 : -1;
}

/*
 * The careful path (the table may be bad): each table move is looked up
 * in the legal moves, in table order, and the first problem is named.
 * Fills t->used and t->cp.  0, or -1 with the reason in t->err.
 */
static int
match_careful(pf_target *t, const uint8_t *raw, int n, int nlegal)
{
	char name[8];
	int i, j;
	unsigned k;

	if (++t->gen > GEN_MAX) {
		memset(t->slot, 0, sizeof(t->slot));
		t->gen = 1;
	}
	/* Backwards, so that an entry ends up with the first of the legal
	   moves that share its squares. */
	for (i = nlegal - 1; i >= 0; i--) {
		k = MOVE_KEY(t->legal[i]);
		t->slot[k] = t->gen << 8 | (uint32_t)i;
	}
	memset(t->used, 0, sizeof(t->used));
	for (j = 0; j < n; j++, raw += PF_MOVESCORE_SIZE) {
		pf_move m = pf_get16(raw);
		uint8_t kind = raw[2];
		int32_t score = (int32_t)pf_get32(raw + 4);

		t->tmove[j] = m;
		if ((i = find_legal(t, nlegal, m)) < 0) {
			snprintf(t->err, sizeof(t->err),
			    "per-move scores: move %s (0x%04x) is not legal",
			    move_name(m, name), m);
			return -1;
		}
		if (t->used[i]) {
			snprintf(t->err, sizeof(t->err),
			    "per-move scores: move %s is listed twice",
			    move_name(m, name));
			return -1;
		}
		t->used[i] = 1;
		if (kind == PF_SCORE_CP)
			t->cp[j] = score;
		else if (kind == PF_SCORE_MATE)
			t->cp[j] = pf_score_cp(PF_SCORE_MATE, score);
		else {
			snprintf(t->err, sizeof(t->err),
			    "per-move scores: move %s: unknown score kind %u",
			    move_name(m, name), kind);
			return -1;
		}
	}
	return 0;
}

/* The method and parameters of out, and n = 0 until it is complete. */
static void
policy_header(const pf_target *t, pf_policy *out)
{
	out->method = (uint8_t)t->params.method;
	if (t->params.method == PF_POLICY_ZEMAN) {
		out->param1 = (float)t->params.drop;
		out->param2 = (float)t->params.power;
	} else {
		out->param1 = (float)t->params.temperature;
		out->param2 = 0;
	}
	out->n = 0;
}

/*
 * pf_target_policy() for the n entries of an encoded table at raw
 * (PF_MOVESCORE_SIZE bytes each, n <= PF_MAX_MOVES).  complete: 0, try
 * the generated moves only; nonzero, try match_sets() first;
 * MATCHED_UNSORTED, zeman_fast() has already matched the table (t->cp
 * is filled) and found it out of score order.
 */
#define MATCHED_UNSORTED	(-1)
static int
policy_core(pf_target *t, const pf_board *b, const uint8_t *raw, int n,
    int complete, pf_policy *out)
{
	int nlegal, i, r, nz, fast, unsorted = complete == MATCHED_UNSORTED;
	double sum, *w;

	policy_header(t, out);
	if (unsorted || (complete && n > 0 &&
	    match_sets(t, b, raw, n, &unsorted) == 0)) {
		nlegal = n;
		fast = 1;
		for (i = 0; i < n; i++)
			out->move[i] = t->tmove[i] =
			    pf_get16(raw + PF_MOVESCORE_SIZE * i);
	} else {
		nlegal = pf_gen_legal(b, t->legal);
		fast = n > 0 && nlegal > 0 &&
		    match_fast(t, raw, n, nlegal, out->move, &unsorted) == 0;
	}
	if (!fast) {
		if (match_careful(t, raw, n, nlegal) == -1)
			return -1;
		if (nlegal == 0)
			return 0;
		if (n == 0) {
			snprintf(t->err, sizeof(t->err),
			    "per-move scores: empty table for a position with "
			    "%d legal moves", nlegal);
			return -1;
		}
	}
	if (!fast)
		for (i = 1, unsorted = 0; i < n; i++)
			unsorted |= t->cp[i - 1] < t->cp[i];
	if (!unsorted && t->params.method == PF_POLICY_ZEMAN) {
		/* Already in score order (engines list the best first). */
		w = t->sorted;
		sum = zeman_sorted(t, t->cp, n, w);
		if (!fast)
			for (i = 0; i < n; i++)
				out->move[i] = t->tmove[i];
		for (nz = n; nz > 0 && !(w[nz - 1] > 0); nz--)
			continue;
	} else {
		sum = policy_weights(&t->params, t->cp, n, t->order, t->prob,
		    t->sorted);
		/* Weights do not increase along the score order, so the
		   moves of probability 0 (dropped, or missing from the
		   table) form a tail that needs no quantising. */
		for (r = 0, nz = 0; r < n; r++) {
			out->move[r] = t->tmove[t->order[r]];
			t->sorted[r] = t->prob[t->order[r]];
			if (t->sorted[r] > 0)
				nz = r + 1;
		}
		w = t->sorted;
	}
	for (i = nz; i < nlegal; i++)
		out->prob[i] = 0;
	if (!fast && n < nlegal) {
		/* Branch-free: which moves the table lacks is random. */
		for (i = 0, r = n; i < nlegal && r < nlegal; i++) {
			out->move[r] = t->legal[i];
			r += !t->used[i];
		}
	}
	quantize_positive(w, nz, PF_POLICY_QUANTA / sum, out->prob);
	out->n = (uint16_t)nlegal;
	return 0;
}

int
pf_target_policy(pf_target *t, const pf_board *b, const pf_movescores *s,
    pf_policy *out)
{
	int j;

	t->err[0] = 0;
	if (!t->params_ok) {
		snprintf(t->err, sizeof(t->err), "invalid policy parameters");
		return -1;
	}
	if (s->n > PF_MAX_MOVES) {
		policy_header(t, out);
		snprintf(t->err, sizeof(t->err), "per-move table too long");
		return -1;
	}
	for (j = 0; j < s->n; j++) {
		uint8_t *q = t->raw + PF_MOVESCORE_SIZE * j;

		pf_put16(q, s->m[j].move);
		q[2] = s->m[j].score_kind;
		q[3] = s->m[j].depth;
		pf_put32(q + 4, (uint32_t)s->m[j].score);
	}
	return policy_core(t, b, t->raw, s->n, s->flags & PF_MSF_COMPLETE,
	    out);
}

/* The entries of a per-move table's payload, or -1 (t->err set) when it
   is shorter than its fixed part and entry count say. */
static int
table_entries(pf_target *t, const uint8_t *data, uint32_t len)
{
	int n;

	if (len < PF_MOVESCORES_FIXED ||
	    (n = pf_get16(data + 12)) > PF_MAX_MOVES ||
	    (len - PF_MOVESCORES_FIXED) / PF_MOVESCORE_SIZE < (uint32_t)n) {
		snprintf(t->err, sizeof(t->err),
		    "per-move scores: malformed extension");
		return -1;
	}
	return n;
}

int
pf_target_policy_ext(pf_target *t, const pf_board *b, const uint8_t *data,
    uint32_t len, pf_policy *out)
{
	int n;

	t->err[0] = 0;
	if (!t->params_ok) {
		snprintf(t->err, sizeof(t->err), "invalid policy parameters");
		return -1;
	}
	if ((n = table_entries(t, data, len)) == -1)
		return -1;
	return policy_core(t, b, data + PF_MOVESCORES_FIXED, n,
	    data[1] & PF_MSF_COMPLETE, out);
}

/* The fixed part of a PF_EXT_POLICY payload (ext.h layout). */
static void
payload_header(const pf_target *t, int n, uint8_t *dst)
{
	const pf_policy_params *p = &t->params;

	dst[0] = (uint8_t)p->method;
	dst[1] = 0;
	pf_put16(dst + 2, (uint16_t)n);
	if (p->method == PF_POLICY_ZEMAN) {
		pf_putf32(dst + 4, (float)p->drop);
		pf_putf32(dst + 8, (float)p->power);
	} else {
		pf_putf32(dst + 4, (float)p->temperature);
		pf_putf32(dst + 8, 0);
	}
}

/* The score of table entry e in centipawns (a mate mapped). */
static inline int32_t
entry_cp(const uint8_t *e)
{
	int32_t score = (int32_t)pf_get32(e + 4);

	return e[2] == PF_SCORE_MATE ? pf_score_cp(PF_SCORE_MATE, score) :
	    score;
}

/* The scores of a table's n entries in centipawns (mates mapped), into
   cp: for zeman_fast()'s callers and its rare cases. */
static void
table_cp(const uint8_t *raw, int n, int32_t *cp)
{
	int j;

	for (j = 0; j < n; j++)
		cp[j] = entry_cp(raw + PF_MOVESCORE_SIZE * j);
}

/*
 * The fast path of pf_target_policy_payload(): a zeman policy from a
 * complete table in score order (what uci-eval --multipv all writes),
 * without generating the moves.  The first pass checks the table against
 * the position's legal move sets as match_sets() does (n is the number
 * of legal moves; taking each table move out of the sets leaves them
 * empty), writes each move into its pair with 0 quanta, and computes the
 * zeman weights of the kept moves as it goes: in a table in score order
 * the best score is the first entry's and the smallest kept one is entry
 * kept - 1's, both read before the pass (the pass checks the order).
 * The arithmetic is zeman_sorted()'s, so the weights are the same; the
 * quantisation is quantize_positive()'s, written in place: the second
 * pass stores each floor in its pair and notes each remainder's bucket,
 * a pass adds the quantum of every remainder above the boundary bucket,
 * and the few of the boundary bucket are ranked after and get theirs.
 * The same bytes as the sorted branch of policy_core() followed by
 * pf_policy_encode().
 *
 * Returns the payload's length, or -1 when the table is not such a
 * table (dst is then undefined): *unsorted is then 1 when it is a
 * complete table of the legal moves, only not in score order (as
 * match_sets()).
 */
static int
zeman_fast(pf_target *t, const pf_board *b, const uint8_t *raw, int n,
    uint8_t *dst, int *unsorted)
{
	pf_legal_sets *ls = &t->sets;
	int32_t *restrict cp = t->cp;
	double *restrict w = t->sorted;
	uint16_t count[RBUCKETS];
	uint8_t bkt[PF_MAX_MOVES], edge[PF_MAX_MOVES];
	uint8_t *p = dst + PF_POLICY_FIXED, *e;
	const uint8_t *en;
	long total = 0, deficit;
	int i, j, nz, kept, thr, ne = 0, bad = 0, quick;
	int32_t prev = INT32_MAX, score, best, least;
	int64_t down = 0;		/* negative once a score rises */
	const double max32 = (double)PF_POLICY_QUANTA * 4294967296.0;
	double scale, scale32, sum = 0, min, inv = 0, x, v;
	uint64_t u;

	*unsorted = 0;
	if (pf_legal_sets_fill(b, ls) != n)
		return -1;
	kept = n - t->ndrop[n];
	best = entry_cp(raw);
	least = entry_cp(raw + PF_MOVESCORE_SIZE * (kept - 1));
	/* zeman_sorted()'s usual case: power 4, the kept scores not all
	   equal.  Otherwise the weights are made after the pass. */
	quick = t->params.power == 4.0 && best > least;
	min = least;
	if (quick)
		inv = 1.0 / (best - min);
	for (j = 0; j < kept; j++) {
		en = raw + PF_MOVESCORE_SIZE * j;
		score = take_entry(ls, en, &bad);
		pf_put32(p + 4 * j, pf_get16(en));
		down |= (int64_t)prev - score;
		prev = score;
		x = (score - min) * inv;
		v = (x * x) * (x * x);
		w[j] = v;
		sum += v;
	}
	for (; j < n; j++) {
		en = raw + PF_MOVESCORE_SIZE * j;
		score = take_entry(ls, en, &bad);
		pf_put32(p + 4 * j, pf_get16(en));
		down |= (int64_t)prev - score;
		prev = score;
	}
	if (bad || !pf_legal_sets_empty(ls))
		return -1;
	if (down < 0) {
		table_cp(raw, n, cp);
		*unsorted = 1;
		return -1;
	}
	payload_header(t, n, dst);
	if (quick)
		nz = kept;
	else {
		table_cp(raw, n, cp);
		sum = zeman_sorted(t, cp, n, w);
		nz = n;
	}
	while (nz > 0 && !(w[nz - 1] > 0))
		nz--;
	scale = PF_POLICY_QUANTA / sum;
	scale32 = scale * 4294967296.0;
	memset(count, 0, sizeof(count));
	for (i = 0; i < nz; i++) {
		x = w[i] * scale32;
		x = x > max32 ? max32 : x;
		u = (uint64_t)(int64_t)x;	/* floor: 0 <= x < 2^48 */
		pf_put16(p + 4 * i + 2, (uint16_t)(u >> 32));
		total += (long)(u >> 32);
		bkt[i] = (uint8_t)((uint32_t)u >> (32 - RBUCKET_BITS));
		count[bkt[i]]++;
	}
	deficit = PF_POLICY_QUANTA - total;
	if (deficit == 0)
		return PF_POLICY_FIXED + 4 * n;
	if (deficit < 0 || deficit >= nz) {
		quantize(w, nz, scale, t->q);
		for (i = 0; i < nz; i++)
			pf_put16(p + 4 * i + 2, t->q[i]);
		return PF_POLICY_FIXED + 4 * n;
	}
	/* Branch-free over the moves: which bucket each is in is random. */
	thr = boundary_bucket(count, &deficit);
	for (i = 0; i < nz; i++) {
		e = p + 4 * i + 2;
		pf_put16(e, (uint16_t)(pf_get16(e) + (bkt[i] > thr)));
		edge[ne] = (uint8_t)i;
		ne += bkt[i] == thr;
	}
	sort_boundary(edge, ne, w, scale32);
	for (i = 0; i < deficit; i++) {
		e = p + 4 * edge[i] + 2;
		pf_put16(e, (uint16_t)(pf_get16(e) + 1));
	}
	return PF_POLICY_FIXED + 4 * n;
}

int
pf_target_policy_payload(pf_target *t, const pf_board *b,
    const uint8_t *data, uint32_t len, uint8_t *dst)
{
	const uint8_t *raw = data + PF_MOVESCORES_FIXED;
	pf_policy *pol = &t->pol;
	int n, i, unsorted = 0, complete;

	t->err[0] = 0;
	if (!t->params_ok) {
		snprintf(t->err, sizeof(t->err), "invalid policy parameters");
		return -1;
	}
	if ((n = table_entries(t, data, len)) == -1)
		return -1;
	/* The flag only says which path to try first: zeman_fast() and
	   match_sets() check the table themselves. */
	complete = data[1] & PF_MSF_COMPLETE;
	if (complete && t->params.method == PF_POLICY_ZEMAN && n > 0) {
		if ((i = zeman_fast(t, b, raw, n, dst, &unsorted)) >= 0)
			return i;
		/* Either way, policy_core() need not match it again. */
		complete = unsorted ? MATCHED_UNSORTED : 0;
	}
	if (policy_core(t, b, raw, n, complete, pol) == -1)
		return -1;
	if (pol->n == 0)
		return 0;
	payload_header(t, pol->n, dst);
	for (i = 0; i < pol->n; i++)
		pf_put32(dst + PF_POLICY_FIXED + 4 * i, (uint32_t)pol->move[i] |
		    (uint32_t)pol->prob[i] << 16);
	return PF_POLICY_FIXED + 4 * pol->n;
}

/* ---- depth averaging ------------------------------------------------- */

int
pf_target_mix_begin(pf_target *t, const pf_board *b)
{
	t->mix_nlegal = pf_gen_legal(b, t->legal);
	t->mix_ntables = 0;
	t->mix_sum = 0;
	memset(t->mix_acc, 0, sizeof(t->mix_acc));
	return t->mix_nlegal;
}

/*
 * The table is matched by the careful path (it names the first bad
 * move), then weighted as policy_core() weights it: a zeman table in
 * score order by zeman_sorted(), listed in table order; any other by
 * policy_weights(), listed by decreasing score.  Each move's probability
 * (weight / sum) is added to its legal move's total; the weights, their
 * sum and the listing order are kept for the payload, so that one table
 * gives the bytes pf_target_policy_payload() gives.
 */
int
pf_target_mix_add(pf_target *t, const uint8_t *data, uint32_t len)
{
	const uint8_t *raw = data + PF_MOVESCORES_FIXED;
	double *w = t->sorted, sum, inv;
	int n, nlegal = t->mix_nlegal, i, j, sorted = 1;

	t->err[0] = 0;
	if (!t->params_ok) {
		snprintf(t->err, sizeof(t->err), "invalid policy parameters");
		return -1;
	}
	if (nlegal < 0) {
		snprintf(t->err, sizeof(t->err), "no position begun");
		return -1;
	}
	if ((n = table_entries(t, data, len)) == -1)
		return -1;
	if (match_careful(t, raw, n, nlegal) == -1)
		return -1;
	/* Every table move is legal and listed once, so n == nlegal
	   means every legal move is listed. */
	if (n != nlegal)
		return 0;
	t->mix_ntables++;
	if (n == 0)
		return 1;
	if (t->params.method == PF_POLICY_ZEMAN)
		for (j = 1; j < n; j++)
			sorted &= t->cp[j - 1] >= t->cp[j];
	else
		sorted = 0;
	if (sorted) {
		sum = zeman_sorted(t, t->cp, n, w);
		for (j = 0; j < n; j++)
			t->order[j] = j;
	} else
		sum = policy_weights(&t->params, t->cp, n, t->order, w,
		    t->prob);
	inv = 1.0 / sum;
	for (j = 0; j < n; j++) {
		i = find_legal(t, nlegal, t->tmove[t->order[j]]);
		t->mix_w[i] = w[t->order[j]];
		t->mix_acc[i] += w[t->order[j]] * inv;
		t->mix_rank[i] = j;
	}
	t->mix_sum = sum;
	return 1;
}

int
pf_target_mix_payload(pf_target *t, uint8_t *dst)
{
	int idx[PF_MAX_MOVES], nlegal = t->mix_nlegal, i, j, k, nz;
	const double *src;
	double *w = t->sorted, sum = 0;

	t->err[0] = 0;
	if (nlegal < 0 || (nlegal > 0 && t->mix_ntables == 0)) {
		snprintf(t->err, sizeof(t->err), "no per-move table to "
		    "average");
		return -1;
	}
	if (nlegal == 0)
		return 0;
	/* Decreasing average, ties in the last table's order. */
	for (i = 0; i < nlegal; i++) {
		k = i;
		for (j = i; j > 0 && (t->mix_acc[idx[j - 1]] < t->mix_acc[k] ||
		    (t->mix_acc[idx[j - 1]] == t->mix_acc[k] &&
		    t->mix_rank[idx[j - 1]] > t->mix_rank[k])); j--)
			idx[j] = idx[j - 1];
		idx[j] = k;
	}
	/* One table: its own weights, as pf_target_policy_payload(). */
	src = t->mix_ntables == 1 ? t->mix_w : t->mix_acc;
	for (i = 0, nz = 0; i < nlegal; i++) {
		w[i] = src[idx[i]];
		if (w[i] > 0)
			nz = i + 1;
	}
	if (t->mix_ntables == 1)
		sum = t->mix_sum;
	else
		for (i = 0; i < nz; i++)
			sum += w[i];
	quantize_positive(w, nz, PF_POLICY_QUANTA / sum, t->q);
	payload_header(t, nlegal, dst);
	for (i = 0; i < nlegal; i++)
		pf_put32(dst + PF_POLICY_FIXED + 4 * i,
		    (uint32_t)t->legal[idx[i]] |
		    (uint32_t)(i < nz ? t->q[i] : 0) << 16);
	return PF_POLICY_FIXED + 4 * nlegal;
}

double
pf_value_tanh(double cp, double spread)
{
	return tanh(spread * cp / 200.0);
}

double
pf_value_logistic(double cp, double alpha)
{
	return 2.0 / (1.0 + exp(-cp / alpha)) - 1.0;
}

double
pf_value_wdl(double cp, double a, double b)
{
	return 1.0 / (1.0 + exp(-(cp - a) / b));
}

double
pf_value_wdl_engine(unsigned w, unsigned d, unsigned l)
{
	(void)l;
	return (w + d / 2.0) / 1000.0;
}

double
pf_result_stm(uint8_t result, int stm)
{
	switch (result) {
	case PF_RESULT_WHITE:
		return stm == PF_WHITE ? 1.0 : 0.0;
	case PF_RESULT_BLACK:
		return stm == PF_BLACK ? 1.0 : 0.0;
	case PF_RESULT_DRAW:
		return 0.5;
	default:
		return -1.0;
	}
}

double
pf_value_blend(double v, int scale, double r, double lambda)
{
	if (scale == 0)
		r = 2.0 * r - 1.0;
	return lambda * v + (1.0 - lambda) * r;
}

double
pf_value_linear(int k, int plies, double r)
{
	if (plies <= 0 || r == 0.5)
		return 0.0;
	/* + 0.0: the loser's first position is 0, not -0. */
	return (r > 0.5 ? 1.0 : -1.0) * (double)k / plies + 0.0;
}
