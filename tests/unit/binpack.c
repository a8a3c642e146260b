/*
 * binpack.c - unit tests for the binpack codec (lib/binpack.h): the
 * bundled sample written by nnue-pytorch's writer reads as the entries
 * its reader printed (testdata/binpack/lichess_sample.binpack.txt), those
 * entries written again give the same bytes, damaged files keep every
 * entry before the damage, and entries that cannot chain, castling, en
 * passant and every promotion round-trip.  Files are found from the
 * working directory or $POSFLOW_SRC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binpack.h"
#include "t.h"

#define SAMPLE		"testdata/binpack/lichess_sample.binpack"
#define SAMPLE_N	2770
#define CORNERS		(1ULL | 1ULL << 7 | 1ULL << 56 | 1ULL << 63)

typedef struct txt_entry {
	char fen[PF_FEN_MAX];
	char uci[PF_UCI_MAX];
	int score, ply, result;
} txt_entry;

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const char *
src_path(const char *rel, char *buf, size_t len)
{
	const char *dir = getenv("POSFLOW_SRC");

	snprintf(buf, len, "%s/%s", dir != NULL ? dir : ".", rel);
	return buf;
}

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *fp;
	uint8_t *p = NULL;
	long n;

	if ((fp = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (p = malloc((size_t)n + 1)) != NULL
	    && fread(p, 1, (size_t)n, fp) == (size_t)n)
		*len = (size_t)n;
	else {
		free(p);
		p = NULL;
	}
	fclose(fp);
	return p;
}

/* A descriptor reading bytes p[0..n): an unlinked temporary file. */
static int
fd_of(const uint8_t *p, size_t n)
{
	FILE *fp = tmpfile();
	int fd;

	if (fp == NULL || (n > 0 && fwrite(p, 1, n, fp) != n) ||
	    fflush(fp) != 0) {
		perror("tmpfile");
		exit(1);
	}
	fd = dup(fileno(fp));
	fclose(fp);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The bytes written to fd (a temporary file), from its start. */
static uint8_t *
fd_bytes(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc((size_t)n + 1);

	lseek(fd, 0, SEEK_SET);
	if (p == NULL || read(fd, p, (size_t)n) != (ssize_t)n) {
		perror("read");
		exit(1);
	}
	*len = (size_t)n;
	return p;
}

static int
tmp_fd(void)
{
	FILE *fp = tmpfile();
	int fd;

	if (fp == NULL) {
		perror("tmpfile");
		exit(1);
	}
	fd = dup(fileno(fp));
	fclose(fp);
	return fd;
}

static txt_entry *
load_txt(const char *path, int *n)
{
	char line[512], *f[5], *p;
	txt_entry *t = NULL;
	FILE *fp;
	int i, cap = 0;

	*n = 0;
	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		for (p = line, i = 0; i < 5; i++) {
			f[i] = p;
			if ((p = strchr(p, '|')) == NULL)
				break;
			*p++ = '\0';
		}
		if (i != 4)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 4096;
			t = realloc(t, (size_t)cap * sizeof(*t));
		}
		snprintf(t[*n].fen, sizeof(t[*n].fen), "%.*s",
		    (int)sizeof(t[*n].fen) - 1, f[0]);
		snprintf(t[*n].uci, sizeof(t[*n].uci), "%.*s",
		    (int)sizeof(t[*n].uci) - 1, f[1]);
		t[*n].score = atoi(f[2]);
		t[*n].ply = atoi(f[3]);
		t[*n].result = atoi(f[4]);
		(*n)++;
	}
	fclose(fp);
	return t;
}

/* The FEN without its last field (the full-move number). */
static size_t
fen_stem_len(const char *fen)
{
	const char *p = strrchr(fen, ' ');

	return p != NULL ? (size_t)(p - fen) : strlen(fen);
}

/*
 * Does e match the reader's printed line t?  That reader prints the
 * full-move number as (ply + 1) / 2; ours is Stockfish's,
 * 1 + (ply - black to move) / 2.
 */
