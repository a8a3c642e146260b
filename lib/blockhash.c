/*
 * blockhash.c - the block checksum of posflow(5): XXH3-64 (seed 0) in a
 * stream whose header has PF_SF_XXH3, else XXH64 (seed 0).
 *
 * Calls libxxhash rather than inlining xxHash (XXH_INLINE_ALL, as other
 * files do): on x86-64 the library's dispatcher picks SSE2, AVX2 or
 * AVX-512 for XXH3 at run time (on the machine it was measured on, 31 GB/s
 * against XXH64's 8), which inlined code built for the baseline CPU
 * cannot do.
 */
#include <stddef.h>
#include <stdint.h>

#include <xxhash.h>
#if defined(__x86_64__) || defined(__i386__)
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
#define XXH3_FAST(p, n)	XXH3_64bits_dispatch((p), (n))
#else
#define XXH3_FAST(p, n)	XXH3_64bits((p), (n))
#endif

#include "record.h"

uint64_t
pf_block_checksum(unsigned flags, const void *p, size_t n)
{
	if (flags & PF_SF_XXH3)
		return XXH3_FAST(p, n);
	return XXH64(p, n, 0);
}
