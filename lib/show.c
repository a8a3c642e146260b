/*
 * show.c - a record as text or JSON Lines (show.h), as posdump(1) and the
 * Python module show it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posflow.h"
#include "show.h"
#include "utf8.h"

/* Hand a problem to the caller's warn function, if any. */
static void
warn(const pf_show_opts *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (o->warn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->warn_ctx, msg);
}

void
pf_show_opts_init(pf_show_opts *o, int json)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->json = json;
	for (i = 0; i < PF_SHOW_NFIELDS; i++) {
		o->fields[i] = (enum pf_show_field)i;
		o->want[i] = 1;
	}
	o->nfields = PF_SHOW_NFIELDS;
}

void
pf_show_json(FILE *fp, const pf_record *rec)
{
	pf_show_opts all;

	/* built each time (a few stores): the library keeps no state */
	pf_show_opts_init(&all, 1);
	(void)pf_show_record(fp, &all, rec, "", 0);
}
const char *const pf_show_field_names[PF_SHOW_NFIELDS] = {
	"fen", "game", "ply", "move", "san", "result", "flags", "meta",
	"eval", "movescores", "clock", "policy", "value", "complexity",
	"repair", "pqr", "merge", "ext"
};


static const char *const flag_names[16] = {
	"check", "mate", "stalemate", "chess960", "last", "truncated",
	"eval_failed", "insufficient", NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL
};

static const char *const limit_names[] = { "none", "depth", "nodes",
	"movetime" };
static const char *const source_names[] = { "engine", "pgn", "terminal",
	"import" };
static const char *const term_names[] = { "unknown", "normal", "time",
	"abandoned", "rules", "unterminated", "other" };
static const char *const policy_names[] = { "?", "zeman", "softmax",
	"winprob", "import" };
static const char *const value_names[] = { "?", "tanh", "logistic", "wdl",
	"wdl_engine", "linear" };
static const char *const complexity_modes[] = { "unknown", "depth",
	"nodes" };
static const char *const panda_classes[] = { "none", "definite",
	"maybe-yes", "maybe-no" };

#define NAME(table, i) \
	((size_t)(i) < sizeof(table) / sizeof(table[0]) ? table[i] : "unknown")

const char *
pf_show_panda_class(int cls)
{
	return NAME(panda_classes, cls);
}


/* The list is read where it is, so it may be as long as the shell
   allows (names may repeat). */
int
pf_show_fields(pf_show_opts *o, const char *list, char *err, size_t errlen)
{
	const char *tok = list;
	size_t n;
	int i;

	memset(o->want, 0, sizeof(o->want));
	o->nfields = 0;
	for (;;) {
		n = strcspn(tok, ",");
		for (i = 0; i < PF_SHOW_NFIELDS; i++)
			if (strncmp(tok, pf_show_field_names[i], n) == 0 &&
			    pf_show_field_names[i][n] == '\0')
				break;
		if (i == PF_SHOW_NFIELDS) {
			snprintf(err, errlen, "unknown field \"%.*s\"",
			    n > 64 ? 64 : (int)n, tok);
			return -1;
		}
		if (!o->want[i])
			o->fields[o->nfields++] = (enum pf_show_field)i;
		o->want[i] = 1;
		if (tok[n] == '\0')
			return 0;
		tok += n + 1;
	}
}

/* A move as UCI text, or "-" for none, or "?" when it is not legal here. */
static const char *
move_text(const pf_board *b, int board_ok, pf_move m, char *buf)
{
	if (m == PF_MOVE_NONE)
		return "-";
	if (!board_ok || !pf_is_legal(b, m)) {
		snprintf(buf, PF_UCI_MAX + 8, "?%04x", m);
		return buf;
	}
	return pf_move_to_uci(b, m, buf);
}

/*
 * A string from the stream, quoted and escaped as in JSON (the text format
 * too).  Writers store UTF-8, but a stream from elsewhere may hold any
 * bytes, and a line must stay valid UTF-8 and valid JSON whatever it
 * holds: valid UTF-8 characters are written as they are, and a byte that
 * is not part of one is written as the \u00XX escape of the character it
 * is in Latin-1, the reading writers give such bytes (posflow(5)).  So the
 * line shows where a stream was not UTF-8.
 */