static int
matches(const pf_sfentry *e, const txt_entry *t, char *why, size_t len)
{
	char fen[PF_FEN_MAX], uci[PF_UCI_MAX] = "0000";
	size_t n = fen_stem_len(t->fen);
	int fm = 1 + (e->ply - (e->board.stm == PF_BLACK)) / 2;

	pf_board_to_fen(&e->board, fen);
	if (e->move != PF_MOVE_NONE)
		pf_move_to_uci(&e->board, e->move, uci);
	if (fen_stem_len(fen) != n || strncmp(fen, t->fen, n) != 0 ||
	    atoi(t->fen + n + 1) != (t->ply + 1) / 2 ||
	    e->board.fullmove != (fm < 1 ? 1 : fm) ||
	    strcmp(uci, t->uci) != 0 || e->score != t->score ||
	    e->ply != t->ply || e->result != t->result) {
		snprintf(why, len, "got %s|%s|%d|%d|%d want %s|%s|%d|%d|%d",
		    fen, uci, e->score, e->ply, e->result, t->fen, t->uci,
		    t->score, t->ply, t->result);
		return 0;
	}
	return 1;
}

/* Entries of the printed lines, as a writer's input. */
static pf_sfentry *
entries_of(const txt_entry *t, int n)
{
	pf_sfentry *e = calloc((size_t)n, sizeof(*e));
	char err[160];
	int i;

	for (i = 0; i < n; i++) {
		if (pf_board_from_fen(&e[i].board, t[i].fen, err,
		    sizeof(err)) == -1 || pf_move_from_uci(&e[i].board,
		    t[i].uci, strlen(t[i].uci), &e[i].move) == -1) {
			fprintf(stderr, "line %d: %s\n", i + 1, err);
			exit(1);
		}
		e[i].score = (int16_t)t[i].score;
		e[i].ply = (uint16_t)t[i].ply;
		e[i].result = (int8_t)t[i].result;
	}
	return e;
}

/* Write e[0..n) into a binpack held in memory.  NULL if a write fails. */
static uint8_t *
write_all(const pf_sfentry *e, int n, size_t *len, char *err, size_t errlen)
{
	pf_binpack_writer *w;
	uint8_t *p = NULL;
	int fd = tmp_fd(), i;

	w = pf_binpack_writer_open(fd, "out");
	for (i = 0; i < n; i++)
		if (pf_binpack_write(w, &e[i]) == -1)
			break;
	if (i == n && pf_binpack_writer_close(w) == 0)
		p = fd_bytes(fd, len);
	else
		snprintf(err, errlen, "%s", pf_binpack_writer_error(w));
	pf_binpack_writer_free(w);
	close(fd);
	return p;
}

/*
 * Read a binpack held in memory.  Returns the entries read before the
 * first error (or all), *nerr the number of -1 returns, *err the first
 * error; reads until 0 (at most a bounded number of calls).
 */
static pf_sfentry *
read_all(const uint8_t *p, size_t len, int *n, int *first_err_at, int *nerr,
    char *err, size_t errlen)
{
	pf_binpack_reader *r;
	pf_sfentry *out = NULL, e;
	int fd = fd_of(p, len), rc, cap = 0, calls = 0;

	*n = 0;
	*nerr = 0;
	*first_err_at = -1;
	err[0] = '\0';
	r = pf_binpack_reader_open(fd, "in");
	while ((rc = pf_binpack_read(r, &e)) != 0 && calls++ < 10000000) {
		if (rc == -1) {
			if (*nerr == 0) {
				snprintf(err, errlen, "%s",
				    pf_binpack_reader_error(r));
				*first_err_at = *n;
			}
			(*nerr)++;
			continue;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 4096;
			out = realloc(out, (size_t)cap * sizeof(*out));
		}
		out[(*n)++] = e;
	}
	pf_binpack_reader_free(r);
	close(fd);
	return out;
}

/* Entries equal as binpack keeps them (the full-move number derived). */
static int
same_entry(const pf_sfentry *a, const pf_sfentry *b, char *why, size_t len)
{
	char fa[PF_FEN_MAX], fb[PF_FEN_MAX];
	pf_board nb = b->board;
	int fm = 1 + (b->ply - (b->board.stm == PF_BLACK)) / 2;

	nb.fullmove = (uint16_t)(fm < 1 ? 1 : fm);
	nb.chess960 = 0;
	pf_board_to_fen(&a->board, fa);
	pf_board_to_fen(&nb, fb);
	if (strcmp(fa, fb) != 0 || a->move != b->move ||
	    a->score != b->score || a->ply != b->ply ||
	    a->result != b->result || a->board.key != nb.key) {
		snprintf(why, len, "got %s %04x %d %d %d want %s %04x %d %d "
		    "%d", fa, a->move, a->score, a->ply, a->result, fb,
		    b->move, b->score, b->ply, b->result);
		return 0;
	}
	return 1;
}

