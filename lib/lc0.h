/*
 * lc0.h - lczero-training's V6TrainingData record (8356 bytes,
 * little-endian, as lc0 writes it and lczero-training's chunkparser reads
 * it), in lc0's input formats 1 to 5:
 *
 *      0 u32 version (6)          4 u32 input_format
 *      8 f32 probabilities[1858]: the policy target over lczero-training's
 *            policy index (policyindex.h), through the position's
 *            transform; -1 for illegal moves
 *   7440 u64 planes[104]: 8 history slots (this position, then the ones
 *            before it) of 13 planes: the side to move's pawns, knights,
 *            bishops, rooks, queens, king, the other side's, and a plane
 *            of ones when the position occurred before; from the side to
 *            move's view (the board mirrored by rank when black moves),
 *            then through the transform, a1 = bit 0 of the square set
 *            with the bits of each byte reversed, as lc0 writes them
 *            (ReverseBitsInBytes)
 *   8272 u8  castling_us_ooo, castling_us_oo, castling_them_ooo,
 *            castling_them_oo: format 1, 1 when the right is held; 2 to 5,
 *            1 << the file of the rook that holds it
 *   8276 u8  side_to_move_or_enpassant: formats 1 and 2, 1 when black
 *            moves; 3 to 5, 1 << the file of the en passant square (0
 *            without one; lc0's, pf_lc0_ep), through the transform
 *   8277 u8  rule50_count
 *   8278 u8  invariance_info: formats 3 and up, the transform, + 128 when
 *            black moves; else 0
 *   8279 u8  dummy
 *   8280 f32 root_q, best_q, root_d, best_d, root_m, best_m, plies_left,
 *            result_q, result_d, played_q, played_d, played_m, orig_q,
 *            orig_d, orig_m (side to move's view)
 *   8340 u32 visits   8344 u16 played_idx   8346 u16 best_idx
 *   8348 f32 policy_kld       8352 u32 reserved
 *
 * The formats (lc0's NetworkFormat::InputFormat; in lczero-training's
 * model.input_type):
 *   1 classic         the classical planes
 *   2 frc_castling    castling as rook files (Chess960)
 *   3 canonical       as 2, with the en passant file in place of the side
 *                     to move; without castling rights, a transform
 *                     (policyindex.h) that puts the side to move's king
 *                     on the e to h files and, without pawns, on ranks 1
 *                     to 4 on or below the a8-h1 diagonal (on it, the
 *                     smaller of the two reflections, as lc0 compares
 *                     them); history that stops at a change of castling
 *                     rights, before a position with an en passant
 *                     square, and after a capture or a pawn move
 *   4 canonical_100   as 3; the trainer reads rule50 in hundreds
 *   5 canonical_v2    as 4, and the history slots after the first hold
 *                     only positions that occurred before (repeats),
 *                     looking back to the last capture or pawn move
 * All of it as lc0's src/neural/encoder.cc (EncodePositionForNN) and
 * src/trainingdata/trainingdata.cc write it.  Where the history runs
 * out, it is filled as lc0 fills it (FillEmptyHistory::FEN_ONLY, its
 * default): nothing after the standard start position, else copies of the
 * oldest position known (its repetition plane too), with the double push
 * that made its en passant square, if any, taken back; the canonical
 * formats' stops apply to the copies as to the positions.  Format 5 with
 * an oldest position that neither occurred before nor follows a capture
 * or pawn move has no copies (lc0's loop would not end).
 *
 * Nothing here prints or exits.
 */
#ifndef PF_LC0_H
#define PF_LC0_H

#include <stddef.h>
#include <stdint.h>

#include "chess.h"
#include "input.h"		/* pf_source_fn */
#include "policyindex.h"

