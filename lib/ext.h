/*
 * ext.h - typed record extensions (posflow(5), EXTENSIONS).
 *
 * An extension is (u16 type, u16 reserved, u32 length, payload).  A tool
 * passes every extension it does not own through byte for byte, so new
 * types never need a format change.  Several extensions of one type may
 * appear in one record (say a 1-node and a depth-16 evaluation); they keep
 * their order.  All multi-byte fields are little-endian; f32 is IEEE-754
 * binary32, little-endian.  Scores are from the side to move's point of
 * view unless said otherwise.
 *
 * Type registry (0x8000-0xFFFF are free for private use):
 *
 * PF_EXT_META (1) - game metadata, written by pgn2pos
 *    0 u16 WhiteElo (0 unknown)      2 u16 BlackElo (0 unknown)
 *    4 u32 base time s (0xFFFFFFFF: none or unknown, '-' in the tag)
 *    8 u32 increment s               12 u8 termination (PF_TERM_*)
 *   13 u8 reserved  14 u16 reserved
 *   16 six strings, each u16 length + bytes (no NUL): Event, Site, White,
 *      Black, Date, Termination (the raw tag); UTF-8, written at most
 *      PF_META_STR_MAX bytes each
 *
 * PF_EXT_EVAL (2) - one evaluation (uci-eval, or a PGN %eval)
 *    0 u8 source (PF_SRC_*)   1 u8 limit kind (PF_LIMIT_*)
 *    2 u8 score kind (PF_SCORE_CP / PF_SCORE_MATE)
 *    3 u8 flags (PF_EVF_*)
 *    4 i32 score: centipawns, or mate in n moves (+ the side to move mates,
 *      - it is mated, 0: it is checkmated now)
 *    8 u64 limit value (depth, nodes, or milliseconds)
 *   16 u16 W, 18 u16 D, 20 u16 L (per mille, valid with PF_EVF_WDL)
 *   22 u16 depth   24 u16 seldepth   26 u16 best move (pf_move, 0 none)
 *   28 u64 nodes   36 u32 time ms    40 u16 multipv (1, K, 0 = all)
 *   42 u16 pv length n, 44 n x u16 pv moves
 *   44+2n u8 engine id length k, then k bytes (UCI "id name", UTF-8)
 *   45+2n+k i16 the score in Stockfish's internal units, with PF_EVF_SF
 *      only (posimport from binpack, bin and plain: the entry's own
 *      score, of which centipawns are a rounding; posexport writes it
 *      back while it still gives the evaluation's score)
 *
 * Strings on the way in: the encoders pass every string through
 * pf_utf8_convert (utf8.h), so what they write is valid UTF-8 whatever
 * they are given: valid UTF-8 is kept, any other byte is taken as Latin-1
 * and converted, and the result is cut at a character boundary to the
 * field's limit.  Decoders return the bytes as stored: a stream from
 * elsewhere may hold anything, and readers must cope (posdump escapes).
 *
 * PF_EXT_MOVESCORES (3) - per-move scores (uci-eval --multipv)
 *    0 u8 limit kind   1 u8 flags (PF_MSF_*)   2 u16 depth of the table
 *    4 u64 limit value   12 u16 n
 *   14 n x 8 bytes: u16 move, u8 score kind, u8 depth, i32 score (the
 *      MultiPV score of the move, the side to move's view), best first
 *
 * PF_EXT_CLOCK (4) - clocks in this position (pgn2pos, from %clk)
 *    0 u32 white ms   4 u32 black ms   (0xFFFFFFFF: unknown)
 *
 * PF_EXT_POLICY (5) - policy target (softtarget)
 *    0 u8 method (PF_POLICY_*)   1 u8 reserved   2 u16 n
 *    4 f32 param1 (zeman: drop fraction; softmax/winprob: temperature)
 *    8 f32 param2 (zeman: power; else 0)
 *   12 n x 4 bytes: u16 move, u16 probability in units of 1/65535; the n
 *      probabilities sum to exactly 65535 and n is every legal move
 *
 * PF_EXT_VALUE (6) - value target (softtarget)
 *    0 u8 method (PF_VALUE_*)   1 u8 scale (0: Q in [-1,1], 1: S in [0,1])
 *    2 u16 reserved   4 f32 param1   8 f32 param2   12 f32 lambda
 *   16 f32 target (side to move's view)
 *
 * PF_EXT_COMPLEXITY (7) - board complexity (complexity); a common head,
 * then the fields of its mode
 *    0 u8 mode (PF_COMPLEXITY_*)   1 u8 depth: policy method (PF_POLICY_*);
 *      nodes: flags (PF_COMPLEXITYF_*)
 *    2 u16 complexity (depth: the deciding depth, 0 none; nodes: 1 or 0)
 *    4 u16 depth searched (depth: the deepest table's; nodes: the deep
 *      evaluation's)
 *   depth mode (28 bytes):
 *    6 u16 first depth (the shallowest table's, normally 1)
 *    8 u16 move: the surprising move; with complexity 0, the most probable
 *      move of the deepest table
 *   10 u16 reserved   12 f32 its probability at the first depth
 *   16 f32 its probability at the deciding depth (0 with complexity 0)
 *   20 f32 low   24 f32 high
 *   nodes mode (52 bytes):
 *    6 u16 shallow evaluation's depth
 *    8 u8 shallow limit kind   9 u8 deep limit kind   10 u16 reserved
 *   12 u64 shallow limit value   20 u64 deep limit value
 *   28 u16 shallow best move   30 u16 deep best move
 *   32 i32 loss: cp by which the shallow best move scores below the best
 *      move of the deep evaluation's table (valid with
 *      PF_COMPLEXITYF_LOSS_KNOWN, else 0)
 *   36 f32 Q shallow   40 f32 Q deep (logistic, alpha 170)
 *   44 i32 --loss   48 f32 --threshold
 *
 * PF_EXT_REPAIR (8) - value repair (repair-mark), 20 bytes
 *    0 u8 mode (PF_REPAIR_CANDIDATES, _PANDA)
 *    1 u8 class (candidates: 0 not, 1 a candidate; panda: PF_REPAIR_NONE,
 *      _DEFINITE, _MAYBE_YES, _MAYBE_NO)
 *    2 u8 flags (PF_REPAIRF_*)   3 u8 reserved
 *    4 f32 Q shallow   8 f32 Q deep (candidates; 0 in panda)
 *   12 i32 original cp   16 i32 repaired cp (panda: side to move's view,
 *      mates mapped with pf_score_cp; 0 in candidates)
 *
 * PF_EXT_PQR (9) - one P/Q/R triple (pqr-sample), 60 bytes; a record
 * has one per R drawn
 *    0 u16 R's move from this position   2 u8 flags (0)   3 u8 reserved
 *    4 Q: the position after the move played, 28 bytes packed
 *   32 R: the position after R's move, 28 bytes packed
 *
 * PF_EXT_MERGE (10) - twins merged into this record (shard --dedup
 * merge), 16 bytes
 *    0 u32 count: the records merged into this one, itself included
 *    4 u32 wins   8 u32 draws   12 u32 losses: the game results of those
 *      records from the side to move's view (a record of unknown result
 *      counts in count only)
 */