static int
round_trip(const pf_sfentry *e, int n, const char *what, size_t *size)
{
	char err[512], why[512];
	uint8_t *bytes;
	pf_sfentry *got;
	size_t len = 0;
	int ngot, at, nerr, i, bad = 0;

	if ((bytes = write_all(e, n, &len, err, sizeof(err))) == NULL) {
		CHECK(0, "%s: write: %s", what, err);
		return 0;
	}
	got = read_all(bytes, len, &ngot, &at, &nerr, err, sizeof(err));
	CHECK(nerr == 0 && ngot == n, "%s: %d entries in %zu bytes read "
	    "back as %d (%s)", what, n, len, ngot, nerr ? err : "no error");
	for (i = 0; i < n && i < ngot; i++)
		if (!same_entry(&got[i], &e[i], why, sizeof(why))) {
			if (bad++ < 5)
				printf("# %s: entry %d: %s\n", what, i, why);
		}
	CHECK(bad == 0, "%s: every entry read back equal", what);
	if (size != NULL)
		*size = len;
	free(bytes);
	free(got);
	return bad == 0;
}

/* ---- the tests ---------------------------------------------------------- */

static void
test_codec(const uint8_t *sample)
{
	uint8_t pos[PF_BINPACK_POS_SIZE], stem[PF_BINPACK_STEM_SIZE];
	char err[160];
	pf_sfentry e, d;
	pf_board b;
	pf_move m;
	int ok;

	/* The sample's first stem: the start position, e2e4, 71, ply 0,
	   a loss for white. */
	pf_board_startpos(&b);
	ok = pf_binpack_pos_encode(&b, pos, err, sizeof(err)) == 0;
	CHECK(ok && memcmp(pos, sample + 8, sizeof(pos)) == 0,
	    "start position encodes as the sample's first stem");
	CHECK(pf_binpack_pos_decode(&b, sample + 8, err, sizeof(err)) == 0 &&
	    strcmp(pf_board_to_fen(&b, (char[PF_FEN_MAX]){ 0 }),
	    PF_STARTPOS_FEN) == 0, "the sample's first position decodes");
	pf_move_from_uci(&b, "e2e4", 4, &m);
	CHECK(pf_binpack_move_encode(m) == 0x0c70 &&
	    pf_binpack_move_decode(0x0c70) == m, "e2e4 is 0x0c70");
	memset(&e, 0, sizeof(e));
	e.board = b;
	e.move = m;
	e.score = 71;
	e.result = -1;
	CHECK(pf_binpack_stem_encode(&e, stem, err, sizeof(err)) == 0 &&
	    memcmp(stem, sample + 8, sizeof(stem)) == 0,
	    "the first stem encodes byte for byte");
	CHECK(pf_binpack_stem_decode(&d, sample + 8, err, sizeof(err)) == 0 &&
	    d.move == m && d.score == 71 && d.ply == 0 && d.result == -1,
	    "the first stem decodes");

	/* Castling moves are king takes rook, as in pf_move. */
	pf_board_from_fen(&b, "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", err,
	    sizeof(err));
	pf_move_from_uci(&b, "e8c8", 4, &m);
	CHECK(pf_binpack_move_encode(m) == (2 << 14 | 60 << 8 | 56 << 2) &&
	    pf_binpack_move_decode(pf_binpack_move_encode(m)) == m,
	    "black's long castling is type 2, e8 takes a8");
	CHECK(pf_binpack_pos_encode(&b, pos, err, sizeof(err)) == 0 &&
	    pos[8] == (10 << 4 | 13) && pos[9] == (14 << 4 | 13) &&
	    pos[10] == (14 << 4 | 15) &&
	    pf_binpack_pos_decode(&b, pos, err, sizeof(err)) == 0 &&
	    b.castle_rooks == CORNERS && b.stm == PF_BLACK,
	    "castling rooks and black to move: nibbles 13, 14, 15");

	/* En passant: the pawn that has just moved is nibble 12. */
	pf_board_from_fen(&b, "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1", err,
	    sizeof(err));
	CHECK(pf_binpack_pos_encode(&b, pos, err, sizeof(err)) == 0 &&
	    pos[8] == (1 << 4 | 10) && pos[9] == (15 << 4 | 12) &&
	    pf_binpack_pos_decode(&b, pos, err, sizeof(err)) == 0 &&
	    b.ep == 20, "en passant pawn is nibble 12 and gives e3 back");

	/* Refused: Chess960 castling, more than 32 pieces is impossible on
	   a valid board, a castling nibble off the corners. */
	pf_board_from_fen(&b, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/"
	    "BQ1BNRKR w HFhf - 2 9", err, sizeof(err));
	CHECK(pf_binpack_pos_encode(&b, pos, err, sizeof(err)) == -1 &&
	    strstr(err, "Chess960") != NULL, "Chess960 castling refused: %s",
	    err);
	pf_board_startpos(&b);
	pf_binpack_pos_encode(&b, pos, err, sizeof(err));
	pos[8] = (uint8_t)(pos[8] & 0xF0) | 6;	/* a1: plain rook */
	pos[9] = (uint8_t)(pos[9] & 0x0F) | 13 << 4;	/* d1: castling */
	CHECK(pf_binpack_pos_decode(&b, pos, err, sizeof(err)) == -1 &&
	    strstr(err, "castling rook on d1") != NULL,
	    "castling rook off a corner refused: %s", err);
}

