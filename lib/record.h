/*
 * record.h - the posflow record stream (specified in posflow(5)).
 *
 * A stream is a 16-byte header followed by blocks; the last block of a
 * stream is an empty "end block".  Streams may be concatenated.  Every
 * integer is little-endian and written byte by byte; no struct is ever
 * written as memory.
 *
 *   stream header (16 bytes)
 *     0  4  magic  89 50 46 53 ("\x89PFS")
 *     4  u16 version (1)
 *     6  u16 flags (PF_SF_*; a reader rejects unknown bits)
 *     8  u32 header length (16; a reader skips bytes past those it knows)
 *    12  u32 reserved (0)
 *
 *   block header (24 bytes), then payload
 *     0  4  magic  89 50 46 42 ("\x89PFB")
 *     4  u32 payload length in bytes (<= PF_BLOCK_MAX)
 *     8  u32 record count
 *    12  u32 reserved (0)
 *    16  u64 checksum of the payload: XXH3-64 (seed 0) in a stream
 *            with PF_SF_XXH3, else XXH64 (seed 0)
 *   A block with payload length 0 and record count 0 is the end block.
 *
 *   record (inside a payload; records never span blocks)
 *     0  u32 record length, this field included (>= PF_CORE_SIZE)
 *     4  28  packed position (chess.h: pf_board_pack)
 *    32  u64 game id
 *    40  u16 ply within the game (0 = the game's first position)
 *    42  u16 move played from this position (pf_move; 0 = none)
 *    44  u8  result (PF_RESULT_*)
 *    45  u8  reserved (0)
 *    46  u16 flags (PF_RF_*; unknown bits are passed through)
 *    48  extensions, to the end of the record
 *
 *   extension
 *     0  u16 type (PF_EXT_*)
 *     2  u16 reserved (0, passed through)
 *     4  u32 payload length
 *     8  payload
 *
 * Nothing here prints or exits: functions return 0 / -1 (or NULL) and the
 * reason is available from pf_reader_error() / pf_writer_error().
 */
#ifndef PF_RECORD_H
#define PF_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chess.h"

#define PF_STREAM_VERSION	1
#define PF_HEADER_SIZE		16
#define PF_BLOCK_HEADER_SIZE	24
#define PF_CORE_SIZE		48
#define PF_EXT_HEADER_SIZE	8
#define PF_BLOCK_MAX		(64u << 20)	/* largest payload accepted */
#define PF_BLOCK_TARGET		(64u << 10)	/* writer's default block */

/* Stream header flags. */
#define PF_SF_XXH3		0x0001	/* block checksums are XXH3-64 */
#define PF_SF_KNOWN		PF_SF_XXH3
/* What the writer sets. */
#define PF_SF_WRITE		PF_SF_XXH3

/* The checksum of a block payload p[0..n) in a stream with these header
   flags (posflow(5)). */
uint64_t pf_block_checksum(unsigned flags, const void *p, size_t n);

enum {
	PF_RESULT_UNKNOWN = 0,
	PF_RESULT_WHITE = 1,	/* 1-0 */
	PF_RESULT_BLACK = 2,	/* 0-1 */
	PF_RESULT_DRAW = 3	/* 1/2-1/2 */
};

/* Record flags. */
#define PF_RF_CHECK		0x0001	/* side to move is in check */
#define PF_RF_MATE		0x0002	/* side to move is checkmated */
#define PF_RF_STALEMATE		0x0004
#define PF_RF_CHESS960		0x0008	/* Chess960 rules / move text */
#define PF_RF_LAST		0x0010	/* last position of its game */
#define PF_RF_TRUNCATED		0x0020	/* game ended early: bad move text */
#define PF_RF_EVAL_FAILED	0x0040	/* an engine could not evaluate it */
#define PF_RF_INSUFFICIENT	0x0080	/* insufficient mating material */

/*
 * A record.  The core fields are decoded; the extension area is handed out
 * as encoded bytes.  From pf_reader_next(), ext points into the reader's
 * block buffer and stays valid until the next call on that reader.
 */
typedef struct pf_record {
	uint8_t pos[PF_PACKED_SIZE];
	uint64_t game_id;
	uint16_t ply;
	pf_move move;
	uint8_t result;
	uint16_t flags;
	const uint8_t *ext;
	uint32_t ext_len;
} pf_record;

/* ---- reading ---------------------------------------------------------- */

typedef struct pf_reader pf_reader;

/*
 * Open a reader on fd (not closed by the reader) or on a path ("-" is
 * stdin; the file is closed by pf_reader_free).  name is used in error
 * messages.  zstd- and gzip-compressed streams are detected from their
 * magic numbers.  NULL on allocation failure or (path) open failure, with
 * errno set.
 */
