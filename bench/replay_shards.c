/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay_shards: the cache model sharded by cache set, on a recorded stream
 * (bench/README.md says how one is recorded), against the model whole.
 *
 *   replay_shards TRACE SHARDS [rounds=R] [shard_bit=B] [sb_shard=full|divided]
 *                 [MODEL OPTIONS...]
 *
 * Built by hand, as bench/replay.c:
 *
 *   gcc -O2 -Wall -Wextra -pthread -I plugins/cachemodel -I plugins/hotline-cache \
 *       -I bench -o /tmp/replay_shards bench/replay_shards.c plugins/cachemodel/cachemodel.c
 *
 * The model options are the plugin's that make the model (cpus=, line=,
 * l1i=, l1d=, l2=, l3= SIZE:ASSOC:LATENCY or l3=0, inclusion=, memory=,
 * peer=, sb=ENTRIES:WINDOW; the defaults are skylake-4core's), so that a
 * replay's options can be given as they are (vmemmap= and page_size=, the
 * accounting's, are taken and unused).  Only the model is run, through its
 * library (plugins/cachemodel, cm_*), with none of the plugin's accounting:
 * each executed block's fetch of each of its lines and each data access,
 * as block_executed and data_access (plugins/hotline-cache/account.c) hand
 * them to the model turn by turn (a 'D' record is skipped; the write of a
 * locked read-modify-write is the read's access, as there).
 *
 * Each round runs the stream twice, in turn: on one model, on one thread,
 * each access whole through cm_access as the plugin makes it; and on SHARDS
 * models, each on a thread of its own, each given only the lines of its
 * shard, in the stream's order.  Between the threads there is nothing: no
 * lock, no shared word but their own counts, each on its own cache line.
 * The stream is read and split in memory first, per shard an array of its
 * accesses; the time said (CLOCK_MONOTONIC, wall) is only the model's,
 * from the threads' start to the last one's end (each thread's CPU time
 * too).  The rounds alternate the two runs, the order swapped each round.
 *
 * A line's shard is log2(SHARDS) bits of its line number from bit B
 * (shard_bit=, 0 by default), which are set-index bits of every cache of the
 * geometry when SHARDS is a power of two and B + log2(SHARDS) is at most
 * log2 of the smallest cache's number of sets: then every
 * core's caches of one set index, at every level, are in one shard, and so
 * is everything a set holds that an access can push out (an L2's victim,
 * which leaves its core's L1s; an L3's, which leaves every core's private
 * caches when the L3 is inclusive, or enters it from an L2 when exclusive).
 * Any other SHARDS is refused.  Each shard's model has the geometry with
 * every cache's sets divided by SHARDS (the associativity the same), and
 * sees each line with those bits taken out of its number, so that its sets
 * are the whole model's sets of that shard, one for one.  So:
 *
 *   exact      the hits and misses at every level, every MESI state and so
 *              the upgrades, the peers' transfers, the source and latency
 *              of every access: all are decided within a set and by line
 *              (a set's LRU order depends only on the order of the set's
 *              own accesses); and the compulsory misses (a line's first
 *              access, per cache)
 *   approximate  the rest of the split of the misses: each cache's shadow
 *              (the L3's too), a fully associative LRU of as many lines as
 *              the cache, is per shard one of the cache's lines / SHARDS,
 *              fed only the shard's lines; whether a miss is coherence,
 *              conflict or capacity depends on it (and a coherence mark is
 *              dropped when the shadow lets the line go)
 *   approximate  the reads after a partial write: each shard's store buffer
 *              sees only its own lines' stores, with the whole buffer's
 *              entries (sb_shard=full, the default) or entries / SHARDS,
 *              rounded down (sb_shard=divided), and the same window
 *
 * An access that crosses a line boundary is, in the sharded run, one access
 * per line, each to its line's shard; its outcome is that of its slowest
 * part (the first on a tie), as cm_access reports one, and it read after a
 * partial write if a part did.  (So even one shard may count other reads
 * after a partial write than the whole model: a store across lines takes an
 * entry per line, and a load is checked per line.)
 *
 * It prints, per round, the seconds of each run, and then for each cache
 * level and outcome the totals of both runs and their difference.
 * tests/test_replay_shards.py checks it; bench/results/replay_shards.json
 * holds what it measured.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cachemodel.h"
#include "trace-file.h"

#define MAX_SHARDS 64
#define MAX_ROUNDS 100

/* account.c: a kernel text block is fetched at its address less this. */
#define KERNEL_TEXT_MAP 0xffffffff80000000ull

/* One access as the model takes it (the whole run's) or one line of it (a
 * shard's): 32 bytes. */
struct job {
	uint64_t pc, paddr, icount;
	uint32_t size;
	uint8_t core, kind;	/* enum cm_kind */
	uint8_t split;		/* a shard's: one line of an access that crosses lines */
};

/* The counted levels: an L1 is the L1I or the L1D by the access's kind. */
enum level { LEVEL_L1I, LEVEL_L1D, LEVEL_L2, LEVEL_L3, NLEVELS };

static const char *const level_names[NLEVELS] = { "l1i", "l1d", "l2", "l3" };

struct totals {
	uint64_t outcomes[NLEVELS][CM_NOUTCOMES];
	uint64_t accesses, partial_writes;
	uint64_t miss_cycles;	/* the latency of every access that missed its L1 */
};

/* A shard's thread and what it has; each on cache lines of its own. */
struct shard {
	_Alignas(64) pthread_t thread;
	struct cm_model *model;
	const struct job *jobs;
	size_t n;
	struct cm_result *parts;	/* results of split accesses' lines, in order */
	size_t nparts;
	struct totals totals;
	double cpu_seconds;	/* the thread's own */
};

/* A sharded split access, in the stream's order: its first line and parts. */
struct split {
	uint64_t first_line;
	uint32_t parts;
	uint8_t kind;
};

/* The stream made ready: the whole run's jobs, and each shard's. */
struct plan {
	struct job *whole;
	size_t n;
	uint32_t nshards, shard_low, shard_bits, line_shift;
	struct job *shard_jobs[MAX_SHARDS];
	size_t shard_n[MAX_SHARDS], shard_parts[MAX_SHARDS];
	struct split *splits;
	size_t nsplits;
};

static void usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "replay_shards: ");
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	exit(2);
}