static void
test_sample(const uint8_t *sample, size_t slen, const txt_entry *t, int nt)
{
	pf_sfentry *got, *in;
	char err[512], why[512];
	uint8_t *bytes;
	size_t len = 0, i, diff = 0, first = 0;
	int n, at, nerr, k, bad = 0;

	got = read_all(sample, slen, &n, &at, &nerr, err, sizeof(err));
	CHECK(nt == SAMPLE_N && n == SAMPLE_N && nerr == 0,
	    "sample: %d entries read, %d lines (%s)", n, nt,
	    nerr ? err : "no error");
	for (k = 0; k < n && k < nt; k++)
		if (!matches(&got[k], &t[k], why, sizeof(why)) && bad++ < 5)
			printf("# entry %d: %s\n", k, why);
	CHECK(bad == 0, "sample: every entry as nnue-pytorch's reader "
	    "printed it");
	free(got);

	in = entries_of(t, nt);
	bytes = write_all(in, nt, &len, err, sizeof(err));
	CHECK(bytes != NULL, "sample entries written (%s)",
	    bytes ? "ok" : err);
	if (bytes != NULL) {
		for (i = 0; i < len && i < slen; i++)
			if (bytes[i] != sample[i] && diff++ == 0)
				first = i;
		CHECK(len == slen && diff == 0, "sample entries written "
		    "again: %zu bytes, nnue-pytorch's %zu, %zu differ "
		    "(first at %zu)", len, slen, diff, first);
	}
	free(bytes);
	free(in);
}

/* Every entry of got[] is the same as the sample's line. */
static int
prefix_ok(const pf_sfentry *got, int n, const txt_entry *t, int nt)
{
	char why[512];
	int k;

	for (k = 0; k < n; k++)
		if (k >= nt || !matches(&got[k], &t[k % nt], why,
		    sizeof(why)))
			return 0;
	return 1;
}

