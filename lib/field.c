/*
 * field.c - record fields and expressions over them (field.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "chess.h"
#include "evalsel.h"
#include "ext.h"
#include "field.h"
#include "prog.h"

enum {
	F_PLY, F_MOVE, F_HALFMOVE, F_SIDE, F_RESULT, F_OUTCOME, F_CHECK,
	F_CHECKMATE, F_STALEMATE, F_LAST, F_CHESS960, F_TRUNCATED, F_GAME,
	F_PLAYED, F_CAPTURE, F_PROMOTION, F_CASTLING, F_PIECES, F_MATERIAL,
	F_IMBALANCE, F_LEGAL, F_WHITE_ELO, F_BLACK_ELO, F_ELO, F_OPP_ELO,
	F_AVG_ELO, F_BASE, F_INC, F_TERMINATION, F_EVAL, F_MATE, F_DEPTH,
	F_W, F_D, F_L, F_BEST_CAPTURE, F_BEST_PLAYED, F_COMPLEXITY, F_REPAIR,
	F_TWINS, F_VALUE
};

/* Named values a field's labels use. */
enum { L_NONE, L_SIDE, L_RESULT, L_OUTCOME, L_TERM };

static const struct fdef {
	const char *name;
	int id;
	int sel;	/* takes [selector] */
	int labels;
} fields[] = {
	{ "ply", F_PLY, 0, L_NONE },
	{ "move", F_MOVE, 0, L_NONE },
	{ "halfmove", F_HALFMOVE, 0, L_NONE },
	{ "side", F_SIDE, 0, L_SIDE },
	{ "result", F_RESULT, 0, L_RESULT },
	{ "outcome", F_OUTCOME, 0, L_OUTCOME },
	{ "check", F_CHECK, 0, L_NONE },
	{ "checkmate", F_CHECKMATE, 0, L_NONE },
	{ "stalemate", F_STALEMATE, 0, L_NONE },
	{ "last", F_LAST, 0, L_NONE },
	{ "chess960", F_CHESS960, 0, L_NONE },
	{ "truncated", F_TRUNCATED, 0, L_NONE },
	{ "game", F_GAME, 0, L_NONE },
	{ "played", F_PLAYED, 0, L_NONE },
	{ "capture", F_CAPTURE, 0, L_NONE },
	{ "promotion", F_PROMOTION, 0, L_NONE },
	{ "castling", F_CASTLING, 0, L_NONE },
	{ "pieces", F_PIECES, 0, L_NONE },
	{ "material", F_MATERIAL, 0, L_NONE },
	{ "imbalance", F_IMBALANCE, 0, L_NONE },
	{ "legal", F_LEGAL, 0, L_NONE },
	{ "white_elo", F_WHITE_ELO, 0, L_NONE },
	{ "black_elo", F_BLACK_ELO, 0, L_NONE },
	{ "elo", F_ELO, 0, L_NONE },
	{ "opp_elo", F_OPP_ELO, 0, L_NONE },
	{ "avg_elo", F_AVG_ELO, 0, L_NONE },
	{ "base", F_BASE, 0, L_NONE },
	{ "inc", F_INC, 0, L_NONE },
	{ "termination", F_TERMINATION, 0, L_TERM },
	{ "eval", F_EVAL, 1, L_NONE },
	{ "mate", F_MATE, 1, L_NONE },
	{ "depth", F_DEPTH, 1, L_NONE },
	{ "w", F_W, 1, L_NONE },
	{ "d", F_D, 1, L_NONE },
	{ "l", F_L, 1, L_NONE },
	{ "best_capture", F_BEST_CAPTURE, 1, L_NONE },
	{ "best_played", F_BEST_PLAYED, 1, L_NONE },
	{ "complexity", F_COMPLEXITY, 0, L_NONE },
	{ "repair", F_REPAIR, 0, L_NONE },
	{ "twins", F_TWINS, 0, L_NONE },
	{ "value", F_VALUE, 0, L_NONE },
};
#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

static const struct cdef {
	const char *name;
	double v;
} consts[] = {
	{ "white", PF_WHITE }, { "black", PF_BLACK },
	{ "win", 1 }, { "draw", 0 }, { "loss", -1 },
	{ "unknown", PF_TERM_UNKNOWN }, { "normal", PF_TERM_NORMAL },
	{ "time", PF_TERM_TIME }, { "abandoned", PF_TERM_ABANDONED },
	{ "rules", PF_TERM_RULES }, { "unterminated", PF_TERM_UNTERMINATED },
	{ "other", PF_TERM_OTHER },
	{ "true", 1 }, { "false", 0 },
};
#define NCONSTS	(sizeof(consts) / sizeof(consts[0]))

