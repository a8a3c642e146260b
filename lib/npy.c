/*
 * npy.c - NumPy .npy files written as a stream (npy.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

struct pf_npy {
	FILE *fp;
	char *path;
	char descr[8];
	size_t rowsize;
	int ntail;
	uint32_t tail[PF_NPY_MAXDIM];
	uint64_t rows;
	char err[256];
};

/* The header for the current row count into h[PF_NPY_HEADER]: -1 if the
   dict does not fit (it always does: 20 digits per dimension). */
static int
header(const pf_npy *f, unsigned char h[PF_NPY_HEADER])
{
	char dict[PF_NPY_HEADER], shape[96];
	int n, i, len;

	n = snprintf(shape, sizeof(shape), "%llu", (unsigned long long)f->rows);
	for (i = 0; i < f->ntail; i++)
		n += snprintf(shape + n, sizeof(shape) - (size_t)n, ", %u",
		    f->tail[i]);
	if (f->ntail == 0)
		n += snprintf(shape + n, sizeof(shape) - (size_t)n, ",");
	len = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': "
	    "False, 'shape': (%s), }", f->descr, shape);
	if (len < 0 || len + 1 > PF_NPY_HEADER - 10)
		return -1;
	memcpy(h, "\x93NUMPY\x01\x00", 8);
	h[8] = (PF_NPY_HEADER - 10) & 0xFF;
	h[9] = (PF_NPY_HEADER - 10) >> 8;
	memset(h + 10, ' ', PF_NPY_HEADER - 10);
	memcpy(h + 10, dict, (size_t)len);
	h[PF_NPY_HEADER - 1] = '\n';
	return 0;
}

pf_npy *
pf_npy_create(const char *path, const char *descr, size_t size, int ntail,
    const uint32_t *tail)
{
	unsigned char h[PF_NPY_HEADER];
	pf_npy *f;
	int i;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	const char order = '>';
#else
	const char order = '<';
#endif

	if (ntail < 0 || ntail > PF_NPY_MAXDIM || strlen(descr) >= 8 ||
	    size == 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	if ((f->path = strdup(path)) == NULL) {
		free(f);
		return NULL;
	}
	strcpy(f->descr, descr);
	/* Rows are the caller's arrays as they are in memory: the header
	   says the host's byte order. */
	if (f->descr[0] == '<')
		f->descr[0] = order;
	f->ntail = ntail;
	f->rowsize = size;
	for (i = 0; i < ntail; i++) {
		f->tail[i] = tail[i];
		f->rowsize *= tail[i];
	}
	if ((f->fp = fopen(path, "wb")) == NULL) {
		free(f->path);
		free(f);
		return NULL;
	}
	if (header(f, h) == -1 || fwrite(h, 1, sizeof(h), f->fp) != sizeof(h)) {
		i = errno;
		fclose(f->fp);
		(void)unlink(path);
		free(f->path);
		free(f);
		errno = i;
		return NULL;
	}
	return f;
}

int
pf_npy_append(pf_npy *f, const void *rows, size_t n)
{
	if (n == 0)
		return 0;
	if (fwrite(rows, f->rowsize, n, f->fp) != n) {
		snprintf(f->err, sizeof(f->err), "%s: %s", f->path,
		    strerror(errno));
		return -1;
	}
	f->rows += n;
	return 0;
}

int
pf_npy_flush(pf_npy *f)
{
	if (fflush(f->fp) == EOF) {
		snprintf(f->err, sizeof(f->err), "%s: %s", f->path,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
pf_npy_close(pf_npy *f, char *err, size_t errlen)
{
	unsigned char h[PF_NPY_HEADER];
	int rc = 0;

	if (header(f, h) == -1 || fflush(f->fp) == EOF ||
	    fseek(f->fp, 0, SEEK_SET) == -1 ||
	    fwrite(h, 1, sizeof(h), f->fp) != sizeof(h) ||
	    fflush(f->fp) == EOF || ferror(f->fp)) {
		snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
		rc = -1;
	}
	if (fclose(f->fp) == EOF && rc == 0) {
		snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
		rc = -1;
	}
	if (rc == -1)
		(void)unlink(f->path);
	free(f->path);
	free(f);
	return rc;
}

void
pf_npy_discard(pf_npy *f)
{
	fclose(f->fp);
	(void)unlink(f->path);
	free(f->path);
	free(f);
}

const char *
pf_npy_error(const pf_npy *f)
{
	return f->err;
}

uint64_t
pf_npy_rows(const pf_npy *f)
{
	return f->rows;
}
