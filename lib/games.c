/*
 * games.c - the games of one input file, parsed by one thread or several
 * (see games.h).
 *
 * Threads: one reader (pf_input: decompression, archive members) cuts
 * the text into pieces; the parsers, the caller's thread among them,
 * parse whole pieces (and decompress zstd frames for the reader: see
 * read_frames).  The pieces go round a ring of slots, each slot FREE ->
 * FILLING (the reader) -> READY -> PARSING (a parser) -> DONE -> FREE
 * (once its events are handed out).  Members, input errors and the end go
 * round the ring as slots too, so that everything is handed out in input
 * order.  One mutex guards the states; a slot's contents belong to
 * whoever holds it.
 *
 * The turn: the events are handed out by one thread at a time, the one
 * whose slot is the earliest not yet handed out (dseq).  A parser that
 * holds its slot's turn hands each game out as it parses it; one that
 * does not copies each game into its slot's arena (the struct, then its
 * arrays, as offsets) and looks at the slot's turn flag before each next
 * game.  Once it has the turn it hands out the games it kept, then goes
 * on as the holder.  At the end of its slot the holder frees it and
 * passes the turn on (pass_turn): to the next slot's parser by its flag,
 * or, when that slot is already parsed, by handing its games out itself.
 * The game and line numbers get the games and newlines of the member's
 * earlier pieces added as they are handed out.
 */
#define _GNU_SOURCE	/* memrchr */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "games.h"
#include "input.h"
#include "record.h"

/* A game in its slot's arena: where it is. */
struct gref {
	size_t game, end;	/* end: of the packed struct */
};

enum { SL_FREE, SL_FILLING, SL_READY, SL_PARSING, SL_DONE };
enum { EV_PIECE, EV_MEMBER, EV_INPUT_ERROR, EV_END };

struct slot {
	int state;
	int kind;		/* EV_* */
	/* EV_PIECE: the text, its format and whether a cut ends it */
	char *buf;
	size_t len, cap;
	int format, soft_end;
	int read_err;		/* a read error ends the member after it */
	char *member;		/* EV_MEMBER: its name, or NULL */
	char err[640];		/* read_err, EV_INPUT_ERROR: why */
	int turn;		/* its events are to be handed out now
				   (atomic: its parser reads it unlocked) */
	/* parsed: the games kept in the arena (struct gref), those of them
	   handed out, and all its games that take a number (not stray) */
	unsigned char *arena;
	size_t alen, acap;
	struct gref *offs;
	size_t ngames, gcap, given;
	uint64_t pgames;
	uint64_t newlines;
	int clean;
	int oom;
	uint64_t seq;		/* its place in the ring's order */
	uint64_t claimed;	/* seq + 1: the reader parses it itself */
};

/*
 * A zstd frame to decompress: its compressed bytes (src), read by the
 * reader, and its text (dst), made by a parser thread.  FREE -> READY
 * (the reader) -> BUSY (a parser) -> DONE -> FREE (the reader, in
 * order, once it has cut the text into pieces).
 */
enum { ZJ_FREE, ZJ_READY, ZJ_BUSY, ZJ_DONE };

#define JOB_FRAMES	64

struct zjob {
	int state;
	uint64_t at;		/* the first frame's offset in the file */
	char *src, *dst;
	size_t slen, scap, dlen, dcap;
	size_t nfr;		/* frames, at src + fr[i] */
	size_t fr[JOB_FRAMES + 1];
	size_t est;		/* its text, or a guess when not known */
	size_t nok;		/* frames of text decompressed (not counting
				   skippable frames) */
	int failed;		/* the frame at failed_at did not decompress:
				   dst has the text of those before it;
				   pf_input reads the file from it on */
	uint64_t failed_at;
};

struct worker {
	pf_games *gs;
	pthread_t tid;
	pf_pgn *pgn;
	ZSTD_DCtx *dctx;
	int started;
	pf_pgn_game game;	/* a kept game, unpacked to be handed out */
};

struct pf_games {
	pf_games_opts o;
	pf_input *in;
	int regular;		/* the input is a regular file */
	char err[640];
	pf_games_fn fn;		/* pf_games_run's */
	void *fn_arg;

	/* one thread */
	pf_pgn *pgn;

	/* several */
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv_free, cv_ready, cv_zdone;
	int stop;
	int over;		/* no more events will be handed out */
	struct slot *slots;
	size_t nslots;
	uint64_t wseq, pseq, dseq;	/* next slot to fill, parse, hand
					   out */
	size_t nfree;		/* slots free (from wseq on) */
	size_t free_low;	/* the reader waits for that many */
	int free_wait;		/* the reader is waiting */
	pthread_t reader;
	int reader_started, reader_done;
	int reader_reading;	/* in pf_input: may wait on a pipe */
	int reader_cancelled;
	struct worker *workers;
	int nworkers;
	struct worker *rw;	/* the reader's, when it parses too */
	/* zstd frames in flight (see read_frames) */
	struct zjob *zjobs;
	size_t nz;
	uint64_t zw, zp, zr;	/* next job to fill, decompress, take */
	/* the reader's own */
	struct slot *cur;	/* the piece being filled */
	size_t scan_from;	/* in it, where a cut may still be */
	int fmt;		/* the member's format once known */
	char *zbuf;		/* compressed bytes read ahead: */
	size_t zpos, zlen, zcap;	/* [zpos, zpos + zlen) unused */
	uint64_t zoff;		/* the file offset of zbuf[zpos] */
	int zeof;		/* read to the end of the file */
	/* the arrays of a game without evaluations or clocks */
	uint8_t *no_eval_kind;
	int32_t *no_eval;
	uint16_t *no_eval_depth;
	uint32_t *no_clk;
	/* the turn's (whichever thread holds it) */
	uint64_t games_base, lines_base;
	int member_fmt;
	int halted;		/* no more events: fn said stop, or the
				   input ended */
	int failed;		/* halted for want of memory: err says */
	uint64_t frames;	/* zstd frames decompressed in parallel */
};

/* ---- one thread ------------------------------------------------------- */

