/*
 * show.h - a record as a line of text or JSON, as posdump(1) shows it:
 * the FEN first, then every field the record carries; extensions posflow
 * knows are decoded, unknown ones shown as type and length (text) or type,
 * length and hex bytes (JSON).  posdump and the Python module
 * (posflow.records) both use it, so the two views never disagree.
 *
 * Writes only to the caller's FILE; problems (an invalid position, a
 * malformed extension, which are shown as far as they can be) go to the
 * caller's warn function as "name: record N: reason".  Never exits.
 */
#ifndef PF_SHOW_H
#define PF_SHOW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record.h"

enum pf_show_field {
	PF_SHOW_FEN, PF_SHOW_GAME, PF_SHOW_PLY, PF_SHOW_MOVE, PF_SHOW_SAN,
	PF_SHOW_RESULT, PF_SHOW_FLAGS,
	/* extensions, shown in record order */
	PF_SHOW_META, PF_SHOW_EVAL, PF_SHOW_MOVESCORES, PF_SHOW_CLOCK,
	PF_SHOW_POLICY, PF_SHOW_VALUE, PF_SHOW_COMPLEXITY, PF_SHOW_REPAIR,
	PF_SHOW_PQR, PF_SHOW_MERGE, PF_SHOW_EXT, PF_SHOW_NFIELDS
};

/*
 * A Panda class (PF_REPAIR_NONE, ...) by name: "none", "definite",
 * "maybe-yes", "maybe-no"; "unknown" for any other value.
 */
const char *pf_show_panda_class(int cls);

/* "fen", "game", ... as --fields names them. */
extern const char *const pf_show_field_names[PF_SHOW_NFIELDS];

typedef struct pf_show_opts {
	int json;
	int nfields;
	enum pf_show_field fields[PF_SHOW_NFIELDS];	/* in the order asked */
	int want[PF_SHOW_NFIELDS];
	void (*warn)(void *ctx, const char *msg);	/* NULL: quiet */
	void *warn_ctx;
} pf_show_opts;

/* Every field, text or JSON, no warn function. */
void	pf_show_opts_init(pf_show_opts *o, int json);
/*
 * Only the fields of a comma-separated list (names may repeat; the list
 * may be of any length).  0, or -1 with the reason in err.
 */
int	pf_show_fields(pf_show_opts *o, const char *list, char *err,
	    size_t errlen);
/*
 * One record and a newline.  name and recno are for the warnings.
 * Returns 0, or -1 when part of it was invalid or malformed.
 */
int	pf_show_record(FILE *fp, const pf_show_opts *o, const pf_record *rec,
	    const char *name, uint64_t recno);
/* One record as JSON with every field, and a newline; no warnings. */
void	pf_show_json(FILE *fp, const pf_record *rec);

/*
 * s[0..len) as a JSON string, quoted and escaped: valid UTF-8 as it is,
 * any other byte as the \u00XX escape of its Latin-1 character, so the
 * output is valid UTF-8 and valid JSON whatever the bytes (file names,
 * tags from a stream made elsewhere).
 */
void	pf_show_json_string(FILE *fp, const char *s, size_t len);

#endif
