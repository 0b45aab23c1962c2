/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's -plugin options (options.c): parsed one by one at install,
 * then read through options().  hotline-cache.c's header lists them.
 */
#ifndef HOTLINE_CACHE_OPTIONS_H
#define HOTLINE_CACHE_OPTIONS_H

#include <stdint.h>

#include "cachemodel.h"

struct options {
	struct cm_config cache;		/* the model's: cpus=, line=, l1i= ... sb= */
	const char *out_path;		/* out= */
	int cpu_from_guest;		/* cpu=guest; cpu=index: 0 */
	uint64_t cpu_number_offset;	/* cpu_number= */
	uint64_t vmemmap_base;		/* vmemmap= */
	uint32_t page_size;		/* page_size= */
	uint64_t quantum;		/* quantum=: instructions per turn, or 0 */
	uint64_t phase;			/* phase=: deadlines this much earlier */
	int interleave_block;		/* interleave=block */
	int model_thread;		/* model_thread=on (the default): the weave on a thread of its own */
	char text[1024];		/* the options but out= and model_thread=, as the output's
					 * header shows them */
};

/* Parses one option (KEY=VALUE) into the options; 0 if it is not one of
 * them or its value is not what the key takes (a number: digits only,
 * decimal or 0x hex, no sign and nothing after it). */
int parse_option(const char *arg);

/* The options parsed so far. */
const struct options *options(void);

/* cpu=index: multi-threaded TCG runs each vCPU's callbacks on a thread of
 * its own (hotline-cache.c, "Threads"). */
static inline int threaded(void)
{
	return !options()->cpu_from_guest;
}

#endif /* HOTLINE_CACHE_OPTIONS_H */