static int
run_seq(pf_games *gs)
{
	pf_games_event ev;
	pf_pgn_game *g;
	int r;

	for (;;) {
		memset(&ev, 0, sizeof(ev));
		if ((r = pf_input_next_member(gs->in)) == 0)
			return 0;
		if (r < 0) {
			snprintf(gs->err, sizeof(gs->err), "%s",
			    pf_input_error(gs->in));
			ev.kind = PF_GAMES_INPUT_ERROR;
			ev.error = gs->err;
			(void)gs->fn(&ev, gs->fn_arg);
			return 0;
		}
		pf_pgn_start(gs->pgn, gs->in);
		ev.kind = PF_GAMES_MEMBER;
		ev.member = pf_input_member(gs->in);
		if (gs->fn(&ev, gs->fn_arg) < 0)
			return 0;
		ev.kind = PF_GAMES_GAME;
		ev.member = NULL;
		while ((r = pf_pgn_next(gs->pgn, &g)) == 1) {
			ev.game = g;
			ev.epd = pf_pgn_format(gs->pgn) == PF_PGN_EPD;
			if (gs->fn(&ev, gs->fn_arg) < 0)
				return 0;
		}
		if (r < 0) {
			snprintf(gs->err, sizeof(gs->err), "%s",
			    pf_pgn_error(gs->pgn));
			ev.kind = PF_GAMES_READ_ERROR;
			ev.game = NULL;
			ev.error = gs->err;
			ev.epd = pf_pgn_format(gs->pgn) == PF_PGN_EPD;
			if (gs->fn(&ev, gs->fn_arg) < 0)
				return 0;
		}
	}
}

/* ---- the ring --------------------------------------------------------- */

/* The reader's next slot, once the caller has freed it; NULL on stop. */
static struct slot *
take_slot(pf_games *gs, int kind)
{
	struct slot *s = &gs->slots[gs->wseq % gs->nslots];

	pthread_mutex_lock(&gs->mu);
	if (s->state != SL_FREE) {
		/* Woken once a third of the ring is free, not at each slot
		   freed: a wake-up per piece costs more than the pieces. */
		gs->free_wait = 1;
		while (gs->nfree < gs->free_low && !gs->stop)
			pthread_cond_wait(&gs->cv_free, &gs->mu);
		gs->free_wait = 0;
	}
	if (gs->stop) {
		pthread_mutex_unlock(&gs->mu);
		return NULL;
	}
	s->state = SL_FILLING;
	s->seq = gs->wseq++;
	gs->nfree--;
	pthread_mutex_unlock(&gs->mu);
	s->kind = kind;
	s->len = 0;
	s->read_err = 0;
	s->soft_end = 0;
	s->err[0] = '\0';
	free(s->member);
	s->member = NULL;
	return s;
}

static void
publish(pf_games *gs, struct slot *s)
{
	pthread_mutex_lock(&gs->mu);
	s->state = SL_READY;
	pthread_cond_signal(&gs->cv_ready);
	pthread_mutex_unlock(&gs->mu);
}

static void parse_piece(struct worker *, struct slot *);
static void parsed(struct worker *, struct slot *);

/*
 * A piece cut (and more text to come): to the parsers, or, from a regular
 * file when another piece is waiting for them already (they are behind),
 * parsed here: its text is in this core's cache, just written, and the
 * parsers have work.  So with -j 2 the reader and the caller share the
 * parsing, two threads on two cores, and the text of half the pieces
 * never crosses to the other core (on a multi-frame .zst, 2 to 3 % less
 * CPU and wall time than with a parser thread beside the reader).
 */
static void
publish_piece(pf_games *gs, struct slot *s)
{
	uint64_t q;
	int waiting = 0;

	pthread_mutex_lock(&gs->mu);
	if (gs->rw != NULL && !gs->over)
		for (q = gs->pseq; q < gs->wseq && !waiting; q++)
			waiting = gs->slots[q % gs->nslots].state ==
			    SL_READY &&
			    gs->slots[q % gs->nslots].claimed != q + 1;
	if (!waiting) {
		s->state = SL_READY;
		pthread_cond_signal(&gs->cv_ready);
		pthread_mutex_unlock(&gs->mu);
		return;
	}
	s->claimed = s->seq + 1;
	s->state = SL_PARSING;
	pthread_mutex_unlock(&gs->mu);
	parse_piece(gs->rw, s);
	pthread_mutex_lock(&gs->mu);
	parsed(gs->rw, s);
	pthread_mutex_unlock(&gs->mu);
}

static int
reserve(char **buf, size_t *cap, size_t need)
{
	char *nb;
	size_t ncap = *cap ? *cap : 4096;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if ((nb = realloc(*buf, ncap)) == NULL)
		return -1;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/* ---- the reader ------------------------------------------------------- */

static int
stopped(pf_games *gs)
{
	int stop;

	pthread_mutex_lock(&gs->mu);
	stop = gs->stop;
	pthread_mutex_unlock(&gs->mu);
	return stop;
}

/*
 * Hand on the current piece up to its first cut at or after limit bytes,
 * or (limit 0) up to its last cut; the rest begins the next piece.  1 when
 * cut, 0 when there is no cut yet, -1 on stop or no memory.
 */
static int
cut_piece(pf_games *gs, size_t limit)
{
	struct slot *s = gs->cur, *t;
	size_t cut;

	if (gs->fmt == PF_PGN_AUTO)
		gs->fmt = pf_pgn_sniff(s->buf, s->len, gs->o.format, 0);
	/* Lines before scan_from hold no cut: each byte is searched once,
	   however long a game (megabytes of comments) keeps a piece open. */
	if (limit > 0)
		cut = pf_pgn_cut_from(s->buf, s->len, limit > gs->scan_from ?
		    limit : gs->scan_from, gs->fmt);
	else
		cut = pf_pgn_cut(s->buf, s->len, gs->scan_from, gs->fmt);
	if (cut == 0) {
		/* searched to the end but for the last line, which may not
		   be whole: from its line end ('\n' or '\r') on */
		const char *from = s->buf + gs->scan_from, *e = s->buf + s->len;
		const char *nl = from < e ? memrchr(from, '\n',
		    (size_t)(e - from)) : NULL, *cr;

		if (nl != NULL)
			from = nl + 1;
		if (from < e && (cr = memrchr(from, '\r',
		    (size_t)(e - from))) != NULL)
			nl = cr;
		if (nl != NULL && (size_t)(nl - s->buf) > gs->scan_from)
			gs->scan_from = (size_t)(nl - s->buf);
		return 0;
	}
	if ((t = take_slot(gs, EV_PIECE)) == NULL)
		return -1;
	if (reserve(&t->buf, &t->cap, s->len - cut) < 0) {
		snprintf(gs->err, sizeof(gs->err), "out of memory");
		return -1;
	}
	if (s->len > cut)
		memcpy(t->buf, s->buf + cut, s->len - cut);
	t->len = s->len - cut;
	s->len = cut;
	s->format = gs->fmt;
	s->soft_end = 1;
	publish_piece(gs, s);
	gs->cur = t;
	gs->scan_from = 0;
	return 1;
}

/* The input would block: pass on the games read so far. */
static void
reader_idle(void *arg)
{
	pf_games *gs = arg;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	if (gs->cur != NULL && gs->cur->len > 0)
		(void)cut_piece(gs, 0);
	pthread_setcancelstate(old, NULL);
}

/*
 * Reads that may wait on a pipe can be cancelled (pf_games_close): only
 * there, never while the reader holds the lock or a slot half written.
 */
static int
reading(pf_games *gs, int on)
{
	int old, stop;

	if (!on)
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&gs->mu);
	stop = gs->stop;
	gs->reader_reading = on && !stop;
	pthread_mutex_unlock(&gs->mu);
	if (on && !stop)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	return stop ? -1 : 0;
}