void
pf_show_json_string(FILE *fp, const char *s, size_t len)
{
	size_t i, n;

	putc('"', fp);
	for (i = 0; i < len; i += n) {
		unsigned char c = (unsigned char)s[i];

		n = 1;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\u%04x", c);
		else if (c < 0x80)
			putc(c, fp);
		else if ((n = pf_utf8_seq(s + i, len - i)) > 0)
			fwrite(s + i, 1, n, fp);
		else {
			fprintf(fp, "\\u%04x", c);
			n = 1;
		}
	}
	putc('"', fp);
}

/*
 * An f32 as the shortest decimal that reads back as the same float
 * (pf_shortest); a whole number below 2^24 in full ("50", not "5e+01").
 * Not finite: "nan", "inf" or "-inf".  Returns buf.
 */
static const char *
f32_text(float f, char *buf, size_t len)
{
	if (f == truncf(f) && fabsf(f) < 16777216.0f) {
		snprintf(buf, len, "%.0f", (double)f);
		return buf;
	}
	return pf_shortest(f, 1, buf, len);
}

static const char *
result_text(uint8_t r)
{
	switch (r) {
	case PF_RESULT_WHITE:
		return "1-0";
	case PF_RESULT_BLACK:
		return "0-1";
	case PF_RESULT_DRAW:
		return "1/2-1/2";
	default:
		return "*";
	}
}

static void
score_text(FILE *fp, uint8_t kind, int32_t score)
{
	if (kind == PF_SCORE_MATE)
		fprintf(fp, "mate:%" PRId32, score);
	else
		fprintf(fp, "cp:%" PRId32, score);
}

static void
limit_text(FILE *fp, uint8_t kind, uint64_t v)
{
	if (kind == PF_LIMIT_NONE)
		fputs("none", fp);
	else
		fprintf(fp, "%s:%" PRIu64, NAME(limit_names, kind), v);
}

/* ---- one extension, text and JSON ------------------------------------ */

static void
show_meta(FILE *fp, int json, const pf_meta *m)
{
	if (json) {
		fprintf(fp, "{\"type\":\"meta\",\"white_elo\":%u,"
		    "\"black_elo\":%u,", m->white_elo, m->black_elo);
		if (m->base_s == PF_U32_UNKNOWN)
			fputs("\"base_s\":null,\"inc_s\":null,", fp);
		else
			fprintf(fp, "\"base_s\":%" PRIu32 ",\"inc_s\":%" PRIu32
			    ",", m->base_s, m->inc_s);
		fprintf(fp, "\"termination\":\"%s\",\"event\":",
		    NAME(term_names, m->termination));
	} else {
		fprintf(fp, "meta{white_elo=%u black_elo=%u tc=", m->white_elo,
		    m->black_elo);
		if (m->base_s == PF_U32_UNKNOWN)
			fputs("-", fp);
		else
			fprintf(fp, "%" PRIu32 "+%" PRIu32, m->base_s, m->inc_s);
		fprintf(fp, " termination=%s event=",
		    NAME(term_names, m->termination));
	}
	pf_show_json_string(fp, m->event, m->event_len);
	fputs(json ? ",\"site\":" : " site=", fp);
	pf_show_json_string(fp, m->site, m->site_len);
	fputs(json ? ",\"white\":" : " white=", fp);
	pf_show_json_string(fp, m->white, m->white_len);
	fputs(json ? ",\"black\":" : " black=", fp);
	pf_show_json_string(fp, m->black, m->black_len);
	fputs(json ? ",\"date\":" : " date=", fp);
	pf_show_json_string(fp, m->date, m->date_len);
	fputs(json ? ",\"termination_tag\":" : " termination_tag=", fp);
	pf_show_json_string(fp, m->term_text, m->term_text_len);
	putc('}', fp);
}

