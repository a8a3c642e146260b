/*
 * input.h - streaming input through libarchive: text (PGN, EPD) and, in
 * binary mode, trainers' data files.
 *
 * One pf_input reads one file (or stdin) whatever its packaging: plain
 * text, gzip, bzip2, xz, zstd (multi-frame too), or a tar / zip archive
 * (itself possibly compressed).  Compression and format are detected from
 * the content, never from the name.  An archive is read member by member
 * in archive order; a plain or compressed file is one member with no name.
 *
 * The reader owns one fixed buffer (PF_INPUT_BUFSIZE plus a little room)
 * and hands out windows into it, so memory does not depend on the input.
 * Text is handed out in large blocks: a parser scans the window itself and
 * calls pf_input_fill() when it needs more contiguous bytes.
 *
 * Nothing is lost quietly: input that starts with zero bytes (which
 * libarchive would take for an empty tar archive) is read as text, so the
 * parser sees and reports the NULs; a tar archive whose first header is
 * damaged is an error, not text; bytes after the end of compressed data
 * (other than zero padding) are an error; a damaged zip member is an
 * error for that member only; a member in UTF-16 or UTF-32 (a byte-order
 * mark, or ASCII paired with NULs) is an error for that member only,
 * named, none of it handed out; zstd and gzip text (not in an archive;
 * from a file or a pipe) is decompressed here, not by libarchive, so that
 * every byte decoded before damage is handed out.
 *
 * Binary mode (pf_input_set_binary) drops the rules that are only for
 * text: no UTF-16 check, no early return at a line end, no lzma filter
 * (lzma data has no magic number, and its bidder takes binary records for
 * a header), and zstd or gzip data is decompressed here whatever bytes it
 * holds (unless an archive is inside), so that every byte before damage
 * is handed out.  pf_input_read then reads a member as read(2) would.
 * From a pipe, data that is not compressed is handed out once 512 bytes
 * have come (or the input ended): libarchive's tar reader looks at them.
 *
 * Nothing here prints or exits; failures return -1 and pf_input_error()
 * says why.
 */
#ifndef PF_INPUT_H
#define PF_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PF_INPUT_BUFSIZE	(1u << 20)	/* bytes read per refill */
#define PF_INPUT_KEEP		(256u << 10)	/* longest window a parser may
						   ask for with pf_input_fill */

typedef struct pf_input pf_input;

/*
 * Open path ("-" or NULL is stdin).  name is used by pf_input_filename() (NULL:
 * the path, or "stdin").  Returns NULL with errno set when the file cannot
 * be opened or memory is short.  Nothing is read yet.
 */
pf_input	*pf_input_open(const char *path, const char *name);
void		 pf_input_free(pf_input *in);

/* Binary mode (above).  Before the first pf_input_next_member. */
void		 pf_input_set_binary(pf_input *in);
/*
 * In binary mode: a file that is gzip data with no archive inside is
 * handed out as it is stored, for the caller to inflate (posimport
 * inflates lc0's chunks, each a gzip file, in its worker threads).
 * Before the first pf_input_next_member.
 */
void		 pf_input_keep_gzip(pf_input *in);

/*
 * idle(arg) is called before a read from a pipe or terminal that would
 * block (a pipeline stage flushes its output there).  NULL disables.
 */
void		 pf_input_set_idle(pf_input *in, void (*idle)(void *), void *arg);

/*
 * Go to the next member: 1 (a member is ready to read), 0 (no more
 * members), -1 (the input cannot be read further: not recognised, damaged
 * archive; see pf_input_error).  The first call detects the format.
 * After a member's read error, the next call goes on to the next member
 * where the archive allows it (zip) and returns 0 where it does not.
 */
int		 pf_input_next_member(pf_input *in);

/* The member's name inside an archive, or NULL for a plain/compressed
   file.  Valid until the next pf_input_next_member call. */
const char	*pf_input_member(const pf_input *in);
const char	*pf_input_filename(const pf_input *in);