static int
fill(pf_games *gs, const char **pos, const char **end)
{
	int r;

	if (reading(gs, 1) < 0)
		return -1;
	r = pf_input_fill(gs->in, pos, end, PF_INPUT_KEEP);
	reading(gs, 0);
	return r;
}

/*
 * Text of the member onto the current piece, cut into pieces as it
 * comes: up to a piece's size at once, then in small steps until a cut
 * is found, so that what follows a cut (copied into the next piece) is
 * short.  0, or -1 on stop or no memory.
 */
#define STEP	(32u << 10)

static int
add_text(pf_games *gs, const char *p, size_t n)
{
	while (n > 0) {
		struct slot *s = gs->cur;
		size_t k = s->len < gs->o.piece ? gs->o.piece - s->len : STEP;

		if (k > n)
			k = n;
		if (reserve(&s->buf, &s->cap, s->len + k) < 0) {
			snprintf(gs->err, sizeof(gs->err), "out of memory");
			return -1;
		}
		memcpy(s->buf + s->len, p, k);
		s->len += k;
		p += k;
		n -= k;
		while (gs->cur->len >= gs->o.piece) {
			int c = cut_piece(gs, gs->o.piece);

			if (c < 0)
				return -1;
			if (c == 0)
				break;
		}
	}
	return 0;
}

/* The member ends with the current piece; err: a read error ends it. */
static void
end_member(pf_games *gs, const char *err)
{
	struct slot *s = gs->cur;

	if (gs->fmt == PF_PGN_AUTO)
		gs->fmt = pf_pgn_sniff(s->buf, s->len, gs->o.format, 1);
	s->format = gs->fmt;
	s->soft_end = 0;
	if (err != NULL) {
		s->read_err = 1;
		snprintf(s->err, sizeof(s->err), "%s", err);
	}
	gs->cur = NULL;
	publish(gs, s);
}

/* The rest of the member through pf_input; -1 on stop or no memory. */
static int
read_text(pf_games *gs)
{
	const char *pos = NULL, *end = NULL;
	int r;

	for (;;) {
		r = fill(gs, &pos, &end);
		if (stopped(gs))
			return -1;
		/* (cut before an end too: a small member may come whole
		   with its first window) */
		if (end > pos && add_text(gs, pos, (size_t)(end - pos)) < 0)
			return -1;
		pos = end;
		if (r <= 0) {
			end_member(gs, r < 0 ? pf_input_error(gs->in) : NULL);
			return 0;
		}
	}
}

static int
begin_member(pf_games *gs)
{
	gs->fmt = gs->o.format;
	gs->scan_from = 0;
	return (gs->cur = take_slot(gs, EV_PIECE)) == NULL ? -1 : 0;
}

/* One member into pieces; -1 on stop or no memory. */
static int
read_member(pf_games *gs)
{
	return begin_member(gs) < 0 ? -1 : read_text(gs);
}

/* ---- zstd frames ------------------------------------------------------ */

/*
 * A file of zstd frames (as pzstd writes them, and Lichess publishes its
 * games) is decompressed frame by frame in the parser threads: the reader
 * finds where each frame ends (ZSTD_findFrameCompressedSize), hands it to
 * a parser thread, and takes the frames' text back in order to cut it
 * into pieces as any text.  Up to threads + 2 frames are in flight.
 *
 * Whatever the frames cannot do alone goes back to pf_input, which
 * decompresses zstd itself (see lib/input.c) and so reads on from any
 * frame boundary as it would have read the whole file: from a frame that
 * does not decompress (damaged, truncated, its window too large) or is
 * larger than FRAME_MAX of text, or from bytes that are no frame
 * (garbage after the last one), every error and message is the one the
 * file has read by one thread.
 */
#define FRAME_MAX	(64u << 20)	/* text of a frame decompressed alone */
#define FRAME_SRC_MAX	(16u << 20)	/* its compressed bytes */
#define FRAME_READ	(1u << 20)
#define ZSTD_AHEAD	(8u << 20)	/* text in flight per job, about */

/* More of the file into zbuf: 1, 0 at its end, -1 on a read error. */
static int
zread(pf_games *gs, int fd)
{
	size_t want = gs->zlen < FRAME_READ ? FRAME_READ : gs->zlen;
	ssize_t n;

	if (gs->zeof)
		return 0;
	if (gs->zpos > 0) {
		memmove(gs->zbuf, gs->zbuf + gs->zpos, gs->zlen);
		gs->zpos = 0;
	}
	if (reserve(&gs->zbuf, &gs->zcap, gs->zlen + want) < 0)
		return -1;
	do
		n = pread(fd, gs->zbuf + gs->zlen, want,
		    (off_t)(gs->zoff + gs->zlen));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0) {
		gs->zeof = 1;
		return 0;
	}
	gs->zlen += (size_t)n;
	return 1;
}

/*
 * The next frame onto j: 1, 0 at the end of the file, -1 when what
 * follows is no frame to decompress alone (pf_input reads on from
 * gs->zoff).  *text: its size, or a guess when not known.
 */