static void *checked_alloc(size_t count, size_t size, const char *what)
{
	void *p = calloc(count ? count : 1, size);

	if (!p) {
		fprintf(stderr, "replay_shards: out of memory: %zu bytes for %s\n", count * size,
			what);
		exit(1);
	}
	return p;
}

/* ---- options ------------------------------------------------------------ */

/* Decimal or 0x hex digits, all of them, in 32 bits. */
static int parse_u32(const char *s, uint32_t *out, char **end)
{
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, end, 0);
	if (errno || v > UINT32_MAX)
		return 0;
	*out = (uint32_t)v;
	return 1;
}

/* n numbers separated by ':', and nothing else. */
static int parse_list(const char *s, uint32_t *out, int n)
{
	char *end;

	for (int i = 0; i < n; i++) {
		if (!parse_u32(s, &out[i], &end))
			return 0;
		if (i < n - 1 && *end != ':')
			return 0;
		s = end + 1;
	}
	return !*end;
}

static int parse_cache(const char *s, struct cm_cache_config *c)
{
	uint32_t v[3];

	if (!strcmp(s, "0")) {
		*c = (struct cm_cache_config){ 0, 0, 0 };
		return 1;
	}
	if (!parse_list(s, v, 3))
		return 0;
	*c = (struct cm_cache_config){ v[0], v[1], v[2] };
	return 1;
}

struct settings {
	struct cm_config cfg;
	uint32_t shards, shard_low, rounds;
	int sb_divided;
};