#ifndef PF_EXT_H
#define PF_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

enum {
	PF_EXT_META = 1,
	PF_EXT_EVAL = 2,
	PF_EXT_MOVESCORES = 3,
	PF_EXT_CLOCK = 4,
	PF_EXT_POLICY = 5,
	PF_EXT_VALUE = 6,
	PF_EXT_COMPLEXITY = 7,
	PF_EXT_REPAIR = 8,
	PF_EXT_PQR = 9,
	PF_EXT_MERGE = 10
};

/* PF_SRC_IMPORT: a score read from another training-data format by
   posimport (an engine's, of unknown search). */
enum { PF_SRC_ENGINE = 0, PF_SRC_PGN = 1, PF_SRC_TERMINAL = 2,
    PF_SRC_IMPORT = 3 };
enum { PF_LIMIT_NONE = 0, PF_LIMIT_DEPTH = 1, PF_LIMIT_NODES = 2,
    PF_LIMIT_MOVETIME = 3 };
enum { PF_SCORE_CP = 0, PF_SCORE_MATE = 1 };
#define PF_EVF_WDL		0x01	/* W/D/L fields valid */
#define PF_EVF_LOWER		0x02	/* score is a lower bound */
#define PF_EVF_UPPER		0x04	/* score is an upper bound */
#define PF_EVF_SF		0x08	/* sf_score follows the engine id */
#define PF_MSF_COMPLETE		0x01	/* every legal move is listed */
#define PF_MSF_INTERMEDIATE	0x02	/* a shallower depth (--keep-depths) */
enum { PF_TERM_UNKNOWN = 0, PF_TERM_NORMAL, PF_TERM_TIME, PF_TERM_ABANDONED,
    PF_TERM_RULES, PF_TERM_UNTERMINATED, PF_TERM_OTHER };
