/*
 * evalcache.c - memory and file evaluation cache (evalcache.h).
 *
 * The index is one open-addressing table with linear probing and
 * backward-shift deletion (no tombstones).  Memory entries also sit in a
 * FIFO ring so the oldest can be dropped when mem_limit is reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "evalcache.h"
#include "record.h"

#define ENTRY_HEAD	16
#define ENTRY_TAIL	8
#define MEM_OVERHEAD	48	/* bookkeeping charged per memory entry */

static const uint8_t file_magic[4] = { 0x89, 'P', 'F', 'C' };
static const uint8_t entry_magic[4] = { 'P', 'F', 'C', 'E' };
static const uint8_t group_magic[4] = { 'P', 'F', 'C', 'G' };
static const uint8_t inner_magic[4] = { 'P', 'F', 'C', 'I' };

#define GROUP_HEAD	24

typedef struct slot {
	uint64_t key;		/* 0: empty */
	uint64_t off;		/* file offset of the value */
	uint8_t *mem;		/* memory value, or NULL for a file entry */
	uint32_t len;
	uint32_t grp;		/* memory: its group, or 0 */
} slot;

struct pf_evalcache {
	slot *tab;
	size_t mask, used;
	size_t mem_limit, mem_used;
	uint64_t *fifo;		/* keys of memory entries, oldest first */
	uint32_t *fifo_grp;	/* and their groups */
	size_t fifo_head, fifo_len, fifo_cap;
	uint32_t grp_seq;	/* the last group numbered */
	uint32_t pinned;	/* the group of the last memory hit */
	int fd;
	int nowrite;		/* a write failed: new values go to memory */
	uint64_t end;		/* file size: where the next entry goes */
	uint8_t *rbuf;		/* one whole entry read back */
	size_t rcap;
	uint64_t loaded, dropped, skipped, bad;
	int version;		/* the header's: 2 once it holds a group */
	char *path;
	char err[256];
};

pf_evalcache *
pf_evalcache_new(size_t mem_limit)
{
	pf_evalcache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->mask = 1023;
	if ((c->tab = calloc(c->mask + 1, sizeof(slot))) == NULL) {
		free(c);
		return NULL;
	}
	c->mem_limit = mem_limit;
	c->fd = -1;
	return c;
}

static uint64_t
fix_key(uint64_t k)
{
	return k ? k : 1;
}

static slot *
find(pf_evalcache *c, uint64_t key)
{
	size_t i = (size_t)key & c->mask;

	while (c->tab[i].key != 0) {
		if (c->tab[i].key == key)
			return &c->tab[i];
		i = (i + 1) & c->mask;
	}
	return NULL;
}

static int
grow(pf_evalcache *c)
{
	size_t ncap = (c->mask + 1) * 2, nmask = ncap - 1;
	slot *nt = calloc(ncap, sizeof(slot));

	if (nt == NULL)
		return -1;
	for (size_t i = 0; i <= c->mask; i++) {
		if (c->tab[i].key == 0)
			continue;
		size_t j = (size_t)c->tab[i].key & nmask;
		while (nt[j].key != 0)
			j = (j + 1) & nmask;
		nt[j] = c->tab[i];
	}
	free(c->tab);
	c->tab = nt;
	c->mask = nmask;
	return 0;
}

/* The slot for key, created empty (key set, no value) if missing. */
static slot *
insert(pf_evalcache *c, uint64_t key)
{
	size_t i;

	if ((c->used + 1) * 4 > (c->mask + 1) * 3 && grow(c) == -1)
		return NULL;
	i = (size_t)key & c->mask;
	while (c->tab[i].key != 0) {
		if (c->tab[i].key == key)
			return &c->tab[i];
		i = (i + 1) & c->mask;
	}
	c->tab[i].key = key;
	c->tab[i].mem = NULL;
	c->tab[i].len = 0;
	c->tab[i].off = 0;
	c->used++;
	return &c->tab[i];
}