static int
next_frame(pf_games *gs, int fd, struct zjob *j, size_t *text)
{
	unsigned long long cs;
	size_t fsz;
	int r;

	for (;;) {
		if (gs->zlen == 0) {
			if ((r = zread(gs, fd)) <= 0)
				return r;
			continue;
		}
		cs = ZSTD_getFrameContentSize(gs->zbuf + gs->zpos, gs->zlen);
		if (cs != ZSTD_CONTENTSIZE_UNKNOWN &&
		    cs != ZSTD_CONTENTSIZE_ERROR && cs > FRAME_MAX)
			return -1;
		fsz = ZSTD_findFrameCompressedSize(gs->zbuf + gs->zpos,
		    gs->zlen);
		if (!ZSTD_isError(fsz))
			break;
		if (ZSTD_getErrorCode(fsz) != ZSTD_error_srcSize_wrong ||
		    gs->zlen >= FRAME_SRC_MAX || zread(gs, fd) <= 0)
			return -1;
	}
	if (cs == ZSTD_CONTENTSIZE_ERROR || fsz > FRAME_SRC_MAX ||
	    reserve(&j->src, &j->scap, j->slen + fsz) < 0)
		return -1;
	/* not known (pzstd does not say): a guess, PGN shrinks about 5x */
	*text = cs != ZSTD_CONTENTSIZE_UNKNOWN ? (size_t)cs :
	    fsz < FRAME_MAX / 8 ? fsz * 8 : FRAME_MAX;
	memcpy(j->src + j->slen, gs->zbuf + gs->zpos, fsz);
	j->fr[j->nfr++] = j->slen;
	j->slen += fsz;
	j->fr[j->nfr] = j->slen;
	gs->zpos += fsz;
	gs->zlen -= fsz;
	gs->zoff += fsz;
	return 1;
}

/*
 * The next job: frames that follow one another, up to JOB_SRC compressed
 * bytes or JOB_TEXT of text (small frames go by the dozen: one handoff
 * each would cost more than their decompression).  1, 0 at the end of
 * the file, -1 as next_frame at the job's first frame (at a later one,
 * the job ends before it and the next call says so).
 */
#define JOB_SRC		(64u << 10)
#define JOB_TEXT	(4u << 20)

static int
next_job(pf_games *gs, int fd, struct zjob *j)
{
	size_t text = 0, t;
	int r;

	j->slen = 0;
	j->nfr = 0;
	j->est = 0;
	j->at = gs->zoff;
	while (j->nfr < JOB_FRAMES && j->slen < JOB_SRC && text < JOB_TEXT) {
		if ((r = next_frame(gs, fd, j, &t)) <= 0)
			return j->nfr > 0 ? 1 : r;
		text += t;
		j->est = text;
	}
	return 1;
}

/*
 * In a parser thread: the frames' text, or j->failed.  Streaming, even
 * when a frame says its size: ZSTD_decompressDCtx takes about 1.5x the
 * time on frames of PGN (zstd 1.5.4), and one decoder serves pzstd's
 * frames, which do not say it.
 */
static void
inflate_frames(struct worker *w, struct zjob *j)
{
	size_t i;

	j->dlen = 0;
	j->nok = 0;
	j->failed = 1;
	j->failed_at = j->at;
	if (w->dctx == NULL && (w->dctx = ZSTD_createDCtx()) == NULL)
		return;
	for (i = 0; i < j->nfr; i++) {
		const char *src = j->src + j->fr[i];
		size_t slen = j->fr[i + 1] - j->fr[i], r, base = j->dlen;
		unsigned long long cs = ZSTD_getFrameContentSize(src, slen);
		ZSTD_inBuffer in = { src, slen, 0 };
		ZSTD_outBuffer out;
		size_t len = base;

		j->failed_at = j->at + j->fr[i];
		/* room for the text when the frame says its size, and one
		   byte more: the end is seen without growing */
		if (cs != ZSTD_CONTENTSIZE_UNKNOWN && cs <= FRAME_MAX &&
		    reserve(&j->dst, &j->dcap, base + (size_t)cs + 1) < 0)
			return;
		ZSTD_DCtx_reset(w->dctx, ZSTD_reset_session_only);
		do {
			size_t was = in.pos;

			if (len == j->dcap && (len - base >= FRAME_MAX ||
			    reserve(&j->dst, &j->dcap, len + 1) < 0))
				return;
			out.dst = j->dst;
			out.size = j->dcap;
			out.pos = len;
			r = ZSTD_decompressStream(w->dctx, &out, &in);
			if (ZSTD_isError(r) || (r != 0 &&
			    in.pos == was && out.pos == len))
				return;	/* (no progress: cut short) */
			len = out.pos;
		} while (r != 0);
		if (in.pos != in.size)
			return;
		j->dlen = len;
		j->nok += (pf_get32((const uint8_t *)src) &
		    ZSTD_MAGIC_SKIPPABLE_MASK) !=
		    ZSTD_MAGIC_SKIPPABLE_START;
	}
	j->failed = 0;
}

/*
 * One member of zstd frames from fd at start: 1 when read to the end
 * (the input has no more), 0 after falling back to pf_input (read on
 * with read_text), -1 on stop or no memory.
 */
static int
read_frames(pf_games *gs, int fd, uint64_t start)
{
	uint64_t resume_at = start, inflight = 0;
	int fallback = 0, r;

	if (begin_member(gs) < 0)
		return -1;
	gs->zoff = start;
	gs->zpos = gs->zlen = 0;
	gs->zeof = 0;
	for (;;) {
		struct zjob *j;

		/* frames out to the parsers while there is room */
		while (!fallback && gs->zw - gs->zr < gs->nz &&
		    (gs->zw == gs->zr || inflight < ZSTD_AHEAD * gs->nz)) {
			j = &gs->zjobs[gs->zw % gs->nz];
			if ((r = next_job(gs, fd, j)) == 0)
				break;
			if (r < 0) {
				fallback = 1;
				resume_at = gs->zoff;
				break;
			}
			inflight += j->est;
			pthread_mutex_lock(&gs->mu);
			j->state = ZJ_READY;
			gs->zw++;
			pthread_cond_signal(&gs->cv_ready);
			pthread_mutex_unlock(&gs->mu);
		}
		if (gs->zr == gs->zw)
			break;
		/* the next frame's text, in order */
		j = &gs->zjobs[gs->zr % gs->nz];
		pthread_mutex_lock(&gs->mu);
		while (j->state != ZJ_DONE && !gs->stop)
			pthread_cond_wait(&gs->cv_zdone, &gs->mu);
		pthread_mutex_unlock(&gs->mu);
		if (stopped(gs))
			return -1;
		if (add_text(gs, j->dst, j->dlen) < 0)
			return -1;
		if (j->failed) {
			pthread_mutex_lock(&gs->mu);
			gs->frames += j->nok;
			pthread_mutex_unlock(&gs->mu);
			fallback = 1;
			resume_at = j->failed_at;
			break;
		}
		inflight -= j->est;
		if (j->dcap > FRAME_MAX / 4) {	/* a large frame's room */
			free(j->dst);
			j->dst = NULL;
			j->dcap = 0;
		}
		pthread_mutex_lock(&gs->mu);
		gs->frames += j->nok;
		j->state = ZJ_FREE;
		gs->zr++;
		pthread_mutex_unlock(&gs->mu);
	}
	/* the frames still in flight after a failed one are dropped */
	pthread_mutex_lock(&gs->mu);
	for (; gs->zr < gs->zw; gs->zr++) {
		struct zjob *j = &gs->zjobs[gs->zr % gs->nz];

		while (j->state != ZJ_DONE && !gs->stop)
			pthread_cond_wait(&gs->cv_zdone, &gs->mu);
		j->state = ZJ_FREE;
	}
	pthread_mutex_unlock(&gs->mu);
	if (stopped(gs))
		return -1;
	if (!fallback) {
		end_member(gs, NULL);
		return 1;
	}
	if (pf_input_resume(gs->in, resume_at) < 0) {
		end_member(gs, pf_input_error(gs->in));
		return 1;
	}
	return read_text(gs);
}

