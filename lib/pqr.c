/*
 * pqr.c - the random R moves of P/Q/R triples (pqr.h).
 */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "pqr.h"
#include "record.h"

/* The k-th number of the stream of (seed, game, ply). */
static uint64_t
draw64(uint64_t seed, uint64_t game_id, uint16_t ply, int k)
{
	uint8_t in[20];

	pf_put64(in, seed);
	pf_put64(in + 8, game_id);
	pf_put16(in + 16, ply);
	pf_put16(in + 18, (uint16_t)k);
	return XXH64(in, sizeof(in), 0x5152u);
}

int
pf_pqr_draw(const pf_move *moves, int nm, pf_move played, uint64_t seed,
    uint64_t game_id, uint16_t ply, int n, pf_move *out)
{
	pf_move alt[PF_MAX_MOVES];
	int na = 0, found = 0, k;

	for (k = 0; k < nm; k++) {
		if (moves[k] == played)
			found = 1;
		else
			alt[na++] = moves[k];
	}
	if (!found)
		return 0;
	if (n > na)
		n = na;
	/* A partial Fisher-Yates shuffle: the first n of a uniformly random
	   order of the other moves, in the generator's move order, which is
	   fixed for a position. */
	for (k = 0; k < n; k++) {
		int j = k + (int)(draw64(seed, game_id, ply, k) %
		    (uint64_t)(na - k));
		pf_move t = alt[k];

		alt[k] = alt[j];
		alt[j] = t;
		out[k] = alt[k];
	}
	return n;
}
