/*
 * trainfmt.c - libFuzzer target: the readers of the trainers' formats that
 * posimport takes from outside (lib/binpack.c, lib/sfformats.c).
 *
 * Input: one control byte, then the bytes of a file.  Bits 0-2 choose the
 * format: binpack (a stream of chunks, through pf_binpack_reader), plain
 * (text, entry by entry), bin, marlinformat, bulletformat (fixed-size
 * entries), viriformat (games), lc0 (V3 to V7 chunks, through
 * pf_lc0_reader and pf_lc0_decode; lib/lc0.c, lib/lc0read.c).  Properties:
 *   - every reader ends (binpack: each call after damage moves on or ends
 *     the input; plain: each call takes bytes);
 *   - every entry read is a valid board (pf_board_validate) with a legal
 *     move or none, a result of -1, 0 or 1;
 *   - what was read is a fixed point of writing: an entry written again
 *     by the format's encoder and read back is the same entry (binpack:
 *     the whole sequence written by pf_binpack_writer and read again, the
 *     half-move clock of a chained entry aside, which the format derives;
 *     lc0: each record decoded, encoded again in its input format with
 *     its policy, move and best move, decodes to the same position, moves
 *     and probabilities, and the reader returns fewer records than the
 *     input holds bytes for).
 */
#include <math.h>

#include "fuzz.h"
#include "binpack.h"
#include "lc0.h"
#include "record.h"
#include "sfformats.h"

#define MAX_ENTRIES	4096

enum { F_BINPACK, F_PLAIN, F_BIN, F_MARLIN, F_BULLET, F_VIRI, F_LC0, F_N };

/* The entry is one a reader may return. */
static void
check_entry(const pf_sfentry *e)
{
	char why[200];

	FUZZ_CHECK(pf_board_validate(&e->board, why, sizeof(why)) == 0);
	FUZZ_CHECK(e->move == PF_MOVE_NONE || pf_is_legal(&e->board, e->move));
	FUZZ_CHECK(e->result >= -1 && e->result <= 1);
}

/* a and b the same entry; the half-move clock too unless !clock. */
static int
same_entry(const pf_sfentry *a, const pf_sfentry *b, int clock)
{
	pf_board x = a->board, y = b->board;
	uint8_t px[PF_PACKED_SIZE], py[PF_PACKED_SIZE];

	if (!clock)
		x.rule50 = y.rule50 = 0;
	pf_board_pack(&x, px);
	pf_board_pack(&y, py);
	return memcmp(px, py, sizeof(px)) == 0 &&
	    x.chess960 == y.chess960 && a->move == b->move &&
	    a->score == b->score && a->ply == b->ply &&
	    a->result == b->result;
}

static void
fuzz_binpack(const uint8_t *data, size_t size)
{
	static pf_sfentry got[MAX_ENTRIES];
	pf_binpack_reader *r;
	pf_binpack_writer *w;
	pf_input *in;
	pf_sfentry e;
	size_t n = 0, i;
	uint64_t last;
	int rv, calls = 0, members = 0, wfd;
	char tmpl[] = "/tmp/posflow-fuzz-bpXXXXXX";

	fuzz_scratch_write(data, size);
	/* as posimport reads it: any packaging, file by file */
	FUZZ_CHECK((in = pf_input_open(fuzz_path, "fuzz")) != NULL);
	pf_input_set_binary(in);
	while (pf_input_next_member(in) == 1) {
		FUZZ_CHECK(++members < (int)size + 16);
		FUZZ_CHECK((r = pf_binpack_reader_open_source(pf_input_source,
		    in, "in")) != NULL);
		last = 0;
		while ((rv = pf_binpack_read(r, &e)) != 0) {
			/* a call moves on: damage or an entry, never the
			   same place twice without one */
			FUZZ_CHECK(++calls < 4 * (int)size + 16);
			if (rv < 0) {
				FUZZ_CHECK(pf_binpack_reader_error(r)[0] !=
				    '\0');
				FUZZ_CHECK(pf_binpack_reader_offset(r) >= last);
				last = pf_binpack_reader_offset(r);
				continue;
			}
			check_entry(&e);
			if (n < MAX_ENTRIES)
				got[n++] = e;
		}
		pf_binpack_reader_free(r);
	}
	pf_input_free(in);

	/* written again and read back: the same entries */
	FUZZ_CHECK((wfd = mkstemp(tmpl)) != -1);
	unlink(tmpl);
	FUZZ_CHECK((w = pf_binpack_writer_open(wfd, "out")) != NULL);
	for (i = 0; i < n; i++)
		FUZZ_CHECK(pf_binpack_write(w, &got[i]) == 0);
	FUZZ_CHECK(pf_binpack_writer_close(w) == 0);
	pf_binpack_writer_free(w);
	FUZZ_CHECK(lseek(wfd, 0, SEEK_SET) == 0);
	FUZZ_CHECK((r = pf_binpack_reader_open(wfd, "out")) != NULL);
	for (i = 0; (rv = pf_binpack_read(r, &e)) == 1; i++) {
		FUZZ_CHECK(i < n);
		FUZZ_CHECK(same_entry(&got[i], &e,
		    !pf_binpack_reader_chained(r)));
	}
	FUZZ_CHECK(rv == 0 && i == n);
	pf_binpack_reader_free(r);
	close(wfd);
}

