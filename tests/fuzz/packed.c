/*
 * packed.c - libFuzzer target: the 28-byte packed position
 * (pf_board_unpack), as a record stream carries it.
 *
 * Input: 28 bytes of packed position; bit 0 of a 29th byte, if any, is
 * the record's Chess960 flag.  Properties:
 *   - pf_board_unpack accepts exactly what pf_board_from_fen accepts for
 *     the same position written as a FEN, and gives the same board
 *     (chess.h: "validated like a FEN"): a differential test of the fast
 *     unpack path against the FEN parser;
 *   - a refused position comes with a reason;
 *   - packing an accepted board again gives the input bytes back, but for
 *     the two normalisations unpack makes (an en passant square with no
 *     legal capture dropped, full-move 0 read as 1);
 *   - and then every board check of fen.c (fuzz_check_board).
 */
#include "fuzz.h"

/*
 * The reference: chess.h says a packed position is "validated like a
 * FEN", so write the FEN of the packed bytes by hand (castling rights as
 * Shredder-FEN file letters, which name each rook exactly) and parse it
 * with pf_board_from_fen.  What the FEN text cannot say is refused here
 * as the format refuses it: more than 32 pieces, piece code 7, a nibble
 * after the last piece, a castling rook off its own first rank, an en
 * passant field above 64.  0 and *b, or -1.
 */
static int
reference_unpack(pf_board *b, const uint8_t in[PF_PACKED_SIZE],
    int chess960)
{
	static const char letters[] = "PNBRQK";
	char fen[128], *p = fen, castle[20], *c = castle;
	uint8_t sq[64];
	uint64_t occ = 0;
	int k, n = 0, s, ep, rank, file, empty;

	memset(sq, PF_NO_PIECE, sizeof(sq));
	for (k = 0; k < 8; k++)
		occ |= (uint64_t)in[k] << (8 * k);
	for (s = 0; s < 64; s++) {
		uint8_t nib;

		if (!(occ >> s & 1))
			continue;
		if (n >= 32)
			return -1;
		nib = (uint8_t)(in[8 + n / 2] >> (n & 1 ? 4 : 0) & 15);
		n++;
		if ((nib & 7) == 7)
			return -1;
		sq[s] = nib;
	}
	for (k = n; k < 32; k++)	/* unused nibbles are zero */
		if (in[8 + k / 2] >> (k & 1 ? 4 : 0) & 15)
			return -1;
	for (rank = 7; rank >= 0; rank--) {
		for (file = 0, empty = 0; file < 8; file++) {
			uint8_t pc = sq[rank * 8 + file];
			int t, colour;

			if (pc == PF_NO_PIECE) {
				empty++;
				continue;
			}
			if (empty)
				*p++ = (char)('0' + empty);
			empty = 0;
			t = pc & 7;
			colour = pc >> 3;
			if (t == 6) {	/* a rook with a castling right */
				if (rank != (colour == PF_WHITE ? 0 : 7))
					return -1;
				t = PF_ROOK;
				*c++ = (char)((colour == PF_WHITE ? 'A' : 'a') +
				    file);
			}
			*p++ = colour == PF_WHITE ? letters[t] :
			    (char)(letters[t] - 'A' + 'a');
		}
		if (empty)
			*p++ = (char)('0' + empty);
		if (rank > 0)
			*p++ = '/';
	}
	*c = '\0';
	ep = in[24] & 0x7F;
	if (ep > 64)
		return -1;
	p += sprintf(p, " %c %s ", in[24] & 0x80 ? 'b' : 'w',
	    castle[0] != '\0' ? castle : "-");
	if (ep < 64)
		p += sprintf(p, "%c%c", 'a' + (ep & 7), '1' + (ep >> 3));
	else
		*p++ = '-';
	sprintf(p, " %u %u", (unsigned)in[25], (unsigned)(in[26] |
	    in[27] << 8));
	if (pf_board_from_fen(b, fen, NULL, 0) != 0)
		return -1;
	if (chess960)
		b->chess960 = 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *in, again[PF_PACKED_SIZE];
	char err[256];
	int chess960, rc, rrc;
	pf_board b, ref, child;

	if (size < PF_PACKED_SIZE)
		return 0;
	chess960 = size > PF_PACKED_SIZE && (data[PF_PACKED_SIZE] & 1);
	/* An exact-size heap copy: an over-read is an ASan report. */
	if ((in = malloc(PF_PACKED_SIZE)) == NULL)
		return 0;
	memcpy(in, data, PF_PACKED_SIZE);
	err[0] = '\0';
	rc = pf_board_unpack(&b, in, chess960, err, sizeof(err));
	rrc = reference_unpack(&ref, in, chess960);
	if (rc != rrc) {
		fprintf(stderr, "pf_board_unpack %d (%s), reference %d\n", rc,
		    err, rrc);
		FUZZ_CHECK(!"unpack accepts what the reference accepts");
	}
	if (rc != 0) {
		FUZZ_CHECK(err[0] != '\0');
		free(in);
		return 0;
	}
	FUZZ_CHECK(memcmp(&b, &ref, sizeof(b)) == 0);

	pf_board_pack(&b, again);
	FUZZ_CHECK(memcmp(again, in, 24) == 0);
	FUZZ_CHECK((again[24] & 0x80) == (in[24] & 0x80));
	FUZZ_CHECK((again[24] & 0x7F) == (in[24] & 0x7F) ||
	    ((again[24] & 0x7F) == 64 && b.ep == PF_SQ_NONE));
	FUZZ_CHECK(again[25] == in[25]);
	FUZZ_CHECK((again[26] == in[26] && again[27] == in[27]) ||
	    (in[26] == 0 && in[27] == 0 && b.fullmove == 1));

	if (fuzz_check_board(&b, in[0] ^ in[8], &child) > 0)
		fuzz_check_board(&child, 0, NULL);
	free(in);
	return 0;
}
