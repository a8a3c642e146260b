/*
 * evalsel.c - choosing an evaluation and a per-move table by a selector
 * (see evalsel.h).  One pass over the extensions, nothing decoded beyond
 * the fields a choice needs.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "evalsel.h"
#include "prog.h"
#include "target.h"

static const struct {
	const char *name;
	int kind;
} names[] = {
	{ "deepest", PF_EVALSEL_DEEPEST }, { "first", PF_EVALSEL_FIRST },
	{ "last", PF_EVALSEL_LAST }, { "pgn", PF_EVALSEL_PGN },
	{ "shallowest", PF_EVALSEL_SHALLOWEST }
};

static const struct {
	const char *prefix;
	int kind;
} limits[] = {
	{ "depth:", PF_EVALSEL_DEPTH }, { "nodes:", PF_EVALSEL_NODES },
	{ "movetime:", PF_EVALSEL_MOVETIME }
};

int
pf_evalsel_parse(const char *s, pf_evalsel *sel, char *err, size_t errlen)
{
	const char *errstr;
	size_t i, len;
	long long v;

	/* "shallowest" (the last name) is a tool's default, not a word a
	   user writes: the selectors users write are softtarget's. */
	for (i = 0; i + 1 < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			sel->kind = names[i].kind;
			sel->limit = 0;
			return 0;
		}
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		len = strlen(limits[i].prefix);
		if (strncmp(s, limits[i].prefix, len) != 0)
			continue;
		v = pf_strtonum(s + len, 1, LLONG_MAX, &errstr);
		if (errstr != NULL) {
			snprintf(err, errlen, "limit: %s", errstr);
			return -1;
		}
		sel->kind = limits[i].kind;
		sel->limit = (uint64_t)v;
		return 0;
	}
	snprintf(err, errlen, "unknown selector (deepest, first, last, pgn, "
	    "depth:N, nodes:N, movetime:N)");
	return -1;
}

char *
pf_evalsel_name(const pf_evalsel *sel, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (sel->kind == names[i].kind) {
			snprintf(buf, len, "%s", names[i].name);
			return buf;
		}
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (sel->kind == limits[i].kind) {
			snprintf(buf, len, "%s%" PRIu64, limits[i].prefix,
			    sel->limit);
			return buf;
		}
	snprintf(buf, len, "?");
	return buf;
}

int
pf_evalsel_limit_kind(const pf_evalsel *sel)
{
	switch (sel->kind) {
	case PF_EVALSEL_DEPTH:
		return PF_LIMIT_DEPTH;
	case PF_EVALSEL_NODES:
		return PF_LIMIT_NODES;
	case PF_EVALSEL_MOVETIME:
		return PF_LIMIT_MOVETIME;
	default:
		return PF_LIMIT_NONE;
	}
}

int
pf_evalsel_matches(const pf_evalsel *sel, const pf_eval *v)
{
	switch (sel->kind) {
	case PF_EVALSEL_DEEPEST:
	case PF_EVALSEL_SHALLOWEST:
		return v->source == PF_SRC_ENGINE ||
		    v->source == PF_SRC_TERMINAL ||
		    v->source == PF_SRC_IMPORT;
	case PF_EVALSEL_FIRST:
	case PF_EVALSEL_LAST:
		return 1;
	case PF_EVALSEL_PGN:
		return v->source == PF_SRC_PGN;
	default:
		if (v->source == PF_SRC_TERMINAL)
			return 1;
		return v->source == PF_SRC_ENGINE &&
		    v->limit_kind == pf_evalsel_limit_kind(sel) &&
		    v->limit == sel->limit;
	}
}

/*
 * Does a candidate of this depth, met after the pick, replace it?  The
 * first pick is always taken; then first keeps it, deepest takes a depth
 * at least as great, shallowest only a smaller one, and every other
 * selector the later one.
 */
static int
replaces(const pf_evalsel *sel, const pf_evalsel_pick *pick, uint16_t depth)
{
	if (!pick->found)
		return 1;
	switch (sel->kind) {
	case PF_EVALSEL_FIRST:
		return 0;
	case PF_EVALSEL_DEEPEST:
		return depth >= pick->depth;
	case PF_EVALSEL_SHALLOWEST:
		return depth < pick->depth;
	default:
		return 1;
	}
}