static void
fuzz_plain(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	size_t at = 0, used, len;
	pf_sfentry e, back;
	char why[200], out[PF_PLAIN_MAX];
	int rv;

	while (at < size) {
		rv = pf_plain_decode(t + at, size - at, 1, &e, &used, why,
		    sizeof(why));
		FUZZ_CHECK(used <= size - at);
		if (rv == 0)
			break;
		FUZZ_CHECK(used > 0);
		at += used;
		if (rv < 0)
			continue;
		check_entry(&e);
		len = pf_plain_encode(&e, out);
		FUZZ_CHECK(len < sizeof(out) && out[len] == '\0');
		FUZZ_CHECK(pf_plain_decode(out, len, 1, &back, &used, why,
		    sizeof(why)) == 1 && used == len);
		FUZZ_CHECK(same_entry(&e, &back, 1));
	}
}

static void
fuzz_fixed(int f, const uint8_t *data, size_t size)
{
	size_t k = f == F_BIN ? PF_BIN_SIZE : f == F_MARLIN ? PF_MARLIN_SIZE :
	    PF_BULLET_SIZE, at;
	uint8_t out[PF_BIN_SIZE];
	pf_sfentry e, back;
	char why[200];
	int rv;

	for (at = 0; at + k <= size; at += k) {
		const uint8_t *p = data + at;

		rv = f == F_BIN ? pf_bin_decode(p, &e, why, sizeof(why)) :
		    f == F_MARLIN ? pf_marlin_decode(p, &e, why, sizeof(why)) :
		    pf_bullet_decode(p, &e, why, sizeof(why));
		if (rv != 0)
			continue;
		check_entry(&e);
		if (f == F_BIN) {
			/* a board the format cannot hold is refused, never
			   written wrong */
			if (pf_bin_encode(&e, out, why, sizeof(why)) != 0)
				continue;
			FUZZ_CHECK(pf_bin_decode(out, &back, why,
			    sizeof(why)) == 0);
		} else if (f == F_MARLIN) {
			pf_marlin_encode(&e, out);
			FUZZ_CHECK(pf_marlin_decode(out, &back, why,
			    sizeof(why)) == 0);
		} else {
			pf_bullet_encode(&e, out);
			FUZZ_CHECK(pf_bullet_decode(out, &back, why,
			    sizeof(why)) == 0);
		}
		FUZZ_CHECK(same_entry(&e, &back, 1));
	}
}

static void
fuzz_viri(const uint8_t *data, size_t size)
{
	size_t at = 0, p;
	long gsize;
	pf_viri_game g;
	pf_sfentry e;
	char why[200];
	int rv;

	while (at < size && (gsize = pf_viri_game_size(data + at,
	    size - at)) > 0) {
		FUZZ_CHECK((size_t)gsize <= size - at &&
		    gsize >= PF_VIRI_HEADER_SIZE + PF_VIRI_PAIR_SIZE);
		if (pf_viri_game_begin(&g, data + at, why, sizeof(why)) == 0) {
			for (p = PF_VIRI_HEADER_SIZE; p + PF_VIRI_PAIR_SIZE <=
			    (size_t)gsize; p += PF_VIRI_PAIR_SIZE) {
				rv = pf_viri_game_next(&g, data + at + p, &e,
				    why, sizeof(why));
				if (rv <= 0)
					break;
				check_entry(&e);
			}
		}
		at += (size_t)gsize;
	}
}

/* A decoded lc0 entry encoded again, as the position alone (its history
   filled as lc0 fills it), decodes to the same entry. */