static void *
reader_main(void *arg)
{
	pf_games *gs = arg;
	struct slot *s;
	uint64_t start;
	int r, old, fd;

	(void)old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	for (;;) {
		if (reading(gs, 1) < 0)
			goto out;
		r = pf_input_next_member(gs->in);
		reading(gs, 0);
		if (r == 0)
			break;
		if (r < 0) {
			if ((s = take_slot(gs, EV_INPUT_ERROR)) == NULL)
				goto out;
			snprintf(s->err, sizeof(s->err), "%s",
			    pf_input_error(gs->in));
			publish(gs, s);
			break;
		}
		if ((s = take_slot(gs, EV_MEMBER)) == NULL)
			goto out;
		if (pf_input_member(gs->in) != NULL &&
		    (s->member = strdup(pf_input_member(gs->in))) == NULL) {
			s->kind = EV_INPUT_ERROR;
			snprintf(s->err, sizeof(s->err), "out of memory");
			publish(gs, s);
			goto out;
		}
		publish(gs, s);
		/* zstd frames to the parsers, or read here (see
		   PF_GAMES_FRAMES) */
		r = gs->nworkers >= gs->o.frames_from &&
		    pf_input_zstd_text(gs->in, &fd, &start) ?
		    read_frames(gs, fd, start) : read_member(gs);
		if (r < 0) {
			if (stopped(gs))
				goto out;
			/* no memory: said as the input's error */
			if (gs->cur != NULL) {
				gs->cur->kind = EV_INPUT_ERROR;
				snprintf(gs->cur->err, sizeof(gs->cur->err),
				    "%s", gs->err);
				publish(gs, gs->cur);
				gs->cur = NULL;
			}
			goto out;
		}
		if (r == 1)	/* the frames were the whole input */
			break;
	}
	if ((s = take_slot(gs, EV_END)) != NULL)
		publish(gs, s);
out:
	pthread_mutex_lock(&gs->mu);
	gs->reader_done = 1;
	pthread_mutex_unlock(&gs->mu);
	return NULL;
}

/* ---- games kept until their turn -------------------------------------- */

static void *
acopy(struct slot *s, const void *p, size_t n)
{
	size_t at = (s->alen + 7) & ~(size_t)7;
	void *d;

	if (at + n > s->acap) {
		size_t ncap = s->acap ? s->acap : (1u << 20);
		unsigned char *na;

		while (ncap < at + n)
			ncap *= 2;
		if ((na = realloc(s->arena, ncap)) == NULL)
			return NULL;
		s->arena = na;
		s->acap = ncap;
	}
	d = s->arena + at;
	if (p != NULL)
		memcpy(d, p, n);
	s->alen = at + n;
	return d;
}

/*
 * A game in the arena, packed: the struct up to its strings, the seven
 * tag strings (length and bytes), the struct from bad_evals up to text,
 * then text and detail (bytes and NUL); then the arrays it needs: none
 * for a game skipped or filtered; the evaluations only when it has some,
 * the clocks only when it has some (load_game points the others at arrays
 * of "none"), the hashes only when asked.
 * About 600 bytes in a row for a game of Lichess, not 2.5 KiB with gaps
 * (the struct as it lies): written by one core and read by another, each
 * line of it costs a cache miss on both, the worst of the hand-off.
 * struct gref says where each is.
 */
#define FIXED_END	offsetof(pf_pgn_game, event)
#define TAIL_START	offsetof(pf_pgn_game, bad_evals)
#define TAIL_END	offsetof(pf_pgn_game, text)

static int
has_arrays(const pf_pgn_game *g)
{
	return !g->skip && !g->filtered;
}

/* Where the seven tag strings are in the struct. */
static const size_t str_at[7] = {
	offsetof(pf_pgn_game, event), offsetof(pf_pgn_game, site),
	offsetof(pf_pgn_game, white), offsetof(pf_pgn_game, black),
	offsetof(pf_pgn_game, date), offsetof(pf_pgn_game, term_text),
	offsetof(pf_pgn_game, variant)
};

/* The i-th of them in g (save_game reads it, load_game writes it). */
static pf_pgn_str *
str_of(const pf_pgn_game *g, int i)
{
	return (pf_pgn_str *)((char *)(uintptr_t)g + str_at[i]);
}

static int
save_game(struct worker *w, struct slot *s, const pf_pgn_game *g)
{
	int want_hash = w->gs->o.want_hash;
	size_t n = (size_t)g->nmoves + 1, off, need, tl, dl;
	unsigned char *d;
	int i;

	if (s->ngames == s->gcap) {
		size_t ncap = s->gcap ? s->gcap * 2 : 1024;
		struct gref *no = realloc(s->offs, ncap * sizeof(*no));

		if (no == NULL)
			return -1;
		s->offs = no;
		s->gcap = ncap;
	}
	tl = strlen(g->text) + 1;
	dl = strlen(g->detail) + 1;
	need = FIXED_END + (TAIL_END - TAIL_START) + tl + dl;
	for (i = 0; i < 7; i++)
		need += sizeof(uint16_t) + str_of(g, i)->len;
	if ((d = acopy(s, NULL, need)) == NULL)
		return -1;
	off = (size_t)(d - s->arena);
	memcpy(d, g, FIXED_END);
	d += FIXED_END;
	for (i = 0; i < 7; i++) {
		const pf_pgn_str *t = str_of(g, i);

		memcpy(d, &t->len, sizeof(t->len));
		memcpy(d + sizeof(t->len), t->s, t->len);
		d += sizeof(t->len) + t->len;
	}
	memcpy(d, (const char *)g + TAIL_START, TAIL_END - TAIL_START);
	d += TAIL_END - TAIL_START;
	memcpy(d, g->text, tl);
	memcpy(d + tl, g->detail, dl);
	if (has_arrays(g) && (
	    acopy(s, g->moves, (n - 1) * sizeof(*g->moves)) == NULL ||
	    acopy(s, g->packed, n * PF_PACKED_SIZE) == NULL ||
	    acopy(s, g->pflags, n * sizeof(*g->pflags)) == NULL ||
	    (g->has_eval && (
	    acopy(s, g->eval_kind, n * sizeof(*g->eval_kind)) == NULL ||
	    acopy(s, g->eval, n * sizeof(*g->eval)) == NULL ||
	    acopy(s, g->eval_depth, n * sizeof(*g->eval_depth)) == NULL)) ||
	    (g->has_clk &&
	    acopy(s, g->clk_ms, n * sizeof(*g->clk_ms)) == NULL) ||
	    (want_hash && acopy(s, g->hash, n * sizeof(*g->hash)) == NULL)))
		return -1;
	s->offs[s->ngames].game = off;
	s->offs[s->ngames].end = off + need;
	s->ngames++;
	return 0;
}