static const char *const term_names[] = { "unknown", "normal", "time",
    "abandoned", "rules", "unterminated", "other" };

enum { N_NUM, N_FIELD, N_NOT, N_NEG, N_BIN, N_AND, N_OR, N_ABS, N_MIN,
    N_MAX, N_KNOWN, N_FCMP, N_GCMP };
/* N_FCMP: field (node a) op number; N_GCMP: game op an integer literal,
   compared as 64-bit integers (a game id past 2^53 is not a double) */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_LT, OP_LE, OP_GT, OP_GE,
    OP_EQ, OP_NE };

struct node {
	int kind, op, field;
	int id;			/* fields[field].id, looked up once */
	double num;
	int exact;		/* N_NUM: an integer literal, its value in u;
				   2: past every id (2^64 or more) */
	uint64_t u;
	pf_evalsel sel;
	int a, b;		/* children (node indices) */
};

/* What one record's evaluation has decoded so far. */
struct cache {
	int board;		/* 0 not tried, 1 ok, -1 damaged */
	pf_board b;
	int meta;		/* 0 not tried, 1 ok, 2 none, -1 damaged */
	pf_meta m;
	int legal;		/* -1 not counted */
};

struct pf_expr {
	struct node *n;
	int nn, cap, root;
	/* compiling */
	const char *text, *p;
	char *err;
	size_t errlen;
	int errcol;
	int depth;		/* nesting, bounded: the parser recurses */
	/* evaluating */
	const pf_record *rec;
	struct cache c;
	int damaged;
	char *eerr;
	size_t eerrlen;
};

const char *
pf_field_name(int i)
{
	return i >= 0 && i < (int)NFIELDS ? fields[i].name : NULL;
}

/* ---- compiling ---------------------------------------------------------- */