static void
show_eval(FILE *fp, int json, const pf_eval *e, const pf_board *b,
    int board_ok)
{
	pf_board pv_board;
	pf_undo u;
	char mb[PF_UCI_MAX + 8];
	int i, ok;

	if (json) {
		fprintf(fp, "{\"type\":\"eval\",\"source\":\"%s\",\"limit\":"
		    "\"%s\",\"limit_value\":%" PRIu64 ",\"score\":{\"%s\":%"
		    PRId32 "},\"cp\":%" PRId32 ",\"bound\":%s,",
		    NAME(source_names, e->source),
		    NAME(limit_names, e->limit_kind), e->limit,
		    e->score_kind == PF_SCORE_MATE ? "mate" : "cp", e->score,
		    pf_score_cp(e->score_kind, e->score),
		    e->flags & PF_EVF_LOWER ? "\"lower\"" :
		    e->flags & PF_EVF_UPPER ? "\"upper\"" : "null");
		if (e->flags & PF_EVF_WDL)
			fprintf(fp, "\"wdl\":[%u,%u,%u],", e->wdl[0],
			    e->wdl[1], e->wdl[2]);
		else
			fputs("\"wdl\":null,", fp);
		fprintf(fp, "\"depth\":%u,\"seldepth\":%u,\"nodes\":%" PRIu64
		    ",\"time_ms\":%" PRIu32 ",\"multipv\":%u,\"best\":\"%s\","
		    "\"pv\":[", e->depth, e->seldepth, e->nodes, e->time_ms,
		    e->multipv, move_text(b, board_ok, e->best, mb));
	} else {
		fprintf(fp, "eval{src=%s limit=", NAME(source_names,
		    e->source));
		limit_text(fp, e->limit_kind, e->limit);
		fputs(" score=", fp);
		score_text(fp, e->score_kind, e->score);
		if (e->flags & PF_EVF_LOWER)
			fputs(" bound=lower", fp);
		if (e->flags & PF_EVF_UPPER)
			fputs(" bound=upper", fp);
		if (e->flags & PF_EVF_WDL)
			fprintf(fp, " wdl=%u,%u,%u", e->wdl[0], e->wdl[1],
			    e->wdl[2]);
		fprintf(fp, " depth=%u seldepth=%u nodes=%" PRIu64 " time=%"
		    PRIu32 " multipv=%u best=%s pv=", e->depth, e->seldepth,
		    e->nodes, e->time_ms, e->multipv,
		    move_text(b, board_ok, e->best, mb));
	}
	/* The PV is replayed so that its moves can be shown as UCI text. */
	pv_board = *b;
	ok = board_ok;
	for (i = 0; i < e->pv_len; i++) {
		if (json)
			fprintf(fp, "%s\"%s\"", i ? "," : "",
			    move_text(&pv_board, ok, e->pv[i], mb));
		else
			fprintf(fp, "%s%s", i ? "," : "",
			    move_text(&pv_board, ok, e->pv[i], mb));
		if (ok && pf_is_legal(&pv_board, e->pv[i]))
			pf_make_move(&pv_board, e->pv[i], &u);
		else
			ok = 0;
	}
	if (!json && e->pv_len == 0)
		putc('-', fp);
	fputs(json ? "],\"engine\":" : " engine=", fp);
	pf_show_json_string(fp, e->engine, e->engine_len);
	if (e->flags & PF_EVF_SF)
		fprintf(fp, json ? ",\"sf_score\":%d" : " sf=%d", e->sf_score);
	putc('}', fp);
}

static void
show_movescores(FILE *fp, int json, const pf_movescores *s,
    const pf_board *b, int board_ok)
{
	char mb[PF_UCI_MAX + 8];
	int i;

	if (json) {
		fprintf(fp, "{\"type\":\"movescores\",\"limit\":\"%s\","
		    "\"limit_value\":%" PRIu64 ",\"depth\":%u,\"complete\":%s,"
		    "\"intermediate\":%s,\"moves\":[",
		    NAME(limit_names, s->limit_kind), s->limit, s->depth,
		    s->flags & PF_MSF_COMPLETE ? "true" : "false",
		    s->flags & PF_MSF_INTERMEDIATE ? "true" : "false");
		for (i = 0; i < s->n; i++) {
			fprintf(fp, "%s{\"move\":\"%s\",", i ? "," : "",
			    move_text(b, board_ok, s->m[i].move, mb));
			if (s->m[i].score_kind == PF_SCORE_MATE)
				fprintf(fp, "\"mate\":%" PRId32 ",",
				    s->m[i].score);
			fprintf(fp, "\"cp\":%" PRId32 ",\"depth\":%u}",
			    pf_score_cp(s->m[i].score_kind, s->m[i].score),
			    s->m[i].depth);
		}
		fputs("]}", fp);
		return;
	}
	fputs("movescores{limit=", fp);
	limit_text(fp, s->limit_kind, s->limit);
	fprintf(fp, " depth=%u%s%s n=%u", s->depth,
	    s->flags & PF_MSF_COMPLETE ? " complete" : "",
	    s->flags & PF_MSF_INTERMEDIATE ? " intermediate" : "", s->n);
	for (i = 0; i < s->n; i++) {
		fprintf(fp, " %s:", move_text(b, board_ok, s->m[i].move, mb));
		score_text(fp, s->m[i].score_kind, s->m[i].score);
		fprintf(fp, "@%u", s->m[i].depth);
	}
	putc('}', fp);
}