/* The game at offs[i], unpacked into w->game, its arrays pointed at
   their copies where they lie. */
static pf_pgn_game *
load_game(struct worker *w, struct slot *s, size_t i)
{
	pf_games *gs = w->gs;
	const unsigned char *a = s->arena + s->offs[i].game;
	pf_pgn_game *g = &w->game;
	size_t n, at = s->offs[i].end, tl;
	int k;

#define NEXT(field, bytes) do {						\
	at = (at + 7) & ~(size_t)7;					\
	g->field = (void *)(s->arena + at);				\
	at += (bytes);							\
} while (0)
	memcpy(g, a, FIXED_END);
	a += FIXED_END;
	for (k = 0; k < 7; k++) {
		pf_pgn_str *t = str_of(g, k);

		memcpy(&t->len, a, sizeof(t->len));
		memcpy(t->s, a + sizeof(t->len), t->len);
		t->s[t->len] = '\0';
		a += sizeof(t->len) + t->len;
	}
	memcpy((char *)g + TAIL_START, a, TAIL_END - TAIL_START);
	a += TAIL_END - TAIL_START;
	tl = strlen((const char *)a) + 1;
	memcpy(g->text, a, tl);
	memcpy(g->detail, a + tl, strlen((const char *)a + tl) + 1);
	g->moves = NULL;
	g->packed = NULL;
	g->pflags = NULL;
	g->eval_kind = gs->no_eval_kind;
	g->eval = gs->no_eval;
	g->eval_depth = gs->no_eval_depth;
	g->clk_ms = gs->no_clk;
	g->hash = NULL;
	if (!has_arrays(g))
		return g;
	n = (size_t)g->nmoves + 1;
	NEXT(moves, (n - 1) * sizeof(*g->moves));
	NEXT(packed, n * PF_PACKED_SIZE);
	NEXT(pflags, n * sizeof(*g->pflags));
	if (g->has_eval) {
		NEXT(eval_kind, n * sizeof(*g->eval_kind));
		NEXT(eval, n * sizeof(*g->eval));
		NEXT(eval_depth, n * sizeof(*g->eval_depth));
	}
	if (g->has_clk)
		NEXT(clk_ms, n * sizeof(*g->clk_ms));
	if (gs->o.want_hash)
		NEXT(hash, n * sizeof(*g->hash));
#undef NEXT
	return g;
}

/* ---- handing out, in turn --------------------------------------------- */

/* No more events: the input has ended, fn said stop, or (err) memory ran
   out.  By the turn's holder. */
static void
halt(pf_games *gs, const char *err)
{
	if (err != NULL) {
		snprintf(gs->err, sizeof(gs->err), "%s", err);
		gs->failed = 1;
	}
	gs->halted = 1;
	pthread_mutex_lock(&gs->mu);
	gs->over = 1;
	pthread_cond_broadcast(&gs->cv_ready);
	pthread_mutex_unlock(&gs->mu);
}

/* fn, by the turn's holder: 0, or -1 when it said stop. */
static int
hand_out(pf_games *gs, const pf_games_event *ev)
{
	if (gs->fn(ev, gs->fn_arg) == 0)
		return 0;
	halt(gs, NULL);
	return -1;
}

static int
give_game(pf_games *gs, const struct slot *s, pf_pgn_game *g)
{
	pf_games_event ev;

	memset(&ev, 0, sizeof(ev));
	g->number += gs->games_base;
	if (s->format == PF_PGN_EPD)
		g->line += gs->lines_base;
	ev.kind = PF_GAMES_GAME;
	ev.game = g;
	ev.epd = s->format == PF_PGN_EPD;
	return hand_out(gs, &ev);
}

/* The games s kept and has not handed out. */
static int
give_kept(struct worker *w, struct slot *s)
{
	while (s->given < s->ngames)
		if (give_game(w->gs, s, load_game(w, s, s->given++)) < 0)
			return -1;
	return 0;
}

/*
 * By the turn's holder, s parsed: the rest of its events (the games kept,
 * then what ends it).  0 to go on to the next slot, -1 when the events
 * end here (fn said stop, the input ended, no memory).
 */
static int
give_rest(struct worker *w, struct slot *s)
{
	pf_games *gs = w->gs;
	pf_games_event ev;

	if (gs->halted)
		return -1;
	memset(&ev, 0, sizeof(ev));
	switch (s->kind) {
	case EV_PIECE:
		if (give_kept(w, s) < 0)
			return -1;
		if (s->oom) {
			halt(gs, "out of memory");
			return -1;
		}
		if (!s->clean) {
			halt(gs, "internal error: a piece was cut inside a "
			    "game");
			return -1;
		}
		gs->games_base += s->pgames;
		gs->lines_base += s->newlines;
		if (s->format != PF_PGN_AUTO)
			gs->member_fmt = s->format;
		if (!s->read_err)
			return 0;
		ev.kind = PF_GAMES_READ_ERROR;
		ev.error = s->err;
		ev.epd = gs->member_fmt == PF_PGN_EPD;
		return hand_out(gs, &ev);
	case EV_MEMBER:
		gs->games_base = gs->lines_base = 0;
		gs->member_fmt = PF_PGN_AUTO;
		ev.kind = PF_GAMES_MEMBER;
		ev.member = s->member;
		return hand_out(gs, &ev);
	case EV_INPUT_ERROR:
		/* the last event (the reader may have stopped without
		   sending the end: no memory) */
		ev.kind = PF_GAMES_INPUT_ERROR;
		ev.error = s->err;
		if (hand_out(gs, &ev) == 0)
			halt(gs, NULL);
		return -1;
	default:
		halt(gs, NULL);
		return -1;
	}
}