static void
delete(pf_evalcache *c, slot *s)
{
	size_t i = (size_t)(s - c->tab), j = i;

	free(s->mem);
	for (;;) {
		j = (j + 1) & c->mask;
		if (c->tab[j].key == 0)
			break;
		size_t home = (size_t)c->tab[j].key & c->mask;
		/* Move j back to i unless its home lies in (i, j]. */
		if ((i <= j) ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		c->tab[i] = c->tab[j];
		i = j;
	}
	memset(&c->tab[i], 0, sizeof(slot));
	c->used--;
}

static void
release_mem(pf_evalcache *c, slot *s)
{
	if (s->mem) {
		c->mem_used -= s->len + MEM_OVERHEAD;
		free(s->mem);
		s->mem = NULL;
	}
}

static int
fifo_push(pf_evalcache *c, uint64_t key, uint32_t grp)
{
	if (c->fifo_len == c->fifo_cap) {
		size_t ncap = c->fifo_cap ? c->fifo_cap * 2 : 1024;
		uint64_t *nf = malloc(ncap * sizeof(*nf));
		uint32_t *ng = malloc(ncap * sizeof(*ng));

		if (nf == NULL || ng == NULL) {
			free(nf);
			free(ng);
			return -1;
		}
		for (size_t i = 0; i < c->fifo_len; i++) {
			nf[i] = c->fifo[(c->fifo_head + i) % c->fifo_cap];
			ng[i] = c->fifo_grp[(c->fifo_head + i) % c->fifo_cap];
		}
		free(c->fifo);
		free(c->fifo_grp);
		c->fifo = nf;
		c->fifo_grp = ng;
		c->fifo_cap = ncap;
		c->fifo_head = 0;
	}
	c->fifo[(c->fifo_head + c->fifo_len) % c->fifo_cap] = key;
	c->fifo_grp[(c->fifo_head + c->fifo_len++) % c->fifo_cap] = grp;
	return 0;
}

/*
 * Drop memory entries, oldest first, until need more bytes fit: a
 * group's entries all go (each is dropped as it comes to the front, and
 * a group is dropped from its first), except the pinned group's, which
 * go to the back.
 */
static void
evict(pf_evalcache *c, size_t need)
{
	size_t spins = 0;
	uint32_t going = 0;	/* the group being dropped */

	while (c->fifo_len > 0) {
		uint64_t k = c->fifo[c->fifo_head];
		uint32_t g = c->fifo_grp[c->fifo_head];
		slot *s;

		if (c->mem_used + need <= c->mem_limit &&
		    (going == 0 || g != going))
			break;
		c->fifo_head = (c->fifo_head + 1) % c->fifo_cap;
		c->fifo_len--;
		if (g != 0 && g == c->pinned) {
			/* (room for it: one was just taken) */
			(void)fifo_push(c, k, g);
			if (++spins > c->fifo_len)
				break;	/* only the pinned group is left */
			continue;
		}
		spins = 0;
		going = g;
		if ((s = find(c, k)) != NULL && s->mem != NULL &&
		    s->grp == g) {
			release_mem(c, s);
			delete(c, s);
		}
	}
}

static int
read_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done,
		    (off_t)(off + done));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		done += (size_t)n;
	}
	return 1;
}

/*
 * Whether a whole, verified entry with this magic (entry_magic, or
 * inner_magic within a group) starts at off of a file of size bytes:
 * 1 (then it is in c->rbuf, its value length in *np and key in *keyp),
 * 0 no, -1 read error or out of memory (errno set).
 */
static int
entry_with(pf_evalcache *c, const uint8_t *magic, uint64_t off,
    uint64_t size, uint32_t *np, uint64_t *keyp)
{
	uint8_t eh[ENTRY_HEAD];
	uint32_t n;
	size_t total;
	int r;

	if (off > size || size - off < ENTRY_HEAD + ENTRY_TAIL)
		return 0;
	if ((r = read_full(c->fd, eh, ENTRY_HEAD, off)) != 1)
		return r;
	n = pf_get32(eh + 4);
	if (memcmp(eh, magic, 4) != 0 || n > PF_EVALCACHE_VALUE_MAX ||
	    size - off - ENTRY_HEAD - ENTRY_TAIL < n)
		return 0;
	total = ENTRY_HEAD + (size_t)n + ENTRY_TAIL;
	if (c->rcap < total) {
		uint8_t *nb = realloc(c->rbuf, total);

		if (nb == NULL)
			return -1;
		c->rbuf = nb;
		c->rcap = total;
	}
	if ((r = read_full(c->fd, c->rbuf, total, off)) != 1)
		return r;
	if (XXH64(c->rbuf, ENTRY_HEAD + n, 0) !=
	    pf_get64(c->rbuf + ENTRY_HEAD + n))
		return 0;
	*np = n;
	*keyp = pf_get64(eh + 8);
	return 1;
}

