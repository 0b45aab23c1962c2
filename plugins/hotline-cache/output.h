/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's counts written out (output.c, docs/hotline-cache-format.md),
 * under lock_all.
 */
#ifndef HOTLINE_CACHE_OUTPUT_H
#define HOTLINE_CACHE_OUTPUT_H

/* The marker dump: the counts so far, to OUT.dumpN, N from 1. */
void dump_counters(void);

/* At exit: the counts to OUT, unless a dump failed. */
void write_output(void);

/* After write_output and the rest of the exit: if a write failed, the run
 * fails (one line naming the file, no output, QEMU's status 1). */
void output_end(void);

#endif /* HOTLINE_CACHE_OUTPUT_H */
