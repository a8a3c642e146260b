/*
 * shard - split a record stream into train/validation shards: every record
 * of a game in the same split (a keyed hash of the game id), shuffled
 * within its split by an external shuffle whose memory is bounded by
 * --memory, optionally deduplicated by position, written as zstd posflow
 * shards with a manifest.json written last, and checked by --verify.
 *
 * The shuffle: pass 1 scatters every record to one of B temporary bucket
 * files of its split (a keyed hash of the seed, game id, ply and input
 * sequence number, or of the position under --dedup so that twins meet in
 * one bucket), B chosen so that a bucket fits in half of --memory.  Pass 2
 * loads one bucket at a time, drops duplicates, Fisher-Yates shuffles it
 * and appends it to the split's shards.  A bucket that came out larger
 * than the estimate allowed is scattered again into sub-buckets first.
 * Uniform bucket choice followed by a uniform shuffle of each bucket is a
 * uniform permutation, and everything depends only on the input and the
 * seed.
 *
 * The input sequence number and the position hash travel with each record
 * through the temporary files as a private extension (PF_EXT_SHARD_TMP,
 * always the last one) that is stripped before a record reaches a shard.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "posflow.h"

#define MAX_SPLITS	16
#define MAX_BUCKETS	256	/* per split and level: open files */
#define MAX_LEVEL	6	/* re-scatter depth */
#define EXT_SHARD_TMP	0x8A5D	/* private: seq u64, position hash u64 */
#define TMP_EXT_SIZE	(PF_EXT_HEADER_SIZE + 16)

struct opts {
	const char *dir;
	const char *verify;
	uint64_t shards, per_shard;
	uint64_t memory;
	uint64_t seed;
	int dedup, force;
	int nsplits;
	char *split_name[MAX_SPLITS];
	double split_frac[MAX_SPLITS];
	char *split_spec;
};

struct shardinfo {
	char *file;
	int split;
	uint64_t records, bytes, xxh3;
};

/* One split's output: the shard being written and the counts. */
struct out {
	int split;
	uint64_t target;	/* records per shard */
	uint64_t index;		/* next shard number */
	int fd;
	pf_writer *w;
	char tmp[PATH_MAX], final[PATH_MAX];
	uint64_t in_shard;
	uint64_t records, dropped;
};

struct run {
	const struct opts *o;
	int status;
	int progress;		/* standard error is a terminal */
	double start, last;	/* seconds: start, last progress line */
	uint64_t written;	/* records written to shards, all splits */
	uint64_t seq;		/* records read, all inputs */
	uint64_t invalid;
	uint64_t split_in[MAX_SPLITS];
	/* pass 1 buckets */
	int nbuckets[MAX_SPLITS];
	pf_writer *bw[MAX_SPLITS][MAX_BUCKETS];
	int bfd[MAX_SPLITS][MAX_BUCKETS];
	uint64_t bbytes[MAX_SPLITS][MAX_BUCKETS];
	uint64_t bcount[MAX_SPLITS][MAX_BUCKETS];
	size_t block_size;
	uint64_t budget;	/* bytes one loaded bucket may take */
	struct shardinfo *shards;
	size_t nshards, capshards;
	uint8_t *ext;		/* record ext + the private extension */
	size_t extcap;
};

static const char synopsis[] =
    "usage: shard [-fhV] [--dedup] [--memory size] "
    "[--records-per-shard k | --shards n]\n"
    "             [--seed n] [--split name=fraction,...] -o dir [file ...]\n"
    "       shard --verify dir\n";

static void
usage(void)
{
	fputs(synopsis, stderr);
}

