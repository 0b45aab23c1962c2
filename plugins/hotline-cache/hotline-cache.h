/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's parts (hotline-cache.c says what the plugin does; each
 * part says what it does).  Each keeps its state static, reached through
 * the functions its header declares, and calls only the parts below it, so
 * that no two parts call each other (tests/test_plugin_modules.py):
 *
 *   hotline-cache.c  the entry: install, QEMU's callbacks, the markers and
 *                    the report at exit
 *   output.c         the counts written out (docs/hotline-cache-format.md),
 *                    and a failed write failing the run
 *   weave.c          the turns' accesses woven block by block (interleave=)
 *   model-thread.c   the model's own host thread, fed windows through a
 *                    ring (model_thread=)
 *   trace.c          the recorder of events for bench/replay.c
 *   account.c        the accounting of every block and access through the
 *                    model (the hot path, kept in one file)
 *   guest-cpu.c      the executing CPU in round-robin TCG (cpu=guest)
 *   quantum.c        vCPU turns of a chosen length, and their lengths
 *   records.c        the instructions' and blocks' records, the counted
 *                    tuples (misses, thieves, reads after partial writes)
 *   fail.c           how the plugin stops when it cannot go on
 *   options.c        the -plugin options
 *
 * This header holds what they share that is no part's state: the guest's
 * address layout, the hash, the counts one thread adds to; and the report
 * at exit, which bench/replay.c calls as QEMU does.
 *
 * Nothing here is exported from the plugin: it is built with
 * -fvisibility=hidden, and QEMU sees only qemu_plugin_install and
 * qemu_plugin_version.
 */
#ifndef HOTLINE_CACHE_H
#define HOTLINE_CACHE_H

#include <stdint.h>

#include "qemu-plugin-api.h"

/* The guest's address layout (x86-64, 4-level paging, no KASLR). */
#define KERNEL_START 0xffff800000000000ull
#define KERNEL_TEXT_MAP 0xffffffff80000000ull
#define VMEMMAP_BYTES (1ull << 40)	/* the vmemmap region */

/* A hash of up to three words, 48 bits: a bucket of a table of 2^48 or fewer
 * (the tuple tables grow past 2^24 buckets at the seeds' scale). */
static inline uint64_t bucket(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull) ^ c;

	h ^= h >> 29;
	return h * 0x94d049bb133111ebull >> 16;
}

/* A count that one thread adds to and others may read (threaded). */
static inline void add_count(uint64_t *count, uint64_t n)
{
	__atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline uint64_t read_count(const uint64_t *count)
{
	return __atomic_load_n(count, __ATOMIC_RELAXED);
}

/* At exit (QEMU's atexit callback): the last window woven, the counts
 * written to OUT, the model thread ended; a failed write fails the run
 * (output.c). */
void report(qemu_plugin_id_t id, void *udata);

#endif /* HOTLINE_CACHE_H */
