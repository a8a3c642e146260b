/*
 * target.h - policy and value training targets from engine scores, as
 * METHODS.md sections 1 and 2 define them (softtarget(1) is the tool).
 *
 * Everything here is pure computation: no I/O, no allocation on the
 * per-record path, nothing prints or exits.  Scores are centipawns from
 * the side to move's point of view; a mate score is first mapped to
 * centipawns with pf_score_cp() (ext.h): sign(n) * (PF_MATE_CP - 100 |n|),
 * and mate 0 (the side to move is checkmated) is -PF_MATE_CP.
 *
 * Scales: Q is a value in [-1, 1], S an expected score in [0, 1]
 * (1 win, 0.5 draw, 0 loss); S = (Q + 1) / 2.
 */
#ifndef PF_TARGET_H
#define PF_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "chess.h"
#include "ext.h"

/* Quanta of a stored policy: the probabilities sum to exactly this. */
#define PF_POLICY_QUANTA	65535

/* Defaults (METHODS.md; the wdl and winprob ones are documented in
   softtarget(1)). */
#define PF_ZEMAN_DROP		0.25
#define PF_ZEMAN_POWER		4.0
#define PF_SOFTMAX_T		100.0	/* centipawns */
#define PF_WINPROB_T		0.05	/* expected-score units */
#define PF_TANH_SPREAD		0.2	/* per pawn */
#define PF_LOGISTIC_ALPHA	170.0	/* centipawns */
#define PF_WDL_A		0.0	/* centipawns */
#define PF_WDL_B		(1.0 / 0.00368208)	/* ~271.59 cp */

/* ---- policy ----------------------------------------------------------- */

typedef struct pf_policy_params {
	int method;		/* PF_POLICY_ZEMAN, _SOFTMAX or _WINPROB */
	double drop;		/* zeman: fraction of moves dropped, [0, 1) */
	double power;		/* zeman: exponent, > 0 */
	double temperature;	/* softmax: cp; winprob: S units; > 0 */
	double wdl_a, wdl_b;	/* winprob: S = 1 / (1 + e^-((cp - a) / b)) */
} pf_policy_params;

/* Fill p with the defaults of method. */
void	pf_policy_params_default(pf_policy_params *p, int method);

/*
 * Probabilities of n moves with scores cp[0..n-1] (centipawns, mover's
 * view, mates already mapped) into prob[0..n-1], summing to 1 (up to
 * rounding).  Ties between equal scores are broken by index: a lower index
 * counts as the better move (the engine lists its best move first).
 *
 *   zeman:   order by score (ties by index); drop the last
 *            floor(drop * n) moves (never the first); min-max scale the
 *            kept scores to [0, 1] (all equal: all 1); raise to power;
 *            normalise.  All zero after the power: equal shares among kept.
 *   softmax: prob ~ e^((cp - max cp) / T).
 *   winprob: prob ~ e^((S - max S) / T), S = pf_value_wdl(cp, a, b).
 *
 * n may be 0 (nothing is written).  n <= PF_MAX_MOVES.  0, or -1 when a
 * parameter is out of range (NaN, temperature <= 0, ...).
 */
int	pf_policy_probs(const pf_policy_params *p, const int32_t *cp, int n,
	    double *prob);

/*
 * Quantise prob[0..n-1] (non-negative, sum 1 up to rounding) into q[]
 * summing to exactly PF_POLICY_QUANTA with the largest-remainder method:
 * q_i = floor(prob_i * 65535), then the missing quanta go one each to the
 * largest remainders (remainders compared to 2^-32; ties: lower index
 * first).  A probability of exactly 0 always gets 0 quanta.  0, or -1 when n < 1, a value is negative or
 * not finite, or every value is 0.
 */
int	pf_policy_quantize(const double *prob, int n, uint16_t *q);

/*
 * A policy builder: matches a per-move score table against the legal moves
 * of a position and produces the stored policy.  It holds scratch tables so
 * that the per-record path never allocates.
 */
typedef struct pf_target pf_target;

/* NULL on allocation failure.  params is copied. */
pf_target *pf_target_new(const pf_policy_params *params);
void	pf_target_free(pf_target *t);

/*
 * Build out (method, params, n = every legal move of b, probabilities in
 * quanta summing to 65535) from the table s.  Moves of the table come first
 * in decreasing probability (ties in table order), then the legal moves
 * the table lacks, with probability 0, in generation order.  A table move
 * that is not legal in b, or listed twice, is an error.  A position without
 * legal moves gives out->n = 0.  A table with no moves for a position that
 * has some is an error.  0, or -1 with the reason in pf_target_error().
 */
int	pf_target_policy(pf_target *t, const pf_board *b,
	    const pf_movescores *s, pf_policy *out);
