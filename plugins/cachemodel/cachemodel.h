/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cachemodel: a coherent multi-core cache hierarchy, one access at a time.
 *
 * Pure C, no QEMU: the QEMU plugin feeds it, the tests drive it through
 * ctypes.  Per core a private L1I, L1D and L2, optionally one shared L3;
 * 64-byte (configurable) lines, set-associative, LRU.  The private L2 is
 * inclusive of its core's L1s, and the coherence state (MESI) of a line is
 * that of the core's private hierarchy: another core's write invalidates the
 * line in both.  The L3 is inclusive (its evictions invalidate private
 * copies), non-inclusive (filled from memory, victims written back) or
 * exclusive (filled only by private victims; a hit moves the line up).
 *
 * Every miss is classified, at each level it reached, by the first of these
 * that applies (docs/causes.md, section 1).  Each cache has a shadow: a
 * fully associative LRU cache of as many lines, fed every access that
 * reaches the cache (an L1's every access of its core, the L2's every L1
 * miss and upgrade).
 *   upgrade     a write to a line this cache holds and its core holds
 *               Shared (an upgrade of the L1D is one of the L2 too, which
 *               carries the core's state)
 *   compulsory  the cache's first access to the line
 *   coherence   another core's write took the line from this cache, which
 *               has not taken it back since, and the shadow still holds it:
 *               without the write, a fully associative cache would have hit
 *               (the result names that core and its instruction)
 *   conflict    the shadow holds the line
 *   capacity    it does not
 * A line taken by another core that the shadow has since let go of is
 * capacity: it would have gone anyway.  A line an inclusive L2 or L3 pushed
 * out of a cache is not taken: conflict or capacity.
 *
 * And per core a store buffer of the last N stores within W instructions:
 * a load that overlaps the youngest overlapping store without being
 * contained in it is a read after a partial write.
 */
#ifndef HOTLINE_CACHEMODEL_H
#define HOTLINE_CACHEMODEL_H

#include <stdbool.h>
#include <stdint.h>

enum cm_kind { CM_IFETCH, CM_LOAD, CM_STORE, CM_RMW, CM_NKINDS };

/* What happened at one level of one access. */
enum cm_outcome {
	CM_NOT_REACHED,
	CM_HIT,
	CM_COMPULSORY,
	CM_CAPACITY,
	CM_CONFLICT,
	CM_COHERENCE,
	CM_UPGRADE,
	CM_NOUTCOMES
};

/* Who supplied the data. */
enum cm_source { CM_FROM_L1, CM_FROM_L2, CM_FROM_L3, CM_FROM_PEER, CM_FROM_MEMORY, CM_NSOURCES };

enum cm_inclusion { CM_NON_INCLUSIVE, CM_INCLUSIVE, CM_EXCLUSIVE, CM_NINCLUSIONS };

/*
 * The name of each value of the enums above, or NULL past the last one.
 * These are the only spellings: the plugin writes the outcomes' names into
 * its output's header and parses inclusion= by name, and Python reads all
 * four lists from this library (src/hotline/cachemodel.py) or from the
 * output's header (src/hotline/results/plugin_output.py).
 */
const char *cm_kind_name(uint32_t kind);
const char *cm_outcome_name(uint32_t outcome);
const char *cm_source_name(uint32_t source);
const char *cm_inclusion_name(uint32_t inclusion);

struct cm_cache_config {
	uint32_t size_bytes;	/* 0: no such cache (L3 only) */
	uint32_t assoc;
	uint32_t latency;	/* cycles to serve a hit */
};

struct cm_config {
	uint32_t cores;
	uint32_t line_bytes;
	struct cm_cache_config l1i, l1d, l2, l3;
	uint32_t inclusion;		/* enum cm_inclusion, of the L3 */
	uint32_t memory_latency;
	uint32_t peer_latency;		/* cache-to-cache transfer or invalidation */
	uint32_t store_buffer_entries;
	uint32_t store_buffer_window;	/* instructions */
};

struct cm_result {
	uint8_t l1, l2, l3;		/* enum cm_outcome at each level */
	uint8_t source;			/* enum cm_source */
	uint8_t partial_write;		/* 1: read after a partial write */
	/* Coherence miss: the core whose write took the line and that write's
	 * instruction (the L1's, if both levels' misses are coherence); else -1. */
	int16_t stolen_by;
	uint32_t cycles;		/* latency of the level that served the access */
	uint64_t stolen_by_pc;
	uint64_t store_pc;		/* partial write: the store's instruction */
};

/*
 * Where each member of the three structs above lies, for mirrors of them in
 * other languages (the ctypes structures of src/hotline/cachemodel.py, which
 * are checked against this when the library is loaded): one entry per
 * member, one per struct with member "" giving its size, then all NULL.
 */
struct cm_member {
	const char *type, *member;
	uint32_t offset, size;
};

const struct cm_member *cm_layout(void);

struct cm_model;

/* NULL if the configuration is impossible (see cm_config_error) or there
 * is not memory enough for it. */
struct cm_model *cm_new(const struct cm_config *config);
const char *cm_config_error(const struct cm_config *config);
void cm_free(struct cm_model *m);

/*
 * One access of `size` bytes at physical address `paddr` by instruction
 * `pc` of `core`, its `icount`-th instruction.  An access that crosses a line
 * boundary is modelled as one access per line; the result is the worst of
 * them (the first one that went furthest).  Returns whether that is all
 * there is to say: an L1 hit, no read after a partial write.  (A caller that
 * tested the two bytes of the result instead read them with one wide load
 * from the narrow stores just made, which the host cannot forward: a third
 * of the accounting's samples at default scale, bench/README.md.)
 */
bool cm_access(struct cm_model *m, uint32_t core, uint64_t pc, uint64_t paddr, uint32_t size,
	       uint32_t kind, uint64_t icount, struct cm_result *result);

/*
 * Whether an instruction fetch of the line at `paddr` hits the core's most
 * recently fetched line, which changes nothing in the model: then it is
 * done, an L1 hit.  Otherwise (and always threaded) it changed nothing and
 * the caller makes the fetch with cm_access.  Two thirds of a fork storm's
 * blocks run again right after themselves (one byte of a `rep stosb` a
 * block) and fetch so; asking first took 5% off the host instructions of
 * the woven replay (bench/README.md, "The weave's memory").
 */
bool cm_fetch_hits(const struct cm_model *m, uint32_t core, uint64_t paddr);

/*
 * Threads.  Unthreaded (the default) the caller runs one access at a time.
 * After cm_set_threaded, called before the first access, accesses may run on
 * several threads at once, as long as each core's run one at a time (a
 * thread per core: multi-threaded TCG runs each vCPU on a thread of its
 * own).  An access that hits its core's L1 with the permission it needs,
 * on a line the L1's shadow still holds, takes no lock; every other takes
 * the model's lock (cachemodel.c says how the two meet).  One access at a
 * time, threaded or not, gives the same results.
 */
void cm_set_threaded(struct cm_model *m);

/* Threaded: how many of a core's line accesses (a split access makes two)
 * took each path; read when no access of that core is running. */
struct cm_paths {
	uint64_t unlocked, locked;
};

void cm_paths(const struct cm_model *m, uint32_t core, struct cm_paths *paths);

/*
 * For tests, while no access is running: NULL if the hierarchy is coherent
 * and consistent (a line Exclusive or Modified in one core is in no other;
 * every L1 line is in its L2; the MRU lines are in their L1, Modified where
 * the core counts on it, and so is the previous data line if still in the
 * L1; an inclusive L3 holds every private line; a line marked stolen from a
 * cache is not in it and is in its shadow), else what is wrong.
 */
const char *cm_check(struct cm_model *m);

#endif /* HOTLINE_CACHEMODEL_H */