static void
lc0_fixed_point(const pf_lc0_entry *e)
{
	static pf_lc0_entry back;
	static pf_lc0_v6 v;
	static uint8_t out[PF_LC0_V6_SIZE];
	const pf_board *hist[1] = { &e->board };
	int rep[1] = { 0 }, i, idx, black = e->board.stm == PF_BLACK;
	pf_move played;
	char why[200];

	memset(&v, 0, sizeof(v));
	v.input_format = e->input_format;
	v.transform = pf_lc0_transform(&e->board, e->input_format);
	for (i = 0; i < PF_LC0_POLICY_SIZE; i++)
		v.probabilities[i] = -1;
	for (i = 0; i < e->n; i++) {
		idx = pf_lc0_index_tf(e->moves[i], black, v.transform);
		FUZZ_CHECK(idx >= 0);
		v.probabilities[idx] = (float)e->prob[i];
	}
	/* V3 to V5 store no move played: the first legal one stands in */
	played = e->move != PF_MOVE_NONE ? e->move : e->moves[0];
	v.played_idx = (uint16_t)pf_lc0_index_tf(played, black, v.transform);
	v.best_idx = e->best == PF_MOVE_NONE ? v.played_idx :
	    (uint16_t)pf_lc0_index_tf(e->best, black, v.transform);
	v.best_q = e->q;
	v.best_d = e->d;
	v.result_q = (float)e->result;
	pf_lc0_v6_encode(hist, rep, 1, &v, out);
	FUZZ_CHECK(pf_lc0_decode(out, &back, why, sizeof(why)) == 0);
	FUZZ_CHECK(back.board.key == e->board.key &&
	    back.board.ep == e->board.ep &&
	    back.board.rule50 == e->board.rule50 &&
	    back.board.castle_rooks == e->board.castle_rooks &&
	    back.move == played && back.n == e->n &&
	    back.result == e->result);
	FUZZ_CHECK(e->best == PF_MOVE_NONE || back.best == e->best);
	for (i = 0; i < e->n; i++)
		FUZZ_CHECK(back.moves[i] == e->moves[i] &&
		    fabs(back.prob[i] - e->prob[i]) < 1e-5);
}

static void
fuzz_lc0(const uint8_t *data, size_t size)
{
	static pf_lc0_entry e;
	static uint8_t rec[PF_LC0_MAX_SIZE];
	pf_lc0_reader *r;
	pf_input *in;
	char why[200];
	double sum;
	int rv, mv, first, i, calls = 0, members = 0;
	size_t rsize;
	pf_sfentry se;

	fuzz_scratch_write(data, size);
	/* as posimport reads it: any packaging, chunk by chunk */
	FUZZ_CHECK((in = pf_input_open(fuzz_path, "fuzz")) != NULL);
	pf_input_set_binary(in);
	pf_input_keep_gzip(in);
	FUZZ_CHECK((r = pf_lc0_reader_open()) != NULL);
	while ((mv = pf_input_next_member(in)) == 1) {
		FUZZ_CHECK(++members < (int)size + 16);
		pf_lc0_reader_start(r, pf_input_source, in);
		while ((rv = pf_lc0_read(r, rec, &rsize, &first)) != 0) {
			/* every call moves on */
			FUZZ_CHECK(++calls < (int)size + 16);
			if (rv < 0) {
				FUZZ_CHECK(pf_lc0_reader_error(r)[0] != '\0');
				continue;
			}
			FUZZ_CHECK(rsize == pf_lc0_record_size(pf_get32(rec)));
			if (pf_lc0_decode(rec, &e, why, sizeof(why)) != 0) {
				FUZZ_CHECK(why[0] != '\0');
				continue;
			}
			se.board = e.board;
			se.move = e.move;
			se.result = (int8_t)e.result;
			check_entry(&se);
			FUZZ_CHECK(e.best == PF_MOVE_NONE ||
			    pf_is_legal(&e.board, e.best));
			for (i = 0, sum = 0; i < e.n; i++)
				sum += e.prob[i];
			FUZZ_CHECK(e.n == 0 || fabs(sum - 1) < 1e-6);
			if (e.n > 0)
				lc0_fixed_point(&e);
		}
	}
	FUZZ_CHECK(mv == 0 || pf_input_error(in)[0] != '\0');
	pf_input_free(in);
	pf_lc0_reader_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int f;

	if (size < 1)
		return 0;
	f = (data[0] & 7) % F_N;
	data++;
	size--;
	switch (f) {
	case F_BINPACK:
		fuzz_binpack(data, size);
		break;
	case F_PLAIN:
		fuzz_plain(data, size);
		break;
	case F_VIRI:
		fuzz_viri(data, size);
		break;
	case F_LC0:
		fuzz_lc0(data, size);
		break;
	default:
		fuzz_fixed(f, data, size);
		break;
	}
	return 0;
}