static int
entry_at(pf_evalcache *c, uint64_t off, uint64_t size, uint32_t *np,
    uint64_t *keyp)
{
	return entry_with(c, entry_magic, off, size, np, keyp);
}

/*
 * Whether a whole, verified group starts at off: a header (magic, u32
 * count >= 1, u64 length L, u64 XXH64 of those 16 bytes), then L bytes
 * of exactly count entries with inner_magic, each verified.  1 (with the
 * length of the whole group in *lenp and its entries indexed when index),
 * 0 no, -1 read error or out of memory (errno set).
 */
static int
group_at(pf_evalcache *c, uint64_t off, uint64_t size, uint64_t *lenp,
    int index)
{
	uint8_t gh[GROUP_HEAD];
	uint64_t len, at, end, key;
	uint32_t count, k, n;
	int r;

	if (off > size || size - off < GROUP_HEAD)
		return 0;
	if ((r = read_full(c->fd, gh, GROUP_HEAD, off)) != 1)
		return r;
	count = pf_get32(gh + 4);
	len = pf_get64(gh + 8);
	if (memcmp(gh, group_magic, 4) != 0 || count == 0 ||
	    XXH64(gh, 16, 0) != pf_get64(gh + 16) ||
	    len > size - off - GROUP_HEAD)
		return 0;
	end = off + GROUP_HEAD + len;
	/* every entry checked first: a group is taken whole or not at all */
	for (int pass = 0; pass < 1 + index; pass++) {
		for (at = off + GROUP_HEAD, k = 0; at < end && k < count;
		    k++) {
			if ((r = entry_with(c, inner_magic, at, end, &n,
			    &key)) != 1)
				return r;
			if (pass == 1) {
				slot *s = insert(c, fix_key(key));

				if (s == NULL)
					return -1;
				release_mem(c, s);
				s->off = at + ENTRY_HEAD;
				s->len = n;
				c->loaded++;
			}
			at += ENTRY_HEAD + (uint64_t)n + ENTRY_TAIL;
		}
		if (at != end || k != count)
			return 0;
	}
	*lenp = GROUP_HEAD + len;
	return 1;
}

/*
 * The offset of the first verified entry or group at or after from: 1 and
 * *found, 0 when there is none, -1 read error.  (The entries inside a
 * group have a magic of their own: a damaged group is not found again
 * entry by entry.)
 */
static int
resync(pf_evalcache *c, uint64_t from, uint64_t size, uint64_t *found)
{
	uint8_t buf[16384];
	uint64_t pos = from, key, glen;
	uint32_t n;
	int r;

	while (pos < size && size - pos >= ENTRY_HEAD + ENTRY_TAIL) {
		size_t want = size - pos < sizeof(buf) ?
		    (size_t)(size - pos) : sizeof(buf);

		if ((r = read_full(c->fd, buf, want, pos)) != 1)
			return r;
		for (size_t i = 0; i + 4 <= want; i++) {
			if (buf[i] != 'P' || buf[i + 1] != 'F' ||
			    buf[i + 2] != 'C')
				continue;
			if (buf[i + 3] == entry_magic[3])
				r = entry_at(c, pos + i, size, &n, &key);
			else if (buf[i + 3] == group_magic[3])
				r = group_at(c, pos + i, size, &glen, 0);
			else
				continue;
			if (r == -1)
				return -1;
			if (r == 1) {
				*found = pos + i;
				return 1;
			}
		}
		pos += want - 3;	/* a magic may straddle the edge */
	}
	return 0;
}