/* An f32 as a JSON number; JSON has no NaN or infinity: null. */
static void
json_num(FILE *fp, const char *key, float v)
{
	char buf[32];

	if (isfinite(v))
		fprintf(fp, ",\"%s\":%s", key, f32_text(v, buf, sizeof(buf)));
	else
		fprintf(fp, ",\"%s\":null", key);
}

static void
show_policy(FILE *fp, int json, const pf_policy *p, const pf_board *b,
    int board_ok)
{
	char mb[PF_UCI_MAX + 8], f1[32], f2[32];
	int i;

	if (json) {
		fprintf(fp, "{\"type\":\"policy\",\"method\":\"%s\"",
		    NAME(policy_names, p->method));
		json_num(fp, "param1", p->param1);
		json_num(fp, "param2", p->param2);
		fputs(",\"moves\":[", fp);
	} else
		fprintf(fp, "policy{method=%s param1=%s param2=%s n=%u",
		    NAME(policy_names, p->method),
		    f32_text(p->param1, f1, sizeof(f1)),
		    f32_text(p->param2, f2, sizeof(f2)), p->n);
	for (i = 0; i < p->n; i++) {
		if (json)
			fprintf(fp, "%s{\"move\":\"%s\",\"q\":%u,\"p\":%.6f}",
			    i ? "," : "", move_text(b, board_ok, p->move[i],
			    mb), p->prob[i], p->prob[i] / 65535.0);
		else
			fprintf(fp, " %s:%.4f", move_text(b, board_ok,
			    p->move[i], mb), p->prob[i] / 65535.0);
	}
	fputs(json ? "]}" : "}", fp);
}

static void
show_value(FILE *fp, int json, const pf_value *v)
{
	char f1[32], f2[32], f3[32], f4[32];

	if (json) {
		fprintf(fp, "{\"type\":\"value\",\"method\":\"%s\",\"scale\":"
		    "\"%s\"", NAME(value_names, v->method), v->scale ? "S" : "Q");
		json_num(fp, "param1", v->param1);
		json_num(fp, "param2", v->param2);
		json_num(fp, "lambda", v->lambda);
		json_num(fp, "target", v->target);
		putc('}', fp);
	} else
		fprintf(fp, "value{method=%s scale=%s param1=%s param2=%s "
		    "lambda=%s target=%s}", NAME(value_names, v->method),
		    v->scale ? "S" : "Q", f32_text(v->param1, f1, sizeof(f1)),
		    f32_text(v->param2, f2, sizeof(f2)),
		    f32_text(v->lambda, f3, sizeof(f3)),
		    f32_text(v->target, f4, sizeof(f4)));
}

/* A float as a JSON number, or null when not finite (text: f32_text). */
static const char *
num_text(int json, float v, char *buf, size_t len)
{
	if (json && !isfinite(v))
		return "null";
	return f32_text(v, buf, len);
}

/*
 * Depth mode: the metric, the depths, the surprising move and its two
 * probabilities, the thresholds.  Nodes mode: the two evaluations (limit,
 * depth, best move, Q), the loss, which criteria fired, the thresholds.
 */
