/*
 * posdump - show a posflow record stream as text or JSON Lines.
 *
 * One line per record: the FEN first, then every field the record carries.
 * Extensions posflow knows are decoded; unknown ones are shown as type and
 * length (text) or type, length and hex bytes (JSON).  posdump is the
 * user's window into every other tool, so it hides nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posflow.h"
#include "show.h"

#define USAGE "usage: posdump [-cj] [--fields list] [-o file] [file ...]\n"

struct opts {
	pf_show_opts show;
	int count;
	const char *output;
};

static void
usage(void)
{
	fputs(USAGE, stderr);
}

static void
warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	pf_warnx("%s", msg);
}

static int
dump_one(const struct opts *o, const char *path, FILE *out,
    uint64_t *total)
{
	pf_reader *r;
	pf_record rec;
	struct stat st;
	const char *name = pf_input_name(path);
	int status = 0, rv, fd, waits, dirty = 0;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		pf_warn("%s", name);
		return -1;
	}
	if ((r = pf_reader_open_fd(fd, name)) == NULL) {
		pf_warn("%s", name);
		if (fd != STDIN_FILENO)
			close(fd);
		return -1;
	}
	/* From a pipe, the lines shown so far go out before a read that
	   would wait: posdump at the end of a live pipeline shows each
	   record when it comes. */
	waits = fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
	for (;;) {
		if (waits && dirty && !pf_reader_buffered(r)) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (poll(&pfd, 1, 0) == 0) {
				(void)fflush(out);
				dirty = 0;
			}
		}
		if ((rv = pf_reader_next(r, &rec)) == 0)
			break;
		if (rv < 0) {
			pf_warnx("%s", pf_reader_error(r));
			status = -1;
			continue;
		}
		if (o->count)
			continue;
		if (pf_show_record(out, &o->show, &rec, name,
		    pf_reader_recno(r)) < 0)
			status = -1;
		dirty = 1;
		if (ferror(out))
			break;
	}
	if (o->count)
		fprintf(out, "%" PRIu64 " %s\n", pf_reader_records(r), name);
	*total += pf_reader_records(r);
	pf_reader_free(r);
	if (fd != STDIN_FILENO)
		close(fd);
	return status;
}

static char outbuf[1 << 16];

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "count", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "fields", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o;
	FILE *out = stdout;
	uint64_t total = 0;
	char err[128];
	int ch, i, status = PF_EXIT_OK;

	pf_prog_init(argv);
	memset(&o, 0, sizeof(o));
	pf_show_opts_init(&o.show, 0);
	o.show.warn = warn_cb;
	while ((ch = getopt_long(argc, argv, "cjo:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o.count = 1;
			break;
		case 'j':
			o.show.json = 1;
			break;
		case 'F':
			if (pf_show_fields(&o.show, optarg, err,
			    sizeof(err)) == -1) {
				pf_warnx("%s", err);
				usage();
				return PF_EXIT_USAGE;
			}
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'h':
			fputs(USAGE, stdout);
			return PF_EXIT_OK;
		case 'V':
			pf_print_version();
			return PF_EXIT_OK;
		default:
			usage();
			return PF_EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;

	pf_set_inputs(argc, (const char *const *)argv);
	if (pf_output_is_input(o.output)) {
		pf_warnx("%s: %s", o.output, PF_OUTPUT_IS_INPUT);
		return PF_EXIT_DATA;
	}
	if (o.output != NULL && strcmp(o.output, "-") != 0 &&
	    (out = fopen(o.output, "w")) == NULL) {
		pf_warn("%s", o.output);
		return PF_EXIT_DATA;
	}
	setvbuf(out, outbuf, _IOFBF, sizeof(outbuf));
	if (argc == 0) {
		if (dump_one(&o, "-", out, &total) < 0)
			status = PF_EXIT_DATA;
	}
	for (i = 0; i < argc; i++)
		if (dump_one(&o, argv[i], out, &total) < 0)
			status = PF_EXIT_DATA;
	if (o.count && argc > 1)
		fprintf(out, "%" PRIu64 " total\n", total);
	if (fflush(out) == EOF || ferror(out)) {
		if (errno != EPIPE) {
			pf_warn("%s", o.output ? o.output : "stdout");
			status = PF_EXIT_DATA;
		}
	}
	if (out != stdout)
		fclose(out);
	return status;
}
