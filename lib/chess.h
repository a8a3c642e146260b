/*
 * chess.h - the posflow chess core: bitboard board, legal move generation,
 * make/unmake, FEN, SAN and UCI move text, position hash, game-end helpers,
 * and the 28-byte packed position used by the record stream.
 *
 * Conventions (Ethereal-style):
 *   - squares are 0..63, a1 = 0, h1 = 7, a8 = 56; file = sq & 7,
 *     rank = sq >> 3.
 *   - a move is a uint16_t; move lists are arrays the caller owns, at least
 *     PF_MAX_MOVES long.  Move generation never allocates.
 *   - castling is encoded as "king takes own rook" (from = king square,
 *     to = rook square), as Stockfish does internally; this covers standard
 *     chess and Chess960 with one rule.  pf_move_to_uci() prints e1g1 for
 *     standard games and e1h1 (king to rook) for Chess960 boards.
 *   - Nothing here prints or exits.  Functions that can fail return 0 / -1
 *     and write the reason into a caller buffer (err, errlen), which may be
 *     NULL.
 */
#ifndef PF_CHESS_H
#define PF_CHESS_H

#include <stddef.h>
#include <stdint.h>

enum { PF_WHITE = 0, PF_BLACK = 1 };
enum { PF_PAWN = 0, PF_KNIGHT, PF_BISHOP, PF_ROOK, PF_QUEEN, PF_KING };

/* A piece code is type | colour << 3 (the marlinformat nibble). */
#define PF_PIECE(colour, type)	((uint8_t)((colour) << 3 | (type)))
#define PF_PIECE_TYPE(p)	((p) & 7)
#define PF_PIECE_COLOUR(p)	((p) >> 3)
#define PF_NO_PIECE		0xFF
#define PF_SQ_NONE		64

#define PF_MAX_MOVES		256	/* > 218, the known maximum */
#define PF_SAN_MAX		16	/* buffer size for pf_move_to_san */
#define PF_UCI_MAX		6	/* buffer size for pf_move_to_uci */
#define PF_FEN_MAX		96	/* buffer size for pf_board_to_fen */

/*
 * Move: bits 0-5 from, 6-11 to, 12-13 kind, 14-15 promotion piece
 * (0 knight, 1 bishop, 2 rook, 3 queen; only meaningful for promotions).
 */
typedef uint16_t pf_move;
#define PF_MOVE_NONE		((pf_move)0)
enum { PF_MK_NORMAL = 0, PF_MK_PROMOTION = 1, PF_MK_ENPASSANT = 2,
    PF_MK_CASTLE = 3 };
#define PF_MOVE_FROM(m)		((m) & 63)
#define PF_MOVE_TO(m)		(((m) >> 6) & 63)
#define PF_MOVE_KIND(m)		(((m) >> 12) & 3)
#define PF_MOVE_PROMO(m)	((((m) >> 14) & 3) + PF_KNIGHT) /* piece type */
#define PF_MAKE_MOVE(from, to, kind, promo) \
	((pf_move)((from) | (to) << 6 | (kind) << 12 | (promo) << 14))

/*
 * The board.  Transparent: tools may read every field; only the functions
 * below change it.  Fields guaranteed to other modules: squares, by_type,
 * by_colour, stm, ep, rule50, fullmove, castle_rooks, chess960, key.
 */
typedef struct pf_board {
	uint64_t by_type[6];	/* pieces of each type, both colours */
	uint64_t by_colour[2];
	uint64_t castle_rooks;	/* rooks that still carry a castling right */
	uint64_t checkers;	/* pieces giving check to the side to move */
	uint64_t key;		/* Zobrist key, incremental (repetitions) */
	uint8_t squares[64];	/* piece code or PF_NO_PIECE */
	uint8_t king_sq[2];
	uint8_t stm;		/* PF_WHITE or PF_BLACK */
	uint8_t ep;		/* en passant target square, set ONLY when a
				   legal en passant capture exists, else
				   PF_SQ_NONE */
	uint8_t rule50;		/* half-move clock */
	uint8_t chess960;	/* 1: Chess960 rules and move text */
	uint16_t fullmove;	/* full-move number, starts at 1 */
} pf_board;

