/*
 * shard - split a record stream into train/validation shards: every record
 * of a game in the same split (a keyed hash of the game id), shuffled
 * within its split by an external shuffle whose memory is bounded by
 * --memory, optionally deduplicated by position (the first twin kept, or
 * the twins merged into it), positions of the first split optionally
 * dropped from the others, written as zstd posflow shards with a
 * manifest.json written last, and checked by --verify.
 *
 * The shuffle: pass 1 scatters every record to one of B temporary bucket
 * files of its split, chosen by a keyed hash of its input sequence number,
 * or of its position when positions are compared (--dedup,
 * --dedup-across) so that twins meet in one bucket; B is chosen so that a
 * bucket fits in half of --memory.  Pass 2 loads one bucket at a time,
 * drops or merges twins, Fisher-Yates shuffles it and appends it to the
 * split's shards.  A bucket that came out larger than the estimate
 * allowed is scattered again into sub-buckets first.  Uniform bucket
 * choice followed by a uniform shuffle of each bucket is a uniform
 * permutation, and everything depends only on the input and the seed.
 *
 * With --dedup-across every split has the same buckets, by position:
 * bucket b of each split holds the same range of position hashes.  A
 * group (bucket b of every split) is done together: the first split's
 * file first, leaving a set of its position hashes, then the others',
 * whose records with a position in the set are dropped.  A group too
 * large for the memory is scattered again as a whole, every file with the
 * same sub-buckets.
 *
 * The temporary files are the records, encoded as in a stream, one after
 * the other (no stream header, no blocks, no checksum): pass 2 reads a
 * bucket with one read(2) into a buffer kept from bucket to bucket and
 * shuffles the records where they lie.  They are the tool's own, written
 * and read back within the run, so what is checked when they come back is
 * their size, their record count and every record's length, not every
 * byte (a checksum of every byte cost 8 % of the run); the shard writer
 * checks every record's extensions again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "posflow.h"
#include "show.h"
#include "evalsel.h"
#include "export.h"
#include "target.h"

#define MAX_SPLITS	16
#define MAX_BUCKETS	256	/* per level, all splits: open files */
#define MAX_LEVEL	6	/* re-scatter depth */
#define NO_LINK		UINT32_MAX
#define SHARD_ZSTD	1	/* zstd level of the shards */
#define READ_CHUNK	(1u << 20)
#define MAX_VSLOTS	16	/* value targets told apart in a merge */
#define MAX_ESLOTS	16	/* evaluation limit kinds in a merge */

enum { DEDUP_NONE, DEDUP_FIRST, DEDUP_MERGE };
static const char *const dedup_names[] = { "none", "first", "merge" };

struct opts {
	const char *dir;
	const char *verify;
	uint64_t shards, per_shard;
	uint64_t memory;
	uint64_t seed;
	int dedup;		/* DEDUP_* */
	int across, progress, force;
	const char *format;	/* NULL: posflow, else an export format */
	const char *eval;	/* --format: the score's evaluation */
	int best_move;		/* --format: --move best */
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
	uint64_t big;		/* shards of target records, the others
				   (--shards) of one less */
	uint64_t index;		/* next shard number */
	int fd;
	pf_writer *w;
	pf_export *x;		/* --format: the shard's exporter */
	char tmp[PATH_MAX], final[PATH_MAX];
	uint64_t in_shard;
	uint64_t records;	/* written */
	uint64_t skipped;	/* --format: records it cannot hold */
	uint64_t dropped;	/* twins dropped or merged into another */
	uint64_t merged;	/* records written with twins merged in */
	uint64_t across;	/* dropped: the first split has the position */
};

/* A temporary file, once written: its size and records. */
struct tmpfile {
	uint64_t bytes, count;
};

/* A temporary file being written: created at its first record. */
struct bucket {
	int fd, split, level;
	uint64_t id;
	uint8_t *buf;
	size_t len, cap;
	uint64_t bytes, count;
};

/* A bucket file a run made (its name: bucket_path). */
struct made {
	int split, level;
	uint64_t id;
};

/* The kinds of extension a merge reads, with where they are. */
struct vslot {
	uint8_t method, scale;
	uint32_t p1, p2, lambda;	/* the parameters' bits */
	double sum, weight;
	const uint8_t *data;		/* the first of them: payload */
	uint32_t len;
	int in_kept;
	uint8_t *buf;			/* data, when copied */
	size_t cap;
};

struct eslot {
	uint8_t kind;
	uint64_t limit;
	uint16_t depth;
	const uint8_t *data;		/* the deepest: payload */
	uint32_t len;
	const uint8_t *kept;		/* the kept record's deepest */
	uint64_t klimit;
	uint16_t kdepth;
	uint8_t *buf;			/* data, when copied */
	size_t cap;
};

/* One position's twins being merged, one by one (merger_add). */
struct merger {
	size_t n;			/* members so far */
	pf_record kept;			/* the first */
	struct vslot vs[MAX_VSLOTS];
	struct eslot es[MAX_ESLOTS];
	int nv, ne;
	int policy, pol_member;		/* the mean policy: all alike */
	const uint8_t *pol_data;	/* the first policy: payload */
	pf_policy pref;
	double acc[PF_MAX_MOVES], pweight;
	uint64_t count, wins, draws, losses;
	uint8_t *kbuf, *pbuf;		/* copies: the first, its policy */
	size_t kcap, pcap;
};

struct run {
	const struct opts *o;
	int status;
	uint64_t merge_bad;	/* twins' malformed extensions, not merged */
	/* progress */
	int progress, tty;
	double phase_start, last;
	int last_len;
	uint64_t in_total;	/* bytes of the inputs, when all are files */
	int in_known;
	uint64_t in_done;	/* bytes of the inputs finished */
	int cur_fd;		/* the input being read, or -1 */
	const pf_reader *cur_r;	/* its reader (for the progress) */
	uint64_t in_bytes;	/* record bytes read */
	uint64_t seq;		/* records read, all inputs */
	uint64_t loaded, loaded_bytes;	/* pass 2: records loaded */
	/* keys */
	int hashed;		/* buckets by position */
	uint64_t hseed, kseed;
	uint64_t last_game;
	int last_split;
	uint64_t split_in[MAX_SPLITS];
	/* pass 1 */
	int nbuckets[MAX_SPLITS];
	struct bucket *bk[MAX_SPLITS];
	struct tmpfile *tf[MAX_SPLITS];
	size_t block_size;
	uint64_t budget;	/* bytes one loaded group may take */
	uint8_t *scratch;	/* a record larger than a bucket's buffer */
	size_t scratch_cap;
	/* pass 2: the first split's positions (--dedup-across) */
	uint64_t *set, set_mask;
	/* pass 2: a loaded file and its index, kept from file to file */
	uint8_t *arena;
	uint64_t *off, *key;
	uint32_t *table, *next, *order;
	uint64_t arena_cap, off_cap, key_cap, table_cap, next_cap, order_cap;
	/* merges */
	pf_extbuf mb;
	uint32_t *members;
	size_t members_cap;
	struct merger merger;
	pf_policy ptmp;
	uint8_t seen[PF_MAX_MOVES];
	struct shardinfo *shards;
	size_t nshards, capshards;
	/* the bucket files made, for a failed run to remove */
	struct made *made;
	size_t nmade, capmade;
};

