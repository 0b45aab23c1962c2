// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * groundtruth: what this machine's own x86 cores do with the patterns the
 * models' verdicts rest on, timed natively (bench/groundtruth.py runs it).
 *
 *     groundtruth [--iterations N] [--rounds R] [--list] [PATTERN ...]
 *
 * Three groups of patterns, each a loop of N iterations:
 *
 *   forwarding  a byte or word write to a word, then a load of that 8-byte
 *               word: `lock andb` (unlock_page's legacy code), `lock andq`
 *               (the word-op variant), `movb` (a load wider than the store
 *               it needs cannot be forwarded from it: the positive control)
 *               and `movq` (forwarding succeeds).  The loaded value, ANDed
 *               with 0, is added to the pointer, so each iteration's write
 *               waits for the previous iteration's load: the loop measures
 *               the chain's latency, not its throughput.
 *   drain       a locked instruction (`lock btsq`, `lock btrq`, `lock incq`)
 *               on a line that stays in the L1D: alone (the store buffer is
 *               empty), after one store that hits the L1D, after four (each
 *               to a line of its own), and after one store to a line just
 *               flushed with `clflush`.
 *   sharing     two threads, pinned to cores 0 and 1, each `lock incq` on
 *               one word as fast as it can (ping-pong), on two words of one
 *               line (false sharing) or on two words 256 bytes apart (the
 *               control); and on one word in turns, each increment waiting
 *               for the other thread's (as cachebench's ping-pong hands its
 *               ball over): one round trip of the line per iteration.
 *
 * Timing.  The TSC is read with `lfence; rdtsc` before and `rdtscp; lfence`
 * after the timed part, and the result is TSC ticks per iteration (the
 * TSC's constant rate, not the core's clock).  Each pattern has a baseline,
 * measured just before it in every round with the same iterations, that the
 * reader subtracts:
 *
 *   loop        the whole loop is timed; baseline: the same loop with an
 *               empty body (empty_loop).
 *   each        the store to a flushed line cannot follow a `clflush` in a
 *               timed loop without timing the flush too (and a missing
 *               store left in the store buffer would be drained by the next
 *               iteration's fence, not by the locked instruction).  So each
 *               iteration runs `clflush; mfence` untimed, then times only
 *               its body; the sum over iterations is divided by N.  The
 *               lock alone and the missing store alone are timed the same
 *               way, as controls; baseline: an empty body timed the same
 *               way (empty_each).  An iteration whose timed part took more
 *               than EACH_CEILING ticks was interrupted (no body here takes
 *               a tenth of that): it is left out of the mean and counted.
 *   threads     each thread times its own loop; a round's figure is the
 *               slower thread's ticks per increment; baseline: empty_loop.
 *               The handoff pattern runs N/100 turns a round: both threads
 *               must be on their cores at once for a turn to pass, and on a
 *               shared host a short round is likelier to see that.
 *
 * Rounds alternate the patterns (round 1 runs every pattern once, then
 * round 2 ...), since a shared host's speed drifts.  Output: one JSON line
 * per pattern with each round's raw ticks per iteration and its baseline's;
 * the statistics are the reader's.  Single-thread patterns run pinned to
 * core 0.
 *
 * Built natively (gcc -O2).  A guest build (-DHOTLINE_ROI -I disk-images/roi)
 * marks each timed measurement as a region of interest with hotline-roi.h,
 * so that the same patterns can run under the models.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HOTLINE_ROI
#include "hotline-roi.h"
#else
enum roi_op { ROI_BEGIN = 1, ROI_END = 2 };
static inline void roi_mark(enum roi_op op, int m5) { (void)op; (void)m5; }
static inline int roi_under_gem5(void) { return 0; }
#endif

#define DEFAULT_ITERATIONS 100000
#define DEFAULT_ROUNDS 15
#define MAX_ROUNDS 1000
#define WARMUP_DIVISOR 10	/* an untimed run of N/10 iterations first */
#define LINE_APART 128		/* bytes: a line and its adjacent-line prefetch pair */
#define EACH_CEILING 20000	/* ticks: an `each` iteration longer than this was interrupted */

#define CPU_0 0			/* single-thread patterns, and the first thread */
#define CPU_1 1			/* the second thread */
#define STRING(x) #x
#define NAMED(x) STRING(x)

static const int thread_cpus[2] = {CPU_0, CPU_1};

/* ---- The data each pattern touches, each on lines of its own ---- */

static uint64_t flags_word __attribute__((aligned(LINE_APART)));	/* forwarding */
static uint64_t lock_word __attribute__((aligned(LINE_APART)));	/* drain: locked */
static uint64_t hit_lines[4][LINE_APART / 8] __attribute__((aligned(LINE_APART)));
static uint64_t miss_line[LINE_APART / 8] __attribute__((aligned(LINE_APART)));
static uint64_t shared_words[64] __attribute__((aligned(LINE_APART)));	/* sharing */

/* ---- The clock ---- */

static inline uint64_t tsc_begin(void)
{
	uint32_t lo, hi;

	asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t tsc_end(void)
{
	uint32_t lo, hi;

	asm volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi) :: "rcx", "memory");
	return (uint64_t)hi << 32 | lo;
}

