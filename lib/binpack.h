/*
 * binpack.h - Stockfish's binpack training-data format, as nnue-pytorch
 * reads and writes it (data_loader/cpp/lib/binpack.h in its repository:
 * CompressedTrainingDataEntryWriter and CompressedTrainingDataEntryReader).
 *
 * A file is a sequence of chunks; a chunk is "BINP", a u32 little-endian
 * payload size, then the payload.  A payload is a sequence of stems, each
 * followed by a chain of continuation entries:
 *
 *   stem (32 bytes, every field big-endian)
 *     0  24  position (pf_binpack_pos_encode: the nnue-pytorch chess
 *            library's CompressedPosition)
 *    24  u16 move (pf_binpack_move_encode)
 *    26  u16 score, zigzag-coded (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...)
 *    28  u16 ply (bits 0-13) | result (bits 14-15, zigzag-coded)
 *    30  u16 rule50
 *   then
 *    32  u16 number of continuation entries (big-endian)
 *    34  movetext: a bit stream, most significant bit first, zero-padded
 *        to a whole byte.  Per entry: the index of the moving piece among
 *        the side to move's pieces (ascending squares) in as few bits as
 *        that count needs, the index of the move among the piece's
 *        pseudo-legal destinations (times 4 plus the promotion piece for
 *        a pawn on its 7th rank; after the king's destinations its
 *        castlings, long first) in as few bits as their count needs,
 *        and the score minus the negated previous score, zigzag-coded, in
 *        5-bit groups (4 value bits, low group first, and a top bit set
 *        when another group follows).
 *
 * Entry e+1 continues the chain of entry e when its position is the one
 * after e's move (pieces, side to move, castling rights, en passant square;
 * not the clocks), its ply is e's plus one and its result is e's negated.
 * A continuation's position, ply, result and half-move clock are derived
 * from the previous entry, so a continuation whose input rule50 disagrees
 * with the derived clock is read back with the derived one, as with
 * nnue-pytorch's writer.  A chunk is written when it holds 1 MiB or more,
 * after the chain of its last stem; a reader ignores fewer than 34 bytes
 * left at the end of a chunk.
 *
 * The format stores no full-move number: the reader sets it from the ply
 * as Stockfish does, fullmove = 1 + (ply - (black to move)) / 2 (at least
 * 1).  It stores no Chess960 castling: only rooks on a1/h1/a8/h8 with
 * their king on e1/e8 can keep a castling right; the reader returns
 * boards with chess960 = 0.
 *
 * Nothing here prints or exits: functions return 0 / -1 (or NULL) and the
 * reason is kept, readable with pf_binpack_reader_error() /
 * pf_binpack_writer_error(), or written into a caller buffer.
 */
#ifndef PF_BINPACK_H
#define PF_BINPACK_H

#include <stddef.h>
#include <stdint.h>

#include "chess.h"
#include "input.h"		/* pf_source_fn */
#include "sfentry.h"

#define PF_BINPACK_POS_SIZE	24	/* CompressedPosition */
#define PF_BINPACK_STEM_SIZE	32	/* PackedTrainingDataEntry */
#define PF_BINPACK_CHUNK_HEADER	8
#define PF_BINPACK_CHUNK_TARGET	(1u << 20)	/* the writer's chunk size */
#define PF_BINPACK_CHUNK_MAX	(100u << 20)	/* largest chunk accepted */
#define PF_BINPACK_PLY_MAX	0x3FFF	/* 14 bits */

/* ---- reading ---------------------------------------------------------- */

typedef struct pf_binpack_reader pf_binpack_reader;

/*
 * Open a reader on fd (not closed by the reader); name is used in error
 * messages.  NULL on allocation failure (errno set).  Memory is bounded
 * whatever the chunk sizes: about 1 MiB.
 */
pf_binpack_reader *pf_binpack_reader_open(int fd, const char *name);
/* The same on any source of bytes (input.h): a pf_input's member, say. */
pf_binpack_reader *pf_binpack_reader_open_source(pf_source_fn *src,
    void *arg, const char *name);

/*
 * Next entry: 1 and *e filled, 0 at the end of input, -1 on damage or a
 * read error (pf_binpack_reader_error says what and at which byte offset:
 * "name: offset N: reason").  Every entry before the damage is returned
 * before the -1.  The caller may call again after -1: reading resumes with
 * the next stem of the chunk when the damaged stem had no continuation
 * entries, else with the next chunk; after a damaged chunk header, with
 * the next "BINP" header found in the input; when nothing more can be
 * read, the next call returns 0.  Every board returned is validated
 * (pf_board_validate) and every move is legal or PF_MOVE_NONE.  Empty
 * input is a valid empty file.
 */
