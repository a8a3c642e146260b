/*
 * repair.h - Panda's backtracking repair (METHODS.md section 5, seed 000):
 * the class of A in a triple (A, B, C) of one game, and the reproducible
 * draw of its maybe case.  repair-mark(1) is the tool.  Pure computation.
 */
#ifndef PF_REPAIR_H
#define PF_REPAIR_H

#include <stdint.h>

/*
 * The class of A (PF_REPAIR_NONE, _DEFINITE, _MAYBE_YES or _MAYBE_NO,
 * ext.h) from the values of A, B and C, each from its own side to move's
 * point of view: definitely mis-evaluated when vC <= -vB <= vA; maybe when
 * -vB <= vC < vA, and then mis-evaluated when u = -vB + u01 * (vA + vB),
 * uniform in [-vB, vA] for u01 uniform in [0, 1), is above vC (with
 * probability (vA - vC) / (vA + vB)); otherwise left alone.
 */
int	pf_panda_class(double va, double vb, double vc, double u01);

/* u01 for the position at ply of game_id: from the seed, the game id and
   the ply only, so that chunking and -j never change it.  In [0, 1). */
double	pf_panda_draw(uint64_t seed, uint64_t game_id, uint16_t ply);

#endif