/* ---- Pattern steps: one iteration each, one asm statement each ---- */

/*
 * forwarding: the write, the word load, then the chain link (`and $0`,
 * `add`) that makes the next iteration's address wait for this load.
 */
#define FORWARDING_STEP(name, write)						\
	static inline __attribute__((always_inline)) uint64_t *name(uint64_t *p) \
	{									\
		uint64_t v;							\
		asm volatile(write ", (%[p])\n\t"				\
			     "movq (%[p]), %[v]\n\t"				\
			     "andq $0, %[v]\n\t"				\
			     "addq %[v], %[p]"					\
			     : [p] "+r"(p), [v] "=&r"(v) :: "memory", "cc");	\
		return p;							\
	}
FORWARDING_STEP(lock_andb_load, "lock andb $0xfe")
FORWARDING_STEP(lock_andq_load, "lock andq $-2")
FORWARDING_STEP(movb_load, "movb $0")
FORWARDING_STEP(movq_load, "movq $0")

/*
 * drain: the locked instruction on x, after no store, one store to y or
 * four stores, to y and the three lines LINE_APART, 2 and 3 x LINE_APART
 * after it.
 */
#define LOCK_BTSQ "lock btsq $0, (%[x])"
#define LOCK_BTRQ "lock btrq $0, (%[x])"
#define LOCK_INCQ "lock incq (%[x])"
#define STORE_1 "movq %[v], (%[y])\n\t"
#define STORE_4 STORE_1 "movq %[v], 128(%[y])\n\tmovq %[v], 256(%[y])\n\t" \
	"movq %[v], 384(%[y])\n\t"
_Static_assert(LINE_APART == 128, "STORE_4's offsets are LINE_APART apart");

#define DRAIN_STEP(name, stores, locked)					\
	static inline __attribute__((always_inline)) void			\
	name(uint64_t *x, uint64_t *y, uint64_t v)				\
	{									\
		asm volatile(stores locked					\
			     :: [x] "r"(x), [y] "r"(y), [v] "r"(v) : "memory", "cc"); \
	}
DRAIN_STEP(btsq_alone, "", LOCK_BTSQ)
DRAIN_STEP(btsq_after_1, STORE_1, LOCK_BTSQ)
DRAIN_STEP(btsq_after_4, STORE_4, LOCK_BTSQ)
DRAIN_STEP(btrq_alone, "", LOCK_BTRQ)
DRAIN_STEP(btrq_after_1, STORE_1, LOCK_BTRQ)
DRAIN_STEP(btrq_after_4, STORE_4, LOCK_BTRQ)
DRAIN_STEP(incq_alone, "", LOCK_INCQ)
DRAIN_STEP(incq_after_1, STORE_1, LOCK_INCQ)
DRAIN_STEP(incq_after_4, STORE_4, LOCK_INCQ)
DRAIN_STEP(store_alone, STORE_1, "")