static void
test_damage(const uint8_t *sample, size_t slen, const txt_entry *t, int nt)
{
	uint8_t *three = malloc(3 * slen), *copy = malloc(slen);
	pf_sfentry *got;
	char err[512], why[512];
	int n, at, nerr, k, prev = -1, mono = 1, pre = 1, msg = 1, cut, bad;
	int trials, crashes = 0;

	/* Truncated anywhere: the entries before the cut, then -1 naming
	   the offset, then the end. */
	for (cut = 0; cut < (int)slen; cut += 13) {
		got = read_all(sample, (size_t)cut, &n, &at, &nerr, err,
		    sizeof(err));
		if (cut > 0 && (nerr != 1 || strstr(err, "offset ") == NULL ||
		    strstr(err, "truncated") == NULL)) {
			if (msg)
				printf("# cut %d: %d errors: %s\n", cut, nerr,
				    err);
			msg = 0;
		}
		if (!prefix_ok(got, n, t, nt))
			pre = 0;
		if (n < prev)
			mono = 0;
		prev = n;
		free(got);
	}
	CHECK(msg, "truncated files: one error naming the offset "
	    "(\"truncated\")");
	CHECK(pre && mono, "truncated files: the entries before the cut, "
	    "more the later the cut (%d at %d bytes)", prev, cut - 13);
	got = read_all(sample, slen - 1, &n, &at, &nerr, err, sizeof(err));
	printf("# one byte short: %d entries, %s\n", n, err);
	CHECK(n >= SAMPLE_N - 2 && nerr == 1 && prefix_ok(got, n, t, nt),
	    "one byte short: all but the last entries kept");
	free(got);

	/* Three copies of the sample: three chunks. */
	for (k = 0; k < 3; k++)
		memcpy(three + k * slen, sample, slen);
	got = read_all(three, 3 * slen, &n, &at, &nerr, err, sizeof(err));
	CHECK(n == 3 * SAMPLE_N && nerr == 0, "three chunks: %d entries", n);
	free(got);

	three[slen] ^= 0x20;		/* "BINP" -> "bINP" */
	got = read_all(three, 3 * slen, &n, &at, &nerr, err, sizeof(err));
	snprintf(why, sizeof(why), "offset %zu: bad chunk header; resuming "
	    "at offset %zu", slen, 2 * slen);
	CHECK(n == 2 * SAMPLE_N && nerr == 1 && at == SAMPLE_N &&
	    strstr(err, why) != NULL && prefix_ok(got, SAMPLE_N, t, nt),
	    "flipped magic of chunk 2: chunk 1 kept, chunk 3 read: %s", err);
	free(got);
	three[slen] ^= 0x20;

	three[slen + 7] ^= 0x40;	/* size + 1 GiB */
	got = read_all(three, 3 * slen, &n, &at, &nerr, err, sizeof(err));
	snprintf(why, sizeof(why), "offset %zu: bad chunk header: size",
	    slen);
	CHECK(n == 2 * SAMPLE_N && nerr == 1 && at == SAMPLE_N &&
	    strstr(err, why) != NULL, "absurd chunk size refused, chunk 3 "
	    "read: %s", err);
	free(got);
	three[slen + 7] ^= 0x40;

	three[7] ^= 0x40;		/* first header: no resync possible
					   before chunk 2 */
	got = read_all(three, 3 * slen, &n, &at, &nerr, err, sizeof(err));
	CHECK(n == 2 * SAMPLE_N && nerr == 1 && at == 0 &&
	    strstr(err, "offset 0: ") != NULL, "absurd first chunk size: "
	    "chunks 2 and 3 read: %s", err);
	free(got);
	three[7] ^= 0x40;

	/* The start of a chunk header at the end: the magic as far as it
	   goes, the rest of the 8 bytes the size. */
	{
		static const char *tails[] = { "BI", "BINP\001\002",
		    "BINP\001\002\003", "BX", "BINX\001" };
		static const int truncated[] = { 1, 1, 1, 0, 0 };
		static const size_t tlen[] = { 2, 6, 7, 2, 5 };

		for (k = 0; k < 5; k++) {
			memcpy(three, sample, slen);
			memcpy(three + slen, tails[k], tlen[k]);
			got = read_all(three, slen + tlen[k], &n, &at, &nerr,
			    err, sizeof(err));
			snprintf(why, sizeof(why), "offset %zu: truncated "
			    "chunk header (%zu of 8 bytes)", slen, tlen[k]);
			CHECK(n == SAMPLE_N && nerr == 1 &&
			    (strstr(err, why) != NULL) == truncated[k] &&
			    (truncated[k] || strstr(err, "bad chunk header")),
			    "%zu bytes of a chunk header at the end: %s",
			    tlen[k], err);
			free(got);
		}
	}

	/* A damaged stem position (a black pawn on the first rank). */
	memcpy(copy, sample, slen);
	copy[16] = (uint8_t)((copy[16] & 0xF0) | 1);
	got = read_all(copy, slen, &n, &at, &nerr, err, sizeof(err));
	CHECK(n == 0 && nerr == 1 && strstr(err, "offset 8: bad position")
	    != NULL, "damaged first stem: %s", err);
	free(got);

	/* Random flips: no crash, no invalid board, and the end reached. */
	for (trials = 0; trials < 400; trials++) {
		size_t at_byte = (size_t)(rng() % slen);
		char e2[160];

		memcpy(copy, sample, slen);
		copy[at_byte] ^= (uint8_t)(1 + rng() % 255);
		got = read_all(copy, slen, &n, &at, &nerr, err, sizeof(err));
		for (k = 0, bad = 0; k < n; k++)
			if (pf_board_validate(&got[k].board, e2,
			    sizeof(e2)) == -1 || (got[k].move != PF_MOVE_NONE
			    && !pf_is_legal(&got[k].board, got[k].move)))
				bad = 1;
		crashes += bad;
		free(got);
	}
	CHECK(crashes == 0, "400 random byte flips: every entry returned "
	    "valid");
	free(three);
	free(copy);
}