int
pf_evalcache_open(pf_evalcache *c, const char *path)
{
	uint8_t head[16];
	struct stat st;
	uint64_t off, size, next, key;
	uint32_t n;
	int r;

	c->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (c->fd == -1) {
		snprintf(c->err, sizeof(c->err), "%s: %s", path,
		    strerror(errno));
		return -1;
	}
	/* One writer: a second one could cut the file under the first. */
	if (flock(c->fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK)
			snprintf(c->err, sizeof(c->err),
			    "%s: in use by another process", path);
		else
			snprintf(c->err, sizeof(c->err), "%s: cannot lock: %s",
			    path, strerror(errno));
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	errno = 0;
	if (fstat(c->fd, &st) == -1)
		goto ioerr;
	size = (uint64_t)st.st_size;
	if (size < 16) {
		/* New, or torn before its header was complete; anything
		   that does not start like a header is someone's file. */
		if (size > 0 && (read_full(c->fd, head, (size_t)size, 0) != 1 ||
		    memcmp(head, file_magic, size < 4 ? (size_t)size : 4)
		    != 0)) {
			snprintf(c->err, sizeof(c->err), "%s: not a posflow "
			    "evaluation cache (version 1 or 2)", path);
			close(c->fd);
			c->fd = -1;
			return -1;
		}
		if (size > 0 && ftruncate(c->fd, 0) == -1)
			goto ioerr;
		memcpy(head, file_magic, 4);
		pf_put16(head + 4, 2);
		pf_put16(head + 6, 0);
		pf_put32(head + 8, 16);
		pf_put32(head + 12, 0);
		if (write(c->fd, head, 16) != 16)
			goto ioerr;
		c->dropped = size;
		c->end = 16;
		c->version = 2;
		goto named;
	}
	if ((r = read_full(c->fd, head, 16, 0)) == -1)
		goto ioerr;
	if (r != 1 || memcmp(head, file_magic, 4) != 0 ||
	    (pf_get16(head + 4) != 1 && pf_get16(head + 4) != 2) ||
	    pf_get32(head + 8) < 16 ||
	    pf_get32(head + 8) > size) {
		snprintf(c->err, sizeof(c->err),
		    "%s: not a posflow evaluation cache (version 1 or 2)",
		    path);
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	c->version = pf_get16(head + 4);
	/*
	 * Index every entry that checks out.  Damaged bytes in the middle
	 * are skipped up to the next entry that checks out (they stay in
	 * the file); only a tail with no such entry is cut off.
	 */
	off = pf_get32(head + 8);
	while (off < size) {
		uint64_t glen;

		if ((r = entry_at(c, off, size, &n, &key)) == -1)
			goto ioerr;
		if (r == 0 && (r = group_at(c, off, size, &glen, 1)) != 0) {
			if (r == -1)
				goto ioerr;
			off += glen;
			continue;
		}
		if (r == 1) {
			slot *s = insert(c, fix_key(key));

			if (s == NULL)
				goto ioerr;
			release_mem(c, s);
			s->off = off + ENTRY_HEAD;
			s->len = n;
			c->loaded++;
			off += ENTRY_HEAD + (uint64_t)n + ENTRY_TAIL;
			continue;
		}
		if ((r = resync(c, off + 1, size, &next)) == -1)
			goto ioerr;
		if (r == 0)
			break;
		c->skipped += next - off;
		off = next;
	}
	c->dropped = c->skipped;
	if (off < size) {
		c->dropped += size - off;
		if (ftruncate(c->fd, (off_t)off) == -1)
			goto ioerr;
	}
	c->end = off;
named:
	free(c->path);
	if ((c->path = strdup(path)) == NULL)
		goto ioerr;
	return 0;
ioerr:
	snprintf(c->err, sizeof(c->err), "%s: %s", path,
	    errno ? strerror(errno) : "read error");
	close(c->fd);
	c->fd = -1;
	return -1;
}

int
pf_evalcache_get(pf_evalcache *c, uint64_t key, pf_extbuf *out)
{
	slot *s = find(c, fix_key(key));
	uint64_t k;
	uint32_t n;
	int r;

	if (s == NULL)
		return 0;
	if (s->mem != NULL) {
		/* a group being read is not dropped for the next */
		if (s->grp != 0)
			c->pinned = s->grp;
		return pf_extbuf_append_raw(out, s->mem, s->len) == 0 ? 1 : -1;
	}
	if (c->fd == -1)
		return 0;
	/* The whole entry, checked again: the file may have changed. */
	errno = 0;
	r = entry_at(c, s->off - ENTRY_HEAD, c->end, &n, &k);
	if (r == 0)
		r = entry_with(c, inner_magic, s->off - ENTRY_HEAD, c->end,
		    &n, &k);
	if (r == -1) {
		snprintf(c->err, sizeof(c->err), "cache read: %s",
		    strerror(errno ? errno : EIO));
		return -1;
	}
	if (r == 0 || n != s->len || fix_key(k) != s->key) {
		c->bad++;
		delete(c, s);
		return 0;
	}
	return pf_extbuf_append_raw(out, c->rbuf + ENTRY_HEAD, n) == 0 ?
	    1 : -1;
}

/*
 * Append total bytes at e to the file with one write(2) (retried after a
 * short one).  0; -1 when it failed (disk full, say): the part written is
 * taken back out, so that no half entry sits in front of later ones, and
 * nothing more is written to the file in this run (values go to memory).
 */
static int
append(pf_evalcache *c, const uint8_t *e, size_t total)
{
	size_t done = 0;
	ssize_t n = 0;

	while (done < total) {
		n = write(c->fd, e + done, total - done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done == total)
		return 0;
	snprintf(c->err, sizeof(c->err), "cache write: %s; no more results "
	    "are written to the cache file", n == -1 ? strerror(errno) :
	    "short write");
	c->nowrite = 1;
	if (done > 0 && ftruncate(c->fd, (off_t)c->end) == -1) {
		size_t l = strlen(c->err);

		snprintf(c->err + l, sizeof(c->err) - l,
		    " (and cutting the torn entry: %s)", strerror(errno));
	}
	return -1;
}

/* An entry with this magic at e (ENTRY_HEAD + len + ENTRY_TAIL bytes). */
static void
entry_fill(uint8_t *e, const uint8_t *magic, uint64_t key,
    const uint8_t *val, size_t len)
{
	memcpy(e, magic, 4);
	pf_put32(e + 4, (uint32_t)len);
	pf_put64(e + 8, key);
	memcpy(e + ENTRY_HEAD, val, len);
	pf_put64(e + ENTRY_HEAD + len, XXH64(e, ENTRY_HEAD + len, 0));
}

/* Index a value written at off (the entry's start). */
static int
index_file(pf_evalcache *c, uint64_t key, uint64_t off, size_t len)
{
	slot *s;

	if ((s = insert(c, key)) == NULL)
		return -1;
	release_mem(c, s);
	s->off = off + ENTRY_HEAD;
	s->len = (uint32_t)len;
	return 0;
}

/* Store a value in memory (of group grp, or 0), if it fits and the key
   has none; room is made first unless grp (the group's is made). */
static int
put_mem(pf_evalcache *c, uint64_t key, const uint8_t *val, size_t len,
    uint32_t grp)
{
	slot *s;

	if (len + MEM_OVERHEAD > c->mem_limit)
		return 0;
	if ((s = find(c, key)) != NULL)
		return 0;	/* already there */
	if (grp == 0)
		evict(c, len + MEM_OVERHEAD);
	if ((s = insert(c, key)) == NULL)
		return -1;
	s->grp = grp;
	if ((s->mem = malloc(len ? len : 1)) == NULL ||
	    fifo_push(c, key, grp) == -1) {
		free(s->mem);
		s->mem = NULL;
		delete(c, s);
		return -1;
	}
	memcpy(s->mem, val, len);
	s->len = (uint32_t)len;
	c->mem_used += len + MEM_OVERHEAD;
	return 0;
}

int
pf_evalcache_put(pf_evalcache *c, uint64_t key, const uint8_t *val,
    size_t len)
{
	int rc = 0;

	key = fix_key(key);
	if (len > PF_EVALCACHE_VALUE_MAX)
		return 0;
	if (c->fd != -1 && !c->nowrite) {
		size_t total = ENTRY_HEAD + len + ENTRY_TAIL;
		uint8_t *e = malloc(total);

		if (e == NULL)
			return -1;
		entry_fill(e, entry_magic, key, val, len);
		rc = append(c, e, total);
		free(e);
		if (rc == 0) {
			if (index_file(c, key, c->end, len) == -1)
				return -1;
			c->end += total;
			return 0;
		}
	}
	return put_mem(c, key, val, len, 0) == -1 ? -1 : rc;
}

/*
 * A file of version 1 becomes version 2 before its first group: a reader
 * of version 1 alone would take a group for damage, and cut one at the
 * end off.  (The file is open with O_APPEND, which pwrite(2) obeys on
 * Linux: the header is written through a descriptor of its own.)
 */
static int
to_version2(pf_evalcache *c)
{
	uint8_t v[2];
	int fd, ok;

	if (c->version >= 2)
		return 0;
	pf_put16(v, 2);
	if ((fd = open(c->path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	ok = pwrite(fd, v, 2, 4) == 2;
	if (close(fd) == -1 || !ok)
		return -1;
	c->version = 2;
	return 0;
}

int
pf_evalcache_put_group(pf_evalcache *c, const pf_evalcache_item *items,
    size_t count)
{
	size_t total = GROUP_HEAD, at, i;
	uint8_t *g;
	int rc = 0;

	if (count == 1)
		return pf_evalcache_put(c, items[0].key, items[0].val,
		    items[0].len);
	for (i = 0; i < count; i++)
		if (items[i].len > PF_EVALCACHE_VALUE_MAX)
			return 0;	/* (as put: such a value is not kept) */
	if (count > 0 && c->fd != -1 && !c->nowrite && to_version2(c) == -1) {
		snprintf(c->err, sizeof(c->err), "cache header: %s; no more "
		    "results are written to the cache file", strerror(errno));
		c->nowrite = 1;
		rc = -1;
	}
	if (count > 0 && c->fd != -1 && !c->nowrite) {
		for (i = 0; i < count; i++)
			total += ENTRY_HEAD + items[i].len + ENTRY_TAIL;
		if (count > UINT32_MAX || (g = malloc(total)) == NULL) {
			snprintf(c->err, sizeof(c->err), "cache group: %s",
			    strerror(ENOMEM));
			return -1;
		}
		memcpy(g, group_magic, 4);
		pf_put32(g + 4, (uint32_t)count);
		pf_put64(g + 8, (uint64_t)(total - GROUP_HEAD));
		pf_put64(g + 16, XXH64(g, 16, 0));
		for (i = 0, at = GROUP_HEAD; i < count; i++) {
			entry_fill(g + at, inner_magic, fix_key(items[i].key),
			    items[i].val, items[i].len);
			at += ENTRY_HEAD + items[i].len + ENTRY_TAIL;
		}
		rc = append(c, g, total);
		free(g);
		if (rc == 0) {
			for (i = 0, at = GROUP_HEAD; i < count; i++) {
				if (index_file(c, fix_key(items[i].key),
				    c->end + at, items[i].len) == -1)
					return -1;
				at += ENTRY_HEAD + items[i].len + ENTRY_TAIL;
			}
			c->end += total;
			return 0;
		}
	}
	/* in memory: the whole group, or none of it; none when a key of it
	   is in memory already (another group's, or an entry of its own,
	   dropped apart from this group) */
	for (i = 0, total = 0; i < count; i++) {
		slot *s = find(c, fix_key(items[i].key));

		if (s != NULL && s->mem != NULL)
			return rc;
		total += items[i].len + MEM_OVERHEAD;
	}
	if (count == 0 || total > c->mem_limit)
		return rc;
	evict(c, total);
	if (c->mem_used + total > c->mem_limit)
		return rc;	/* the pinned group takes the room */
	if (++c->grp_seq == 0)
		c->grp_seq = 1;
	for (i = 0; i < count; i++)
		if (put_mem(c, fix_key(items[i].key), items[i].val,
		    items[i].len, c->grp_seq) == -1)
			return -1;
	return rc;
}

const char *
pf_evalcache_error(const pf_evalcache *c)
{
	return c->err;
}

uint64_t
pf_evalcache_loaded(const pf_evalcache *c)
{
	return c->loaded;
}

uint64_t
pf_evalcache_dropped(const pf_evalcache *c)
{
	return c->dropped;
}

uint64_t
pf_evalcache_skipped(const pf_evalcache *c)
{
	return c->skipped;
}

uint64_t
pf_evalcache_bad(const pf_evalcache *c)
{
	return c->bad;
}

uint64_t
pf_evalcache_entries(const pf_evalcache *c)
{
	return c->used;
}

void
pf_evalcache_free(pf_evalcache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i <= c->mask; i++)
		free(c->tab[i].mem);
	free(c->tab);
	free(c->fifo);
	free(c->fifo_grp);
	free(c->rbuf);
	free(c->path);
	if (c->fd != -1)
		close(c->fd);
	free(c);
}

uint64_t
pf_evalcache_key(uint64_t board_hash, uint8_t limit_kind, uint64_t limit,
    uint16_t multipv, uint8_t keep_depths, uint64_t setup)
{
	uint8_t b[28];

	pf_put64(b, board_hash);
	b[8] = limit_kind;
	pf_put64(b + 9, limit);
	pf_put16(b + 17, multipv);
	b[19] = keep_depths;
	pf_put64(b + 20, setup);
	return XXH64(b, sizeof(b), 0);
}
