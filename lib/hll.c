/*
 * hll.c - an exact key set with a byte budget and a HyperLogLog sketch
 * (hll.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hll.h"

/* ---- exact set ---------------------------------------------------------- */

/* Open addressing with linear probing; 0 marks an empty slot, so the key
   0 is kept apart in a flag. */
struct pf_keyset {
	uint64_t *slot;
	size_t cap, count, limit;
	size_t max_cap;		/* the largest table, in slots */
	int has_zero;
};

#define KEYSET_START	(64u << 10)	/* slots of the first table */
#define HUGE_PAGE	(2u << 20)

/*
 * A zeroed table of cap slots.  A large one is aligned to 2 MB and asked
 * for transparent huge pages: filled at random, a table of 4 KB pages
 * takes a page fault for nearly every key until every page is touched,
 * and in a virtual machine that costs more than the rest of the work.
 */
static uint64_t *
table_alloc(size_t cap)
{
	size_t bytes = cap * sizeof(uint64_t);
	void *p;

	if (bytes < 2 * HUGE_PAGE)
		return calloc(cap, sizeof(uint64_t));
	if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	memset(p, 0, bytes);
	return p;
}

pf_keyset *
pf_keyset_new(size_t max_bytes)
{
	pf_keyset *s;
	size_t max_cap = max_bytes / sizeof(uint64_t) / 3 * 2, cap;

	if (max_cap < 16)
		max_cap = 16;
	/* Halvings of the largest table, so that doubling lands on it. */
	for (cap = max_cap; cap / 2 >= KEYSET_START; cap /= 2)
		;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->slot = table_alloc(cap)) == NULL) {
		free(s);
		return NULL;
	}
	s->cap = cap;
	s->max_cap = max_cap;
	s->limit = cap - cap / 4;
	return s;
}

void
pf_keyset_free(pf_keyset *s)
{
	if (s == NULL)
		return;
	free(s->slot);
	free(s);
}

/* The home slot: the key's high bits scaled to the capacity (any
   capacity, not only a power of two, so the whole budget is used). */
static inline size_t
home(const pf_keyset *s, uint64_t key)
{
	return (size_t)(((unsigned __int128)key * s->cap) >> 64);
}

/* Double the table (up to max_cap).  0, or -1 when it is as large as it
   may be or memory could not be had. */
static int
grow(pf_keyset *s)
{
	uint64_t *old = s->slot, *slot;
	size_t old_cap = s->cap, cap = s->cap * 2, i, j;

	if (s->cap >= s->max_cap)
		return -1;
	if (cap > s->max_cap)
		cap = s->max_cap;
	if ((slot = table_alloc(cap)) == NULL)
		return -1;
	s->slot = slot;
	s->cap = cap;
	for (i = 0; i < old_cap; i++) {
		if (old[i] == 0)
			continue;
		for (j = home(s, old[i]); slot[j] != 0;
		    j = j + 1 == cap ? 0 : j + 1)
			;
		slot[j] = old[i];
	}
	free(old);
	s->limit = cap - cap / 4;
	return 0;
}

static inline int
add(pf_keyset *s, uint64_t key)
{
	size_t i;

	if (key == 0) {
		if (s->has_zero)
			return 0;
		if (s->count >= s->limit && grow(s) == -1)
			return -1;
		s->has_zero = 1;
		s->count++;
		return 1;
	}
	for (i = home(s, key);; i = i + 1 == s->cap ? 0 : i + 1) {
		if (s->slot[i] == key)
			return 0;
		if (s->slot[i] == 0)
			break;
	}
	if (s->count >= s->limit) {
		if (grow(s) == -1)
			return -1;
		for (i = home(s, key); s->slot[i] != 0;
		    i = i + 1 == s->cap ? 0 : i + 1)
			;
	}
	s->slot[i] = key;
	s->count++;
	return 1;
}

int
pf_keyset_add(pf_keyset *s, uint64_t key)
{
	return add(s, key);
}

size_t
pf_keyset_count(const pf_keyset *s)
{
	return s->count;
}

/* ---- key log ------------------------------------------------------------ */

#define RECENT		16384

