/*
 * evalcache.c - libFuzzer target: the evaluation cache file of uci-eval
 * (lib/evalcache.c), and its memory store.
 *
 * Input: one control byte, then the file.  With bit 0 of the control byte
 * every entry found (walking from the header, scanning byte by byte over
 * anything else) first gets a valid checksum, so that mutations reach
 * past it.  The file is opened as a cache, then a reference written here
 * from the format in evalcache.h says what it must hold:
 *   - the file is refused exactly when it is not a cache file (and with a
 *     reason), and otherwise the counts (loaded, dropped, skipped,
 *     entries) are the reference's;
 *   - every key of an entry that checks out is a hit whose value is that
 *     of the last such entry for the key; other keys miss;
 *   - groups (a game's entries, all or none) are read the same way: a
 *     group whose header or any entry does not check out is not read;
 *   - values put now, one by one and as a group, read back as put, and
 *     after closing and opening the file again every entry, old and new,
 *     still does (the damaged tail cut off at open must not eat the new
 *     ones);
 *   - the memory store (no file, a small limit): a hit is always a value
 *     that was put for that key.
 * Keys 0 and 1 are one key in the library (fix_key); the reference does
 * the same.
 */
#include <xxhash.h>

#include "fuzz.h"
#include "evalcache.h"

#define MAXREF	4096

struct ref {
	long nkeys;
	uint64_t key[MAXREF];
	const uint8_t *val[MAXREF];
	uint32_t len[MAXREF];
	uint64_t loaded, dropped, skipped;
};

static uint64_t
fix_key(uint64_t k)
{
	return k ? k : 1;
}

/* Does a whole entry with this magic that checks out start at p[off], in
   n bytes?  Its value length then in *len. */
static int
entry_magic_ok(const uint8_t *p, size_t n, size_t off, uint32_t *len,
    const char *magic)
{
	uint32_t v;

	if (off > n || n - off < 24 || memcmp(p + off, magic, 4) != 0)
		return 0;
	v = pf_get32(p + off + 4);
	if (v > PF_EVALCACHE_VALUE_MAX || n - off - 24 < v)
		return 0;
	if (XXH64(p + off, 16 + (size_t)v, 0) != pf_get64(p + off + 16 + v))
		return 0;
	*len = v;
	return 1;
}

static int
entry_ok(const uint8_t *p, size_t n, size_t off, uint32_t *len)
{
	return entry_magic_ok(p, n, off, len, "PFCE");
}

/* Does a whole group that checks out start at p[off]: a header that
   checks out, then exactly its count of inner entries that check out,
   filling its length?  The group's whole length then in *glen. */
static int
group_ok(const uint8_t *p, size_t n, size_t off, size_t *glen)
{
	uint64_t l;
	uint32_t count, k, v;
	size_t at, end;

	if (off > n || n - off < 24 || memcmp(p + off, "PFCG", 4) != 0)
		return 0;
	count = pf_get32(p + off + 4);
	l = pf_get64(p + off + 8);
	if (count == 0 || XXH64(p + off, 16, 0) != pf_get64(p + off + 16) ||
	    l > n - off - 24)
		return 0;
	end = off + 24 + (size_t)l;
	for (at = off + 24, k = 0; at < end && k < count; k++) {
		if (!entry_magic_ok(p, end, at, &v, "PFCI"))
			return 0;
		at += 24 + (size_t)v;
	}
	if (at != end || k != count)
		return 0;
	*glen = 24 + (size_t)l;
	return 1;
}

static void
ref_set(struct ref *r, uint64_t key, const uint8_t *val, uint32_t len)
{
	long i;

	key = fix_key(key);
	for (i = 0; i < r->nkeys; i++)
		if (r->key[i] == key)
			break;
	if (i == r->nkeys) {
		FUZZ_CHECK(r->nkeys < MAXREF);
		r->nkeys++;
	}
	r->key[i] = key;
	r->val[i] = val;
	r->len[i] = len;
}

/* The format of evalcache.h, read the simple way: 0 or -1 (not a cache
   file).  The header checks are the documented ones. */
