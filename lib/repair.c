/*
 * repair.c - Panda's classification and its draw (repair.h).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ext.h"
#include "record.h"
#include "repair.h"

int
pf_panda_class(double va, double vb, double vc, double u01)
{
	double lo = -vb, u;

	if (vc <= lo && lo <= va)
		return PF_REPAIR_DEFINITE;
	if (lo <= vc && vc < va) {
		u = lo + u01 * (va - lo);
		return u > vc ? PF_REPAIR_MAYBE_YES : PF_REPAIR_MAYBE_NO;
	}
	return PF_REPAIR_NONE;
}

double
pf_panda_draw(uint64_t seed, uint64_t game_id, uint16_t ply)
{
	uint8_t in[18];

	pf_put64(in, seed);
	pf_put64(in + 8, game_id);
	pf_put16(in + 16, ply);
	return (double)(XXH64(in, sizeof(in), 0x9e3779b97f4a7c15ULL) >> 11) *
	    0x1p-53;
}