#define PF_LC0_V6_SIZE		8356
#define PF_LC0_V7_SIZE		8396	/* V6 and 40 bytes more */
#define PF_LC0_V5_SIZE		8308	/* V6 up to plies_left */
#define PF_LC0_V4_SIZE		8292	/* V5 without input_format, M */
#define PF_LC0_V3_SIZE		8276	/* V4 without Q and D */
#define PF_LC0_MAX_SIZE		PF_LC0_V7_SIZE
#define PF_LC0_HISTORY		8	/* history slots */
#define PF_LC0_LOOKBACK		257	/* positions format 5 may look at:
					   this one and 256 before it */

enum {
	PF_LC0_CLASSIC = 1,
	PF_LC0_FRC_CASTLING,
	PF_LC0_CANONICAL,
	PF_LC0_CANONICAL_100,
	PF_LC0_CANONICAL_V2,
	/* 4 and 5 with a side-to-move plane (bit 7 of invariance_info) for
	   armageddon, set by the trainer: the records are 4's and 5's */
	PF_LC0_CANONICAL_ARMAGEDDON = 132,
	PF_LC0_CANONICAL_V2_ARMAGEDDON = 133
};

typedef struct pf_lc0_v6 {
	int input_format;	/* PF_LC0_*, 0: PF_LC0_CLASSIC */
	int transform;		/* pf_lc0_transform of the position */
	float probabilities[PF_LC0_POLICY_SIZE];
	float root_q, best_q, root_d, best_d, root_m, best_m, plies_left;
	float result_q, result_d, played_q, played_d, played_m;
	float orig_q, orig_d, orig_m;
	uint32_t visits;
	uint16_t played_idx, best_idx;
	float policy_kld;
} pf_lc0_v6;

/* The input format a name ("classic", ..., "canonical_v2",
   "canonical_armageddon", "canonical_v2_armageddon", as lczero-training
   names them) or a number ("1" to "5", "132", "133") gives, or 0. */
int	pf_lc0_input_format(const char *name);
/* The name of input format f, or NULL (no such format). */
const char *pf_lc0_input_name(int f);
/* The format whose records f writes: 132 is 4's, 133 is 5's, the others
   their own; 0 for no such format. */
int	pf_lc0_base_format(int f);

/*
 * The transform (policyindex.h) input format f sees b through: 0 for
 * formats 1 and 2 and wherever a castling right is held.  The policy
 * indices of a record are pf_lc0_index_tf(m, black, transform).
 */
int	pf_lc0_transform(const pf_board *b, int f);

/*
 * The en passant square lc0's board has in b, prev the position before it
 * (NULL when unknown), or PF_SQ_NONE.  lc0 sets one after every double
 * push beside an enemy pawn (ChessBoard::ApplyMove); a pf_board keeps it
 * only where a legal capture exists.  Without prev (a FEN), b's own.  Two
 * positions are the same for lc0's repetitions only when neither has one
 * beyond b's own.
 */
int	pf_lc0_ep(const pf_board *b, const pf_board *prev);

/*
 * Encode: hist[0] is the position, hist[1..nhist) the ones before it,
 * most recent first, consecutive plies of one game (1 <= nhist; formats
 * 1 to 4 look at PF_LC0_HISTORY of them and the one before (for its en
 * passant square, pf_lc0_ep), format 5 at up to PF_LC0_LOOKBACK); rep[i]
 * is 1 when hist[i] occurred earlier in the game, for lc0 (pf_lc0_ep).
 * The format, the transform and the targets come from v.
 */
void	pf_lc0_v6_encode(const pf_board *const *hist, const int *rep,
	    int nhist, const pf_lc0_v6 *v, uint8_t out[PF_LC0_V6_SIZE]);

/*
 * Reading.  One record back (V6; V7, V3 to V5 as pf_lc0_decode says): the position from the planes of its first
 * slot (the transform undone, the board mirrored back when black moves),
 * castling from the four bytes (format 1, which names no file: the
 * outermost rook on that side of the king), the en passant square from the en passant
 * byte (formats 3 and up) or from the history's first slot (1 and 2: a
 * double push between it and the position; so also where lc0's fill took
 * one back); the move played from played_idx, the best move from best_idx
 * (PF_MOVE_NONE where it names no legal move), the result from result_q,
 * best_q and best_d, and every legal move's probability, normalised to sum
 * to 1 (uniform where every one is 0, as lc0 writes a lone move that
 * got no visit).  V6 holds no game ply: fullmove is left at 1.
 */