/* sharing: one increment of one thread's word. */
static inline __attribute__((always_inline)) void lock_incq(uint64_t *w)
{
	asm volatile("lock incq (%0)" :: "r"(w) : "memory", "cc");
}

/* The untimed part of an `each` iteration: miss_line leaves every cache. */
static inline void flush_miss_line(void)
{
	asm volatile("clflush (%0)\n\tmfence" :: "r"(miss_line) : "memory");
}

/* ---- Pattern kernels: plain functions, selected by name below ---- */

/* loop kernels: N iterations of a step. */
static void empty_loop(long n)
{
	for (long i = 0; i < n; i++)
		asm volatile("" ::: "memory");
}

#define FORWARDING_LOOP(step)							\
	static void loop_##step(long n)						\
	{									\
		uint64_t *p = &flags_word;					\
		for (long i = 0; i < n; i++)					\
			p = step(p);						\
	}
FORWARDING_LOOP(lock_andb_load)
FORWARDING_LOOP(lock_andq_load)
FORWARDING_LOOP(movb_load)
FORWARDING_LOOP(movq_load)

#define DRAIN_LOOP(step)							\
	static void loop_##step(long n)						\
	{									\
		for (long i = 0; i < n; i++)					\
			step(&lock_word, hit_lines[0], (uint64_t)i);		\
	}
DRAIN_LOOP(btsq_alone)
DRAIN_LOOP(btsq_after_1)
DRAIN_LOOP(btsq_after_4)
DRAIN_LOOP(btrq_alone)
DRAIN_LOOP(btrq_after_1)
DRAIN_LOOP(btrq_after_4)
DRAIN_LOOP(incq_alone)
DRAIN_LOOP(incq_after_1)
DRAIN_LOOP(incq_after_4)

/* each kernels: one iteration's body, after flush_miss_line(). */
static __attribute__((noinline)) void empty_each(void)
{
	asm volatile("" ::: "memory");
}

#define EACH_BODY(step)								\
	static __attribute__((noinline)) void each_##step(void)		\
	{									\
		step(&lock_word, miss_line, 1);					\
	}
EACH_BODY(btsq_alone)
EACH_BODY(btsq_after_1)
EACH_BODY(btrq_alone)
EACH_BODY(btrq_after_1)
EACH_BODY(incq_alone)
EACH_BODY(incq_after_1)
EACH_BODY(store_alone)

/*
 * threads kernels: N increments of one thread's word.  One function per
 * pattern (no_icf: gcc would fold the identical bodies into one), so that a
 * model's per-instruction counts in the guest tell the patterns apart.
 */
#define INCQ_LOOP(name)								\
	static __attribute__((noinline, no_icf)) void name(uint64_t *w, long n, int me) \
	{									\
		(void)me;							\
		for (long i = 0; i < n; i++)					\
			lock_incq(w);						\
	}
INCQ_LOOP(pingpong_loop)
INCQ_LOOP(false_sharing_loop)
INCQ_LOOP(separate_lines_loop)

/* Thread `me` increments when the word's parity is its own. */
static void incq_turns(uint64_t *w, long n, int me)
{
	for (long i = 0; i < n; i++) {
		while ((*(volatile uint64_t *)w & 1) != (uint64_t)me)
			;
		lock_incq(w);
	}
}

/* ---- The patterns, by name ---- */

enum timing { LOOP, EACH, THREADS };
static const char *const timing_names[] = {"loop", "each", "threads"};

struct pattern {
	const char *name;
	const char *group;
	enum timing timing;
	void (*loop)(long n);		/* LOOP */
	void (*body)(void);		/* EACH */
	void (*thread_loop)(uint64_t *w, long n, int me);	/* THREADS */
	int word[2];			/* THREADS: each thread's index in shared_words */
	long divisor;			/* runs N / divisor iterations (at least 1) */
	const char *what;
};

#define LOOPED(n, g, f, w) {n, g, LOOP, f, NULL, NULL, {0, 0}, 1, w}
#define EACH_(n, f, w) {n, "drain", EACH, NULL, f, NULL, {0, 0}, 1, w}
#define SHARED(n, f, a, b, d, w) {n, "sharing", THREADS, NULL, NULL, f, {a, b}, d, w}