enum { PF_POLICY_ZEMAN = 1, PF_POLICY_SOFTMAX = 2, PF_POLICY_WINPROB = 3,
    PF_POLICY_IMPORT = 4 };	/* 4: read from other data (posimport) */
enum { PF_VALUE_TANH = 1, PF_VALUE_LOGISTIC = 2, PF_VALUE_WDL = 3,
    PF_VALUE_WDL_ENGINE = 4, PF_VALUE_LINEAR = 5 };

#define PF_MATE_CP		32000
#define PF_PV_MAX		128
#define PF_META_STR_MAX		255	/* bytes of each meta string written */
#define PF_ENGINE_MAX		255	/* bytes of an engine id (u8 length) */
#define PF_U32_UNKNOWN		0xFFFFFFFFu

/* Mate mapping of METHODS.md: sign(n) * (MATE_CP - 100 |n|); mate 0 (the
   side to move is checkmated) is -MATE_CP. */
int32_t	pf_score_cp(uint8_t score_kind, int32_t score);

/* ---- generic access --------------------------------------------------- */

typedef struct pf_ext {
	uint16_t type;
	uint16_t reserved;
	uint32_t len;
	const uint8_t *data;	/* points into the record's ext area */
} pf_ext;

typedef struct pf_ext_iter {
	const uint8_t *p, *end;
} pf_ext_iter;

void	pf_ext_iter_init(pf_ext_iter *it, const pf_record *rec);

/* 1 and *e filled, 0 at the end, -1 if the area is malformed.  Inline:
   every filter walks every record's extensions. */
static inline int
pf_ext_next(pf_ext_iter *it, pf_ext *e)
{
	size_t left;

	if (it->p == NULL || it->p >= it->end)
		return 0;
	left = (size_t)(it->end - it->p);
	if (left < PF_EXT_HEADER_SIZE ||
	    pf_get32(it->p + 4) > left - PF_EXT_HEADER_SIZE) {
		it->p = it->end;
		return -1;
	}
	e->type = pf_get16(it->p);
	e->reserved = pf_get16(it->p + 2);
	e->len = pf_get32(it->p + 4);
	e->data = it->p + PF_EXT_HEADER_SIZE;
	it->p += PF_EXT_HEADER_SIZE + e->len;
	return 1;
}
/* The nth (0-based) extension of type in rec: 1 found, 0 not. */
int	pf_ext_find(const pf_record *rec, uint16_t type, int nth, pf_ext *e);
int	pf_ext_count(const pf_record *rec, uint16_t type);
/* "meta", "eval", ... or NULL for an unknown type. */
const char *pf_ext_type_name(uint16_t type);

/*
 * A growable extension area to build a record's ext bytes.  A zeroed
 * struct is an empty buffer.  All appenders return 0 / -1 (out of memory,
 * or a malformed area for pf_extbuf_copy_except).
 */
typedef struct pf_extbuf {
	uint8_t *data;
	size_t len, cap;
} pf_extbuf;

void	pf_extbuf_reset(pf_extbuf *b);
void	pf_extbuf_free(pf_extbuf *b);
/* Append already-encoded extensions (say a record's whole ext area). */
int	pf_extbuf_append_raw(pf_extbuf *b, const uint8_t *ext, size_t len);
/* Append every extension of rec except those of type drop (0: none).
   All or nothing: -1 also (errno EINVAL) when rec's area is malformed. */