static void
show_complexity(FILE *fp, int json, const pf_complexity *c,
    const pf_board *b, int board_ok)
{
	char mb[PF_UCI_MAX + 8], f[6][32];
	const char *fired;

	if (json)
		fprintf(fp, "{\"type\":\"complexity\",\"mode\":\"%s\","
		    "\"complexity\":%u,\"depth\":%u",
		    NAME(complexity_modes, c->mode), c->complexity, c->depth);
	else
		fprintf(fp, "complexity{mode=%s complexity=%u depth=%u",
		    NAME(complexity_modes, c->mode), c->complexity, c->depth);
	if (c->mode == PF_COMPLEXITY_DEPTH) {
		fprintf(fp, json ? ",\"first_depth\":%u,\"move\":\"%s\","
		    "\"p_first\":%s,\"p_decide\":%s,\"low\":%s,\"high\":%s,"
		    "\"policy\":\"%s\"" : " first_depth=%u move=%s p_first=%s "
		    "p_decide=%s low=%s high=%s policy=%s", c->first_depth,
		    move_text(b, board_ok, c->move, mb),
		    num_text(json, c->p_first, f[0], sizeof(f[0])),
		    num_text(json, c->p_decide, f[1], sizeof(f[1])),
		    num_text(json, c->low, f[2], sizeof(f[2])),
		    num_text(json, c->high, f[3], sizeof(f[3])),
		    NAME(policy_names, c->method));
	} else if (c->mode == PF_COMPLEXITY_NODES) {
		switch (c->flags & (PF_COMPLEXITYF_MOVE | PF_COMPLEXITYF_Q)) {
		case PF_COMPLEXITYF_MOVE:
			fired = json ? "[\"move\"]" : "move";
			break;
		case PF_COMPLEXITYF_Q:
			fired = json ? "[\"q\"]" : "q";
			break;
		case PF_COMPLEXITYF_MOVE | PF_COMPLEXITYF_Q:
			fired = json ? "[\"move\",\"q\"]" : "move,q";
			break;
		default:
			fired = json ? "[]" : "-";
			break;
		}
		if (json) {
			fprintf(fp, ",\"shallow_limit\":\"%s\","
			    "\"shallow_limit_value\":%" PRIu64 ","
			    "\"shallow_depth\":%u,\"deep_limit\":\"%s\","
			    "\"deep_limit_value\":%" PRIu64 ",",
			    NAME(limit_names, c->shallow_kind),
			    c->shallow_limit, c->shallow_depth,
			    NAME(limit_names, c->deep_kind), c->deep_limit);
			fprintf(fp, "\"shallow_best\":\"%s\",",
			    move_text(b, board_ok, c->shallow_best, mb));
			fprintf(fp, "\"deep_best\":\"%s\",\"moves_differ\":%s,"
			    "\"loss\":", move_text(b, board_ok, c->deep_best,
			    mb), c->flags & PF_COMPLEXITYF_DIFFER ? "true" :
			    "false");
		} else {
			fputs(" shallow=", fp);
			limit_text(fp, c->shallow_kind, c->shallow_limit);
			fprintf(fp, " shallow_depth=%u deep=", c->shallow_depth);
			limit_text(fp, c->deep_kind, c->deep_limit);
			fprintf(fp, " shallow_best=%s", move_text(b, board_ok,
			    c->shallow_best, mb));
			fprintf(fp, " deep_best=%s%s loss=", move_text(b,
			    board_ok, c->deep_best, mb),
			    c->flags & PF_COMPLEXITYF_DIFFER ? " differ" : "");
		}
		if (c->flags & PF_COMPLEXITYF_LOSS_KNOWN)
			fprintf(fp, "%" PRId32, c->loss);
		else
			fputs(json ? "null" : "-", fp);
		fprintf(fp, json ? ",\"q_shallow\":%s,\"q_deep\":%s,"
		    "\"fired\":%s,\"min_loss\":%" PRId32 ",\"threshold\":%s" :
		    " q_shallow=%s q_deep=%s fired=%s min_loss=%" PRId32
		    " threshold=%s",
		    num_text(json, c->q_shallow, f[0], sizeof(f[0])),
		    num_text(json, c->q_deep, f[1], sizeof(f[1])), fired,
		    c->min_loss, num_text(json, c->threshold, f[2],
		    sizeof(f[2])));
	}
	putc('}', fp);
}

/*
 * Candidates: the class as a boolean, the two Q values and where they
 * came from.  Panda: the class, the original and repaired values, and
 * whether a search re-scored it.
 */