static const char synopsis[] =
    "usage: shard [-fhV] [--dedup [first | merge]] [--dedup-across] "
    "[--format format]\n"
    "             [--eval selector] [--move played | best] [--memory size] "
    "[--progress]\n"
    "             [--records-per-shard k | --shards n] [--seed n]\n"
    "             [--split name=fraction,...] -o dir [file ...]\n"
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
	enum { O_SHARDS = 256, O_PER, O_SPLIT, O_DEDUP, O_ACROSS, O_MEM,
	    O_SEED, O_VERIFY, O_PROGRESS, O_FORMAT, O_EVAL, O_MOVE };
	static const struct option longopts[] = {
		{ "shards", required_argument, NULL, O_SHARDS },
		{ "records-per-shard", required_argument, NULL, O_PER },
		{ "split", required_argument, NULL, O_SPLIT },
		{ "dedup", optional_argument, NULL, O_DEDUP },
		{ "dedup-across", no_argument, NULL, O_ACROSS },
		{ "memory", required_argument, NULL, O_MEM },
		{ "seed", required_argument, NULL, O_SEED },
		{ "verify", required_argument, NULL, O_VERIFY },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "eval", required_argument, NULL, O_EVAL },
		{ "move", required_argument, NULL, O_MOVE },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char deflt[] = "train=1";
	const char *errstr, *what, *arg, *split_arg;
	int ch;

	memset(o, 0, sizeof(*o));
	o->memory = 256ull << 20;
	o->split_spec = deflt;
	while ((ch = getopt_long(argc, argv, "o:fhV", longopts, NULL)) !=
	    -1) {
		errstr = what = NULL;
		arg = optarg;
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
			/* the mode may also be the next word: --dedup merge */
			if (arg == NULL && optind < argc &&
			    (strcmp(argv[optind], "first") == 0 ||
			    strcmp(argv[optind], "merge") == 0))
				arg = argv[optind++];
			if (arg == NULL || strcmp(arg, "first") == 0)
				o->dedup = DEDUP_FIRST;
			else if (strcmp(arg, "merge") == 0)
				o->dedup = DEDUP_MERGE;
			else {
				errstr = "expected first or merge";
				what = "--dedup";
			}
			break;
		case O_ACROSS:
			o->across = 1;
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
		case O_PROGRESS:
			o->progress = 1;
			break;
		case O_FORMAT:
			if (strcmp(optarg, "posflow") == 0)
				o->format = NULL;
			else if (pf_export_directory(optarg) != 0) {
				errstr = "not a stream format (posflow, "
				    "binpack, plain, bin, marlinformat, "
				    "bulletformat, viriformat)";
				what = "--format";
			} else
				o->format = optarg;
			break;
		case O_EVAL:
			o->eval = optarg;
			break;
		case O_MOVE:
			if ((o->best_move = pf_export_move_word(optarg)) < 0) {
				errstr = "played or best";
				what = "--move";
			}
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
			pf_warnx("%s %s: %s", what, arg, errstr);
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
	if ((o->eval != NULL || o->best_move) && o->format == NULL) {
		pf_warnx("--eval and --move choose what --format writes: "
		    "--format is required");
		usage();
		return 2;
	}
	if (o->best_move && !pf_export_best_move(o->format)) {
		pf_warnx("--move best: --format %s holds no move to replace "
		    "(binpack, plain, bin and lc0 do)", o->format);
		usage();
		return 2;
	}
	if (o->eval != NULL) {
		pf_evalsel sel;
		char err[256];

		if (pf_evalsel_parse(o->eval, &sel, err, sizeof(err)) == -1) {
			pf_warnx("--eval %s: %s", o->eval, err);
			usage();
			return 2;
		}
	}
	if (o->shards && o->per_shard) {
		pf_warnx("--shards and --records-per-shard exclude each other");
		usage();
		return 2;
	}
	split_arg = o->split_spec;
	if ((o->split_spec = strdup(split_arg)) == NULL) {
		pf_warn("out of memory");
		return 1;
	}
	if ((errstr = parse_split(o->split_spec, o)) != NULL) {
		pf_warnx("--split: %s: %s", split_arg, errstr);
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

/* The splitmix64 finaliser of x + salt: a cheap keyed hash of a number. */
static inline uint64_t
remix(uint64_t x, uint64_t salt)
{
	uint64_t z = x + salt * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* x in [0, n) by its high bits, so that equal high bits stay together. */
static inline uint64_t
fastrange(uint64_t x, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * n) >> 64);
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

/* The key of a position (posflow(5): equal positions are equal bytes,
   clocks aside), keyed by the seed; never 0. */
static inline uint64_t
pos_key(const struct run *R, const uint8_t *pos)
{
	uint64_t k = XXH3_64bits_withSeed(pos, PF_POS_KEY_SIZE, R->hseed);

	return k ? k : 1;
}

/* An encoded record (a temporary file's) as a pf_record: its bytes were
   checked when they were read, and the writer checks them again. */
static inline void
rec_view(const uint8_t *p, pf_record *rec)
{
	uint32_t len = pf_get32(p);

	memcpy(rec->pos, p + 4, PF_PACKED_SIZE);
	rec->game_id = pf_get64(p + 32);
	rec->ply = pf_get16(p + 40);
	rec->move = pf_get16(p + 42);
	rec->result = p[44];
	rec->flags = pf_get16(p + 46);
	rec->ext = p + PF_CORE_SIZE;
	rec->ext_len = len - PF_CORE_SIZE;
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

/* write(2) all of p[0..n); 0 / -1 (errno set). */
static int
write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t put;

	while (n > 0) {
		if ((put = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += put;
		n -= (size_t)put;
	}
	return 0;
}

/* 1 when n is a shard name of split: split-NNNNN.pos.zst (more digits
   from shard 100000, as %05 prints them), or the suffix of a --format in
   place of .pos.zst. */
static int
is_split_shard(const char *split, const char *n)
{
	size_t k = strlen(split), d;
	const char *sfx;

	if (strncmp(n, split, k) != 0 || n[k] != '-')
		return 0;
	d = strspn(n + k + 1, "0123456789");
	if (d < 5 || (d > 5 && n[k + 1] == '0'))
		return 0;
	sfx = n + k + 1 + d;
	if (strcmp(sfx, ".pos.zst") == 0)
		return 1;
	/* (the formats that write a directory have no suffix: a name
	   without one is no shard) */
	for (int i = 0; pf_export_formats[i] != NULL; i++) {
		const char *f = pf_export_suffix(pf_export_formats[i]);

		if (f != NULL && f[0] != '\0' && strcmp(sfx, f) == 0)
			return 1;
	}
	return 0;
}

/* 1 when n is a shard name of one of this run's splits. */
static int
is_shard_name(const struct opts *o, const char *n)
{
	for (int s = 0; s < o->nsplits; s++)
		if (is_split_shard(o->split_name[s], n))
			return 1;
	return 0;
}

/* A shard of a manifest. */
struct mshard {
	char file[PATH_MAX];
	char split[PATH_MAX];
	uint64_t records, bytes, xxh3;
};

struct listed;

static int	manifest_each(const char *, int (*)(const struct mshard *, int,
		    void *), void *, struct listed *);

/*
 * Names a manifest lists: its shards (-f replaces that set; --verify
 * looks for strays) or its splits.  Looked up by a linear search until
 * listed_sort, then by a binary one: a set may hold 100,000 shards.
 */
struct listed {
	char **name;
	int n, cap, sorted;
};

static int
listed_add(const struct mshard *m, int posflow, void *arg)
{
	struct listed *l = arg;
	char **a;

	(void)posflow;
	if (strchr(m->file, '/') != NULL || m->file[0] == '.')
		return 0;	/* never anything outside the directory */
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		if ((a = realloc(l->name, (size_t)l->cap * sizeof(*a))) ==
		    NULL)
			return -1;
		l->name = a;
	}
	if ((l->name[l->n] = strdup(m->file)) == NULL)
		return -1;
	l->n++;
	l->sorted = 0;
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
listed_sort(struct listed *l)
{
	if (l->n > 1)
		qsort(l->name, (size_t)l->n, sizeof(*l->name), name_cmp);
	l->sorted = 1;
}

static int
is_listed(const struct listed *l, const char *n)
{
	if (l->sorted)
		return l->n > 0 && bsearch(&n, l->name, (size_t)l->n,
		    sizeof(*l->name), name_cmp) != NULL;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->name[i], n) == 0)
			return 1;
	return 0;
}

/*
 * Remove DIR/.tmp-* (a killed run's leftovers), DIR/manifest.json, every
 * shard that manifest lists (-f: the set it replaces, of any split or
 * format), and the shards of this run's splits from an earlier run (a
 * killed one has no manifest): a rerun starts over.  An input among them
 * (pf_set_inputs: an operand, or the standard input) is an error, not a
 * file to delete.
 */
static int
clean_dir(const struct opts *o)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat sb;
	struct listed old = { NULL, 0, 0, 0 };
	DIR *d;
	int rv = 0;

	snprintf(path, sizeof(path), "%s/manifest.json", o->dir);
	if (access(path, F_OK) == 0 &&
	    manifest_each(o->dir, listed_add, &old, NULL) != 0) {
		/* the shards of this run's splits still go, and those it
		   listed before the point it could not be read */
		pf_warnx("%s: not a manifest this tool can read: the shards "
		    "it lists are not all removed", path);
	}
	listed_sort(&old);
	if ((d = opendir(o->dir)) == NULL) {
		pf_warn("%s", o->dir);
		rv = -1;
		goto out;
	}
	/* two rounds: check every file first, then delete, the manifest
	   first (a run killed meanwhile leaves no manifest of a set it
	   removed part of) */
	for (int round = 0; round < 2; round++) {
		if (round == 1) {
			snprintf(path, sizeof(path), "%s/manifest.json",
			    o->dir);
			if (unlink(path) == -1 && errno != ENOENT) {
				pf_warn("%s", path);
				rv = -1;
				goto done;
			}
		}
		rewinddir(d);
		while ((de = readdir(d)) != NULL) {
			const char *n = de->d_name;

			if (strncmp(n, ".tmp-", 5) != 0 &&
			    strcmp(n, "manifest.json") != 0 &&
			    !is_shard_name(o, n) && !is_listed(&old, n))
				continue;
			snprintf(path, sizeof(path), "%s/%s", o->dir, n);
			if (round == 1) {
				if (unlink(path) == -1 && errno != ENOENT) {
					pf_warn("%s", path);
					rv = -1;
				}
				continue;
			}
			/* an operand, or the standard input */
			if (stat(path, &sb) == 0 && pf_output_is_input(path)) {
				pf_warnx("%s: an input is a file this run "
				    "would replace", path);
				rv = -1;
				goto done;
			}
		}
	}
done:
	closedir(d);
out:
	for (int i = 0; i < old.n; i++)
		free(old.name[i]);
	free(old.name);
	return rv;
}

/* ---- progress --------------------------------------------------------- */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
phase_start(struct run *R)
{
	R->phase_start = R->last = now();
}

/*
 * A progress line at most every second, on a terminal (rewritten in
 * place) or with --progress (one line each): the phase, the records and
 * megabytes done, the rate and, where the total is known (the sizes of
 * input files; in pass 2 the records scattered), the share done and an
 * ETA.  done: the phase's last line, with its time.
 */
static void
progress(struct run *R, int pass, int done)
{
	char line[256], eta[32];
	double t, el, frac = -1, mb;
	uint64_t n;
	int len;

	if (!R->progress)
		return;
	t = now();
	if (!done && t - R->last < 1)
		return;
	R->last = t;
	el = t - R->phase_start;
	if (pass == 1) {
		n = R->seq;
		mb = (double)R->in_bytes / 1e6;
		if (R->in_known && R->in_total > 0) {
			uint64_t at = R->in_done;

			/* how far into the file, in its own bytes: not the
			   compressed ones read ahead of the decoder */
			if (R->cur_fd >= 0 && R->cur_r != NULL)
				at += pf_reader_position(R->cur_r);
			frac = (double)at / (double)R->in_total;
			if (frac > 1)
				frac = 1;
		}
		len = snprintf(line, sizeof(line), "shard: scatter: %" PRIu64
		    " records, %.1f MB", n, mb);
	} else {
		n = R->loaded;
		mb = (double)R->loaded_bytes / 1e6;
		frac = R->seq ? (double)n / (double)R->seq : 1;
		len = snprintf(line, sizeof(line), "shard: shuffle: %" PRIu64
		    " of %" PRIu64 " records, %.1f MB", n, R->seq, mb);
	}
	if (done)
		len += snprintf(line + len, sizeof(line) - (size_t)len,
		    " in %.3f s, %.1f MB/s, %.0f records/s", el, el > 0 ?
		    mb / el : 0, el > 0 ? (double)n / el : 0);
	else {
		len += snprintf(line + len, sizeof(line) - (size_t)len,
		    ", %.1f MB/s", el > 0 ? mb / el : 0);
		if (frac > 0) {
			double left = el * (1 - frac) / frac;
			unsigned s = left < 360000 ? (unsigned)(left + 0.5) :
			    359999;

			if (s >= 3600)
				snprintf(eta, sizeof(eta), "%u:%02u:%02u",
				    s / 3600, s / 60 % 60, s % 60);
			else
				snprintf(eta, sizeof(eta), "%u:%02u", s / 60,
				    s % 60);
			len += snprintf(line + len, sizeof(line) - (size_t)len,
			    ", %.0f%%, ETA %s", 100 * frac, eta);
		} else if (frac == 0)
			len += snprintf(line + len, sizeof(line) -
			    (size_t)len, ", 0%%");
	}
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	if (R->tty) {
		/* rewrite the line in place, blanking what is left of a
		   longer one */
		fprintf(stderr, "\r%s%*s%s", line, R->last_len > len ?
		    R->last_len - len : 0, "", done ? "\n" : "");
		R->last_len = done ? 0 : len;
	} else
		fprintf(stderr, "%s\n", line);
}

/* ---- temporary files -------------------------------------------------- */

static void
bucket_path(char *buf, size_t len, const char *dir, int split, int level,
    uint64_t id)
{
	snprintf(buf, len, "%s/.tmp-b%d-%d-%" PRIx64 ".rec", dir, split,
	    level, id);
}

static void
bucket_init(struct bucket *b, int split, int level, uint64_t id,
    size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	b->split = split;
	b->level = level;
	b->id = id;
	b->cap = cap;
}

/* Create the file and the buffer at the first record. */
static int
bucket_start(struct run *R, struct bucket *b)
{
	char path[PATH_MAX];

	bucket_path(path, sizeof(path), R->o->dir, b->split, b->level, b->id);
	if (R->nmade == R->capmade) {
		size_t n = R->capmade ? 2 * R->capmade : 64;
		struct made *p = realloc(R->made, n * sizeof(*p));

		if (p == NULL) {
			pf_warn("out of memory");
			return -1;
		}
		R->made = p;
		R->capmade = n;
	}
	R->made[R->nmade++] = (struct made){ b->split, b->level, b->id };
	if ((b->buf = malloc(b->cap)) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	if ((b->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		pf_warn("%s", path);
		return -1;
	}
	return 0;
}

static int
bucket_write(struct run *R, struct bucket *b, const uint8_t *p, size_t n)
{
	char path[PATH_MAX];

	if (write_all(b->fd, p, n) == -1) {
		bucket_path(path, sizeof(path), R->o->dir, b->split, b->level,
		    b->id);
		pf_warn("%s", path);
		return -1;
	}
	return 0;
}

static int
bucket_flush(struct run *R, struct bucket *b)
{
	if (b->len > 0 && bucket_write(R, b, b->buf, b->len) == -1)
		return -1;
	b->len = 0;
	return 0;
}

/* Append one encoded record (raw) or one record (rec). */
static int
bucket_put(struct run *R, struct bucket *b, const pf_record *rec,
    const uint8_t *raw, size_t len)
{
	if (b->fd == -1 && bucket_start(R, b) == -1)
		return -1;
	if (b->len + len > b->cap && bucket_flush(R, b) == -1)
		return -1;
	if (len <= b->cap) {
		if (raw != NULL)
			memcpy(b->buf + b->len, raw, len);
		else
			pf_record_encode(rec, b->buf + b->len);
		b->len += len;
	} else if (raw != NULL) {
		if (bucket_write(R, b, raw, len) == -1)
			return -1;
	} else {
		if (len > R->scratch_cap) {
			uint8_t *p = realloc(R->scratch, len);

			if (p == NULL) {
				pf_warn("out of memory");
				return -1;
			}
			R->scratch = p;
			R->scratch_cap = len;
		}
		pf_record_encode(rec, R->scratch);
		if (bucket_write(R, b, R->scratch, len) == -1)
			return -1;
	}
	b->bytes += len;
	b->count++;
	return 0;
}

static void
bucket_free(struct bucket *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	free(b->buf);
	b->buf = NULL;
}

/* Write what is buffered and close: t describes the file. */
static int
bucket_finish(struct run *R, struct bucket *b, struct tmpfile *t)
{
	memset(t, 0, sizeof(*t));
	if (b->fd == -1)
		return 0;
	if (bucket_flush(R, b) == -1)
		return -1;
	t->bytes = b->bytes;
	t->count = b->count;
	bucket_free(b);
	return 0;
}

/*
 * A temporary file read back record by record (for a re-scatter; pass 2
 * proper reads a file whole).
 */
struct tmpreader {
	int fd;
	const char *path;
	uint8_t *buf;
	size_t cap, start, end;
	uint64_t left;		/* bytes of the file not yet read */
	uint64_t recs_left;
};

static int
tmpreader_open(struct tmpreader *tr, const char *path,
    const struct tmpfile *t, size_t cap)
{
	memset(tr, 0, sizeof(*tr));
	tr->path = path;
	tr->left = t->bytes;
	tr->recs_left = t->count;
	tr->cap = cap;
	if ((tr->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		pf_warn("%s", path);
		return -1;
	}
	if ((tr->buf = malloc(cap)) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	return 0;
}

static void
tmpreader_close(struct tmpreader *tr)
{
	if (tr->fd >= 0)
		close(tr->fd);
	free(tr->buf);
}

/* Make want bytes contiguous from tr->start; 0 / -1. */
static int
tmpreader_fill(struct tmpreader *tr, size_t want)
{
	ssize_t n;

	if (tr->end - tr->start >= want)
		return 0;
	if (want > tr->cap) {
		uint8_t *p = realloc(tr->buf, want);

		if (p == NULL) {
			pf_warn("out of memory");
			return -1;
		}
		tr->buf = p;
		tr->cap = want;
	}
	memmove(tr->buf, tr->buf + tr->start, tr->end - tr->start);
	tr->end -= tr->start;
	tr->start = 0;
	while (tr->end < want) {
		size_t ask = tr->cap - tr->end;

		if (ask > tr->left)
			ask = (size_t)tr->left;
		if (ask == 0)
			goto damaged;
		if ((n = read(tr->fd, tr->buf + tr->end, ask)) == -1) {
			if (errno == EINTR)
				continue;
			pf_warn("%s", tr->path);
			return -1;
		}
		if (n == 0)
			goto damaged;
		tr->end += (size_t)n;
		tr->left -= (uint64_t)n;
	}
	return 0;
damaged:
	pf_warnx("%s: damaged temporary file", tr->path);
	return -1;
}

/* 1 and the next record, 0 at the end (the size was right), -1. */
static int
tmpreader_next(struct tmpreader *tr, const uint8_t **p, uint32_t *len)
{
	uint32_t n;

	if (tr->recs_left == 0) {
		if (tr->left != 0 || tr->start != tr->end) {
			pf_warnx("%s: damaged temporary file", tr->path);
			return -1;
		}
		return 0;
	}
	if (tmpreader_fill(tr, 4) == -1)
		return -1;
	n = pf_get32(tr->buf + tr->start);
	if (n < PF_CORE_SIZE || n > tr->end - tr->start + tr->left) {
		pf_warnx("%s: damaged temporary file", tr->path);
		return -1;
	}
	if (tmpreader_fill(tr, n) == -1)
		return -1;
	*p = tr->buf + tr->start;
	*len = n;
	tr->start += n;
	tr->recs_left--;
	return 1;
}

/* ---- pass 1: scatter -------------------------------------------------- */

static int
choose_split(struct run *R, const pf_record *rec)
{
	const struct opts *o = R->o;
	uint64_t h;
	double u, acc = 0;
	int i;

	/* records of a game come together: hash each game once */
	if (rec->game_id != 0 && rec->game_id == R->last_game)
		return R->last_split;
	/* no game: by the position as --dedup compares it, its move
	   clocks aside, so that its twins meet in one split */
	if (rec->game_id != 0)
		h = mix64(rec->game_id, 0x5350u, 0, o->seed);
	else
		h = XXH64(rec->pos, PF_POS_KEY_SIZE, o->seed ^
		    0x9E3779B97F4A7C15ull);
	u = (double)(h >> 11) * 0x1.0p-53;
	for (i = 0; i < o->nsplits - 1; i++) {
		acc += o->split_frac[i];
		if (u < acc)
			break;
	}
	if (rec->game_id != 0) {
		R->last_game = rec->game_id;
		R->last_split = i;
	}
	return i;
}

/* Scatter one input.  Damage in it is reported and skipped; -1 when it
   cannot be opened (gone since check_input: a set missing an input must
   not look complete), or no memory, or a temporary file cannot be
   written (the run cannot complete). */
static int
scatter_file(struct run *R, const char *path)
{
	const char *name = pf_input_name(path);
	struct bucket *b;
	pf_reader *r;
	pf_record rec;
	struct stat sb;
	uint64_t key;
	int fd, rv, s, ret = 0;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		pf_warn("%s", name);
		return -1;
	}
	if ((r = pf_reader_open_fd(fd, name)) == NULL) {
		pf_warn("%s", name);
		if (fd != STDIN_FILENO)
			close(fd);
		return -1;
	}
	R->cur_fd = fd;
	R->cur_r = r;
	while ((rv = pf_reader_next(r, &rec)) != 0) {
		if (rv < 0) {
			pf_warnx("%s", pf_reader_error(r));
			R->status = PF_EXIT_DATA;
			continue;
		}
		s = choose_split(R, &rec);
		key = R->hashed ? pos_key(R, rec.pos) : remix(R->seq, R->kseed);
		b = &R->bk[s][fastrange(key, (uint64_t)R->nbuckets[s])];
		if (bucket_put(R, b, &rec, NULL, PF_CORE_SIZE + rec.ext_len) ==
		    -1) {
			ret = -1;
			break;
		}
		R->split_in[s]++;
		R->in_bytes += PF_CORE_SIZE + rec.ext_len;
		if ((++R->seq & 0xfff) == 0)
			progress(R, 1, 0);
	}
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
		R->in_done += (uint64_t)sb.st_size;
	R->cur_fd = -1;
	R->cur_r = NULL;
	pf_reader_free(r);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

/* ---- the shards ------------------------------------------------------- */

static int
shard_close(struct run *R, struct out *O)
{
	const char *dir = R->o->dir;
	struct shardinfo *si;
	uint64_t h, size, written;
	int rv = 0;

	if (O->w == NULL && O->x == NULL)
		return 0;
	if (O->x != NULL && pf_export_close(O->x) == -1) {
		pf_warnx("%s", pf_export_error(O->x));
		rv = -1;
	} else if (O->w != NULL && pf_writer_close(O->w) == -1) {
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
	written = O->x != NULL ? pf_export_written(O->x) : O->in_shard;
	pf_export_free(O->x);
	O->x = NULL;
	O->fd = -1;
	if (rv == -1)
		return -1;
	if (written == 0) {
		/* every record of it skipped by the format: no shard */
		if (unlink(O->tmp) == -1) {
			pf_warn("%s", O->tmp);
			return -1;
		}
		O->index--;
		return 0;
	}
	if (file_xxh3(O->tmp, &h, &size) == -1) {
		pf_warn("%s", O->tmp);
		return -1;
	}
	/* noted before the rename: a failed run removes what it noted */
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
	if (rename(O->tmp, O->final) == -1) {
		pf_warn("%s", O->tmp);
		free(si->file);
		return -1;
	}
	si->split = O->split;
	si->records = written;
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
	const char *suffix = R->o->format != NULL ?
	    pf_export_suffix(R->o->format) : ".pos.zst";
	pf_writer_opts wo;
	pf_export_opts xo;
	char err[512];
	int why;

	if ((O->w != NULL || O->x != NULL) && O->in_shard >= O->target -
	    (O->index > O->big) && shard_close(R, O) == -1)
		return -1;
	if (O->w == NULL && O->x == NULL) {
		snprintf(O->final, sizeof(O->final), "%s/%s-%05" PRIu64 "%s",
		    dir, name, O->index, suffix);
		snprintf(O->tmp, sizeof(O->tmp), "%s/.tmp-%s-%05" PRIu64 "%s",
		    dir, name, O->index, suffix);
		O->index++;
		O->in_shard = 0;
		if ((O->fd = open(O->tmp, O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0644)) == -1) {
			pf_warn("%s", O->tmp);
			return -1;
		}
		if (R->o->format != NULL) {
			memset(&xo, 0, sizeof(xo));
			xo.eval = R->o->eval;
			xo.best_move = R->o->best_move;
			if ((O->x = pf_export_open(R->o->format, O->fd, NULL,
			    O->final + strlen(dir) + 1, &xo, err,
			    sizeof(err))) == NULL) {
				pf_warnx("%s", err);
				return -1;
			}
		} else {
			memset(&wo, 0, sizeof(wo));
			wo.zstd_level = SHARD_ZSTD;
			wo.flush_ms = -1;
			if ((O->w = pf_writer_open_fd(O->fd, O->final +
			    strlen(dir) + 1, &wo)) == NULL) {
				pf_warn("out of memory");
				return -1;
			}
		}
	}
	if (O->x != NULL) {
		switch (pf_export_put(O->x, rec, &why)) {
		case -1:
			pf_warnx("%s", pf_export_error(O->x));
			return -1;
		case 0:
			/* a record the format cannot hold */
			O->skipped++;
			return 0;
		}
	} else if (pf_writer_put(O->w, rec) == -1) {
		pf_warnx("%s", pf_writer_error(O->w));
		return -1;
	}
	/* a shard holds --records-per-shard records written: those the
	   format cannot hold do not count */
	O->in_shard++;
	O->records++;
	return 0;
}

/* ---- pass 2: merging twins -------------------------------------------- */

/* Append extension x (header and payload) to b; its payload in b, or
   NULL. */
static uint8_t *
append_ext(pf_extbuf *b, const uint8_t *data, uint32_t len)
{
	if (pf_extbuf_append_raw(b, data - PF_EXT_HEADER_SIZE,
	    PF_EXT_HEADER_SIZE + (size_t)len) == -1)
		return NULL;
	return b->data + b->len - len;
}

/* A copy of extension data (payload len) and its header in *buf; the
   copy's payload, or NULL when out of memory. */
static const uint8_t *
keep_ext(uint8_t **buf, size_t *cap, const uint8_t *data, uint32_t len)
{
	size_t need = PF_EXT_HEADER_SIZE + (size_t)len;
	uint8_t *p;

	if (need > *cap) {
		if ((p = realloc(*buf, need)) == NULL)
			return NULL;
		*buf = p;
		*cap = need;
	}
	memcpy(*buf, data - PF_EXT_HEADER_SIZE, need);
	return *buf + PF_EXT_HEADER_SIZE;
}

static int
vslot_match(const struct vslot *v, const uint8_t *p)
{
	return v->method == p[0] && v->scale == p[1] &&
	    v->p1 == pf_get32(p + 4) && v->p2 == pf_get32(p + 8) &&
	    v->lambda == pf_get32(p + 12);
}

/* Same method, same moves (in any order) as M->pref: then p's
   probabilities, weighted, are added to M->acc.  0 / -1 (not alike). */
static int
policy_add(struct run *R, struct merger *M, const pf_policy *p, double w)
{
	const pf_policy *ref = &M->pref;
	int i, j, n = ref->n;

	if (p->method != ref->method || p->n != ref->n)
		return -1;
	memset(R->seen, 0, (size_t)n);
	for (i = 0; i < n; i++) {
		j = i;
		if (ref->move[j] != p->move[i])
			for (j = 0; j < n && ref->move[j] != p->move[i]; j++)
				;
		if (j == n || R->seen[j])
			return -1;
		R->seen[j] = 1;
	}
	for (i = 0; i < n; i++) {
		j = i;
		if (ref->move[j] != p->move[i])
			for (j = 0; ref->move[j] != p->move[i]; j++)
				;
		M->acc[j] += w * p->prob[i];
	}
	return 0;
}

static void
merger_free(struct merger *M)
{
	int i;

	for (i = 0; i < MAX_ESLOTS; i++)
		free(M->es[i].buf);
	for (i = 0; i < MAX_VSLOTS; i++)
		free(M->vs[i].buf);
	free(M->kbuf);
	free(M->pbuf);
	memset(M, 0, sizeof(*M));
}

/* Begin a merge: no member yet (the buffers are kept). */
static void
merger_reset(struct merger *M)
{
	M->n = 0;
	M->nv = M->ne = 0;
	M->policy = 0;
	M->pol_member = -1;
	M->pol_data = NULL;
	M->count = M->wins = M->draws = M->losses = 0;
	M->pweight = 0;
}

/*
 * Add the next twin (in input order; the first is the kept record) to a
 * merge.  With copy, what is kept of its bytes is copied, so they need
 * not outlive the call; without (the loaded arena), every member's bytes
 * stay until merger_finish.  0 / -1 (out of memory).
 */
static int
merger_add(struct run *R, struct merger *M, const uint8_t *raw, int copy)
{
	pf_record rec;
	pf_ext_iter it;
	pf_ext x;
	pf_eval ev;
	pf_value va;
	pf_merge mg;
	const uint8_t *d;
	int black, i, rv, have_mg, first = M->n == 0;
	const uint8_t *last_policy = NULL;
	double w = 1;

	if (first && copy) {
		uint32_t len = pf_get32(raw);

		if (len > M->kcap) {
			uint8_t *p = realloc(M->kbuf, len);

			if (p == NULL)
				goto oom;
			M->kbuf = p;
			M->kcap = len;
		}
		memcpy(M->kbuf, raw, len);
		raw = M->kbuf;
	}
	rec_view(raw, &rec);
	if (first)
		M->kept = rec;
	black = (rec.pos[24] & 0x80) != 0;
	have_mg = 0;
	if (pf_ext_find(&rec, PF_EXT_MERGE, 0, &x)) {
		if (pf_merge_decode(&x, &mg) == 0)
			have_mg = mg.count > 0;
		else
			R->merge_bad++;
	}
	if (have_mg) {
		w = mg.count;
		M->count += mg.count;
		M->wins += mg.wins;
		M->draws += mg.draws;
		M->losses += mg.losses;
	} else {
		M->count++;
		if (rec.result == PF_RESULT_DRAW)
			M->draws++;
		else if (rec.result == (black ? PF_RESULT_BLACK :
		    PF_RESULT_WHITE))
			M->wins++;
		else if (rec.result == (black ? PF_RESULT_WHITE :
		    PF_RESULT_BLACK))
			M->losses++;
	}
	/* a twin's policy is its last, the one a trainer reads (the
	   loader, posexport) */
	pf_ext_iter_init(&it, &rec);
	while (pf_ext_next(&it, &x) == 1)
		if (x.type == PF_EXT_POLICY)
			last_policy = x.data;
	pf_ext_iter_init(&it, &rec);
	while ((rv = pf_ext_next(&it, &x)) == 1) {
		if (x.type == PF_EXT_EVAL &&
		    pf_eval_decode_head(&x, &ev) == -1)
			R->merge_bad++;
		else if (x.type == PF_EXT_VALUE &&
		    pf_value_decode(&x, &va) == -1)
			R->merge_bad++;
		else if (x.type == PF_EXT_EVAL) {
			struct eslot *e;

			for (i = 0; i < M->ne && M->es[i].kind !=
			    ev.limit_kind; i++)
				;
			e = &M->es[i];
			if (i == M->ne) {
				if (M->ne == MAX_ESLOTS)
					continue;
				M->ne++;
				e->kind = ev.limit_kind;
				e->data = NULL;
				e->kept = NULL;
			}
			if (e->data == NULL || ev.limit > e->limit ||
			    (ev.limit == e->limit && ev.depth > e->depth)) {
				d = x.data;
				if (copy && !first && (d = keep_ext(&e->buf,
				    &e->cap, x.data, x.len)) == NULL)
					goto oom;
				e->data = d;
				e->len = x.len;
				e->limit = ev.limit;
				e->depth = ev.depth;
			}
			if (first && (e->kept == NULL || ev.limit > e->klimit ||
			    (ev.limit == e->klimit && ev.depth > e->kdepth))) {
				e->kept = x.data;
				e->klimit = ev.limit;
				e->kdepth = ev.depth;
			}
		} else if (x.type == PF_EXT_VALUE && isfinite(va.target)) {
			struct vslot *v;

			for (i = 0; i < M->nv && !vslot_match(&M->vs[i],
			    x.data); i++)
				;
			v = &M->vs[i];
			if (i == M->nv) {
				if (M->nv == MAX_VSLOTS)
					continue;
				d = x.data;
				if (copy && !first && (d = keep_ext(&v->buf,
				    &v->cap, x.data, x.len)) == NULL)
					goto oom;
				M->nv++;
				v->method = x.data[0];
				v->scale = x.data[1];
				v->p1 = pf_get32(x.data + 4);
				v->p2 = pf_get32(x.data + 8);
				v->lambda = pf_get32(x.data + 12);
				v->sum = v->weight = 0;
				v->data = d;
				v->len = x.len;
				v->in_kept = 0;
			}
			v->sum += w * va.target;
			v->weight += w;
		} else if (x.type == PF_EXT_POLICY && x.data == last_policy) {
			if (M->pol_member == -1) {
				if (pf_policy_decode(&x, &M->pref) == -1) {
					R->merge_bad++;
					continue;
				}
				if (M->pref.n == 0)
					continue;
				d = x.data;
				if (copy && !first && (d = keep_ext(&M->pbuf,
				    &M->pcap, x.data, x.len)) == NULL)
					goto oom;
				M->pol_member = (int)M->n;
				M->pol_data = d;
				M->policy = 1;
				for (i = 0; i < M->pref.n; i++)
					M->acc[i] = w * M->pref.prob[i];
				M->pweight = w;
			} else if (M->policy) {
				if (pf_policy_decode(&x, &R->ptmp) == -1) {
					R->merge_bad++;
					M->policy = 0;
				} else if (policy_add(R, M, &R->ptmp, w) == -1)
					M->policy = 0;
				else
					M->pweight += w;
			}
		}
	}
	if (rv < 0)
		R->merge_bad++;		/* a malformed extension area */
	M->n++;
	return 0;
oom:
	pf_warn("out of memory");
	return -1;
}

/*
 * The merged record of M's members (at least one), its extensions in
 * R->mb; one member is the record as it came.  The merge:
 *   - the kept record's extensions, in their order, except that
 *   - each value target is the mean of those of the twins with the same
 *     method and parameters (weighted by their merge counts), and a value
 *     target only other twins have is added;
 *   - the policy is the mean, move by move, when every twin with a policy
 *     has one of the same method over the same moves (else the kept
 *     record's stays), requantised to 65535;
 *   - per evaluation limit kind, the deepest evaluation of all the twins
 *     (the greatest limit, then depth; the first of equals) replaces the
 *     kept record's deepest of that kind, or is added;
 *   - a merge extension replaces any the twins had: the records merged
 *     and their results from the side to move's view.
 * The members are added in input order, so the result does not depend on
 * how they were gathered.  0 / -1.
 */
static int
merger_finish(struct run *R, struct merger *M, pf_record *out)
{
	const struct vslot *vs = M->vs;
	const struct eslot *es = M->es;
	pf_ext_iter it;
	pf_ext x;
	pf_merge mg;
	uint8_t *p;
	int i, policy = M->policy;

	*out = M->kept;
	if (M->n == 1)
		return 0;
	if (policy) {
		uint16_t q[PF_MAX_MOVES];

		for (i = 0; i < M->pref.n; i++)
			M->acc[i] /= M->pweight * 65535.0;
		if (pf_policy_quantize(M->acc, M->pref.n, q) == -1)
			policy = 0;
		else
			for (i = 0; i < M->pref.n; i++)
				M->pref.prob[i] = q[i];
	}

	/* the kept record's extensions, some replaced */
	pf_extbuf_reset(&R->mb);
	pf_ext_iter_init(&it, &M->kept);
	while (pf_ext_next(&it, &x) == 1) {
		const uint8_t *data = x.data;
		uint32_t len = x.len;

		if (x.type == PF_EXT_MERGE)
			continue;
		if (x.type == PF_EXT_EVAL)
			for (i = 0; i < M->ne; i++)
				if (es[i].kept == x.data) {
					data = es[i].data;
					len = es[i].len;
				}
		if ((p = append_ext(&R->mb, data, len)) == NULL)
			goto oom;
		if (x.type == PF_EXT_VALUE && len >= 20)
			for (i = 0; i < M->nv; i++)
				if (vslot_match(&vs[i], p)) {
					pf_putf32(p + 16, (float)(vs[i].sum /
					    vs[i].weight));
					M->vs[i].in_kept = 1;
					break;
				}
		if (x.type == PF_EXT_POLICY && x.data == M->pol_data && policy)
			for (i = 0; i < M->pref.n; i++)
				pf_put16(p + 12 + 4 * i + 2, M->pref.prob[i]);
	}
	/* what only the other twins had */
	for (i = 0; i < M->ne; i++)
		if (es[i].kept == NULL &&
		    append_ext(&R->mb, es[i].data, es[i].len) == NULL)
			goto oom;
	for (i = 0; i < M->nv; i++) {
		if (vs[i].in_kept)
			continue;
		if ((p = append_ext(&R->mb, vs[i].data, vs[i].len)) == NULL)
			goto oom;
		pf_putf32(p + 16, (float)(vs[i].sum / vs[i].weight));
	}
	if (policy && M->pol_member > 0) {
		if ((p = append_ext(&R->mb, M->pol_data, (uint32_t)(12 +
		    4 * M->pref.n))) == NULL)
			goto oom;
		/* only the fields the policy defines: the length says so */
		pf_put32(p - 4, (uint32_t)(12 + 4 * M->pref.n));
		for (i = 0; i < M->pref.n; i++)
			pf_put16(p + 12 + 4 * i + 2, M->pref.prob[i]);
	}
	mg.count = M->count > UINT32_MAX ? UINT32_MAX : (uint32_t)M->count;
	mg.wins = M->wins > UINT32_MAX ? UINT32_MAX : (uint32_t)M->wins;
	mg.draws = M->draws > UINT32_MAX ? UINT32_MAX : (uint32_t)M->draws;
	mg.losses = M->losses > UINT32_MAX ? UINT32_MAX : (uint32_t)M->losses;
	if (pf_merge_encode(&mg, &R->mb) == -1)
		goto oom;
	out->ext = R->mb.data;
	out->ext_len = (uint32_t)R->mb.len;
	return 0;
oom:
	pf_warn("out of memory");
	return -1;
}

/* ---- pass 2: load, deduplicate, shuffle, write ------------------------ */

static uint64_t
pow2_at_least(uint64_t n)
{
	uint64_t p = 16;

	while (p < n)
		p <<= 1;
	return p;
}

/* Slots of the twin table (u32) and of the across set (u64). */
static uint64_t
twin_slots(uint64_t n)
{
	return pow2_at_least(n * 2);
}

static uint64_t
set_slots(uint64_t n)
{
	return pow2_at_least(n + n / 3 + 1);
}

/* The memory a file takes loaded: the records, their offsets, and with
   --dedup their keys and the twin table (and the twin chains and the
   order of the kept ones for merge).  UINT64_MAX: too many records for
   32-bit indices. */
static uint64_t
need_load(const struct run *R, const struct tmpfile *t)
{
	uint64_t n = t->count, need;

	if (n == 0)
		return 0;
	if (n >= UINT32_MAX - 1)
		return UINT64_MAX;
	need = t->bytes + 8 * n;
	if (R->o->dedup != DEDUP_NONE)
		need += 8 * n + 4 * twin_slots(n);
	if (R->o->dedup == DEDUP_MERGE)
		need += 8 * n;
	return need;
}

static int
set_add(struct run *R, uint64_t k)
{
	uint64_t i = (k ^ (k >> 29)) & R->set_mask;

	while (R->set[i] != 0) {
		if (R->set[i] == k)
			return 0;
		i = (i + 1) & R->set_mask;
	}
	R->set[i] = k;
	return 1;
}

static int
set_has(const struct run *R, uint64_t k)
{
	uint64_t i = (k ^ (k >> 29)) & R->set_mask;

	while (R->set[i] != 0) {
		if (R->set[i] == k)
			return 1;
		i = (i + 1) & R->set_mask;
	}
	return 0;
}

/*
 * p with room for n elements of size sz, its contents not kept.  The
 * buffers of pass 2 are kept from file to file, so that each file does
 * not pay for fresh pages: they are allocated for up to twice n, but no
 * more than most (what the memory allows), since only the pages a file
 * uses become resident.  NULL (p freed) when out of memory.
 */
static void *
reserve(void *p, uint64_t *cap, uint64_t n, uint64_t most, size_t sz)
{
	uint64_t want = n * 2 < most ? n * 2 : most;

	if (n <= *cap)
		return p;
	if (want < n)
		want = n;
	free(p);
	*cap = 0;
	if (want > SIZE_MAX / sz || (p = malloc((size_t)want * sz)) ==
	    NULL) {
		pf_warn("out of memory");
		return NULL;
	}
	*cap = want;
	return p;
}

/* Read a whole temporary file into R->arena; 0 / -1. */
static int
load_tmp(struct run *R, const char *path, const struct tmpfile *t)
{
	struct stat sb;
	uint64_t got = 0;
	ssize_t n;
	int fd;

	if ((R->arena = reserve(R->arena, &R->arena_cap, t->bytes,
	    R->budget, 1)) == NULL)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &sb) == -1) {
		pf_warn("%s", path);
		if (fd != -1)
			close(fd);
		return -1;
	}
	if ((uint64_t)sb.st_size != t->bytes) {
		pf_warnx("%s: damaged temporary file", path);
		close(fd);
		return -1;
	}
	while (got < t->bytes) {
		size_t ask = t->bytes - got > (1u << 30) ? (1u << 30) :
		    (size_t)(t->bytes - got);

		if ((n = read(fd, R->arena + got, ask)) == -1) {
			if (errno == EINTR)
				continue;
			pf_warn("%s", path);
			close(fd);
			return -1;
		}
		if (n == 0) {
			pf_warnx("%s: damaged temporary file", path);
			close(fd);
			return -1;
		}
		got += (uint64_t)n;
	}
	close(fd);
	return 0;
}

/*
 * Load one split's file of a group, drop the records whose position the
 * first split has (filter), note the positions (build_set), drop or
 * chain twins, shuffle and append to the shards.
 */
static int
do_file(struct run *R, struct out *O, const char *path,
    const struct tmpfile *t, uint64_t id, int build_set, int filter)
{
	const struct opts *o = R->o;
	int dedup = o->dedup, merge = o->dedup == DEDUP_MERGE;
	uint8_t *arena;
	uint64_t *off, *key = NULL, pos, st, i, j, n, nkeep, mask = 0, most;
	uint32_t *table = NULL, *next = NULL, *order = NULL, *slot;
	pf_record rec;

	if (t->count == 0)
		return 0;
	most = R->budget / PF_CORE_SIZE;
	if (load_tmp(R, path, t) == -1 || (R->off = reserve(R->off,
	    &R->off_cap, t->count, most, sizeof(*R->off))) == NULL)
		return -1;
	arena = R->arena;
	off = R->off;
	if (dedup) {
		mask = twin_slots(t->count) - 1;
		if ((key = R->key = reserve(R->key, &R->key_cap, t->count,
		    most, sizeof(*key))) == NULL || (table = R->table =
		    reserve(R->table, &R->table_cap, mask + 1,
		    twin_slots(most), sizeof(*table))) == NULL)
			return -1;
		memset(table, 0, (mask + 1) * sizeof(*table));
	}
	if (merge && ((next = R->next = reserve(R->next, &R->next_cap,
	    t->count, most, sizeof(*next))) == NULL || (order = R->order =
	    reserve(R->order, &R->order_cap, t->count, most,
	    sizeof(*order))) == NULL))
		return -1;

	/* index the records in input order: the first of twins stays */
	n = nkeep = 0;
	for (pos = 0, i = 0; i < t->count; i++) {
		uint32_t len;
		uint64_t k = 0;

		if (t->bytes - pos < PF_CORE_SIZE ||
		    (len = pf_get32(arena + pos)) < PF_CORE_SIZE ||
		    len > t->bytes - pos) {
			pf_warnx("%s: damaged temporary file", path);
			return -1;
		}
		if (R->hashed)
			k = pos_key(R, arena + pos + 4);
		if (build_set)
			set_add(R, k);
		if (filter && set_has(R, k)) {
			O->across++;
			pos += len;
			continue;
		}
		if (dedup) {
			uint64_t h = (k ^ (k >> 29)) & mask;

			for (slot = &table[h]; *slot != 0;
			    slot = &table[h = (h + 1) & mask]) {
				j = *slot - 1;
				if (key[j] == k && memcmp(arena + off[j] + 4,
				    arena + pos + 4, PF_POS_KEY_SIZE) == 0)
					break;
			}
			if (*slot != 0) {
				O->dropped++;
				if (merge) {
					/* after the first: reversed below */
					j = *slot - 1;
					if (next[j] == NO_LINK)
						O->merged++;
					off[n] = pos;
					key[n] = k;
					next[n] = next[j];
					next[j] = (uint32_t)n;
					n++;
				}
				pos += len;
				continue;
			}
			*slot = (uint32_t)(n + 1);
			key[n] = k;
		}
		if (merge) {
			next[n] = NO_LINK;
			order[nkeep] = (uint32_t)n;
		}
		off[n++] = pos;
		nkeep++;
		pos += len;
	}
	if (pos != t->bytes) {
		pf_warnx("%s: damaged temporary file", path);
		return -1;
	}
	R->loaded += t->count;
	R->loaded_bytes += t->bytes;

	st = mix64(o->seed, (uint64_t)O->split, id, 0x53485546ull);
	if (merge)
		for (i = nkeep; i > 1; i--) {
			uint32_t tmp;

			j = below(&st, i);
			tmp = order[i - 1];
			order[i - 1] = order[j];
			order[j] = tmp;
		}
	else
		for (i = nkeep; i > 1; i--) {
			uint64_t tmp;

			j = below(&st, i);
			tmp = off[i - 1];
			off[i - 1] = off[j];
			off[j] = tmp;
		}
	for (i = 0; i < nkeep; i++) {
		const uint8_t *p;

		/* the records are read in random order: ask for them early */
		if (i + 8 < nkeep) {
			p = arena + off[merge ? order[i + 8] : i + 8];
			__builtin_prefetch(p);
			__builtin_prefetch(p + 64);
		}
		if (merge && next[order[i]] != NO_LINK) {
			uint32_t head = order[i], *mem;
			size_t nm = 0, a, b;

			for (j = head; j != NO_LINK; j = next[j]) {
				if (nm == R->members_cap) {
					size_t c = nm ? nm * 2 : 64;

					if ((mem = realloc(R->members, c *
					    sizeof(*mem))) == NULL) {
						pf_warn("out of memory");
						return -1;
					}
					R->members = mem;
					R->members_cap = c;
				}
				R->members[nm++] = (uint32_t)j;
			}
			/* head, then the others in input order */
			for (a = 1, b = nm - 1; a < b; a++, b--) {
				uint32_t tmp = R->members[a];

				R->members[a] = R->members[b];
				R->members[b] = tmp;
			}
			merger_reset(&R->merger);
			for (a = 0; a < nm; a++)
				if (merger_add(R, &R->merger, arena +
				    off[R->members[a]], 0) == -1)
					return -1;
			if (merger_finish(R, &R->merger, &rec) == -1)
				return -1;
		} else
			rec_view(arena + off[merge ? order[i] : i], &rec);
		if (shard_put(R, O, &rec) == -1)
			return -1;
		if ((i & 0xfff) == 0xfff)
			progress(R, 2, 0);
	}
	unlink(path);
	return 0;
}

static int do_group(struct run *R, struct out *outs, int s0, int s1,
    int level, uint64_t id, const struct tmpfile *tf);

/*
 * Positions seen while a group is re-scattered, exactly (key and packed
 * position), in a table of a fixed size: twins found there are dropped
 * before they reach a sub-bucket.  A position re-scatters to one
 * sub-bucket with all its twins, so without this a position with more
 * twins than the memory holds (every game's first positions) would be
 * loaded whole however deep the re-scattering went.  When the table is
 * full, new positions pass unchecked: pass 2 drops their twins as ever.
 */
struct twin {
	uint64_t key;		/* 0: empty */
	uint8_t pos[PF_POS_KEY_SIZE];
};

struct twins {
	struct twin *t;
	uint64_t mask, used;
	int full;		/* a position was not added: no room */
};

static int
twins_init(struct twins *w, uint64_t bytes)
{
	uint64_t n = 1024;

	while (n * 2 * sizeof(struct twin) <= bytes)
		n *= 2;
	w->mask = n - 1;
	w->used = 0;
	w->full = 0;
	if ((w->t = calloc((size_t)n, sizeof(*w->t))) == NULL) {
		pf_warn("out of memory");
		return -1;
	}
	return 0;
}

static void
twins_clear(struct twins *w)
{
	memset(w->t, 0, (size_t)(w->mask + 1) * sizeof(*w->t));
	w->used = 0;
	w->full = 0;
}

/* 1 when pos (key k) is in w; else 0, and it is added if add and there
   is room (the table at most half full). */
static int
twins_find(struct twins *w, uint64_t k, const uint8_t *pos, int add)
{
	uint64_t i;

	k = k ? k : 1;
	for (i = (k ^ (k >> 29)) & w->mask; w->t[i].key != 0;
	    i = (i + 1) & w->mask)
		if (w->t[i].key == k && memcmp(w->t[i].pos, pos,
		    PF_POS_KEY_SIZE) == 0)
			return 1;
	if (add && w->used < (w->mask + 1) / 2) {
		w->t[i].key = k;
		memcpy(w->t[i].pos, pos, PF_POS_KEY_SIZE);
		w->used++;
	} else if (add)
		w->full = 1;
	return 0;
}

/* Open split s's file of bucket id at level for reading; 0 / -1. */
static int
bucket_reader(struct run *R, struct tmpreader *tr, int s, int level,
    uint64_t id, const struct tmpfile *t)
{
	char path[PATH_MAX];
	uint64_t quarter = R->o->memory / 4;

	bucket_path(path, sizeof(path), R->o->dir, s, level, id);
	if (tmpreader_open(tr, path, t, READ_CHUNK < quarter ? READ_CHUNK :
	    (size_t)quarter) == -1) {
		tmpreader_close(tr);
		return -1;
	}
	return 0;
}

/*
 * --dedup merge: the positions of a group that may have more twins than
 * the memory holds, merged while the group is scattered again, so that
 * each reaches its sub-bucket as one record.  Per split, one pass finds
 * them in a fixed table (Misra and Gries: of n records, every position of
 * more than n / (k + 1) is among the k kept); a second scatters the
 * others and adds these to a merger each, in input order, as pass 2
 * would, so that the merged record is the one pass 2 would make.
 */
struct heavy {
	uint64_t key;		/* 0: empty */
	uint64_t count;
	uint8_t pos[PF_POS_KEY_SIZE];
	uint32_t splits;	/* the splits it is merged in */
	int in_first;		/* --dedup-across: the first split has it */
	int merger;		/* this split's, or -1 */
};

struct heavies {
	struct heavy *h;	/* the table being found, then the found */
	size_t n, k;
	uint32_t *idx;		/* 1 + index into h, by key */
	uint64_t mask;
};

static void
heavies_insert(struct heavies *H, size_t i)
{
	uint64_t j;

	for (j = H->h[i].key & H->mask; H->idx[j] != 0; j = (j + 1) & H->mask)
		;
	H->idx[j] = (uint32_t)i + 1;
}

static void
heavies_index(struct heavies *H)
{
	size_t i;

	memset(H->idx, 0, (size_t)(H->mask + 1) * sizeof(*H->idx));
	for (i = 0; i < H->n; i++)
		heavies_insert(H, i);
}

/* pos's entry (key k), or NULL. */
static struct heavy *
heavies_find(const struct heavies *H, uint64_t k, const uint8_t *pos)
{
	uint64_t j;
	struct heavy *e;

	for (j = k & H->mask; H->idx[j] != 0; j = (j + 1) & H->mask) {
		e = &H->h[H->idx[j] - 1];
		if (e->key == k && memcmp(e->pos, pos, PF_POS_KEY_SIZE) == 0)
			return e;
	}
	return NULL;
}

/* Count pos in the table of k (Misra and Gries). */
static void
heavies_count(struct heavies *H, uint64_t k, const uint8_t *pos)
{
	struct heavy *e;
	size_t i, n;

	if ((e = heavies_find(H, k, pos)) != NULL) {
		e->count++;
		return;
	}
	if (H->n < H->k) {
		e = &H->h[H->n++];
		memset(e, 0, sizeof(*e));
		e->key = k;
		e->count = 1;
		memcpy(e->pos, pos, PF_POS_KEY_SIZE);
		heavies_insert(H, H->n - 1);
		return;
	}
	/* one less of each: those at none leave */
	for (i = n = 0; i < H->n; i++)
		if (--H->h[i].count > 0)
			H->h[n++] = H->h[i];
	H->n = n;
	heavies_index(H);
}

/*
 * Find the positions of the group's splits s0 .. s1-1 that may have many
 * twins, into H (a table of H->k per split; H->h has room for it and for
 * H->k per split after it): those counted at least twice, each with the
 * splits it was found in.  0 / -1.
 */
static int
heavies_find_all(struct run *R, struct heavies *H, int s0, int s1,
    int level, uint64_t id, const struct tmpfile *tf)
{
	struct tmpreader tr;
	struct heavy *found = H->h + H->k, *e;
	size_t nfound = 0, i;
	const uint8_t *p;
	uint32_t len;
	int s, rv = 0;

	for (s = s0; s < s1; s++) {
		if (tf[s].count == 0)
			continue;
		H->n = 0;
		heavies_index(H);
		if (bucket_reader(R, &tr, s, level, id, &tf[s]) == -1)
			return -1;
		while ((rv = tmpreader_next(&tr, &p, &len)) == 1)
			heavies_count(H, pos_key(R, p + 4), p + 4);
		tmpreader_close(&tr);
		if (rv == -1)
			return -1;
		/* the found ones, each once, after the table */
		for (i = 0; i < H->n; i++) {
			if (H->h[i].count < 2)
				continue;
			for (e = found; e < found + nfound; e++)
				if (e->key == H->h[i].key && memcmp(e->pos,
				    H->h[i].pos, PF_POS_KEY_SIZE) == 0)
					break;
			if (e == found + nfound) {
				*e = H->h[i];
				e->splits = 0;
				nfound++;
			}
			e->splits |= 1u << (s - s0);
		}
	}
	memmove(H->h, found, nfound * sizeof(*found));
	H->n = nfound;
	for (i = 0; i < H->n; i++) {
		H->h[i].in_first = 0;
		H->h[i].merger = -1;
	}
	heavies_index(H);
	return 0;
}

/*
 * Scatter every file of a group too large to load into nsub sub-buckets
 * (by position when positions are compared, so that sub-group i of every
 * split holds the same positions), then do each sub-group.
 */
static int
rescatter_group(struct run *R, struct out *outs, int s0, int s1,
    int level, uint64_t id, const struct tmpfile *tf, uint64_t need)
{
	const struct opts *o = R->o;
	uint64_t nsub = need / R->budget + 2, i;
	struct tmpfile (*sub)[MAX_BUCKETS] = NULL, one[MAX_SPLITS];
	struct bucket *w = NULL;
	struct tmpreader tr;
	struct twins own = { NULL, 0, 0, 0 }, first = { NULL, 0, 0, 0 };
	char path[PATH_MAX];
	const uint8_t *p;
	uint32_t len;
	size_t cap;
	/* twins are dropped now (--dedup first: the first is kept, and the
	   records of a bucket are in input order), and with --dedup-across
	   the positions of the first split from the others */
	int drop_twins = o->dedup == DEDUP_FIRST, across = s1 - s0 > 1;
	/* --dedup-across alone: the first split's twins are all kept, so
	   they cannot be dropped; when its positions all fit the table, the
	   others are filtered here completely, and every split is then
	   scattered at random (a position's twins spread, as without
	   --dedup) */
	int randomly = 0;
	/* --dedup merge: the twins of the positions of many merged now */
	int fold = o->dedup == DEDUP_MERGE && R->hashed;
	struct heavies H = { NULL, 0, 0, NULL, 0 };
	struct merger *mg = NULL;
	size_t nmg = 0, used = 0, m;
	int s, rv = 0, ret = -1;
	uint64_t tbytes = 0;
	pf_record rec;

	if (nsub > MAX_BUCKETS)
		nsub = MAX_BUCKETS;
	cap = (size_t)(o->memory / 4 / nsub);
	if (cap > R->block_size)
		cap = R->block_size;
	if (cap < 4096)
		cap = 4096;
	if ((sub = calloc(MAX_SPLITS, sizeof(*sub))) == NULL ||
	    (w = calloc(nsub, sizeof(*w))) == NULL) {
		pf_warn("out of memory");
		goto out;
	}
	for (i = 0; i < nsub; i++)
		w[i].fd = -1;
	/* tables for the records at hand (each cleared per split: not an
	   eighth of the memory to clear for a small group) */
	for (s = s0; s < s1; s++)
		if (4 * tf[s].count * sizeof(struct twin) > tbytes)
			tbytes = 4 * tf[s].count * sizeof(struct twin);
	if (tbytes > o->memory / 8)
		tbytes = o->memory / 8;
	if ((drop_twins && twins_init(&own, tbytes) == -1) ||
	    (across && twins_init(&first, tbytes) == -1))
		goto out;
	if (fold) {
		/* mergers for an eighth of the memory, as the twin table of
		   --dedup first would take */
		uint64_t avg = 0, each;

		for (s = s0; s < s1; s++)
			if (tf[s].count > 0 && tf[s].bytes / tf[s].count > avg)
				avg = tf[s].bytes / tf[s].count;
		each = sizeof(struct merger) + 2 * avg;
		H.k = (size_t)(o->memory / 8 / each);
		if (H.k < 2)
			H.k = 2;
		if (H.k > 2 * MAX_BUCKETS)
			H.k = 2 * MAX_BUCKETS;
		H.mask = pow2_at_least(2 * H.k * (size_t)(s1 - s0 + 1)) - 1;
		if ((H.h = calloc(H.k * (size_t)(s1 - s0 + 1),
		    sizeof(*H.h))) == NULL || (H.idx = calloc(H.mask + 1,
		    sizeof(*H.idx))) == NULL || (mg = calloc(H.k,
		    sizeof(*mg))) == NULL) {
			pf_warn("out of memory");
			goto out;
		}
		nmg = H.k;
		if (heavies_find_all(R, &H, s0, s1, level, id, tf) == -1)
			goto out;
	}
	if (across && o->dedup == DEDUP_NONE && R->hashed && tf[s0].count) {
		if (bucket_reader(R, &tr, s0, level, id, &tf[s0]) == -1)
			goto out;
		while (!first.full && (rv = tmpreader_next(&tr, &p,
		    &len)) == 1)
			(void)twins_find(&first, pos_key(R, p + 4), p + 4, 1);
		tmpreader_close(&tr);
		if (!first.full && rv == -1)
			goto out;
		randomly = !first.full;
		if (!randomly)
			twins_clear(&first);
	}
	for (s = s0; s < s1; s++) {
		uint64_t k, idx = 0;

		if (tf[s].count == 0)
			continue;
		if (drop_twins)
			twins_clear(&own);
		for (m = 0; m < H.n; m++)
			H.h[m].merger = -1;
		used = 0;
		for (i = 0; i < nsub; i++)
			/* unique per level: i + 1 is 1 .. MAX_BUCKETS */
			bucket_init(&w[i], s, level + 1, id *
			    (MAX_BUCKETS + 1) + i + 1, cap);
		if (bucket_reader(R, &tr, s, level, id, &tf[s]) == -1)
			goto out;
		while ((rv = tmpreader_next(&tr, &p, &len)) == 1) {
			uint64_t pk = R->hashed ? pos_key(R, p + 4) : 0;
			struct heavy *h = NULL;

			if (R->hashed && (drop_twins || across || H.n)) {
				if (across && s > s0 && twins_find(&first,
				    pk, p + 4, 0)) {
					outs[s].across++;
					continue;
				}
				if (H.n && (h = heavies_find(&H, pk,
				    p + 4)) != NULL) {
					/* exactly, though the table be full */
					if (s > s0 && h->in_first) {
						outs[s].across++;
						continue;
					}
					if (across && s == s0)
						h->in_first = 1;
				}
				/* a twin is dropped here only when it is
				   known not to be in the first split (that
				   drop is counted as across, however the
				   memory scatters the records) */
				if (drop_twins && !(across && s > s0 &&
				    first.full) && twins_find(&own, pk, p + 4,
				    1)) {
					outs[s].dropped++;
					continue;
				}
				if (across && s == s0 && !randomly)
					(void)twins_find(&first, pk, p + 4, 1);
				if (h != NULL && (h->splits >> (s - s0) & 1)) {
					if (h->merger == -1) {
						h->merger = (int)used++;
						merger_reset(&mg[h->merger]);
					}
					if (merger_add(R, &mg[h->merger], p,
					    1) == -1) {
						rv = -1;
						break;
					}
					continue;
				}
			}
			k = R->hashed && !randomly ? remix(pk,
			    (uint64_t)level + 1) : mix64(idx, (uint64_t)level,
			    id, o->seed);
			idx++;
			if (bucket_put(R, &w[fastrange(k, nsub)], NULL, p,
			    len) == -1) {
				rv = -1;
				break;
			}
		}
		tmpreader_close(&tr);
		if (rv == -1)
			goto out;
		/* the merged, each where its position goes */
		for (m = 0; m < H.n; m++) {
			struct merger *M;

			if (H.h[m].merger == -1)
				continue;
			M = &mg[H.h[m].merger];
			if (M->n > 1) {
				outs[s].dropped += M->n - 1;
				outs[s].merged++;
			}
			if (merger_finish(R, M, &rec) == -1 ||
			    bucket_put(R, &w[fastrange(remix(H.h[m].key,
			    (uint64_t)level + 1), nsub)], &rec, NULL,
			    PF_CORE_SIZE + (size_t)rec.ext_len) == -1)
				goto out;
		}
		for (i = 0; i < nsub; i++)
			if (bucket_finish(R, &w[i], &sub[s][i]) == -1)
				goto out;
		bucket_path(path, sizeof(path), o->dir, s, level, id);
		unlink(path);
	}
	free(w);
	w = NULL;
	free(own.t);
	free(first.t);
	own.t = first.t = NULL;
	for (m = 0; m < nmg; m++)
		merger_free(&mg[m]);
	free(mg);
	free(H.h);
	free(H.idx);
	mg = NULL;
	H.h = NULL;
	H.idx = NULL;
	nmg = 0;
	for (i = 0; i < nsub; i++) {
		memset(one, 0, sizeof(one));
		for (s = s0; s < s1; s++)
			one[s] = sub[s][i];
		if (do_group(R, outs, s0, s1, level + 1, id *
		    (MAX_BUCKETS + 1) + i + 1, one) == -1)
			goto out;
	}
	ret = 0;
out:
	if (w != NULL)
		for (i = 0; i < nsub; i++)
			bucket_free(&w[i]);
	free(w);
	free(sub);
	free(own.t);
	free(first.t);
	for (m = 0; m < nmg; m++)
		merger_free(&mg[m]);
	free(mg);
	free(H.h);
	free(H.idx);
	return ret;
}

/*
 * Do bucket id of splits s0 .. s1-1 (one split, or with --dedup-across
 * all of them): re-scattered first when it does not fit in the memory
 * (with the first split's position set when there are others).
 */
static int
do_group(struct run *R, struct out *outs, int s0, int s1, int level,
    uint64_t id, const struct tmpfile *tf)
{
	const struct opts *o = R->o;
	int multi = s1 - s0 > 1, s;
	uint64_t need = 0, nrec = 0, setb = 0, x;
	char path[PATH_MAX];

	if (multi && tf[s0].count > 0)
		setb = 8 * set_slots(tf[s0].count);
	for (s = s0; s < s1; s++) {
		x = need_load(R, &tf[s]);
		if (x > need)
			need = x;
		nrec += tf[s].count;
	}
	if (nrec == 0)
		return 0;
	if (need != UINT64_MAX)
		need += setb;
	if (need > R->budget && level < MAX_LEVEL && nrec > 1)
		return rescatter_group(R, outs, s0, s1, level, id, tf,
		    need == UINT64_MAX ? R->budget * MAX_BUCKETS : need);
	if (need == UINT64_MAX) {
		pf_warnx("%s: a bucket of over 2^32 records",
		    o->dir);
		return -1;
	}
	if (setb > 0) {
		R->set_mask = setb / 8 - 1;
		if ((R->set = calloc(setb / 8, sizeof(*R->set))) == NULL) {
			pf_warn("out of memory");
			return -1;
		}
	}
	for (s = s0; s < s1; s++) {
		bucket_path(path, sizeof(path), o->dir, s, level, id);
		if (do_file(R, &outs[s], path, &tf[s], id, multi && s == s0 &&
		    R->set != NULL, multi && s > s0 && R->set != NULL) == -1) {
			free(R->set);
			R->set = NULL;
			return -1;
		}
	}
	free(R->set);
	R->set = NULL;
	return 0;
}

/* ---- manifest and verify ---------------------------------------------- */

static int
write_manifest(struct run *R, const struct out *outs, int argc,
    char **argv, int oargc, char **oargv)
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
	for (int k = 0; k < oargc && len < sizeof(cmd); k++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s",
		    k ? " " : "", oargv[k]);
	fprintf(fp, "{\"format\":\"%s\",\"version\":1,\"seed\":%" PRIu64
	    ",\"dedup\":%s,\"dedup_mode\":\"%s\",\"dedup_across\":%s,"
	    "\"splits\":{", o->format ? o->format : "posflow", o->seed,
	    o->dedup ? "true" : "false",
	    dedup_names[o->dedup], o->across ? "true" : "false");
	for (int s = 0; s < o->nsplits; s++) {
		if (s)
			putc(',', fp);
		pf_show_json_string(fp, o->split_name[s],
		    strlen(o->split_name[s]));
		fprintf(fp, ":%.10g", o->split_frac[s]);
	}
	fputs("},\"inputs\":[", fp);
	for (int k = 0; k < argc; k++) {
		if (k)
			putc(',', fp);
		pf_show_json_string(fp, argv[k], strlen(argv[k]));
	}
	if (argc == 0)
		pf_show_json_string(fp, "-", strlen("-"));
	fputs("],\"command\":", fp);
	pf_show_json_string(fp, cmd, strlen(cmd));
	fprintf(fp, ",\"records_in\":%" PRIu64 ",\"counts\":{", R->seq);
	for (int s = 0; s < o->nsplits; s++) {
		if (s)
			putc(',', fp);
		pf_show_json_string(fp, o->split_name[s],
		    strlen(o->split_name[s]));
		fprintf(fp, ":{\"in\":%" PRIu64 ",\"out\":%" PRIu64
		    ",\"duplicates\":%" PRIu64 ",\"merged\":%" PRIu64
		    ",\"across\":%" PRIu64 ",\"skipped\":%" PRIu64 "}",
		    R->split_in[s], outs[s].records, outs[s].dropped,
		    outs[s].merged, outs[s].across, outs[s].skipped);
	}
	fputs("},\"shards\":[", fp);
	for (i = 0; i < R->nshards; i++) {
		struct shardinfo *si = &R->shards[i];

		fputs(i ? ",\n" : "\n", fp);
		fputs("{\"file\":", fp);
		pf_show_json_string(fp, si->file, strlen(si->file));
		fputs(",\"split\":", fp);
		pf_show_json_string(fp, o->split_name[si->split],
		    strlen(o->split_name[si->split]));
		fprintf(fp, ",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64
		    ",\"xxh3\":\"%016" PRIx64 "\"}", si->records, si->bytes,
		    si->xxh3);
	}
	fputs("\n]}\n", fp);
	if (fflush(fp) == EOF || ferror(fp) || (fd = fileno(fp)) == -1 ||
	    fsync(fd) == -1) {
		pf_warn("%s", tmp);
		fclose(fp);
		unlink(tmp);
		return -1;
	}
	if (fclose(fp) == EOF || rename(tmp, final) == -1) {
		pf_warn("%s", final);
		unlink(tmp);
		return -1;
	}
	if (fsync_dir(o->dir) == -1) {
		/* a failed run leaves no manifest */
		pf_warn("%s", final);
		unlink(final);
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

/* A shard against its manifest entry: size, XXH3, and for posflow
   shards (count) the records read back. */
static int
verify_one(const char *dir, const char *file, uint64_t records,
    uint64_t bytes, uint64_t xxh3, int count)
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
	if (!count)
		return 0;
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

/*
 * Drop the blanks outside strings, in place: a manifest a JSON tool wrote
 * again (jq, json.dump with indent) reads as the one shard wrote.
 */
static void
json_compact(char *s)
{
	char *w = s;
	int in = 0, esc = 0;

	for (; *s != '\0'; s++) {
		if (in) {
			if (esc)
				esc = 0;
			else if (*s == '\\')
				esc = 1;
			else if (*s == '"')
				in = 0;
		} else if (*s == '"')
			in = 1;
		else if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			continue;
		*w++ = *s;
	}
	*w = '\0';
}

/*
 * The names of the splits a manifest's text lists ("splits":{...}, the
 * first such key: the splits come before any string a user gave) added
 * to l.  0; -1 when they cannot be read, -2 out of memory.
 */
static int
manifest_splits(const char *text, struct listed *l)
{
	struct mshard sp;
	const char *p;
	size_t k;

	if ((p = strstr(text, "\"splits\":{")) == NULL)
		return -1;
	p += 10;
	for (;;) {
		p += strspn(p, " \t\r\n,");
		if (*p == '}')
			return 0;
		if (*p++ != '"' || json_read_string(&p, sp.file,
		    sizeof(sp.file)) == -1)
			return -1;
		p += strspn(p, " \t\r\n");
		if (*p++ != ':')
			return -1;
		p += strspn(p, " \t\r\n");
		if ((k = strspn(p, "0123456789.-+eE")) == 0)
			return -1;
		p += k;
		if (!is_listed(l, sp.file) && listed_add(&sp, 1, l) == -1)
			return -2;
	}
}

/*
 * Call fn for each shard DIR/manifest.json lists, with posflow 1 for
 * posflow shards (0: another --format's), and add the names of the splits
 * it lists to splits unless NULL.  0; -1 when the manifest cannot be read
 * (errno), -2 when it is not one this tool wrote, -3 when fn returned -1
 * (fn reports) or out of memory (reported).
 */
static int
manifest_each(const char *dir, int (*fn)(const struct mshard *, int, void *),
    void *arg, struct listed *splits)
{
	char path[PATH_MAX], key[64], val[PATH_MAX];
	struct mshard m;
	const char *p;
	char *text = NULL;
	size_t len = 0;
	FILE *fp, *mem;
	int have, posflow, c, rv = -2;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	if ((mem = open_memstream(&text, &len)) == NULL) {
		fclose(fp);
		return -1;
	}
	while ((c = getc(fp)) != EOF)
		putc(c, mem);
	fclose(mem);
	fclose(fp);
	json_compact(text);
	/* the shards of another format (--format) are checked by size and
	   checksum only; the key is looked for anywhere, as a JSON tool may
	   have sorted the keys (jq -S), and a quote in a string is escaped */
	posflow = strstr(text, "\"format\":\"posflow\"") != NULL;
	if (splits != NULL && (c = manifest_splits(text, splits)) != 0) {
		if (c == -2) {
			pf_warnx("out of memory");
			rv = -3;
		}
		goto out;
	}
	/* "shards":[ is nowhere else: a split named shards is a key of an
	   object, and quotes in strings are escaped */
	if ((p = strstr(text, "\"shards\":[")) == NULL)
		goto out;
	p += 10;
	for (;;) {
		p += strspn(p, " \t\r\n,");
		if (*p == ']')
			break;
		if (*p != '{')
			goto out;
		p++;
		have = 0;
		memset(&m, 0, sizeof(m));
		for (;;) {
			p += strspn(p, " \t\r\n,");
			if (*p == '}') {
				p++;
				break;
			}
			if (*p++ != '"' || json_read_string(&p, key,
			    sizeof(key)) == -1)
				goto out;
			p += strspn(p, " \t\r\n");
			if (*p++ != ':')
				goto out;
			p += strspn(p, " \t\r\n");
			if (*p == '"') {
				p++;
				if (json_read_string(&p, val, sizeof(val)) ==
				    -1)
					goto out;
			} else {
				size_t k = strspn(p, "0123456789.-+eE");

				if (k == 0 || k >= sizeof(val))
					goto out;
				memcpy(val, p, k);
				val[k] = '\0';
				p += k;
			}
			if (strcmp(key, "file") == 0) {
				snprintf(m.file, sizeof(m.file), "%s", val);
				have |= 1;
			} else if (strcmp(key, "records") == 0) {
				m.records = strtoull(val, NULL, 10);
				have |= 2;
			} else if (strcmp(key, "bytes") == 0) {
				m.bytes = strtoull(val, NULL, 10);
				have |= 4;
			} else if (strcmp(key, "xxh3") == 0) {
				m.xxh3 = strtoull(val, NULL, 16);
				have |= 8;
			} else if (strcmp(key, "split") == 0)
				snprintf(m.split, sizeof(m.split), "%s", val);
		}
		if (have != 15)
			goto out;
		if (fn(&m, posflow, arg) == -1) {
			rv = -3;
			goto out;
		}
	}
	rv = 0;
out:
	free(text);
	return rv;
}

struct vstate {
	const char *dir;
	uint64_t total, nshards;
	struct listed files, splits;
};

static int
verify_shard(const struct mshard *m, int posflow, void *arg)
{
	struct vstate *v = arg;

	if (verify_one(v->dir, m->file, m->records, m->bytes, m->xxh3,
	    posflow) == -1)
		return -1;
	v->nshards++;
	v->total += m->records;
	if (listed_add(m, posflow, &v->files) == -1)
		goto oom;
	if (m->split[0] != '\0' && !is_listed(&v->splits, m->split)) {
		struct mshard sp;

		snprintf(sp.file, sizeof(sp.file), "%s", m->split);
		if (listed_add(&sp, posflow, &v->splits) == -1)
			goto oom;
	}
	return 0;
oom:
	pf_warnx("out of memory");
	return -1;
}

/* 1 when n, a file of the directory, is named as a shard of a split the
   manifest lists, and is not listed. */
static int
stray_shard(const struct vstate *v, const char *n)
{
	if (is_listed(&v->files, n))
		return 0;
	for (int i = 0; i < v->splits.n; i++)
		if (is_split_shard(v->splits.name[i], n))
			return 1;
	return 0;
}

static int
verify(const char *dir)
{
	char path[PATH_MAX];
	struct vstate v;
	struct dirent *de;
	DIR *d;
	int rv;

	memset(&v, 0, sizeof(v));
	v.dir = dir;
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	rv = manifest_each(dir, verify_shard, &v, &v.splits);
	if (rv == -1)
		pf_warn("%s", path);
	else if (rv == -2)
		pf_warnx("%s: not a manifest this tool can read", path);
	/* a file named as a shard of a listed split, but not listed: left
	   by something else, and a trainer that globs would read it */
	listed_sort(&v.files);
	if (rv == 0 && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (stray_shard(&v, de->d_name)) {
				pf_warnx("%s/%s: a shard the manifest does "
				    "not list", dir, de->d_name);
				rv = -1;
				break;
			}
		closedir(d);
	}
	for (int i = 0; i < v.files.n; i++)
		free(v.files.name[i]);
	free(v.files.name);
	for (int i = 0; i < v.splits.n; i++)
		free(v.splits.name[i]);
	free(v.splits.name);
	if (rv != 0)
		return PF_EXIT_DATA;
	pf_warnx("%s: %" PRIu64 " shards, %" PRIu64 " records: all good",
	    dir, v.nshards, v.total);
	return PF_EXIT_OK;
}

/*
 * Refuse an input operand that cannot be read, before the directory is
 * touched (a shard set missing an input must not look complete): one
 * missing or unreadable, a directory, a socket; standard input ("-")
 * that is a directory.  Pipes and devices are read as they come.  0 / -1
 * (reported).
 */
static int
check_input(const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") == 0) {
		if (fstat(STDIN_FILENO, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			errno = EISDIR;
			pf_warn("%s", pf_input_name(path));
			return -1;
		}
		return 0;
	}
	if (stat(path, &sb) == -1 || access(path, R_OK) == -1) {
		pf_warn("%s", path);
		return -1;
	}
	if (S_ISDIR(sb.st_mode)) {
		errno = EISDIR;
		pf_warn("%s", path);
		return -1;
	}
	if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) &&
	    !S_ISCHR(sb.st_mode) && !S_ISBLK(sb.st_mode)) {
		pf_warnx("%s: not a file, pipe or device", path);
		return -1;
	}
	return 0;
}

/*
 * After a failed run (a file that cannot be written, no memory, a damaged
 * temporary file), remove what it made, its files closed: the bucket
 * files (those it read through are gone already), the shard being
 * written, and the shards it completed, which without a manifest are no
 * shard set and hold disk space that may be what it lacked
 * (write_manifest removes its own temporary file).  The directory is
 * left as the run found it, less what prepare_dir removed.
 */
static void
remove_partial(const struct run *R, const struct out *outs)
{
	const char *dir = R->o->dir;
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < R->nshards; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, R->shards[i].file);
		if (unlink(path) == -1 && errno != ENOENT)
			pf_warn("%s", path);
	}
	for (i = 0; i < R->nmade; i++) {
		bucket_path(path, sizeof(path), dir, R->made[i].split,
		    R->made[i].level, R->made[i].id);
		if (unlink(path) == -1 && errno != ENOENT)
			pf_warn("%s", path);
	}
	/* (a shard renamed already is not there) */
	for (int s = 0; s < R->o->nsplits; s++)
		if (outs[s].tmp[0] != '\0' && unlink(outs[s].tmp) == -1 &&
		    errno != ENOENT)
			pf_warn("%s", outs[s].tmp);
}

static int
prepare_dir(const struct opts *o)
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
	/* one run writes the directory: held to the exit */
	if (pf_lock_dir(o->dir) == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/manifest.json", o->dir);
	if (!o->force && access(path, F_OK) == 0) {
		pf_warnx("%s: holds a complete shard set (manifest.json); "
		    "use -f to replace it", o->dir);
		return -1;
	}
	if (clean_dir(o) == -1)
		return -1;
	return 0;
}

/* ---- the run ---------------------------------------------------------- */

/*
 * Bytes the inputs will take loaded in pass 2: the sizes of the operands
 * that are files (compressed ones taken as 4x; standard input is taken as
 * a pipe, whatever it is), with the index (8 bytes a record of 48 or
 * more; with --dedup 16 to 24 more, with merge 8 more), else 0 (one
 * bucket, re-scattered when it grows past the budget).  Too many buckets
 * cost little, too few a second scatter.  *known: every input's size is
 * known (for the ETA), *total their bytes.
 */
static uint64_t
estimate_bytes(const struct opts *o, int argc, char **argv, int *known,
    uint64_t *total)
{
	uint64_t sum = 0;
	struct stat sb;
	unsigned char m[4];
	double factor = 1.2;

	*known = 1;
	*total = 0;
	if (argc == 0) {
		/* a file on standard input: its size for the ETA only.  The
		   buckets are those of a pipe (grown ones scattered again),
		   as for "-": standard input gives the same shards however
		   it is given. */
		if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
			*total = (uint64_t)sb.st_size;
		else
			*known = 0;
	}
	for (int i = 0; i < argc; i++) {
		FILE *fp;
		int comp = 0;

		if (strcmp(argv[i], "-") == 0 || stat(argv[i], &sb) == -1 ||
		    !S_ISREG(sb.st_mode)) {
			*known = 0;
			continue;
		}
		*total += (uint64_t)sb.st_size;
		if ((fp = fopen(argv[i], "rb")) != NULL) {
			if (fread(m, 1, 4, fp) == 4 && ((m[0] == 0x28 &&
			    m[1] == 0xB5) || (m[0] == 0x1F && m[1] == 0x8B)))
				comp = 1;
			fclose(fp);
		}
		sum += (uint64_t)sb.st_size * (comp ? 4 : 1);
	}
	if (o->dedup != DEDUP_NONE)
		factor += 0.75;
	if (o->dedup == DEDUP_MERGE)
		factor += 0.2;
	return (uint64_t)((double)sum * factor);
}

static int
run(struct run *R, int argc, char **argv)
{
	const struct opts *o = R->o;
	uint64_t est;
	int s, b, total = 0, i, maxb = 0;

	R->budget = o->memory / 2;
	R->hashed = o->dedup != DEDUP_NONE || (o->across && o->nsplits > 1);
	R->hseed = XXH64(&o->seed, sizeof(o->seed), 0x504F534B4559ull);
	R->kseed = XXH64(&o->seed, sizeof(o->seed), 0x5345514B4559ull);
	R->cur_fd = -1;
	est = estimate_bytes(o, argc, argv, &R->in_known, &R->in_total);
	for (s = 0; s < o->nsplits; s++) {
		/* with --dedup-across the first split's position set: up to
		   21 bytes a record beside its 48 or more */
		uint64_t e = (uint64_t)((double)est * o->split_frac[s] *
		    (o->across ? 1.4 : 1));
		uint64_t n = e / R->budget + 1;

		R->nbuckets[s] = n > MAX_BUCKETS ? MAX_BUCKETS : (int)n;
		if (R->nbuckets[s] > maxb)
			maxb = R->nbuckets[s];
	}
	/* --dedup-across: bucket b of every split holds the same positions */
	if (o->across && o->nsplits > 1)
		for (s = 0; s < o->nsplits; s++)
			R->nbuckets[s] = maxb;
	for (s = 0; s < o->nsplits; s++)
		total += R->nbuckets[s];
	/* every bucket is an open file with a buffer of 4K or more: at most
	   about MAX_BUCKETS of them, whatever the number of splits, the
	   fuller ones scattered again (one group at a time) */
	if (total > MAX_BUCKETS) {
		for (s = 0, maxb = 0; s < o->nsplits; s++) {
			b = (int)((int64_t)R->nbuckets[s] * MAX_BUCKETS /
			    total);
			R->nbuckets[s] = b > 1 ? b : 1;
			if (R->nbuckets[s] > maxb)
				maxb = R->nbuckets[s];
		}
		for (s = 0, total = 0; s < o->nsplits; s++) {
			if (o->across && o->nsplits > 1)
				R->nbuckets[s] = maxb;
			total += R->nbuckets[s];
		}
	}
	/* every bucket buffers its writes: keep them within a quarter of
	   the memory */
	R->block_size = (size_t)(o->memory / 4 / (uint64_t)total);
	if (R->block_size > PF_BLOCK_TARGET)
		R->block_size = PF_BLOCK_TARGET;
	if (R->block_size < 4096)
		R->block_size = 4096;
	for (s = 0; s < o->nsplits; s++) {
		R->bk[s] = calloc((size_t)R->nbuckets[s], sizeof(*R->bk[s]));
		R->tf[s] = calloc((size_t)R->nbuckets[s], sizeof(*R->tf[s]));
		if (R->bk[s] == NULL || R->tf[s] == NULL) {
			pf_warn("out of memory");
			return -1;
		}
		for (b = 0; b < R->nbuckets[s]; b++)
			bucket_init(&R->bk[s][b], s, 0, (uint64_t)b,
			    R->block_size);
	}
	phase_start(R);
	for (i = 0; i == 0 || i < argc; i++)
		if (scatter_file(R, argc ? argv[i] : "-") == -1)
			return -1;
	for (s = 0; s < o->nsplits; s++)
		for (b = 0; b < R->nbuckets[s]; b++)
			if (bucket_finish(R, &R->bk[s][b], &R->tf[s][b]) == -1)
				return -1;
	progress(R, 1, 1);
	return 0;
}

static int
write_splits(struct run *R, struct out *outs)
{
	const struct opts *o = R->o;
	struct tmpfile one[MAX_SPLITS];
	int s, b;

	phase_start(R);
	for (s = 0; s < o->nsplits; s++) {
		struct out *O = &outs[s];

		O->split = s;
		O->fd = -1;
		O->big = UINT64_MAX;
		if (o->per_shard)
			O->target = o->per_shard;
		else if (o->shards) {
			/* n shards whose sizes differ by one at most: the
			   records' remainder one each to the first shards
			   (sizes of the quotient rounded up made fewer
			   shards, 5 of 10 records for n = 9) */
			O->target = R->split_in[s] / o->shards + 1;
			O->big = R->split_in[s] % o->shards;
			if (O->big == 0) {
				O->target--;
				O->big = UINT64_MAX;
			}
		} else
			O->target = 1000000;
		if (O->target == 0)
			O->target = 1;
	}
	if (o->across && o->nsplits > 1) {
		for (b = 0; b < R->nbuckets[0]; b++) {
			for (s = 0; s < o->nsplits; s++)
				one[s] = R->tf[s][b];
			if (do_group(R, outs, 0, o->nsplits, 0, (uint64_t)b,
			    one) == -1)
				return -1;
		}
		for (s = 0; s < o->nsplits; s++)
			if (shard_close(R, &outs[s]) == -1)
				return -1;
	} else
		for (s = 0; s < o->nsplits; s++) {
			for (b = 0; b < R->nbuckets[s]; b++) {
				memset(one, 0, sizeof(one));
				one[s] = R->tf[s][b];
				if (do_group(R, outs, s, s + 1, 0, (uint64_t)b,
				    one) == -1)
					return -1;
			}
			if (shard_close(R, &outs[s]) == -1)
				return -1;
		}
	progress(R, 2, 1);
	if (fsync_dir(o->dir) == -1) {
		pf_warn("%s", o->dir);
		return -1;
	}
	return 0;
}

/* The summary line: records in and out per split, the twins dropped or
   merged, the positions of the first split dropped from the others. */
static void
summary(const struct run *R, const struct out *outs)
{
	const struct opts *o = R->o;
	char line[2048], across[1024], extra[1200];
	size_t n = 0, na = 0;
	uint64_t out_total = 0, dropped = 0, merged = 0, nacross = 0;
	uint64_t skipped = 0;
	size_t ne;

	for (int s = 0; s < o->nsplits; s++) {
		n += (size_t)snprintf(line + n, n < sizeof(line) ?
		    sizeof(line) - n : 0, "%s%s %" PRIu64, s ? ", " : "",
		    o->split_name[s], outs[s].records);
		out_total += outs[s].records;
		dropped += outs[s].dropped;
		merged += outs[s].merged;
		nacross += outs[s].across;
		skipped += outs[s].skipped;
		if (s > 0)
			na += (size_t)snprintf(across + na, na <
			    sizeof(across) ? sizeof(across) - na : 0,
			    "%s%s %" PRIu64, s > 1 ? ", " : "",
			    o->split_name[s], outs[s].across);
	}
	if (o->across)
		snprintf(extra, sizeof(extra), "; %" PRIu64 " positions of %s "
		    "dropped (%s)", nacross, o->split_name[0], o->nsplits > 1 ?
		    across : "no other split");
	else
		extra[0] = '\0';
	ne = strlen(extra);
	if (o->format != NULL)
		snprintf(extra + ne, sizeof(extra) - ne, "; %" PRIu64 " that "
		    "%s cannot hold skipped", skipped, o->format);
	if (R->merge_bad > 0)
		pf_warnx("%" PRIu64 " malformed extensions of duplicates (an "
		    "evaluation, value, policy or merge extension, or an "
		    "extension area) left out of the merges", R->merge_bad);
	if (o->dedup == DEDUP_MERGE)
		pf_warnx("%" PRIu64 " records in, %" PRIu64 " out (%s); %"
		    PRIu64 " duplicates merged into %" PRIu64 " records%s; "
		    "%zu shards written to %s", R->seq, out_total, line,
		    dropped, merged, extra, R->nshards, o->dir);
	else
		pf_warnx("%" PRIu64 " records in, %" PRIu64 " out (%s); %"
		    PRIu64 " duplicates dropped%s; %zu shards written to %s",
		    R->seq, out_total, line, dropped, extra, R->nshards,
		    o->dir);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run *R = NULL;
	struct out outs[MAX_SPLITS];
	int r, status = PF_EXIT_DATA, oargc = argc, s, partial = 0;
	char **oargv = argv;

	pf_prog_init(argv);
	memset(outs, 0, sizeof(outs));
	if ((r = parse_opts(argc, argv, &o)) >= 0)
		return r;
	if (o.verify != NULL)
		return verify(o.verify);
	argc -= optind;
	argv += optind;
	pf_set_inputs(argc, (const char *const *)argv);
	if ((R = calloc(1, sizeof(*R))) == NULL) {
		pf_warn("out of memory");
		goto out;
	}
	R->o = &o;
	R->tty = isatty(STDERR_FILENO);
	R->progress = o.progress || R->tty;
	/* A missing input would make a shard set that looks complete and
	   is not: refuse before touching the directory. */
	for (int i = 0; i == 0 || i < argc; i++)
		if (check_input(argc ? argv[i] : "-") == -1)
			r = 1;
	if (r == 1)
		goto out;
	if (prepare_dir(&o) == -1)
		goto out;
	/* from here a failure removes what the run made */
	partial = 1;
	if (run(R, argc, argv) == -1 || write_splits(R, outs) == -1 ||
	    write_manifest(R, outs, argc, argv, oargc, oargv) == -1)
		goto out;
	partial = 0;
	status = R->merge_bad > 0 ? PF_EXIT_DATA : R->status;
	summary(R, outs);
out:
	if (R != NULL) {
		for (s = 0; s < MAX_SPLITS; s++) {
			if (R->bk[s] != NULL)
				for (int b = 0; b < R->nbuckets[s]; b++)
					bucket_free(&R->bk[s][b]);
			free(R->bk[s]);
			free(R->tf[s]);
			if (outs[s].w != NULL || outs[s].x != NULL) {
				pf_writer_free(outs[s].w);
				pf_export_free(outs[s].x);
				close(outs[s].fd);
			}
		}
		/* the files are closed: their space is freed */
		if (partial)
			remove_partial(R, outs);
		for (size_t i = 0; i < R->nshards; i++)
			free(R->shards[i].file);
		free(R->shards);
		free(R->made);
		free(R->scratch);
		free(R->set);
		free(R->members);
		free(R->arena);
		free(R->off);
		free(R->key);
		free(R->table);
		free(R->next);
		free(R->order);
		pf_extbuf_free(&R->mb);
		merger_free(&R->merger);
		free(R);
	}
	if (o.verify == NULL)
		free(o.split_spec);
	return status;
}
