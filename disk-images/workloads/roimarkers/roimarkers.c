// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * roimarkers: every region-of-interest operation, around loops whose
 * counts are known in advance, so that an instrument's handling of them can
 * be checked.  Two loops, each a store-byte-then-load-word pair (one read
 * after a partial write per iteration) at its own instructions:
 *
 *   begin  A(n)  reset  B(n)  dump  B(n)  end   A(n)   begin  A(n)  end
 *
 * An instrument that counts inside regions, clears its counts at reset and
 * writes what it has at dump reports A: n and B: 2n at the end, and B: n
 * (no A) in the dump.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hotline-roi.h"

static uint64_t word __attribute__((aligned(64)));
static uint64_t sum;

/* The loops store different bytes, so that the compiler cannot fold them
 * into one function. */
#define PARTIAL_WRITES(n, byte)                                                      \
	for (long i = 0; i < (n); i++) {                                             \
		uint64_t v;                                                          \
		asm volatile("movb %b2, " #byte "(%1)\n\tmovq (%1), %0"              \
			     : "=&r"(v) : "r"(&word), "r"((uint8_t)i) : "memory");   \
		sum += v;                                                            \
		word = 0;                                                            \
	}

static __attribute__((noinline)) void loop_a(long n) { PARTIAL_WRITES(n, 1) }
static __attribute__((noinline)) void loop_b(long n) { PARTIAL_WRITES(n, 2) }

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;
	int m5 = roi_under_gem5();

	if (n <= 0) {
		fprintf(stderr, "usage: roimarkers ITERATIONS\n");
		return 2;
	}
	roi_mark(ROI_BEGIN, m5);
	loop_a(n);
	roi_mark(ROI_RESET, m5);
	loop_b(n);
	roi_mark(ROI_DUMP, m5);
	loop_b(n);
	roi_mark(ROI_END, m5);
	loop_a(n);
	roi_mark(ROI_BEGIN, m5);
	loop_a(n);
	roi_mark(ROI_END, m5);
	printf("{\"iterations\":%ld,\"checksum\":%lu}\n", n, (unsigned long)sum);
	return 0;
}