typedef struct pf_lc0_entry {
	pf_board board;
	pf_move move;		/* played, a legal move (V6, V7); V3 to V5
				   store none: PF_MOVE_NONE */
	pf_move best;		/* best_idx's move (V3 to V5: the most
				   probable), or PF_MOVE_NONE */
	int result;		/* 1, 0, -1: the side to move's view */
	int has_eval;		/* q and d hold (not V3) */
	float q, d;		/* best_q, best_d */
	int version, input_format;
	int n;			/* legal moves */
	pf_move moves[PF_MAX_MOVES];
	double prob[PF_MAX_MOVES];
} pf_lc0_entry;

/* The size of a record of version (3 to 7; PF_LC0_V6_SIZE for any
   other). */
size_t	pf_lc0_record_size(uint32_t version);
/*
 * A record of version 3 to 7, pf_lc0_record_size(its version) bytes, read
 * as lczero-training's chunkparser reads the older ones (laid out as V6;
 * V3 and V4, which name no input format, in format 1): 0, or -1 with the
 * reason in err (another version or input format, an impossible board, a
 * move played that is not legal, probabilities that are not lc0's).
 * V3 to V5 store no move played, no best move and no result_q: the move
 * is left to the caller (the one that gives the next record), the best
 * move is the most probable, the result is the old int8 one.
 */
int	pf_lc0_decode(const uint8_t *rec, pf_lc0_entry *e, char *err,
	    size_t errlen);

/*
 * best_q as a score in Stockfish's internal units (sfentry.h), as lc0's
 * rescorer converts it for Stockfish's training data (Px0toNNUE,
 * src/trainingdata/rescorer.cc): 416.11539129 ln((1 + q) / (1 - q)),
 * clamped to +-20000.
 */
int16_t	pf_lc0_score(float q);

struct pf_extbuf;
/* The entry's evaluation (source import: the score above, W/D/L from
   best_q and best_d, the best move) and policy target (method import)
   appended to ext.  0, or -1 when memory is short. */
int	pf_lc0_entry_exts(const pf_lc0_entry *e, struct pf_extbuf *ext);

/*
 * A reader of lc0's chunks, one at a time, from a source of bytes
 * (input.h): a chunk is a file, or a member of a tar archive (as lc0's
 * training data is published), read through a pf_input in binary mode,
 * which takes off any compression around the file or archive.  A chunk
 * that is gzip data (as lc0 writes every chunk) is inflated here.  Records
 * come out one at a time, whatever the chunk's size; memory is fixed.
 */
typedef struct pf_lc0_reader pf_lc0_reader;

/* NULL when memory is short. */
pf_lc0_reader	*pf_lc0_reader_open(void);
void		 pf_lc0_reader_free(pf_lc0_reader *r);
/* Read a chunk from src (arg: its argument) from here on. */
void		 pf_lc0_reader_start(pf_lc0_reader *r, pf_source_fn *src,
		    void *arg);
/*
 * The chunk's next record into rec: 1 (*size is its size,
 * pf_lc0_record_size of its version; *first is 1 when it is the chunk's
 * first), 0 at the chunk's end, -1 damage (pf_lc0_reader_error): a
 * truncated record, damaged gzip data or a read error end the chunk (the
 * next call returns 0).
 */
int		 pf_lc0_read(pf_lc0_reader *r, uint8_t rec[PF_LC0_MAX_SIZE],
		    size_t *size, int *first);
/* The number of the last record returned in the chunk (from 1). */
uint64_t	 pf_lc0_reader_recno(const pf_lc0_reader *r);
const char	*pf_lc0_reader_error(const pf_lc0_reader *r);

#endif
