/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The weave, interleave=block (weave.c): each window's blocks and accesses
 * held, then handed to the accounting woven as CPUs running at once would
 * make them.
 */
#ifndef HOTLINE_CACHE_WEAVE_H
#define HOTLINE_CACHE_WEAVE_H

#include <stdint.h>

#include "records.h"

/* The weave on: what it holds, after the options are parsed.  Without it
 * weave_flush does nothing. */
void weave_install(void);

/* Hold a block or an access of the regions of interest for the window's
 * weave, in place of block_executed and data_access. */
void weave_block(uint32_t core, const struct block *b);
void weave_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr, uint32_t size,
		  int store);

/* Hand every held block and access to the accounting, woven. */
void weave_flush(void);

#endif /* HOTLINE_CACHE_WEAVE_H */