static int
ref_open(struct ref *r, const uint8_t *p, size_t n)
{
	size_t off;
	uint32_t len;

	memset(r, 0, sizeof(*r));
	if (n < 16) {
		if (n > 0 && memcmp(p, "\x89PFC", n < 4 ? n : 4) != 0)
			return -1;
		r->dropped = n;	/* a torn header is started again */
		return 0;
	}
	if (memcmp(p, "\x89PFC", 4) != 0 || (pf_get16(p + 4) != 1 &&
	    pf_get16(p + 4) != 2) ||
	    pf_get32(p + 8) < 16 || pf_get32(p + 8) > n)
		return -1;
	off = pf_get32(p + 8);
	while (off < n) {
		size_t next, glen, at;

		if (entry_ok(p, n, off, &len)) {
			ref_set(r, pf_get64(p + off + 8), p + off + 16, len);
			r->loaded++;
			off += 24 + (size_t)len;
			continue;
		}
		if (group_ok(p, n, off, &glen)) {
			for (at = off + 24; at < off + glen;
			    at += 24 + (size_t)len) {
				len = pf_get32(p + at + 4);
				ref_set(r, pf_get64(p + at + 8), p + at + 16,
				    len);
				r->loaded++;
			}
			off += glen;
			continue;
		}
		for (next = off + 1; next < n; next++)
			if (entry_ok(p, n, next, &len) ||
			    group_ok(p, n, next, &glen))
				break;
		if (next >= n)
			break;
		r->skipped += next - off;
		off = next;
	}
	r->dropped = r->skipped + (n - off);
	return 0;
}

/* Every key of r hits with its value; keys near them miss. */
static void
ref_check(const struct ref *r, pf_evalcache *c)
{
	static pf_extbuf out;
	long i, j;

	FUZZ_CHECK(pf_evalcache_entries(c) == (uint64_t)r->nkeys);
	for (i = 0; i < r->nkeys; i++) {
		uint64_t other = r->key[i] ^ 0x8000000000000000ULL;

		pf_extbuf_reset(&out);
		FUZZ_CHECK(pf_evalcache_get(c, r->key[i], &out) == 1);
		FUZZ_CHECK(out.len == r->len[i] && (out.len == 0 ||
		    memcmp(out.data, r->val[i], out.len) == 0));
		for (j = 0; j < r->nkeys; j++)
			if (r->key[j] == fix_key(other))
				break;
		if (j == r->nkeys)
			FUZZ_CHECK(pf_evalcache_get(c, other, &out) == 0);
	}
}

/* Fix every entry's checksum (control bit 0). */
static void
fix_entries(uint8_t *p, size_t n)
{
	size_t off = 16;
	uint32_t v;

	if (n >= 16 && pf_get32(p + 8) >= 16 && pf_get32(p + 8) <= n)
		off = pf_get32(p + 8);
	while (off < n && n - off >= 24) {
		if ((memcmp(p + off, "PFCE", 4) == 0 ||
		    memcmp(p + off, "PFCI", 4) == 0) &&
		    (v = pf_get32(p + off + 4)) <= n - off - 24) {
			pf_put64(p + off + 16 + v,
			    XXH64(p + off, 16 + (size_t)v, 0));
			off += 24 + (size_t)v;
		} else if (memcmp(p + off, "PFCG", 4) == 0) {
			/* the header; its entries follow */
			pf_put64(p + off + 16, XXH64(p + off, 16, 0));
			off += 24;
		} else
			off++;
	}
}

/*
 * The memory store: values put under keys from the input with a small
 * limit, so that old ones are dropped.  A hit is a value put for that key
 * (the first one still held: the memory store keeps what it has).
 */