/*
 * The keys live in an address range reserved once (MAP_NORESERVE: pages come as they are touched, so the log grows
 * in place without copying) and asked for transparent huge pages: filled
 * in order, 4 KB pages cost a page fault every 512 keys, and in a virtual
 * machine that is much of the work.  The sort needs no second array.
 */
struct pf_keylog {
	uint64_t *key;
	size_t reserved;	/* keys the range can hold */
	size_t n, cap;		/* cap: keys paid for from the budget */
	size_t sorted;		/* key[0..sorted) is sorted and unique */
	size_t *budget;
	int frozen;
	/* The last key seen in each of RECENT slots (by key bits): a key
	   found here is a duplicate and is not logged again, so that a
	   stream with many repeats keeps its log small. */
	uint64_t recent[RECENT];
};

#define KEYLOG_START	256
#define KEYLOG_BYTES	sizeof(uint64_t)

/*
 * LSD radix sort of src[0..n) by bits lo..hi-1 (the keys agree above hi),
 * scratch dst, in digits of 10 bits (8 for a few keys, whose tables would
 * cost more than they sort); a digit that every key shares is skipped.
 * The result in keys (src or dst).
 */
#define DIGIT_MAX	10
#define DIGITS_MAX	8	/* 64 bits in digits of 8 */

static void
lsd_sort(uint64_t *src, uint64_t *dst, size_t n, int lo, int hi,
    uint64_t *keys)
{
	size_t count[DIGITS_MAX << DIGIT_MAX], pos;
	int w = n >= 2048 ? DIGIT_MAX : 8;
	int nd = (hi - lo + w - 1) / w;
	size_t m = (size_t)1 << w;
	uint64_t *t;

	memset(count, 0, (size_t)nd * m * sizeof(count[0]));
	for (size_t i = 0; i < n; i++) {
		uint64_t k = src[i] >> lo;

		for (int d = 0; d < nd; d++)
			count[(size_t)d * m + ((k >> (w * d)) & (m - 1))]++;
	}
	for (int d = 0; d < nd; d++) {
		size_t *c = count + (size_t)d * m;
		int sh = lo + w * d;

		if (c[(src[0] >> sh) & (m - 1)] == n)
			continue;	/* one value of the digit: none moves */
		pos = 0;
		for (size_t v = 0; v < m; v++) {
			size_t k = c[v];

			c[v] = pos;
			pos += k;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t k = src[i];

			dst[c[(k >> sh) & (m - 1)]++] = k;
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != keys)
		memcpy(keys, src, n * sizeof(*keys));
}

/*
 * The low TIE_BITS are sorted apart: the keys are hashes above them (in
 * posstat's log, a position's hash with its ply below), so keys that
 * agree above are few, and a pass that orders those runs costs less than
 * the radix passes over the low bits of every key.  A long run (one
 * position at many plies) is radix sorted too.
 */
#define TIE_BITS	16

static void
order_ties(uint64_t *keys, size_t n, uint64_t *scratch)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i + 1; j < n && (keys[j] ^ keys[i]) >> TIE_BITS == 0;
		    j++)
			;
		if (j - i > 32)
			lsd_sort(keys + i, scratch, j - i, 0, TIE_BITS,
			    keys + i);
		else
			for (size_t a = i + 1; a < j; a++) {
				uint64_t k = keys[a];
				size_t b = a;

				for (; b > i && keys[b - 1] > k; b--)
					keys[b] = keys[b - 1];
				keys[b] = k;
			}
		i = j;
	}
}