static void parse_option(const char *arg, struct settings *s)
{
	const char *eq = strchr(arg, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
	struct cm_config *c = &s->cfg;
	uint32_t sb[2];
	char *end;
	int ok;

#define KEY(k) (klen == strlen(k) && !strncmp(arg, k, klen))
	if (!eq)
		usage_error("not an option: '%s' (KEY=VALUE)", arg);
	if (KEY("cpus"))
		ok = parse_u32(v, &c->cores, &end) && !*end;
	else if (KEY("line"))
		ok = parse_u32(v, &c->line_bytes, &end) && !*end;
	else if (KEY("l1i"))
		ok = parse_cache(v, &c->l1i) && c->l1i.size_bytes;
	else if (KEY("l1d"))
		ok = parse_cache(v, &c->l1d) && c->l1d.size_bytes;
	else if (KEY("l2"))
		ok = parse_cache(v, &c->l2) && c->l2.size_bytes;
	else if (KEY("l3"))
		ok = parse_cache(v, &c->l3);
	else if (KEY("memory"))
		ok = parse_u32(v, &c->memory_latency, &end) && !*end;
	else if (KEY("peer"))
		ok = parse_u32(v, &c->peer_latency, &end) && !*end;
	else if (KEY("sb")) {
		ok = parse_list(v, sb, 2);
		c->store_buffer_entries = sb[0];
		c->store_buffer_window = sb[1];
	} else if (KEY("inclusion")) {
		ok = 0;
		for (uint32_t i = 0; cm_inclusion_name(i); i++)
			if (!strcmp(v, cm_inclusion_name(i))) {
				c->inclusion = i;
				ok = 1;
			}
	} else if (KEY("rounds")) {
		ok = parse_u32(v, &s->rounds, &end) && !*end && s->rounds >= 1 &&
		     s->rounds <= MAX_ROUNDS;
	} else if (KEY("shard_bit")) {
		ok = parse_u32(v, &s->shard_low, &end) && !*end && s->shard_low < 32;
	} else if (KEY("sb_shard")) {
		ok = !strcmp(v, "full") || !strcmp(v, "divided");
		s->sb_divided = !strcmp(v, "divided");
	} else if (KEY("vmemmap") || KEY("page_size")) {
		ok = 1;		/* the accounting's: the model has no use for them */
	} else {
		usage_error("unknown option '%s'", arg);
	}
#undef KEY
	if (!ok)
		usage_error("bad value in '%s'", arg);
}

static uint32_t log2_of(uint32_t n)
{
	uint32_t k = 0;

	while ((1u << k) < n)
		k++;
	return k;
}

static uint32_t sets_of(const struct cm_cache_config *c, uint32_t line_bytes)
{
	return c->size_bytes / line_bytes / c->assoc;
}

/*
 * The fewest sets of any cache of the geometry (after cm_config_error: each
 * a power of two): the line number's low bits under it are set-index bits
 * of every cache.
 */
static uint32_t fewest_sets(const struct cm_config *c)
{
	uint32_t n = sets_of(&c->l1i, c->line_bytes);

	if (sets_of(&c->l1d, c->line_bytes) < n)
		n = sets_of(&c->l1d, c->line_bytes);
	if (sets_of(&c->l2, c->line_bytes) < n)
		n = sets_of(&c->l2, c->line_bytes);
	if (c->l3.size_bytes && sets_of(&c->l3, c->line_bytes) < n)
		n = sets_of(&c->l3, c->line_bytes);
	return n;
}

/* Refuses, in one line, a geometry the shards cannot split independently. */
static void check_shards(const struct settings *s)
{
	const char *e = cm_config_error(&s->cfg);
	uint32_t fewest;

	if (e)
		usage_error("%s", e);
	if (s->shards < 1 || s->shards > MAX_SHARDS || s->shards & (s->shards - 1)) {
		fprintf(stderr, "replay_shards: %" PRIu32 " shards: the shards must be a power of two"
			" from 1 to %d (a shard is a value of set-index bits)\n", s->shards,
			MAX_SHARDS);
		exit(2);
	}
	fewest = fewest_sets(&s->cfg);
	if (s->shard_low + log2_of(s->shards) > log2_of(fewest)) {
		fprintf(stderr, "replay_shards: %" PRIu32 " shards from line-number bit %" PRIu32
			": the smallest cache has %" PRIu32 " sets, so only the lowest %" PRIu32
			" bits are set-index bits of every cache\n", s->shards, s->shard_low, fewest,
			log2_of(fewest));
		exit(2);
	}
	if (s->sb_divided && s->cfg.store_buffer_entries < s->shards) {
		fprintf(stderr, "replay_shards: sb_shard=divided: %" PRIu32 " store buffer entries"
			" cannot be divided among %" PRIu32 " shards\n",
			s->cfg.store_buffer_entries, s->shards);
		exit(2);
	}
}

/* ---- the stream, made ready --------------------------------------------- */

/* The lines a block's fetch reads, as block_executed's loop: pc is the
 * block's start, vaddr its end.  False if none. */
static int fetch_lines(const struct trace_event *t, uint32_t shift, uint64_t *first,
		       uint64_t *last)
{
	*first = t->pc >> shift;
	*last = (t->vaddr - 1) >> shift;
	return t->vaddr && *first <= *last;
}

/* The model's accesses of the stream in its order, as account.c makes them. */
static struct job *plan_whole(const struct trace_event *e, size_t n, const struct cm_config *c,
			      size_t *njobs)
{
	uint32_t shift = log2_of(c->line_bytes);
	uint64_t icount[256] = { 0 }, pending_rmw[256] = { 0 };
	int pending[256] = { 0 };
	size_t most = 0, k = 0;
	struct job *jobs;

	for (size_t i = 0; i < n; i++) {
		if (e[i].core >= c->cores) {
			fprintf(stderr, "replay_shards: the stream has core %u, the model cpus=%" PRIu32
				"\n", e[i].core, c->cores);
			exit(2);
		}
		uint64_t first, last;

		if (e[i].type == 'A')
			most++;
		else if (e[i].type == 'B' && fetch_lines(&e[i], shift, &first, &last))
			most += last - first + 1;
	}
	jobs = checked_alloc(most, sizeof(*jobs), "the stream's accesses");
	for (size_t i = 0; i < n; i++) {
		const struct trace_event *t = &e[i];
		uint8_t kind = t->store ? CM_STORE : CM_LOAD;

		if (t->type == 'B') {
			uint64_t offset = t->pc >= KERNEL_TEXT_MAP ? KERNEL_TEXT_MAP : 0, first, last;

			icount[t->core] += t->size;
			if (!fetch_lines(t, shift, &first, &last))
				continue;
			for (uint64_t line = first; line <= last; line++)
				jobs[k++] = (struct job){ .pc = t->pc,
							  .paddr = (line << shift) - offset,
							  .icount = icount[t->core],
							  .size = c->line_bytes, .core = t->core,
							  .kind = CM_IFETCH };
			continue;
		}
		if (t->type != 'A')
			continue;
		if (t->locked) {	/* data_access: the RMW's write is its read's */
			kind = CM_RMW;
			if (!t->store) {
				pending[t->core] = 1;
				pending_rmw[t->core] = t->pc;
			} else if (pending[t->core] && pending_rmw[t->core] == t->pc) {
				pending[t->core] = 0;
				continue;
			}
		}
		jobs[k++] = (struct job){ .pc = t->pc, .paddr = t->paddr, .icount = icount[t->core],
					  .size = t->size, .core = t->core, .kind = kind };
	}
	*njobs = k;
	return jobs;
}

static uint64_t line_end(uint64_t paddr, uint32_t size)
{
	return paddr + (size ? size : 1) - 1;
}

/* A line's shard: its line number's bits shard_low and up, shard_bits of them. */
static uint32_t shard_of(const struct plan *p, uint64_t line)
{
	return (uint32_t)(line >> p->shard_low) & (p->nshards - 1);
}

/* The line in its shard's model: the shard's bits taken out of its number,
 * so that the shard's sets are the whole model's of that shard in order. */
static uint64_t shard_line(const struct plan *p, uint64_t line)
{
	uint64_t low = line & ((1ull << p->shard_low) - 1);

	return (line >> (p->shard_low + p->shard_bits)) << p->shard_low | low;
}

/* The whole run's jobs split by line among the shards. */
static void plan_shards(struct plan *p)
{
	uint32_t shift = p->line_shift;
	uint64_t offset_mask = (1ull << shift) - 1;
	size_t at[MAX_SHARDS] = { 0 };

	for (size_t i = 0; i < p->n; i++) {
		uint64_t first = p->whole[i].paddr >> shift;
		uint64_t last = line_end(p->whole[i].paddr, p->whole[i].size) >> shift;

		for (uint64_t line = first; line <= last; line++) {
			p->shard_n[shard_of(p, line)]++;
			p->shard_parts[shard_of(p, line)] += first != last;
		}
		p->nsplits += first != last;
	}
	for (uint32_t s = 0; s < p->nshards; s++)
		p->shard_jobs[s] = checked_alloc(p->shard_n[s], sizeof(struct job), "a shard's jobs");
	p->splits = checked_alloc(p->nsplits, sizeof(*p->splits), "the split accesses");
	p->nsplits = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct job *j = &p->whole[i];
		uint64_t first = j->paddr >> shift, last = line_end(j->paddr, j->size) >> shift;

		if (first != last)
			p->splits[p->nsplits++] = (struct split){ first, (uint32_t)(last - first + 1),
								  j->kind };
		for (uint64_t line = first; line <= last; line++) {
			uint64_t from = line == first ? j->paddr : line << shift;
			uint64_t to = line == last ? j->paddr + j->size : (line + 1) << shift;
			uint32_t s = shard_of(p, line);
			struct job *part = &p->shard_jobs[s][at[s]++];

			*part = *j;
			part->paddr = shard_line(p, line) << shift | (from & offset_mask);
			part->size = (uint32_t)(to - from);
			part->split = first != last;
		}
	}
}

