/*
 * pgn.c - PGN and EPD game reader (see pgn.h).
 *
 * Speed matters here: pgn2pos is meant to run at millions of positions a
 * second.  The text is scanned in place in the pf_input window (no copy of
 * comments or moves), and ordinary SAN is resolved with one targeted
 * lookup: the candidate pieces are the attackers of the target square
 * (bitboard tables below), and legality is a single "is my king attacked
 * afterwards" test, most often just "is this piece on a line with its
 * king".  Anything unusual (castling, UCI-style moves, odd spellings)
 * falls back to the chess core's lenient pf_move_from_san().  Lichess's
 * "{ [%clk 0:05:00] }" after each move is parsed in one pass
 * (fast_comment), move numbers in one step, and the game id's tag bytes
 * are hashed at once.
 */
#define _GNU_SOURCE	/* memmem */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ext.h"
#include "pgn.h"
#include "record.h"

#define TOKEN_WINDOW	4096		/* bytes wanted before a token */
#define TAG_WINDOW	(64u << 10)	/* bytes wanted before a tag */
#define TOKEN_MAX	64		/* longest movetext token */

struct pf_pgn {
	int format_opt, format;
	pf_pgn_accept_fn accept;
	void *arg;
	pf_input *in;		/* NULL: reading one piece from memory */
	const char *pos, *end;
	int eof;		/* nothing more can be added to the window */
	int soft_end;		/* the piece ends where a game may begin */
	int damaged;		/* the piece ends where a read error cut it */
	int unclean;		/* ... but its last game may go on past it */
	int read_err;
	int done;
	char err[320];
	uint64_t ngames;
	uint64_t line;		/* EPD line number */
	uint64_t newlines;	/* newlines skipped between games */
	int cap;		/* positions allocated in the game arrays */
	int ntags;
	int seen_event;
	int want_hash;
	int mate_moves;		/* pf_pgn_mate_moves */
	int regular;		/* input is a regular file */
	int has_fen;
	int fen_long;		/* the FEN tag did not fit fen[] */
	char fen[256];		/* as long as pf_board_from_fen takes */
	pf_board board;
	pf_board startpos;	/* pf_board_startpos(), made once */
	XXH64_state_t hs;
	size_t idlen;		/* bytes in idbuf, not yet in hs */
	uint8_t idbuf[4096];	/* the game id's tag bytes, hashed at once */
	pf_pgn_game g;
};

/* ---- reader plumbing -------------------------------------------------- */

pf_pgn *
pf_pgn_new(int format, pf_pgn_accept_fn accept, void *arg)
{
	pf_pgn *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	pf_board_startpos(&p->startpos);
	p->format_opt = format;
	p->accept = accept;
	p->arg = arg;
	return p;
}

void
pf_pgn_free(pf_pgn *p)
{
	if (p == NULL)
		return;
	free(p->g.moves);
	free(p->g.eval_kind);
	free(p->g.eval);
	free(p->g.eval_depth);
	free(p->g.clk_ms);
	free(p->g.packed);
	free(p->g.pflags);
	free(p->g.hash);
	free(p);
}

void
pf_pgn_start(pf_pgn *p, pf_input *in)
{
	p->in = in;
	p->regular = pf_input_regular(in);
	p->pos = p->end = NULL;
	p->eof = p->read_err = p->done = 0;
	p->soft_end = p->unclean = 0;
	p->err[0] = '\0';
	p->ngames = 0;
	p->line = 0;
	p->newlines = 0;
	p->format = p->format_opt;
}

void
pf_pgn_start_mem(pf_pgn *p, const char *buf, size_t len, int format,
    int soft_end)
{
	if (buf == NULL)	/* an empty piece */
		buf = "";
	p->in = NULL;
	p->regular = 1;
	p->pos = buf;
	p->end = buf + len;
	p->eof = 1;
	p->read_err = p->done = 0;
	p->soft_end = soft_end;
	p->damaged = 0;
	p->unclean = 0;
	p->err[0] = '\0';
	p->ngames = 0;
	p->line = 0;
	p->newlines = 0;
	p->format = format != PF_PGN_AUTO ? format : p->format_opt;
}

void
pf_pgn_damaged_end(pf_pgn *p)
{
	p->damaged = 1;
}

int
pf_pgn_clean_end(const pf_pgn *p)
{
	return !p->unclean;
}

uint64_t
pf_pgn_newlines(const pf_pgn *p)
{
	return p->newlines;
}

void
pf_pgn_want_hash(pf_pgn *p, int on)
{
	p->want_hash = on;
}

void
pf_pgn_mate_moves(pf_pgn *p, int on)
{
	p->mate_moves = on;
}

const char *
pf_pgn_error(const pf_pgn *p)
{
	return p->err;
}

int
pf_pgn_format(const pf_pgn *p)
{
	return p->format;
}

static void
refill(pf_pgn *p, size_t want)
{
	int r;

	if (p->eof)
		return;
	if (p->in == NULL) {	/* a piece in memory: all of it is there */
		p->eof = 1;
		return;
	}
	r = pf_input_fill(p->in, &p->pos, &p->end, want);
	if (r < 0) {
		p->eof = 1;
		p->read_err = 1;
		snprintf(p->err, sizeof(p->err), "%s",
		    pf_input_error(p->in));
	} else if (r == 0)
		p->eof = 1;
}

#define AVAIL(p)	((size_t)((p)->end - (p)->pos))

/*
 * Make at least k bytes available, or all that is left.  From a pipe, a
 * window holding a whole line is enough: every caller needs at most the
 * rest of the line, and waiting for more could stall a pipeline.
 */
static inline void
ensure(pf_pgn *p, size_t k)
{
	if ((p->pos == NULL || AVAIL(p) < k) && !p->eof &&
	    (p->regular || p->pos == NULL ||
	    memchr(p->pos, '\n', AVAIL(p)) == NULL))
		refill(p, PF_INPUT_KEEP);
	if (p->pos == NULL)
		p->pos = p->end = "";
}

static int
grow(pf_pgn *p, int need)
{
	pf_pgn_game *g = &p->g;
	int cap = p->cap ? p->cap : 256;
	void *a, *b, *c, *d, *e, *f, *h, *k;

	while (cap < need)
		cap *= 2;
	if (cap > PF_PGN_MAX_PLIES + 1)
		cap = PF_PGN_MAX_PLIES + 1;
	a = realloc(g->moves, cap * sizeof(*g->moves));
	if (a != NULL)
		g->moves = a;
	b = realloc(g->eval_kind, cap * sizeof(*g->eval_kind));
	if (b != NULL)
		g->eval_kind = b;
	c = realloc(g->eval, cap * sizeof(*g->eval));
	if (c != NULL)
		g->eval = c;
	d = realloc(g->eval_depth, cap * sizeof(*g->eval_depth));
	if (d != NULL)
		g->eval_depth = d;
	e = realloc(g->clk_ms, cap * sizeof(*g->clk_ms));
	if (e != NULL)
		g->clk_ms = e;
	f = realloc(g->packed, cap * (size_t)PF_PACKED_SIZE);
	if (f != NULL)
		g->packed = f;
	h = realloc(g->pflags, cap * sizeof(*g->pflags));
	if (h != NULL)
		g->pflags = h;
	k = realloc(g->hash, cap * sizeof(*g->hash));
	if (k != NULL)
		g->hash = k;
	if (a == NULL || b == NULL || c == NULL || d == NULL || e == NULL ||
	    f == NULL || h == NULL || k == NULL)
		return -1;
	p->cap = cap;
	return 0;
}

