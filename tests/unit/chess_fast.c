/*
 * chess_fast.c - the fast paths of the chess core against the slow ones
 * they replace: pf_is_legal (decided for one move) against membership in
 * pf_gen_legal's list, for every one of the 65536 move codes; the
 * unconditional-write generator against pf_count_legal; and
 * pf_board_unpack (bitboard validation first) on packed positions, intact
 * and damaged: whatever it accepts must pass pf_board_validate and pack
 * back to the same bytes (nothing invalid may reach an engine); and
 * pf_board_pack and pf_board_pack_next (the packed position after a
 * move, from the one before) against a plain packing written here, on
 * every move of those positions and of random games played from them; and the SAN resolver's targeted lookup
 * (pf_moves_to) against the full generator: for every piece type and
 * square, the same moves as pf_gen_legal's, and every legal move's SAN
 * (as written, without its capture mark, over-disambiguated) read back
 * as that move by pf_move_from_san.
 *
 * Positions: the perft suites' positions (testdata/perft, found from the
 * working directory or $POSFLOW_SRC) and every position one move away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chess.h"
#include "t.h"

static uint8_t in_list[65536];
static long positions, codes_bad, gen_bad, unpack_bad, accepted, rejected;
static long next_moves, next_bad;
static long to_sets, to_bad, san_moves, san_bad;

static void	check_moves_to(const pf_board *);

static uint64_t seed = 0x9E3779B97F4A7C15ULL;

static uint32_t
rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (uint32_t)(seed >> 11);
}

static void
check_legal(const pf_board *b)
{
	pf_move moves[PF_MAX_MOVES];
	char fen[PF_FEN_MAX];
	int n, i, m;

	n = pf_gen_legal(b, moves);
	if (n != pf_count_legal(b)) {
		gen_bad++;
		CHECK_QUIET(0, "%s: pf_gen_legal %d, pf_count_legal %d",
		    pf_board_to_fen(b, fen), n, pf_count_legal(b));
	}
	memset(in_list, 0, sizeof(in_list));
	for (i = 0; i < n; i++)
		in_list[moves[i]] = 1;
	for (m = 0; m < 65536; m++)
		if (pf_is_legal(b, (pf_move)m) != in_list[m]) {
			if (codes_bad++ < 5)
				CHECK_QUIET(0, "%s: move 0x%04x: pf_is_legal "
				    "%d, in the list %d",
				    pf_board_to_fen(b, fen), m,
				    pf_is_legal(b, (pf_move)m), in_list[m]);
		}
}

/* Unpack p; an accepted board must be valid and pack back to p (but for
   a dropped en passant square and a full-move number of 0). */
static void
check_unpack(const uint8_t p[PF_PACKED_SIZE], int chess960)
{
	uint8_t back[PF_PACKED_SIZE], want[PF_PACKED_SIZE];
	char err[160];
	pf_board b;

	if (pf_board_unpack(&b, p, chess960, err, sizeof(err)) == -1) {
		rejected++;
		return;
	}
	accepted++;
	memcpy(want, p, PF_PACKED_SIZE);
	if ((want[24] & 0x7F) != 64 && b.ep == PF_SQ_NONE)
		want[24] = (uint8_t)((want[24] & 0x80) | 64);
	if (want[26] == 0 && want[27] == 0)
		want[26] = 1;
	pf_board_pack(&b, back);
	if (pf_board_validate(&b, err, sizeof(err)) == -1 ||
	    memcmp(back, want, PF_PACKED_SIZE) != 0 ||
	    b.key != pf_board_compute_key(&b)) {
		unpack_bad++;
		CHECK_QUIET(0, "accepted a packed position that is invalid "
		    "or does not pack back (%s)", err);
	}
}

