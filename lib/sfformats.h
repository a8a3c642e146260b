/*
 * sfformats.h - codecs of the trainer data formats plain, bin,
 * marlinformat, bulletformat and viriformat, between their bytes or text
 * and pf_sfentry (sfentry.h):
 *
 *   plain	Stockfish's text: one entry is the six lines
 *		"fen F", "move M", "score S", "ply P", "result R", "e"
 *		(Stockfish tools' convert and nnue-pytorch's emitPlainEntry).
 *   bin	Stockfish's 40-byte PackedSfenValue (src/learn/packed_sfen.h
 *		and the nodchip namespace of src/extra/
 *		nnue_data_binpack_format.h in Stockfish's tools branch).
 *   marlinformat  bullet's and Marlinflow's 32-byte PackedBoard (the
 *		bulletformat crate's MarlinFormat, viridithas's
 *		dataformat/marlinformat.rs).
 *   bulletformat  bullet's 32-byte ChessBoard, the record its
 *		DirectSequentialDataLoader reads (bulletformat's chess.rs):
 *		the board as the side to move sees it.
 *   viriformat	one game: a marlinformat board, then (u16 move, i16
 *		score) pairs ended by a pair of zeros (viridithas's
 *		datagen/dataformat.rs, bullet's ViriformatReader).
 *
 * Every integer is little-endian and written byte by byte.
 *
 * Scores.  pf_sfentry holds Stockfish's internal units from the side to
 * move's view; bin and plain hold exactly that.  marlinformat and
 * viriformat hold centipawns from WHITE's view, bulletformat centipawns
 * from the side to move's view (bulletformat's MarlinFormat::score()
 * negates the stored score when black is to move).  The conversion
 * (pf_sfscore_to_cp, pf_sfscore_from_cp) is nnue-pytorch's cp = 100 s /
 * 208, rounded to nearest, for scores below the mate range; a mate score
 * (|s| > 31753, Stockfish's ±(32000 - plies to mate)) is stored as it is,
 * since the bullet formats have no mate convention of their own.  Back,
 * |cp| > 31753 is a mate, clamped to ±32000 (the mate distance of
 * engines whose mate value exceeds 32000 is lost); anything else becomes
 * s = round(cp * 2.08), clamped to ±31753 so that it never reads as a
 * mate.  A centipawn score survives cp -> s -> cp exactly; s -> cp -> s
 * moves a non-mate score by at most 1 (so pf_sfentry_to_record keeps such
 * an s in the evaluation, PF_EVF_SF, and pf_sfentry_from_record gives it
 * back).
 *
 * Results.  pf_sfentry holds 1 / 0 / -1 for a win / draw / loss of the
 * side to move, as bin and plain do.  marlinformat and viriformat hold
 * 2 / 1 / 0 for a white win / draw / black win; bulletformat 2 / 1 / 0
 * for a win / draw / loss of the side to move.
 *
 * Moves.  Castling is king-takes-own-rook in pf_move, in bin (Stockfish's
 * move encoding) and in viriformat; plain writes UCI text (e1g1, or
 * king-to-rook on Chess960 boards) and reads both forms.  A decoded move
 * must be legal in the decoded position ("bad move" otherwise).
 *
 * What a format does not hold is derived on decode: marlinformat and
 * viriformat hold no ply (ply = 2 (fullmove - 1) + stm) and marlinformat
 * no move (PF_MOVE_NONE); no format holds the Chess960 flag as such
 * (board.chess960 is set when the castling rights need it, in plain as
 * the FEN's castling field says).  Decoded boards are validated like a
 * FEN (pf_board_unpack): an invalid position is refused with the reason.
 *
 * Nothing here prints or exits: functions return 0 / -1 (or a count) and
 * write the reason into err (errlen bytes; err may be NULL).
 */
#ifndef PF_SFFORMATS_H
#define PF_SFFORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "sfentry.h"

#define PF_BIN_SIZE		40	/* PackedSfenValue */
#define PF_MARLIN_SIZE		32	/* marlinformat PackedBoard */
#define PF_BULLET_SIZE		32	/* bulletformat ChessBoard */
#define PF_VIRI_HEADER_SIZE	32	/* a marlinformat board */
#define PF_VIRI_PAIR_SIZE	4	/* u16 move, i16 score */
#define PF_PLAIN_MAX		192	/* longest plain entry, NUL included */

