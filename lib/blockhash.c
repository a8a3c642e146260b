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
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>

/*
 * Debian's libxxhash (0.8.1) returns from its AVX2 and AVX-512 code with
 * the upper halves of the vector registers still set: no VZEROUPPER.
 * Until something clears them, every SSE instruction that follows (GCC's
 * copy of a struct, a double's arithmetic) is slowed on Intel CPUs, in
 * every tool: pgn2pos, which checksums a block each 350 records or so,
 * ran 8 to 10 % slower.  So they are cleared here, where the CPU has AVX
 * (the only CPUs the dispatcher takes those paths on; VZEROUPPER is an AVX
 * instruction).  __builtin_cpu_supports is a load and a test: once a
 * block.
 */
__attribute__((target("avx"))) static void
zero_upper(void)
{
	_mm256_zeroupper();
}

static uint64_t
xxh3_fast(const void *p, size_t n)
{
	uint64_t h = XXH3_64bits_dispatch(p, n);

	if (__builtin_cpu_supports("avx"))
		zero_upper();
	return h;
}
#else
#define xxh3_fast(p, n)	XXH3_64bits((p), (n))
#endif

#include "record.h"

uint64_t
pf_block_checksum(unsigned flags, const void *p, size_t n)
{
	if (flags & PF_SF_XXH3)
		return xxh3_fast(p, n);
	return XXH64(p, n, 0);
}