static const struct pattern patterns[] = {
	LOOPED("lock_andb_load", "forwarding", loop_lock_andb_load,
	       "lock andb $0xfe on byte 0, then movq of its word"),
	LOOPED("lock_andq_load", "forwarding", loop_lock_andq_load,
	       "lock andq $-2 on the word, then movq of it"),
	LOOPED("movb_load", "forwarding", loop_movb_load,
	       "movb to byte 0, then movq of its word (forwarding fails)"),
	LOOPED("movq_load", "forwarding", loop_movq_load,
	       "movq to the word, then movq of it (forwarding succeeds)"),
	LOOPED("lock_btsq", "drain", loop_btsq_alone, "lock btsq, store buffer empty"),
	LOOPED("lock_btsq_after_hit", "drain", loop_btsq_after_1,
	       "a store that hits the L1D, then lock btsq"),
	LOOPED("lock_btsq_after_4hits", "drain", loop_btsq_after_4,
	       "four stores that hit, then lock btsq"),
	LOOPED("lock_btrq", "drain", loop_btrq_alone, "lock btrq, store buffer empty"),
	LOOPED("lock_btrq_after_hit", "drain", loop_btrq_after_1,
	       "a store that hits the L1D, then lock btrq"),
	LOOPED("lock_btrq_after_4hits", "drain", loop_btrq_after_4,
	       "four stores that hit, then lock btrq"),
	LOOPED("lock_incq", "drain", loop_incq_alone, "lock incq, store buffer empty"),
	LOOPED("lock_incq_after_hit", "drain", loop_incq_after_1,
	       "a store that hits the L1D, then lock incq"),
	LOOPED("lock_incq_after_4hits", "drain", loop_incq_after_4,
	       "four stores that hit, then lock incq"),
	EACH_("lock_btsq_each", each_btsq_alone,
	      "lock btsq alone, timed alone after clflush+mfence of another line"),
	EACH_("lock_btsq_after_miss", each_btsq_after_1,
	      "a store to the line just flushed, then lock btsq"),
	EACH_("lock_btrq_each", each_btrq_alone,
	      "lock btrq alone, timed alone after clflush+mfence of another line"),
	EACH_("lock_btrq_after_miss", each_btrq_after_1,
	      "a store to the line just flushed, then lock btrq"),
	EACH_("lock_incq_each", each_incq_alone,
	      "lock incq alone, timed alone after clflush+mfence of another line"),
	EACH_("lock_incq_after_miss", each_incq_after_1,
	      "a store to the line just flushed, then lock incq"),
	EACH_("store_miss", each_store_alone,
	      "a store to the line just flushed, no locked instruction"),
	SHARED("pingpong", pingpong_loop, 0, 0, 1, "two threads, lock incq on one word"),
	SHARED("false_sharing", false_sharing_loop, 0, 1, 1,
	       "two threads, lock incq on two words of one line"),
	SHARED("separate_lines", separate_lines_loop, 0, 32, 1,
	       "two threads, lock incq on words 256 bytes apart"),
	SHARED("handoff", incq_turns, 0, 0, 100,
	       "two threads, lock incq on one word in turns: one round trip per iteration"),
};
#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

/* ---- Timing: separate from the kernels ---- */

static __attribute__((noinline)) double time_loop(void (*loop)(long), long n)
{
	loop(n / WARMUP_DIVISOR + 1);
	uint64_t t0 = tsc_begin();
	loop(n);
	return (double)(tsc_end() - t0) / n;
}

/* The mean over the iterations that were not interrupted; *dropped: the others. */
static __attribute__((noinline)) double time_each(void (*body)(void), long n, double *dropped)
{
	uint64_t total = 0, all = 0;
	long kept = 0;

	body();
	for (long i = 0; i < n; i++) {
		flush_miss_line();
		uint64_t t0 = tsc_begin();
		body();
		uint64_t ticks = tsc_end() - t0;
		all += ticks;
		if (ticks <= EACH_CEILING) {
			total += ticks;
			kept++;
		}
	}
	*dropped = (double)(n - kept);
	return kept ? (double)total / kept : (double)all / n;
}