static void
set_text(pf_pgn_game *g, const char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n && o < PF_PGN_TEXT_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		g->text[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (i < n) {
		memcpy(g->text + o, "...", 3);
		o += 3;
	}
	g->text[o] = '\0';
}

static void
problem(pf_pgn_game *g, int what, const char *s, size_t n)
{
	if (g->problem)
		return;
	g->problem = what;
	set_text(g, s, n);
}

static void
game_reset(pf_pgn *p)
{
	pf_pgn_game *g = &p->g;

	g->number = ++p->ngames;
	g->line = p->line;
	g->id = 0;
	g->nmoves = 0;
	g->has_eval = g->has_clk = 0;
	g->white_elo = g->black_elo = 0;
	g->base_s = g->inc_s = PF_U32_UNKNOWN;
	g->tc_class = PF_TC_UNKNOWN;
	g->termination = PF_TERM_UNKNOWN;
	g->result_tag = g->result_marker = PF_RESULT_UNKNOWN;
	g->has_marker = 0;
	g->event.len = g->site.len = g->white.len = g->black.len = 0;
	g->date.len = g->term_text.len = g->variant.len = 0;
	g->event.s[0] = g->site.s[0] = g->white.s[0] = g->black.s[0] = '\0';
	g->date.s[0] = g->term_text.s[0] = g->variant.s[0] = '\0';
	g->bad_evals = 0;
	g->problem = PF_PGNP_NONE;
	g->skip = g->filtered = g->stray = 0;
	g->text[0] = '\0';
	g->detail[0] = '\0';
	p->ntags = 0;
	p->seen_event = 0;
	p->has_fen = p->fen_long = 0;
	XXH64_reset(&p->hs, 0);
	p->idlen = 0;
	g->eval_kind[0] = PF_PGN_EVAL_NONE;
	g->clk_ms[0] = PF_U32_UNKNOWN;
	g->eval[0] = 0;
	g->eval_depth[0] = 0;
}

static inline int
is_space(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' ||
	    c == '\f' || c == 0x1a;
}

/*
 * The blanks between games: white space and byte-order marks (a line
 * that starts with '%' is blank too, an escape: each caller skips it its
 * own way).  The length of the one at s (before e), else 0.
 */
static inline size_t
blank_len(const char *s, const char *e)
{
	if (is_space((unsigned char)*s))
		return 1;
	return (unsigned char)s[0] == 0xef && e - s >= 3 &&
	    (unsigned char)s[1] == 0xbb && (unsigned char)s[2] == 0xbf ? 3 : 0;
}

static inline int
is_binary(unsigned char c)
{
	return (c < 0x20 && !is_space(c)) || c == 0x7f;
}

/*
 * Line ends: LF, CRLF, or a CR alone (old Mac files), in any mix.  The
 * first '\n' or '\r' in [s, e), or NULL: two memchr over a stretch of
 * at most 256 bytes at a time, so that neither runs far past the line.
 */
static const char *
eol(const char *s, const char *e)
{
	while (s < e) {
		size_t n = e - s < 256 ? (size_t)(e - s) : 256;
		const char *lf = memchr(s, '\n', n), *cr;

		if ((cr = memchr(s, '\r', lf != NULL ?
		    (size_t)(lf - s) : n)) != NULL)
			return cr;
		if (lf != NULL)
			return lf;
		s += n;
	}
	return NULL;
}

/* The first line start after the line end at s (before e): past "\r\n"
   whole. */
static inline const char *
after_eol(const char *s, const char *e)
{
	return s + 1 + (*s == '\r' && s + 1 < e && s[1] == '\n');
}

/* Skip to just after the next line end, "\r\n" whole (or the end of
   input). */
static void
skip_line(pf_pgn *p)
{
	for (;;) {
		const char *nl;

		ensure(p, 1);
		if (AVAIL(p) == 0)
			return;
		if ((nl = eol(p->pos, p->end)) == NULL)
			p->pos = p->end;
		else if (nl + 1 < p->end || p->eof) {
			p->pos = after_eol(nl, p->end);
			return;
		} else
			p->pos = nl;	/* a '\r' last: is a '\n' next? */
		refill(p, PF_INPUT_KEEP);
	}
}

/*
 * Skip whitespace, byte-order marks, % escape lines and # comment lines
 * (EPD's; in PGN, where nothing starts with #, too: so that the first
 * line of text decides the format, as pf_pgn_sniff decides it, and a
 * piece of pgn2pos -j reads them as one reader does).
 */
static void
skip_blank(pf_pgn *p)
{
	for (;;) {
		unsigned char c;
		size_t k;

		ensure(p, 4);
		if (AVAIL(p) == 0)
			return;
		c = (unsigned char)*p->pos;
		if (c == '\n') {
			p->newlines++;
			p->pos++;
		} else if (c == '\r') {
			/* a line end alone; before a '\n', that one is */
			p->pos++;
			if (AVAIL(p) == 0 || *p->pos != '\n')
				p->newlines++;
		} else if ((k = blank_len(p->pos, p->end)) > 0)
			p->pos += k;
		else if (c == '%' || c == '#') {
			skip_line(p);
			p->newlines++;
		} else
			return;
	}
}

/*
 * Binary data: skip to the next line that starts with '[' (the next
 * game's tags) or the end of input.  (After a '\r' a '\n' is no '[':
 * the line starts after it.)
 */
static void
skip_to_next_tag(pf_pgn *p)
{
	for (;;) {
		const char *nl;

		ensure(p, 2);
		if (AVAIL(p) < 2) {
			p->pos = p->end;
			return;
		}
		nl = eol(p->pos, p->end - 1);
		if (nl == NULL) {
			p->pos = p->end - 1;
			refill(p, PF_INPUT_KEEP);
			continue;
		}
		p->pos = nl + 1;
		if (*p->pos == '[')
			return;
	}
}

/* ---- tags ------------------------------------------------------------- */

/* A tag value into d.  Copied eight bytes a step: GCC makes the memcpy
   of at most 255 bytes a REP MOVSQ, whose start-up costs more than the
   copy of a name or a date. */
static void
put_str(pf_pgn_str *d, const char *s, size_t n)
{
	size_t i;

	if (n > PF_PGN_STR_MAX)
		n = PF_PGN_STR_MAX;
	for (i = 0; i + 8 <= n; i += 8)
		memcpy(d->s + i, s + i, 8);
	if (n >= 8)
		memcpy(d->s + n - 8, s + n - 8, 8);
	else
		for (; i < n; i++)
			d->s[i] = s[i];
	d->s[n] = '\0';
	d->len = (uint16_t)n;
}

static uint16_t
parse_elo(const char *s, size_t n)
{
	unsigned v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v > 65535 ? 65535 : (uint16_t)v;
}

/* Digits s[*i..] as a number; -1 if none or too large. */
static long
parse_uint(const char *s, size_t n, size_t *i)
{
	long v = 0;
	size_t start = *i;

	while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
		v = v * 10 + (s[*i] - '0');
		if (v > 100000000L)
			return -1;
		(*i)++;
	}
	return *i == start ? -1 : v;
}

int
pf_tc_class(uint32_t base_s, uint32_t inc_s)
{
	double est;

	if (base_s == PF_U32_UNKNOWN)
		return PF_TC_UNKNOWN;
	est = (double)base_s + 40.0 * (double)(inc_s == PF_U32_UNKNOWN ? 0 :
	    inc_s);
	/* scalachess Speed: ultraBullet 0 to 29 s, bullet 30 to 179,
	   blitz 180 to 479, rapid 480 to 1499, classical from 1500
	   (inclusive ranges; Lichess's FAQ words them as "< 29" etc.). */
	if (est < 30)
		return PF_TC_ULTRABULLET;
	if (est < 180)
		return PF_TC_BULLET;
	if (est < 480)
		return PF_TC_BLITZ;
	if (est < 1500)
		return PF_TC_RAPID;
	return PF_TC_CLASSICAL;
}

const char *
pf_tc_name(int c)
{
	static const char *names[] = { "unknown", "ultrabullet", "bullet",
	    "blitz", "rapid", "classical", "correspondence" };

	return c >= 0 && c <= PF_TC_CORRESPONDENCE ? names[c] : "unknown";
}

/* TimeControl: "300+3", "600", "-", "40/7200:3600", "?". */
static void
parse_tc(pf_pgn_game *g, const char *s, size_t n)
{
	size_t i = 0;
	long base, inc = 0;

	if (n == 1 && s[0] == '-') {
		g->tc_class = PF_TC_CORRESPONDENCE;
		return;
	}
	base = parse_uint(s, n, &i);
	if (base < 0)
		return;
	if (i < n && s[i] == '/') {	/* moves/seconds: use the seconds */
		long moves = base;

		i++;
		if ((base = parse_uint(s, n, &i)) < 0)
			return;
		/* a day or more a move ("1/86400", as Chess.com writes
		   its Daily games): correspondence */
		if (moves > 0 && base / moves >= 86400) {
			g->base_s = (uint32_t)base;
			g->tc_class = PF_TC_CORRESPONDENCE;
			return;
		}
	}
	if (i < n && s[i] == '+') {
		i++;
		if ((inc = parse_uint(s, n, &i)) < 0)
			return;
	}
	if (i < n && s[i] != ':')
		return;
	g->base_s = (uint32_t)base;
	g->inc_s = (uint32_t)inc;
	g->tc_class = pf_tc_class(g->base_s, g->inc_s);
}

static uint8_t
parse_result(const char *s, size_t n)
{
	if (n == 3 && memcmp(s, "1-0", 3) == 0)
		return PF_RESULT_WHITE;
	if (n == 3 && memcmp(s, "0-1", 3) == 0)
		return PF_RESULT_BLACK;
	if ((n == 7 && memcmp(s, "1/2-1/2", 7) == 0) ||
	    (n == 3 && memcmp(s, "1/2", 3) == 0))
		return PF_RESULT_DRAW;
	return PF_RESULT_UNKNOWN;
}

/*
 * Chess.com's sentences: "X won on time", "Game drawn by timeout vs
 * insufficient material" (time), "X won - game abandoned" (abandoned),
 * and "X won by resignation", "... by checkmate", "Game drawn by
 * agreement", "... by repetition", "... by stalemate", "... by
 * insufficient material", "... by 50-move rule" (normal).
 */
static uint8_t
term_phrase(const char *s, size_t n)
{
	static const struct {
		const char *words;
		uint8_t code;
	} phrase[] = {
		{ " on time", PF_TERM_TIME },
		{ " by timeout", PF_TERM_TIME },
		{ " game abandoned", PF_TERM_ABANDONED },
		{ " by resignation", PF_TERM_NORMAL },
		{ " by checkmate", PF_TERM_NORMAL },
		{ " by agreement", PF_TERM_NORMAL },
		{ " by repetition", PF_TERM_NORMAL },
		{ " by stalemate", PF_TERM_NORMAL },
		{ " by insufficient material", PF_TERM_NORMAL },
		{ " by 50-move rule", PF_TERM_NORMAL },
	};
	size_t i, k, len;

	for (k = 0; k < sizeof(phrase) / sizeof(phrase[0]); k++) {
		len = strlen(phrase[k].words);
		for (i = 0; i + len <= n; i++)
			if (strncasecmp(s + i, phrase[k].words, len) == 0)
				return phrase[k].code;
	}
	return PF_TERM_OTHER;
}

static uint8_t
term_code(const char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && strncasecmp(s, lit, n) == 0)
	if (n == 0)
		return PF_TERM_UNKNOWN;
	if (IS("Normal"))
		return PF_TERM_NORMAL;
	if (IS("Time forfeit") || IS("Time"))
		return PF_TERM_TIME;
	if (IS("Abandoned"))
		return PF_TERM_ABANDONED;
	if (IS("Rules infraction"))
		return PF_TERM_RULES;
	if (IS("Unterminated"))
		return PF_TERM_UNTERMINATED;
	return term_phrase(s, n);
#undef IS
}

