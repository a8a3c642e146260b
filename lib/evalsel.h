/*
 * evalsel.h - which of a record's evaluations (PF_EXT_EVAL) and final
 * per-move tables (PF_EXT_MOVESCORES) a tool uses, by a selector as the
 * tools name it on their command line (softtarget --eval, complexity and
 * repair-mark --shallow / --deep):
 *
 *   deepest       the engine evaluation of greatest depth, a later one on
 *                 equal depth; a terminal-position evaluation (source
 *                 PF_SRC_TERMINAL) and an imported one (PF_SRC_IMPORT,
 *                 posimport; depth 0 when the format has none) count as
 *                 engine ones
 *   first, last   the first or the last evaluation of any source
 *   pgn           the evaluation from a PGN comment (the last one)
 *   depth:N, nodes:N, movetime:N
 *                 the engine evaluation searched with that limit (the
 *                 last one when several match), or a terminal-position
 *                 evaluation
 *   shallowest    (not parsed; a tool's default) the engine or terminal
 *                 evaluation of least depth, an earlier one on equal depth
 *
 * The same selector picks a final per-move table (intermediate ones,
 * PF_MSF_INTERMEDIATE, never): deepest and pgn the deepest (a later one
 * on equal depth), shallowest the shallowest (an earlier one), first and
 * last by position, and a limit the last table searched with that limit.
 * pf_evalsel_table_of() instead finds the table of a chosen evaluation.
 *
 * Pure functions: nothing allocates, prints or exits.
 */
#ifndef PF_EVALSEL_H
#define PF_EVALSEL_H

#include <stddef.h>
#include <stdint.h>

#include "ext.h"
#include "record.h"

enum {
	PF_EVALSEL_DEEPEST = 0,
	PF_EVALSEL_FIRST,
	PF_EVALSEL_LAST,
	PF_EVALSEL_PGN,
	PF_EVALSEL_DEPTH,
	PF_EVALSEL_NODES,
	PF_EVALSEL_MOVETIME,
	PF_EVALSEL_SHALLOWEST
};

typedef struct pf_evalsel {
	int kind;		/* PF_EVALSEL_* */
	uint64_t limit;		/* _DEPTH, _NODES, _MOVETIME: the limit */
} pf_evalsel;

/* A selector's longest name ("movetime:" and 20 digits, NUL). */
#define PF_EVALSEL_NAME_MAX	32

/*
 * Parse a selector as a user writes it.  0, or -1 with the reason in err
 * (NUL-terminated, cut to errlen): "unknown selector (deepest, first,
 * last, pgn, depth:N, nodes:N, movetime:N)", or "limit: " and the reason
 * pf_strtonum gives for depth:x, depth:-3 and the like.  A tool prints it
 * after the option and the argument ("--eval: depth:x: limit: not a whole
 * number").
 */
int	pf_evalsel_parse(const char *s, pf_evalsel *sel, char *err,
	    size_t errlen);

/* The selector as text ("deepest", "depth:12", "shallowest") into buf
   (PF_EVALSEL_NAME_MAX bytes are enough); returns buf. */
char	*pf_evalsel_name(const pf_evalsel *sel, char *buf, size_t len);

/* The limit kind (PF_LIMIT_*) of a limit selector, else PF_LIMIT_NONE. */
int	pf_evalsel_limit_kind(const pf_evalsel *sel);

/* May evaluation v be chosen under sel (its source and limit)? */
int	pf_evalsel_matches(const pf_evalsel *sel, const pf_eval *v);

/*
 * Choosing in one pass over a record's extensions, as a tool that also
 * does other work per extension needs: zero a pick, offer it each
 * candidate in record order, and the pick ends up with the one the
 * selector chooses.  pick->x points into the record (valid as long as the
 * record's extension area).
 */
typedef struct pf_evalsel_pick {
	int found;
	uint16_t depth;		/* of the one chosen so far */
	pf_ext x;		/* the chosen extension */
} pf_evalsel_pick;

/* Offer evaluation x, whose head (pf_eval_decode_head) is v: 1 when it
   becomes the pick, else 0. */
int	pf_evalsel_offer_eval(const pf_evalsel *sel, pf_evalsel_pick *pick,
	    const pf_ext *x, const pf_eval *v);
/* Offer per-move table x (PF_EXT_MOVESCORES): 1 when it becomes the pick,
   0 when not (an intermediate table never does), -1 when x is shorter
   than the table's fixed part (PF_MOVESCORES_FIXED, 14 bytes). */
int	pf_evalsel_offer_table(const pf_evalsel *sel, pf_evalsel_pick *pick,
	    const pf_ext *x);

/*
 * The evaluation sel chooses in rec, decoded whole into *out (PV and
 * engine name too).  1 found, 0 none matches, -1 when an evaluation or
 * the extension area is malformed (*out is then undefined).
 * pf_evalsel_find_ext() also gives the extension (x may be NULL), so that
 * a tool can tell two selectors that chose the same one (x->data equal).
 */
int	pf_evalsel_find(const pf_evalsel *sel, const pf_record *rec,
	    pf_eval *out);
int	pf_evalsel_find_ext(const pf_evalsel *sel, const pf_record *rec,
	    pf_eval *out, pf_ext *x);

/* The final per-move table sel chooses in rec (see above): 1 found, 0
   none, -1 when a table is shorter than its fixed part or the extension
   area is malformed. */
int	pf_evalsel_find_table(const pf_evalsel *sel, const pf_record *rec,
	    pf_ext *out);

/*
 * The final per-move table of evaluation v: the one searched with the
 * same limit (kind and value), the last one when several are.  uci-eval
 * writes it right after its evaluation.  An evaluation that is not an
 * engine's (a PGN comment, a terminal position) has none.  1 found, 0
 * none, -1 as pf_evalsel_find_table().  The table is not decoded: its
 * fixed part is there, its entries still to be checked
 * (pf_movescores_decode).
 */
int	pf_evalsel_table_of(const pf_record *rec, const pf_eval *v,
	    pf_ext *out);

#endif