/* keys[0..n), which agree above bit hi, scratch of n keys. */
static void
sort_part(uint64_t *keys, uint64_t *scratch, size_t n, int hi)
{
	lsd_sort(keys, scratch, n, TIE_BITS, hi, keys);
	order_ties(keys, n, scratch);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * In place: the keys are permuted into 256 buckets by their top byte,
 * then each bucket, small enough for the cache when the keys are hashes,
 * is sorted by its other bits with a scratch buffer of the largest
 * bucket's size.  No second array of n keys: a large log is sorted in the
 * memory it already has.  The permutation swaps each key of a bucket's
 * unplaced part straight to the next free place of its own bucket, and
 * goes over the buckets again until every key is placed (as ska_sort
 * does): the swaps are independent, so their misses to memory overlap,
 * where in a cycle of swaps each waits for the key the last displaced.
 */
static void
partition(uint64_t *keys, size_t n, size_t *start, size_t *count)
{
	size_t next[256], end[256], pos = 0;
	uint8_t left[256];
	int nleft = 0;

	memset(count, 0, 256 * sizeof(*count));
	for (size_t i = 0; i < n; i++)
		count[keys[i] >> 56]++;
	for (int v = 0; v < 256; v++) {
		start[v] = next[v] = pos;
		pos += count[v];
		end[v] = pos;
		if (count[v] > 0)
			left[nleft++] = (uint8_t)v;
	}
	while (nleft > 1) {
		int w = 0;

		for (int r = 0; r < nleft; r++) {
			size_t i = next[left[r]], e = end[left[r]];

			for (; i < e; i++) {
				uint64_t k = keys[i];
				size_t to = next[k >> 56]++;

				keys[i] = keys[to];
				keys[to] = k;
			}
		}
		for (int r = 0; r < nleft; r++)
			if (next[left[r]] < end[left[r]])
				left[w++] = left[r];
		nleft = w;
	}
}

void
pf_sort_u64(uint64_t *keys, size_t n)
{
	size_t count[256], start[256], most = 0;
	uint64_t *scratch;

	if (n < 2)
		return;
	if (n < (1u << 16)) {
		if ((scratch = malloc(n * sizeof(*scratch))) == NULL)
			qsort(keys, n, sizeof(*keys), cmp_u64);
		else
			sort_part(keys, scratch, n, 64);
		free(scratch);
		return;
	}
	partition(keys, n, start, count);
	for (int v = 0; v < 256; v++)
		if (count[v] > most)
			most = count[v];
	scratch = malloc(most * sizeof(*scratch));
	for (int v = 0; v < 256; v++) {
		if (count[v] < 2)
			continue;
		if (scratch == NULL)	/* out of memory: slower, in place */
			qsort(keys + start[v], count[v], sizeof(*keys),
			    cmp_u64);
		else
			sort_part(keys + start[v], scratch, count[v], 56);
	}
	free(scratch);
}

pf_keylog *
pf_keylog_new(size_t *budget)
{
	pf_keylog *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->budget = budget;
	memset(l->recent, 0xff, sizeof(l->recent));
	return l;
}

static uint64_t *
reserve(size_t keys)
{
	size_t bytes = keys * sizeof(uint64_t);
	void *p;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (bytes >= 2 * HUGE_PAGE)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

void
pf_keylog_free(pf_keylog *l)
{
	if (l == NULL)
		return;
	*l->budget += l->cap * KEYLOG_BYTES;
	if (l->key != NULL)
		munmap(l->key, l->reserved * sizeof(uint64_t));
	free(l);
}

/* Sort and drop duplicates, marking (bit 0) a key that was there more
   than once; a key and its marked copy sort side by side. */
static void
compact(pf_keylog *l)
{
	size_t i, j;

	if (l->sorted == l->n)
		return;
	pf_sort_u64(l->key, l->n);
	for (i = j = 0; i < l->n; i++)
		if (j == 0 || l->key[i] >> 1 != l->key[j - 1] >> 1)
			l->key[j++] = l->key[i];
		else
			l->key[j - 1] |= 1;
	l->n = l->sorted = j;
}

/* Room for one more key: grow within the budget, else compact, else
   freeze.  0, or 1 when frozen. */
static int
make_room(pf_keylog *l)
{
	size_t cap = l->cap ? 2 * l->cap : KEYLOG_START;
	size_t need;

	if (l->key == NULL) {
		/* the most this log could ever pay for */
		l->reserved = *l->budget / KEYLOG_BYTES;
		if (l->reserved < KEYLOG_START)
			l->reserved = KEYLOG_START;
		if ((l->key = reserve(l->reserved)) == NULL) {
			l->reserved = 0;
			l->frozen = 1;
			return 1;
		}
	}
	if (cap > l->reserved)
		cap = l->reserved;
	need = (cap - l->cap) * KEYLOG_BYTES;
	if (cap > l->cap && need <= *l->budget) {
		*l->budget -= need;
		l->cap = cap;
		return 0;
	}
	compact(l);
	if (l->n <= l->cap / 2 && l->cap > 0)
		return 0;
	l->frozen = 1;
	return 1;
}

int
pf_keylog_add(pf_keylog *l, uint64_t key)
{
	uint64_t *r = &l->recent[(key >> 24) & (RECENT - 1)];

	key &= ~(uint64_t)1;
	if ((*r & ~(uint64_t)1) == key && *r != UINT64_MAX) {
		if (*r & 1)
			return 0;	/* logged before, and marked */
		/* logged before: its marked copy, once */
		if (l->frozen || (l->n == l->cap && make_room(l) == 1))
			return pf_keylog_has(l, key) ? 0 : 1;
		*r = l->key[l->n++] = key | 1;
		return 0;
	}
	if (l->frozen)
		return 1;
	*r = key;
	if (l->n == l->cap && make_room(l) == 1)
		return 1;
	l->key[l->n++] = key;
	return 0;
}

int
pf_keylog_frozen(const pf_keylog *l)
{
	return l->frozen;
}

int
pf_keylog_has(pf_keylog *l, uint64_t key)
{
	size_t lo = 0, hi;

	key &= ~(uint64_t)1;
	compact(l);
	hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->key[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < l->n && l->key[lo] >> 1 == key >> 1) {
		l->key[lo] |= 1;	/* seen again */
		return 1;
	}
	return 0;
}

size_t
pf_keylog_finish(pf_keylog *l, const uint64_t **keys)
{
	compact(l);
	*keys = l->key;
	return l->n;
}

/* ---- HyperLogLog -------------------------------------------------------- */

struct pf_hll {
	int p;
	size_t m;
	uint8_t *reg;
};

size_t
pf_hll_bytes(int precision)
{
	return (size_t)1 << precision;
}

pf_hll *
pf_hll_new(int precision)
{
	pf_hll *h;

	if (precision < 4 || precision > 18) {
		errno = EINVAL;
		return NULL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	h->p = precision;
	h->m = pf_hll_bytes(precision);
	if ((h->reg = calloc(h->m, 1)) == NULL) {
		free(h);
		return NULL;
	}
	return h;
}

void
pf_hll_free(pf_hll *h)
{
	if (h == NULL)
		return;
	free(h->reg);
	free(h);
}

void
pf_hll_add(pf_hll *h, uint64_t key)
{
	size_t i = (size_t)(key >> (64 - h->p));
	uint64_t rest = key << h->p;
	/* The rank: leading zeros of the other 64 - p bits, plus one;
	   64 - p + 1 when they are all zero. */
	uint8_t rank = rest == 0 ? (uint8_t)(64 - h->p + 1) :
	    (uint8_t)(__builtin_clzll(rest) + 1);

	if (rank > h->reg[i])
		h->reg[i] = rank;
}

/* Ertl's sigma and tau (section 4 of the paper). */
static double
sigma(double x)
{
	double y = 1, z = x, zp;

	if (x == 1)
		return INFINITY;
	do {
		x *= x;
		zp = z;
		z += x * y;
		y += y;
	} while (zp != z);
	return z;
}

static double
tau(double x)
{
	double y = 1, z = 1 - x, zp;

	if (x == 0 || x == 1)
		return 0;
	do {
		x = sqrt(x);
		zp = z;
		y *= 0.5;
		z -= (1 - x) * (1 - x) * y;
	} while (zp != z);
	return z / 3;
}

double
pf_hll_estimate(const pf_hll *h)
{
	int q = 64 - h->p, k;
	uint64_t c[66];
	double m = (double)h->m, z;

	memset(c, 0, sizeof(c));
	for (size_t i = 0; i < h->m; i++)
		c[h->reg[i]]++;
	if (c[0] == h->m)
		return 0;
	z = m * tau(1 - (double)c[q + 1] / m);
	for (k = q; k >= 1; k--)
		z = 0.5 * (z + (double)c[k]);
	z += m * sigma((double)c[0] / m);
	return m * m / (2 * log(2)) / z;
}
