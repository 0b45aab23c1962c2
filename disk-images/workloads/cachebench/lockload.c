// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lockload ITERATIONS: store to four lines, then `lock andb` on a byte, then
 * load the 8-byte word that holds it, ITERATIONS times in one region of
 * interest; prints one JSON object.
 *
 * x86's locked instructions are full barriers: `lock andb` cannot complete
 * before every older store has left the store buffer for the L1D, and no
 * younger load may pass it.  The four stores before it, each to a line of
 * its own that stays in the L1D, are what it waits for; the load after it
 * reads the word the locked instruction wrote a byte of.
 *
 * A program of its own, not a test of cachebench: a new loop there moves
 * cachebench's code and data, which the cache model's chase test derives
 * its misses from.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hotline-roi.h"

static uint64_t word __attribute__((aligned(64)));
static uint64_t lines[4][8] __attribute__((aligned(64)));

static __attribute__((noinline)) void lockload(long n, int m5)
{
	uint64_t sum = 0, v;

	roi_mark(ROI_BEGIN, m5);
	for (long i = 0; i < n; i++) {
		asm volatile("movq %2, (%3)\n\tmovq %2, 64(%3)\n\t"
			     "movq %2, 128(%3)\n\tmovq %2, 192(%3)\n\t"
			     "lock andb $0xfe, 1(%1)\n\tmovq (%1), %0"
			     : "=&r"(v) : "r"(&word), "r"(i), "r"(lines) : "memory");
		sum += v;
	}
	roi_mark(ROI_END, m5);
	printf("{\"test\":\"lockload\",\"iterations\":%ld,\"checksum\":%lu}\n", n,
	       (unsigned long)sum);
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;

	if (n <= 0) {
		fprintf(stderr, "usage: lockload ITERATIONS (at least 1)\n");
		return 2;
	}
	lockload(n, roi_under_gem5());
	return 0;
}
