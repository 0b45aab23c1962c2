/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The accounting of every block and access (account.c): each through the
 * cache model, counted against its instruction.  hotline-cache.c's
 * callbacks, weave.c's weave and bench/replay.c hand them here once the
 * executing core is known.
 */
#ifndef HOTLINE_CACHE_ACCOUNT_H
#define HOTLINE_CACHE_ACCOUNT_H

#include <stdint.h>

#include "records.h"

/* The model and the cores' counts, after the options are parsed. */
void account_install(void);

/* An executed block: its instructions, and inside the regions of interest
 * its fetches; a data access (inside the regions), locked if its instruction
 * was (n->locked as translated when the access was made: the weave takes it
 * then, and accounts the access later). */
void block_executed(uint32_t core, const struct block *b);
void data_access(uint32_t core, struct insn *n, int locked, uint64_t vaddr, uint64_t paddr,
		 uint32_t size, int store);

/* Whether the cores are inside the regions of interest (the markers begin
 * .. end), where accesses are counted. */
int in_roi(void);
void set_in_roi(int inside);

/* A core's instructions inside the regions since the last reset. */
uint64_t roi_instructions(uint32_t core);

/* The marker reset: the counts start again (the caches keep their state). */
void account_reset(void);

/* At exit, the counts written: threaded, how many line accesses took the
 * model's lock (stderr); the model freed. */
void account_end(void);

#endif /* HOTLINE_CACHE_ACCOUNT_H */