static void
test_unrelated(const txt_entry *t, int nt)
{
	pf_sfentry *e = entries_of(t, nt), tmp;
	size_t size = 0;
	int i, j;

	/* Shuffled: almost no entry follows the one before it. */
	for (i = nt - 1; i > 0; i--) {
		j = (int)(rng() % (uint64_t)(i + 1));
		tmp = e[i];
		e[i] = e[j];
		e[j] = tmp;
	}
	round_trip(e, nt, "shuffled entries", &size);
	CHECK(size >= 8 + (size_t)nt * 34 - 34 * 20, "shuffled entries are "
	    "stems: %zu bytes for %d entries", size, nt);

	/* In order, but every result the same: no chains either, and
	   every entry keeps its own half-move clock. */
	free(e);
	e = entries_of(t, nt);
	for (i = 0; i < nt; i++) {
		e[i].result = 1;
		e[i].board.rule50 = (uint8_t)(rng() % 256);
	}
	round_trip(e, nt, "game order, results not alternating", &size);
	CHECK(size == 8 + (size_t)nt * 34, "no chains: %zu bytes", size);
	free(e);
}

/* Random games through castling, en passant and promotions. */
static void
test_special(void)
{
	static const char *starts[] = {
		PF_STARTPOS_FEN,
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w "
		    "KQkq - 0 1",
		"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq "
		    "- 0 1",
		"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
		"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
		"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
		"4k3/1P6/8/3pP3/8/8/6p1/4K3 w - d6 0 1",
	};
	enum { NGAMES = 600, MAXPLY = 120 };
	pf_move moves[PF_MAX_MOVES], m, special[PF_MAX_MOVES];
	pf_sfentry *e = calloc((size_t)NGAMES * (MAXPLY + 1), sizeof(*e));
	int castles = 0, eps = 0, promo[4] = { 0 }, nomove = 0;
	int n = 0, g, ply, nm, ns, i, start_ply;
	char err[160];
	pf_board b;
	pf_undo u;

	for (g = 0; g < NGAMES; g++) {
		const char *fen = starts[g % (sizeof(starts) /
		    sizeof(starts[0]))];
		int result = (int)(rng() % 3) - 1;

		pf_board_from_fen(&b, fen, err, sizeof(err));
		start_ply = 2 * (b.fullmove - 1) + (b.stm == PF_BLACK);
		for (ply = 0; ply <= MAXPLY; ply++) {
			pf_sfentry *x = &e[n++];

			x->board = b;
			x->ply = (uint16_t)(start_ply + ply);
			x->result = (int8_t)result;
			result = -result;
			switch (rng() % 8) {
			case 0:
				x->score = INT16_MIN;
				break;
			case 1:
				x->score = INT16_MAX;
				break;
			case 2:
				x->score = (int16_t)(uint16_t)rng();
				break;
			default:
				x->score = (int16_t)((int)(rng() % 601) - 300);
			}
			nm = pf_gen_legal(&b, moves);
			if (nm == 0 || ply == MAXPLY) {
				x->move = nm == 0 || rng() % 2 ? PF_MOVE_NONE :
				    moves[rng() % (uint64_t)nm];
				nomove += x->move == PF_MOVE_NONE;
				break;
			}
			/* Prefer the rare moves. */
			for (i = ns = 0; i < nm; i++)
				if (PF_MOVE_KIND(moves[i]) != PF_MK_NORMAL)
					special[ns++] = moves[i];
			m = ns > 0 && rng() % 2 ? special[rng() % (uint64_t)ns]
			    : moves[rng() % (uint64_t)nm];
			x->move = m;
			castles += PF_MOVE_KIND(m) == PF_MK_CASTLE;
			eps += PF_MOVE_KIND(m) == PF_MK_ENPASSANT;
			if (PF_MOVE_KIND(m) == PF_MK_PROMOTION)
				promo[m >> 14]++;
			pf_make_move(&b, m, &u);
		}
	}
	printf("# %d entries: %d castlings, %d en passant, promotions "
	    "n %d b %d r %d q %d, %d without a move\n", n, castles, eps,
	    promo[0], promo[1], promo[2], promo[3], nomove);
	CHECK(castles > 0 && eps > 0 && promo[0] > 0 && promo[1] > 0 &&
	    promo[2] > 0 && promo[3] > 0 && nomove > 0,
	    "random games cover castling, en passant, every promotion");
	round_trip(e, n, "random games", NULL);
	free(e);
}

