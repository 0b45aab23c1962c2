/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Measurement only (bench/README.md): built with -DHOTLINE_CACHE_TRACE, the
 * plugin also writes the first HOTLINE_CACHE_TRACE_MAX blocks and accesses
 * of the regions of interest, with their core, to OUT.trace as struct
 * trace_event records, which bench/replay.c reads.  Without it this file
 * is empty.
 */
#include <stdio.h>

#include "account.h"
#include "options.h"
#include "records.h"
#include "trace.h"

#ifdef HOTLINE_CACHE_TRACE
#ifndef HOTLINE_CACHE_TRACE_MAX
#define HOTLINE_CACHE_TRACE_MAX 20000000
#endif
static FILE *trace_file;
static uint64_t trace_events;

void trace(struct trace_event e)
{
	lock_records();
	if (!trace_file) {
		char path[4096];

		snprintf(path, sizeof(path), "%s.trace", options()->out_path);
		trace_file = fopen(path, "w");
	}
	if (trace_file && in_roi() && trace_events++ < HOTLINE_CACHE_TRACE_MAX)
		fwrite(&e, sizeof(e), 1, trace_file);
	unlock_records();
}
#endif