/*
 * With the lock held, by the turn's holder, the slot at dseq handed out:
 * free it and pass the turn to the next slot, or hand that one out here
 * when it is parsed already (and so on).  Before passing the turn to a
 * slot the reader has yet to fill, the idle function (the input would
 * block; the turn is still held).
 */
static void
pass_turn(struct worker *w)
{
	pf_games *gs = w->gs;
	struct slot *s = &gs->slots[gs->dseq % gs->nslots];
	int r;

	for (;;) {
		__atomic_store_n(&s->turn, 0, __ATOMIC_RELAXED);
		s->state = SL_FREE;
		gs->dseq++;
		if (++gs->nfree >= gs->free_low && gs->free_wait)
			pthread_cond_signal(&gs->cv_free);
		s = &gs->slots[gs->dseq % gs->nslots];
		if ((s->state == SL_FREE || s->state == SL_FILLING) &&
		    gs->o.idle != NULL && !gs->regular) {
			pthread_mutex_unlock(&gs->mu);
			gs->o.idle(gs->o.idle_arg);
			pthread_mutex_lock(&gs->mu);
		}
		if (s->state != SL_DONE) {
			__atomic_store_n(&s->turn, 1, __ATOMIC_RELEASE);
			return;
		}
		pthread_mutex_unlock(&gs->mu);
		r = give_rest(w, s);
		pthread_mutex_lock(&gs->mu);
		if (r < 0)
			return;
	}
}

/* ---- the parsers ------------------------------------------------------ */

/* A piece's games: handed out while the slot has the turn, kept until
   then. */
static void
parse_piece(struct worker *w, struct slot *s)
{
	pf_games *gs = w->gs;
	pf_pgn_game *g;
	int turn = 0;

	s->alen = 0;
	s->ngames = 0;
	s->given = 0;
	s->pgames = 0;
	s->oom = 0;
	pf_pgn_start_mem(w->pgn, s->buf, s->len, s->format, s->soft_end);
	if (s->read_err)
		pf_pgn_damaged_end(w->pgn);
	while (pf_pgn_next(w->pgn, &g) == 1) {
		s->pgames += !g->stray;	/* (numbered games) */
		if (!turn && __atomic_load_n(&s->turn, __ATOMIC_ACQUIRE)) {
			turn = 1;
			if (give_kept(w, s) < 0)
				break;
		}
		if (turn) {
			if (give_game(gs, s, g) < 0)
				break;
		} else if (save_game(w, s, g) < 0) {
			s->oom = 1;
			break;
		}
	}
	s->newlines = pf_pgn_newlines(w->pgn);
	s->clean = pf_pgn_clean_end(w->pgn);
}

/*
 * With the lock held, s parsed by w: done; if it has the turn, the rest of
 * its events and the turn passed on.  (pass_turn sets the flag with the
 * lock held: either it saw the slot done and hands it out, or this thread
 * sees the flag.)
 */
static void
parsed(struct worker *w, struct slot *s)
{
	pf_games *gs = w->gs;
	int r;

	s->state = SL_DONE;
	if (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&gs->mu);
		r = give_rest(w, s);
		pthread_mutex_lock(&gs->mu);
		if (r == 0)
			pass_turn(w);
	}
}

/*
 * With the lock held: one piece of work, if there is one ready (a job of
 * frames first: their text is what the pieces are cut from), done without
 * the lock; then parsed().  1 when done, 0 when there was none.
 */
static int
work(struct worker *w)
{
	pf_games *gs = w->gs;
	struct slot *s;
	struct zjob *z = &gs->zjobs[gs->zp % gs->nz];

	if (gs->over)
		return 0;
	if (z->state == ZJ_READY) {
		z->state = ZJ_BUSY;
		gs->zp++;
		pthread_mutex_unlock(&gs->mu);
		inflate_frames(w, z);
		pthread_mutex_lock(&gs->mu);
		z->state = ZJ_DONE;
		pthread_cond_signal(&gs->cv_zdone);
		return 1;
	}
	/* past the pieces handed out and those the reader took */
	if (gs->pseq < gs->dseq)
		gs->pseq = gs->dseq;
	while (gs->pseq < gs->wseq &&
	    gs->slots[gs->pseq % gs->nslots].claimed == gs->pseq + 1)
		gs->pseq++;
	s = &gs->slots[gs->pseq % gs->nslots];
	if (s->state != SL_READY)
		return 0;
	gs->pseq++;
	s->state = SL_PARSING;
	if (s->kind == EV_PIECE) {
		pthread_mutex_unlock(&gs->mu);
		parse_piece(w, s);
		pthread_mutex_lock(&gs->mu);
	}
	parsed(w, s);
	return 1;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	pf_games *gs = w->gs;

	pthread_mutex_lock(&gs->mu);
	while (!gs->stop)
		if (!work(w))
			pthread_cond_wait(&gs->cv_ready, &gs->mu);
	pthread_mutex_unlock(&gs->mu);
	return NULL;
}

/* The caller's thread: the first slot gets the turn, then this thread
   parses as the others do, until no more events will be handed out. */
static int
run_par(pf_games *gs)
{
	struct worker *w = &gs->workers[0];
	struct slot *s = &gs->slots[0];
	int r;

	pthread_mutex_lock(&gs->mu);
	if (s->state == SL_DONE) {
		pthread_mutex_unlock(&gs->mu);
		r = give_rest(w, s);
		pthread_mutex_lock(&gs->mu);
		if (r == 0)
			pass_turn(w);
	} else
		__atomic_store_n(&s->turn, 1, __ATOMIC_RELEASE);
	while (!gs->over)
		if (!work(w))
			pthread_cond_wait(&gs->cv_ready, &gs->mu);
	pthread_mutex_unlock(&gs->mu);
	/* (halt wrote failed before it took the lock to set over) */
	return gs->failed ? -1 : 0;
}

/* ---- open, run, close ------------------------------------------------- */

