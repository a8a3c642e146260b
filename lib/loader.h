/*
 * loader.h - posflow streams into training batches: the C side of the
 * Python module (scripts/posflow), exported by libposflow.so.
 *
 * A loader reads one or more streams (posflow shards, plain or zstd) in
 * order and fills caller-owned arrays, a batch at a time, with what a
 * trainer needs: sparse feature indices, the value target, the engine
 * score, the game result, the policy as sparse (index, probability) pairs,
 * the played move, the engine's best move and the PQR positions.  The arrays are plain C arrays
 * (NumPy's, from Python): nothing here allocates per record.
 *
 * Feature indices (seed 002, section 7; METHODS.md section 7).  Every
 * piece gives one index in each requested block; blocks are concatenated
 * in the order ALL, H, V, D1, D2, each after the sizes of the requested
 * blocks before it.  With c the piece's colour (0 = the side to move and
 * 1 = the other side under PF_PERSP_STM, after mirroring the board by rank
 * when black is to move; 0 = white under PF_PERSP_WHITE), r its role (0
 * pawn .. 5 king), s its square (a1 = 0, h8 = 63), f = s & 7, k = s >> 3:
 *
 *   ALL  (c * 6 + r) * 64 + s          768
 *   H    (c * 6 + r) * 8 + f            96  (files)
 *   V    (c * 6 + r) * 8 + k            96  (ranks)
 *   D1   (c * 6 + r) * 15 + f - k + 7  180  (a1-h8 diagonals)
 *   D2   (c * 6 + r) * 15 + f + k      180  (a8-h1 diagonals)
 *
 * Each block holds at most 32 indices per position (in ascending square
 * order), the row is padded with -1.  Two pieces of the same role and
 * colour on one file give the same H index twice, as the seed counts them
 * (an EmbeddingBag in sum mode adds them).
 *
 * Policy and move indices are lczero-training's 1858-move policy index
 * (policyindex.h), from the side to move's view.
 *
 * Nothing here prints or exits.
 */
#ifndef PF_LOADER_H
#define PF_LOADER_H

#include <stddef.h>
#include <stdint.h>

#define PF_FEAT_ALL	0x01
#define PF_FEAT_H	0x02
#define PF_FEAT_V	0x04
#define PF_FEAT_D1	0x08
#define PF_FEAT_D2	0x10
#define PF_FEAT_KNOWN	0x1F
#define PF_FEAT_BLOCK	32	/* indices per block in a row */

enum { PF_PERSP_STM = 0, PF_PERSP_WHITE = 1 };

typedef struct pf_loader_opts {
	unsigned features;	/* PF_FEAT_*; 0 means PF_FEAT_ALL */
	int perspective;	/* PF_PERSP_* */
	int policy_width;	/* pairs per row of the policy arrays */
	const char *eval;	/* the score's evaluation selector (evalsel.h),
				   NULL for "deepest" */
	int value_method;	/* the value target of this method
				   (PF_VALUE_*), 0 for the record's last */
	uint64_t stride;	/* keep record i (0-based, over all paths) */
	uint64_t offset;	/*   when i % stride == offset; 0/0 all */
} pf_loader_opts;

/*
 * Where a batch goes.  Any pointer may be NULL: that array is not filled
 * (and not computed).  Row r of an array of width w starts at r * w.
 */
typedef struct pf_batch {
	int32_t *features;	/* [n][width]: this position, -1 padded */
	int32_t *features_opp;	/* [n][width]: seen from the other side
				   (PF_PERSP_STM only; the mirror image) */
	int32_t *features_q;	/* [n][width]: PQR's Q, -1 rows if none */
	int32_t *features_r;	/* [n][width]: PQR's R */
	int8_t *has_pqr;	/* [n]: 1 when the record has a PQR triple */
	float *value;		/* [n]: the value target, NaN if none */
	float *score;		/* [n]: centipawns, side to move, NaN if none */
	float *result;		/* [n]: 1 win, 0.5 draw, 0 loss for the side
				   to move, NaN if unknown */
	int32_t *policy_index;	/* [n][policy_width]: -1 padded */
	float *policy_prob;	/* [n][policy_width]: 0 padded */
	uint8_t *planes;	/* [n][14][64]: seed 004's planes from the
				   side to move's view (the board mirrored
				   when black moves): 0-5 its pawns, knights,
				   bishops, rooks, queens, king, 6-11 the
				   other side's, 12 the squares the side to
				   move attacks, 13 those the other attacks;
				   index 8 * rank + file; 0 / 1 */
	int32_t *move;		/* [n]: the played move's index, -1 if none */
	int32_t *best;		/* [n]: the best move of the evaluation
				   score's selector chooses, -1 if none */
	int32_t *ply;		/* [n] */
	uint64_t *game_id;	/* [n] */
} pf_batch;

typedef struct pf_loader pf_loader;

/*
 * Open a loader on paths[0..n) ("-" is standard input), read in order;
 * n may be 0 for a loader used only through pf_loader_row.
 * NULL with the reason in err (bad options, allocation; a path that cannot
 * be opened is reported by the first pf_loader_fill that reaches it).
 */
pf_loader	*pf_loader_open(const char *const *paths, size_t n,
		    const pf_loader_opts *o, char *err, size_t errlen);
/* Indices per feature row: PF_FEAT_BLOCK times the number of blocks. */
int		 pf_loader_width(const pf_loader *l);
/* The number of distinct feature indices (768 for ALL alone). */
int		 pf_loader_feature_count(const pf_loader *l);
/*
 * Fill up to max rows of b.  Returns the rows filled (0 at the end of the
 * last input), or -1 on damaged input or a read error, with the reason in
 * pf_loader_error ("file: record N: reason").  Records before the damage
 * are returned first: -1 comes on the call after them.  After -1 the
 * caller may go on: the loader resumes where the reader can.
 */
long		 pf_loader_fill(pf_loader *l, pf_batch *b, size_t max);
/*
 * The next record as posdump --json shows it (one line, no newline) in
 * *json, valid until the next call: 1, 0 at the end, -1 as above.
 */
int		 pf_loader_next_json(pf_loader *l, const char **json,
		    size_t *len);
/*
 * Row i of b from a record the caller read (a tool that writes batches
 * from its own input): 0, or -1 with the reason in pf_loader_error
 * (without a file name when the loader reads no paths).
 */
int		 pf_loader_row(pf_loader *l, pf_batch *b, size_t i,
		    const pf_record *rec);
const char	*pf_loader_error(const pf_loader *l);
/* Records read so far (skipped by stride included). */
uint64_t	 pf_loader_records(const pf_loader *l);
void		 pf_loader_free(pf_loader *l);

/* The library's version, "posflow X.Y". */
const char	*pf_version(void);

#endif