/* "name=fraction,..." into o->split_*; the fractions must sum to 1. */
static const char *
parse_split(char *spec, struct opts *o)
{
	const char *errstr;
	char *tok, *save = NULL, *eq;
	double sum = 0;

	o->nsplits = 0;
	for (tok = strtok_r(spec, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (o->nsplits == MAX_SPLITS)
			return "too many splits";
		if ((eq = strchr(tok, '=')) == NULL || eq == tok)
			return "expected name=fraction";
		*eq = '\0';
		for (const char *p = tok; *p; p++)
			if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' &&
			    *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
			    *p != '_')
				return "a split name is letters, digits, _";
		for (int i = 0; i < o->nsplits; i++)
			if (strcmp(o->split_name[i], tok) == 0)
				return "a split named twice";
		o->split_frac[o->nsplits] = pf_strtod(eq + 1, 0, 1, &errstr);
		if (errstr != NULL)
			return "a fraction is a number from 0 to 1";
		o->split_name[o->nsplits++] = tok;
		sum += o->split_frac[o->nsplits - 1];
	}
	if (o->nsplits == 0)
		return "no split";
	if (fabs(sum - 1) > 1e-6)
		return "the fractions do not sum to 1";
	return NULL;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_SHARDS = 256, O_PER, O_SPLIT, O_DEDUP, O_MEM, O_SEED,
	    O_VERIFY };
	static const struct option longopts[] = {
		{ "shards", required_argument, NULL, O_SHARDS },
		{ "records-per-shard", required_argument, NULL, O_PER },
		{ "split", required_argument, NULL, O_SPLIT },
		{ "dedup", no_argument, NULL, O_DEDUP },
		{ "memory", required_argument, NULL, O_MEM },
		{ "seed", required_argument, NULL, O_SEED },
		{ "verify", required_argument, NULL, O_VERIFY },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char deflt[] = "train=1";
	const char *errstr, *what;
	int ch;

	memset(o, 0, sizeof(*o));
	o->memory = 256ull << 20;
	o->split_spec = deflt;
	while ((ch = getopt_long(argc, argv, "o:fhV", longopts, NULL)) !=
	    -1) {
		errstr = what = NULL;
		switch (ch) {
		case O_SHARDS:
			o->shards = (uint64_t)pf_strtonum(optarg, 1, 99999,
			    &errstr);
			what = "--shards";
			break;
		case O_PER:
			o->per_shard = (uint64_t)pf_strtonum(optarg, 1,
			    LLONG_MAX, &errstr);
			what = "--records-per-shard";
			break;
		case O_SPLIT:
			o->split_spec = optarg;
			break;
		case O_DEDUP:
			o->dedup = 1;
			break;
		case O_MEM:
			o->memory = pf_strtosize(optarg, 16384, 1ull << 50,
			    &errstr);
			what = "--memory";
			break;
		case O_SEED:
			o->seed = (uint64_t)pf_strtonum(optarg, 0, LLONG_MAX,
			    &errstr);
			what = "--seed";
			break;
		case O_VERIFY:
			o->verify = optarg;
			break;
		case 'o':
			o->dir = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			fputs(synopsis, stdout);
			return 0;
		case 'V':
			pf_print_version();
			return 0;
		default:
			usage();
			return 2;
		}
		if (errstr != NULL) {
			pf_warnx("%s %s: %s", what, optarg, errstr);
			usage();
			return 2;
		}
	}
	if (o->verify != NULL) {
		if (o->dir != NULL || optind != argc) {
			pf_warnx("--verify takes a directory and nothing else");
			usage();
			return 2;
		}
		return -1;
	}
	if (o->dir == NULL || *o->dir == '\0') {
		pf_warnx("-o dir is required");
		usage();
		return 2;
	}
	if (o->shards && o->per_shard) {
		pf_warnx("--shards and --records-per-shard exclude each other");
		usage();
		return 2;
	}
	if ((o->split_spec = strdup(o->split_spec)) == NULL) {
		pf_warn("out of memory");
		return 1;
	}
	if ((errstr = parse_split(o->split_spec, o)) != NULL) {
		pf_warnx("--split: %s", errstr);
		free(o->split_spec);
		usage();
		return 2;
	}
	return -1;
}

/* ---- small helpers ---------------------------------------------------- */

static uint64_t
mix64(uint64_t a, uint64_t b, uint64_t c, uint64_t key)
{
	uint8_t buf[24];

	pf_put64(buf, a);
	pf_put64(buf + 8, b);
	pf_put64(buf + 16, c);
	return XXH64(buf, sizeof(buf), key);
}