static int
fail(pf_expr *e, const char *at, const char *fmt, ...)
{
	va_list ap;

	if (e->errcol == 0) {
		e->errcol = (int)(at - e->text) + 1;
		va_start(ap, fmt);
		vsnprintf(e->err, e->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
new_node(pf_expr *e, int kind)
{
	struct node *n;

	if (e->nn == e->cap) {
		int cap = e->cap ? e->cap * 2 : 32;

		if ((n = realloc(e->n, (size_t)cap * sizeof(*n))) == NULL)
			return -1;
		e->n = n;
		e->cap = cap;
	}
	n = &e->n[e->nn];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->a = n->b = -1;
	return e->nn++;
}

static void
skip_space(pf_expr *e)
{
	while (*e->p == ' ' || *e->p == '\t' || *e->p == '\n' ||
	    *e->p == '\r')
		e->p++;
}

static int
accept(pf_expr *e, const char *tok)
{
	size_t n = strlen(tok);

	skip_space(e);
	if (strncmp(e->p, tok, n) != 0)
		return 0;
	/* "<" must not take the first half of "<=", "!" of "!=". */
	if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!' ||
	    tok[0] == '=') && e->p[1] == '=')
		return 0;
	e->p += n;
	return 1;
}

static int parse_or(pf_expr *e);

#define MAX_NESTING	200

static int
oom(pf_expr *e)
{
	if (e->errcol == 0) {
		snprintf(e->err, e->errlen, "out of memory");
		e->errcol = -1;		/* reported as column 0 */
	}
	return -1;
}

static int
binary(pf_expr *e, int kind, int op, int a, int b)
{
	int i;

	if ((i = new_node(e, kind)) == -1)
		return oom(e);
	/* "number op field" is "field op' number" */
	if (kind == N_BIN && op >= OP_LT && e->n[a].kind == N_NUM &&
	    e->n[b].kind == N_FIELD) {
		int t = a;

		a = b;
		b = t;
		op = op == OP_LT ? OP_GT : op == OP_GT ? OP_LT :
		    op == OP_LE ? OP_GE : op == OP_GE ? OP_LE : op;
	}
	e->n[i].op = op;
	e->n[i].a = a;
	e->n[i].b = b;
	/* The common "field < number": one node, one dispatch; the game id
	   against an integer in 64 bits (past 2^53 it is not a double). */
	if (kind == N_BIN && op >= OP_LT && e->n[a].kind == N_FIELD &&
	    e->n[b].kind == N_NUM) {
		e->n[i].kind = e->n[a].id == F_GAME && e->n[b].exact ?
		    N_GCMP : N_FCMP;
		e->n[i].num = e->n[b].num;
		e->n[i].u = e->n[b].u;
		e->n[i].exact = e->n[b].exact;
	}
	return i;
}

static int
is_name_char(int c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (!first && c >= '0' && c <= '9');
}

static int
parse_call(pf_expr *e, const char *name, size_t len, const char *at)
{
	static const struct { const char *name; int kind, argc; } fn[] = {
		{ "abs", N_ABS, 1 }, { "min", N_MIN, 2 }, { "max", N_MAX, 2 },
		{ "known", N_KNOWN, 1 },
	};
	int i, k, a, b = -1;

	for (k = 0; k < (int)(sizeof(fn) / sizeof(fn[0])); k++)
		if (strlen(fn[k].name) == len &&
		    strncmp(fn[k].name, name, len) == 0)
			break;
	if (k == (int)(sizeof(fn) / sizeof(fn[0])))
		return fail(e, at, "unknown function '%.*s' (abs, min, max, "
		    "known)", (int)len, name);
	if (e->depth >= MAX_NESTING)
		return fail(e, at, "expression nested too deeply");
	e->depth++;
	a = parse_or(e);
	if (a != -1 && fn[k].argc == 2) {
		if (!accept(e, ","))
			a = fail(e, e->p, "'%s' takes two arguments: "
			    "expected ','", fn[k].name);
		else
			b = parse_or(e);
	}
	e->depth--;
	if (a == -1 || (fn[k].argc == 2 && b == -1))
		return -1;
	if (!accept(e, ")"))
		return fail(e, e->p, *e->p != ',' ? "expected ')'" :
		    fn[k].argc == 1 ? "'%s' takes one argument" :
		    "'%s' takes two arguments", fn[k].name);
	if ((i = new_node(e, fn[k].kind)) == -1)
		return oom(e);
	e->n[i].a = a;
	e->n[i].b = b;
	return i;
}

static int
parse_prim(pf_expr *e)
{
	const char *at, *name;
	size_t len;
	char *end;
	int i;

	skip_space(e);
	at = e->p;
	if (*e->p == '\0')
		return fail(e, at, "unexpected end of expression");
	if (accept(e, "(")) {
		if (e->depth >= MAX_NESTING)
			return fail(e, at, "expression nested too deeply");
		e->depth++;
		i = parse_or(e);
		e->depth--;
		if (i == -1)
			return -1;
		if (!accept(e, ")"))
			return fail(e, e->p, "expected ')'");
		return i;
	}
	if ((*e->p >= '0' && *e->p <= '9') || *e->p == '.') {
		double v;
		size_t len, pre;
		int hex, integer;

		errno = 0;
		v = strtod(e->p, &end);
		len = (size_t)(end - e->p);
		/* decimal, or a hexadecimal integer (a game id as posdump
		   shows it); strtod would take a hex float ("0x1p-3") too */
		hex = e->p[0] == '0' && (e->p[1] | 0x20) == 'x';
		pre = hex ? 2 : 0;
		integer = len > pre && strspn(e->p + pre, hex ?
		    "0123456789abcdefABCDEF" : "0123456789") == len - pre;
		/* an integer too large for a double is still an integer:
		   infinite as a number, above every game id; a fraction
		   too small for one is 0 or subnormal, as pf_strtod takes
		   it (strtod's ERANGE) */
		if (len == 0 || is_name_char((unsigned char)*end, 1) ||
		    *end == '.' || (hex ? !integer :
		    strspn(e->p, PF_DECIMAL_CHARS) < len) ||
		    (!integer && !isfinite(v)))
			return fail(e, at, "bad number");
		if ((i = new_node(e, N_NUM)) == -1)
			return oom(e);
		e->n[i].num = v;
		if (integer) {	/* its exact value too, for the game id */
			errno = 0;
			e->n[i].u = strtoull(e->p + pre, NULL, hex ? 16 : 10);
			e->n[i].exact = errno == 0 ? 1 : 2;	/* 2: >= 2^64 */
		}
		e->p = end;
		return i;
	}
	if (!is_name_char((unsigned char)*e->p, 1))
		return fail(e, at, "expected a number, a field or '('");
	name = e->p;
	while (is_name_char((unsigned char)*e->p, 0))
		e->p++;
	len = (size_t)(e->p - name);
	if (accept(e, "("))
		return parse_call(e, name, len, at);
	for (size_t k = 0; k < NCONSTS; k++)
		if (strlen(consts[k].name) == len &&
		    strncmp(consts[k].name, name, len) == 0) {
			if ((i = new_node(e, N_NUM)) == -1)
				return oom(e);
			e->n[i].num = consts[k].v;
			return i;
		}
	for (size_t k = 0; k < NFIELDS; k++) {
		if (strlen(fields[k].name) != len ||
		    strncmp(fields[k].name, name, len) != 0)
			continue;
		if ((i = new_node(e, N_FIELD)) == -1)
			return oom(e);
		e->n[i].field = (int)k;
		e->n[i].id = fields[k].id;
		e->n[i].sel.kind = PF_EVALSEL_DEEPEST;
		skip_space(e);
		if (*e->p == '[') {
			char sel[64], err[160];
			const char *s = e->p + 1, *close;

			if (!fields[k].sel)
				return fail(e, e->p, "'%s' takes no selector",
				    fields[k].name);
			if ((close = strchr(s, ']')) == NULL)
				return fail(e, e->p, "expected ']'");
			while (*s == ' ')
				s++;
			len = (size_t)(close - s);
			while (len > 0 && s[len - 1] == ' ')
				len--;
			if (len >= sizeof(sel))
				return fail(e, s, "selector too long");
			memcpy(sel, s, len);
			sel[len] = '\0';
			if (pf_evalsel_parse(sel, &e->n[i].sel, err,
			    sizeof(err)) == -1)
				return fail(e, s, "%s: %s", sel, err);
			e->p = close + 1;
		}
		return i;
	}
	return fail(e, at, "unknown field '%.*s'", (int)len, name);
}

static int
parse_unary(pf_expr *e)
{
	int a, i;

	skip_space(e);
	if (e->depth >= MAX_NESTING)
		return fail(e, e->p, "expression nested too deeply");
	if (accept(e, "!") || accept(e, "-")) {
		int kind = e->p[-1] == '!' ? N_NOT : N_NEG;

		e->depth++;
		a = parse_unary(e);
		e->depth--;
		if (a == -1)
			return -1;
		if ((i = new_node(e, kind)) == -1)
			return oom(e);
		e->n[i].a = a;
		return i;
	}
	return parse_prim(e);
}

static int
parse_prod(pf_expr *e)
{
	int a, b, op;

	if ((a = parse_unary(e)) == -1)
		return -1;
	for (;;) {
		if (accept(e, "*"))
			op = OP_MUL;
		else if (accept(e, "/"))
			op = OP_DIV;
		else if (accept(e, "%"))
			op = OP_MOD;
		else
			return a;
		if ((b = parse_unary(e)) == -1 ||
		    (a = binary(e, N_BIN, op, a, b)) == -1)
			return -1;
	}
}

static int
parse_sum(pf_expr *e)
{
	int a, b, op;

	if ((a = parse_prod(e)) == -1)
		return -1;
	for (;;) {
		if (accept(e, "+"))
			op = OP_ADD;
		else if (accept(e, "-"))
			op = OP_SUB;
		else
			return a;
		if ((b = parse_prod(e)) == -1 ||
		    (a = binary(e, N_BIN, op, a, b)) == -1)
			return -1;
	}
}

static int
parse_cmp(pf_expr *e)
{
	static const struct { const char *tok; int op; } ops[] = {
		{ "<=", OP_LE }, { ">=", OP_GE }, { "==", OP_EQ },
		{ "!=", OP_NE }, { "<", OP_LT }, { ">", OP_GT },
	};
	int a, b;

	if ((a = parse_sum(e)) == -1)
		return -1;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (accept(e, ops[k].tok)) {
			if ((b = parse_sum(e)) == -1)
				return -1;
			a = binary(e, N_BIN, ops[k].op, a, b);
			skip_space(e);
			if (a != -1 && (*e->p == '<' || *e->p == '>' ||
			    (e->p[0] == '=' && e->p[1] == '=') ||
			    (e->p[0] == '!' && e->p[1] == '=')))
				return fail(e, e->p, "comparisons do not "
				    "chain: use &&");
			return a;
		}
	skip_space(e);
	if (*e->p == '=')
		return fail(e, e->p, "'=' is not an operator: use '=='");
	return a;
}

static int
parse_and(pf_expr *e)
{
	int a, b;

	if ((a = parse_cmp(e)) == -1)
		return -1;
	while (accept(e, "&&"))
		if ((b = parse_cmp(e)) == -1 ||
		    (a = binary(e, N_AND, 0, a, b)) == -1)
			return -1;
	skip_space(e);
	if (*e->p == '&' && e->p[1] != '&')
		return fail(e, e->p, "'&' is not an operator: use '&&'");
	return a;
}

static int
parse_or(pf_expr *e)
{
	int a, b;

	if ((a = parse_and(e)) == -1)
		return -1;
	while (accept(e, "||"))
		if ((b = parse_and(e)) == -1 ||
		    (a = binary(e, N_OR, 0, a, b)) == -1)
			return -1;
	skip_space(e);
	if (*e->p == '|' && e->p[1] != '|')
		return fail(e, e->p, "'|' is not an operator: use '||'");
	return a;
}

pf_expr *
pf_expr_compile(const char *text, int *col, char *err, size_t errlen)
{
	pf_expr *e;
	char dummy[1];

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	*col = 0;
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->text = e->p = text;
	e->err = err;
	e->errlen = errlen;
	e->root = parse_or(e);
	if (e->root != -1) {
		skip_space(e);
		if (*e->p == ')')
			fail(e, e->p, "unbalanced ')'");
		else if (*e->p != '\0')
			fail(e, e->p, "expected an operator");
		if (e->errcol != 0)
			e->root = -1;
	}
	if (e->root == -1) {
		*col = e->errcol > 0 ? e->errcol : 0;
		pf_expr_free(e);
		return NULL;
	}
	e->text = e->p = NULL;
	e->err = NULL;
	return e;
}

void
pf_expr_free(pf_expr *e)
{
	if (e == NULL)
		return;
	free(e->n);
	free(e);
}

/* ---- evaluating --------------------------------------------------------- */

static void
damage(pf_expr *e, const char *fmt, ...)
{
	va_list ap;

	if (e->damaged++ == 0 && e->eerr != NULL && e->eerrlen > 0) {
		va_start(ap, fmt);
		vsnprintf(e->eerr, e->eerrlen, fmt, ap);
		va_end(ap);
	}
}

static const pf_board *
board(pf_expr *e)
{
	char err[128];

	if (e->c.board == 0) {
		if (pf_board_unpack(&e->c.b, e->rec->pos,
		    (e->rec->flags & PF_RF_CHESS960) != 0, err,
		    sizeof(err)) == 0)
			e->c.board = 1;
		else {
			e->c.board = -1;
			damage(e, "invalid position: %s", err);
		}
	}
	return e->c.board == 1 ? &e->c.b : NULL;
}

static const pf_meta *
meta(pf_expr *e)
{
	pf_ext x;

	if (e->c.meta == 0) {
		e->c.meta = 2;
		if (pf_ext_find(e->rec, PF_EXT_META, 0, &x)) {
			if (pf_meta_decode(&x, &e->c.m) == 0)
				e->c.meta = 1;
			else {
				e->c.meta = -1;
				damage(e, "malformed meta extension");
			}
		}
	}
	return e->c.meta == 1 ? &e->c.m : NULL;
}

/* The evaluation sel chooses (head only): 1, 0 none, -1 damaged. */
static int
find_eval(pf_expr *e, const pf_evalsel *sel, pf_eval *out)
{
	pf_evalsel_pick pick;
	pf_ext_iter it;
	pf_ext x;
	pf_eval v;
	int r;

	memset(&pick, 0, sizeof(pick));
	pf_ext_iter_init(&it, e->rec);
	while ((r = pf_ext_next(&it, &x)) == 1) {
		if (x.type != PF_EXT_EVAL)
			continue;
		if (pf_eval_decode_head(&x, &v) == -1) {
			damage(e, "malformed evaluation extension");
			return -1;
		}
		if (pf_evalsel_offer_eval(sel, &pick, &x, &v) == 1)
			*out = v;
	}
	if (r == -1) {
		damage(e, "malformed extension area");
		return -1;
	}
	return pick.found;
}

static double
elo(uint16_t v)
{
	return v == 0 ? NAN : v;
}

/*
 * Each side's material from the packed position's piece codes, without
 * unpacking the board (posflow(5): one nibble per occupied square, type |
 * colour << 3, type 6 a rook with a castling right).  0, or -1 after
 * damage() when a code is not a piece.
 */
static int
material(pf_expr *e, int m[2])
{
	static const int val[8] = { 1, 3, 3, 5, 9, 0, 5, -1 };
	const uint8_t *pos = e->rec->pos;
	int n = pf_popcount_swar(pf_get64(pos)), v;

	m[0] = m[1] = 0;
	if (n > 32) {
		damage(e, "invalid position: packed position has %d pieces", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		unsigned nib = pos[8 + i / 2] >> (i & 1 ? 4 : 0) & 15;

		if ((v = val[nib & 7]) < 0) {
			damage(e, "invalid position: bad piece code %u", nib);
			return -1;
		}
		m[nib >> 3] += v;
	}
	return 0;
}

/* 1 when move m of record r captures (en passant too), from the
   occupancy: no board needed. */
static int
captures(const pf_record *r, pf_move m)
{
	if (PF_MOVE_KIND(m) == PF_MK_ENPASSANT)
		return 1;
	if (PF_MOVE_KIND(m) == PF_MK_CASTLE)
		return 0;
	return (pf_get64(r->pos) >> PF_MOVE_TO(m)) & 1;
}

/* The fields of an evaluation (apart: pf_eval is large). */
static double
eval_field(pf_expr *e, const struct node *n)
{
	pf_eval v;

	v.score_kind = v.flags = 0;
	v.score = 0;
	v.depth = 0;
	v.best = PF_MOVE_NONE;
	memset(v.wdl, 0, sizeof(v.wdl));
	if (find_eval(e, &n->sel, &v) != 1)
		return NAN;
	switch (n->id) {
	case F_BEST_CAPTURE:
		return v.best == PF_MOVE_NONE ? NAN : captures(e->rec, v.best);
	case F_BEST_PLAYED:
		return v.best == PF_MOVE_NONE || e->rec->move == PF_MOVE_NONE ?
		    NAN : v.best == e->rec->move;
	case F_EVAL:
		return pf_score_cp(v.score_kind, v.score);
	case F_MATE:
		return v.score_kind == PF_SCORE_MATE ? v.score : NAN;
	case F_DEPTH:
		return v.depth;
	default:
		if (!(v.flags & PF_EVF_WDL))
			return NAN;
		return v.wdl[n->id - F_W];
	}
}

static double
field(pf_expr *e, const struct node *n)
{
	const pf_record *r = e->rec;
	const pf_board *b;
	const pf_meta *m;
	pf_ext x;
	int stm = r->pos[24] >> 7;	/* stm_ep, bit 7: black to move */

	switch (n->id) {
	case F_PLY:
		return r->ply;
	case F_MOVE:
		return pf_get16(r->pos + 26);
	case F_HALFMOVE:
		return r->pos[25];
	case F_SIDE:
		return stm;
	case F_RESULT:
		switch (r->result) {
		case PF_RESULT_WHITE: return 1;
		case PF_RESULT_BLACK: return -1;
		case PF_RESULT_DRAW: return 0;
		default: return NAN;
		}
	case F_OUTCOME:
		switch (r->result) {
		case PF_RESULT_WHITE: return stm == PF_WHITE ? 1 : -1;
		case PF_RESULT_BLACK: return stm == PF_BLACK ? 1 : -1;
		case PF_RESULT_DRAW: return 0;
		default: return NAN;
		}
	case F_CHECK:
		return (r->flags & PF_RF_CHECK) != 0;
	case F_CHECKMATE:
		return (r->flags & PF_RF_MATE) != 0;
	case F_STALEMATE:
		return (r->flags & PF_RF_STALEMATE) != 0;
	case F_LAST:
		return (r->flags & PF_RF_LAST) != 0;
	case F_CHESS960:
		return (r->flags & PF_RF_CHESS960) != 0;
	case F_TRUNCATED:
		return (r->flags & PF_RF_TRUNCATED) != 0;
	case F_GAME:
		return (double)r->game_id;
	case F_PLAYED:
		return r->move != PF_MOVE_NONE;
	case F_CAPTURE:
		return r->move != PF_MOVE_NONE && captures(r, r->move);
	case F_PROMOTION:
		return r->move != PF_MOVE_NONE &&
		    PF_MOVE_KIND(r->move) == PF_MK_PROMOTION;
	case F_CASTLING:
		return r->move != PF_MOVE_NONE &&
		    PF_MOVE_KIND(r->move) == PF_MK_CASTLE;
	case F_PIECES:
		return pf_popcount_swar(pf_get64(r->pos));
	case F_MATERIAL:
	case F_IMBALANCE: {
		int m[2];

		if (material(e, m) == -1)
			return NAN;
		if (n->id == F_MATERIAL)
			return m[0] + m[1];
		return m[stm] - m[!stm];
	}
	case F_LEGAL:
		if (e->c.legal < 0) {
			pf_move moves[PF_MAX_MOVES];

			if ((b = board(e)) == NULL)
				return NAN;
			e->c.legal = pf_gen_legal(b, moves);
		}
		return e->c.legal;
	case F_WHITE_ELO:
		return (m = meta(e)) ? elo(m->white_elo) : NAN;
	case F_BLACK_ELO:
		return (m = meta(e)) ? elo(m->black_elo) : NAN;
	case F_ELO:
		if ((m = meta(e)) == NULL)
			return NAN;
		return elo(stm == PF_WHITE ? m->white_elo : m->black_elo);
	case F_OPP_ELO:
		if ((m = meta(e)) == NULL)
			return NAN;
		return elo(stm == PF_WHITE ? m->black_elo : m->white_elo);
	case F_AVG_ELO:
		if ((m = meta(e)) == NULL)
			return NAN;
		return (elo(m->white_elo) + elo(m->black_elo)) / 2;
	case F_BASE:
		if ((m = meta(e)) == NULL || m->base_s == PF_U32_UNKNOWN)
			return NAN;
		return m->base_s;
	case F_INC:
		if ((m = meta(e)) == NULL || m->base_s == PF_U32_UNKNOWN)
			return NAN;
		return m->inc_s;
	case F_TERMINATION:
		if ((m = meta(e)) == NULL)
			return NAN;
		return m->termination;
	case F_EVAL:
	case F_MATE:
	case F_DEPTH:
	case F_W:
	case F_D:
	case F_L:
	case F_BEST_CAPTURE:
	case F_BEST_PLAYED:
		return eval_field(e, n);
	case F_COMPLEXITY: {
		pf_complexity c;

		if (!pf_ext_find(r, PF_EXT_COMPLEXITY, 0, &x))
			return NAN;
		if (pf_complexity_decode(&x, &c) == -1) {
			damage(e, "malformed complexity extension");
			return NAN;
		}
		return c.complexity;
	}
	case F_REPAIR: {
		pf_repair rp;

		if (!pf_ext_find(r, PF_EXT_REPAIR, 0, &x))
			return NAN;
		if (pf_repair_decode(&x, &rp) == -1) {
			damage(e, "malformed repair extension");
			return NAN;
		}
		return rp.cls;
	}
	case F_TWINS: {
		pf_merge mg;

		if (!pf_ext_find(r, PF_EXT_MERGE, 0, &x))
			return 1;
		if (pf_merge_decode(&x, &mg) == -1) {
			damage(e, "malformed merge extension");
			return NAN;
		}
		return mg.count;
	}
	case F_VALUE: {
		pf_value val;
		pf_ext_iter it;
		pf_ext y;
		int found = 0;

		/* the last, as the loader and posexport take it: one pass */
		pf_ext_iter_init(&it, r);
		while (pf_ext_next(&it, &y) == 1)
			if (y.type == PF_EXT_VALUE) {
				x = y;
				found = 1;
			}
		if (!found)
			return NAN;
		if (pf_value_decode(&x, &val) == -1) {
			damage(e, "malformed value extension");
			return NAN;
		}
		return val.target;
	}
	}
	return NAN;
}

static int
truth(double v)
{
	return pf_expr_true(v);
}

/* Comparison op of a and b (neither NaN), from a < b and a == b. */
static inline int
compare(int op, int lt, int eq)
{
	switch (op) {
	case OP_LT: return lt;
	case OP_LE: return lt || eq;
	case OP_GT: return !lt && !eq;
	case OP_GE: return !lt;
	case OP_EQ: return eq;
	default: return !eq;
	}
}

static double eval_node(pf_expr *e, int i);

/*
 * The truth of node i.  A field, or a comparison of one with a number, the
 * most common operands of && and ||, is taken here without a call: the
 * interpreter's calls were most of a simple filter's time.
 */
static inline int
test_node(pf_expr *e, int i)
{
	const struct node *n = &e->n[i];
	double a;

	if (n->kind == N_FIELD)
		return truth(field(e, n));
	if (n->kind != N_FCMP)
		return truth(eval_node(e, i));
	a = field(e, &e->n[n->a]);
	if (isnan(a))
		return 0;
	return compare(n->op, a < n->num, a == n->num);
}

static double
eval_node(pf_expr *e, int i)
{
	const struct node *n = &e->n[i];
	double a, b;

	switch (n->kind) {
	case N_NUM:
		return n->num;
	case N_FIELD:
		return field(e, n);
	case N_NOT:
		return !test_node(e, n->a);
	case N_NEG:
		return -eval_node(e, n->a);
	case N_AND:
		return test_node(e, n->a) && test_node(e, n->b);
	case N_OR:
		return test_node(e, n->a) || test_node(e, n->b);
	case N_ABS:
		return fabs(eval_node(e, n->a));
	case N_MIN:
	case N_MAX:
		a = eval_node(e, n->a);
		b = eval_node(e, n->b);
		if (isnan(a) || isnan(b))
			return NAN;
		return n->kind == N_MIN ? fmin(a, b) : fmax(a, b);
	case N_KNOWN:
		return !isnan(eval_node(e, n->a));
	case N_FCMP:
		return test_node(e, i);
	case N_GCMP:		/* a literal of 2^64 or more: above all */
		return compare(n->op, n->exact == 2 || e->rec->game_id < n->u,
		    n->exact != 2 && e->rec->game_id == n->u);
	}
	/* N_BIN */
	a = eval_node(e, n->a);
	b = eval_node(e, n->b);
	if (isnan(a) || isnan(b))
		return n->op >= OP_LT ? 0 : NAN;
	switch (n->op) {
	case OP_ADD: return a + b;
	case OP_SUB: return a - b;
	case OP_MUL: return a * b;
	case OP_DIV: return b == 0 ? NAN : a / b;
	case OP_MOD: return b == 0 ? NAN : fmod(a, b);
	default: return compare(n->op, a < b, a == b);
	}
}

int
pf_expr_eval(pf_expr *e, const pf_record *rec, double *val, char *err,
    size_t errlen)
{
	e->rec = rec;
	e->c.board = 0;
	e->c.meta = 0;
	e->c.legal = -1;
	e->damaged = 0;
	e->eerr = err;
	e->eerrlen = errlen;
	*val = eval_node(e, e->root);
	e->rec = NULL;
	return e->damaged ? -1 : 0;
}

const char *
pf_expr_label(const pf_expr *e, double v, char *buf, size_t len)
{
	const struct node *n = &e->n[e->root];
	int lab = n->kind == N_FIELD ? fields[n->field].labels : L_NONE;

	if (isnan(v))
		snprintf(buf, len, "missing");
	else if (lab == L_SIDE && (v == 0 || v == 1))
		snprintf(buf, len, "%s", v == 0 ? "white" : "black");
	else if (lab == L_RESULT && (v == 1 || v == 0 || v == -1))
		snprintf(buf, len, "%s", v == 1 ? "1-0" : v == 0 ? "1/2-1/2" :
		    "0-1");
	else if (lab == L_OUTCOME && (v == 1 || v == 0 || v == -1))
		snprintf(buf, len, "%s", v == 1 ? "win" : v == 0 ? "draw" :
		    "loss");
	else if (lab == L_TERM && v >= 0 && v <= PF_TERM_OTHER && v == (int)v)
		snprintf(buf, len, "%s", term_names[(int)v]);
	else if (v == floor(v) && fabs(v) < 1e21)
		/* every digit of an integer; -0 is 0 (they are equal) */
		snprintf(buf, len, "%.0f", v == 0 ? 0.0 : v);
	else
		/* the fewest digits that read back as v: values that
		   differ never share a label */
		pf_shortest(v, 0, buf, len);
	return buf;
}

int
pf_expr_is_game(const pf_expr *e)
{
	return e->root >= 0 && e->n[e->root].kind == N_FIELD &&
	    e->n[e->root].id == F_GAME;
}

/* ---- sampling ----------------------------------------------------------- */

double
pf_rec_uniform(uint64_t seed, uint64_t game_id, uint16_t ply, uint32_t rule)
{
	uint8_t k[22];
	uint64_t h;

	pf_put64(k, seed);
	pf_put64(k + 8, game_id);
	pf_put16(k + 16, ply);
	pf_put32(k + 18, rule);
	h = XXH3_64bits(k, sizeof(k));
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

double
pf_wdl_result_prob(double cp, int ply, int result_stm, double *w, double *d,
    double *l)
{
	static const double as[] = { -3.68389304, 30.07065921, -60.52878723,
	    149.53378557 };
	static const double bs[] = { -2.0181857, 15.85685038, -29.83452023,
	    47.59078827 };
	double m = (ply < 240 ? (ply < 0 ? 0 : ply) : 240) / 64.0;
	double a = ((as[0] * m + as[1]) * m + as[2]) * m + as[3];
	double b = (((bs[0] * m + bs[1]) * m + bs[2]) * m + bs[3]) * 1.5;
	double x = cp < -2000 ? -2000 : cp > 2000 ? 2000 : cp;
	double pw = 1.0 / (1 + exp((a - x) / b));
	double pl = 1.0 / (1 + exp((a + x) / b));
	double pd = 1.0 - pw - pl;

	if (w != NULL)
		*w = pw;
	if (d != NULL)
		*d = pd;
	if (l != NULL)
		*l = pl;
	return result_stm > 0 ? pw : result_stm < 0 ? pl : pd;
}