/* Everything unmake needs that the move itself does not say. */
typedef struct pf_undo {
	uint64_t castle_rooks;
	uint64_t key;
	uint64_t checkers;
	uint8_t captured;	/* piece code or PF_NO_PIECE */
	uint8_t ep;
	uint8_t rule50;
	uint16_t fullmove;
} pf_undo;

#define PF_STARTPOS_FEN \
	"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

void	pf_board_startpos(pf_board *b);

/*
 * Parse a FEN (4 to 6 fields; missing clocks default to 0 1).  Castling
 * field: KQkq, X-FEN (KQkq meaning the outermost rook, or a file letter
 * such as Gkq for an inner rook) and Shredder-FEN (HAha).  A position that
 * needs Chess960 castling sets chess960 = 1.  Strict: the position is
 * validated with pf_board_validate() and -1 is returned with the reason in
 * err for anything invalid.  An en passant square that is well-formed and
 * possible (right rank, a pawn that could just have double-pushed, empty
 * squares behind it) but allows no legal capture is accepted and dropped
 * (after the check that the side to move is in no check the double push
 * could not give).  Clocks are never negative.  A half-move clock above
 * 255 is stored as 255; a full-move number of 0 as 1.  Castling letters
 * that need a Chess960 rook or king also set chess960; a caller that
 * knows the game is Chess960 may set it after.
 */
int	pf_board_from_fen(pf_board *b, const char *fen, char *err,
	    size_t errlen);

/*
 * Validate a board: exactly one king per colour, no pawns on the first or
 * last rank, the side not to move not in check, no check that no move can
 * give (more than two checkers; two pawns or knights, two pieces on one
 * line through the king, or two bishops; after the double push of the ep
 * square, a check other than by that pawn or uncovered by it), castling
 * rooks on the back rank with their king on the back rank between... as
 * castling needs and not in a corner, at most 32 pieces / 16 per side.
 * 0 or -1 with the reason in err.
 */
int	pf_board_validate(const pf_board *b, char *err, size_t errlen);

/*
 * Write the FEN into buf (at least PF_FEN_MAX bytes); returns buf.  Standard
 * boards use KQkq; Chess960 boards use X-FEN letters where unambiguous and
 * Shredder file letters otherwise.  The en passant field is the board's ep
 * (so '-' unless a legal capture exists, as python-chess writes it).
 */
char	*pf_board_to_fen(const pf_board *b, char *buf);

/* Legal moves into moves[PF_MAX_MOVES]; returns the count. */
int	pf_gen_legal(const pf_board *b, pf_move *moves);
/* 1 if m is a legal move in b. */
int	pf_is_legal(const pf_board *b, pf_move m);
/*
 * The legal moves of the side to move's pieces of type onto square to,
 * castling left out, into moves[PF_MAX_MOVES] (at most 4 x 16 in fact);
 * returns the count.  The same moves as those of pf_gen_legal with that
 * piece and destination, found from the square back: what a SAN move
 * needs (pf_move_from_san), at a fraction of the cost.
 */
int	pf_moves_to(const pf_board *b, int type, int to, pf_move *moves);

/* m must be legal in b, and b a legal position (the side not to move not
   in check: as every board made here is; the checks the move gives are
   found from the piece moved and the line it left).  u receives what
   unmake needs. */
void	pf_make_move(pf_board *b, pf_move m, pf_undo *u);
void	pf_unmake_move(pf_board *b, pf_move m, const pf_undo *u);

/* Leaf count of the legal move tree to depth (bulk-counted at the last
   ply); 1 for depth 0. */
uint64_t pf_perft(pf_board *b, int depth);

/*
 * The generator, the counting and pf_board_pack_next have two builds on
 * x86-64: with the POPCNT instruction, and portable.  1 when the first are
 * used: the CPU has the instruction and POSFLOW_NO_POPCNT is not in the
 * environment (the tests run both).  Decided once, at start-up.
 */
