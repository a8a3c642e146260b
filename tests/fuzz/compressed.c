/*
 * compressed.c - libFuzzer target: zstd and gzip text read by pf_input
 * (lib/input.c decompresses both itself, from a file or a pipe, so that
 * damage loses none of the text before it).
 *
 * Input: a control byte, two bytes of a position p, then the text (its
 * bytes made printable, or newlines, so that pf_input takes it for text).
 * The text is compressed here (control bit 0: zstd, else gzip) in frames
 * or members of 16 to 2048 bytes of text (the next three bits choose the
 * size), then damaged (bits 4-5: none, cut at p, one byte at p changed,
 * garbage inserted at p), and read through pf_input from a file and,
 * control bit 6, from a pipe.  Properties:
 *   - reading ends, and an error has a message;
 *   - undamaged, the text read is exactly the text, with no error;
 *   - cut short (after the magic number), the text read is a prefix of
 *     the text, and without an error only when the cut falls between
 *     frames or members;
 *   - a file and a pipe read the same text and end the same way, with
 *     the same message.
 */
#include <pthread.h>
#include <signal.h>
#include <zlib.h>
#include <zstd.h>

#include "fuzz.h"
#include "input.h"

#define TEXT_MAX	(64u << 10)

struct got {
	char *text;
	size_t len;
	int err;
	char msg[256];
};

/* Read every member of in, its text into g. */
static void
read_all(pf_input *in, struct got *g)
{
	const char *pos, *end;
	int r, m;

	g->len = 0;
	g->err = 0;
	g->msg[0] = '\0';
	while ((m = pf_input_next_member(in)) == 1) {
		pos = end = NULL;
		for (;;) {
			r = pf_input_fill(in, &pos, &end, PF_INPUT_KEEP);
			FUZZ_CHECK(end >= pos);
			if (end > pos) {
				g->text = realloc(g->text, g->len +
				    (size_t)(end - pos) + 1);
				FUZZ_CHECK(g->text != NULL);
				memcpy(g->text + g->len, pos,
				    (size_t)(end - pos));
				g->len += (size_t)(end - pos);
				FUZZ_CHECK(g->len <= (16u << 20));
			}
			pos = end;
			if (r <= 0)
				break;
		}
		if (r < 0) {
			g->err = 1;
			snprintf(g->msg, sizeof(g->msg), "%s",
			    pf_input_error(in));
			FUZZ_CHECK(g->msg[0] != '\0');
			break;
		}
	}
	if (m < 0) {
		g->err = 1;
		snprintf(g->msg, sizeof(g->msg), "%s", pf_input_error(in));
		FUZZ_CHECK(g->msg[0] != '\0');
	}
}

struct feed {
	int fd;
	const uint8_t *p;
	size_t n;
};

static void *
feeder(void *arg)
{
	struct feed *f = arg;
	size_t done = 0;

	while (done < f->n) {
		size_t k = f->n - done < 4096 ? f->n - done : 4096;
		ssize_t w = write(f->fd, f->p + done, k);

		if (w <= 0)
			break;
		done += (size_t)w;
	}
	close(f->fd);
	return NULL;
}