static void
take(pf_evalsel_pick *pick, const pf_ext *x, uint16_t depth)
{
	pick->found = 1;
	pick->depth = depth;
	pick->x = *x;
}

int
pf_evalsel_offer_eval(const pf_evalsel *sel, pf_evalsel_pick *pick,
    const pf_ext *x, const pf_eval *v)
{
	if (!pf_evalsel_matches(sel, v) || !replaces(sel, pick, v->depth))
		return 0;
	take(pick, x, v->depth);
	return 1;
}

int
pf_evalsel_offer_table(const pf_evalsel *sel, pf_evalsel_pick *pick,
    const pf_ext *x)
{
	uint16_t depth;

	if (x->len < PF_MOVESCORES_FIXED)
		return -1;
	if (x->data[1] & PF_MSF_INTERMEDIATE)
		return 0;
	depth = pf_get16(x->data + 2);
	switch (sel->kind) {
	case PF_EVALSEL_DEPTH:
	case PF_EVALSEL_NODES:
	case PF_EVALSEL_MOVETIME:
		if (x->data[0] != pf_evalsel_limit_kind(sel) ||
		    pf_get64(x->data + 4) != sel->limit)
			return 0;
		break;
	case PF_EVALSEL_PGN:
		/* Tables are an engine's: the deepest, as deepest. */
		if (pick->found && depth < pick->depth)
			return 0;
		break;
	default:
		if (!replaces(sel, pick, depth))
			return 0;
		break;
	}
	take(pick, x, depth);
	return 1;
}

int
pf_evalsel_find_ext(const pf_evalsel *sel, const pf_record *rec,
    pf_eval *out, pf_ext *xout)
{
	pf_evalsel_pick pick = { 0 };
	pf_ext_iter it;
	pf_ext x;
	int rv;

	pf_ext_iter_init(&it, rec);
	while ((rv = pf_ext_next(&it, &x)) == 1) {
		if (x.type != PF_EXT_EVAL)
			continue;
		if (pf_eval_decode_head(&x, out) == -1)
			return -1;
		pf_evalsel_offer_eval(sel, &pick, &x, out);
	}
	if (rv < 0)
		return -1;
	if (!pick.found)
		return 0;
	if (xout != NULL)
		*xout = pick.x;
	return pf_eval_decode(&pick.x, out) == 0 ? 1 : -1;
}

int
pf_evalsel_find(const pf_evalsel *sel, const pf_record *rec, pf_eval *out)
{
	return pf_evalsel_find_ext(sel, rec, out, NULL);
}

int
pf_evalsel_find_table(const pf_evalsel *sel, const pf_record *rec,
    pf_ext *out)
{
	pf_evalsel_pick pick = { 0 };
	pf_ext_iter it;
	pf_ext x;
	int rv;

	pf_ext_iter_init(&it, rec);
	while ((rv = pf_ext_next(&it, &x)) == 1)
		if (x.type == PF_EXT_MOVESCORES &&
		    pf_evalsel_offer_table(sel, &pick, &x) == -1)
			return -1;
	if (rv < 0)
		return -1;
	if (pick.found)
		*out = pick.x;
	return pick.found;
}

int
pf_evalsel_table_of(const pf_record *rec, const pf_eval *v, pf_ext *out)
{
	pf_evalsel sel;

	if (v->source != PF_SRC_ENGINE)
		return 0;
	switch (v->limit_kind) {
	case PF_LIMIT_DEPTH:
		sel.kind = PF_EVALSEL_DEPTH;
		break;
	case PF_LIMIT_NODES:
		sel.kind = PF_EVALSEL_NODES;
		break;
	case PF_LIMIT_MOVETIME:
		sel.kind = PF_EVALSEL_MOVETIME;
		break;
	default:
		return 0;
	}
	sel.limit = v->limit;
	return pf_evalsel_find_table(&sel, rec, out);
}