struct worker {
	pthread_t thread;
	void (*loop)(uint64_t *w, long n, int me);
	int me, cpu;
	uint64_t *word;
	long n;
	atomic_int *ready;
	double ticks;		/* per increment */
	int error;		/* pinning's errno, 0 if pinned */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	w->error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	w->loop(w->word, w->n / WARMUP_DIVISOR + 1, w->me);
	/* Both threads start together, each pinned and warm. */
	atomic_fetch_add(w->ready, 1);
	while (atomic_load(w->ready) < 2)
		asm volatile("pause");
	uint64_t t0 = tsc_begin();
	w->loop(w->word, w->n, w->me);
	w->ticks = (double)(tsc_end() - t0) / w->n;
	return NULL;
}

/* The slower thread's ticks per increment; each thread's in per_thread. */
static double time_threads(const struct pattern *p, long n, double per_thread[2])
{
	atomic_int ready = 0;
	struct worker w[2];

	for (int t = 0; t < 2; t++) {
		w[t] = (struct worker){.loop = p->thread_loop, .me = t, .cpu = thread_cpus[t],
				       .word = &shared_words[p->word[t]], .n = n,
				       .ready = &ready};
		int err = pthread_create(&w[t].thread, NULL, worker_main, &w[t]);
		if (err) {
			fprintf(stderr, "groundtruth: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	for (int t = 0; t < 2; t++)
		pthread_join(w[t].thread, NULL);
	for (int t = 0; t < 2; t++) {
		if (w[t].error) {
			fprintf(stderr, "groundtruth: pinning a thread to cpu %d: %s\n", w[t].cpu,
				strerror(w[t].error));
			exit(1);
		}
		per_thread[t] = w[t].ticks;
	}
	return per_thread[0] > per_thread[1] ? per_thread[0] : per_thread[1];
}

/* Why a pattern cannot run here, or NULL (a constant string). */
static const char *cannot_run(const struct pattern *p)
{
	static const char *const needs[2] = {
		"needs cpu " NAMED(CPU_0) ", which this process may not use",
		"needs cpu " NAMED(CPU_1) ", which this process may not use"};
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return "sched_getaffinity failed: the allowed cpus are unknown";
	int need = p->timing == THREADS ? 2 : 1;
	for (int t = 0; t < need; t++)
		if (!CPU_ISSET(thread_cpus[t], &allowed))
			return needs[t];
	return NULL;
}

/* ---- Report: one JSON line per pattern ---- */

/* decimals: 3 for ticks, 0 for counts. */
static void print_values(const double *v, int n, int decimals)
{
	printf("[");
	for (int i = 0; i < n; i++)
		printf("%s%.*f", i ? "," : "", decimals, v[i]);
	printf("]");
}

static void print_list(const char *key, const double *v, int n, int decimals)
{
	printf(",\"%s\":", key);
	print_values(v, n, decimals);
}

struct measured {
	double cycles[MAX_ROUNDS];
	double baseline[MAX_ROUNDS];
	double dropped[MAX_ROUNDS];		/* EACH: interrupted iterations */
	double baseline_dropped[MAX_ROUNDS];
	double per_thread[MAX_ROUNDS][2];	/* THREADS */
	const char *skipped;
};

static long iterations_of(const struct pattern *p, long n)
{
	return n / p->divisor > 0 ? n / p->divisor : 1;
}

static void report(const struct pattern *p, const struct measured *m, long n, int rounds)
{
	printf("{\"pattern\":\"%s\",\"group\":\"%s\",\"timing\":\"%s\",\"what\":\"%s\"",
	       p->name, p->group, timing_names[p->timing], p->what);
	if (m->skipped) {
		printf(",\"skipped\":\"%s\"}\n", m->skipped);
		return;
	}
	printf(",\"baseline\":\"%s\",\"iterations\":%ld,\"rounds\":%d",
	       p->timing == EACH ? "empty_each" : "empty_loop", iterations_of(p, n), rounds);
	print_list("cycles", m->cycles, rounds, 3);
	print_list("baseline_cycles", m->baseline, rounds, 3);
	if (p->timing == EACH) {
		print_list("interrupted", m->dropped, rounds, 0);
		print_list("baseline_interrupted", m->baseline_dropped, rounds, 0);
	}
	if (p->timing == THREADS) {
		printf(",\"per_thread\":[");
		for (int r = 0; r < rounds; r++) {
			printf("%s", r ? "," : "");
			print_values(m->per_thread[r], 2, 3);
		}
		printf("]");
	}
	printf("}\n");
}

/* ---- Options, the rounds, the report ---- */

static long parse_count(const char *option, const char *text, long max)
{
	char *end;

	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > max) {
		fprintf(stderr, "groundtruth: %s %s: give a whole number from 1 to %ld\n", option,
			text, max);
		exit(2);
	}
	return v;
}

static const struct pattern *find_pattern(const char *name)
{
	for (size_t i = 0; i < NPATTERNS; i++)
		if (strcmp(patterns[i].name, name) == 0)
			return &patterns[i];
	fprintf(stderr, "groundtruth: %s: no such pattern (--list names them)\n", name);
	exit(2);
}

int main(int argc, char **argv)
{
	long n = DEFAULT_ITERATIONS;
	int rounds = DEFAULT_ROUNDS, nchosen = 0;
	const struct pattern *chosen[NPATTERNS];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list") == 0) {
			for (size_t k = 0; k < NPATTERNS; k++)
				printf("%-24s %-11s %s\n", patterns[k].name, patterns[k].group,
				       patterns[k].what);
			return 0;
		} else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
			n = parse_count("--iterations", argv[++i], 1000000000L);
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = (int)parse_count("--rounds", argv[++i], MAX_ROUNDS);
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "groundtruth: %s: unknown option (or its value is missing); "
				"usage: groundtruth [--iterations N] [--rounds R] [--list] "
				"[PATTERN ...]\n", argv[i]);
			return 2;
		} else if (nchosen < (int)NPATTERNS) {
			chosen[nchosen++] = find_pattern(argv[i]);
		} else {
			fprintf(stderr, "groundtruth: more than %zu patterns named\n", NPATTERNS);
			return 2;
		}
	}
	if (!nchosen)
		for (size_t k = 0; k < NPATTERNS; k++)
			chosen[nchosen++] = &patterns[k];

	static struct measured results[NPATTERNS];
	cpu_set_t core;
	CPU_ZERO(&core);
	CPU_SET(thread_cpus[0], &core);
	for (int k = 0; k < nchosen; k++)
		results[k].skipped = cannot_run(chosen[k]);
	if (sched_setaffinity(0, sizeof(core), &core) != 0)
		for (int k = 0; k < nchosen; k++)
			if (!results[k].skipped && chosen[k]->timing != THREADS)
				results[k].skipped = "cannot pin to cpu " NAMED(CPU_0);

	int m5 = roi_under_gem5();
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < nchosen; k++) {
			const struct pattern *p = chosen[k];
			struct measured *m = &results[k];
			long iterations = iterations_of(p, n);

			if (m->skipped)
				continue;
			if (p->timing == EACH) {
				m->baseline[r] = time_each(empty_each, iterations,
							   &m->baseline_dropped[r]);
				roi_mark(ROI_BEGIN, m5);
				m->cycles[r] = time_each(p->body, iterations, &m->dropped[r]);
				roi_mark(ROI_END, m5);
			} else if (p->timing == LOOP) {
				m->baseline[r] = time_loop(empty_loop, iterations);
				roi_mark(ROI_BEGIN, m5);
				m->cycles[r] = time_loop(p->loop, iterations);
				roi_mark(ROI_END, m5);
			} else {
				m->baseline[r] = time_loop(empty_loop, iterations);
				roi_mark(ROI_BEGIN, m5);
				m->cycles[r] = time_threads(p, iterations, m->per_thread[r]);
				roi_mark(ROI_END, m5);
			}
		}
	for (int k = 0; k < nchosen; k++)
		report(chosen[k], &results[k], n, rounds);
	return 0;
}