/* Compress text in pieces of step bytes: zstd frames or gzip members. */
static size_t
compress_text(int zstd, const uint8_t *text, size_t n, size_t step,
    uint8_t *out, size_t cap)
{
	size_t at = 0, len = 0;

	do {
		size_t k = n - at < step ? n - at : step;

		if (zstd) {
			size_t r = ZSTD_compress(out + len, cap - len,
			    text + at, k, 1);

			FUZZ_CHECK(!ZSTD_isError(r));
			len += r;
		} else {
			z_stream z;

			memset(&z, 0, sizeof(z));
			FUZZ_CHECK(deflateInit2(&z, 6, Z_DEFLATED,
			    16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
			z.next_in = (unsigned char *)text + at;
			z.avail_in = (uInt)k;
			z.next_out = out + len;
			z.avail_out = (uInt)(cap - len);
			FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
			len = cap - z.avail_out;
			deflateEnd(&z);
		}
		at += k;
	} while (at < n);
	return len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t comp[2 * TEXT_MAX + 65536], bad[sizeof(comp) + 64];
	static struct got gf, gp;
	static uint8_t text[TEXT_MAX];
	size_t n, clen, blen, p, step, i;
	int ctl, zstd, damage;
	pf_input *in;

	if (size < 3)
		return 0;
	signal(SIGPIPE, SIG_IGN);	/* a reader that stops early */
	ctl = data[0];
	p = (size_t)data[1] | (size_t)data[2] << 8;
	n = size - 3;
	if (n > TEXT_MAX)
		n = TEXT_MAX;
	/* text (what pf_input reads itself: printable, lines), whatever
	   the bytes */
	for (i = 0; i < n; i++)
		text[i] = data[3 + i] % 16 == 0 ? '\n' :
		    (uint8_t)(' ' + data[3 + i] % 95);
	zstd = ctl & 1;
	step = (size_t)1 << (((ctl >> 1) & 7) + 4);	/* 16 .. 2048 */
	damage = (ctl >> 4) & 3;
	clen = compress_text(zstd, text, n, step, comp, sizeof(comp));
	p %= clen + 1;
	switch (damage) {
	case 0:
		memcpy(bad, comp, blen = clen);
		break;
	case 1:
		memcpy(bad, comp, blen = p);
		break;
	case 2:
		memcpy(bad, comp, blen = clen);
		if (p < clen)
			bad[p] ^= (uint8_t)(data[1] | 1);
		break;
	default:
		memcpy(bad, comp, p);
		memcpy(bad + p, "\x13\x37garbage\xff", 11);
		memcpy(bad + p + 11, comp + p, clen - p);
		blen = clen + 11;
		break;
	}

	if ((in = pf_input_open(fuzz_scratch_write(bad, blen), "fuzz")) ==
	    NULL)
		abort();
	read_all(in, &gf);
	pf_input_free(in);

	if (damage == 0) {
		FUZZ_CHECK(!gf.err);
		FUZZ_CHECK(gf.len == n &&
		    (n == 0 || memcmp(gf.text, text, n) == 0));
	}
	/* (a cut inside the magic number leaves bytes that are no longer
	   compressed data, read as the text they are) */
	if (damage == 1 && blen >= 4) {
		FUZZ_CHECK(gf.len <= n &&
		    (gf.len == 0 || memcmp(gf.text, text, gf.len) == 0));
		/* no error only for a cut between frames or members */
		if (!gf.err && blen > 0)
			FUZZ_CHECK(gf.len == n || gf.len % step == 0);
	}

	if (ctl & 0x40) {
		int fds[2];
		pthread_t t;
		struct feed f;

		FUZZ_CHECK(pipe(fds) == 0);
		f.fd = fds[1];
		f.p = bad;
		f.n = blen;
		FUZZ_CHECK(pthread_create(&t, NULL, feeder, &f) == 0);
		{
			/* "-" is standard input: the pipe goes there */
			int saved = dup(STDIN_FILENO);

			FUZZ_CHECK(saved >= 0);
			FUZZ_CHECK(dup2(fds[0], STDIN_FILENO) >= 0);
			close(fds[0]);
			if ((in = pf_input_open("-", "fuzz")) == NULL)
				abort();
			read_all(in, &gp);
			pf_input_free(in);
			FUZZ_CHECK(dup2(saved, STDIN_FILENO) >= 0);
			close(saved);
		}
		pthread_join(t, NULL);
		FUZZ_CHECK(gp.err == gf.err);
		FUZZ_CHECK(strcmp(gp.msg, gf.msg) == 0);
		FUZZ_CHECK(gp.len == gf.len &&
		    (gf.len == 0 || memcmp(gp.text, gf.text, gf.len) == 0));
	}
	return 0;
}