/* pf_moves_to against pf_gen_legal; SAN forms of every move read back. */
static void
check_moves_to(const pf_board *b)
{
	pf_move all[PF_MAX_MOVES], some[PF_MAX_MOVES];
	char fen[PF_FEN_MAX], san[PF_SAN_MAX], alt[PF_SAN_MAX + 4];
	int n, k, type, to, i, j, want, from;
	pf_move got;
	size_t len, w, r;

	n = pf_gen_legal(b, all);
	for (type = PF_PAWN; type <= PF_KING; type++)
		for (to = 0; to < 64; to++) {
			k = pf_moves_to(b, type, to, some);
			to_sets++;
			for (want = 0, i = 0; i < n; i++)
				if (PF_MOVE_KIND(all[i]) != PF_MK_CASTLE &&
				    PF_MOVE_TO(all[i]) == to &&
				    PF_PIECE_TYPE(b->squares[
				    PF_MOVE_FROM(all[i])]) == type) {
					want++;
					for (j = 0; j < k; j++)
						if (some[j] == all[i])
							break;
					if (j == k)
						want = -1000;
				}
			if (want != k && to_bad++ < 5)
				CHECK_QUIET(0, "%s: pf_moves_to type %d square %d: "
				    "%d moves, pf_gen_legal %d", pf_board_to_fen(b,
				    fen), type, to, k, want);
		}
	for (i = 0; i < n; i++) {
		pf_move_to_san(b, all[i], san);
		len = strlen(san);
		san_moves++;
		got = PF_MOVE_NONE;
		if (pf_move_from_san(b, san, len, &got, NULL, 0) != 0 ||
		    got != all[i]) {
			if (san_bad++ < 5)
				CHECK_QUIET(0, "%s: %s read back as 0x%04x",
				    pf_board_to_fen(b, fen), san, got);
			continue;
		}
		/* Without the capture mark (a piece move: "Nf3", pawns keep
		   their file: "ed5"), and a piece move with its full from
		   square ("Ng1f3"). */
		for (w = 0, r = 0; r < len; r++)
			if (san[r] != 'x')
				alt[w++] = san[r];
		alt[w] = '\0';
		if (pf_move_from_san(b, alt, w, &got, NULL, 0) != 0 ||
		    got != all[i]) {
			if (san_bad++ < 5)
				CHECK_QUIET(0, "%s: %s (from %s) not read back",
				    pf_board_to_fen(b, fen), alt, san);
		}
		from = PF_MOVE_FROM(all[i]);
		type = PF_PIECE_TYPE(b->squares[from]);
		if (type != PF_PAWN && PF_MOVE_KIND(all[i]) != PF_MK_CASTLE) {
			to = PF_MOVE_TO(all[i]);
			snprintf(alt, sizeof(alt), "%c%c%c%c%c", "PNBRQK"[type],
			    'a' + (from & 7), '1' + (from >> 3), 'a' + (to & 7),
			    '1' + (to >> 3));
			if (pf_move_from_san(b, alt, 5, &got, NULL, 0) != 0 ||
			    got != all[i]) {
				if (san_bad++ < 5)
					CHECK_QUIET(0, "%s: %s not read back",
					    pf_board_to_fen(b, fen), alt);
			}
		}
	}
}

static void
check_position(const pf_board *b)
{
	uint8_t p[PF_PACKED_SIZE], q[PF_PACKED_SIZE];
	int k, i;

	positions++;
	check_legal(b);
	check_moves_to(b);
	pf_board_pack(b, p);
	check_unpack(p, b->chess960);
	/* Damaged copies: a flipped bit, a changed nibble, another en
	   passant byte, a castling rook made or unmade. */
	for (k = 0; k < 24; k++) {
		/* One random number each, so the cases are the same
		   whatever order a compiler evaluates operands in. */
		uint32_t what = rnd(), where = rnd(), value = rnd();

		memcpy(q, p, PF_PACKED_SIZE);
		switch (what % 4) {
		case 0:
			q[where % PF_PACKED_SIZE] ^= (uint8_t)(1 << value % 8);
			break;
		case 1:
			i = 8 + (int)(where % 16);
			q[i] ^= (uint8_t)(value % 16 << (value & 16 ? 4 : 0));
			break;
		case 2:
			q[24] = (uint8_t)((q[24] & 0x80) | value % 128);
			break;
		default:
			i = (int)(where % 32);
			q[8 + i / 2] ^= (uint8_t)(5 << (i % 2 ? 4 : 0));
			break;
		}
		check_unpack(q, (int)(what >> 8 & 1));
	}
}

/*
 * The packed position as chess.h describes it, square by square: the
 * reference for every build of pf_board_pack and pf_board_pack_next (the
 * CPU picks one at start-up; run-all runs this test with each).
 */
static void
ref_pack(const pf_board *b, uint8_t out[PF_PACKED_SIZE])
{
	uint64_t occ = b->by_colour[0] | b->by_colour[1];
	int sq, k = 0;

	memset(out, 0, PF_PACKED_SIZE);
	for (sq = 0; sq < 64; sq++) {
		uint8_t code = b->squares[sq];

		if (!(occ >> sq & 1))
			continue;
		if (b->castle_rooks >> sq & 1)
			code = (uint8_t)((code & 8) | 6);
		out[sq / 8] |= (uint8_t)(1u << (sq % 8));
		if (k < 32)
			out[8 + k / 2] |= (uint8_t)((code & 15) << 4 * (k % 2));
		k++;
	}
	out[24] = (uint8_t)((b->stm == PF_BLACK ? 0x80 : 0) |
	    (b->ep < 64 ? b->ep : 64));
	out[25] = b->rule50;
	out[26] = (uint8_t)(b->fullmove & 0xFF);
	out[27] = (uint8_t)(b->fullmove >> 8);
}

/* Pack the position after m both ways and as ref_pack does; b is the
   board before m. */