static void
check_memory(const uint8_t *p, size_t n)
{
	static pf_extbuf out;
	pf_evalcache *c = pf_evalcache_new(400);
	uint64_t keys[16];
	size_t i, j, k = 0;

	FUZZ_CHECK(c != NULL);
	for (i = 0; i + 2 <= n && k < 16; i += 2, k++) {
		size_t len = p[i + 1] % 64;

		keys[k] = fix_key(p[i] % 8);
		if (len > n - i)
			len = n - i;
		FUZZ_CHECK(pf_evalcache_put(c, keys[k], p + i, len) == 0);
		/* It fits the limit, so it (or an older value for the key)
		   is held now. */
		pf_extbuf_reset(&out);
		FUZZ_CHECK(pf_evalcache_get(c, keys[k], &out) == 1);
		for (j = 0; j <= k; j++) {
			size_t m, ok = 0;
			int rc;

			pf_extbuf_reset(&out);
			rc = pf_evalcache_get(c, keys[j], &out);
			FUZZ_CHECK(rc == 0 || rc == 1);
			if (rc == 0)
				continue;
			for (m = 0; m <= k && !ok; m++) {
				size_t lm = p[2 * m + 1] % 64;

				if (lm > n - 2 * m)
					lm = n - 2 * m;
				ok = keys[m] == keys[j] && out.len == lm &&
				    (lm == 0 || memcmp(out.data, p + 2 * m,
				    lm) == 0);
			}
			FUZZ_CHECK(ok);
		}
	}
	pf_evalcache_free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref ref, ref2;
	uint8_t *file, *file2 = NULL;
	const char *path;
	pf_evalcache *c;
	size_t n, i;
	int rc, rrc;

	if (size < 1)
		return 0;
	n = size - 1;
	if ((file = malloc(n + 1)) == NULL)
		return 0;
	memcpy(file, data + 1, n);
	if (data[0] & 1)
		fix_entries(file, n);
	path = fuzz_scratch_write(file, n);
	rrc = ref_open(&ref, file, n);

	FUZZ_CHECK((c = pf_evalcache_new(1 << 16)) != NULL);
	rc = pf_evalcache_open(c, path);
	if (rc != rrc) {
		fprintf(stderr, "open %d (%s), reference %d\n", rc,
		    rc ? pf_evalcache_error(c) : "", rrc);
		FUZZ_CHECK(!"the file is refused exactly when the reference "
		    "refuses it");
	}
	if (rc != 0) {
		FUZZ_CHECK(pf_evalcache_error(c)[0] != '\0');
		pf_evalcache_free(c);
		goto memory;
	}
	FUZZ_CHECK(pf_evalcache_loaded(c) == ref.loaded);
	FUZZ_CHECK(pf_evalcache_dropped(c) == ref.dropped);
	FUZZ_CHECK(pf_evalcache_skipped(c) == ref.skipped);
	ref_check(&ref, c);

	/* Three new values: one replacing a loaded key, two new keys. */
	for (i = 0; i < 3; i++) {
		uint64_t key = i == 0 && ref.nkeys > 0 ? ref.key[0] :
		    XXH64(data, size, i);
		size_t len = n < 40 ? n : 40;

		FUZZ_CHECK(pf_evalcache_put(c, key, file + i, len > i ?
		    len - i : 0) == 0);
		ref_set(&ref, key, file + i, (uint32_t)(len > i ? len - i : 0));
	}
	/* A group of two, stored together. */
	{
		pf_evalcache_item it[2];
		size_t len = n < 30 ? n : 30;

		for (i = 0; i < 2; i++) {
			it[i].key = XXH64(data, size, 10 + i);
			it[i].val = file + i;
			it[i].len = len > i ? len - i : 0;
		}
		FUZZ_CHECK(pf_evalcache_put_group(c, it, 2) == 0);
		for (i = 0; i < 2; i++)
			ref_set(&ref, it[i].key, it[i].val,
			    (uint32_t)it[i].len);
	}
	ref_check(&ref, c);
	pf_evalcache_free(c);

	/* Open again: what was there and what was added. */
	{
		off_t end = lseek(fuzz_fd, 0, SEEK_END);

		FUZZ_CHECK(end >= 0 && (file2 = malloc((size_t)end + 1)) !=
		    NULL);
		FUZZ_CHECK(pread(fuzz_fd, file2, (size_t)end, 0) == end);
		FUZZ_CHECK(ref_open(&ref2, file2, (size_t)end) == 0);
		FUZZ_CHECK(ref2.skipped == ref.skipped && ref2.dropped ==
		    ref.skipped && ref2.loaded == ref.loaded + 5);
	}
	FUZZ_CHECK((c = pf_evalcache_new(0)) != NULL);
	FUZZ_CHECK(pf_evalcache_open(c, path) == 0);
	FUZZ_CHECK(pf_evalcache_loaded(c) == ref2.loaded);
	ref_check(&ref, c);
	pf_evalcache_free(c);
	free(file2);
memory:
	check_memory(file, n);
	free(file);
	return 0;
}