/* splitmix64: the shuffle's generator. */
static uint64_t
next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias (Lemire). */
static uint64_t
below(uint64_t *s, uint64_t n)
{
	unsigned __int128 m;
	uint64_t lo, t;

	m = (unsigned __int128)next_random(s) * n;
	lo = (uint64_t)m;
	if (lo < n) {
		t = -n % n;
		while (lo < t) {
			m = (unsigned __int128)next_random(s) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

static int
fsync_dir(const char *dir)
{
	int fd, r;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY)) == -1)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

/* XXH3-64 of a whole file; 0 / -1 (errno set). */
static int
file_xxh3(const char *path, uint64_t *h, uint64_t *size)
{
	XXH3_state_t *st;
	static uint8_t buf[1 << 16];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	if ((st = XXH3_createState()) == NULL) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	XXH3_64bits_reset(st);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		XXH3_64bits_update(st, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	*h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	if (n == -1) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static void
json_string(FILE *fp, const char *s)
{
	putc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			putc(c, fp);
	}
	putc('"', fp);
}

/* 1 when name is a shard of one of this run's splits: split-NNNNN.pos.zst. */
static int
is_shard_name(const struct opts *o, const char *n)
{
	size_t len = strlen(n), k;

	for (int s = 0; s < o->nsplits; s++) {
		k = strlen(o->split_name[s]);
		if (len == k + 14 && strncmp(n, o->split_name[s], k) == 0 &&
		    n[k] == '-' && strspn(n + k + 1, "0123456789") == 5 &&
		    strcmp(n + k + 6, ".pos.zst") == 0)
			return 1;
	}
	return 0;
}

/*
 * Remove DIR/.tmp-* (a killed run's leftovers), DIR/manifest.json and the
 * shards of this run's splits from an earlier run: a rerun starts over.
 * An input among them is an error, not a file to delete.
 */
static int
clean_dir(const struct opts *o, int argc, char **argv)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat sb, ib;
	DIR *d;
	int rv = 0;

	if ((d = opendir(o->dir)) == NULL) {
		pf_warn("%s", o->dir);
		return -1;
	}
	/* two rounds: check every file first, then delete */
	for (int round = 0; round < 2; round++) {
		rewinddir(d);
		while ((de = readdir(d)) != NULL) {
			const char *n = de->d_name;

			if (strncmp(n, ".tmp-", 5) != 0 &&
			    strcmp(n, "manifest.json") != 0 &&
			    !is_shard_name(o, n))
				continue;
			snprintf(path, sizeof(path), "%s/%s", o->dir, n);
			if (round == 1) {
				if (unlink(path) == -1 && errno != ENOENT) {
					pf_warn("%s", path);
					rv = -1;
				}
				continue;
			}
			if (stat(path, &sb) == -1)
				continue;
			for (int i = 0; i < argc; i++)
				if (stat(argv[i], &ib) == 0 &&
				    ib.st_dev == sb.st_dev &&
				    ib.st_ino == sb.st_ino) {
					pf_warnx("%s: an input is a file "
					    "this run would replace", argv[i]);
					closedir(d);
					return -1;
				}
		}
	}
	closedir(d);
	return rv;
}

/* ---- pass 1: scatter -------------------------------------------------- */

static int
tmp_writer(struct run *R, const char *path, int *fd, pf_writer **w)
{
	pf_writer_opts wo = { 0, R->block_size, -1 };

	if ((*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		pf_warn("%s", path);
		return -1;
	}
	if ((*w = pf_writer_open_fd(*fd, path, &wo)) == NULL) {
		pf_warn("out of memory");
		close(*fd);
		return -1;
	}
	return 0;
}

static void
bucket_path(char *buf, size_t len, const char *dir, int split, int level,
    uint64_t id)
{
	snprintf(buf, len, "%s/.tmp-b%d-%d-%" PRIx64 ".pos", dir, split,
	    level, id);
}

/* The position hash for --dedup (posflow(5)'s comparison), 0 when the
   position is invalid. */
static uint64_t
position_hash(const pf_record *rec, char *err, size_t errlen)
{
	pf_board b;

	if (pf_board_unpack(&b, rec->pos, (rec->flags & PF_RF_CHESS960) != 0,
	    err, errlen) == -1)
		return 0;
	return pf_board_hash(&b) | 1;	/* never 0 */
}

/* rec plus the private extension (seq, hash) into R->ext. */
static int
with_tmp_ext(struct run *R, pf_record *out, const pf_record *rec,
    uint64_t seq, uint64_t hash)
{
	size_t need = rec->ext_len + TMP_EXT_SIZE;
	uint8_t *p;

	if (need > R->extcap) {
		if ((p = realloc(R->ext, need * 2)) == NULL)
			return -1;
		R->ext = p;
		R->extcap = need * 2;
	}
	memcpy(R->ext, rec->ext, rec->ext_len);
	p = R->ext + rec->ext_len;
	pf_put16(p, EXT_SHARD_TMP);
	pf_put16(p + 2, 0);
	pf_put32(p + 4, 16);
	pf_put64(p + 8, seq);
	pf_put64(p + 16, hash);
	*out = *rec;
	out->ext = R->ext;
	out->ext_len = (uint32_t)need;
	return 0;
}

static int
choose_split(const struct opts *o, const pf_record *rec)
{
	uint64_t h;
	double u, acc = 0;
	int i;

	if (rec->game_id != 0)
		h = mix64(rec->game_id, 0x5350u, 0, o->seed);
	else
		h = XXH64(rec->pos, PF_PACKED_SIZE, o->seed ^
		    0x9E3779B97F4A7C15ull);
	u = (double)(h >> 11) * 0x1.0p-53;
	for (i = 0; i < o->nsplits - 1; i++) {
		acc += o->split_frac[i];
		if (u < acc)
			return i;
	}
	return o->nsplits - 1;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* On a terminal, a progress line at most every second: the phase, the
   records and the rate (and in pass 2 the share done, for an ETA). */
static void
progress(struct run *R, int pass, int done)
{
	double t = now(), el = t - R->start;
	uint64_t n = pass == 1 ? R->seq : R->written;

	if (!R->progress || (!done && t - R->last < 1))
		return;
	R->last = t;
	if (pass == 1)
		fprintf(stderr, "\rshard: scatter: %" PRIu64 " records, "
		    "%.0f records/s   ", n, el > 0 ? n / el : 0);
	else
		fprintf(stderr, "\rshard: shuffle: %" PRIu64 " of %" PRIu64
		    " records, %.0f%%   ", n, R->seq, R->seq ?
		    100.0 * n / R->seq : 100.0);
	if (done)
		fputs("\n", stderr);
}

/* Scatter one input.  Damage in it is reported and skipped; -1 only when
   a temporary file cannot be written (the run cannot complete). */
static int
scatter_file(struct run *R, const char *path)
{
	const struct opts *o = R->o;
	const char *name = pf_input_name(path);
	pf_reader *r;
	pf_record rec, out;
	char err[128];
	int rv, s, b;
	uint64_t hash, key;

	if ((r = pf_reader_open_path(path)) == NULL) {
		pf_warn("%s", name);
		R->status = PF_EXIT_DATA;
		return 0;
	}
	while ((rv = pf_reader_next(r, &rec)) != 0) {
		if (rv < 0) {
			pf_warnx("%s", pf_reader_error(r));
			R->status = PF_EXIT_DATA;
			continue;
		}
		s = choose_split(o, &rec);
		hash = 0;
		if (o->dedup && (hash = position_hash(&rec, err,
		    sizeof(err))) == 0) {
			R->invalid++;
			pf_warnx("%s: record %" PRIu64 ": invalid position: "
			    "%s; kept, not deduplicated", name,
			    pf_reader_records(r), err);
			R->status = PF_EXIT_DATA;
		}
		key = hash ? mix64(hash, 0, 1, o->seed) :
		    mix64(R->seq, rec.game_id, rec.ply, o->seed);
		b = (int)(key % (uint64_t)R->nbuckets[s]);
		if (with_tmp_ext(R, &out, &rec, R->seq, hash) == -1) {
			pf_warn("out of memory");
			pf_reader_free(r);
			return -1;
		}
		if (pf_writer_put(R->bw[s][b], &out) == -1) {
			pf_warnx("%s", pf_writer_error(R->bw[s][b]));
			pf_reader_free(r);
			return -1;
		}
		R->bbytes[s][b] += PF_CORE_SIZE + out.ext_len;
		R->bcount[s][b]++;
		R->split_in[s]++;
		if ((++R->seq & 0xffff) == 0)
			progress(R, 1, 0);
	}
	pf_reader_free(r);
	return 0;
}

/* ---- pass 2: shuffle and write ---------------------------------------- */

struct item {
	uint64_t seq, hash;
	uint64_t off;
	uint32_t len;
};

static int
shard_close(struct run *R, struct out *O)
{
	const char *dir = R->o->dir;
	struct shardinfo *si;
	uint64_t h, size;
	int rv = 0;

	if (O->w == NULL)
		return 0;
	if (pf_writer_close(O->w) == -1) {
		pf_warnx("%s", pf_writer_error(O->w));
		rv = -1;
	} else if (fsync(O->fd) == -1 || close(O->fd) == -1) {
		pf_warn("%s", O->tmp);
		O->fd = -1;
		rv = -1;
	}
	if (rv == -1 && O->fd >= 0)
		close(O->fd);
	pf_writer_free(O->w);
	O->w = NULL;
	O->fd = -1;
	if (rv == -1)
		return -1;
	if (file_xxh3(O->tmp, &h, &size) == -1 ||
	    rename(O->tmp, O->final) == -1) {
		pf_warn("%s", O->tmp);
		return -1;
	}
	if (R->nshards == R->capshards) {
		size_t n = R->capshards ? R->capshards * 2 : 16;
		void *p = realloc(R->shards, n * sizeof(*R->shards));

		if (p == NULL) {
			pf_warn("out of memory");
			return -1;
		}
		R->shards = p;
		R->capshards = n;
	}
	si = &R->shards[R->nshards];
	if ((si->file = strdup(O->final + strlen(dir) + 1)) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	si->split = O->split;
	si->records = O->in_shard;
	si->bytes = size;
	si->xxh3 = h;
	R->nshards++;
	return 0;
}

static int
shard_put(struct run *R, struct out *O, const pf_record *rec)
{
	const char *dir = R->o->dir;
	const char *name = R->o->split_name[O->split];
	pf_writer_opts wo;

	if (O->w != NULL && O->in_shard >= O->target &&
	    shard_close(R, O) == -1)
		return -1;
	if (O->w == NULL) {
		snprintf(O->final, sizeof(O->final), "%s/%s-%05" PRIu64
		    ".pos.zst", dir, name, O->index);
		snprintf(O->tmp, sizeof(O->tmp), "%s/.tmp-%s-%05" PRIu64
		    ".pos.zst", dir, name, O->index);
		O->index++;
		O->in_shard = 0;
		if ((O->fd = open(O->tmp, O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0644)) == -1) {
			pf_warn("%s", O->tmp);
			return -1;
		}
		wo = pf_default_writer_opts(1);
		wo.flush_ms = -1;
		if ((O->w = pf_writer_open_fd(O->fd, O->final + strlen(dir) +
		    1, &wo)) == NULL) {
			pf_warn("out of memory");
			return -1;
		}
	}
	if (pf_writer_put(O->w, rec) == -1) {
		pf_warnx("%s", pf_writer_error(O->w));
		return -1;
	}
	O->in_shard++;
	O->records++;
	if ((++R->written & 0xffff) == 0)
		progress(R, 2, 0);
	return 0;
}

/* Open-addressing set of position hashes (never 0) seen in a bucket. */
static int
seen_before(uint64_t *set, uint64_t mask, uint64_t h)
{
	uint64_t i = (h ^ (h >> 29)) & mask;

	while (set[i] != 0) {
		if (set[i] == h)
			return 1;
		i = (i + 1) & mask;
	}
	set[i] = h;
	return 0;
}

static int shuffle_bucket(struct run *R, struct out *O, const char *path,
    uint64_t bytes, uint64_t count, uint64_t id, int level);

/* Scatter a bucket too large to load into sub-buckets, then do each. */
static int
rescatter(struct run *R, struct out *O, const char *path, uint64_t bytes,
    uint64_t id, int level)
{
	const struct opts *o = R->o;
	uint64_t nb = bytes / R->budget + 2, sb[MAX_BUCKETS], sc[MAX_BUCKETS];
	pf_writer *w[MAX_BUCKETS];
	int fd[MAX_BUCKETS];
	uint64_t sub[MAX_BUCKETS];
	char p[PATH_MAX];
	pf_reader *r;
	pf_record rec;
	int rv, ok = 0;
	uint64_t i, n = 0;

	if (nb > MAX_BUCKETS)
		nb = MAX_BUCKETS;
	memset(w, 0, sizeof(w));
	for (i = 0; i < nb; i++) {
		/* unique per level: i + 1 is 1 .. MAX_BUCKETS */
		sub[i] = id * (MAX_BUCKETS + 1) + i + 1;
		bucket_path(p, sizeof(p), o->dir, O->split, level + 1, sub[i]);
		if (tmp_writer(R, p, &fd[i], &w[i]) == -1)
			goto out;
		sb[i] = sc[i] = 0;
	}
	if ((r = pf_reader_open_path(path)) == NULL) {
		pf_warn("%s", path);
		goto out;
	}
	while ((rv = pf_reader_next(r, &rec)) > 0) {
		const uint8_t *x = rec.ext + rec.ext_len - TMP_EXT_SIZE;
		uint64_t seq = pf_get64(x + 8), hash = pf_get64(x + 16), k;

		k = hash ? mix64(hash, level, 1, o->seed) :
		    mix64(seq, level, 2, o->seed);
		k %= nb;
		if (pf_writer_put(w[k], &rec) == -1) {
			pf_warnx("%s", pf_writer_error(w[k]));
			rv = -1;
			break;
		}
		sb[k] += PF_CORE_SIZE + rec.ext_len;
		sc[k]++;
		n++;
	}
	if (rv < 0) {
		pf_warnx("%s", pf_reader_error(r));
		pf_reader_free(r);
		goto out;
	}
	pf_reader_free(r);
	unlink(path);
	for (i = 0; i < nb; i++) {
		if (pf_writer_close(w[i]) == -1) {
			pf_warnx("%s", pf_writer_error(w[i]));
			goto out;
		}
		pf_writer_free(w[i]);
		w[i] = NULL;
		close(fd[i]);
	}
	ok = 1;
	for (i = 0; i < nb && ok; i++) {
		bucket_path(p, sizeof(p), o->dir, O->split, level + 1, sub[i]);
		if (shuffle_bucket(R, O, p, sb[i], sc[i], sub[i],
		    level + 1) == -1)
			ok = 0;
	}
out:
	for (i = 0; i < nb; i++)
		if (w[i] != NULL) {
			pf_writer_free(w[i]);
			close(fd[i]);
		}
	return ok ? 0 : -1;
}

/* Load one bucket file, drop duplicates, shuffle, append to the shards. */
static int
shuffle_bucket(struct run *R, struct out *O, const char *path,
    uint64_t bytes, uint64_t count, uint64_t id, int level)
{
	const struct opts *o = R->o;
	uint8_t *arena = NULL;
	struct item *it = NULL, tmp;
	uint64_t *set = NULL, mask = 0, n = 0, off = 0, st, i, j;
	pf_reader *r = NULL;
	pf_record rec;
	int rv, ret = -1;

	if (count == 0) {
		unlink(path);
		return 0;
	}
	if (bytes + count * (sizeof(struct item) + (o->dedup ? 32 : 0)) >
	    R->budget &&
	    level < MAX_LEVEL)
		return rescatter(R, O, path, bytes, id, level);
	if ((arena = malloc(bytes)) == NULL ||
	    (it = malloc(count * sizeof(*it))) == NULL)
		goto oom;
	if (o->dedup) {
		for (mask = 16; mask < count * 2; mask <<= 1)
			;
		if ((set = calloc(mask, sizeof(*set))) == NULL)
			goto oom;
		mask--;
	}
	if ((r = pf_reader_open_path(path)) == NULL) {
		pf_warn("%s", path);
		goto out;
	}
	while ((rv = pf_reader_next(r, &rec)) > 0) {
		size_t len = PF_CORE_SIZE + rec.ext_len;
		const uint8_t *x = rec.ext + rec.ext_len - TMP_EXT_SIZE;

		if (n == count || off + len > bytes ||
		    rec.ext_len < TMP_EXT_SIZE ||
		    pf_get16(x) != EXT_SHARD_TMP || pf_get32(x + 4) != 16) {
			pf_warnx("%s: damaged temporary file", path);
			goto out;
		}
		it[n].seq = pf_get64(x + 8);
		it[n].hash = pf_get64(x + 16);
		/* records arrive in input order: the first of twins stays */
		if (set != NULL && it[n].hash != 0 &&
		    seen_before(set, mask, it[n].hash)) {
			O->dropped++;
			continue;
		}
		pf_record_encode(&rec, arena + off);
		it[n].off = off;
		it[n].len = (uint32_t)len;
		off += len;
		n++;
	}
	if (rv < 0) {
		pf_warnx("%s", pf_reader_error(r));
		goto out;
	}
	st = mix64(o->seed, (uint64_t)O->split, id, 0x53485546ull);
	for (i = n; i > 1; i--) {
		j = below(&st, i);
		tmp = it[i - 1];
		it[i - 1] = it[j];
		it[j] = tmp;
	}
	for (i = 0; i < n; i++) {
		char err[128];

		if (pf_record_decode(arena + it[i].off, it[i].len, &rec, err,
		    sizeof(err)) < 0) {
			pf_warnx("%s: %s", path, err);
			goto out;
		}
		rec.ext_len -= TMP_EXT_SIZE;
		if (shard_put(R, O, &rec) == -1)
			goto out;
	}
	unlink(path);
	ret = 0;
	goto out;
oom:
	pf_warn("out of memory");
out:
	pf_reader_free(r);
	free(arena);
	free(it);
	free(set);
	return ret;
}

/* ---- manifest and verify ---------------------------------------------- */

static int
write_manifest(struct run *R, int argc, char **argv, int oargc,
    char **oargv)
{
	const struct opts *o = R->o;
	char tmp[PATH_MAX], final[PATH_MAX];
	FILE *fp;
	char cmd[8192];
	size_t i, len = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.tmp-manifest.json", o->dir);
	snprintf(final, sizeof(final), "%s/manifest.json", o->dir);
	if ((fp = fopen(tmp, "w")) == NULL) {
		pf_warn("%s", tmp);
		return -1;
	}
	cmd[0] = '\0';
	for (int k = 0; k < oargc; k++)
		len += (size_t)snprintf(cmd + len, len < sizeof(cmd) ?
		    sizeof(cmd) - len : 0, "%s%s", k ? " " : "", oargv[k]);
	fprintf(fp, "{\"format\":\"posflow\",\"version\":1,\"seed\":%" PRIu64
	    ",\"dedup\":%s,\"splits\":{", o->seed, o->dedup ? "true" :
	    "false");
	for (int s = 0; s < o->nsplits; s++) {
		if (s)
			putc(',', fp);
		json_string(fp, o->split_name[s]);
		fprintf(fp, ":%.10g", o->split_frac[s]);
	}
	fputs("},\"inputs\":[", fp);
	for (int k = 0; k < argc; k++) {
		if (k)
			putc(',', fp);
		json_string(fp, argv[k]);
	}
	if (argc == 0)
		json_string(fp, "-");
	fputs("],\"command\":", fp);
	json_string(fp, cmd);
	fputs(",\"shards\":[", fp);
	for (i = 0; i < R->nshards; i++) {
		struct shardinfo *si = &R->shards[i];

		fputs(i ? ",\n" : "\n", fp);
		fputs("{\"file\":", fp);
		json_string(fp, si->file);
		fputs(",\"split\":", fp);
		json_string(fp, o->split_name[si->split]);
		fprintf(fp, ",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64
		    ",\"xxh3\":\"%016" PRIx64 "\"}", si->records, si->bytes,
		    si->xxh3);
	}
	fputs("\n]}\n", fp);
	if (fflush(fp) == EOF || ferror(fp) || (fd = fileno(fp)) == -1 ||
	    fsync(fd) == -1) {
		pf_warn("%s", tmp);
		fclose(fp);
		return -1;
	}
	if (fclose(fp) == EOF || rename(tmp, final) == -1 ||
	    fsync_dir(o->dir) == -1) {
		pf_warn("%s", final);
		return -1;
	}
	return 0;
}

/* A JSON string at *p (after the opening quote) into buf; the escapes
   write_manifest produces are enough. */
static int
json_read_string(const char **p, char *buf, size_t len)
{
	size_t n = 0;
	const char *s = *p;

	for (; *s && *s != '"'; s++) {
		char c = *s;

		if (c == '\\') {
			s++;
			if (*s == 'u') {
				unsigned v;

				if (sscanf(s + 1, "%4x", &v) != 1)
					return -1;
				c = (char)v;
				s += 4;
			} else if (*s == '\0')
				return -1;
			else
				c = *s;
		}
		if (n + 1 >= len)
			return -1;
		buf[n++] = c;
	}
	if (*s != '"')
		return -1;
	buf[n] = '\0';
	*p = s + 1;
	return 0;
}

static int
verify_one(const char *dir, const char *file, uint64_t records,
    uint64_t bytes, uint64_t xxh3)
{
	char path[2 * PATH_MAX + 2];
	uint64_t h, size, n = 0;
	pf_reader *r;
	pf_record rec;
	int rv;

	if (strchr(file, '/') != NULL || file[0] == '.') {
		pf_warnx("%s: manifest.json: bad shard name %s", dir, file);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (file_xxh3(path, &h, &size) == -1) {
		pf_warn("%s", path);
		return -1;
	}
	if (size != bytes) {
		pf_warnx("%s: %" PRIu64 " bytes, the manifest says %" PRIu64,
		    path, size, bytes);
		return -1;
	}
	if (h != xxh3) {
		pf_warnx("%s: XXH3 %016" PRIx64 ", the manifest says %016"
		    PRIx64, path, h, xxh3);
		return -1;
	}
	if ((r = pf_reader_open_path(path)) == NULL) {
		pf_warn("%s", path);
		return -1;
	}
	while ((rv = pf_reader_next(r, &rec)) > 0)
		n++;
	if (rv < 0) {
		pf_warnx("%s", pf_reader_error(r));
		pf_reader_free(r);
		return -1;
	}
	pf_reader_free(r);
	if (n != records) {
		pf_warnx("%s: %" PRIu64 " records, the manifest says %" PRIu64,
		    path, n, records);
		return -1;
	}
	return 0;
}

static int
verify(const char *dir)
{
	char path[PATH_MAX], key[64], val[PATH_MAX], file[PATH_MAX];
	const char *p;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	uint64_t records, bytes, xxh3, total = 0, nshards = 0;
	int have;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if ((fp = fopen(path, "r")) == NULL) {
		pf_warn("%s", path);
		return PF_EXIT_DATA;
	}
	{
		FILE *mem = open_memstream(&text, &len);
		int c;

		while ((c = getc(fp)) != EOF)
			putc(c, mem);
		fclose(mem);
	}
	fclose(fp);
	if ((p = strstr(text, "\"shards\"")) == NULL ||
	    (p = strchr(p, '[')) == NULL)
		goto bad;
	p++;
	for (;;) {
		p += strspn(p, " \t\r\n,");
		if (*p == ']')
			break;
		if (*p != '{')
			goto bad;
		p++;
		have = 0;
		records = bytes = xxh3 = 0;
		for (;;) {
			p += strspn(p, " \t\r\n,");
			if (*p == '}') {
				p++;
				break;
			}
			if (*p++ != '"' || json_read_string(&p, key,
			    sizeof(key)) == -1)
				goto bad;
			p += strspn(p, " \t\r\n");
			if (*p++ != ':')
				goto bad;
			p += strspn(p, " \t\r\n");
			if (*p == '"') {
				p++;
				if (json_read_string(&p, val, sizeof(val)) ==
				    -1)
					goto bad;
			} else {
				size_t k = strspn(p, "0123456789.-+eE");

				if (k == 0 || k >= sizeof(val))
					goto bad;
				memcpy(val, p, k);
				val[k] = '\0';
				p += k;
			}
			if (strcmp(key, "file") == 0) {
				snprintf(file, sizeof(file), "%s", val);
				have |= 1;
			} else if (strcmp(key, "records") == 0) {
				records = strtoull(val, NULL, 10);
				have |= 2;
			} else if (strcmp(key, "bytes") == 0) {
				bytes = strtoull(val, NULL, 10);
				have |= 4;
			} else if (strcmp(key, "xxh3") == 0) {
				xxh3 = strtoull(val, NULL, 16);
				have |= 8;
			}
		}
		if (have != 15)
			goto bad;
		if (verify_one(dir, file, records, bytes, xxh3) == -1) {
			free(text);
			return PF_EXIT_DATA;
		}
		nshards++;
		total += records;
	}
	free(text);
	pf_warnx("%s: %" PRIu64 " shards, %" PRIu64 " records: all good",
	    dir, nshards, total);
	return PF_EXIT_OK;
bad:
	pf_warnx("%s: not a manifest this tool can read", path);
	free(text);
	return PF_EXIT_DATA;
}

/* ---- the run ---------------------------------------------------------- */

/* Bytes the inputs will take as temporary records: their sizes when known
   (compressed ones taken as 4x), else 0 (one bucket, re-scattered when it
   grows past the budget). */
static uint64_t
estimate_bytes(int argc, char **argv)
{
	uint64_t total = 0;
	struct stat sb;
	unsigned char m[4];

	for (int i = 0; i < argc; i++) {
		FILE *fp;
		int comp = 0;

		if (strcmp(argv[i], "-") == 0 || stat(argv[i], &sb) == -1 ||
		    !S_ISREG(sb.st_mode))
			continue;
		if ((fp = fopen(argv[i], "rb")) != NULL) {
			if (fread(m, 1, 4, fp) == 4 && ((m[0] == 0x28 &&
			    m[1] == 0xB5) || (m[0] == 0x1F && m[1] == 0x8B)))
				comp = 1;
			fclose(fp);
		}
		total += (uint64_t)sb.st_size * (comp ? 4 : 1);
	}
	/* the private extension and the index: up to 88 bytes a record of
	   48 or more, about 50 % of typical records; too many buckets cost
	   little, too few a second scatter */
	return total * 2;
}

static int
prepare_dir(const struct opts *o, int argc, char **argv)
{
	char path[PATH_MAX];
	struct stat sb;

	if (stat(o->dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		int fd = open(o->dir, O_WRONLY | O_NOCTTY);

		if (fd != -1 && isatty(fd)) {
			close(fd);
			pf_warnx("refusing to write binary output to a "
			    "terminal (%s is not a directory either)", o->dir);
			return -1;
		}
		if (fd != -1)
			close(fd);
		pf_warnx("%s: not a directory", o->dir);
		return -1;
	}
	if (mkdir(o->dir, 0777) == -1 && errno != EEXIST) {
		pf_warn("%s", o->dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/manifest.json", o->dir);
	if (!o->force && access(path, F_OK) == 0) {
		pf_warnx("%s: holds a complete shard set (manifest.json); "
		    "use -f to replace it", o->dir);
		return -1;
	}
	if (clean_dir(o, argc, argv) == -1)
		return -1;
	return 0;
}

static int
run(struct run *R, int argc, char **argv)
{
	const struct opts *o = R->o;
	uint64_t est;
	char path[PATH_MAX];
	int s, b, total = 0, i;

	R->budget = o->memory / 2;
	est = estimate_bytes(argc, argv);
	for (s = 0; s < o->nsplits; s++) {
		uint64_t e = (uint64_t)((double)est * o->split_frac[s]);
		uint64_t n = e / R->budget + 1;

		R->nbuckets[s] = n > MAX_BUCKETS ? MAX_BUCKETS : (int)n;
		total += R->nbuckets[s];
	}
	/* every open bucket buffers one block: keep them within a quarter
	   of the budget */
	R->block_size = (size_t)(o->memory / 4 / (uint64_t)total);
	if (R->block_size > PF_BLOCK_TARGET)
		R->block_size = PF_BLOCK_TARGET;
	if (R->block_size < 4096)
		R->block_size = 4096;
	for (s = 0; s < o->nsplits; s++)
		for (b = 0; b < R->nbuckets[s]; b++) {
			bucket_path(path, sizeof(path), o->dir, s, 0,
			    (uint64_t)b);
			if (tmp_writer(R, path, &R->bfd[s][b], &R->bw[s][b]) ==
			    -1)
				return -1;
		}
	R->progress = isatty(STDERR_FILENO);
	R->start = R->last = now();
	for (i = 0; i == 0 || i < argc; i++)
		if (scatter_file(R, argc ? argv[i] : "-") == -1)
			return -1;
	progress(R, 1, 1);
	for (s = 0; s < o->nsplits; s++)
		for (b = 0; b < R->nbuckets[s]; b++) {
			if (pf_writer_close(R->bw[s][b]) == -1) {
				pf_warnx("%s", pf_writer_error(R->bw[s][b]));
				return -1;
			}
			pf_writer_free(R->bw[s][b]);
			R->bw[s][b] = NULL;
			close(R->bfd[s][b]);
		}
	return 0;
}

static int
write_splits(struct run *R, struct out *outs)
{
	const struct opts *o = R->o;
	char path[PATH_MAX];
	int s, b;

	for (s = 0; s < o->nsplits; s++) {
		struct out *O = &outs[s];

		O->split = s;
		O->fd = -1;
		if (o->per_shard)
			O->target = o->per_shard;
		else if (o->shards)
			O->target = (R->split_in[s] + o->shards - 1) /
			    o->shards;
		else
			O->target = 1000000;
		if (O->target == 0)
			O->target = 1;
		for (b = 0; b < R->nbuckets[s]; b++) {
			bucket_path(path, sizeof(path), o->dir, s, 0,
			    (uint64_t)b);
			if (shuffle_bucket(R, O, path, R->bbytes[s][b],
			    R->bcount[s][b], (uint64_t)b, 0) == -1)
				return -1;
		}
		if (shard_close(R, O) == -1)
			return -1;
	}
	progress(R, 2, 1);
	if (fsync_dir(o->dir) == -1) {
		pf_warn("%s", o->dir);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run *R = NULL;
	struct out outs[MAX_SPLITS];
	int r, status = PF_EXIT_DATA, oargc = argc, s;
	char **oargv = argv;
	uint64_t out_total = 0, dropped = 0;

	pf_prog_init(argv);
	memset(outs, 0, sizeof(outs));
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	if (o.verify != NULL)
		return verify(o.verify);
	argc -= optind;
	argv += optind;
	if ((R = calloc(1, sizeof(*R))) == NULL) {
		pf_warn("out of memory");
		goto out;
	}
	R->o = &o;
	/* A missing input would make a shard set that looks complete and
	   is not: refuse before touching the directory. */
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "-") != 0 && access(argv[i], R_OK) == -1) {
			pf_warn("%s", argv[i]);
			r = 1;
		}
	if (r == 1)
		goto out;
	if (prepare_dir(&o, argc, argv) == -1 || run(R, argc, argv) == -1 ||
	    write_splits(R, outs) == -1)
		goto out;
	if (write_manifest(R, argc, argv, oargc, oargv) == -1)
		goto out;
	status = R->status;
	{
		char line[2048];
		size_t n = 0;

		for (s = 0; s < o.nsplits; s++) {
			n += (size_t)snprintf(line + n, n < sizeof(line) ?
			    sizeof(line) - n : 0, "%s%s %" PRIu64,
			    s ? ", " : "", o.split_name[s], outs[s].records);
			out_total += outs[s].records;
			dropped += outs[s].dropped;
		}
		pf_warnx("%" PRIu64 " records in, %" PRIu64 " out (%s); %"
		    PRIu64 " duplicates dropped; %zu shards written to %s",
		    R->seq, out_total, line, dropped, R->nshards, o.dir);
	}
out:
	if (R != NULL) {
		for (s = 0; s < MAX_SPLITS; s++) {
			for (int b = 0; b < MAX_BUCKETS; b++)
				if (R->bw[s][b] != NULL) {
					pf_writer_free(R->bw[s][b]);
					close(R->bfd[s][b]);
				}
			if (outs[s].w != NULL) {
				pf_writer_free(outs[s].w);
				close(outs[s].fd);
			}
		}
		for (size_t i = 0; i < R->nshards; i++)
			free(R->shards[i].file);
		free(R->shards);
		free(R->ext);
		free(R);
	}
	if (o.verify == NULL)
		free(o.split_spec);
	return status;
}
