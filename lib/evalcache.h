/*
 * evalcache.h - the evaluation cache of uci-eval: finished evaluations
 * (their encoded extensions) by a 64-bit key of position, limit and engine
 * setup, so that a duplicate position is searched once.
 *
 * Two stores behind one lookup:
 *   - memory: values held in RAM, at most mem_limit bytes (values plus
 *     bookkeeping); when full, the oldest entries are dropped first.  A
 *     group (pf_evalcache_put_group) is kept whole or not at all (not
 *     when a key of it is in memory already), and dropped whole; the
 *     group of the last hit is not dropped (it goes to the back), so
 *     that a game being read from it is not cut.
 *   - a file (pf_evalcache_open), shared between runs: an append-only log.
 *     Its entries are indexed in memory (about 32 bytes each, not counted
 *     in mem_limit) and read back with pread(2) on a hit.  New results are
 *     appended to the file instead of being kept in RAM.
 *
 * File format (every integer little-endian):
 *   header, 16 bytes: 89 50 46 43 ("\x89PFC"), u16 version (2; a file
 *     of version 1, without groups, becomes 2 before its first group),
 *     u16 reserved (0), u32 header length (16), u32 reserved (0)
 *   entries, each:
 *     0  u32 magic 50 46 43 45 ("PFCE")
 *     4  u32 value length n (<= PF_EVALCACHE_VALUE_MAX)
 *     8  u64 key
 *    16  n bytes value (encoded extensions)
 *  16+n  u64 XXH64 (seed 0) of the bytes 0 .. 16+n-1 of this entry
 *   or groups (the entries of one game, stored all or none), each:
 *     0  u32 magic 50 46 43 47 ("PFCG")
 *     4  u32 count c (2 or more)
 *     8  u64 length L of the entries that follow
 *    16  u64 XXH64 (seed 0) of the bytes 0 .. 15
 *    24  L bytes: c entries as above, but with the magic 50 46 43 49
 *        ("PFCI"), so that one is never taken for an entry of its own
 * Each entry or group is written with one write(2), so a crash mid-write
 * leaves at most one torn one at the end.  Opening the file indexes every
 * entry that checks out (magic, length, checksum), and every group whose
 * header and every entry check out and fill it exactly (a group that does
 * not is not read at all): damaged bytes in the middle are skipped up to
 * the next entry or group that checks out (and stay in the file), and
 * only a tail holding no such entry or group is cut off.  A write that fails
 * (disk full) is taken back out of the file, and the file is then no
 * longer written in this run.  Every hit read from the file is checked
 * again; one that no longer checks out is a miss.  A later entry for a
 * key replaces an earlier one.  The file is locked with flock(2) while
 * open: one process at a time.
 *
 * Nothing here prints or exits.
 */
#ifndef PF_EVALCACHE_H
#define PF_EVALCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ext.h"

#define PF_EVALCACHE_VALUE_MAX	(1u << 24)

typedef struct pf_evalcache pf_evalcache;

/* A cache keeping at most mem_limit bytes in memory (0: no memory store).
   NULL on allocation failure. */
pf_evalcache *pf_evalcache_new(size_t mem_limit);
/*
 * Open (creating it if needed) and lock the cache file and index its
 * entries.  0, or -1 with the reason in pf_evalcache_error (cannot open,
 * in use by another process, not a cache file, I/O error).
 * pf_evalcache_dropped() then tells how many damaged bytes were left out
 * in all, pf_evalcache_skipped() how many of them lay before a good entry
 * (the rest was a tail, cut off).
 */
int	pf_evalcache_open(pf_evalcache *c, const char *path);
/* 1: hit, the value appended to out; 0: miss; -1: read error. */
int	pf_evalcache_get(pf_evalcache *c, uint64_t key, pf_extbuf *out);
/* Store a value (to the file if one is open and writable, else to
   memory).  0 / -1 (write error or out of memory; the cache stays usable:
   after a write error values go to memory). */
int	pf_evalcache_put(pf_evalcache *c, uint64_t key, const uint8_t *val,
	    size_t len);
/* Store values that stand or fall together (a game's): in the file as one
   group, which a crash leaves whole or not at all.  0 / -1 as put. */
typedef struct pf_evalcache_item {
	uint64_t key;
	const uint8_t *val;
	size_t len;
} pf_evalcache_item;
int	pf_evalcache_put_group(pf_evalcache *c, const pf_evalcache_item *items,
	    size_t count);
const char *pf_evalcache_error(const pf_evalcache *c);
uint64_t pf_evalcache_loaded(const pf_evalcache *c);	/* entries from file */
uint64_t pf_evalcache_dropped(const pf_evalcache *c);	/* bad bytes, all */
uint64_t pf_evalcache_skipped(const pf_evalcache *c);	/* ... mid-file */
uint64_t pf_evalcache_bad(const pf_evalcache *c);	/* bad hits read */
uint64_t pf_evalcache_entries(const pf_evalcache *c);
void	pf_evalcache_free(pf_evalcache *c);

/* The key: XXH64 of the fields, little-endian. */
uint64_t pf_evalcache_key(uint64_t board_hash, uint8_t limit_kind,
	    uint64_t limit, uint16_t multipv, uint8_t keep_depths,
	    uint64_t setup);

#endif
