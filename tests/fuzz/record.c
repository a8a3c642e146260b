/*
 * record.c - libFuzzer target: the record stream reader (pf_reader, plain,
 * zstd or gzip input) with the raw record codec and every extension
 * decoder behind it.
 *
 * The input is the stream bytes as a file holds them.  Most mutations
 * break a block checksum, so the reader's error paths (resynchronisation,
 * truncation, damaged headers) are what this target mostly reaches;
 * record_valid.c makes the checksums valid to reach the decoders.
 * Properties (stream.h): the reader ends, reports every error with a
 * message and counts what it returns; each record re-encodes to its bytes
 * and its extensions decode and re-encode consistently; a well-formed
 * plain stream reads exactly as a strict reference parser reads it.
 */
#include "stream.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scratch_write(data, size);
	read_stream(size, data, size);
	return 0;
}
