/*
 * fen.c - libFuzzer target: FEN text (pf_board_from_fen) and, for every
 * board it accepts, the whole chess core on that board and on one child.
 *
 * The input is the FEN text itself (cut at the first NUL).  Properties:
 *   - a refused FEN comes with a reason;
 *   - an accepted one is a consistent board (fuzz_check_consistent);
 *   - FEN out and in again, and pack and unpack, give the same board;
 *   - the legal-move list equals the naive generator's, pf_is_legal
 *     agrees with it for every move code, and the counters agree;
 *   - make/unmake of every legal move: the result matches the move
 *     played by hand and unmake restores the board byte for byte;
 *   - SAN and UCI of every legal move read back as the same move;
 *   - the same for one child board (picked from the input bytes).
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *fen, err[256];
	pf_board b, child;
	unsigned pick = 0;
	size_t i;

	/* An exact-size heap copy: an over-read is an ASan report. */
	if ((fen = malloc(size + 1)) == NULL)
		return 0;
	memcpy(fen, data, size);
	fen[size] = '\0';
	for (i = 0; i < size; i++)
		pick = pick * 31 + data[i];
	err[0] = '\0';
	if (pf_board_from_fen(&b, fen, err, sizeof(err)) != 0) {
		FUZZ_CHECK(err[0] != '\0');
		FUZZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		free(fen);
		return 0;
	}
	if (fuzz_check_board(&b, pick, &child) > 0)
		fuzz_check_board(&child, 0, NULL);
	free(fen);
	return 0;
}