/* 0 standard, 1 Chess960, -1 another variant. */
static int
variant_kind(const char *s, size_t n)
{
	char k[32];
	size_t i, o = 0;

	for (i = 0; i < n && o < sizeof(k) - 1; i++)
		if (isalnum((unsigned char)s[i]))
			k[o++] = (char)tolower((unsigned char)s[i]);
	k[o] = '\0';
	if (o == 0 || strcmp(k, "standard") == 0 || strcmp(k, "chess") == 0 ||
	    strcmp(k, "normal") == 0 || strcmp(k, "fromposition") == 0)
		return 0;
	if (strcmp(k, "chess960") == 0 || strcmp(k, "960") == 0 ||
	    strcmp(k, "fischerandom") == 0 || strcmp(k, "fischerrandom") == 0 ||
	    strcmp(k, "frc") == 0)
		return 1;
	return -1;
}

static void
handle_tag(pf_pgn *p, const char *name, size_t nl, const char *v, size_t vl)
{
	pf_pgn_game *g = &p->g;

#define NAME(lit) (nl == sizeof(lit) - 1 && memcmp(name, lit, nl) == 0)
	/* The id hashes name NUL value NUL of every tag: gathered in idbuf
	   and hashed in one go (the same bytes, the same hash). */
	if (nl + vl + 2 > sizeof(p->idbuf) - p->idlen) {
		XXH64_update(&p->hs, p->idbuf, p->idlen);
		p->idlen = 0;
	}
	if (nl + vl + 2 <= sizeof(p->idbuf)) {
		uint8_t *d = p->idbuf + p->idlen;

		memcpy(d, name, nl);
		d[nl] = '\0';
		memcpy(d + nl + 1, v, vl);
		d[nl + 1 + vl] = '\0';
		p->idlen += nl + vl + 2;
	} else {
		/* Longer than idbuf: hashed as it stands.  (Each NUL from
		   32 bytes into zeros: xxhash.h's inline update computes
		   end - 32, which GCC -O3 reports out of bounds of a
		   one-byte literal.) */
		static const uint8_t zeros[33];

		XXH64_update(&p->hs, name, nl);
		XXH64_update(&p->hs, zeros + 32, 1);
		XXH64_update(&p->hs, v, vl);
		XXH64_update(&p->hs, zeros + 32, 1);
	}
	p->ntags++;
	switch (name[0]) {
	case 'B':
		if (NAME("BlackElo"))
			g->black_elo = parse_elo(v, vl);
		else if (NAME("Black"))
			put_str(&g->black, v, vl);
		break;
	case 'D':
		if (NAME("Date"))
			put_str(&g->date, v, vl);
		break;
	case 'E':
		if (NAME("Event"))
			put_str(&g->event, v, vl);
		break;
	case 'F':
		if (NAME("FEN")) {
			p->fen_long = vl >= sizeof(p->fen);
			if (vl >= sizeof(p->fen))
				vl = sizeof(p->fen) - 1;
			memcpy(p->fen, v, vl);
			p->fen[vl] = '\0';
			p->has_fen = 1;
		}
		break;
	case 'R':
		if (NAME("Result"))
			g->result_tag = parse_result(v, vl);
		break;
	case 'S':
		if (NAME("Site"))
			put_str(&g->site, v, vl);
		break;
	case 'T':
		if (NAME("TimeControl"))
			parse_tc(g, v, vl);
		else if (NAME("Termination")) {
			put_str(&g->term_text, v, vl);
			g->termination = term_code(v, vl);
		}
		break;
	case 'V':
		if (NAME("Variant"))
			put_str(&g->variant, v, vl);
		break;
	case 'W':
		if (NAME("WhiteElo"))
			g->white_elo = parse_elo(v, vl);
		else if (NAME("White"))
			put_str(&g->white, v, vl);
		break;
	}
#undef NAME
}

/* Letters and digits (isalnum() in the C locale): tag names, moves and
   move numbers start with them. */
static const uint8_t alnum[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

/* Bytes a tag value's scan must look at. */
static const uint8_t tag_value_stop[256] = {
	[0] = 1, ['\n'] = 1, ['\r'] = 1, ['"'] = 1, ['\\'] = 1,
};

/*
 * A tag whose value [vs, vs + vl) holds escapes: handle_tag is given it
 * unescaped whole (it is read within TAG_WINDOW bytes), so that the game
 * id hashes all of it, as it hashes a value without escapes; only \" and
 * \\ are escapes, a '\' before anything else is itself.
 */
static void __attribute__((noinline))
handle_escaped_tag(pf_pgn *p, const char *name, size_t nl, const char *vs,
    size_t vl)
{
	char val[TAG_WINDOW];
	size_t i, o = 0;

	for (i = 0; i < vl && o < sizeof(val); i++) {
		if (vs[i] == '\\' && i + 1 < vl &&
		    (vs[i + 1] == '"' || vs[i + 1] == '\\'))
			i++;
		val[o++] = vs[i];
	}
	handle_tag(p, name, nl, val, o);
}

/*
 * One tag at p->pos ('[').  Returns 1 when parsed, 0 when it starts the
 * next game (a second [Event]), -1 on a bad tag (the line is skipped).
 */
static int
parse_tag(pf_pgn *p)
{
	const char *s, *e, *name, *vs;
	size_t nl, vl = 0;
	int escaped = 0, long_tag;

	ensure(p, TAG_WINDOW);
	s = p->pos + 1;
	/* A tag is read within TAG_WINDOW bytes, however much more the
	   window holds: the result never depends on where reads fell. */
	e = AVAIL(p) > TAG_WINDOW ? p->pos + TAG_WINDOW : p->end;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	name = s;
	while (s < e && (alnum[(unsigned char)*s] || *s == '_'))
		s++;
	nl = (size_t)(s - name);
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	/* reaching e short of the input's end: longer than the window */
	long_tag = AVAIL(p) >= TAG_WINDOW;
	if (nl == 0 || s >= e || *s != '"') {
		problem(&p->g, s >= e && long_tag ? PF_PGNP_TAG_LONG :
		    s >= e || *s == '\n' || *s == '\r' ?
		    PF_PGNP_TAG : PF_PGNP_BADTAG, p->pos,
		    (size_t)((s < e ? s + 1 : s) - p->pos));
		goto bad;
	}
	if (nl == 5 && memcmp(name, "Event", 5) == 0) {
		if (p->seen_event)
			return 0;
		p->seen_event = 1;
	}
	vs = ++s;
	for (; s < e && *s != '"'; s++) {
		while (s < e && !tag_value_stop[(unsigned char)*s])
			s++;
		if (s >= e || *s == '"')
			break;
		if (*s == '\n' || *s == '\r' || *s == '\0')
			break;
		if (*s == '\\' && s + 1 < e && (s[1] == '"' || s[1] == '\\')) {
			escaped = 1;
			s++;
		}
	}
	if (s >= e || *s != '"') {
		problem(&p->g, s >= e && long_tag ? PF_PGNP_TAG_LONG :
		    PF_PGNP_TAG, p->pos, (size_t)(s - p->pos));
		goto bad;
	}
	vl = (size_t)(s - vs);
	s++;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= e || *s != ']') {
		problem(&p->g, s >= e && long_tag ? PF_PGNP_TAG_LONG :
		    s >= e || *s == '\n' || *s == '\r' ?
		    PF_PGNP_TAG : PF_PGNP_BADTAG, p->pos, (size_t)(s - p->pos));
		goto bad;
	}
	p->pos = s + 1;
	if (escaped)
		handle_escaped_tag(p, name, nl, vs, vl);
	else
		handle_tag(p, name, nl, vs, vl);
	return 1;
bad:
	p->g.skip = 1;
	skip_line(p);
	return -1;
}

/* ---- annotations ------------------------------------------------------ */

/*
 * An evaluation that does not fit the record (score beyond an i32,
 * depth beyond a u16) is dropped, and counted in the game with the first
 * one's text, for the caller to report; the game is kept.
 */