static void
show_repair(FILE *fp, int json, const pf_repair *r)
{
	char f1[32], f2[32];
	const char *q = r->flags & PF_REPAIRF_WDL ? "wdl" : "logistic";
	int rescored = (r->flags & PF_REPAIRF_RESCORED) != 0;

	switch (r->mode) {
	case PF_REPAIR_CANDIDATES:
		fprintf(fp, json ? "{\"type\":\"repair\",\"mode\":"
		    "\"candidates\",\"candidate\":%s,\"q_shallow\":%s,"
		    "\"q_deep\":%s,\"q\":\"%s\"}" : "repair{mode=candidates "
		    "candidate=%s q_shallow=%s q_deep=%s q=%s}",
		    r->cls ? (json ? "true" : "yes") : (json ? "false" : "no"),
		    num_text(json, r->q_shallow, f1, sizeof(f1)),
		    num_text(json, r->q_deep, f2, sizeof(f2)), q);
		break;
	case PF_REPAIR_PANDA:
		fprintf(fp, json ? "{\"type\":\"repair\",\"mode\":\"panda\","
		    "\"class\":\"%s\",\"original\":%" PRId32 ",\"repaired\":%"
		    PRId32 ",\"rescored\":%s}" : "repair{mode=panda class=%s "
		    "original=%" PRId32 " repaired=%" PRId32 " rescored=%s}",
		    pf_show_panda_class(r->cls), r->original, r->repaired,
		    rescored ? (json ? "true" : "yes") : (json ? "false" :
		    "no"));
		break;
	default:
		/* A later mode: every field, raw. */
		fprintf(fp, json ? "{\"type\":\"repair\",\"mode\":%u,"
		    "\"class\":%u,\"flags\":%u,\"q_shallow\":%s,\"q_deep\":%s,"
		    "\"original\":%" PRId32 ",\"repaired\":%" PRId32 "}" :
		    "repair{mode=%u class=%u flags=%u q_shallow=%s q_deep=%s "
		    "original=%" PRId32 " repaired=%" PRId32 "}", r->mode,
		    r->cls, r->flags, num_text(json, r->q_shallow, f1,
		    sizeof(f1)), num_text(json, r->q_deep, f2, sizeof(f2)),
		    r->original, r->repaired);
		break;
	}
}

/* A packed position as a FEN string, or null / "?" when it is invalid. */
static void
packed_fen(FILE *fp, int json, const uint8_t *pos, int chess960)
{
	pf_board b;
	char fen[PF_FEN_MAX];

	if (pf_board_unpack(&b, pos, chess960, NULL, 0) == -1)
		fputs(json ? "null" : "?", fp);
	else
		fprintf(fp, "\"%s\"", pf_board_to_fen(&b, fen));
}

/* A P/Q/R triple: Q and R as FENs, R's move from this record's position. */
static void
show_pqr(FILE *fp, int json, const pf_pqr *x, const pf_board *b,
    int board_ok)
{
	char mv[PF_UCI_MAX + 8];
	int c960 = board_ok && b->chess960;

	fputs(json ? "{\"type\":\"pqr\",\"q\":" : "pqr{q=", fp);
	packed_fen(fp, json, x->q, c960);
	fputs(json ? ",\"r\":" : " r=", fp);
	packed_fen(fp, json, x->r, c960);
	fprintf(fp, json ? ",\"r_move\":\"%s\"}" : " r_move=%s}",
	    move_text(b, board_ok, x->r_move, mv));
}

/* Twins merged into the record by shard: how many, and their results from
   the side to move's view. */
static void
show_merge(FILE *fp, int json, const pf_merge *m)
{
	fprintf(fp, json ? "{\"type\":\"merge\",\"count\":%" PRIu32
	    ",\"wins\":%" PRIu32 ",\"draws\":%" PRIu32 ",\"losses\":%"
	    PRIu32 "}" : "merge{count=%" PRIu32 " wins=%" PRIu32 " draws=%"
	    PRIu32 " losses=%" PRIu32 "}", m->count, m->wins, m->draws,
	    m->losses);
}

static void
show_clock(FILE *fp, int json, const pf_clock *c)
{
	if (json) {
		fputs("{\"type\":\"clock\",\"white_ms\":", fp);
		if (c->white_ms == PF_U32_UNKNOWN)
			fputs("null", fp);
		else
			fprintf(fp, "%" PRIu32, c->white_ms);
		fputs(",\"black_ms\":", fp);
		if (c->black_ms == PF_U32_UNKNOWN)
			fputs("null", fp);
		else
			fprintf(fp, "%" PRIu32, c->black_ms);
		putc('}', fp);
		return;
	}
	fputs("clock{white=", fp);
	if (c->white_ms == PF_U32_UNKNOWN)
		fputs("-", fp);
	else
		fprintf(fp, "%" PRIu32 ".%03" PRIu32, c->white_ms / 1000,
		    c->white_ms % 1000);
	fputs(" black=", fp);
	if (c->black_ms == PF_U32_UNKNOWN)
		fputs("-", fp);
	else
		fprintf(fp, "%" PRIu32 ".%03" PRIu32, c->black_ms / 1000,
		    c->black_ms % 1000);
	putc('}', fp);
}

