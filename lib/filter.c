/*
 * filter.c - the shared record loop of the filters (filter.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "prog.h"

int
pf_filter_open(pf_filter *f, const char *output, int force, int zstd)
{
	pf_writer_opts wo;
	int compress = 0;

	memset(f, 0, sizeof(*f));
	f->output = output;
	f->status = PF_EXIT_OK;
	if ((f->fd = pf_open_output(output, force, &compress)) == -1) {
		pf_warn_output(output);
		f->status = PF_EXIT_DATA;
		return -1;
	}
	wo = pf_default_writer_opts(compress || zstd);
	if ((f->w = pf_writer_open_fd(f->fd, output ? output : "stdout",
	    &wo)) == NULL) {
		pf_warn("out of memory");
		f->status = PF_EXIT_DATA;
		f->write_failed = 1;
		return -1;
	}
	return 0;
}

int
pf_filter_open_raw(pf_filter *f, const char *output, int force)
{
	int compress;

	memset(f, 0, sizeof(*f));
	f->output = output;
	f->status = PF_EXIT_OK;
	if ((f->fd = pf_open_output(output, force, &compress)) == -1) {
		pf_warn_output(output);
		f->status = PF_EXIT_DATA;
		return -1;
	}
	return 0;
}

int
pf_filter_getopt(int argc, char *const argv[], const char *shortopts,
    const struct option *longopts, int *longindex, pf_filter_opts *o,
    const char *synopsis)
{
	int ch;

	for (;;) {
		switch (ch = getopt_long(argc, argv, shortopts, longopts,
		    longindex)) {
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'z':
			o->zstd = 1;
			break;
		case 'h':
			fputs(synopsis, stdout);
			return PF_FILTER_EXIT;
		case 'V':
			pf_print_version();
			return PF_FILTER_EXIT;
		case -1:	/* the operands are the inputs */
			pf_set_inputs(argc - optind,
			    (const char *const *)argv + optind);
			return ch;
		default:
			return ch;
		}
	}
}

void
pf_filter_init(pf_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->status = PF_EXIT_OK;
}

void
pf_filter_error(pf_filter *f, uint64_t recno, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pf_warnx("%s: record %" PRIu64 ": %s", f->name, recno, msg);
	f->status = PF_EXIT_DATA;
}

void
pf_filter_put(pf_filter *f, const pf_record *rec)
{
	pf_filter_put_tail(f, rec, NULL, 0);
}

void
pf_filter_put_tail(pf_filter *f, const pf_record *rec, const uint8_t *tail,
    size_t tail_len)
{
	if (f->stop)
		return;
	if (pf_writer_put_tail(f->w, rec, tail, tail_len) == -1) {
		if (!pf_writer_broken_pipe(f->w)) {
			pf_warnx("%s", pf_writer_error(f->w));
			f->status = PF_EXIT_DATA;
			f->write_failed = 1;
		}
		f->stop = 1;
	}
}

void
pf_filter_file(pf_filter *f, const char *path, pf_filter_fn fn, void *ctx)
{
	pf_reader *r;
	pf_record rec;
	int rv;

	f->name = pf_input_name(path);
	if ((r = pf_reader_open_path(path)) == NULL) {
		pf_warn("%s", f->name);
		f->status = PF_EXIT_DATA;
		return;
	}
	pf_reader_set_flush(r, f->w);
	if (f->idle != NULL)
		pf_reader_set_idle(r, f->idle, f->idle_arg);
	while (!f->stop && (rv = pf_reader_next(r, &rec)) != 0) {
		if (rv < 0) {
			if (f->stop)
				break;	/* the idle hook stopped it */
			pf_warnx("%s", pf_reader_error(r));
			f->status = PF_EXIT_DATA;
			continue;
		}
		fn(f, ctx, &rec, pf_reader_recno(r));
	}
	pf_reader_free(r);
}

int
pf_filter_complete(const pf_filter *f)
{
	return !f->stop;
}

int
pf_filter_close(pf_filter *f)
{
	if (f->w != NULL && !f->stop && pf_writer_close(f->w) == -1 &&
	    !pf_writer_broken_pipe(f->w)) {
		pf_warnx("%s", pf_writer_error(f->w));
		f->status = PF_EXIT_DATA;
		f->write_failed = 1;
	}
	pf_writer_free(f->w);
	f->w = NULL;
	/* An output file left empty by a failed write is removed (it would
	   read as a complete empty stream); a failing close is a write error. */
	if (f->fd >= 0 && pf_close_output(f->output, f->fd,
	    f->write_failed) == -1 && !f->write_failed) {
		pf_warn("%s", f->output);
		f->status = PF_EXIT_DATA;
	}
	f->fd = -1;
	return f->status;
}