int	pf_extbuf_copy_except(pf_extbuf *b, const pf_record *rec,
	    uint16_t drop);
/* Append an extension header and return a pointer to len payload bytes to
   fill (valid until the next append), or NULL. */
uint8_t	*pf_extbuf_add(pf_extbuf *b, uint16_t type, uint32_t len);

/* ---- typed extensions: encode appends to b, decode reads x ------------ */

typedef struct pf_meta {
	uint16_t white_elo, black_elo;
	uint32_t base_s, inc_s;
	uint8_t termination;
	/* Strings are not NUL-terminated.  Decoded: they point into the
	   extension data, as stored.  Encoded: any bytes (NULL: empty),
	   converted and cut as said above. */
	const char *event, *site, *white, *black, *date, *term_text;
	uint16_t event_len, site_len, white_len, black_len, date_len,
	    term_text_len;
} pf_meta;

typedef struct pf_eval {
	uint8_t source, limit_kind, score_kind, flags;
	int32_t score;
	uint64_t limit;
	uint16_t wdl[3];
	uint16_t depth, seldepth;
	pf_move best;
	uint64_t nodes;
	uint32_t time_ms;
	uint16_t multipv;
	int16_t sf_score;		/* with PF_EVF_SF: Stockfish's units */
	uint16_t pv_len;		/* at most PF_PV_MAX kept */
	pf_move pv[PF_PV_MAX];
	uint8_t engine_len;
	char engine[PF_ENGINE_MAX + 1];	/* not NUL-terminated; any bytes
					   when encoded, as stored decoded */
} pf_eval;

typedef struct pf_movescore {
	pf_move move;
	uint8_t score_kind;
	uint8_t depth;
	int32_t score;
} pf_movescore;

typedef struct pf_movescores {
	uint8_t limit_kind, flags;
	uint16_t depth;
	uint64_t limit;
	uint16_t n;
	pf_movescore m[PF_MAX_MOVES];
} pf_movescores;

typedef struct pf_clock {
	uint32_t white_ms, black_ms;
} pf_clock;

typedef struct pf_policy {
	uint8_t method;
	uint16_t n;
	float param1, param2;
	pf_move move[PF_MAX_MOVES];
	uint16_t prob[PF_MAX_MOVES];	/* sums to 65535 */
} pf_policy;

typedef struct pf_value {
	uint8_t method, scale;
	float param1, param2, lambda, target;
} pf_value;

int	pf_meta_encode(const pf_meta *m, pf_extbuf *b);
int	pf_meta_decode(const pf_ext *x, pf_meta *m);
int	pf_eval_encode(const pf_eval *e, pf_extbuf *b);
/* -1 when the payload is too short for its PV, engine id or flagged
   sf_score, the score is of a kind posflow(5) does not define, or flagged
   W/D/L do not sum to 1000. */
int	pf_eval_decode(const pf_ext *x, pf_eval *e);
/* pf_eval_decode without the PV and engine id (left untouched), with the
   same checks: for readers that need only the score. */
int	pf_eval_decode_head(const pf_ext *x, pf_eval *e);
int	pf_movescores_encode(const pf_movescores *s, pf_extbuf *b);
/* -1 when the payload is too short for its n entries, n is above
   PF_MAX_MOVES, or an entry's score is of a kind posflow(5) does not
   define. */
int	pf_movescores_decode(const pf_ext *x, pf_movescores *s);
int	pf_clock_encode(const pf_clock *c, pf_extbuf *b);
int	pf_clock_decode(const pf_ext *x, pf_clock *c);
int	pf_policy_encode(const pf_policy *p, pf_extbuf *b);
int	pf_policy_decode(const pf_ext *x, pf_policy *p);
int	pf_value_encode(const pf_value *v, pf_extbuf *b);
int	pf_value_decode(const pf_ext *x, pf_value *v);
/*
 * Whether a value target of method is the one asked for: want 0 takes
 * any, PF_VALUE_WDL either form softtarget --value wdl writes (the
 * sigmoid, or PF_VALUE_WDL_ENGINE), any other want only itself.
 */