int	pf_chess_popcnt(void);
/*
 * pf_board_pack and pf_board_pack_next have two more builds on x86-64,
 * where pf_board_pack_next packs the position after the move in full:
 * for CPUs with AVX-512 VBMI2, and for CPUs with fast BMI2 (PDEP and
 * PEXT: Intel's from Haswell, AMD's from Zen 3).  1 when that one may
 * be used (the CPU has it, and neither POSFLOW_NO_POPCNT nor
 * POSFLOW_NO_AVX512, or POSFLOW_NO_BMI2, is in the environment); where
 * both may, the AVX-512 one is.
 */
int	pf_chess_vbmi2(void);
int	pf_chess_bmi2(void);

int	pf_in_check(const pf_board *b);

enum pf_status { PF_ONGOING = 0, PF_CHECKMATE, PF_STALEMATE };
enum pf_status pf_board_status(const pf_board *b);
/* 1 when neither side can ever mate (K v K, K+minor v K, K+B v K+B with
   same-coloured bishops). */
int	pf_insufficient_material(const pf_board *b);
/* 1 when rule50 >= 100 and the side to move is not checkmated. */
int	pf_fifty_move_draw(const pf_board *b);
/*
 * keys[0..n-1] are the Zobrist keys of the game so far, keys[n-1] the
 * current position.  Returns how many times the current position occurred
 * (1 = first time), looking back at most rule50 plies, same side to move.
 */
int	pf_repetition_count(const uint64_t *keys, int n, int rule50);

/*
 * Position hash: XXH64 (seed 0) of a canonical encoding: the first 25
 * bytes of pf_board_pack's output, i.e. the packed position without
 * rule50 and fullmove (ep only when a legal capture exists, which pf_board
 * guarantees).  Equal positions in the sense of the repetition rule hash
 * equal.
 */
uint64_t pf_board_hash(const pf_board *b);

/*
 * Move text.  pf_move_from_san is lenient: standard SAN with or without
 * +/#/!?/?? suffixes, O-O / 0-0 / O-O-O / 0-0-0, promotions with or without
 * '=' (e8Q, e8=Q, e8q), over-disambiguated moves (Ngf3, Ng1f3), a missing
 * 'x' or a wrong capture mark, and UCI strings (e2e4, e7e8q, e1g1 or e1h1
 * castling).  len is the length of san (it need not be NUL-terminated).
 * 0 and *m set, or -1 (unknown, illegal or ambiguous) with reason in err.
 */
int	pf_move_from_san(const pf_board *b, const char *san, size_t len,
	    pf_move *m, char *err, size_t errlen);
/* Standard SAN with + or # ; buf at least PF_SAN_MAX; returns buf. */
char	*pf_move_to_san(const pf_board *b, pf_move m, char *buf);
/* UCI text: e2e4, e7e8q; castling e1g1, or king-to-rook on chess960. */
char	*pf_move_to_uci(const pf_board *b, pf_move m, char *buf);
/* Accepts both castling forms; 0 or -1 (not legal / not parsable). */
int	pf_move_from_uci(const pf_board *b, const char *s, size_t len,
	    pf_move *m);

/*
 * The packed position: the first 28 bytes of a record core (posflow(5)).
 * Layout is marlinformat's: occupancy (u64 LE, a1 = bit 0), then one nibble
 * per occupied square in ascending square order, low nibble first
 * (type | colour << 3, type 6 = a rook that carries a castling right), then
 * stm_ep (bit 7 = black to move, bits 0-6 the ep square or 64), rule50 (u8),
 * fullmove (u16 LE).
 */
#define PF_PACKED_SIZE 28
/* Its first bytes, through stm_ep: the position less its move clocks, as
   posflow's tools compare positions (shard --dedup, posstat). */
#define PF_POS_KEY_SIZE 25
void	pf_board_pack(const pf_board *b, uint8_t out[PF_PACKED_SIZE]);
/*
 * The same bytes as pf_board_pack(after, out), where after is the board
 * after move m and prev the packed position before it: most moves change
 * a few nibbles, found without going over the board.  prev and out may
 * not overlap.
 */
void	pf_board_pack_next(const uint8_t prev[PF_PACKED_SIZE], pf_move m,
	    const pf_board *after, uint8_t out[PF_PACKED_SIZE]);