static void
check_pack_next(pf_board *b, pf_move m)
{
	uint8_t before[PF_PACKED_SIZE], want[PF_PACKED_SIZE],
	    got[PF_PACKED_SIZE], full[PF_PACKED_SIZE];
	char fen[PF_FEN_MAX], uci[PF_UCI_MAX];
	pf_undo u;

	pf_board_pack(b, before);
	pf_move_to_uci(b, m, uci);
	pf_make_move(b, m, &u);
	ref_pack(b, want);
	pf_board_pack(b, full);
	memset(got, 0xAA, sizeof(got));
	pf_board_pack_next(before, m, b, got);
	next_moves++;
	if ((memcmp(got, want, PF_PACKED_SIZE) != 0 ||
	    memcmp(full, want, PF_PACKED_SIZE) != 0) && next_bad++ < 5) {
		pf_unmake_move(b, m, &u);
		CHECK_QUIET(0, "%s: %s: %s differs from the reference",
		    pf_board_to_fen(b, fen), uci, memcmp(full, want,
		    PF_PACKED_SIZE) != 0 ? "pf_board_pack" :
		    "pf_board_pack_next");
		pf_make_move(b, m, &u);
	}
	pf_unmake_move(b, m, &u);
}

/* Every move of b, then a random game of up to 200 plies from b. */
static void
pack_next_from(const pf_board *start)
{
	pf_move moves[PF_MAX_MOVES];
	pf_board b = *start;
	pf_undo u;
	int n, i, ply;

	n = pf_gen_legal(&b, moves);
	for (i = 0; i < n; i++)
		check_pack_next(&b, moves[i]);
	for (ply = 0; ply < 200; ply++) {
		if ((n = pf_gen_legal(&b, moves)) == 0)
			break;
		i = (int)(rnd() % (uint32_t)n);
		if (ply % 8 == 7)
			check_moves_to(&b);
		check_pack_next(&b, moves[i]);
		pf_make_move(&b, moves[i], &u);
	}
}

static int
load(const char *dir, const char *name)
{
	char path[512], line[512], err[160], *fen, *e;
	pf_move moves[PF_MAX_MOVES];
	pf_board b;
	pf_undo u;
	FILE *fp;
	int n, i, c960;

	snprintf(path, sizeof(path), "%s/testdata/perft/%s", dir, name);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		fen = line;
		c960 = strncmp(fen, "epd ", 4) == 0;
		if (c960)
			fen += 4;
		else if (strchr("rnbqkpRNBQKP12345678", fen[0]) == NULL ||
		    fen[0] == '\0')
			continue;
		if ((e = strchr(fen, ';')) != NULL)
			*e = '\0';
		if ((e = strchr(fen, '\n')) != NULL)
			*e = '\0';
		if (pf_board_from_fen(&b, fen, err, sizeof(err)) == -1)
			continue;
		if (c960)
			b.chess960 = 1;
		check_position(&b);
		pack_next_from(&b);
		n = pf_gen_legal(&b, moves);
		for (i = 0; i < n; i++) {
			pf_make_move(&b, moves[i], &u);
			check_position(&b);
			pack_next_from(&b);
			pf_unmake_move(&b, moves[i], &u);
		}
	}
	fclose(fp);
	return 0;
}

int
main(void)
{
	static const char *const files[] = { "standard.epd", "tricky.epd",
		"chess960.perft" };
	const char *dir = getenv("POSFLOW_SRC");
	size_t i;
	int found = 1;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (load(dir != NULL ? dir : ".", files[i]) == -1)
			found = 0;
	CHECK(found && positions > 500, "perft positions and their "
	    "children: %ld", positions);
	CHECK(codes_bad == 0, "pf_is_legal agrees with pf_gen_legal on all "
	    "65536 move codes of %ld positions (%ld disagree)", positions,
	    codes_bad);
	CHECK(gen_bad == 0, "pf_gen_legal count equals pf_count_legal");
	CHECK(unpack_bad == 0 && accepted > positions && rejected > positions,
	    "pf_board_unpack: %ld accepted, all valid and packing back; %ld "
	    "damaged ones refused", accepted, rejected);
	CHECK(next_bad == 0 && next_moves > 100000, "pf_board_pack and "
	    "pf_board_pack_next equal the reference packing after %ld moves "
	    "(%ld differ)", next_moves, next_bad);
	CHECK(to_bad == 0 && to_sets > 1000000, "pf_moves_to gives "
	    "pf_gen_legal's moves for each piece type and square: %ld sets "
	    "(%ld differ)", to_sets, to_bad);
	CHECK(san_bad == 0 && san_moves > 100000, "every legal move's SAN, "
	    "without its capture mark and over-disambiguated, reads back as "
	    "the move: %ld moves (%ld fail)", san_moves, san_bad);
	return t_done();
}