pf_reader	*pf_reader_open_fd(int fd, const char *name);
pf_reader	*pf_reader_open_path(const char *path);

/*
 * Next record: 1 and *rec filled, 0 at the end of input, -1 on an error
 * (pf_reader_error says what, with byte offset, block and record number).
 * After -1 the caller may call again: the reader goes on with the next
 * readable data where it can (a block with a bad checksum is skipped whole;
 * after a damaged block header it searches for the next block magic and
 * resumes there; when nothing more can be read the next call returns 0).  Records of a truncated block that are complete before
 * the cut are returned before the error.  An input that ends without an
 * end block is reported as truncated.  Empty input is a valid empty stream.
 */
int		 pf_reader_next(pf_reader *r, pf_record *rec);
const char	*pf_reader_error(const pf_reader *r);	/* valid until next call */
const char	*pf_reader_name(const pf_reader *r);
uint64_t	 pf_reader_records(const pf_reader *r);	/* records returned so far */
/* The number of the record last returned, counted from 1 across the whole
   input, the records of skipped blocks included (posflow(5), Errors): the
   number its messages give it. */
uint64_t	 pf_reader_recno(const pf_reader *r);
uint64_t	 pf_reader_offset(const pf_reader *r);	/* bytes consumed (decompressed) */
/* How far into its input the reader is, in the input's own bytes (a
   compressed file's compressed ones, as its size counts them), for a
   progress report: the bytes read less those not yet decoded, in the
   share of the decoded ones consumed.  pf_reader_offset when the input is
   no file. */
uint64_t	 pf_reader_position(const pf_reader *r);

/*
 * 1 when the next pf_reader_next call returns without reading (the current
 * block still holds records, or the next block is already read whole),
 * else 0.  A tool that polls its
 * input descriptor uses it: records already read into the reader do not
 * make the descriptor readable.
 */
int		 pf_reader_buffered(const pf_reader *r);

/*
 * A pipeline stage must pass records on as soon as it has them: before the
 * reader blocks waiting for more input it calls pf_writer_flush(w) if w has
 * buffered records.  NULL disables.
 */
struct pf_writer;
void		 pf_reader_set_flush(pf_reader *r, struct pf_writer *w);
/*
 * fn(arg, fd) runs before a read of fd that would block (the input has
 * nothing at hand): a tool hands on what it holds, or waits on other work
 * too (its engines) until fd has more.  fn returns 0 to go on reading, or
 * -1 to stop: pf_reader_next then returns -1 with the error
 * "interrupted".
 */
void		 pf_reader_set_idle(pf_reader *r, int (*fn)(void *, int),
		    void *arg);
void		 pf_reader_free(pf_reader *r);

/* ---- writing ---------------------------------------------------------- */

typedef struct pf_writer pf_writer;

typedef struct pf_writer_opts {
	int zstd_level;		/* 0: no compression, else zstd level 1..19 */
	size_t block_size;	/* payload target, 0 = PF_BLOCK_TARGET */
	int flush_ms;		/* flush a partial block this long after its
				   first record when pf_writer_put or
				   pf_writer_tick is called; 0 = 200 ms,
				   <0 never */
	int zstd_workers;	/* compressed, to a regular file: >0 has
				   zstd compress in this many threads of its
				   own, beside the caller's work, and the
				   blocks go into the frame unflushed (the
				   bytes are the same for any number > 0);
				   0, or on a pipe: in the caller's thread,
				   each block flushed as it is written */
} pf_writer_opts;

/*
 * fd is not closed by the writer.  opts may be NULL for defaults.  On a
 * regular file the stream header is written at once, so that the file of
 * a run that dies before its end block never reads as a complete (empty)
 * stream; if that write fails, the next call returns the error.  NULL only
 * on allocation failure or a bad zstd level (errno set).
 */
pf_writer	*pf_writer_open_fd(int fd, const char *name,
		    const pf_writer_opts *opts);
/* Encode and buffer one record; its ext bytes are copied. 0 / -1. */
int		 pf_writer_put(pf_writer *w, const pf_record *rec);
/*
 * The same for rec with tail[0..tail_len) after its ext bytes (more
 * extensions), without joining them first: the record, the bytes and the
 * checks are those of pf_writer_put() of the joined record.  0 / -1.
 */
int		 pf_writer_put_tail(pf_writer *w, const pf_record *rec,
		    const uint8_t *tail, size_t tail_len);
