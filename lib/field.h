/*
 * field.h - the named fields of a record and expressions over them: the
 * language of posfilter(1), also taken by posstat --by.
 *
 *   ply >= 16 && !check && !capture && abs(eval) < 3000
 *   eval[depth:12] - eval[depth:1] > 150 || elo >= 2400
 *
 * Values are numbers (double).  A field the record does not carry (no
 * evaluation, no Elo tag, an unknown result) is "missing"; arithmetic on a
 * missing value is missing, a comparison with one is false (!= too), and
 * a missing value is false where a truth value is wanted.  known(x) is 1
 * when x is not missing.  Truth values are 1 and 0.  The fields, their
 * units and their constants are listed in posfilter(1); pf_field_name()
 * gives the names to a program.
 *
 * Grammar (lowest precedence first):
 *   expr   = or
 *   or     = and { "||" and }
 *   and    = cmp { "&&" cmp }
 *   cmp    = sum [ ("<" | "<=" | ">" | ">=" | "==" | "!=") sum ]
 *   sum    = prod { ("+" | "-") prod }
 *   prod   = unary { ("*" | "/" | "%") unary }
 *   unary  = ("!" | "-") unary | prim
 *   prim   = number | name [ "[" selector "]" ] | name "(" args ")"
 *          | "(" expr ")"
 * A selector is evalsel.h's (deepest, depth:12, nodes:1, pgn, ...).
 *
 * Nothing here prints or exits; compile errors carry the column.
 */
#ifndef PF_FIELD_H
#define PF_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

typedef struct pf_expr pf_expr;

/*
 * Compile an expression.  NULL on error, with the reason in err
 * (NUL-terminated, cut to errlen) and the 1-based column of the mistake
 * in *col (the end of the text plus one for an unexpected end; 0 when out
 * of memory).
 */
pf_expr	*pf_expr_compile(const char *text, int *col, char *err,
	    size_t errlen);
void	 pf_expr_free(pf_expr *e);

/*
 * The value of e for rec (NAN when missing).  0, or -1 when a part of the
 * record the expression needs is damaged (a position that does not unpack,
 * a malformed extension area or extension), with the reason in err; the
 * value is then computed with the damaged part missing.  The expression
 * keeps scratch state: one pf_expr is used by one thread at a time.
 */
int	 pf_expr_eval(pf_expr *e, const pf_record *rec, double *val,
	    char *err, size_t errlen);

/* Does the value count as true (known and not 0)? */
static inline int pf_expr_true(double v) { return v == v && v != 0; }

/*
 * v as text, in the words of the expression when it is a bare field with
 * named values (termination "time", side "black", outcome "win"),
 * "missing" for a missing value, else %g; returns buf.
 */
const char *pf_expr_label(const pf_expr *e, double v, char *buf,
	    size_t len);

/* Is the expression the field game alone?  Its value, a double, is exact
   below 2^53 only: a caller that groups by it uses the record's id. */
int	 pf_expr_is_game(const pf_expr *e);

/* The name of field i (0, 1, ...), NULL past the last: for help texts
   and tests. */
const char *pf_field_name(int i);

/*
 * A uniform draw in [0, 1) for a record, reproducible: a hash of seed,
 * game id, ply and the rule asking (so that rules draw independently).
 */
double	 pf_rec_uniform(uint64_t seed, uint64_t game_id, uint16_t ply,
	    uint32_t rule);

/*
 * The probability of the game's result given the evaluation, under the
 * win-rate model nnue-pytorch's loader uses for its wld_filtered skip
 * (Stockfish's fishtest polynomial fit, its b widened by 1.5): cp in
 * centipawns from the side to move's view (clamped to +-2000), ply the
 * game ply (capped at 240), result_stm +1 win, 0 draw, -1 loss for the
 * side to move.  The model's W, D and L (fractions) into w, d, l when
 * not NULL.
 */
double	 pf_wdl_result_prob(double cp, int ply, int result_stm,
	    double *w, double *d, double *l);

#endif
