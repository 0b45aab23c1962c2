// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cachebench: guest microbenchmarks whose cache behaviour is known in
 * advance, to validate the cache model against.  Each marks its own region
 * of interest around the measured loop only (set-up, thread creation and
 * warm-up stay outside) and prints one JSON object.
 *
 *   sweep KIB STRIDE PASSES   read one byte every STRIDE bytes of a KIB array,
 *                             PASSES times after one warm-up pass
 *   pingpong HANDOFFS         two threads on CPUs 0 and 1 hand one cache line
 *                             back and forth HANDOFFS times
 *   falseshare ITERATIONS     threads on CPUs 0 and 1 each increment their own
 *                             8-byte counter; both counters share one line
 *   storeload ITERATIONS      store a byte, then load the 8-byte word that
 *                             contains it: a read after a partial write
 *   chase KIB STEPS           follow a pointer from line to line of a KIB
 *                             array in a random cycle through all its lines,
 *                             STEPS times: each load waits for the one before
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotline-roi.h"
#include "pin.h"

static int m5;

/* Not inlined: the tests find each benchmark's instructions by its symbol. */
static __attribute__((noinline)) void sweep(long kib, long stride, long passes)
{
	long bytes = kib << 10, sum = 0;
	volatile char *a = aligned_alloc(4096, bytes);

	if (!a || stride <= 0)
		die("aligned_alloc");
	for (long i = 0; i < bytes; i++)  /* fault in and warm up */
		a[i] = (char)i;
	roi_mark(ROI_BEGIN, m5);
	for (long p = 0; p < passes; p++)
		for (long i = 0; i < bytes; i += stride)
			sum += a[i];
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"sweep\",\"kib\":%ld,\"stride\":%ld,\"passes\":%ld,\"accesses\":%ld,"
	       "\"checksum\":%ld}\n", kib, stride, passes, passes * (bytes / stride), sum);
}

/* One 64-byte line, alone: the ball of the ping-pong. */
static struct { volatile long turn; char pad[56]; } ball __attribute__((aligned(64)));
static long handoffs;

static void *player(void *arg)
{
	long me = (long)arg;

	pin((int)me);
	for (long k = 0; k < handoffs; k += 2) {
		while (ball.turn != k + me)
			;
		ball.turn = k + me + 1;
	}
	return NULL;
}

static __attribute__((noinline)) void pingpong(long n)
{
	pthread_t t;

	handoffs = n - n % 2;
	ball.turn = -1;
	if (pthread_create(&t, NULL, player, (void *)1L))
		die("pthread_create");
	pin(0);
	roi_mark(ROI_BEGIN, m5);
	ball.turn = 0;
	player((void *)0L);
	pthread_join(t, NULL);
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"pingpong\",\"handoffs\":%ld,\"final_turn\":%ld}\n", handoffs,
	       (long)ball.turn);
}

static struct { volatile long counter[2]; } shared __attribute__((aligned(64)));
static volatile int go, ready;
static long iterations;

static void *incrementer(void *arg)
{
	long me = (long)arg;

	pin((int)me);
	ready = 1;
	while (!go)
		;
	for (long i = 0; i < iterations; i++)
		shared.counter[me]++;
	return NULL;
}

static __attribute__((noinline)) void falseshare(long n)
{
	pthread_t t;

	iterations = n;
	if (pthread_create(&t, NULL, incrementer, (void *)1L))
		die("pthread_create");
	pin(0);
	/* Both count at the same moment only if the thread is on its CPU
	 * first: a new thread may first run on this CPU, and move only when
	 * this one blocks in pthread_join, after its increments (seen in
	 * deterministic runs: docs/interleaving.md). */
	while (!ready)
		;
	roi_mark(ROI_BEGIN, m5);
	go = 1;
	incrementer((void *)0L);
	pthread_join(t, NULL);
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"falseshare\",\"iterations\":%ld,\"counters\":[%ld,%ld]}\n", n,
	       (long)shared.counter[0], (long)shared.counter[1]);
}

static __attribute__((noinline)) void storeload(long n)
{
	static uint64_t word __attribute__((aligned(64)));
	uint64_t sum = 0, v;

	roi_mark(ROI_BEGIN, m5);
	for (long i = 0; i < n; i++) {
		/* movb to the word's second byte, then movq of the whole word. */
		asm volatile("movb %b2, 1(%1)\n\tmovq (%1), %0"
			     : "=&r"(v) : "r"(&word), "r"((uint8_t)i) : "memory");
		sum += v;
	}
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"storeload\",\"iterations\":%ld,\"checksum\":%lu}\n", n,
	       (unsigned long)sum);
}

/*
 * One node per 64-byte line (at least as long as every line size hotline's
 * systems have), linked in a random cycle through every line (Sattolo's
 * algorithm, a fixed seed): an out-of-order core cannot start a load before
 * the one it depends on returns, nor a prefetcher guess the next line.
 */
struct node { struct node *next; char pad[56]; };

static __attribute__((noinline)) void chase(long kib, long steps)
{
	long lines = (kib << 10) / (long)sizeof(struct node);
	struct node *a = aligned_alloc(4096, (size_t)lines * sizeof(struct node));
	long *order = malloc((size_t)lines * sizeof(long));
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	if (!a || !order || lines < 2)
		die("aligned_alloc");
	for (long i = 0; i < lines; i++)
		order[i] = i;
	for (long i = lines - 1; i > 0; i--) {	/* Sattolo: one cycle through all */
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		long j = (long)((seed >> 33) % (uint64_t)i), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (long i = 0; i < lines; i++)
		a[order[i]].next = &a[order[(i + 1) % lines]];
	struct node *p = &a[order[0]];

	for (long i = 0; i < lines; i++)	/* one lap to fault the pages in */
		p = p->next;
	roi_mark(ROI_BEGIN, m5);
	for (long i = 0; i < steps; i++)
		p = p->next;
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"chase\",\"kib\":%ld,\"steps\":%ld,\"end\":%ld}\n", kib, steps,
	       (long)(p - a));
}

int main(int argc, char **argv)
{
	const char *test = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;
	long c = argc > 4 ? atol(argv[4]) : 0;

	m5 = roi_under_gem5();
	if (!strcmp(test, "sweep") && argc == 5 && a > 0 && b > 0 && c > 0)
		sweep(a, b, c);
	else if (!strcmp(test, "pingpong") && argc == 3 && a > 1)
		pingpong(a);
	else if (!strcmp(test, "falseshare") && argc == 3 && a > 0)
		falseshare(a);
	else if (!strcmp(test, "storeload") && argc == 3 && a > 0)
		storeload(a);
	else if (!strcmp(test, "chase") && argc == 4 && a > 0 && b > 0)
		chase(a, b);
	else {
		fprintf(stderr, "usage: cachebench sweep KIB STRIDE PASSES | pingpong HANDOFFS | "
				"falseshare ITERATIONS | storeload ITERATIONS | chase KIB STEPS\n");
		return 2;
	}
	return 0;
}
