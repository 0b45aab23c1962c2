// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lockload ITERATIONS MODE: stores, then `lock andb` on a byte, then a load
 * of the 8-byte word that holds it, ITERATIONS times in one region of
 * interest; prints one JSON object.  MODE says what the stores are:
 *
 *   hits  four stores, each to a line of its own that stays in the L1D;
 *   miss  one store to the next line of a 16 MiB array, touched beforehand
 *         (so no page fault in the region) and far larger than any L2 of
 *         the systems, so that each store misses to memory.
 *
 * x86's locked instructions are full barriers: `lock andb` cannot complete
 * before every older store has left the store buffer for the L1D, and no
 * younger load may pass it.  The stores before it are what it waits for:
 * a few cycles each when they hit, about the memory latency when one
 * misses.  The load after it reads the word the locked instruction wrote a
 * byte of.
 *
 * A program of its own, not a test of cachebench: a new loop there moves
 * cachebench's code and data, which the cache model's chase test derives
 * its misses from.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotline-roi.h"

#define FAR_BYTES (16L << 20)
#define LINE 64

static uint64_t word __attribute__((aligned(64)));
static uint64_t lines[4][8] __attribute__((aligned(64)));
static char far[FAR_BYTES] __attribute__((aligned(64)));

static __attribute__((noinline)) uint64_t after_hits(long n)
{
	uint64_t sum = 0, v;

	for (long i = 0; i < n; i++) {
		asm volatile("movq %2, (%3)\n\tmovq %2, 64(%3)\n\t"
			     "movq %2, 128(%3)\n\tmovq %2, 192(%3)\n\t"
			     "lock andb $0xfe, 1(%1)\n\tmovq (%1), %0"
			     : "=&r"(v) : "r"(&word), "r"(i), "r"(lines) : "memory");
		sum += v;
	}
	return sum;
}

static __attribute__((noinline)) uint64_t after_miss(long n)
{
	uint64_t sum = 0, v;

	for (long i = 0; i < n; i++) {
		char *line = far + (i * LINE) % FAR_BYTES;

		asm volatile("movq %2, (%3)\n\t"
			     "lock andb $0xfe, 1(%1)\n\tmovq (%1), %0"
			     : "=&r"(v) : "r"(&word), "r"(i), "r"(line) : "memory");
		sum += v;
	}
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc == 3 ? atol(argv[1]) : 0;
	int miss = n > 0 && !strcmp(argv[2], "miss");
	uint64_t sum;
	int m5;

	if (n <= 0 || (!miss && strcmp(argv[2], "hits"))) {
		fprintf(stderr, "usage: lockload ITERATIONS hits|miss (ITERATIONS at least 1)\n");
		return 2;
	}
	if (miss)
		memset(far, 1, sizeof(far));
	m5 = roi_under_gem5();
	roi_mark(ROI_BEGIN, m5);
	sum = miss ? after_miss(n) : after_hits(n);
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"lockload\",\"mode\":\"%s\",\"iterations\":%ld,\"checksum\":%lu}\n",
	       miss ? "miss" : "hits", n, (unsigned long)sum);
	return 0;
}
