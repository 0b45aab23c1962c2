// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * causes a|b|c|d: benchmarks A to D of docs/causes.md, section 3, whose
 * misses per core, level and cause follow by hand from the definitions of
 * the causes, on skylake-4core's caches (64-byte lines, an L1D of 64 sets
 * and 512 lines, an L2 of 1024 sets and 4 ways).  Each run of the program
 * is one benchmark in one region of interest; it prints one JSON object.
 *
 * The pages, as the document names them: T = 0, U = 1, V = 2 and the sweep
 * S = 3 .. 18 (1024 lines, twice the L1D).  "Read X" is one 8-byte load
 * from each of X's lines in order, "write X" one 8-byte store.
 *
 * Each step of a benchmark is a function of its own, so that the misses of a
 * step are the misses at its instructions.  A step touches nothing but its
 * pages: their address comes in a register, and it has no frame (its `ret`
 * reads the return address its caller's `call` has just written: a hit, but
 * after a sweep, which pushes that line out).  `no_icf` keeps steps with the
 * same body (A's first and third) two functions.  The main thread runs on CPU
 * 0 and a second thread on CPU 1; after every step both meet at a barrier
 * whose counter has a line of its own, so its spinning is counted at the
 * barrier's instructions.  A full fence comes before each barrier, so that a
 * core that runs ahead of its own memory operations (gem5's O3) has finished
 * the step when the other core starts the next.
 *
 * Before the region: the pages are mapped and faulted in, both threads
 * have touched every page (their TLBs hold it), and every line of the
 * pages has left both CPUs' L1Ds and L2s.  So gem5's caches hold none of
 * them there when the region begins, as the QEMU model, which sees only the
 * region, holds none that this benchmark put there.  The lines are pushed
 * out by reads of other lines (evict_pages), not flushed: gem5 v24.0's
 * TimingSimpleCPU stops on clflush (an assertion in its translation,
 * gem5 issue #862), and benchmarks B to D set up on those cores, after
 * the checkpoint.
 *
 * Page colour: the L1D's sets are the page offset, but the L2's are chosen
 * by physical address, and the derivation wants page k in L2 sets
 * 64(k mod 16) .. 64(k mod 16)+63 (at most three pages of a benchmark to
 * an L2 set).  So the pages come from one 2 MiB huge page (hugetlbfs; the
 * pool is raised by one page if it has none free, and set back at exit),
 * each benchmark at its own 128 KiB of it (the model's caches keep what
 * the previous benchmark's region left, and the next run is likely given
 * the same huge page).  Without a huge page the pages are ordinary ones,
 * wherever the kernel puts them.  Either way the JSON lists the page
 * frames of the pages the benchmark uses, read from /proc/self/pagemap
 * (0 where the kernel hides them: it shows them to root only), for the
 * tests to check the colours against the machine's L2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hotline-roi.h"
#include "pin.h"

#define LINE 64
#define PAGE 4096
#define HUGE_PAGE (2L << 20)
#define T 0
#define U 1
#define V 2
#define S 3
#define SWEEP 16
#define PAGES (S + SWEEP)
#define SLOT_PAGES 32		/* each benchmark's share of the huge page */
#define ALL_PAGES ((1UL << PAGES) - 1)
#define SWEEP_PAGES (ALL_PAGES & ~7UL)

static inline __attribute__((always_inline)) void read_page(char *pages, int k)
{
	for (long i = 0; i < PAGE; i += LINE)
		(void)*(volatile long *)(pages + (long)k * PAGE + i);
}

static inline __attribute__((always_inline)) void write_page(char *pages, int k)
{
	for (long i = 0; i < PAGE; i += LINE)
		*(volatile long *)(pages + (long)k * PAGE + i) = i;
}

static inline __attribute__((always_inline)) void read_sweep(char *pages)
{
	for (int k = S; k < S + SWEEP; k++)
		read_page(pages, k);
}

/* Each step's name: its benchmark and number, its CPU, what it does. */
#define STEP static __attribute__((noinline, no_icf)) void

STEP a1_cpu0_read_t(char *p) { read_page(p, T); }
STEP a2_cpu1_write_t(char *p) { write_page(p, T); }
STEP a3_cpu0_read_t(char *p) { read_page(p, T); }

STEP b1_cpu0_read_t(char *p) { read_page(p, T); }
STEP b2_cpu0_read_s(char *p) { read_sweep(p); }
STEP b3_cpu0_read_t(char *p) { read_page(p, T); }

STEP c1_cpu0_read_t_u(char *p) { read_page(p, T); read_page(p, U); }
STEP c2_cpu1_write_t(char *p) { write_page(p, T); }
STEP c3_cpu0_read_s(char *p) { read_sweep(p); }
STEP c4_cpu0_read_v(char *p) { read_page(p, V); }
STEP c5_cpu1_write_u_v(char *p) { write_page(p, U); write_page(p, V); }
STEP c6_cpu0_read_v_t_u(char *p) { read_page(p, V); read_page(p, T); read_page(p, U); }

STEP d1_cpu0_read_t(char *p) { read_page(p, T); }
STEP d2_cpu1_read_t(char *p) { read_page(p, T); }
STEP d3_cpu0_write_t(char *p) { write_page(p, T); }
STEP d4_cpu1_read_t(char *p) { read_page(p, T); }

struct step {
	int cpu;
	void (*run)(char *pages);
};

static const struct benchmark {
	char name;
	unsigned long pages;	/* bit k: the benchmark uses page k */
	int steps;
	struct step step[6];
} benchmarks[] = {
	{ 'a', 1UL << T, 3, { { 0, a1_cpu0_read_t }, { 1, a2_cpu1_write_t },
			      { 0, a3_cpu0_read_t } } },
	{ 'b', 1UL << T | SWEEP_PAGES, 3, { { 0, b1_cpu0_read_t }, { 0, b2_cpu0_read_s },
					    { 0, b3_cpu0_read_t } } },
	{ 'c', ALL_PAGES, 6, { { 0, c1_cpu0_read_t_u }, { 1, c2_cpu1_write_t },
			       { 0, c3_cpu0_read_s }, { 0, c4_cpu0_read_v },
			       { 1, c5_cpu1_write_u_v }, { 0, c6_cpu0_read_v_t_u } } },
	{ 'd', 1UL << T, 4, { { 0, d1_cpu0_read_t }, { 1, d2_cpu1_read_t },
			      { 0, d3_cpu0_write_t }, { 1, d4_cpu1_read_t } } },
};

static const struct benchmark *bench;
static char *pages;		/* the benchmark's page 0 */
static char *huge;		/* the huge page the pages are in, or NULL */
static volatile int ready;

/* The barrier's counter, alone in its line: each thread adds one per
 * round, and round r is passed when both have (the count reaches 2r). */
static struct { long arrived; char pad[56]; } gate __attribute__((aligned(64)));

static __attribute__((noinline)) void barrier(long round)
{
	asm volatile("mfence" ::: "memory");
	__atomic_fetch_add(&gate.arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&gate.arrived, __ATOMIC_ACQUIRE) < 2 * round)
		__builtin_ia32_pause();
}

/* Round 1 starts the steps; the barrier after step k (from 1) is round k + 1. */
static void run_steps(int me)
{
	barrier(1);
	for (int k = 0; k < bench->steps; k++) {
		if (bench->step[k].cpu == me)
			bench->step[k].run(pages);
		barrier(k + 2);
	}
}

static void touch_pages(void)
{
	for (int k = 0; k < PAGES; k++)
		if (bench->pages & 1UL << k)
			(void)*(volatile long *)(pages + (long)k * PAGE);
}

/*
 * Push every line of the benchmark's pages out of this CPU's L1D and L2 by
 * reading the lines of the huge page that no benchmark uses (its slots
 * after the last benchmark's, 1.5 MiB): for each L2 set (4 ways) 24 of them,
 * for each L1D set (8 ways) 384, so with LRU replacement none of the older
 * lines stays.  The shared L3 may keep them, which no L1D or L2 cause
 * depends on.  Without a huge page there is no such room: clflush, which
 * gem5's timing cores cannot run (the L2's colours are wrong then anyway,
 * and the tests skip its counts).
 */
#define BENCHMARKS (sizeof(benchmarks) / sizeof(*benchmarks))

static void evict_pages(void)
{
	if (huge) {
		for (long i = BENCHMARKS * SLOT_PAGES * PAGE; i < HUGE_PAGE; i += LINE)
			(void)*(volatile long *)(huge + i);
	} else {
		for (int k = 0; k < PAGES; k++)
			if (bench->pages & 1UL << k)
				for (long i = 0; i < PAGE; i += LINE)
					asm volatile("clflush (%0)" ::
						     "r"(pages + (long)k * PAGE + i) : "memory");
	}
	asm volatile("mfence" ::: "memory");
}

static void *second_cpu(void *arg)
{
	(void)arg;
	pin(1);
	touch_pages();
	evict_pages();
	ready = 1;
	run_steps(1);
	return NULL;
}

#define POOL "/proc/sys/vm/nr_hugepages"
static long pool_before = -1;	/* the pool's size, if this program raised it */

static long read_pool(void)
{
	FILE *f = fopen(POOL, "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static int write_pool(long n)
{
	FILE *f = fopen(POOL, "w");
	int ok;

	if (!f)
		return 0;
	ok = fprintf(f, "%ld\n", n) > 0;
	return fclose(f) == 0 && ok;
}

static void *map_huge_page(void)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE;
	void *p = mmap(NULL, HUGE_PAGE, PROT_READ | PROT_WRITE, flags, -1, 0);
	long n;

	if (p != MAP_FAILED)
		return p;
	/* No free huge page: raise the pool by one, once. */
	n = read_pool();
	if (n < 0 || !write_pool(n + 1))
		return NULL;
	pool_before = n;
	p = mmap(NULL, HUGE_PAGE, PROT_READ | PROT_WRITE, flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static uint64_t frame(int pagemap, const void *p)
{
	uint64_t entry;

	if (pread(pagemap, &entry, sizeof(entry), (off_t)((uintptr_t)p / PAGE * sizeof(entry)))
	    != sizeof(entry))
		die("pread /proc/self/pagemap");
	return entry >> 63 ? entry & ((1ULL << 55) - 1) : 0;	/* bit 63: present */
}

int main(int argc, char **argv)
{
	int m5 = roi_under_gem5(), pagemap;
	pthread_t t;

	for (size_t i = 0; i < sizeof(benchmarks) / sizeof(*benchmarks); i++)
		if (argc == 2 && argv[1][0] == benchmarks[i].name && !argv[1][1])
			bench = &benchmarks[i];
	if (!bench) {
		fprintf(stderr, "usage: causes a|b|c|d (docs/causes.md, section 3)\n");
		return 2;
	}
	pin(0);
	huge = map_huge_page();
	if (huge) {
		pages = (char *)huge + (bench - benchmarks) * SLOT_PAGES * PAGE;
	} else {
		pages = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (pages == MAP_FAILED)
			die("mmap");
	}
	touch_pages();
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0)
		die("open /proc/self/pagemap");

	if (pthread_create(&t, NULL, second_cpu, NULL))
		die("pthread_create");
	while (!ready)
		__builtin_ia32_pause();
	evict_pages();
	roi_mark(ROI_BEGIN, m5);
	run_steps(0);
	roi_mark(ROI_END, m5);
	pthread_join(t, NULL);

	printf("{\"test\":\"causes-%c\",\"steps\":%d,\"huge_page\":%s,\"pages\":[",
	       bench->name, bench->steps, huge ? "true" : "false");
	for (int k = 0, first = 1; k < PAGES; k++)
		if (bench->pages & 1UL << k) {
			printf("%s%d", first ? "" : ",", k);
			first = 0;
		}
	printf("],\"frames\":[");
	for (int k = 0, first = 1; k < PAGES; k++)
		if (bench->pages & 1UL << k) {
			printf("%s%llu", first ? "" : ",",
			       (unsigned long long)frame(pagemap, pages + (long)k * PAGE));
			first = 0;
		}
	printf("]}\n");
	if (huge && munmap(huge, HUGE_PAGE))
		die("munmap");
	if (pool_before >= 0 && !write_pool(pool_before))
		die("setting " POOL " back");
	return 0;
}