/*
 * The same as pf_target_policy(), reading the table straight from the
 * payload of a PF_EXT_MOVESCORES extension (data[0..len), ext.h layout)
 * instead of a decoded pf_movescores: the per-record path of softtarget.
 * A payload pf_movescores_decode() would refuse gives -1 with the reason
 * "per-move scores: malformed extension".
 */
int	pf_target_policy_ext(pf_target *t, const pf_board *b,
	    const uint8_t *data, uint32_t len, pf_policy *out);
/*
 * The same again, writing the PF_EXT_POLICY payload (ext.h layout, the
 * bytes pf_policy_encode() writes) straight into dst, which has room for
 * PF_POLICY_PAYLOAD_MAX bytes: the per-record path of softtarget.
 * Returns the payload's length, 0 when the position has no legal moves
 * (no policy to store), or -1 with the reason in pf_target_error(); dst
 * holds nothing of use after 0 or -1.  A complete zeman table in score
 * order (what uci-eval --multipv all writes) takes a path that generates
 * no moves.
 */
int	pf_target_policy_payload(pf_target *t, const pf_board *b,
	    const uint8_t *data, uint32_t len, uint8_t *dst);
#define PF_POLICY_FIXED		12
#define PF_POLICY_PAYLOAD_MAX	(PF_POLICY_FIXED + 4 * PF_MAX_MOVES)
/* PF_EXT_MOVESCORES layout (ext.h): fixed part, then n entries. */
#define PF_MOVESCORES_FIXED	14
#define PF_MOVESCORE_SIZE	8

/*
 * Depth averaging (softtarget --policy-depths): the policy of one
 * position from several complete tables (say the per-depth tables of one
 * search, uci-eval --keep-depths), each turned into probabilities as
 * pf_target_policy() does, averaged move by move with equal weights, and
 * stored as pf_target_policy_payload() stores one table's.
 *
 * pf_target_mix_begin() starts a position and returns its number of
 * legal moves.  pf_target_mix_add() adds one table (a PF_EXT_MOVESCORES
 * payload, ext.h layout): 1 added; 0 when it lacks some legal move (an
 * incomplete table is not averaged: nothing is added); -1 when it is
 * malformed or lists a move that is not legal, a move twice, or an
 * unknown score kind (the reason in pf_target_error(), as for
 * pf_target_policy()).  pf_target_mix_payload() writes the PF_EXT_POLICY
 * payload of the average into dst (room for PF_POLICY_PAYLOAD_MAX bytes):
 * every legal move, in decreasing average probability (ties in the order
 * of the last table added), quantised by the largest-remainder method of
 * pf_policy_quantize().  It returns the payload's length, 0 when the
 * position has no legal moves, or -1 when no table was added.  With one
 * table added the payload is the one pf_target_policy_payload() writes
 * for that table.
 */
int	pf_target_mix_begin(pf_target *t, const pf_board *b);
int	pf_target_mix_add(pf_target *t, const uint8_t *data, uint32_t len);
int	pf_target_mix_payload(pf_target *t, uint8_t *dst);

/* The reason of the last -1; valid until the next call on t. */
const char *pf_target_error(const pf_target *t);

/* ---- value ------------------------------------------------------------ */

/* Q = tanh(s * cp / 200) = (1 - e^(-s p)) / (1 + e^(-s p)), p = cp / 100. */
double	pf_value_tanh(double cp, double spread);
/* Q = 2 / (1 + e^(-cp / alpha)) - 1. */
double	pf_value_logistic(double cp, double alpha);
/* S = 1 / (1 + e^(-(cp - a) / b)). */
double	pf_value_wdl(double cp, double a, double b);
/* S = (W + D / 2) / 1000 from the engine's per mille W/D/L. */
double	pf_value_wdl_engine(unsigned w, unsigned d, unsigned l);

/*
 * The game result from the side to move's view: 1 win, 0.5 draw, 0 loss,
 * or -1 when unknown.  result is PF_RESULT_* (white's view), stm
 * PF_WHITE or PF_BLACK.
 */
double	pf_result_stm(uint8_t result, int stm);

/*
 * Blend a value with the game result r in [0, 1] (side to move's view):
 * scale 1 (S): lambda * v + (1 - lambda) * r; scale 0 (Q): the same with
 * both on the Q scale, lambda * v + (1 - lambda) * (2r - 1), which is
 * 2 * (lambda * S + (1 - lambda) * r) - 1 with S = (v + 1) / 2.
 */
double	pf_value_blend(double v, int scale, double r, double lambda);

/*
 * Linear reward (seed 004, 6.4): in a game of plies plies won by one side,
 * the position at ply k gets +k/plies when its side to move won, -k/plies
 * when it lost, and 0 throughout a draw.  r is pf_result_stm() (1, 0.5, 0);
 * plies 0 gives 0.
 */
double	pf_value_linear(int k, int plies, double r);

#endif
