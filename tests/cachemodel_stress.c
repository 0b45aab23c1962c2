// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cachemodel_stress: the cache model threaded (cm_set_threaded), one thread
 * per core, all of them accessing the same few lines at once, as
 * multi-threaded TCG drives it.  tests/test_cachemodel_threads.py builds and
 * runs it, also under ThreadSanitizer.
 *
 *   cachemodel_stress CORES ROUNDS ACCESSES INCLUSION SEED
 *
 * Small caches (L1s of 16 lines, an L2 of 32, an L3 of 256 of INCLUSION's
 * policy, or none if INCLUSION is "none") over 96 lines: half the accesses
 * go to 6 lines of the core's own, 4 in 10 to 6 lines every core uses, the
 * rest anywhere, so that lines hit without the lock while others take them
 * away, and move between cores, levels and memory all the time.  Each round
 * every thread makes ACCESSES random accesses (ifetch, load, store, locked
 * RMW; 1 in 16 crossing a line), then all wait while one checks the model
 * (cm_check).  Every result must be whole (an L1 hit reached no further
 * level, a miss reached the L2, ...), and the accesses must add up: per
 * level, hits + misses + not reached = accesses, and each core's lock-free
 * and locked line accesses = the line accesses it made.  Prints one line of
 * totals and exits 0, or names the first thing wrong and exits 1.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachemodel.h"

/*
 * Built with cachemodel.c and -DCM_RACE_POINT=race_point (the test does):
 * at the model's race points a thread now and then yields or spins, so that
 * another core's change lands in the windows the model must handle.
 */
static __thread unsigned long long race_state = 0x2545f4914f6cdd1dull;

void race_point(void)
{
	race_state ^= race_state << 13;
	race_state ^= race_state >> 7;
	race_state ^= race_state << 17;
	if (race_state % 64 == 0)
		sched_yield();
	else if (race_state % 8 == 0)
		for (volatile int i = 0; i < 200; i++)
			;
}

#define LINES 96
#define LINE 64

static struct cm_model *model;
static pthread_barrier_t barrier;
static unsigned int cores, rounds, accesses;
static int has_l3;
static const char *failure;	/* the first, set once under failure_lock */
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;

struct counts {
	unsigned long long accesses, line_accesses, outcome[3][CM_NOUTCOMES];
};

struct worker {
	pthread_t thread;
	unsigned int core;
	unsigned long long seed;
	struct counts counts;
};

static void fail(const char *what)
{
	pthread_mutex_lock(&failure_lock);
	if (!failure)
		failure = what;
	pthread_mutex_unlock(&failure_lock);
}