/*
 * Inverse of pf_board_pack, validated like a FEN (bad data from a stream
 * must never reach an engine).  chess960 sets the board's chess960 flag
 * (the record flag PF_RF_CHESS960); a castling rook that only Chess960
 * allows also sets it.  As with a FEN, a possible en passant square that
 * allows no legal capture is dropped.  0 or -1 with the reason in err.
 */
int	pf_board_unpack(pf_board *b, const uint8_t in[PF_PACKED_SIZE],
	    int chess960, char *err, size_t errlen);

/*
 * Lower-level helpers, for tools that build or inspect boards themselves.
 * A board built by hand: pf_board_clear, pf_board_put_piece for each piece,
 * set stm, castle_rooks, ep, clocks and chess960, then pf_board_refresh
 * (king squares, checkers, key; drops an ep square that allows no legal
 * capture) and pf_board_validate before using it.
 */
void	pf_board_clear(pf_board *b);
void	pf_board_put_piece(pf_board *b, int sq, uint8_t piece);
void	pf_board_refresh(pf_board *b);
uint64_t pf_board_compute_key(const pf_board *b);
/* The same key for a board whose squares agree with its bitboards (every
   board pf_board_validate accepts), from the occupied squares only. */
uint64_t pf_board_compute_key_consistent(const pf_board *b);
/* Attacks of a rook / bishop on sq with the given occupancy. */
uint64_t pf_rook_attacks(int sq, uint64_t occ);
uint64_t pf_bishop_attacks(int sq, uint64_t occ);
/* Pieces of both colours attacking sq, given occupancy occ. */
uint64_t pf_attackers_to(const pf_board *b, int sq, uint64_t occ);
/* 1 if colour by attacks sq on b. */
int	pf_square_attacked(const pf_board *b, int sq, int by);
/* 1 if the side to move has a legal en passant capture onto ep. */
int	pf_ep_capture_exists(const pf_board *b, int ep);
/* Number of legal moves (the same as pf_gen_legal's count). */
int	pf_count_legal(const pf_board *b);

/*
 * The legal moves of a board as sets, to check a list of moves against
 * them without generating the list: pf_legal_sets_fill() fills s, then
 * pf_legal_sets_take() takes each move of the list out of s, and
 * pf_legal_sets_empty() says whether every legal move was taken.  When n
 * takes leave s empty and n is s->count, the n moves are exactly the
 * legal moves, each once (each take removes at most one move).
 *   from[sq]   targets of the normal, non-promotion moves of the piece
 *              of the side to move on sq (0 for any other square)
 *   special    the castling, en passant and promotion moves; a taken one
 *              becomes PF_MOVE_NONE
 *   count      the number of legal moves (pf_count_legal)
 */
typedef struct pf_legal_sets {
	uint64_t from[64];
	uint64_t own;		/* squares of the side to move's pieces */
	int count;
	int nspecial;
	pf_move special[PF_MAX_MOVES];
} pf_legal_sets;

/* Fill s from b; returns s->count. */
int	pf_legal_sets_fill(const pf_board *b, pf_legal_sets *s);

/* Take m out of s if it is there (a move that is not is ignored). */
static inline void
pf_legal_sets_take(pf_legal_sets *s, pf_move m)
{
	int i;

	if (m >> 12) {
		for (i = 0; i < s->nspecial; i++)
			if (s->special[i] == m) {
				s->special[i] = PF_MOVE_NONE;
				break;
			}
		return;
	}
	s->from[PF_MOVE_FROM(m)] &= ~(1ULL << PF_MOVE_TO(m));
}

/* 1 if every move of s has been taken. */
int	pf_legal_sets_empty(const pf_legal_sets *s);

/*
 * Popcount in a few shifts and one multiply: the library is built for
 * baseline x86-64, where __builtin_popcountll is a library call.
 */
static inline int
pf_popcount_swar(uint64_t b)
{
	b = b - ((b >> 1) & 0x5555555555555555ULL);
	b = (b & 0x3333333333333333ULL) + ((b >> 2) & 0x3333333333333333ULL);
	b = (b + (b >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
	return (int)((b * 0x0101010101010101ULL) >> 56);
}

#endif
