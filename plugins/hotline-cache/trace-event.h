/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Measurement only (bench/README.md): built with -DHOTLINE_CACHE_TRACE, the
 * plugin also writes the first HOTLINE_CACHE_TRACE_MAX blocks and accesses
 * of the regions of interest, with their core, to OUT.trace as these
 * records, which bench/replay.c reads: in the order the model sees them,
 * or with interleave=block in the order the weave holds them, with a 'D'
 * record wherever it wove them (replay's `woven` weaves them again there).
 * bench/replay_contrib.c feeds the same records to QEMU's contrib cache
 * plugin; this header needs nothing of the plugin's, so that it can.
 */
#ifndef HOTLINE_CACHE_TRACE_EVENT_H
#define HOTLINE_CACHE_TRACE_EVENT_H

#include <stdint.h>

struct trace_event {
	uint8_t type;		/* 'B' block, 'A' access, 'D' the weave's window ends */
	uint8_t core, store, locked;
	uint32_t size;		/* access: bytes; block: instructions */
	uint64_t pc;		/* block: its start */
	uint64_t vaddr;		/* block: its end */
	uint64_t paddr;
};

#endif /* HOTLINE_CACHE_TRACE_EVENT_H */
