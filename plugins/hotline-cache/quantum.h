/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vCPU turns, cpu=guest (quantum.c): with quantum=, turns of a chosen
 * length, cut by a timer's deadlines; and the turns' lengths, measured.
 */
#ifndef HOTLINE_CACHE_QUANTUM_H
#define HOTLINE_CACHE_QUANTUM_H

#include <stdint.h>

/* Per core: turns of 2^b to 2^(b+1) - 1 instructions, and their
 * instructions. */
struct turns {
	uint64_t count[64], insns[64];
};

/* After the options are parsed: NULL, or what is wrong with quantum= and
 * phase=. */
const char *quantum_install(void);

/* At every block QEMU runs: the timer armed at the first, when QEMU's
 * clocks exist. */
void quantum_start(void);

/* A deadline: what the timer does, and what bench/replay.c does for a
 * recorded one; the deadlines so far (any thread). */
void count_deadline(void);
uint64_t deadlines(void);

/* A block run inside the regions of interest, by which vCPU (QEMU's
 * CPUState) as which core; a region's edge, which cuts the turn; the marker
 * reset. */
void turns_block(const void *vcpu, uint32_t core, uint32_t insns);
void turns_cut(void);
void turns_reset(void);

/* A core's turns. */
const struct turns *turns_of(uint32_t core);

#endif /* HOTLINE_CACHE_QUANTUM_H */