static void
test_refused(void)
{
	pf_binpack_writer *w;
	pf_sfentry e, good;
	char err[160];
	uint8_t *bytes;
	size_t len;
	int fd = tmp_fd(), rc[6];

	memset(&good, 0, sizeof(good));
	pf_board_startpos(&good.board);
	pf_move_from_uci(&good.board, "g1f3", 4, &good.move);
	w = pf_binpack_writer_open(fd, "out");
	e = good;
	e.ply = PF_BINPACK_PLY_MAX + 1;
	rc[0] = pf_binpack_write(w, &e);
	CHECK(rc[0] == -1 && strstr(pf_binpack_writer_error(w), "ply 16384")
	    != NULL, "ply above 16383 refused: %s",
	    pf_binpack_writer_error(w));
	e = good;
	e.result = 2;
	rc[1] = pf_binpack_write(w, &e);
	CHECK(rc[1] == -1, "result 2 refused: %s",
	    pf_binpack_writer_error(w));
	e = good;
	e.move = PF_MAKE_MOVE(12, 36, PF_MK_NORMAL, 0);	/* e2e5 */
	rc[2] = pf_binpack_write(w, &e);
	CHECK(rc[2] == -1 && strstr(pf_binpack_writer_error(w), "e2e5")
	    != NULL, "illegal move refused: %s",
	    pf_binpack_writer_error(w));
	e = good;
	pf_board_from_fen(&e.board, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/"
	    "NPP1P1PP/BQ1BNRKR w HFhf - 2 9", err, sizeof(err));
	e.move = PF_MOVE_NONE;
	rc[3] = pf_binpack_write(w, &e);
	CHECK(rc[3] == -1 && strstr(pf_binpack_writer_error(w), "Chess960")
	    != NULL, "Chess960 castling refused: %s",
	    pf_binpack_writer_error(w));
	/* A Chess960 board without castling rights is a position like any
	   other. */
	pf_board_from_fen(&e.board, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/"
	    "NPP1P1PP/BQ1BNRKR w - - 2 9", err, sizeof(err));
	e.board.chess960 = 1;
	rc[4] = pf_binpack_write(w, &e);
	rc[5] = pf_binpack_write(w, &good);
	CHECK(rc[4] == 0 && rc[5] == 0 && pf_binpack_writer_close(w) == 0 &&
	    pf_binpack_writer_entries(w) == 2 &&
	    pf_binpack_write(w, &good) == -1, "the writer goes on after a "
	    "refused entry; nothing after close");
	pf_binpack_writer_free(w);
	bytes = fd_bytes(fd, &len);
	CHECK(len == 8 + 2 * 34, "two stems written: %zu bytes", len);
	free(bytes);
	close(fd);

	/* A chain may go past the most a stem's ply holds: a continuation's
	   ply is not stored (the reader counts on from its stem's). */
	{
		static const char *mv[3] = { "g1f3", "g8f6", "b1c3" };
		pf_sfentry c[3];
		pf_undo u;
		int n, at, nerr, k, ok = 1;
		pf_sfentry *got;

		fd = tmp_fd();
		w = pf_binpack_writer_open(fd, "out");
		for (k = 0; k < 3; k++) {
			c[k] = good;
			if (k > 0) {
				c[k].board = c[k - 1].board;
				pf_make_move(&c[k].board, c[k - 1].move, &u);
			}
			pf_move_from_uci(&c[k].board, mv[k], 4, &c[k].move);
			c[k].ply = (uint16_t)(PF_BINPACK_PLY_MAX + k);
			if (pf_binpack_write(w, &c[k]) != 0)
				ok = 0;
		}
		CHECK(ok && pf_binpack_writer_close(w) == 0,
		    "a chain from ply 16383 on is written: %s",
		    pf_binpack_writer_error(w));
		pf_binpack_writer_free(w);
		bytes = fd_bytes(fd, &len);
		got = read_all(bytes, len, &n, &at, &nerr, err, sizeof(err));
		CHECK(n == 3 && nerr == 0 && got[1].ply == 16384 &&
		    got[2].ply == 16385 && got[2].move == c[2].move,
		    "and read back: %d entries, plies %d %d",
		    n, n > 1 ? got[1].ply : -1, n > 2 ? got[2].ply : -1);
		free(got);
		free(bytes);
		close(fd);
	}

	/* Empty: no bytes; no bytes read as an empty file. */
	fd = tmp_fd();
	w = pf_binpack_writer_open(fd, "out");
	CHECK(pf_binpack_writer_close(w) == 0 && lseek(fd, 0, SEEK_END) == 0,
	    "no entries: an empty file");
	pf_binpack_writer_free(w);
	close(fd);
	{
		int n, at, nerr;
		pf_sfentry *got = read_all((const uint8_t *)"", 0, &n, &at,
		    &nerr, err, sizeof(err));

		CHECK(n == 0 && nerr == 0, "empty input: no entries, no "
		    "error");
		free(got);
	}
}

