/*
 * uci-badpos - copy a record stream from stdin to stdout, making the
 * position of the records numbered on the command line (1-based) invalid
 * (the black king becomes a second white king), with valid block
 * checksums, so that tests can show uci-eval never sends such a position
 * to an engine.
 *
 *   uci-badpos 2 5 < in.pos > out.pos
 */
#include <stdio.h>
#include <stdlib.h>

#include "posflow.h"

int
main(int argc, char **argv)
{
	pf_reader *r = pf_reader_open_fd(0, "stdin");
	pf_writer *w = pf_writer_open_fd(1, "stdout", NULL);
	pf_record rec;
	uint64_t n = 0;
	int got;

	if (r == NULL || w == NULL)
		return 1;
	while ((got = pf_reader_next(r, &rec)) == 1) {
		n++;
		for (int i = 1; i < argc; i++) {
			if (strtoull(argv[i], NULL, 10) != n)
				continue;
			/* Nibbles follow the 8-byte occupancy. */
			for (int k = 8; k < 24; k++) {
				if ((rec.pos[k] & 0x0f) == 0x0d)
					rec.pos[k] = (uint8_t)((rec.pos[k] &
					    0xf0) | 0x05);
				if ((rec.pos[k] >> 4) == 0x0d)
					rec.pos[k] = (uint8_t)((rec.pos[k] &
					    0x0f) | 0x50);
			}
		}
		if (pf_writer_put(w, &rec) == -1)
			return 1;
	}
	if (got == -1) {
		fprintf(stderr, "uci-badpos: %s\n", pf_reader_error(r));
		return 1;
	}
	if (pf_writer_close(w) == -1)
		return 1;
	pf_writer_free(w);
	pf_reader_free(r);
	return 0;
}
