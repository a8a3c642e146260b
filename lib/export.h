/*
 * export.h - records into a trainer's native format: the exporters of
 * posexport(1), also used by shard --format.
 *
 *   binpack, plain, bin, marlinformat, bulletformat, viriformat
 *          a stream on a descriptor (binpack.h, sfformats.h)
 *   npy    one .npy file per array in a directory (npy.h, loader.h)
 *   lc0    lczero-training's V6 chunk files, a game each, in a directory
 *          (lc0.h)
 *
 * A record the format cannot hold is skipped and the reason given; the
 * caller counts and reports.  Nothing here prints or exits.
 */
#ifndef PF_EXPORT_H
#define PF_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* Why a record was skipped. */
enum {
	PF_EXPORT_NO_EVAL = 1,	/* no evaluation (of the selector's) */
	PF_EXPORT_NO_MOVE,	/* no move played (best_move: no best
				   move) */
	PF_EXPORT_NO_POLICY,	/* no policy target (lc0) */
	PF_EXPORT_INVALID,	/* an invalid position, move or extension */
	PF_EXPORT_UNFIT		/* a valid position the format cannot hold
				   (binpack, bin: a Chess960 castling right;
				   binpack: a ply past 16383 to begin a
				   chain) */
};

typedef struct pf_export_opts {
	const char *eval;	/* the score's selector, NULL: deepest */
	int value_method;	/* npy, lc0: PF_VALUE_*, 0: the last */
	int best_move;		/* binpack, plain, bin: the evaluation's
				   best move in place of the move played */
	int lc0_input;		/* lc0: the input format, PF_LC0_* (lc0.h),
				   0: PF_LC0_CLASSIC */
	/* npy */
	unsigned features;	/* PF_FEAT_* (loader.h), 0: ALL */
	int perspective, opposite, policy_width, pqr, planes;
} pf_export_opts;

/* What a format is and which options it takes (pf_export_info). */
#define PF_EXPORT_TEXT		0x01	/* text: a terminal may have it */
#define PF_EXPORT_DRAWS		0x02	/* an unknown result written as a
					   draw (pf_export_unknown_results) */
#define PF_EXPORT_OPT_BEST	0x10	/* best_move */
#define PF_EXPORT_OPT_VALUE	0x20	/* value_method */
#define PF_EXPORT_OPT_LC0INPUT	0x40	/* lc0_input */
#define PF_EXPORT_OPT_NPY	0x80	/* features, perspective, opposite,
					   policy_width, pqr, planes */

typedef struct pf_export pf_export;

/* The formats' names, NULL-terminated. */
extern const char *const pf_export_formats[];
/* 1 when format writes a directory, 0 a stream, -1 not a format. */
int		 pf_export_directory(const char *format);
/* The PF_EXPORT_TEXT, ... bits of format; 0 for an unknown format. */
unsigned	 pf_export_info(const char *format);
/* 1 when format holds a move that may be the best move in place of the
   move played (PF_EXPORT_OPT_BEST: binpack, plain, bin, lc0), else 0. */
int		 pf_export_best_move(const char *format);
/* The value of pf_export_opts.best_move the words "played" (0) and "best"
   (1) name; -1 for anything else. */
int		 pf_export_move_word(const char *word);
/*
 * The input waits: hand on what is held (the entries and rows buffered);
 * binpack's and lc0's chunks go out whole, when complete.  0 / -1.
 */
int		 pf_export_idle(pf_export *x);
/* A file name suffix for a stream format (".binpack", ...). */
const char	*pf_export_suffix(const char *format);
/*
 * Open an exporter writing to fd (stream formats; not closed) or into
 * dir (created if missing).  name is the output's name in messages.  NULL
 * with the reason in err.
 */
pf_export	*pf_export_open(const char *format, int fd, const char *dir,
		    const char *name, const pf_export_opts *o, char *err,
		    size_t errlen);
/*
 * One record: 1 written, 0 skipped (*why is PF_EXPORT_*, and for
 * PF_EXPORT_INVALID and PF_EXPORT_UNFIT pf_export_error says what), -1 an
 * output error
 * (pf_export_error; errno EPIPE for a closed pipe).
 */
int		 pf_export_put(pf_export *x, const pf_record *rec, int *why);
/* Write what is buffered and finish the output.  0 / -1. */
int		 pf_export_close(pf_export *x);
/* Free; on a failed run the directory formats remove their files. */
void		 pf_export_free(pf_export *x);
const char	*pf_export_error(const pf_export *x);
uint64_t	 pf_export_written(const pf_export *x);
/* Records written whose result was unknown (as draws). */
uint64_t	 pf_export_unknown_results(const pf_export *x);

#endif