static int
start_threads(pf_games *gs)
{
	int i;

	gs->nworkers = gs->o.threads;
	gs->nslots = (size_t)gs->nworkers * 3 + 6;
	gs->nz = (size_t)gs->nworkers + 2;
	gs->nfree = gs->nslots;
	gs->free_low = gs->nslots / 3;
	if ((gs->no_eval_kind = calloc(PF_PGN_MAX_PLIES + 1, 1)) == NULL ||
	    (gs->no_eval = calloc(PF_PGN_MAX_PLIES + 1, 4)) == NULL ||
	    (gs->no_eval_depth = calloc(PF_PGN_MAX_PLIES + 1, 2)) == NULL ||
	    (gs->no_clk = malloc((PF_PGN_MAX_PLIES + 1) * 4)) == NULL)
		return -1;
	memset(gs->no_clk, 0xff, (PF_PGN_MAX_PLIES + 1) * 4);	/* unknown */
	if ((gs->slots = calloc(gs->nslots, sizeof(*gs->slots))) == NULL ||
	    (gs->workers = calloc((size_t)gs->nworkers,
	    sizeof(*gs->workers))) == NULL ||
	    (gs->zjobs = calloc(gs->nz, sizeof(*gs->zjobs))) == NULL)
		return -1;
	pthread_mutex_init(&gs->mu, NULL);
	pthread_cond_init(&gs->cv_free, NULL);
	pthread_cond_init(&gs->cv_ready, NULL);
	pthread_cond_init(&gs->cv_zdone, NULL);
	gs->threaded = 1;
	for (i = 0; i < gs->nworkers; i++) {
		struct worker *w = &gs->workers[i];

		w->gs = gs;
		if ((w->pgn = pf_pgn_new(gs->o.format, gs->o.accept,
		    gs->o.accept_arg)) == NULL)
			return -1;
		pf_pgn_want_hash(w->pgn, gs->o.want_hash);
		pf_pgn_mate_moves(w->pgn, gs->o.mate_moves);
		if (i == 0)
			continue;
		/* from a regular file the reader is one of the parsers (see
		   publish_piece), in place of a thread */
		if (i == gs->nworkers - 1 && gs->regular) {
			gs->rw = w;
			continue;
		}
		if (pthread_create(&w->tid, NULL, worker_main, w) != 0)
			return -1;
		w->started = 1;
	}
	pf_input_set_idle(gs->in, reader_idle, gs);
	if (pthread_create(&gs->reader, NULL, reader_main, gs) != 0)
		return -1;
	gs->reader_started = 1;
	return 0;
}

pf_games *
pf_games_open(const char *path, const char *name, const pf_games_opts *o)
{
	pf_games *gs;
	int e;

	if ((gs = calloc(1, sizeof(*gs))) == NULL)
		return NULL;
	gs->o = *o;
	if (gs->o.threads < 1)
		gs->o.threads = 1;
	if (gs->o.threads > PF_GAMES_MAX_THREADS)
		gs->o.threads = PF_GAMES_MAX_THREADS;
	if (gs->o.piece == 0)
		gs->o.piece = PF_GAMES_PIECE;
	if (gs->o.frames_from <= 0)
		gs->o.frames_from = PF_GAMES_FRAMES;
	if ((gs->in = pf_input_open(path, name)) == NULL) {
		e = errno;
		free(gs);
		errno = e;
		return NULL;
	}
	gs->regular = pf_input_regular(gs->in);
	if (gs->o.threads == 1) {
		if ((gs->pgn = pf_pgn_new(gs->o.format, gs->o.accept,
		    gs->o.accept_arg)) == NULL)
			goto fail;
		pf_pgn_want_hash(gs->pgn, gs->o.want_hash);
		pf_pgn_mate_moves(gs->pgn, gs->o.mate_moves);
		pf_input_set_idle(gs->in, gs->o.idle, gs->o.idle_arg);
		return gs;
	}
	if (start_threads(gs) == 0)
		return gs;
fail:
	pf_games_close(gs);
	errno = ENOMEM;
	return NULL;
}

int
pf_games_run(pf_games *gs, pf_games_fn fn, void *arg)
{
	gs->fn = fn;
	gs->fn_arg = arg;
	return gs->threaded ? run_par(gs) : run_seq(gs);
}

uint64_t
pf_games_frames(pf_games *gs)
{
	uint64_t n;

	if (!gs->threaded)
		return 0;
	pthread_mutex_lock(&gs->mu);
	n = gs->frames;
	pthread_mutex_unlock(&gs->mu);
	return n;
}

const char *
pf_games_error(const pf_games *gs)
{
	return gs->err;
}

void
pf_games_close(pf_games *gs)
{
	size_t i;
	int k;

	if (gs == NULL)
		return;
	if (gs->threaded) {
		pthread_mutex_lock(&gs->mu);
		gs->stop = 1;
		pthread_cond_broadcast(&gs->cv_free);
		pthread_cond_broadcast(&gs->cv_ready);
		pthread_cond_broadcast(&gs->cv_zdone);
		pthread_mutex_unlock(&gs->mu);
		if (gs->reader_started) {
			/* it may wait on a pipe that has nothing to say */
			pthread_mutex_lock(&gs->mu);
			if (!gs->reader_done && gs->reader_reading) {
				pthread_cancel(gs->reader);
				gs->reader_cancelled = 1;
			}
			pthread_mutex_unlock(&gs->mu);
			pthread_join(gs->reader, NULL);
		}
		for (k = 0; k < gs->nworkers; k++) {
			if (gs->workers[k].started)
				pthread_join(gs->workers[k].tid, NULL);
			pf_pgn_free(gs->workers[k].pgn);
			ZSTD_freeDCtx(gs->workers[k].dctx);
		}
		for (i = 0; i < gs->nslots; i++) {
			free(gs->slots[i].buf);
			free(gs->slots[i].member);
			free(gs->slots[i].arena);
			free(gs->slots[i].offs);
		}
		for (i = 0; i < gs->nz; i++) {
			free(gs->zjobs[i].src);
			free(gs->zjobs[i].dst);
		}
		free(gs->zjobs);
		free(gs->zbuf);
		free(gs->slots);
		free(gs->workers);
		pthread_mutex_destroy(&gs->mu);
		pthread_cond_destroy(&gs->cv_free);
		pthread_cond_destroy(&gs->cv_ready);
			pthread_cond_destroy(&gs->cv_zdone);
	}
	/* A reader cancelled inside a read leaves libarchive mid-call:
	   its input is not freed (the process is about to end). */
	if (!gs->reader_cancelled)
		pf_input_free(gs->in);
	pf_pgn_free(gs->pgn);
	free(gs->no_eval_kind);
	free(gs->no_eval);
	free(gs->no_eval_depth);
	free(gs->no_clk);
	free(gs);
}
