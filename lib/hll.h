/*
 * hll.h - counting distinct 64-bit keys in bounded memory: an exact set
 * of keys with a fixed byte budget (pf_keyset), and a HyperLogLog sketch
 * (pf_hll) that estimates the count once the set is full.  posstat(1)
 * counts games, unique positions and repeated (position, ply) pairs with
 * them.
 *
 * Keys should be hashes (XXH3 and the like): the set takes a key's slot
 * from its high bits and the sketch its register from the top bits and
 * its rank from the rest.
 *
 * Nothing here prints or exits.
 */
#ifndef PF_HLL_H
#define PF_HLL_H

#include <stddef.h>
#include <stdint.h>

/* ---- exact set ---------------------------------------------------------- */

typedef struct pf_keyset pf_keyset;

/*
 * A set whose table never takes more than max_bytes: it starts small and
 * doubles as keys come, up to 2/3 of max_bytes (while it doubles the old
 * table and the new one are both held: 1/3 + 2/3), 8 bytes a slot.  It
 * holds at most 3/4 of its slots as keys (linear probing stays quick);
 * when the largest table is that full it takes no more keys.  NULL when
 * out of memory.
 */
pf_keyset	*pf_keyset_new(size_t max_bytes);
void		 pf_keyset_free(pf_keyset *s);
/* 1 when key was added, 0 when it was already there, -1 when it was not
   there and the set is full (it was not added; memory that could not be
   had when the table was to double counts as full). */
int		 pf_keyset_add(pf_keyset *s, uint64_t key);
size_t		 pf_keyset_count(const pf_keyset *s);

/* ---- key log ------------------------------------------------------------ */

/*
 * Counting distinct keys of a stream exactly by sorting instead of
 * probing: keys are appended (a sequential write, where a hash set takes
 * a cache miss a key once it outgrows the cache), and sorted and made
 * unique (a radix sort, in place) when the log is full and at the end.
 * The logs of one run share a byte budget (*budget, bytes left, taken as
 * they grow: 8 bytes a key; the sort borrows a scratch buffer of about
 * n / 256 keys while it runs).  When the log is full,
 * the budget spent and a compaction leaves it more than half full, it is
 * frozen: it takes no more keys, and pf_keylog_has answers whether a key
 * was among those it holds.
 * Bit 0 of a key is the log's own: a key is taken without it, and comes
 * out of pf_keylog_finish with it set when it was taken more than once
 * (or found again by pf_keylog_has), so that keys seen once can be told
 * from the others.
 */
typedef struct pf_keylog pf_keylog;

/* NULL when out of memory; budget may not be NULL. */
pf_keylog	*pf_keylog_new(size_t *budget);
/* Gives its bytes back to the budget. */
void		 pf_keylog_free(pf_keylog *l);
/* 0 when key was taken (or is a duplicate of one it holds), 1 when the
   log is frozen (key not taken). */
int		 pf_keylog_add(pf_keylog *l, uint64_t key);
int		 pf_keylog_frozen(const pf_keylog *l);
/* Is key among the log's keys?  For a frozen log (a binary search); a
   key found is marked as seen more than once. */
int		 pf_keylog_has(pf_keylog *l, uint64_t key);
/* Sort and make unique: the distinct keys taken, ascending, into *keys
   (valid until the next call on l), bit 0 set on those taken more than
   once, and their number returned. */
size_t		 pf_keylog_finish(pf_keylog *l, const uint64_t **keys);

/* Sort keys[0..n) ascending, in place: spread by the top byte into 256
   buckets, then each sorted by its bits 16 to 55 (LSD radix in digits of
   10 bits, passes where every key has the same digit skipped) and its
   runs of keys equal above bit 16 by their low bits, with a scratch
   buffer of the largest bucket's size (qsort when that cannot be had).
   Fastest on hashes above bit 16; any keys come out sorted. */
void		 pf_sort_u64(uint64_t *keys, size_t n);

/* ---- HyperLogLog -------------------------------------------------------- */

typedef struct pf_hll pf_hll;

#define PF_HLL_PRECISION	14	/* 2^14 one-byte registers: 16 KB */

/*
 * A sketch of 2^precision registers (4 to 18).  Its relative standard
 * error is about 1.04 / sqrt(2^precision): 0.81 % at 14.  NULL when out
 * of memory or the precision is out of range.
 */
pf_hll		*pf_hll_new(int precision);
void		 pf_hll_free(pf_hll *h);
void		 pf_hll_add(pf_hll *h, uint64_t key);
/* The estimated number of distinct keys added (Ertl's improved raw
   estimator, "New cardinality estimation algorithms for HyperLogLog
   sketches", 2017: no bias table, good from 0 to far beyond 2^40). */
double		 pf_hll_estimate(const pf_hll *h);
/* The bytes of a sketch's registers. */
size_t		 pf_hll_bytes(int precision);

#endif