/*
 * The window of unread bytes of the current member is [*begin, *end).
 * pf_input_fill() moves the unread bytes starting at *pos to the front of
 * the buffer when needed and reads until at least want bytes are unread or
 * the member ends (from a pipe, also when the bytes so far end a line,
 * and at once with a new window that holds a line: a slow pipe must not
 * stall the reader); want is capped at
 * PF_INPUT_KEEP.  *pos, *end are
 * updated (the buffer may move: recompute pointers derived from them).
 * Returns 1 when more data was added, 0 at the end of the member (nothing
 * more to add), -1 on a read or decompression error (also: a zip member
 * whose CRC does not match, garbage after the compressed data).  After
 * pf_input_fill returns 0 or -1, *end is final for this member.  The
 * first call for a member passes *pos = *end = NULL.
 */
int		 pf_input_fill(pf_input *in, const char **pos,
		    const char **end, size_t want);

/*
 * After pf_input_next_member returned 1: 1 when the member is the whole
 * input and is text compressed with zstd alone, in a regular file, whose
 * frames a caller may then read and decompress itself (pf_games does,
 * in parallel): *fd is the file, to be read with pread(2) from byte
 * *start; 0 otherwise.  The caller then reads this member no further
 * through in, except after pf_input_resume.
 */
int		 pf_input_zstd_text(const pf_input *in, int *fd,
		    uint64_t *start);

/*
 * The rest of such a member from byte at of the file, where a zstd frame
 * begins or where bytes that are no frame begin: the next pf_input_fill
 * (with *pos = *end = NULL) goes on from there, with the text, errors and
 * messages the member has from there when read whole.  After it the
 * input has no more members.  0, or -1 with the error set.
 */
int		 pf_input_resume(pf_input *in, uint64_t at);

/* 1 for a regular file (reads never wait), 0 for a pipe or terminal. */
int		 pf_input_regular(const pf_input *in);

/* Bytes of the current member handed out so far (for offsets). */
uint64_t	 pf_input_offset(const pf_input *in, const char *pos);

/* The last error, valid until the next call. */
const char	*pf_input_error(const pf_input *in);

/*
 * Up to n bytes of the current member into buf, as read(2): the count
 * (what is at hand: from a pipe it does not wait for n), 0 at the
 * member's end, -1 on an error (pf_input_error; the bytes decoded before
 * it have been handed out; the next call returns 0).  Not mixed with
 * pf_input_fill on one member.
 */
ssize_t		 pf_input_read(pf_input *in, void *buf, size_t n);

/*
 * A source of bytes for the binary readers (binpack.h, lc0.h): as read(2),
 * with the reason for a -1 written to err.  pf_input_source is
 * pf_input_read as one (arg: the pf_input).
 */
typedef ssize_t	 pf_source_fn(void *arg, void *buf, size_t n, char *err,
		    size_t errsize);
ssize_t		 pf_input_source(void *in, void *buf, size_t n, char *err,
		    size_t errsize);

/*
 * The regular files under the directory dir, at any depth (up to 64), in
 * natural order (runs of digits compared as numbers: training.2.gz before
 * training.10.gz), names that start with a dot left out: *paths (each
 * "dir/.../name", malloc'd, as is the array) and *n.  Links are followed,
 * to directories too.  What cannot be looked at below dir (a link to
 * nothing, a directory that cannot be read) is in the list too, for the
 * caller's open to name.  So is a directory that is one it lies under
 * again (dir itself or one between, the same device and inode, as a link
 * to "." or ".." makes), a loop, not entered: (*why)[i] says so for it,
 * and is NULL for every other path (the array malloc'd, as is each
 * reason).  0, or -1 with err set (dir cannot be read, memory is short).
 * pf_input_free_paths frees either array.
 */
int		 pf_input_dir_files(const char *dir, char ***paths,
		    char ***why, size_t *n, char *err, size_t errsize);
void		 pf_input_free_paths(char **paths, size_t n);
/*
 * An operand: fn(arg, path, NULL) for path itself ("-" too), or, when
 * path is a directory, fn(arg, file, why) for every file under it, in
 * pf_input_dir_files' order, while fn returns 0; why is NULL, or says
 * why file is not to be read (a directory loop), for fn to name it.  0,
 * fn's nonzero return, or -1 with err set when the directory cannot be
 * listed or has no files.
 */
int		 pf_input_each_file(const char *path,
		    int (*fn)(void *arg, const char *file, const char *why),
		    void *arg, char *err, size_t errsize);
int		 pf_input_natcmp(const char *a, const char *b);

#endif
