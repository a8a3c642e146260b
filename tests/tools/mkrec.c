/*
 * mkrec - make a posflow stream from text, for tests.
 *
 * usage: mkrec [-z] [-b bytes] [-F] < lines > stream
 *
 * Reads one record per line from stdin and writes a posflow(5) stream to
 * stdout (-z: zstd-compressed; -b: block payload target in bytes, to get
 * many blocks from few records; -F: flush after every record, so each
 * record is a block of its own).  Empty lines and lines starting with '#'
 * are skipped.  A line is
 *
 *	FEN [key=value ...]
 *
 * FEN is a FEN of 4 to 6 fields, "startpos", or "-" (28 zero bytes; give
 * pos= then).  The FEN ends at the first word holding '='.  Keys, in any
 * order; extensions are added in the order of their keys:
 *
 *	game=ID			game id (decimal u64; default 0)
 *	ply=N			ply in the game (default 0)
 *	result=R		1-0, 0-1, 1/2-1/2 or * (default *)
 *	move=UCI		the move played (must be legal; default none)
 *	flags=0xHEX		record flags; default: computed from the position
 *				(check, mate, stalemate, chess960, insufficient)
 *	pos=HEX			the 28 packed position bytes as 56 hex digits,
 *				replacing the FEN's (to make invalid positions)
 *	eval=cp:N[@LIMIT]	an eval extension (source engine); also mate:N;
 *				LIMIT is depth:D, nodes:N or movetime:MS, and
 *				sets both the limit and the depth field (depth)
 *	wdl=W,D,L		W/D/L of the eval= before it (sets PF_EVF_WDL)
 *	best=UCI		the best move of the eval= before it (after its
 *				wdl=, if any; must be legal)
 *	scores=UCI:cp:N,UCI:mate:N,...[@depth:D]
 *				a movescores extension, best first; marked
 *				complete when it lists every legal move
 *	clock=W,B		a clock extension (ms; '-' for unknown)
 *	meta=WELO,BELO,TC,TERM	a meta extension: Elos (0 unknown), the time
 *				control as BASE+INC seconds or '-', the
 *				termination as PF_TERM_* (decimal)
 *	ext=TYPE:HEX		a raw extension: type (decimal or 0x hex) and
 *				payload in hex (may be empty: "ext=9:")
 *
 * Example:
 *	printf '%s\n' 'startpos game=7 move=e2e4 eval=cp:35@depth:10' | mkrec
 *
 * Errors: "mkrec: line N: reason" on stderr, exit 1.
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posflow.h"

static int lineno;

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mkrec: line %d: ", lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static long long
num(const char *s, long long min, long long max, const char *what)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (end == s || *end != '\0' || errno != 0 || v < min || v > max)
		fail("bad %s '%s'", what, s);
	return v;
}

static uint64_t
unum(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (end == s || *end != '\0' || errno != 0 || *s == '-')
		fail("bad %s '%s'", what, s);
	return v;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode hex into out (at most max bytes); returns the byte count. */