/* ---- running ------------------------------------------------------------ */

static void count(struct totals *t, uint32_t kind, const struct cm_result *r)
{
	t->accesses++;
	t->outcomes[kind == CM_IFETCH ? LEVEL_L1I : LEVEL_L1D][r->l1]++;
	t->outcomes[LEVEL_L2][r->l2]++;
	t->outcomes[LEVEL_L3][r->l3]++;
	t->partial_writes += r->partial_write;
	if (r->l1 != CM_HIT)
		t->miss_cycles += r->cycles;
}

/* A shard's jobs, in order, on its own model: what the plugin's hot path
 * does of them, the counting aside (account.c). */
static void *run_shard(void *arg)
{
	struct shard *s = arg;
	struct timespec t0, t1;
	struct cm_result r;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (size_t i = 0; i < s->n; i++) {
		const struct job *j = &s->jobs[i];

		if (j->kind == CM_IFETCH && cm_fetch_hits(s->model, j->core, j->paddr)) {
			s->totals.accesses++;
			s->totals.outcomes[LEVEL_L1I][CM_HIT]++;
			s->totals.outcomes[LEVEL_L2][CM_NOT_REACHED]++;
			s->totals.outcomes[LEVEL_L3][CM_NOT_REACHED]++;
			continue;
		}
		cm_access(s->model, j->core, j->pc, j->paddr, j->size, j->kind, j->icount, &r);
		if (j->split)
			s->parts[s->nparts++] = r;
		else
			count(&s->totals, j->kind, &r);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	s->cpu_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return NULL;
}

/* The model of one shard of `nshards`: every cache's sets divided among them. */
static struct cm_model *shard_model(const struct settings *s, uint32_t nshards)
{
	struct cm_config c = s->cfg;
	struct cm_model *m;

	c.l1i.size_bytes /= nshards;
	c.l1d.size_bytes /= nshards;
	c.l2.size_bytes /= nshards;
	c.l3.size_bytes /= nshards;
	if (s->sb_divided)
		c.store_buffer_entries /= nshards;
	if (!(m = cm_new(&c))) {
		fprintf(stderr, "replay_shards: no model: %s\n",
			cm_config_error(&c) ? cm_config_error(&c) : "out of memory");
		exit(1);
	}
	return m;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* The split accesses' parts, gathered from their shards in the stream's
 * order: the slowest part's outcome (the first on a tie), as cm_access. */
static void count_splits(const struct plan *p, struct shard *shards, struct totals *t)
{
	size_t at[MAX_SHARDS] = { 0 };

	for (size_t i = 0; i < p->nsplits; i++) {
		const struct split *sp = &p->splits[i];
		struct cm_result worst = { 0 };
		uint8_t partial = 0;

		for (uint32_t k = 0; k < sp->parts; k++) {
			uint32_t s = shard_of(p, sp->first_line + k);
			const struct cm_result *r = &shards[s].parts[at[s]++];

			if (!k || r->cycles > worst.cycles)
				worst = *r;
			partial |= r->partial_write;
		}
		worst.partial_write = partial;
		count(t, sp->kind, &worst);
	}
}

/* One run: the whole model on one thread (nshards 0), or the shards each on
 * their own; the model's seconds, and each thread's CPU seconds in cpu. */
static double run(const struct settings *s, const struct plan *p, uint32_t nshards,
		  struct totals *t, double *cpu)
{
	struct shard *shards = aligned_alloc(_Alignof(struct shard),
					     MAX_SHARDS * sizeof(struct shard));
	uint32_t nthreads = nshards ? nshards : 1;
	struct timespec t0;
	double seconds;

	if (!shards) {
		fprintf(stderr, "replay_shards: out of memory for the shards\n");
		exit(1);
	}
	memset(shards, 0, MAX_SHARDS * sizeof(*shards));
	for (uint32_t i = 0; i < nthreads; i++) {
		shards[i].model = shard_model(s, nthreads);
		shards[i].jobs = nshards ? p->shard_jobs[i] : p->whole;
		shards[i].n = nshards ? p->shard_n[i] : p->n;
		if (nshards)
			shards[i].parts = checked_alloc(p->shard_parts[i], sizeof(struct cm_result),
							"a shard's split parts");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < nthreads; i++)
		if (pthread_create(&shards[i].thread, NULL, run_shard, &shards[i])) {
			fprintf(stderr, "replay_shards: cannot start a thread\n");
			exit(1);
		}
	for (uint32_t i = 0; i < nthreads; i++)
		pthread_join(shards[i].thread, NULL);
	seconds = seconds_since(&t0);

	memset(t, 0, sizeof(*t));
	for (uint32_t i = 0; i < nthreads; i++) {
		const struct totals *mine = &shards[i].totals;

		for (int l = 0; l < NLEVELS; l++)
			for (int o = 0; o < CM_NOUTCOMES; o++)
				t->outcomes[l][o] += mine->outcomes[l][o];
		t->accesses += mine->accesses;
		t->partial_writes += mine->partial_writes;
		t->miss_cycles += mine->miss_cycles;
		cpu[i] = shards[i].cpu_seconds;
	}
	if (nshards)
		count_splits(p, shards, t);
	for (uint32_t i = 0; i < nthreads; i++) {
		cm_free(shards[i].model);
		free(shards[i].parts);
	}
	free(shards);
	return seconds;
}

/* ---- the report --------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, uint32_t n)
{
	double sorted[MAX_ROUNDS];

	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), compare_doubles);
	return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static void report_times(const char *what, const double *seconds, uint32_t rounds, size_t events,
			 size_t accesses)
{
	double m = median(seconds, rounds), lo = seconds[0], hi = seconds[0];

	events = events ? events : 1;		/* an empty stream: no nonsense */
	accesses = accesses ? accesses : 1;

	for (uint32_t i = 1; i < rounds; i++) {
		lo = seconds[i] < lo ? seconds[i] : lo;
		hi = seconds[i] > hi ? seconds[i] : hi;
	}
	printf("median %s: %.4f s (%.4f-%.4f), %.2f ns per event (%.2f-%.2f), %.2f ns per model"
	       " access\n", what, m, lo, hi, m * 1e9 / (double)events, lo * 1e9 / (double)events,
	       hi * 1e9 / (double)events, m * 1e9 / (double)accesses);
}

/* "count WHAT ONE SHARDED DIFFERENCE", one line each; 1 if all agree. */
static int report_counts(const struct totals *one, const struct totals *sharded)
{
	int same = 1;

	printf("%-5s %-12s %14s %14s %12s\n", "level", "outcome", "1 shard", "sharded",
	       "difference");
	for (int l = 0; l < NLEVELS; l++) {
		for (int o = 0; o < CM_NOUTCOMES; o++) {
			uint64_t a = one->outcomes[l][o], b = sharded->outcomes[l][o];

			if (!a && !b)
				continue;
			same &= a == b;
			printf("%-5s %-12s %14" PRIu64 " %14" PRIu64 " %+12" PRId64 "\n",
			       level_names[l], cm_outcome_name(o), a, b, (int64_t)(b - a));
		}
	}
	printf("%-18s %14" PRIu64 " %14" PRIu64 " %+12" PRId64 "\n", "partial-writes",
	       one->partial_writes, sharded->partial_writes,
	       (int64_t)(sharded->partial_writes - one->partial_writes));
	printf("%-18s %14" PRIu64 " %14" PRIu64 " %+12" PRId64 "\n", "miss-cycles",
	       one->miss_cycles, sharded->miss_cycles,
	       (int64_t)(sharded->miss_cycles - one->miss_cycles));
	printf("%-18s %14" PRIu64 " %14" PRIu64 " %+12" PRId64 "\n", "accesses", one->accesses,
	       sharded->accesses, (int64_t)(sharded->accesses - one->accesses));
	return same && one->partial_writes == sharded->partial_writes;
}

/* Hits and misses per level (every miss outcome summed), and cycles. */
static int same_hits_and_misses(const struct totals *a, const struct totals *b)
{
	for (int l = 0; l < NLEVELS; l++) {
		uint64_t miss_a = 0, miss_b = 0;

		for (int o = CM_COMPULSORY; o < CM_NOUTCOMES; o++) {
			miss_a += a->outcomes[l][o];
			miss_b += b->outcomes[l][o];
		}
		if (miss_a != miss_b || a->outcomes[l][CM_HIT] != b->outcomes[l][CM_HIT] ||
		    a->outcomes[l][CM_NOT_REACHED] != b->outcomes[l][CM_NOT_REACHED])
			return 0;
	}
	return a->miss_cycles == b->miss_cycles && a->accesses == b->accesses;
}

int main(int argc, char **argv)
{
	struct settings s = {
		.cfg = { .cores = 4, .line_bytes = 64, .l1i = { 32768, 8, 4 },
			 .l1d = { 32768, 8, 4 }, .l2 = { 262144, 4, 12 },
			 .l3 = { 8388608, 16, 42 }, .inclusion = CM_INCLUSIVE,
			 .memory_latency = 250, .peer_latency = 60,
			 .store_buffer_entries = 56, .store_buffer_window = 64 },
		.rounds = 1,
	};
	double one_s[MAX_ROUNDS], sharded_s[MAX_ROUNDS], one_cpu[1], cpu[MAX_SHARDS];
	struct totals one, sharded, again;
	struct trace_event *events;
	struct plan p = { 0 };
	size_t n, blocks = 0, data = 0;
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: replay_shards TRACE SHARDS [rounds=R] "
			"[sb_shard=full|divided] [MODEL OPTIONS...]\n");
		return 2;
	}
	if (!parse_u32(argv[2], &s.shards, &end) || *end)
		usage_error("not a number of shards: '%s'", argv[2]);
	for (int i = 3; i < argc; i++)
		parse_option(argv[i], &s);
	check_shards(&s);

	if (!(events = read_trace(argv[1], &n)))
		return 1;
	for (size_t i = 0; i < n; i++) {
		blocks += events[i].type == 'B';
		data += events[i].type == 'A';
	}
	p.whole = plan_whole(events, n, &s.cfg, &p.n);
	free(events);
	p.nshards = s.shards;
	p.shard_low = s.shard_low;
	p.shard_bits = log2_of(s.shards);
	p.line_shift = log2_of(s.cfg.line_bytes);
	plan_shards(&p);

	printf("stream %s: %zu events (%zu data accesses, %zu blocks), %zu model accesses, %zu"
	       " of them across lines\n", argv[1], n, data, blocks, p.n, p.nsplits);
	printf("shards %" PRIu32 ": line-number bits %" PRIu32 "..%d (the smallest cache has %"
	       PRIu32 " sets); store buffer per shard: %s; model accesses per shard:", s.shards,
	       p.shard_low, (int)(p.shard_low + p.shard_bits) - 1, fewest_sets(&s.cfg),
	       s.sb_divided ? "divided" : "full");
	for (uint32_t i = 0; i < s.shards; i++)
		printf(" %zu", p.shard_n[i]);
	printf("\n");
	fflush(stdout);

	/* Alternated, the order swapped each round: the host drifts. */
	for (uint32_t r = 0; r < s.rounds; r++) {
		if (r % 2) {
			sharded_s[r] = run(&s, &p, s.shards, r ? &again : &sharded, cpu);
			one_s[r] = run(&s, &p, 0, &one, one_cpu);
		} else {
			one_s[r] = run(&s, &p, 0, &one, one_cpu);
			sharded_s[r] = run(&s, &p, s.shards, r ? &again : &sharded, cpu);
		}
		if (r && memcmp(&again, &sharded, sizeof(again))) {
			fprintf(stderr, "replay_shards: round %" PRIu32 " counted otherwise\n", r + 1);
			return 1;
		}
		printf("round %" PRIu32 ": 1 shard %.4f s (cpu %.4f), %" PRIu32 " shards %.4f s (cpu",
		       r + 1, one_s[r], one_cpu[0], s.shards, sharded_s[r]);
		for (uint32_t i = 0; i < s.shards; i++)
			printf(" %.4f", cpu[i]);
		printf(")\n");
		fflush(stdout);
	}
	report_times("1 shard", one_s, s.rounds, n, p.n);
	report_times("sharded", sharded_s, s.rounds, n, p.n);
	int all = report_counts(&one, &sharded);

	printf("identical: hits and misses per level %s, every count %s\n",
	       same_hits_and_misses(&one, &sharded) ? "yes" : "no", all ? "yes" : "no");
	free(p.whole);
	free(p.splits);
	for (uint32_t i = 0; i < s.shards; i++)
		free(p.shard_jobs[i]);
	return 0;
}
