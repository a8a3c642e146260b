/*
 * passthru - copy a posflow stream record by record, for benchmarks.
 *
 * usage: passthru [file] > stream
 *
 * Reads every record (verifying each block's checksum, decoding the
 * record and walking nothing else) and writes it unchanged with the
 * library's writer (new blocks, new checksums): what any filter of the
 * toolkit pays per record before it does its own work.
 * scripts/bench-softtarget prints it as softtarget's floor.
 */
#include <stdio.h>
#include <unistd.h>

#include "posflow.h"

int
main(int argc, char *argv[])
{
	pf_writer_opts wo = pf_default_writer_opts(0);
	pf_reader *r;
	pf_writer *w;
	pf_record rec;
	int rv, status = 0;

	pf_prog_init(argv);
	if ((r = pf_reader_open_path(argc > 1 ? argv[1] : "-")) == NULL) {
		pf_warn("%s", argc > 1 ? argv[1] : "stdin");
		return 1;
	}
	if ((w = pf_writer_open_fd(STDOUT_FILENO, "stdout", &wo)) == NULL) {
		pf_warn("out of memory");
		return 1;
	}
	while ((rv = pf_reader_next(r, &rec)) != 0) {
		if (rv < 0) {
			pf_warnx("%s", pf_reader_error(r));
			status = 1;
			continue;
		}
		if (pf_writer_put(w, &rec) == -1)
			break;
	}
	if (pf_writer_close(w) == -1) {
		pf_warnx("%s", pf_writer_error(w));
		status = 1;
	}
	pf_writer_free(w);
	pf_reader_free(r);
	return status;
}