/* ---- scores and moves ------------------------------------------------ */

/* Stockfish internal units to centipawns and back (see above). */
int16_t	pf_sfscore_to_cp(int16_t s);
int16_t	pf_sfscore_from_cp(int16_t cp);

/*
 * Stockfish's move encoding (bin): to in bits 0-5, from in 6-11, the
 * promotion piece in 12-13 (0 knight .. 3 queen), the kind in 14-15
 * (1 promotion, 2 en passant, 3 castling, king to rook).
 */
uint16_t pf_sfmove_encode(pf_move m);
pf_move	pf_sfmove_decode(uint16_t v);
/*
 * viriformat's move encoding: from in bits 0-5, to in 6-11, the
 * promotion piece in 12-13, and in 14-15 the flag: 3 promotion,
 * 1 en passant, 2 castling (king to rook).  0 is no move.
 */
uint16_t pf_virimove_encode(pf_move m);
pf_move	pf_virimove_decode(uint16_t v);

/* ---- plain ------------------------------------------------------------ */

/*
 * Write e as plain text into out (at least PF_PLAIN_MAX bytes): the six
 * lines, each ended by '\n', and a NUL.  A missing move is written "0000".
 * Returns the length without the NUL.
 */
size_t	pf_plain_encode(const pf_sfentry *e, char *out);
/*
 * Read one entry from text[0..len).  The entry runs from its "fen" line
 * to its "e" line; the "move", "score", "ply" and "result" lines come
 * between, once each, in any order ("move 0000" or "move (none)": no
 * move).  Blank lines and '\r' before a newline are ignored.  eof says
 * that text runs to the end of the input (a last line without its
 * newline then counts).
 * Returns 1 (entry read), 0 (no complete entry in text: read more; at
 * eof, only blank lines were left) or -1 (a malformed entry, the reason
 * in err).  *used is the number of bytes taken: after 1 and -1, up to
 * and including the entry's "e" line (or all of text when the entry is
 * cut off at eof), so that the caller can go on after a bad entry; after
 * 0, the blank lines skipped.
 */
int	pf_plain_decode(const char *text, size_t len, int eof, pf_sfentry *e,
	    size_t *used, char *err, size_t errlen);

/* ---- bin (PackedSfenValue) ------------------------------------------- */

/*
 *   0  32  PackedSfen: a 256-bit stream, least significant bit of byte 0
 *          first: stm (1 bit, 1 = black), white and black king squares
 *          (6 bits each), the other 62 squares from a8 to h1 rank by
 *          rank (Huffman: empty 0; pawn 1000, knight 1100, bishop 1010,
 *          rook 1110, queen 1001 in stream order, then a colour bit),
 *          castling K Q k q (1 bit each), ep (1 bit, then 6 bits of
 *          square when set), rule50 bits 0-5, fullmove bits 0-7 and
 *          8-15, rule50 bit 6; the rest 0.
 *  32  i16 score, the side to move's, internal units
 *  34  u16 move (Stockfish's encoding; 0 = none)
 *  36  u16 game ply
 *  38  i8  result for the side to move (1, 0, -1)
 *  39  u8  padding (0xFF, as nnue-pytorch's converter writes it)
 *
 * The format knows standard castling only: the encoder refuses a
 * castling rook that is not the outermost rook on its side of the king
 * (a Chess960 position); a half-move clock above 127 is stored as 127.
 */
int	pf_bin_encode(const pf_sfentry *e, uint8_t out[PF_BIN_SIZE],
	    char *err, size_t errlen);
int	pf_bin_decode(const uint8_t in[PF_BIN_SIZE], pf_sfentry *e,
	    char *err, size_t errlen);

/* ---- marlinformat ---------------------------------------------------- */

/*
 *   0  28  the board as pf_board_pack writes it (chess.h): occupancy,
 *          32 nibbles, stm_ep, rule50, fullmove
 *  28  i16 score, centipawns, White's view
 *  30  u8  result: 2 white win, 1 draw, 0 black win
 *  31  u8  extra (written 0, ignored)
 * The move and ply are not stored (decode: PF_MOVE_NONE, ply from the
 * full-move number).
 */
void	pf_marlin_encode(const pf_sfentry *e, uint8_t out[PF_MARLIN_SIZE]);
int	pf_marlin_decode(const uint8_t in[PF_MARLIN_SIZE], pf_sfentry *e,
	    char *err, size_t errlen);