static void
show_unknown(FILE *fp, int json, const pf_ext *x, const char *why)
{
	uint32_t i;

	if (!json) {
		fprintf(fp, "ext{type=%u len=%" PRIu32 "%s%s}", x->type, x->len,
		    why ? " " : "", why ? why : "");
		return;
	}
	fprintf(fp, "{\"type\":%u,\"len\":%" PRIu32 ",", x->type, x->len);
	if (why)
		fprintf(fp, "\"error\":\"%s\",", why);
	fputs("\"hex\":\"", fp);
	for (i = 0; i < x->len; i++)
		fprintf(fp, "%02x", x->data[i]);
	fputs("\"}", fp);
}

static enum pf_show_field
ext_field(uint16_t type)
{
	switch (type) {
	case PF_EXT_META:
		return PF_SHOW_META;
	case PF_EXT_EVAL:
		return PF_SHOW_EVAL;
	case PF_EXT_MOVESCORES:
		return PF_SHOW_MOVESCORES;
	case PF_EXT_CLOCK:
		return PF_SHOW_CLOCK;
	case PF_EXT_POLICY:
		return PF_SHOW_POLICY;
	case PF_EXT_VALUE:
		return PF_SHOW_VALUE;
	case PF_EXT_COMPLEXITY:
		return PF_SHOW_COMPLEXITY;
	case PF_EXT_REPAIR:
		return PF_SHOW_REPAIR;
	case PF_EXT_PQR:
		return PF_SHOW_PQR;
	case PF_EXT_MERGE:
		return PF_SHOW_MERGE;
	default:
		return PF_SHOW_EXT;
	}
}

/*
 * Show one extension (the caller has checked that its field is wanted).
 * Returns 1, or -1 when a known type failed to decode (shown raw, counted
 * as a data error).
 */
static int
show_ext(FILE *fp, const pf_show_opts *o, const pf_ext *x, const pf_board *b,
    int board_ok)
{
	pf_eval ev;
	pf_movescores ms;
	pf_policy po;
	pf_meta me;
	pf_value va;
	pf_clock cl;
	pf_complexity co;
	pf_repair re;
	pf_pqr pq;
	pf_merge mg;
	int bad = 0;

	switch (x->type) {
	case PF_EXT_META:
		if ((bad = pf_meta_decode(x, &me)) == 0)
			show_meta(fp, o->json, &me);
		break;
	case PF_EXT_EVAL:
		if ((bad = pf_eval_decode(x, &ev)) == 0)
			show_eval(fp, o->json, &ev, b, board_ok);
		break;
	case PF_EXT_MOVESCORES:
		if ((bad = pf_movescores_decode(x, &ms)) == 0)
			show_movescores(fp, o->json, &ms, b, board_ok);
		break;
	case PF_EXT_CLOCK:
		if ((bad = pf_clock_decode(x, &cl)) == 0)
			show_clock(fp, o->json, &cl);
		break;
	case PF_EXT_POLICY:
		if ((bad = pf_policy_decode(x, &po)) == 0)
			show_policy(fp, o->json, &po, b, board_ok);
		break;
	case PF_EXT_VALUE:
		if ((bad = pf_value_decode(x, &va)) == 0)
			show_value(fp, o->json, &va);
		break;
	case PF_EXT_COMPLEXITY:
		if ((bad = pf_complexity_decode(x, &co)) == 0)
			show_complexity(fp, o->json, &co, b, board_ok);
		break;
	case PF_EXT_REPAIR:
		if ((bad = pf_repair_decode(x, &re)) == 0)
			show_repair(fp, o->json, &re);
		break;
	case PF_EXT_PQR:
		if ((bad = pf_pqr_decode(x, &pq)) == 0)
			show_pqr(fp, o->json, &pq, b, board_ok);
		break;
	case PF_EXT_MERGE:
		if ((bad = pf_merge_decode(x, &mg)) == 0)
			show_merge(fp, o->json, &mg);
		break;
	default:
		show_unknown(fp, o->json, x, NULL);
		return 1;
	}
	if (bad) {
		show_unknown(fp, o->json, x, "malformed");
		return -1;
	}
	return 1;
}

