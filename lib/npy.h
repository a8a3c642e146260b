/*
 * npy.h - NumPy .npy files written as a stream: rows are appended as they
 * come and the header, written first with room to spare, is rewritten
 * with the final shape on close (format version 1.0: magic "\x93NUMPY",
 * 1, 0, u16 header length, a Python dict literal padded with spaces and a
 * newline so that the data starts at byte 128).  Memory does not grow
 * with the rows written.
 *
 * Nothing here prints or exits: functions return 0 / -1 and the reason is
 * in pf_npy_error().
 */
#ifndef PF_NPY_H
#define PF_NPY_H

#include <stddef.h>
#include <stdint.h>

#define PF_NPY_HEADER	128	/* bytes before the data */
#define PF_NPY_MAXDIM	3	/* dimensions after the first (rows) */

typedef struct pf_npy pf_npy;

/*
 * Create path (truncated) for rows of shape tail[0..ntail) of dtype descr
 * ("<i4", "<f4", "<u8", "|u1", "|i1", "|b1"), each element size bytes.
 * Rows are written as they are in memory: on a big-endian host "<" is
 * written as ">".
 * NULL on failure with errno set.
 */
pf_npy		*pf_npy_create(const char *path, const char *descr, size_t size,
		    int ntail, const uint32_t *tail);
/* Append n rows (n * row size bytes, in the host's byte order). 0 / -1. */
int		 pf_npy_append(pf_npy *f, const void *rows, size_t n);
/* Hand the rows appended so far to the file.  0 / -1. */
int		 pf_npy_flush(pf_npy *f);
/* Write the final header, flush and close.  0 / -1.  Frees f. */
int		 pf_npy_close(pf_npy *f, char *err, size_t errlen);
/* Close and remove the file (a failed run).  Frees f. */
void		 pf_npy_discard(pf_npy *f);
const char	*pf_npy_error(const pf_npy *f);
uint64_t	 pf_npy_rows(const pf_npy *f);

#endif