static size_t
unhex(const char *s, uint8_t *out, size_t max, const char *what)
{
	size_t n = 0;

	while (s[0] != '\0') {
		if (hexval(s[0]) < 0 || hexval(s[1]) < 0 || n == max)
			fail("bad hex in %s", what);
		out[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s += 2;
	}
	return n;
}

static pf_move
uci_move(const pf_board *b, const char *s, size_t len)
{
	pf_move m;

	if (pf_move_from_uci(b, s, len, &m) == -1)
		fail("illegal or bad move '%.*s'", (int)len, s);
	return m;
}

/* "cp:N" or "mate:N" -> kind and score. */
static void
score(char *s, uint8_t *kind, int32_t *v)
{
	char *colon = strchr(s, ':');

	if (colon == NULL)
		fail("bad score '%s'", s);
	*colon = '\0';
	if (strcmp(s, "cp") == 0)
		*kind = PF_SCORE_CP;
	else if (strcmp(s, "mate") == 0)
		*kind = PF_SCORE_MATE;
	else
		fail("bad score kind '%s'", s);
	*v = (int32_t)num(colon + 1, -1000000, 1000000, "score");
}

/* "depth:D" / "nodes:N" / "movetime:MS" -> kind and value. */
static void
limit(char *s, uint8_t *kind, uint64_t *v)
{
	char *colon = strchr(s, ':');

	if (colon == NULL)
		fail("bad limit '%s'", s);
	*colon = '\0';
	if (strcmp(s, "depth") == 0)
		*kind = PF_LIMIT_DEPTH;
	else if (strcmp(s, "nodes") == 0)
		*kind = PF_LIMIT_NODES;
	else if (strcmp(s, "movetime") == 0)
		*kind = PF_LIMIT_MOVETIME;
	else
		fail("bad limit kind '%s'", s);
	*v = unum(colon + 1, "limit");
}

static void
add_eval(pf_extbuf *x, char *v, char *wdl, const pf_board *b,
    const char *best)
{
	pf_eval e;
	char *at = strchr(v, '@');

	memset(&e, 0, sizeof(e));
	if (best != NULL) {
		if (b == NULL)
			fail("best= needs a FEN (and no pos=)");
		e.best = uci_move(b, best, strlen(best));
		e.pv[0] = e.best;
		e.pv_len = 1;
	}
	e.source = PF_SRC_ENGINE;
	e.multipv = 1;
	if (at != NULL) {
		*at = '\0';
		limit(at + 1, &e.limit_kind, &e.limit);
		if (e.limit_kind == PF_LIMIT_DEPTH)
			e.depth = (uint16_t)e.limit;
	}
	score(v, &e.score_kind, &e.score);
	if (wdl != NULL) {
		unsigned w, d, l;
		char c;

		if (sscanf(wdl, "%u,%u,%u%c", &w, &d, &l, &c) != 3 ||
		    w > 1000 || d > 1000 || l > 1000)
			fail("bad wdl '%s'", wdl);
		e.wdl[0] = (uint16_t)w, e.wdl[1] = (uint16_t)d;
		e.wdl[2] = (uint16_t)l;
		e.flags |= PF_EVF_WDL;
	}
	if (pf_eval_encode(&e, x) == -1)
		fail("out of memory");
}

static void
add_scores(pf_extbuf *x, const pf_board *b, char *v)
{
	static pf_movescores s;
	pf_move legal[PF_MAX_MOVES];
	char *at = strrchr(v, '@'), *item, *save = NULL;

	memset(&s, 0, sizeof(s));
	if (at != NULL) {
		*at = '\0';
		limit(at + 1, &s.limit_kind, &s.limit);
		if (s.limit_kind == PF_LIMIT_DEPTH)
			s.depth = (uint16_t)s.limit;
	}
	for (item = strtok_r(v, ",", &save); item != NULL;
	    item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');

		if (colon == NULL || s.n == PF_MAX_MOVES)
			fail("bad scores entry '%s'", item);
		s.m[s.n].move = uci_move(b, item, (size_t)(colon - item));
		score(colon + 1, &s.m[s.n].score_kind, &s.m[s.n].score);
		s.m[s.n].depth = (uint8_t)s.depth;
		s.n++;
	}
	if (s.n == pf_gen_legal(b, legal))
		s.flags |= PF_MSF_COMPLETE;
	if (pf_movescores_encode(&s, x) == -1)
		fail("out of memory");
}

static void
add_raw(pf_extbuf *x, char *v)
{
	static uint8_t payload[1 << 16];
	char *colon = strchr(v, ':');
	size_t n;
	uint8_t *p;

	if (colon == NULL)
		fail("bad ext '%s'", v);
	*colon = '\0';
	n = unhex(colon + 1, payload, sizeof(payload), "ext");
	p = pf_extbuf_add(x, (uint16_t)num(v, 1, 0xffff, "ext type"),
	    (uint32_t)n);
	if (p == NULL)
		fail("out of memory");
	if (n > 0)
		memcpy(p, payload, n);
}

static uint16_t
default_flags(const pf_board *b)
{
	uint16_t f = 0;

	if (pf_in_check(b))
		f |= PF_RF_CHECK;
	switch (pf_board_status(b)) {
	case PF_CHECKMATE:
		f |= PF_RF_MATE;
		break;
	case PF_STALEMATE:
		f |= PF_RF_STALEMATE;
		break;
	default:
		break;
	}
	if (b->chess960)
		f |= PF_RF_CHESS960;
	if (pf_insufficient_material(b))
		f |= PF_RF_INSUFFICIENT;
	return f;
}

/* Parse one line into rec (ext bytes in x) and put it. */
static void
line_to_record(char *line, pf_writer *w, pf_extbuf *x)
{
	char fen[512] = "", err[200], *words[64], *save = NULL, *t;
	pf_record rec;
	pf_board b;
	int nw = 0, i, have_board = 1;

	for (t = strtok_r(line, " \t\r\n", &save); t != NULL;
	    t = strtok_r(NULL, " \t\r\n", &save)) {
		if (nw == 64)
			fail("too many words");
		words[nw++] = t;
	}
	if (nw == 0 || words[0][0] == '#')
		return;
	memset(&rec, 0, sizeof(rec));
	pf_extbuf_reset(x);
	for (i = 0; i < nw && strchr(words[i], '=') == NULL; i++) {
		if (strlen(fen) + strlen(words[i]) + 2 > sizeof(fen))
			fail("FEN too long");
		if (i > 0)
			strcat(fen, " ");
		strcat(fen, words[i]);
	}
	if (strcmp(fen, "startpos") == 0)
		pf_board_startpos(&b);
	else if (strcmp(fen, "-") == 0)
		have_board = 0;
	else if (pf_board_from_fen(&b, fen, err, sizeof(err)) == -1)
		fail("bad FEN '%s': %s", fen, err);
	if (have_board) {
		pf_board_pack(&b, rec.pos);
		rec.flags = default_flags(&b);
	}
	for (; i < nw; i++) {
		char *k = words[i], *v = strchr(k, '=');

		if (v == NULL)
			fail("'%s' is not key=value", k);
		*v++ = '\0';
		if (strcmp(k, "game") == 0)
			rec.game_id = unum(v, "game");
		else if (strcmp(k, "ply") == 0)
			rec.ply = (uint16_t)num(v, 0, 65535, "ply");
		else if (strcmp(k, "result") == 0) {
			if (strcmp(v, "1-0") == 0)
				rec.result = PF_RESULT_WHITE;
			else if (strcmp(v, "0-1") == 0)
				rec.result = PF_RESULT_BLACK;
			else if (strcmp(v, "1/2-1/2") == 0)
				rec.result = PF_RESULT_DRAW;
			else if (strcmp(v, "*") == 0)
				rec.result = PF_RESULT_UNKNOWN;
			else
				fail("bad result '%s'", v);
		} else if (strcmp(k, "flags") == 0) {
			rec.flags = (uint16_t)num(v, 0, 0xffff, "flags");
		} else if (strcmp(k, "pos") == 0) {
			if (unhex(v, rec.pos, PF_PACKED_SIZE, "pos") !=
			    PF_PACKED_SIZE)
				fail("pos needs %d bytes", PF_PACKED_SIZE);
			have_board = 0;
		} else if (strcmp(k, "move") == 0 || strcmp(k, "scores") == 0) {
			if (!have_board)
				fail("%s= needs a FEN (and no pos=)", k);
			if (k[0] == 'm')
				rec.move = uci_move(&b, v, strlen(v));
			else
				add_scores(x, &b, v);
		} else if (strcmp(k, "eval") == 0) {
			char *wdl = NULL, *best = NULL;

			if (i + 1 < nw && strncmp(words[i + 1], "wdl=", 4) == 0)
				wdl = words[++i] + 4;
			if (i + 1 < nw && strncmp(words[i + 1], "best=", 5) == 0)
				best = words[++i] + 5;
			add_eval(x, v, wdl, have_board ? &b : NULL, best);
		} else if (strcmp(k, "wdl") == 0 || strcmp(k, "best") == 0)
			fail("%s= must follow an eval=", k);
		else if (strcmp(k, "clock") == 0) {
			pf_clock c;
			char *comma = strchr(v, ',');

			if (comma == NULL)
				fail("bad clock '%s'", v);
			*comma = '\0';
			c.white_ms = strcmp(v, "-") == 0 ? PF_U32_UNKNOWN :
			    (uint32_t)num(v, 0, 0xfffffffeLL, "clock");
			c.black_ms = strcmp(comma + 1, "-") == 0 ?
			    PF_U32_UNKNOWN : (uint32_t)num(comma + 1, 0,
			    0xfffffffeLL, "clock");
			if (pf_clock_encode(&c, x) == -1)
				fail("out of memory");
		} else if (strcmp(k, "meta") == 0) {
			pf_meta m;
			char *f[4], *plus, *save;
			int nf = 0;

			memset(&m, 0, sizeof(m));
			for (char *t = strtok_r(v, ",", &save); t != NULL &&
			    nf < 4; t = strtok_r(NULL, ",", &save))
				f[nf++] = t;
			if (nf != 4)
				fail("bad meta '%s'", v);
			m.white_elo = (uint16_t)num(f[0], 0, 65535, "meta");
			m.black_elo = (uint16_t)num(f[1], 0, 65535, "meta");
			if (strcmp(f[2], "-") == 0)
				m.base_s = PF_U32_UNKNOWN;
			else {
				if ((plus = strchr(f[2], '+')) == NULL)
					fail("bad time control '%s'", f[2]);
				*plus = '\0';
				m.base_s = (uint32_t)num(f[2], 0, 0xfffffffeLL,
				    "meta");
				m.inc_s = (uint32_t)num(plus + 1, 0,
				    0xfffffffeLL, "meta");
			}
			m.termination = (uint8_t)num(f[3], 0, 255, "meta");
			if (pf_meta_encode(&m, x) == -1)
				fail("out of memory");
		} else if (strcmp(k, "ext") == 0)
			add_raw(x, v);
		else
			fail("unknown key '%s'", k);
	}
	rec.ext = x->data;
	rec.ext_len = (uint32_t)x->len;
	if (pf_writer_put(w, &rec) == -1) {
		fprintf(stderr, "mkrec: %s\n", pf_writer_error(w));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	pf_writer_opts o = { .flush_ms = -1 };
	pf_extbuf x = { 0 };
	pf_writer *w;
	char *line = NULL;
	size_t cap = 0;
	int c, each = 0;

	while ((c = getopt(argc, argv, "b:Fz")) != -1) {
		switch (c) {
		case 'b':
			o.block_size = (size_t)num(optarg, 1, PF_BLOCK_MAX,
			    "block size");
			break;
		case 'F':
			each = 1;
			break;
		case 'z':
			o.zstd_level = 3;
			break;
		default:
			fprintf(stderr, "usage: mkrec [-z] [-b bytes] [-F] "
			    "< lines > stream\n");
			return 2;
		}
	}
	if ((w = pf_writer_open_fd(STDOUT_FILENO, "stdout", &o)) == NULL) {
		perror("mkrec");
		return 1;
	}
	while (getline(&line, &cap, stdin) != -1) {
		lineno++;
		line_to_record(line, w, &x);
		if (each && pf_writer_flush(w) == -1)
			break;
	}
	if (pf_writer_close(w) == -1) {
		fprintf(stderr, "mkrec: %s\n", pf_writer_error(w));
		return 1;
	}
	pf_writer_free(w);
	pf_extbuf_free(&x);
	free(line);
	return 0;
}
