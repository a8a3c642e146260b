/*
 * hll.c - counting distinct keys (lib/hll.h): the radix sort against
 * qsort, the key log's distinct keys against a naive count under budgets
 * that force compaction and freezing, the exact key set, and the
 * HyperLogLog estimate within its stated error.
 */
#include <stdlib.h>
#include <string.h>

#include "hll.h"
#include "t.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* n keys from a pool of m distinct ones (hashes), the pool's top byte
   narrowed when narrow (so the big sort's buckets are uneven). */
static void
fill(uint64_t *k, size_t n, size_t m, int narrow)
{
	uint64_t *pool = malloc(m * sizeof(*pool));

	for (size_t i = 0; i < m; i++)
		pool[i] = narrow ? next() >> 60 << 56 | (next() >> 8) : next();
	for (size_t i = 0; i < n; i++)
		k[i] = pool[next() % m];
	free(pool);
}

static size_t
distinct(uint64_t *k, size_t n)
{
	size_t d = 0;

	qsort(k, n, sizeof(*k), cmp_u64);
	for (size_t i = 0; i < n; i++)
		d += i == 0 || k[i] != k[i - 1];
	return d;
}

int
main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 100, 65535, 65536,
	    300000 };
	size_t big = 300000;
	uint64_t *a = malloc(big * sizeof(*a)), *b = malloc(big * sizeof(*b)),
	    *t = malloc(big * sizeof(*t));
	int ok;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int narrow = 0; narrow < 2; narrow++) {
			size_t n = sizes[s];

			fill(a, n, n / 3 + 1, narrow);
			memcpy(b, a, n * sizeof(*a));
			pf_sort_u64(a, n);
			qsort(b, n, sizeof(*b), cmp_u64);
			CHECK(n == 0 || memcmp(a, b, n * sizeof(*a)) == 0,
			    "pf_sort_u64 of %zu keys%s equals qsort", n,
			    narrow ? " (top bytes 0-15)" : "");
		}

	/* Keys that agree above their low 16 bits (a position at many
	   plies): a few such runs, long ones, and short ones, in the small
	   sort and the bucketed one, and all in one bucket. */
	{
		static const size_t tsizes[] = { 40, 5000, 65535, 300000 };
		static const size_t highs[] = { 1, 3, 1000, 100000 };

		for (size_t s = 0; s < 4; s++)
			for (size_t h = 0; h < 4; h++)
				for (int bucket = 0; bucket < 2; bucket++) {
					size_t n = tsizes[s];
					uint64_t *hi = malloc(highs[h] *
					    sizeof(*hi));

					for (size_t i = 0; i < highs[h]; i++)
						hi[i] = (bucket ? 0x42ULL <<
						    56 : 0) | (next() >>
						    (bucket ? 8 : 0) &
						    ~0xffffULL);
					for (size_t i = 0; i < n; i++)
						a[i] = hi[next() % highs[h]] |
						    (next() & 0xffff);
					free(hi);
					memcpy(b, a, n * sizeof(*a));
					pf_sort_u64(a, n);
					qsort(b, n, sizeof(*b), cmp_u64);
					CHECK(memcmp(a, b, n * sizeof(*a)) ==
					    0, "pf_sort_u64 of %zu keys in "
					    "runs of %zu high parts%s equals "
					    "qsort", n, highs[h], bucket ?
					    " (one top byte)" : "");
				}
	}

	/* The key log: with room, exactly the distinct keys. */
	{
		size_t budget = 64u << 20, n, d;
		pf_keylog *l = pf_keylog_new(&budget);
		const uint64_t *k;

		/* 300000 draws from 200000 keys (bit 0 is the log's): some
		   once, some more often; and some keys taken twice in a row
		   (the recent slots) */
		fill(a, big, 200000, 0);
		for (size_t i = 0; i < big; i++)
			a[i] &= ~(uint64_t)1;
		for (size_t i = 0; i + 1 < big; i += 1000)
			a[i + 1] = a[i];
		ok = 1;
		for (size_t i = 0; i < big; i++)
			ok &= pf_keylog_add(l, a[i]) == 0;
		n = pf_keylog_finish(l, &k);
		memcpy(b, a, big * sizeof(*a));
		d = distinct(b, big);
		size_t once = 0, marked = 0, good = 1;
		for (size_t i = 0, j = 0; i < big; i++) {	/* b unique */
			int single = (i == 0 || b[i] != b[i - 1]) &&
			    (i + 1 == big || b[i + 1] != b[i]);

			once += single;
			if (i == 0 || b[i] != b[i - 1]) {
				good &= j < n && (k[j] & 1) == !single;
				b[j++] = b[i];
			}
		}
		for (size_t i = 0; i < n; i++)
			marked += k[i] & 1;
		CHECK(ok && !pf_keylog_frozen(l) && n == d,
		    "key log: the %zu distinct of %zu keys, as found naively "
		    "(%zu)", n, big, d);
		for (size_t i = 0; i < n; i++)
			ok &= (k[i] & ~(uint64_t)1) == b[i];
		CHECK(ok && good && once > 1000 && n - marked == once,
		    "key log: the keys, marked exactly when taken more than "
		    "once (%zu of %zu once)", once, n);
		for (size_t i = 1; i < n; i++)
			ok &= k[i - 1] < k[i];
		CHECK(ok, "key log: the keys come out ascending and unique");
		pf_keylog_free(l);
		CHECK(budget == 64u << 20, "key log: its bytes go back to the "
		    "budget");
	}

	/* A budget that holds 4096 keys: 300000 keys of 1000 distinct ones
	   compact and never freeze; of 100000 distinct ones they freeze, and
	   then exactly the logged keys are found. */
	{
		size_t budget = 4096 * 16, n;
		pf_keylog *l = pf_keylog_new(&budget);
		const uint64_t *k;

		fill(a, big, 1000, 0);
		for (size_t i = 0; i < big; i++)
			a[i] &= ~(uint64_t)1;
		a[big - 1] = 2;		/* one key once, at the end */
		for (size_t i = 0; i < big; i++)
			pf_keylog_add(l, a[i]);
		n = pf_keylog_finish(l, &k);
		memcpy(b, a, big * sizeof(*a));
		CHECK(!pf_keylog_frozen(l) && n == distinct(b, big),
		    "key log: compacted in a small budget, still exact (%zu)",
		    n);
		ok = k[0] == 2;
		for (size_t i = 1; i < n; i++)
			ok &= (k[i] & 1) == 1;
		CHECK(ok, "key log: compacted, the key taken once unmarked, "
		    "the others marked");
		pf_keylog_free(l);

		budget = 4096 * 16;
		l = pf_keylog_new(&budget);
		fill(a, big, 100000, 0);
		size_t taken = 0;
		for (taken = 0; taken < big; taken++)
			if (pf_keylog_add(l, a[taken]) == 1)
				break;
		CHECK(pf_keylog_frozen(l) && taken < big && taken >= 4096,
		    "key log: freezes when a compaction frees too little "
		    "(after %zu keys)", taken);
		memcpy(b, a, taken * sizeof(*a));
		qsort(b, taken, sizeof(*b), cmp_u64);
		ok = 1;
		for (size_t i = taken; i < big; i++) {
			int in = bsearch(&a[i], b, taken, sizeof(*b),
			    cmp_u64) != NULL;

			ok &= pf_keylog_has(l, a[i] & ~(uint64_t)1) == in;
		}
		CHECK(ok, "key log: frozen, a key is found exactly when it was "
		    "logged");
		pf_keylog_free(l);
	}

	/* The exact set and the sketch. */
	{
		pf_keyset *s = pf_keyset_new(1u << 20);
		pf_hll *h = pf_hll_new(PF_HLL_PRECISION);
		size_t added = 0;
		double e;

		fill(a, big, 60000, 0);
		memcpy(b, a, big * sizeof(*a));
		for (size_t i = 0; i < big; i++) {
			int r = pf_keyset_add(s, a[i]);

			added += r == 1;
			pf_hll_add(h, a[i]);
		}
		CHECK(added == distinct(b, big) && pf_keyset_count(s) == added,
		    "key set: %zu keys added, the distinct ones", added);
		e = pf_hll_estimate(h);
		CHECK(e > added * 0.97 && e < added * 1.03,
		    "HyperLogLog: %.0f for %zu distinct keys, within 3 %% "
		    "(3.7 standard errors)", e, added);
		pf_keyset_free(s);
		pf_hll_free(h);
	}
	free(a);
	free(b);
	free(t);
	return t_done();
}