static unsigned long long next_random(unsigned long long *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* What a result must look like, whoever else ran meanwhile. */
static const char *check_result(const struct cm_result *r, int split)
{
	if (r->l1 == CM_NOT_REACHED || r->l1 >= CM_NOUTCOMES || r->l2 >= CM_NOUTCOMES ||
	    r->l3 >= CM_NOUTCOMES || r->source >= CM_NSOURCES)
		return "a result with an outcome or source out of range";
	if (r->l1 == CM_HIT &&
	    (r->l2 != CM_NOT_REACHED || r->l3 != CM_NOT_REACHED || r->source != CM_FROM_L1))
		return "an L1 hit that went further than the L1";
	if (r->l1 == CM_UPGRADE &&
	    (r->l2 != CM_UPGRADE || r->l3 != CM_NOT_REACHED || r->source != CM_FROM_L1))
		return "an L1 upgrade that was not an L2 upgrade, or went further than the L2";
	if (r->l1 != CM_HIT && r->l2 == CM_NOT_REACHED)
		return "an L1 miss that did not reach the L2";
	if ((r->l2 == CM_HIT || r->l2 == CM_UPGRADE || r->l2 == CM_NOT_REACHED) &&
	    r->l3 != CM_NOT_REACHED)
		return "an access served by the L1 or L2 that reached the L3";
	if (has_l3 && r->l2 != CM_HIT && r->l2 != CM_UPGRADE && r->l2 != CM_NOT_REACHED &&
	    r->l3 == CM_NOT_REACHED)
		return "an L2 miss that did not reach the L3";
	/* (A split access reports its slower line with the thief of either.) */
	if (!split && (r->l1 == CM_COHERENCE || r->l2 == CM_COHERENCE) != (r->stolen_by >= 0))
		return "a coherence miss without its thief, or a thief without one";
	return NULL;
}

static void *work(void *arg)
{
	static const uint32_t kinds[] = { CM_IFETCH, CM_LOAD, CM_LOAD, CM_STORE, CM_STORE, CM_RMW };
	struct worker *w = arg;
	uint64_t icount = 0;
	const char *wrong;

	for (unsigned int round = 0; round < rounds; round++) {
		for (unsigned int i = 0; i < accesses; i++) {
			unsigned long long x = next_random(&w->seed);
			uint32_t kind = kinds[x % 6];
			/* Half the time one of the core's own 6 lines, 4 in 10 one of
			 * 6 lines every core uses, else any of the 96. */
			unsigned int pick = (x >> 8) % 10, n = (unsigned int)(x >> 24);
			uint64_t line = pick < 5 ? 6 + w->core * 6 + n % 6 : pick < 9 ? n % 6 : n % LINES;
			int split = (x >> 16) % 16 == 0;
			uint64_t addr = line * LINE + (split ? LINE - 4 : (x >> 20) % 8 * 8);
			struct cm_result r;

			cm_access(model, w->core, 0x1000 + x % 64, addr, 8, kind, ++icount, &r);
			w->counts.accesses++;
			w->counts.line_accesses += 1 + split;
			w->counts.outcome[0][r.l1]++;
			w->counts.outcome[1][r.l2]++;
			w->counts.outcome[2][r.l3]++;
			if ((wrong = check_result(&r, split)))
				fail(wrong);
		}
		pthread_barrier_wait(&barrier);
		if (w->core == 0 && (wrong = cm_check(model)))
			fail(wrong);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct cm_config cfg = {
		.line_bytes = LINE,
		.l1i = { 1024, 2, 1 }, .l1d = { 1024, 2, 1 }, .l2 = { 2048, 2, 10 },
		.l3 = { 16384, 4, 30 },
		.memory_latency = 200, .peer_latency = 60,
		.store_buffer_entries = 8, .store_buffer_window = 32,
	};
	struct worker *workers;
	struct counts total = { 0 };
	unsigned long long seed;

	if (argc != 6) {
		fprintf(stderr, "usage: cachemodel_stress CORES ROUNDS ACCESSES INCLUSION SEED\n");
		return 2;
	}
	cores = (unsigned int)atoi(argv[1]);
	rounds = (unsigned int)atoi(argv[2]);
	accesses = (unsigned int)atoi(argv[3]);
	seed = strtoull(argv[5], NULL, 0);
	cfg.cores = cores;
	if (!strcmp(argv[4], "none")) {
		cfg.l3.size_bytes = 0;
	} else {
		while (cm_inclusion_name(cfg.inclusion) && strcmp(cm_inclusion_name(cfg.inclusion), argv[4]))
			cfg.inclusion++;
		if (!cm_inclusion_name(cfg.inclusion)) {
			fprintf(stderr, "cachemodel_stress: no inclusion policy %s\n", argv[4]);
			return 2;
		}
	}
	has_l3 = cfg.l3.size_bytes != 0;
	if (!(model = cm_new(&cfg))) {
		fprintf(stderr, "cachemodel_stress: %s\n", cm_config_error(&cfg));
		return 2;
	}
	cm_set_threaded(model);
	pthread_barrier_init(&barrier, NULL, cores);
	workers = calloc(cores, sizeof(*workers));
	for (unsigned int c = 0; c < cores; c++) {
		workers[c].core = c;
		workers[c].seed = seed * 0x9e3779b97f4a7c15ull + c + 1;
		pthread_create(&workers[c].thread, NULL, work, &workers[c]);
	}
	unsigned long long unlocked = 0, locked = 0;

	for (unsigned int c = 0; c < cores; c++) {
		struct cm_paths paths;

		pthread_join(workers[c].thread, NULL);
		cm_paths(model, c, &paths);
		if (paths.unlocked + paths.locked != workers[c].counts.line_accesses)
			fail("a core's lock-free and locked line accesses do not add up to its line accesses");
		unlocked += paths.unlocked;
		locked += paths.locked;
		total.accesses += workers[c].counts.accesses;
		for (int level = 0; level < 3; level++)
			for (int o = 0; o < CM_NOUTCOMES; o++)
				total.outcome[level][o] += workers[c].counts.outcome[level][o];
	}
	for (int level = 0; level < 3; level++) {
		unsigned long long sum = 0;

		for (int o = 0; o < CM_NOUTCOMES; o++)
			sum += total.outcome[level][o];
		if (sum != total.accesses)
			fail("a level's outcomes do not add up to the accesses");
	}
	if (total.outcome[1][CM_NOT_REACHED] != total.outcome[0][CM_HIT])
		fail("the accesses that did not reach the L2 are not the L1's hits");
	if (!failure && (failure = cm_check(model)) == NULL && !unlocked)
		failure = "no access took the lock-free path";
	if (failure) {
		printf("FAILED: %s\n", failure);
		return 1;
	}
	printf("ok: %u cores, %llu accesses, %llu line accesses lock-free, %llu locked; "
	       "L1 hits %llu, coherence misses %llu, upgrades %llu\n", cores, total.accesses,
	       unlocked, locked, total.outcome[0][CM_HIT], total.outcome[0][CM_COHERENCE],
	       total.outcome[0][CM_UPGRADE]);
	cm_free(model);
	return 0;
}