int
pf_show_record(FILE *fp, const pf_show_opts *o, const pf_record *rec,
    const char *name, uint64_t recno)
{
	pf_board b;
	pf_ext_iter it;
	pf_ext x;
	char err[128], fen[PF_FEN_MAX], mb[PF_UCI_MAX + 8], san[PF_SAN_MAX];
	const char *sep = " ";
	int board_ok, i, j, first = 1, status = 0, n, r;

	board_ok = pf_board_unpack(&b, rec->pos, rec->flags & PF_RF_CHESS960,
	    err, sizeof(err)) == 0;
	if (!board_ok) {
		warn(o, "%s: record %" PRIu64 ": invalid position: %s", name,
		    recno, err);
		status = -1;
	}
	if (o->json)
		putc('{', fp);
	for (i = 0; i < o->nfields; i++) {
		enum pf_show_field f = o->fields[i];

		if (f >= PF_SHOW_META)
			continue;	/* extensions follow, in record order */
		if (o->json)
			fprintf(fp, "%s\"%s\":", first ? "" : ",",
			    pf_show_field_names[f]);
		else if (!first)
			fputs(sep, fp);
		sep = f == PF_SHOW_FEN ? " | " : " ";
		switch (f) {
		case PF_SHOW_FEN:
			if (board_ok)
				pf_board_to_fen(&b, fen);
			else
				snprintf(fen, sizeof(fen), "invalid");
			if (o->json && board_ok)
				fprintf(fp, "\"%s\"", fen);
			else if (o->json)
				fputs("null", fp);
			else
				fputs(fen, fp);
			break;
		case PF_SHOW_GAME:
			fprintf(fp, o->json ? "\"%016" PRIx64 "\"" :
			    "game=%016" PRIx64, rec->game_id);
			break;
		case PF_SHOW_PLY:
			fprintf(fp, o->json ? "%u" : "ply=%u", rec->ply);
			break;
		case PF_SHOW_MOVE:
			fprintf(fp, o->json ? "\"%s\"" : "move=%s",
			    move_text(&b, board_ok, rec->move, mb));
			break;
		case PF_SHOW_SAN:
			if (rec->move != PF_MOVE_NONE && board_ok &&
			    pf_is_legal(&b, rec->move))
				pf_move_to_san(&b, rec->move, san);
			else
				strcpy(san, rec->move ? "?" : "-");
			fprintf(fp, o->json ? "\"%s\"" : "san=%s", san);
			break;
		case PF_SHOW_RESULT:
			fprintf(fp, o->json ? "\"%s\"" : "result=%s",
			    result_text(rec->result));
			break;
		case PF_SHOW_FLAGS:
			fputs(o->json ? "[" : "flags=", fp);
			for (j = 0, n = 0; j < 16; j++) {
				if (!(rec->flags & (1u << j)))
					continue;
				if (flag_names[j])
					fprintf(fp, o->json ? "%s\"%s\"" :
					    "%s%s", n ? "," : "",
					    flag_names[j]);
				else
					fprintf(fp, o->json ? "%s\"bit%d\"" :
					    "%sbit%d", n ? "," : "", j);
				n++;
			}
			if (o->json)
				putc(']', fp);
			else if (n == 0)
				putc('-', fp);
			break;
		default:
			break;
		}
		first = 0;
	}
	/* Extensions in record order, each shown in full. */
	for (i = PF_SHOW_META; i < PF_SHOW_NFIELDS && !o->want[i]; i++)
		;
	if (i < PF_SHOW_NFIELDS) {
		if (o->json)
			fprintf(fp, "%s\"exts\":[", first ? "" : ",");
		n = 0;
		pf_ext_iter_init(&it, rec);
		while ((r = pf_ext_next(&it, &x)) == 1) {
			if (!o->want[ext_field(x.type)])
				continue;
			if (o->json ? n > 0 : !first)
				fputs(o->json ? "," : sep, fp);
			sep = " ";
			if (show_ext(fp, o, &x, &b, board_ok) < 0) {
				warn(o, "%s: record %" PRIu64 ": malformed %s "
				    "extension (%" PRIu32 " bytes)", name,
				    recno, pf_ext_type_name(x.type), x.len);
				status = -1;
			}
			n++;
			first = 0;
		}
		if (r < 0) {
			warn(o, "%s: record %" PRIu64 ": malformed extension "
			    "area", name, recno);
			status = -1;
		}
		if (o->json)
			putc(']', fp);
	}
	fputs(o->json ? "}\n" : "\n", fp);
	return status;
}