/* ---- bulletformat ---------------------------------------------------- */

/*
 * The board as the side to move sees it: when black is to move, every
 * square is mirrored (sq ^ 56) and the colours swapped, so that "white"
 * (colour bit 0) is always the side to move.
 *   0  u64 occupancy
 *   8  16  one nibble per occupied square in ascending order, low nibble
 *          first: type (0 pawn .. 5 king) | 8 for the opponent's pieces
 *  24  i16 score, centipawns, the side to move's view
 *  26  u8  result: 2 win, 1 draw, 0 loss for the side to move
 *  27  u8  the side to move's king square
 *  28  u8  the opponent's king square, mirrored again (its own view)
 *  29  3   extra (written 0, ignored)
 * Lost: which side is to move, castling rights, en passant, clocks,
 * move and ply.  Decode gives the position as stored, with White (the
 * side to move) to move, no castling or en passant, clocks 0 1, ply 0.
 */
void	pf_bullet_encode(const pf_sfentry *e, uint8_t out[PF_BULLET_SIZE]);
int	pf_bullet_decode(const uint8_t in[PF_BULLET_SIZE], pf_sfentry *e,
	    char *err, size_t errlen);

/* ---- viriformat ------------------------------------------------------ */

/*
 * A game: its first position as marlinformat (score 0, the game's result
 * from White's view, extra 0), then for each position of the game in
 * order the move played and the position's score (centipawns, White's
 * view), then the pair 0, 0.  Every position but the first is the one
 * after the previous move.
 */

/*
 * Reading, one game at a time without buffering it: pf_viri_game_begin
 * on the 32-byte header, then pf_viri_game_next on each 4-byte pair
 * until it returns 0.  The struct is transparent plain data.
 */
typedef struct pf_viri_game {
	pf_board board;		/* the position the next pair's move is
				   played from */
	uint16_t ply;		/* its game ply */
	int8_t white_result;	/* 1 White won, 0 draw, -1 Black won */
	uint32_t nmoves;	/* pairs read so far */
} pf_viri_game;

/*
 * The size of the game at buf[0..len): header, pairs and terminator; 0
 * when buf does not hold all of it (read more; at the end of the input
 * the game is truncated).
 */
long	pf_viri_game_size(const uint8_t *buf, size_t len);
int	pf_viri_game_begin(pf_viri_game *g,
	    const uint8_t header[PF_VIRI_HEADER_SIZE], char *err,
	    size_t errlen);
/*
 * 1: *e is the next position with its move, score and result, and g has
 * moved on; 0: the pair was the terminator, the game is over; -1: a bad
 * pair (reason in err), the game cannot go on.
 */
int	pf_viri_game_next(pf_viri_game *g,
	    const uint8_t pair[PF_VIRI_PAIR_SIZE], pf_sfentry *e, char *err,
	    size_t errlen);

/*
 * Writing: a pf_viri_writer buffers the game being written.  The caller
 * adds its entries in order and says where the game ends; the bytes of
 * the finished game are then handed out.
 */
typedef struct pf_viri_writer pf_viri_writer;

/* NULL on allocation failure. */
pf_viri_writer	*pf_viri_writer_new(void);
void		 pf_viri_writer_free(pf_viri_writer *w);
/*
 * 1 if e continues the game being written (its board is the position
 * after the last added move), else 0 (also when no game is open).
 */
int		 pf_viri_writer_follows(const pf_viri_writer *w,
		    const pf_sfentry *e);
/*
 * Add the next position of the game; the first one after
 * pf_viri_writer_new or pf_viri_writer_end opens a game and becomes its
 * header.  0, or -1 with the reason (the entry is not added; the game so
 * far is kept): no move ("entry has no move", which the format cannot
 * hold), an illegal move, a board that does not follow the previous
 * entry (end the game first), a result that differs from the game's, or
 * no memory.
 */
int		 pf_viri_writer_add(pf_viri_writer *w, const pf_sfentry *e,
		    char *err, size_t errlen);
/* Entries in the open game (0 when none is open). */
uint32_t	 pf_viri_writer_moves(const pf_viri_writer *w);
/*
 * End the open game: *out and *len are its bytes, terminator included,
 * valid until the next call on w; *len is 0 when no game was open.
 */
void		 pf_viri_writer_end(pf_viri_writer *w, const uint8_t **out,
		    size_t *len);

#endif