static void
bad_eval(pf_pgn_game *g, int idx, const char *what, const char *s,
    const char *e)
{
	size_t n = strlen(what), i;

	if (g->bad_evals++ > 0)
		return;
	g->bad_eval_ply = idx;
	memcpy(g->bad_eval_text, what, n);
	for (i = 0; s + i < e && n < sizeof(g->bad_eval_text) - 4; i++) {
		unsigned char c = (unsigned char)s[i];

		g->bad_eval_text[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (s + i < e) {
		memcpy(g->bad_eval_text + n, "...", 3);
		n += 3;
	}
	g->bad_eval_text[n] = '\0';
}

#define EVAL_MAX	INT32_MAX	/* centipawns or moves to mate */

/* "0.17", "-1.5", "#-3", "#3" with an optional ",23" depth. */
static void
parse_eval(pf_pgn_game *g, int idx, const char *s, const char *e)
{
	const char *text;
	int neg = 0, mate = 0, digits = 0;
	uint64_t ip = 0, frac = 0, v, depth = 0;

	while (s < e && *s == ' ')
		s++;
	text = s;
	if (s < e && *s == '#') {
		mate = 1;
		s++;
	}
	if (s < e && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
	}
	/* past EVAL_MAX the digits only count (ip stays above it) */
	while (s < e && *s >= '0' && *s <= '9') {
		if (ip <= EVAL_MAX)
			ip = ip * 10 + (uint64_t)(*s - '0');
		s++;
		digits++;
	}
	if (!mate && s < e && *s == '.') {
		int fd = 0;

		s++;
		while (s < e && *s >= '0' && *s <= '9') {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				fd++;
			}
			s++;
			digits++;
		}
		while (fd < 3) {
			frac *= 10;
			fd++;
		}
	}
	if (digits == 0)
		return;
	if (s < e && *s == ',') {
		s++;
		while (s < e && *s >= '0' && *s <= '9') {
			if (depth <= UINT16_MAX)
				depth = depth * 10 + (uint64_t)(*s - '0');
			s++;
		}
	}
	if (mate)
		v = ip;
	else
		v = ip * 100 + (frac + 5) / 10;	/* millipawns -> cp */
	if (v > EVAL_MAX || depth > UINT16_MAX) {
		bad_eval(g, idx, "%eval ", text, e);
		return;
	}
	g->eval_kind[idx] = mate ? PF_PGN_EVAL_MATE : PF_PGN_EVAL_CP;
	g->eval[idx] = (int32_t)(neg ? -(int64_t)v : (int64_t)v);
	g->eval_depth[idx] = (uint16_t)depth;
	g->has_eval = 1;
}

/* "0:05:00", "1:23:45.6", "45.2" -> ms. */
static void
parse_clk(pf_pgn_game *g, int idx, const char *s, const char *e)
{
	uint64_t parts[3] = { 0, 0, 0 };
	int np = 0, any = 0;
	uint64_t ms = 0, frac = 0, fscale = 1;

	while (s < e && *s == ' ')
		s++;
	for (;;) {
		uint64_t v = 0;

		while (s < e && *s >= '0' && *s <= '9' && v < 100000000) {
			v = v * 10 + (uint64_t)(*s++ - '0');
			any = 1;
		}
		parts[np++] = v;
		if (s < e && *s == ':' && np < 3) {
			s++;
			continue;
		}
		break;
	}
	if (!any)
		return;
	if (s < e && *s == '.') {
		s++;
		while (s < e && *s >= '0' && *s <= '9' && fscale < 1000) {
			frac = frac * 10 + (uint64_t)(*s++ - '0');
			fscale *= 10;
		}
	}
	if (np == 3)
		ms = (parts[0] * 3600 + parts[1] * 60 + parts[2]) * 1000;
	else if (np == 2)
		ms = (parts[0] * 60 + parts[1]) * 1000;
	else
		ms = parts[0] * 1000;
	ms += frac * 1000 / fscale;
	if (ms >= PF_U32_UNKNOWN)
		ms = PF_U32_UNKNOWN - 1;
	g->clk_ms[idx] = (uint32_t)ms;
	g->has_clk = 1;
}

/*
 * An engine match's comment on the move before position idx, as
 * cutechess and fastchess write it: "+0.56/18 1.2s", "-M5/20 0.3s",
 * "0.00/1 0s, tl=..." (the score from the view of the side that moved,
 * in pawns or M and the distance to mate, then "/" and the depth).  M
 * counts plies (cutechess) or, with mate_moves, moves (fastchess).  Sets
 * the evaluation of position idx, in White's view and mate in moves as
 * parse_eval does; anything else is not such a comment and sets nothing.
 */
static void
parse_engine_comment(pf_pgn_game *g, int idx, int mate_moves, const char *s,
    const char *e)
{
	const char *text;
	int neg = 0, mate = 0, digits = 0, fd = 0, stm_white;
	uint64_t ip = 0, frac = 0, depth = 0, v;
	int64_t sv;

	while (s < e && (*s == ' ' || *s == '\n' || *s == '\r' ||
	    *s == '\t'))
		s++;
	text = s;
	if (s < e && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	if (s < e && *s == 'M') {
		mate = 1;
		s++;
	}
	for (; s < e && *s >= '0' && *s <= '9'; s++, digits++)
		if (ip <= EVAL_MAX)
			ip = ip * 10 + (uint64_t)(*s - '0');
	if (!mate) {
		/* pawns with decimals: "1/2" is no score */
		if (s >= e || *s != '.')
			return;
		for (s++; s < e && *s >= '0' && *s <= '9'; s++, fd++)
			if (fd < 3)
				frac = frac * 10 + (uint64_t)(*s - '0');
		if (fd == 0)
			return;
		for (; fd < 3; fd++)
			frac *= 10;
	}
	if (digits == 0 || s >= e || *s++ != '/' || s >= e ||
	    *s < '0' || *s > '9' || idx == 0)
		return;
	for (; s < e && *s >= '0' && *s <= '9'; s++)
		if (depth <= UINT16_MAX)
			depth = depth * 10 + (uint64_t)(*s - '0');
	/* depth 0: no search (an engine that sent no score) */
	if ((s < e && *s != ' ' && *s != ',' && *s != '\n' && *s != '\r' &&
	    *s != '\t') || depth == 0)
		return;
	v = mate ? ip : ip * 100 + (frac + 5) / 10;	/* millipawns -> cp */
	if (v > EVAL_MAX || depth > UINT16_MAX) {
		bad_eval(g, idx, "", text, s);
		return;
	}
	if (mate) {
		/* the mover mates in n moves, or is mated in n */
		uint64_t n = mate_moves ? v : neg ? v / 2 : (v + 1) / 2;

		if (n == 0 || (!neg && n == 1))
			return;	/* none, or the move mated */
		/* for the side to move now: mated in n - 1, or mates in n */
		sv = neg ? (int64_t)n : -(int64_t)(n - 1);
	} else
		sv = neg ? (int64_t)v : -(int64_t)v;
	stm_white = (g->start.stm == PF_WHITE) == !(idx & 1);
	g->eval_kind[idx] = mate ? PF_PGN_EVAL_MATE : PF_PGN_EVAL_CP;
	g->eval[idx] = (int32_t)(stm_white ? sv : -sv);
	g->eval_depth[idx] = (uint16_t)depth;
	g->has_eval = 1;
}

/* Find [%eval ...] and [%clk ...] in a comment body, or an engine
   match's evaluation. */
static void
parse_annotations(pf_pgn_game *g, int idx, int mate_moves, const char *s,
    const char *e)
{
	parse_engine_comment(g, idx, mate_moves, s, e);
	for (;;) {
		const char *close;

		while (s < e && *s != '[')
			s++;
		if (s >= e)
			return;
		s++;
		if (s >= e || *s != '%')
			continue;
		s++;
		for (close = s; close < e && *close != ']'; close++)
			;
		if (close >= e)
			return;
		if (close - s > 5 && memcmp(s, "eval ", 5) == 0)
			parse_eval(g, idx, s + 5, close);
		else if (close - s > 4 && memcmp(s, "clk ", 4) == 0)
			parse_clk(g, idx, s + 4, close);
		s = close + 1;
	}
}

/* ---- movetext --------------------------------------------------------- */

static const char next_game[] = "[Event ";

/* Where a comment in [s, e) runs into the next game: the first "[Event "
   at a line start, the line end before it at s or after; NULL if none. */
static const char *
next_game_in(const char *s, const char *e)
{
	const char *r;

	for (; e - s > (ptrdiff_t)sizeof(next_game) - 1; s = r) {
		r = memmem(s + 1, (size_t)(e - s - 1), next_game,
		    sizeof(next_game) - 1);
		if (r == NULL)
			return NULL;
		if (r[-1] == '\n' || r[-1] == '\r')
			return r;
	}
	return NULL;
}

/*
 * p->pos at '{'.  Returns 1 with the body in [*bs, *be) (valid until the
 * next refill) or 0 for an unterminated comment (the reader is then at the
 * next game's "[Event" or at the end of input).
 */
static int
skip_comment(pf_pgn *p, const char **bs, const char **be)
{
	const char *q;
	size_t i, lim;
	int slid = 0;

	p->pos++;
	/* Most comments are short ("{ [%clk 0:05:00] }"): look for the end
	   inline before paying for library calls. */
	lim = AVAIL(p) < 64 ? AVAIL(p) : 64;
	for (i = 0, q = p->pos; i < lim; i++) {
		if (q[i] == '}') {
			*bs = q;
			*be = q + i;
			p->pos = q + i + 1;
			return 1;
		}
		if (q[i] == '\n' || q[i] == '\r')
			break;
	}
	for (;;) {
		const char *q = memchr(p->pos, '}', AVAIL(p)), *r;
		size_t len = q ? (size_t)(q - p->pos) : AVAIL(p);

		if (eol(p->pos, p->pos + len) != NULL &&
		    (r = next_game_in(p->pos, p->pos + len)) != NULL) {
			p->pos = r;
			return 0;
		}
		if (q != NULL) {
			/* A comment longer than half a window is not read
			   for annotations, wherever reads fell. */
			*bs = slid || (size_t)(q - p->pos) > PF_INPUT_KEEP / 2 ?
			    q : p->pos;
			*be = q;
			p->pos = q + 1;
			return 1;
		}
		if (p->eof) {
			p->pos = p->end;
			return 0;
		}
		if (AVAIL(p) >= PF_INPUT_KEEP) {
			/* kept: a line end and "[Event" but its last byte */
			p->pos = p->end - (sizeof(next_game) - 1);
			slid = 1;
		}
		refill(p, PF_INPUT_KEEP);
	}
}

/* p->pos at '('.  Skips to the matching ')'; 0 if a '[' or the end of
   input came first (the game ends there).  Comments, ';' comments and
   '%' escape lines (a '%' that starts a line) are skipped whole: a ')'
   or '(' in them is text. */
static int
skip_variation(pf_pgn *p)
{
	int depth = 0, bol = 0;

	for (;;) {
		const char *bs, *be;
		char c;

		ensure(p, 1);
		if (AVAIL(p) == 0)
			return 0;
		c = *p->pos;
		if (c == '%' && bol) {
			skip_line(p);
			continue;
		}
		bol = 0;
		switch (c) {
		case '(':
			depth++;
			p->pos++;
			break;
		case ')':
			p->pos++;
			if (--depth == 0)
				return 1;
			break;
		case '{':
			if (!skip_comment(p, &bs, &be))
				return 0;
			break;
		case ';':
			skip_line(p);
			bol = 1;
			break;
		case '[':
			return 0;
		default:
			bol = c == '\n' || c == '\r';
			p->pos++;
		}
	}
}


/* Bytes that end a move token: whitespace, PGN punctuation, controls. */
static const uint8_t delim[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1,
	[0x05] = 1, [0x06] = 1, [0x07] = 1, [0x08] = 1, [0x09] = 1,
	[0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1,
	[0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1,
	[0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1,
	[0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1,
	[0x1e] = 1, [0x1f] = 1, [0x7f] = 1,
	[' '] = 1, ['{'] = 1, ['}'] = 1, ['('] = 1, [')'] = 1, [';'] = 1,
	['['] = 1, [']'] = 1, ['$'] = 1, ['*'] = 1, ['.'] = 1, ['%'] = 1,
};

static inline int
is_delim(unsigned char c)
{
	return delim[c];
}

_Static_assert(PF_PGN_CHECK == PF_RF_CHECK &&
    PF_PGN_INSUFFICIENT == PF_RF_INSUFFICIENT, "a position's flags are the "
    "record's");

/*
 * Keep position i (the current board): packed, its check / insufficient
 * material flags, and its hash when asked.  Doing it here, while the
 * board is at hand, saves replaying the game to write it.
 */
static inline void
record_position(pf_pgn *p, int i)
{
	pf_pgn_game *g = &p->g;
	const pf_board *b = &p->board;
	uint8_t *packed = g->packed + (size_t)i * PF_PACKED_SIZE;
	uint16_t f = 0;

	/* After a move: from the position before it, a few nibbles. */
	if (i > 0)
		pf_board_pack_next(packed - PF_PACKED_SIZE, g->moves[i - 1],
		    b, packed);
	else
		pf_board_pack(b, packed);
	if (b->checkers)
		f |= PF_PGN_CHECK;
	if ((b->by_type[PF_PAWN] | b->by_type[PF_ROOK] |
	    b->by_type[PF_QUEEN]) == 0 && pf_insufficient_material(b))
		f |= PF_PGN_INSUFFICIENT;
	g->pflags[i] = f;
	if (p->want_hash)
		g->hash[i] = pf_board_hash(b);
}

/* The marks a move token may end with: check, mate, annotation. */
static const uint8_t san_suffix[256] = {
	['+'] = 1, ['#'] = 1, ['!'] = 1, ['?'] = 1,
};

/*
 * A token that is no move and is passed over (asked only of one that
 * does not play, off the path of every move): a lone en passant mark
 * "ep", and an evaluation symbol as some files write them where PGN has
 * NAGs: "+-", "-+", "=", "+=", "=+", "+/-", "-/+", "+/=", "=/+" (a
 * leading '+' is passed as a check mark is, so "+-" comes here as "-"),
 * and "N" (a novelty).  "--" is not one: it is a null move.
 */
static int
passed_over(const char *s, size_t n)
{
	size_t i;

	/* a lone en passant mark, a novelty */
	if ((n == 2 && s[0] == 'e' && s[1] == 'p') || (n == 1 && s[0] == 'N'))
		return 1;
	if (n > 3 || (n == 2 && s[0] == '-' && s[1] == '-'))
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] != '+' && s[i] != '-' && s[i] != '=' && s[i] != '/')
			return 0;
	return 1;
}

/* Resolve and play one move token; 0 or -1 (illegal). */
static int
play(pf_pgn *p, const char *s, size_t n)
{
	pf_pgn_game *g = &p->g;
	pf_move m;
	pf_undo u;
	int i;

	while (n > 0 && san_suffix[(unsigned char)s[n - 1]])
		n--;
	/* an en passant mark glued to the square: "exd6ep" */
	if (n > 2 && s[n - 2] == 'e' && s[n - 1] == 'p' &&
	    s[n - 3] >= '1' && s[n - 3] <= '8')
		n -= 2;
	if (n == 0 || n > 16 ||
	    pf_move_from_san(&p->board, s, n, &m, NULL, 0) < 0)
		return -1;
	if (g->nmoves >= PF_PGN_MAX_PLIES)
		return -2;
	if (g->nmoves + 2 > p->cap && grow(p, g->nmoves + 2) < 0)
		return -2;
	g->moves[g->nmoves++] = m;
	i = g->nmoves;
	g->eval_kind[i] = PF_PGN_EVAL_NONE;
	g->eval[i] = 0;
	g->eval_depth[i] = 0;
	g->clk_ms[i] = PF_U32_UNKNOWN;
	pf_make_move(&p->board, m, &u);
	record_position(p, i);
	return 0;
}


/*
 * The common Lichess comment, "{ [%clk 0:05:00] }" or "{ [%eval 0.17]
 * [%clk 0:05:00] }": p->pos at '{'.  When the comment is one or more
 * " [%...]" items and then " }" on this line, parse its annotations in
 * this one pass (exactly as skip_comment + parse_annotations would) and
 * return 1 with p->pos after the '}'; else return 0 with nothing changed
 * (the general path takes it).  fast_comment() below; it needs 112 bytes
 * of window (else 0), which keeps every look-ahead here inside it.
 */
#define FAST_ITEMS	4

/* Bytes that stop the scan of an annotation item for its ']'. */
static const uint8_t item_stop[256] = {
	[0] = 1, ['\n'] = 1, ['\r'] = 1, ['['] = 1, [']'] = 1, ['{'] = 1,
	['}'] = 1,
};

static inline int
dig(char c)
{
	return (unsigned)(c - '0') < 10;
}

/* fast_comment() for any such items (at most FAST_ITEMS of them). */
static int __attribute__((noinline))
fast_comment_items(pf_pgn *p, int idx)
{
	const char *s = p->pos + 1, *lim, *is[FAST_ITEMS], *ie[FAST_ITEMS];
	uint32_t clk[FAST_ITEMS];
	int n = 0, k;

	lim = p->pos + 96;	/* s[11], s[2] below stay inside */
	while (s < lim && s[0] == ' ' && s[1] == '[' && s[2] == '%') {
		const char *c;

		if (n == FAST_ITEMS)
			return 0;
		s += 3;
		if (s[11] == ']' && memcmp(s, "clk ", 4) == 0 && s[5] == ':' &&
		    s[8] == ':' && dig(s[4]) && dig(s[6]) && dig(s[7]) &&
		    dig(s[9]) && dig(s[10])) {
			/* "clk H:MM:SS": what parse_clk makes of it */
			clk[n] = (uint32_t)(((s[4] - '0') * 3600 +
			    ((s[6] - '0') * 10 + (s[7] - '0')) * 60 +
			    (s[9] - '0') * 10 + (s[10] - '0')) * 1000);
			is[n] = ie[n] = NULL;
			n++;
			s += 12;
			continue;
		}
		for (c = s; c < lim && !item_stop[(unsigned char)*c]; c++)
			;
		if (c >= lim || *c != ']')
			return 0;
		is[n] = s;
		ie[n++] = c;
		s = c + 1;
	}
	if (s >= lim || s[0] != ' ' || s[1] != '}')
		return 0;
	for (k = 0; k < n; k++) {
		const char *a = is[k], *e = ie[k];

		if (a == NULL) {
			p->g.clk_ms[idx] = clk[k];
			p->g.has_clk = 1;
		} else if (e - a > 5 && memcmp(a, "eval ", 5) == 0)
			parse_eval(&p->g, idx, a + 5, e);
		else if (e - a > 4 && memcmp(a, "clk ", 4) == 0)
			parse_clk(&p->g, idx, a + 4, e);
	}
	p->pos = s + 2;
	return 1;
}

static inline int
fast_comment(pf_pgn *p, int idx)
{
	const char *s = p->pos + 1;

	if (AVAIL(p) < 112)
		return 0;
	if (memcmp(s, " [%clk ", 7) == 0 && s[8] == ':' && s[11] == ':' &&
	    s[14] == ']' && s[15] == ' ' && s[16] == '}' && dig(s[7]) &&
	    dig(s[9]) && dig(s[10]) && dig(s[12]) && dig(s[13])) {
		/* just "{ [%clk H:MM:SS] }", the most common of all */
		p->g.clk_ms[idx] = (uint32_t)(((s[7] - '0') * 3600 +
		    ((s[9] - '0') * 10 + (s[10] - '0')) * 60 +
		    (s[12] - '0') * 10 + (s[13] - '0')) * 1000);
		p->g.has_clk = 1;
		p->pos = s + 17;
		return 1;
	}
	return fast_comment_items(p, idx);
}

static void
parse_movetext(pf_pgn *p)
{
	pf_pgn_game *g = &p->g;
	int resolving = !g->skip && !g->filtered;

	for (;;) {
		const char *s, *bs, *be;
		unsigned char c;
		size_t n, lim;
		int r;

		if (AVAIL(p) < TOKEN_MAX)
			ensure(p, TOKEN_WINDOW);
		if (AVAIL(p) == 0) {
			/* (at a piece's soft end the next game's "[Event"
			   follows: the game ends there as at any tag) */
			if (!g->has_marker && resolving && !p->soft_end &&
			    (p->ntags > 0 || g->nmoves > 0))
				problem(g, PF_PGNP_EOF, "", 0);
			return;
		}
		c = (unsigned char)*p->pos;
		if (alnum[c])	/* a move or a number: none of the cases */
			goto token;
		switch (c) {
		case ' ': case '\n': case '\r': case '\t': case '\v': case '\f':
		case 0x1a: case '.': case '!': case '?': case ')': case ']':
		case '}':
		/* check marks with no move: the rest of a move's suffix past
		   TOKEN_MAX bytes ("Qh5+++..."), or a stray one */
		case '+': case '#':
			p->pos++;
			continue;
		case '{':
			if (resolving && fast_comment(p, g->nmoves))
				continue;
			if (!skip_comment(p, &bs, &be)) {
				if (resolving)
					problem(g, PF_PGNP_COMMENT, "", 0);
				return;
			}
			if (resolving)
				parse_annotations(g, g->nmoves,
				    p->mate_moves, bs, be);
			continue;
		case ';':
		case '%':
			skip_line(p);
			continue;
		case '(':
			if (!skip_variation(p)) {
				if (resolving)
					problem(g, PF_PGNP_VARIATION, "", 0);
				return;
			}
			continue;
		case '$':
			p->pos++;
			while (AVAIL(p) > 0 && *p->pos >= '0' && *p->pos <= '9')
				p->pos++;
			continue;
		case '*':
			p->pos++;
			g->has_marker = 1;
			return;
		case '[':
			return;
		case 0xef:
			if (AVAIL(p) >= 3 && (unsigned char)p->pos[1] == 0xbb &&
			    (unsigned char)p->pos[2] == 0xbf) {
				p->pos += 3;
				continue;
			}
			break;
		}
		if (is_binary(c)) {
			if (resolving)
				problem(g, PF_PGNP_BINARY, "", 0);
			if (g->nmoves == 0 && p->ntags == 0)
				g->skip = 1;
			skip_to_next_tag(p);
			return;
		}
token:
		if (c >= '0' && c <= '9') {
			/* A move number ("12." or "12..."): the digits are a
			   token of their own; the dots and blanks after them
			   are skipped as the loop would skip them. */
			const char *q = p->pos + 1;

			while (q < p->end && *q >= '0' && *q <= '9')
				q++;
			if (q < p->end && *q == '.') {
				/* "12. e4" and "12... e5" at once; then
				   any other run of dots and blanks */
				if (p->end - q >= 5 && q[1] == ' ' &&
				    q[2] != '.' && q[2] != ' ')
					q += 2;
				else if (p->end - q >= 5 && q[1] == '.' &&
				    q[2] == '.' && q[3] == ' ' &&
				    q[4] != '.' && q[4] != ' ')
					q += 4;
				else
					do
						q++;
					while (q < p->end &&
					    (*q == '.' || *q == ' '));
				p->pos = q;
				continue;
			}
		}
		/* A token is at most TOKEN_MAX bytes (the rest is the next
		   token; a suffix of "+#!?" goes on as punctuation): the same
		   cut whatever the window holds. */
		s = p->pos;
		n = 0;
		lim = AVAIL(p) < TOKEN_MAX ? AVAIL(p) : TOKEN_MAX;
		while (n < lim && !is_delim((unsigned char)s[n]))
			n++;
		p->pos = s + n;
		/* An en passant mark, "e.p." or "ep", alone or glued to the
		   move: a '.' ends a token, so "exd6e.p." is read as "exd6e"
		   and then ".p.".  (A token of at most 16 bytes leaves the
		   3 bytes after it in the window whatever it holds.) */
		if (n > 0 && n <= 16 && s[n - 1] == 'e' && AVAIL(p) >= 3 &&
		    memcmp(p->pos, ".p.", 3) == 0) {
			p->pos += 3;
			n--;
		}
		if (n == 0)
			continue;
		if (c >= '0' && c <= '9') {
			uint8_t res = parse_result(s, n);

			if (res != PF_RESULT_UNKNOWN) {
				g->result_marker = res;
				g->has_marker = 1;
				return;
			}
			if (c != '0' || n < 3 || s[1] != '-') {
				/* a move number, maybe glued to the move */
				size_t i = 0;

				while (i < n && s[i] >= '0' && s[i] <= '9')
					i++;
				if (i < n) {
					s += i;
					n -= i;
				} else if (__builtin_expect(c == '0', 0) &&
				    (n == 2 || n == 3) && s[1] == '0' &&
				    s[n - 1] == '0') {
					/* "00", "000": castling as some old
					   databases write it (no move number
					   starts with 0) */
					s = n == 2 ? "O-O" : "O-O-O";
					n = n == 2 ? 3 : 5;
				} else
					continue;
			}
		}
		if (!resolving)
			continue;
		r = play(p, s, n);
		if (r == -1 && passed_over(s, n))
			continue;
		if (r == -1) {
			problem(g, PF_PGNP_ILLEGAL, s, n);
			resolving = 0;
		} else if (r == -2) {
			problem(g, PF_PGNP_TOO_LONG, s, n);
			resolving = 0;
		} else if (AVAIL(p) >= 2 && p->pos[0] == ' ' &&
		    p->pos[1] == '{') {
			/* the usual " { [%clk ...] } " after a move */
			p->pos++;
			if (fast_comment(p, g->nmoves) && AVAIL(p) > 0 &&
			    *p->pos == ' ')
				p->pos++;
		}
	}
	/* NOTREACHED */
}

/* ---- EPD -------------------------------------------------------------- */

/* Does s[0..n) start with a FEN piece-placement field?  1 yes, 0 no,
   -1 not known: s is all such characters, no white space ends them. */
static int
looks_like_fen(const char *s, size_t n)
{
	size_t i;
	int slashes = 0;

	for (i = 0; i < n && !is_space((unsigned char)s[i]); i++) {
		if (s[i] == '/')
			slashes++;
		else if (!strchr("pnbrqkPNBRQK12345678", s[i]) || s[i] == '\0')
			return 0;
	}
	if (i == n)
		return -1;
	return slashes == 7;
}

/*
 * The clocks of an EPD line of four fields from its opcodes hmvc and fmvn
 * (NULL: absent): the FEN read again with them, so that a bad value is a
 * bad FEN.  0, or -1 with the game skipped.
 */
static int
epd_clocks(pf_pgn_game *g, const char *fen4, const char *clk[2],
    const size_t clkl[2])
{
	static const char *const name[2] = { "hmvc", "fmvn" };
	char fen[160], err[128];
	int i, n = snprintf(fen, sizeof(fen), "%s", fen4);
	size_t k;

	for (i = 0; i < 2; i++) {
		for (k = 0; clk[i] != NULL && k < clkl[i] && clk[i][k] >= '0' &&
		    clk[i][k] <= '9'; k++)
			;
		if (clk[i] != NULL && (k == 0 || k < clkl[i] || k > 9)) {
			snprintf(err, sizeof(err), "bad %s '%.*s'", name[i],
			    (int)(clkl[i] < 40 ? clkl[i] : 40), clk[i]);
			break;
		}
		n += snprintf(fen + n, sizeof(fen) - (size_t)n, " %.*s",
		    clk[i] != NULL ? (int)clkl[i] : 1,
		    clk[i] != NULL ? clk[i] : (i == 0 ? "0" : "1"));
	}
	if (i == 2 && pf_board_from_fen(&g->start, fen, err, sizeof(err)) == 0)
		return 0;
	problem(g, PF_PGNP_FEN, fen, strlen(fen));
	snprintf(g->detail, sizeof(g->detail), "%s", err);
	g->skip = 1;
	return -1;
}

/* One EPD line in [s, e) (no newline). */
static void
parse_epd(pf_pgn *p, const char *s, const char *e)
{
	pf_pgn_game *g = &p->g;
	char fen[128], err[128];
	const char *f[6], *c, *clk[2] = { NULL, NULL };
	size_t fl[6], clkl[2] = { 0, 0 };
	int nf = 0, i, ce_bad = 0;
	size_t o = 0;

	while (e > s && is_space((unsigned char)e[-1]))
		e--;
	XXH64_update(&p->hs, s, (size_t)(e - s));
	for (c = s; c < e; c++)
		if (is_binary((unsigned char)*c)) {
			/* a NUL would end the FEN early: no position */
			problem(g, PF_PGNP_FEN, s, (size_t)(e - s));
			snprintf(g->detail, sizeof(g->detail), "control "
			    "character 0x%02x at column %zu",
			    (unsigned char)*c, (size_t)(c - s) + 1);
			g->skip = 1;
			return;
		}
	f[0] = s;
	while (nf < 6) {
		while (s < e && is_space((unsigned char)*s))
			s++;
		if (s >= e)
			break;
		f[nf] = s;
		while (s < e && !is_space((unsigned char)*s) && *s != ';')
			s++;
		fl[nf] = (size_t)(s - f[nf]);
		if (nf >= 4) {
			/* A clock is a number, signed too (the FEN parser
			   then refuses "-1"); anything else starts the
			   opcodes. */
			size_t k = fl[nf] > 1 && (f[nf][0] == '-' ||
			    f[nf][0] == '+');

			while (k < fl[nf] && f[nf][k] >= '0' && f[nf][k] <= '9')
				k++;
			if (k == 0 || k != fl[nf] || f[nf][k - 1] < '0' ||
			    f[nf][k - 1] > '9') {
				s = f[nf];
				break;
			}
		}
		nf++;
	}
	if (nf < 4) {
		problem(g, PF_PGNP_FEN, f[0], (size_t)(e - f[0]));
		snprintf(g->detail, sizeof(g->detail), "FEN needs 4 to 6 "
		    "fields, not %d", nf);
		g->skip = 1;
		return;
	}
	if (nf == 5) {	/* half-move clock alone: ignore it if valid */
		size_t k = 0;

		while (k < fl[4] && f[4][k] >= '0' && f[4][k] <= '9')
			k++;
		if (k == fl[4])
			nf = 4;
	}
	for (i = 0; i < nf; i++) {
		if (o + fl[i] + 2 > sizeof(fen)) {
			problem(g, PF_PGNP_FEN, f[0], (size_t)(e - f[0]));
			snprintf(g->detail, sizeof(g->detail), "FEN too long");
			g->skip = 1;
			return;
		}
		memcpy(fen + o, f[i], fl[i]);
		o += fl[i];
		fen[o++] = ' ';
	}
	fen[o - 1] = '\0';
	if (pf_board_from_fen(&g->start, fen, err, sizeof(err)) < 0) {
		problem(g, PF_PGNP_FEN, fen, strlen(fen));
		snprintf(g->detail, sizeof(g->detail), "%s", err);
		g->skip = 1;
		return;
	}
	/* Opcodes: "ce N" (centipawns, side to move), "acd N" (depth),
	   c9 "result", "hmvc N" and "fmvn N" (the clocks of a line with
	   none); every other opcode is ignored. */
	while (s < e) {
		const char *op, *arg;
		size_t ol, al;

		while (s < e && (is_space((unsigned char)*s) || *s == ';'))
			s++;
		if (s >= e)
			break;
		op = s;
		while (s < e && !is_space((unsigned char)*s) && *s != ';')
			s++;
		ol = (size_t)(s - op);
		while (s < e && is_space((unsigned char)*s))
			s++;
		arg = s;
		if (s < e && *s == '"') {
			arg = ++s;
			while (s < e && *s != '"')
				s++;
			al = (size_t)(s - arg);
			if (s < e)
				s++;
		} else {
			while (s < e && *s != ';')
				s++;
			al = (size_t)(s - arg);
		}
		while (s < e && *s != ';')
			s++;
		if (ol == 2 && memcmp(op, "ce", 2) == 0) {
			size_t k = 0;
			int neg = al > 0 && arg[0] == '-';
			long v = -1;

			k = neg || (al > 0 && arg[0] == '+');
			if (k < al && arg[k] >= '0' && arg[k] <= '9' &&
			    ((v = parse_uint(arg, al, &k)) < 0 ||
			    v >= 100000)) {
				bad_eval(g, 0, "ce ", arg, arg + al);
				ce_bad = 1;
			} else if (v >= 0) {
				/* EPD ce is the side to move's view; the game
				   arrays keep White's view like a PGN */
				if (neg)
					v = -v;
				if (g->start.stm == PF_BLACK)
					v = -v;
				g->eval_kind[0] = PF_PGN_EVAL_CP;
				g->eval[0] = (int32_t)v;
				g->has_eval = 1;
			}
		} else if (ol == 3 && memcmp(op, "acd", 3) == 0) {
			size_t k = 0;
			long v = parse_uint(arg, al, &k);

			if (al > 0 && arg[0] >= '0' && arg[0] <= '9' &&
			    (v < 0 || v >= 65536)) {
				bad_eval(g, 0, "acd ", arg, arg + al);
				ce_bad = 1;
			} else if (v >= 0)
				g->eval_depth[0] = (uint16_t)v;
		} else if (ol == 2 && memcmp(op, "c9", 2) == 0) {
			while (al > 0 && is_space((unsigned char)arg[al - 1]))
				al--;
			g->result_tag = parse_result(arg, al);
		} else if (ol == 4 && (memcmp(op, "hmvc", 4) == 0 ||
		    memcmp(op, "fmvn", 4) == 0)) {
			while (al > 0 && is_space((unsigned char)arg[al - 1]))
				al--;
			clk[op[0] == 'f'] = arg;
			clkl[op[0] == 'f'] = al;
		}
	}
	if (nf == 4 && (clk[0] != NULL || clk[1] != NULL) &&
	    epd_clocks(g, fen, clk, clkl) < 0)
		return;
	if (ce_bad) {	/* an evaluation out of range: none */
		g->eval_kind[0] = PF_PGN_EVAL_NONE;
		g->eval[0] = 0;
		g->has_eval = 0;
	}
	if (g->eval_kind[0] == PF_PGN_EVAL_NONE)
		g->eval_depth[0] = 0;
}

/* ---- games ------------------------------------------------------------ */

static void
finish_id(pf_pgn *p)
{
	pf_pgn_game *g = &p->g;

	if (p->idlen > 0) {
		XXH64_update(&p->hs, p->idbuf, p->idlen);
		p->idlen = 0;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	XXH64_update(&p->hs, g->moves, (size_t)g->nmoves * 2);
#else
	int i;

	for (i = 0; i < g->nmoves; i++) {
		uint8_t b[2];

		pf_put16(b, g->moves[i]);
		XXH64_update(&p->hs, b, 2);
	}
#endif
	g->id = XXH64_digest(&p->hs);
}

static void
setup_start(pf_pgn *p)
{
	pf_pgn_game *g = &p->g;
	int vk = variant_kind(g->variant.s, g->variant.len);
	char err[128];

	if (vk < 0) {
		problem(g, PF_PGNP_VARIANT, g->variant.s, g->variant.len);
		g->skip = 1;
	}
	if (p->has_fen) {
		if (p->fen_long)	/* cut: not the FEN it was */
			snprintf(err, sizeof(err), "FEN too long");
		if (p->fen_long || pf_board_from_fen(&g->start, p->fen, err,
		    sizeof(err)) < 0) {
			if (!g->skip) {
				problem(g, PF_PGNP_FEN, p->fen, strlen(p->fen));
				snprintf(g->detail, sizeof(g->detail), "%s",
				    err);
			}
			g->skip = 1;
			g->start = p->startpos;
		}
	} else
		g->start = p->startpos;
	if (vk == 1)
		g->start.chess960 = 1;
	p->board = g->start;
	record_position(p, 0);
}

/* PF_PGN_AUTO: the first line of text (skip_blank has passed blanks, '%'
   and '#' lines) decides, read within TAG_WINDOW bytes whatever the window
   holds, as pf_pgn_sniff decides for pgn2pos -j. */
static void
decide_format(pf_pgn *p)
{
	ensure(p, TAG_WINDOW);
	p->format = looks_like_fen(p->pos, AVAIL(p) > TAG_WINDOW ? TAG_WINDOW :
	    AVAIL(p)) == 1 ? PF_PGN_EPD : PF_PGN_PGN;
}

int
pf_pgn_next(pf_pgn *p, pf_pgn_game **gp)
{
	pf_pgn_game *g = &p->g;

	if (p->cap == 0 && grow(p, 256) < 0) {
		snprintf(p->err, sizeof(p->err), "out of memory");
		return -1;
	}
	if (p->done)
		return p->read_err ? -1 : 0;
	for (;;) {
		skip_blank(p);
		if (AVAIL(p) == 0) {
			p->done = 1;
			return p->read_err ? -1 : 0;
		}
		if (p->format == PF_PGN_AUTO)
			decide_format(p);
		if (p->format == PF_PGN_EPD) {
			const char *nl, *cr;

			ensure(p, TAG_WINDOW);
			/* no position is longer than TAG_WINDOW bytes: the
			   same limit whatever the window holds */
			nl = memchr(p->pos, '\n', AVAIL(p) > TAG_WINDOW ?
			    TAG_WINDOW : AVAIL(p));
			/* a '\r' before it ends the line (or "\r\n") */
			if ((cr = memchr(p->pos, '\r', nl != NULL ?
			    (size_t)(nl - p->pos) : AVAIL(p) > TAG_WINDOW ?
			    TAG_WINDOW : AVAIL(p))) != NULL)
				nl = cr;
			p->line = p->newlines + 1;
			if (nl == NULL && (!p->eof || AVAIL(p) > TAG_WINDOW)) {
				/* No position is this long: one line, one
				   problem, not several pieces read as lines. */
				game_reset(p);
				problem(g, PF_PGNP_FEN, p->pos, 40);
				snprintf(g->detail, sizeof(g->detail), "no end "
				    "of line within %u bytes", TAG_WINDOW);
				g->skip = 1;
				skip_line(p);
				p->newlines++;
				break;
			}
			if (nl == NULL && (p->read_err || p->damaged)) {
				/* a line cut by the damage */
				p->done = 1;
				return p->read_err ? -1 : 0;
			}
			if (nl == NULL)
				nl = p->end;
			if (*p->pos == '#') {	/* a comment line */
				p->pos = nl;
				continue;
			}
			game_reset(p);
			parse_epd(p, p->pos, nl);
			p->pos = nl;
			p->board = g->start;
			if (!g->skip)
				record_position(p, 0);
			break;
		}
		game_reset(p);
		while (AVAIL(p) > 0 && *p->pos == '[') {
			if (parse_tag(p) == 0)
				break;
			if (AVAIL(p) >= 2 && p->pos[0] == '\n' &&
			    p->pos[1] == '[') {	/* the next tag line */
				p->newlines++;
				p->pos++;
				continue;
			}
			skip_blank(p);
			/* Tags without an [Event] up to a piece's soft end:
			   the next piece's "[Event" would be one more tag of
			   this game, not a game of its own. */
			if (AVAIL(p) == 0 && p->soft_end && !p->seen_event)
				p->unclean = 1;
		}
		setup_start(p);
		if (!g->skip && p->accept != NULL)
			g->filtered = p->accept(g, p->arg);
		parse_movetext(p);
		if (p->ntags == 0 && g->nmoves == 0 && !g->has_marker &&
		    g->problem != PF_PGNP_TAG && g->problem != PF_PGNP_BADTAG &&
		    g->problem != PF_PGNP_TAG_LONG) {
			/* No game (no tag line begun, no move, no marker):
			   only comments or stray punctuation, or text that is
			   no move, binary data, a comment or variation left
			   open; given for its problem, it takes no number
			   (pgn-extract counts no game there either). */
			p->ngames--;
			if (!g->problem)
				continue;
			g->number = p->ngames;
			g->stray = 1;
		}
		if (g->problem && g->nmoves == 0 && p->ntags == 0)
			g->skip = 1;
		break;
	}
	/* a game that ran into a read error (no termination marker before
	   the damage) does not lie whole before it: not a game */
	if ((p->read_err || p->damaged) && AVAIL(p) == 0 && !g->has_marker) {
		if (!g->stray)
			p->ngames--;
		p->done = 1;
		return p->read_err ? -1 : 0;
	}
	g->final = p->board;
	finish_id(p);
	*gp = g;
	return 1;
}

const char *
pf_pgn_problem_name(int problem)
{
	switch (problem) {
	case PF_PGNP_NONE: return "no problem";
	case PF_PGNP_ILLEGAL: return "illegal move";
	case PF_PGNP_COMMENT: return "unterminated comment";
	case PF_PGNP_BINARY: return "binary data";
	case PF_PGNP_EOF: return "input ends inside the game";
	case PF_PGNP_TOO_LONG: return "game longer than 65535 plies";
	case PF_PGNP_TAG: return "unterminated tag";
	case PF_PGNP_TAG_LONG: return "tag longer than 64 KiB";
	case PF_PGNP_BADTAG: return "malformed tag";
	case PF_PGNP_VARIATION: return "unterminated variation";
	case PF_PGNP_FEN: return "invalid FEN";
	case PF_PGNP_VARIANT: return "unsupported variant";
	}
	return "unknown problem";
}

uint8_t
pf_pgn_result(const pf_pgn_game *g, enum pf_status st)
{
	if (st == PF_CHECKMATE)
		return g->final.stm == PF_WHITE ? PF_RESULT_BLACK :
		    PF_RESULT_WHITE;
	if (st == PF_STALEMATE)
		return PF_RESULT_DRAW;
	if (g->result_tag != PF_RESULT_UNKNOWN)
		return g->result_tag;
	return g->result_marker;
}

/* ---- cutting text into pieces (pgn2pos -j) ---------------------------- */

/* Blank to skip_blank: only white space and byte-order marks, or a '%'
   escape line or a '#' comment line. */
static int
blank_line(const char *s, const char *e)
{
	size_t k;

	for (; s < e; s += k)
		if ((k = blank_len(s, e)) == 0)
			return *s == '%' || *s == '#';
	return 1;
}

/*
 * A line parse_tag reads whole and well: '[', a name, a quoted value
 * without escapes, ']', then only blanks.  Returns 2 for an [Event] tag,
 * 1 for another, 0 for anything else.
 */
static int
simple_tag_line(const char *s, const char *e)
{
	const char *name;
	size_t nl;

	if (s >= e || *s != '[')
		return 0;
	name = ++s;
	while (s < e && (alnum[(unsigned char)*s] || *s == '_'))
		s++;
	nl = (size_t)(s - name);
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if (nl == 0 || s >= e || *s != '"')
		return 0;
	for (s++; s < e && !tag_value_stop[(unsigned char)*s]; s++)
		;
	if (s >= e || *s != '"')
		return 0;
	for (s++; s < e && (*s == ' ' || *s == '\t'); s++)
		;
	if (s >= e || *s != ']')
		return 0;
	for (s++; s < e && (*s == ' ' || *s == '\t' || *s == '\r'); s++)
		;
	if (s != e)
		return 0;
	return nl == 5 && memcmp(name, "Event", 5) == 0 ? 2 : 1;
}

/*
 * Could a '[' of the line [s, e) start a tag?  Not one inside a comment
 * opened on the line.  A line that starts inside a comment opened before
 * it is read as if it did not: a '[' is then taken for a tag more often,
 * never less (the answer errs towards "maybe a tag"); from the first '}'
 * on, both readings agree.  A ';' or '%' is no end of the line here,
 * though the reader may skip the rest of the line at one: a ';' or '%'
 * inside a comment opened before the line is comment text (after its
 * '}' a '[' starts a tag), and in a variation '%' is nothing (after its
 * ')' a '[' starts a tag); neither can be told from the line alone.
 */
static int
tag_may_start(const char *s, const char *e)
{
	int in_comment = 0;

	for (; s < e; s++) {
		if (in_comment) {
			if (*s == '}')
				in_comment = 0;
		} else if (*s == '{')
			in_comment = 1;
		else if (*s == '[')
			return 1;
	}
	return 0;
}

/*
 * Can a piece start at buf + at, a line "[Event" + blanks + '"'?  The
 * reader, whatever it was doing, ends the game before it (a tag, a
 * comment cut by "\n[Event ", a variation cut by '[', binary data skipped
 * to a line that starts with '['), unless it was reading the tags of a
 * game that had no [Event] yet: then the line is one more tag.  So the
 * cut is good when the last line that is not blank can have ended no tag
 * (tag_may_start), or when the tag lines up to it go back to an [Event]
 * tag, every line of them read whole as a tag; anything unsure is not a
 * cut.  A '%' escape line (or a '#' comment line) counts as blank only
 * when no '[' on it may start a tag (inside a comment it is no escape,
 * nor is a '#' line in movetext).
 */
static int
good_cut(const char *buf, size_t at)
{
	const char *e = buf + at - 1;	/* the line end before the line */
	const char *lo = at > (64u << 10) ? buf + at - (64u << 10) : buf;
	int first = 1;

	while (e > lo) {
		const char *s;
		int t;

		/* "\r\n" is one line end */
		if (*e == '\n' && e[-1] == '\r' && --e == lo)
			break;
		s = e;
		while (s > lo && s[-1] != '\n' && s[-1] != '\r')
			s--;
		if (s == lo && lo != buf)
			return 0;		/* too far back to know */
		if (blank_line(s, e)) {
			/* a '%' line is an escape outside comments, but
			   inside one opened before it is text: a '[' on it
			   may then start a tag */
			if (tag_may_start(s, e))
				return 0;
			if (s == buf)
				return 1;	/* nothing but blanks */
			e = s - 1;
			continue;
		}
		if (first && !tag_may_start(s, e))
			return 1;
		first = 0;
		if ((t = simple_tag_line(s, e)) == 0)
			return 0;
		if (t == 2)
			return 1;
		if (s == buf)
			return 0;
		e = s - 1;
	}
	return e == buf;	/* at the very start: nothing before */
}

/* Is there a good cut at buf + at (at > 0, just after a line end)? */
static int
cut_at(const char *buf, size_t len, size_t at)
{
	static const char ev[] = "[Event ";
	const char *s = buf + at, *e = buf + len;

	if ((size_t)(e - s) < sizeof(ev) - 1 ||
	    memcmp(s, ev, sizeof(ev) - 1) != 0)
		return 0;
	s += sizeof(ev) - 1;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s < e && *s == '"' && good_cut(buf, at);
}

/*
 * A line end at s (before e) that a piece may end with: a '\n', or a
 * '\r' known not to be one half of "\r\n" (the byte after it is there
 * and is no '\n').
 */
static inline int
cut_after(const char *s, const char *e)
{
	return *s == '\n' || (s + 1 < e && s[1] != '\n');
}

size_t
pf_pgn_cut_from(const char *buf, size_t len, size_t from, int format)
{
	static const char ev[] = "[Event ";
	const char *s, *e;

	if (from > len || len == 0)
		return 0;
	s = buf + (from > 0 ? from - 1 : 0);
	e = buf + len;
	if (format != PF_PGN_PGN) {
		const char *nl;

		while ((nl = eol(s, e)) != NULL && !cut_after(nl, e))
			s = nl + 1;
		return nl != NULL ? (size_t)(nl + 1 - buf) : 0;
	}
	/* "[Event " after a line end at s or later */
	while (e - s > (ptrdiff_t)sizeof(ev) - 1) {
		const char *r = memmem(s + 1, (size_t)(e - s - 1), ev,
		    sizeof(ev) - 1);

		if (r == NULL)
			return 0;
		if ((r[-1] == '\n' || r[-1] == '\r') &&
		    cut_at(buf, len, (size_t)(r - buf)))
			return (size_t)(r - buf);
		s = r;
	}
	return 0;
}

/* The last line end of buf[0, len) a piece may end with (cut_after),
   or NULL. */
static const char *
last_cut_eol(const char *buf, size_t len)
{
	const char *lf, *cr, *from;

	/* a '\r' after the last '\n' is alone, but for the last byte,
	   which may be half of "\r\n" */
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	lf = len ? memrchr(buf, '\n', len) : NULL;
	from = lf != NULL ? lf + 1 : buf;
	cr = from < buf + len ? memrchr(from, '\r',
	    (size_t)(buf + len - from)) : NULL;
	return cr != NULL ? cr : lf;
}

size_t
pf_pgn_cut(const char *buf, size_t len, size_t from, int format)
{
	size_t cut, c;

	if (from == 0)
		from = 1;
	if (format != PF_PGN_PGN) {	/* EPD, or blank so far: any line */
		const char *nl = last_cut_eol(buf, len);

		return nl != NULL && (size_t)(nl + 1 - buf) >= from ?
		    (size_t)(nl + 1 - buf) : 0;
	}
	/* forward, as pf_pgn_cut_from: one search, one rule */
	cut = pf_pgn_cut_from(buf, len, from, format);
	while (cut > 0 && (c = pf_pgn_cut_from(buf, len, cut + 1, format)) > 0)
		cut = c;
	return cut;
}

int
pf_pgn_sniff(const char *buf, size_t len, int format, int eof)
{
	const char *s, *e;

	if (format != PF_PGN_AUTO)
		return format;
	if (len == 0)		/* (buf may be NULL: no piece yet) */
		return PF_PGN_AUTO;
	s = buf;
	e = buf + len;
	/* as pf_pgn_next: past blanks, '%' and '#' lines, then the first
	   text */
	while (s < e) {
		const char *nl;
		size_t k;

		if ((k = blank_len(s, e)) > 0) {
			s += k;
			continue;
		}
		if (!eof && e - s < 3 && (unsigned char)*s == 0xef)
			return PF_PGN_AUTO;	/* a mark cut short: wait */
		if (*s != '%' && *s != '#')
			break;
		if ((nl = eol(s, e)) == NULL)
			return PF_PGN_AUTO;	/* (all blank to the end) */
		s = nl + 1;
	}
	if (s >= e)
		return PF_PGN_AUTO;
	/* as pf_pgn_next decides: within TAG_WINDOW bytes */
	switch (looks_like_fen(s, (size_t)(e - s) > TAG_WINDOW ? TAG_WINDOW :
	    (size_t)(e - s))) {
	case 1:
		return PF_PGN_EPD;
	case 0:
		return PF_PGN_PGN;
	}
	return !eof && (size_t)(e - s) < TAG_WINDOW ? PF_PGN_AUTO : PF_PGN_PGN;
}