int	 pf_binpack_read(pf_binpack_reader *r, pf_sfentry *e);
/* The last error; valid until the next call on r. */
const char *pf_binpack_reader_error(const pf_binpack_reader *r);
uint64_t pf_binpack_reader_entries(const pf_binpack_reader *r);
/* 1 when the entry pf_binpack_read returned last continued a chain: its
   position is the one after the entry before it, one ply later. */
int	 pf_binpack_reader_chained(const pf_binpack_reader *r);
/* Input bytes consumed so far. */
uint64_t pf_binpack_reader_offset(const pf_binpack_reader *r);
void	 pf_binpack_reader_free(pf_binpack_reader *r);

/* ---- writing ---------------------------------------------------------- */

typedef struct pf_binpack_writer pf_binpack_writer;

/* fd is not closed by the writer.  NULL on allocation failure (errno). */
pf_binpack_writer *pf_binpack_writer_open(int fd, const char *name);

/*
 * Encode one entry: 0, or -1 with the reason in pf_binpack_writer_error.
 * An entry the format cannot hold (a result other than -1, 0, 1, a move
 * that is not legal, a Chess960 castling right, an invalid board; as a
 * stem, a ply above PF_BINPACK_PLY_MAX: a continuation's ply is not
 * stored, so a chain may go past it, as the reader reads it) is refused
 * and nothing is written for it; the writer stays usable.  A write error
 * is kept: every later call returns -1.  Entries are chained exactly as
 * nnue-pytorch's writer chains them, so that game-ordered input gives its
 * bytes; an entry without a move (PF_MOVE_NONE) is written as a stem and
 * ends its chain.
 */
int	 pf_binpack_write(pf_binpack_writer *w, const pf_sfentry *e);
/* Write the last chunk.  0 / -1.  Does not free; later writes fail. */
int	 pf_binpack_writer_close(pf_binpack_writer *w);
const char *pf_binpack_writer_error(const pf_binpack_writer *w);
/* 1 once a write failed (every later call fails too); 0 while a -1 from
   pf_binpack_write is a refused entry, the writer still usable. */
int	 pf_binpack_writer_failed(const pf_binpack_writer *w);
uint64_t pf_binpack_writer_entries(const pf_binpack_writer *w);
/* Bytes written to fd so far (whole chunks). */
uint64_t pf_binpack_writer_bytes(const pf_binpack_writer *w);
/* Frees without writing what is buffered; NULL is a no-op. */
void	 pf_binpack_writer_free(pf_binpack_writer *w);

/* ---- raw codec (used by the reader and writer, other formats, tests) -- */

/*
 * The nnue-pytorch chess library's CompressedPosition: the occupancy
 * (u64 big-endian, bit 0 = a1), then one nibble per occupied square in
 * ascending square order, low nibble first, 16 bytes (unused ones 0):
 * 2 * type + colour for pawn..king (0 white pawn .. 11 black king), and
 * 12 a pawn that has just made a double push (the en passant square is
 * behind it), 13 / 14 a white / black rook with its castling right,
 * 15 the black king with black to move.  Side to move, castling rights and
 * en passant are thus stored; clocks are not.
 *
 * Encode: 0, or -1 (more than 32 pieces, a castling right the format cannot
 * hold) with the reason in err.
 */
int	pf_binpack_pos_encode(const pf_board *b,
	    uint8_t out[PF_BINPACK_POS_SIZE], char *err, size_t errlen);
/*
 * Decode into b (rule50 0, fullmove 1, chess960 0), validated like a FEN
 * (pf_board_validate); an en passant square that allows no legal capture
 * is dropped.  0 or -1 with the reason in err.
 */
int	pf_binpack_pos_decode(pf_board *b,
	    const uint8_t in[PF_BINPACK_POS_SIZE], char *err, size_t errlen);

/*
 * The library's CompressedMove: move type (0 normal, 1 promotion, 2
 * castling as king takes rook, 3 en passant) in bits 14-15, from in 8-13,
 * to in 2-7, promotion piece (0 knight .. 3 queen) in 0-1; 0 is no move.
 * Decoding does not check legality.
 */
uint16_t pf_binpack_move_encode(pf_move m);
pf_move	 pf_binpack_move_decode(uint16_t v);

/*
 * One stem without its chain: encode e into out (0, or -1 with the reason
 * in err, for an entry the format cannot hold); decode into e, validated,
 * with a move that is legal or PF_MOVE_NONE (0 / -1).
 */
int	pf_binpack_stem_encode(const pf_sfentry *e,
	    uint8_t out[PF_BINPACK_STEM_SIZE], char *err, size_t errlen);
int	pf_binpack_stem_decode(pf_sfentry *e,
	    const uint8_t in[PF_BINPACK_STEM_SIZE], char *err, size_t errlen);

#endif