/* Several chunks: each but the last holds 1 MiB or a little more. */
static void
test_chunks(const txt_entry *t, int nt)
{
	pf_sfentry *one = entries_of(t, nt), *e;
	int reps = 420, n = nt * reps, k, nchunks = 0, sizes_ok = 1;
	int ngot, at, nerr;
	char err[512];
	uint8_t *bytes;
	size_t len = 0, off;
	uint32_t size;

	e = malloc((size_t)n * sizeof(*e));
	for (k = 0; k < reps; k++)
		memcpy(e + (size_t)k * nt, one, (size_t)nt * sizeof(*e));
	if ((bytes = write_all(e, n, &len, err, sizeof(err))) == NULL) {
		CHECK(0, "many chunks: %s", err);
		free(e);
		free(one);
		return;
	}
	for (off = 0; off + 8 <= len; off += 8 + size) {
		size = (uint32_t)(bytes[off + 4] | bytes[off + 5] << 8 |
		    bytes[off + 6] << 16 | (uint32_t)bytes[off + 7] << 24);
		if (memcmp(bytes + off, "BINP", 4) != 0)
			sizes_ok = 0;
		if (off + 8 + size < len && (size < PF_BINPACK_CHUNK_TARGET ||
		    size > PF_BINPACK_CHUNK_TARGET + 65536))
			sizes_ok = 0;
		nchunks++;
	}
	CHECK(off == len && nchunks >= 3 && sizes_ok, "%d entries: %d chunks "
	    "of 1 MiB and a little more, %zu bytes", n, nchunks, len);
	free(read_all(bytes, len, &ngot, &at, &nerr, err, sizeof(err)));
	CHECK(ngot == n && nerr == 0, "many chunks read back: %d entries",
	    ngot);
	free(bytes);
	free(e);
	free(one);
}

int
main(void)
{
	char path[1024];
	uint8_t *sample;
	txt_entry *t;
	size_t slen = 0;
	int nt;

	sample = slurp(src_path(SAMPLE, path, sizeof(path)), &slen);
	t = load_txt(src_path(SAMPLE ".txt", path, sizeof(path)), &nt);
	CHECK(sample != NULL && t != NULL, "%s and its .txt loaded", SAMPLE);
	if (sample == NULL || t == NULL)
		return t_done();
	test_codec(sample);
	test_sample(sample, slen, t, nt);
	test_damage(sample, slen, t, nt);
	test_unrelated(t, nt);
	test_special();
	test_refused();
	test_chunks(t, nt);
	free(sample);
	free(t);
	return t_done();
}
