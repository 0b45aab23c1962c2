/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The weave, interleave=block (weave.c): each window's blocks and accesses
 * held, then handed to the accounting woven as CPUs running at once would
 * make them; with model_thread=on, woven and accounted on the model's own
 * host thread (model-thread.c).
 */
#ifndef HOTLINE_CACHE_WEAVE_H
#define HOTLINE_CACHE_WEAVE_H

#include <stdint.h>

#include "records.h"

/* The weave on: what it holds, after the options are parsed (model_thread=
 * too).  Without it weave_flush and weave_end do nothing. */
void weave_install(void);

/* Hold a block or an access of the regions of interest for the window's
 * weave, in place of block_executed and data_access. */
void weave_block(uint32_t core, const struct block *b);
void weave_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr, uint32_t size,
		  int store);

/* Hand every held block and access to the accounting, woven, and return
 * once the accounting has them all (with model_thread=on, once the model
 * thread has consumed every window handed): the counts are then complete. */
void weave_flush(void);

/* At exit, after the last weave_flush: the model thread ended (joined). */
void weave_end(void);

#endif /* HOTLINE_CACHE_WEAVE_H */
