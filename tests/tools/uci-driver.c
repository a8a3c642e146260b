/*
 * uci-driver - the minimal engine driver that scripts/bench-uci-eval
 * measures uci-eval against: it starts one engine, then for every FEN line
 * of its input sends "position fen ..." and "go LIMIT" and waits for
 * "bestmove", nothing else (no parsing, no validation, no output records).
 *
 *   uci-driver ENGINE "depth 10" < fens.txt
 *
 * Prints "positions N" on stdout at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "uci.h"

int
main(int argc, char **argv)
{
	char fen[512], err[256], *line;
	unsigned long n = 0;
	pf_uci *u;

	if (argc != 3) {
		fprintf(stderr, "usage: uci-driver engine \"depth D\"\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((u = pf_uci_spawn(argv[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "uci-driver: %s\n", err);
		return 1;
	}
	if (pf_uci_handshake(u, 30000) == -1 || pf_uci_sync(u, 30000) == -1) {
		fprintf(stderr, "uci-driver: %s\n", pf_uci_error(u));
		pf_uci_free(u);
		return 1;
	}
	while (fgets(fen, sizeof(fen), stdin) != NULL) {
		fen[strcspn(fen, "\r\n")] = '\0';
		if (fen[0] == '\0')
			continue;
		if (pf_uci_sendf(u, "position fen %s\ngo %s", fen, argv[2])
		    == -1)
			goto fail;
		for (;;) {
			if (pf_uci_wait_line(u, 600000, &line) != 1)
				goto fail;
			if (strncmp(line, "bestmove", 8) == 0)
				break;
		}
		n++;
	}
	pf_uci_stop(u, 1000);
	pf_uci_free(u);
	printf("positions %lu\n", n);
	return 0;
fail:
	fprintf(stderr, "uci-driver: %s\n", pf_uci_error(u));
	pf_uci_free(u);
	return 1;
}