/*
 * Records encoded in place, for a writer of many records a call
 * (pgn2pos): pf_writer_room returns the free space at the end of the
 * current block, with room for at least min bytes (the block is written
 * out first if it has less), and in *avail how many bytes may go there
 * (up to the block's target, as pf_writer_put fills it; min at least);
 * NULL on error.  The caller encodes whole records there, each as
 * pf_record_encode does and its ext a well-formed chain (nothing here
 * checks them: pf_writer_put is the checked way), then counts them in,
 * n records of len bytes in all, with pf_writer_advance before any other
 * call on w: 0 / -1.
 */
uint8_t		*pf_writer_room(pf_writer *w, size_t min, size_t *avail);
int		 pf_writer_advance(pf_writer *w, size_t len, uint32_t n);
/* Write the partial block now and flush the zstd frame (with zstd
   workers, once they have compressed all before it).  0 / -1. */
int		 pf_writer_flush(pf_writer *w);
/* Flush if the oldest buffered record waited flush_ms or more. 0 / -1. */
int		 pf_writer_tick(pf_writer *w);
/* Records buffered and not yet written. */
size_t		 pf_writer_pending(const pf_writer *w);
/* Write the end block, flush, end the zstd frame.  0 / -1.  Does not free. */
int		 pf_writer_close(pf_writer *w);
const char	*pf_writer_error(const pf_writer *w);
uint64_t	 pf_writer_records(const pf_writer *w);
/* 1 if the last error was a closed pipe (EPIPE): end quietly. */
int		 pf_writer_broken_pipe(const pf_writer *w);
void		 pf_writer_free(pf_writer *w);

/* ---- raw codec (used by the reader and writer, and by tests) ---------- */

/*
 * Decode one record from buf[0..len).  Returns its length, or -1 with the
 * reason in err (length field out of range, extension running past the
 * record end).  rec->ext points into buf.
 */
long	pf_record_decode(const uint8_t *buf, size_t len, pf_record *rec,
	    char *err, size_t errlen);

/*
 * Little-endian helpers, used by every encoder and decoder.  On a
 * little-endian host they are plain (unaligned) loads and stores, which
 * compilers do not always make of the byte-by-byte form.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline void pf_put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void pf_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void pf_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t pf_get16(const uint8_t *p)
{ uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t pf_get32(const uint8_t *p)
{ uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t pf_get64(const uint8_t *p)
{ uint64_t v; memcpy(&v, p, 8); return v; }
#else
static inline void pf_put16(uint8_t *p, uint16_t v)
{ p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void pf_put32(uint8_t *p, uint32_t v)
{ pf_put16(p, (uint16_t)v); pf_put16(p + 2, (uint16_t)(v >> 16)); }
static inline void pf_put64(uint8_t *p, uint64_t v)
{ pf_put32(p, (uint32_t)v); pf_put32(p + 4, (uint32_t)(v >> 32)); }
static inline uint16_t pf_get16(const uint8_t *p)
{ return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t pf_get32(const uint8_t *p)
{ return (uint32_t)pf_get16(p) | (uint32_t)pf_get16(p + 2) << 16; }
static inline uint64_t pf_get64(const uint8_t *p)
{ return (uint64_t)pf_get32(p) | (uint64_t)pf_get32(p + 4) << 32; }
#endif

/*
 * Encode rec (core + its ext bytes) into out, in the layout above, with
 * the packed position read from pos (rec->pos is not read); returns bytes
 * written, which is PF_CORE_SIZE + rec->ext_len.  out must be large
 * enough.  Inline, and the position from where the caller has it: a copy
 * into rec->pos read back at once can stall the CPU (two stores that
 * cannot be forwarded to the one load of the encoding).
 */
static inline size_t
pf_record_encode_pos(const pf_record *rec, const uint8_t *pos, uint8_t *out)
{
	/* Every field read before the first store: a store through out may
	   alias rec, and would make the compiler read them again. */
	uint32_t elen = rec->ext_len, len = PF_CORE_SIZE + elen;
	uint64_t id = rec->game_id;
	uint16_t ply = rec->ply, move = rec->move, flags = rec->flags;
	uint8_t result = rec->result;
	const uint8_t *ext = rec->ext;

	memcpy(out + 4, pos, PF_PACKED_SIZE);
	pf_put32(out, len);
	pf_put64(out + 32, id);
	pf_put16(out + 40, ply);
	pf_put16(out + 42, move);
	out[44] = result;
	out[45] = 0;
	pf_put16(out + 46, flags);
	if (elen > 0)
		memcpy(out + PF_CORE_SIZE, ext, elen);
	return len;
}

/* pf_record_encode_pos with rec's own position. */
static inline size_t
pf_record_encode(const pf_record *rec, uint8_t *out)
{
	return pf_record_encode_pos(rec, rec->pos, out);
}

#endif