int	pf_value_wanted(int want, int method);

/* ---- complexity and repair -------------------------------------------- */

enum { PF_COMPLEXITY_DEPTH = 1, PF_COMPLEXITY_NODES = 2 };
#define PF_COMPLEXITYF_DIFFER		0x01	/* the best moves differ */
#define PF_COMPLEXITYF_LOSS_KNOWN	0x02	/* loss is valid */
#define PF_COMPLEXITYF_MOVE		0x04	/* the move criterion fired */
#define PF_COMPLEXITYF_Q		0x08	/* the Q criterion fired */
#define PF_COMPLEXITY_DEPTH_SIZE	28
#define PF_COMPLEXITY_NODES_SIZE	52
#define PF_COMPLEXITY_HEAD_SIZE		6

/*
 * One struct for both modes; the encoder writes the fields of c->mode and
 * the decoder fills those (the others are zeroed).  A mode the decoder
 * does not know is read as its 6-byte head (mode, byte 1 in flags,
 * complexity, depth), so a reader can still use the metric.
 */
typedef struct pf_complexity {
	uint8_t mode;		/* PF_COMPLEXITY_* */
	uint8_t method;		/* depth: PF_POLICY_* */
	uint8_t flags;		/* nodes: PF_COMPLEXITYF_* */
	uint16_t complexity;
	uint16_t depth;		/* depth searched */
	/* depth mode */
	uint16_t first_depth;
	pf_move move;
	float p_first, p_decide, low, high;
	/* nodes mode */
	uint16_t shallow_depth;
	uint8_t shallow_kind, deep_kind;	/* PF_LIMIT_* */
	uint64_t shallow_limit, deep_limit;
	pf_move shallow_best, deep_best;
	int32_t loss;
	float q_shallow, q_deep;
	int32_t min_loss;	/* --loss */
	float threshold;	/* --threshold */
} pf_complexity;

/* Encoding a mode other than depth and nodes is refused (-1, EINVAL). */
int	pf_complexity_encode(const pf_complexity *c, pf_extbuf *b);
int	pf_complexity_decode(const pf_ext *x, pf_complexity *c);

enum { PF_REPAIR_CANDIDATES = 1, PF_REPAIR_PANDA = 2 };
/* Classes: candidates use 0 (not) and 1 (a candidate); panda these. */
enum { PF_REPAIR_NONE = 0, PF_REPAIR_DEFINITE = 1, PF_REPAIR_MAYBE_YES = 2,
    PF_REPAIR_MAYBE_NO = 3 };
#define PF_REPAIRF_RESCORED	0x01	/* a search re-scored the value */
#define PF_REPAIRF_WDL		0x02	/* Q from the engine's W/D/L */
#define PF_REPAIR_SIZE		20

typedef struct pf_repair {
	uint8_t mode, cls, flags;
	float q_shallow, q_deep;
	int32_t original, repaired;
} pf_repair;

int	pf_repair_encode(const pf_repair *r, pf_extbuf *b);
int	pf_repair_decode(const pf_ext *x, pf_repair *r);

#define PF_PQR_SIZE		60
typedef struct pf_pqr {
	pf_move r_move;		/* from this record's position to R */
	uint8_t flags;
	uint8_t q[PF_PACKED_SIZE], r[PF_PACKED_SIZE];
} pf_pqr;

int	pf_pqr_encode(const pf_pqr *x, pf_extbuf *b);
int	pf_pqr_decode(const pf_ext *x, pf_pqr *out);

#define PF_MERGE_SIZE		16
typedef struct pf_merge {
	uint32_t count;			/* records merged, this one included */
	uint32_t wins, draws, losses;	/* the side to move's view */
} pf_merge;

int	pf_merge_encode(const pf_merge *m, pf_extbuf *b);
int	pf_merge_decode(const pf_ext *x, pf_merge *m);

static inline void pf_putf32(uint8_t *p, float f)
{ union { float f; uint32_t u; } c; c.f = f; pf_put32(p, c.u); }
static inline float pf_getf32(const uint8_t *p)
{ union { float f; uint32_t u; } c; c.u = pf_get32(p); return c.f; }

#endif
