/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the parts of hotline-cache share (hotline-cache.c says what the plugin
 * does; each part says what it does):
 *
 *   hotline-cache.c  the entry: install, the callbacks, the accounting of
 *                    every access (the hot path, kept in one file)
 *   options.c        the -plugin options
 *   records.c        the instructions' and blocks' records, the counted
 *                    tuples (misses, thieves, reads after partial writes)
 *   output.c         the counts written out (docs/hotline-cache-format.md),
 *                    and a failed write failing the run
 *   guest-cpu.c      the executing CPU in round-robin TCG (cpu=guest)
 *   quantum.c        vCPU turns of a chosen length, and their lengths
 *   weave.c          the turns' accesses woven block by block (interleave=)
 *   trace.c          the recorder of events for bench/replay.c
 *
 * Nothing here is exported from the plugin: it is built with
 * -fvisibility=hidden, and QEMU sees only qemu_plugin_install and
 * qemu_plugin_version.
 */
#ifndef HOTLINE_CACHE_H
#define HOTLINE_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cachemodel.h"
#include "qemu-plugin-api.h"

/* ---- options (options.c) ------------------------------------------------ */

extern struct cm_config config;
extern const char *out_path;
extern uint32_t line_shift;		/* log2(line_bytes) */
extern int cpu_from_guest;
extern uint64_t cpu_number_offset;
extern uint64_t vmemmap_base;
extern uint32_t page_size;
extern char options_text[1024];

int parse_option(const char *arg);

/* ---- records (records.c) ------------------------------------------------ */

/* The kinds of access counted, and their names in the output (its header
 * lists them: readers take them from there). */
enum kind { KIND_READ, KIND_WRITE, KIND_RMW, KIND_FETCH, NKINDS };
extern const char *const kind_names[NKINDS];

/*
 * Counts per (instruction, kind).  An L1 hit, most accesses, is counted
 * apart (struct insn's l1_hits, or threaded its struct core_hits): it
 * reached no other level and took the L1's latency, which full_stats adds
 * when the counts are written.
 */
struct insn_stats {
	uint64_t accesses, cycles;	/* of the accesses that missed the L1 */
	uint64_t l1[CM_NOUTCOMES], l2[CM_NOUTCOMES], l3[CM_NOUTCOMES];
	uint64_t last_miss;	/* the slot of the miss tuple counted last (count_tuple) */
};

/*
 * Threaded (cpu=index): an instruction's L1 hits by core instead of in
 * l1[CM_HIT], each core's on a cache line of its own and written only by
 * that core's thread.  The marker reset moves base up to count instead of
 * clearing count, which another thread may be adding to.
 */
struct core_hits {
	_Alignas(64) uint64_t count[NKINDS], base[NKINDS];
};

/*
 * One per instruction address, shared by every translation of it.  What an
 * access that hits the L1 reads and writes is in the first cache line (the
 * struct is aligned to one): at default scale the fork storm runs some 60,000
 * instructions whose records outgrow the host's caches, and when an access
 * touched three lines of its instruction's record, the load of the per-core
 * pointer alone, on a line of its own, took 7% of the run (perf,
 * bench/README.md).
 */
struct insn {
	_Alignas(64) uint64_t pc;
	int locked;		/* read without records_lock: atomically */
	uint8_t len;
	/* Threaded, per core: the L1 hits, and the rest of the counts, made
	 * by the core's thread at its first miss here (under its tally's lock;
	 * stats_of). */
	struct core_hits *hits;
	struct insn_stats (**core_stats)[NKINDS];
	uint64_t l1_hits[NKINDS];	/* unthreaded */
	/* the first cache line ends here */
	struct insn *next;
	uint8_t bytes[16];	/* as executed: alternatives and paravirt patch the text */
	struct insn_stats stats[NKINDS];	/* unthreaded */
};
_Static_assert(offsetof(struct insn, next) == 64, "an L1 hit's fields fill one cache line");

/* One per translated block (start, end), for the fetches and the CPU. */
struct block {
	uint64_t vaddr, end;
	uint32_t insns;
	struct insn *first;
	struct block *next;
};

/*
 * Counted tuples: misses, coherence misses and reads after partial writes.
 * A tuple's key holds its record's fields by name; those a record does not
 * use stay 0:
 *   miss    cpu, pc, kind, data, outcome (at L1, L2, L3; enum cm_outcome)
 *   stolen  cpu, pc, data, other_cpu (the thief), other_pc (its instruction)
 *   rapw    cpu, pc (the load), other_pc (the store)
 */
struct key {
	uint64_t pc, data, other_pc;
	uint16_t cpu, other_cpu;	/* cm_config_error: at most 256 cores */
	uint8_t kind, outcome[3];
};
_Static_assert(sizeof(struct key) == 4 * sizeof(uint64_t),
	       "struct key has no padding: keys are hashed and compared as four words");

/* A slot of a table of tuples; count 0: empty, key all zeros. */
struct tuple {
	struct key key;
	uint64_t count, cycles;
};

#define BUCKETS (1u << 20)	/* a fork storm has some 10^5 instructions and blocks */
#define TUPLE_SLOTS (1u << 16)	/* at first: a table doubles as it fills */
extern struct insn *insns[BUCKETS];
extern struct block *blocks[BUCKETS];

/* A hash of up to three words, 48 bits: a bucket of a table of 2^48 or fewer
 * (the tuple tables grow past 2^24 buckets at the seeds' scale). */
static inline uint64_t bucket(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull) ^ c;

	h ^= h >> 29;
	return h * 0x94d049bb133111ebull >> 16;
}

/*
 * The counted tuples.  Threaded, each core has a tally of its own: every
 * tuple a core counts has that core in its key (cpu), so the tallies are
 * disjoint, and a core's thread changes only its own, under the tally's
 * lock, which no other thread takes but to reset, dump or report.
 * Unthreaded there is one tally.
 *
 * A table is open-addressed with the tuples in its slots (linear probing,
 * at most three quarters full, twice the slots when it would be more): at
 * default scale the fork storm counts 4.5 million miss tuples, and a
 * lookup that followed a bucket's pointer to a tuple elsewhere took two of
 * the host's cache misses where one slot's line now takes one (bench/README.md).
 */
struct tally {
	pthread_mutex_t lock;
	struct table {
		struct tuple *slots;
		uint64_t mask;		/* slots - 1 */
		uint64_t tuples;
	} misses, stolen, rapw;
};

extern struct tally *tallies;
extern uint32_t ntallies;		/* threaded: the cores; else 1 */

/* Every tuple of one table (misses, stolen, rapw), tally by tally, each in
 * slot order. */
#define FOR_EACH_TUPLE(t, table)						\
	for (uint32_t set_ = 0; set_ < ntallies; set_++)			\
		for (const struct tuple *t = tallies[set_].table.slots,		\
		     *end_ = t + tallies[set_].table.mask + 1; t < end_; t++)	\
			if (t->count)

void tally_init(struct tally *t);
/* Counts the tuple; returns its slot, which stays its slot until the table
 * grows (a caller that keeps it compares the key before using it again). */
uint64_t count_tuple(struct table *table, const struct key *key, uint64_t cycles);
struct insn *insn_at(uint64_t pc, const uint8_t *bytes, size_t len);
struct block *block_at(uint64_t vaddr, uint64_t end, uint32_t count, struct insn *first);
void reset_counters(void);

/* ---- state (hotline-cache.c) -------------------------------------------- */

/*
 * Threads.  Round-robin TCG (cpu=guest) runs every callback on one thread:
 * nothing here takes a lock (uncontended locking cost about a tenth of the
 * plugin's time).  Multi-threaded TCG (cpu=index) runs each vCPU's
 * callbacks on a thread of its own, so that the plugin gains with host
 * cores:
 *   - the model is threaded (cm_set_threaded): an access that hits its
 *     core's L1 takes no lock, any other takes the model's;
 *   - what one core counts on every access (struct vcpu, struct core_hits)
 *     is that core's own, written only by its thread;
 *   - what it counts after an L1 miss or a read after a partial write (its
 *     tally, its struct insn_stats) is its own too, under its tally's lock;
 *   - the instructions and blocks change under records_lock (translation);
 *     the markers and the report take it and every tally's lock (lock_all).
 */
extern int threaded;			/* cpu=index */
extern pthread_mutex_t records_lock;

static inline void lock_records(void)
{
	if (threaded)
		pthread_mutex_lock(&records_lock);
}

static inline void unlock_records(void)
{
	if (threaded)
		pthread_mutex_unlock(&records_lock);
}

void lock_all(void);
void unlock_all(void);

/* The tally of a core's tuples. */
static inline struct tally *tally_of(uint32_t core)
{
	return threaded ? &tallies[core] : &tallies[0];
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

/* Per core, on a cache line of its own; written only by that core's thread
 * but for roi_base (the marker reset, under lock_all). */
struct vcpu {
	_Alignas(64) uint64_t icount;	/* in executed blocks' instructions */
	uint64_t roi_icount;		/* the part of it inside ROIs */
	uint64_t roi_base;		/* roi_icount at the last reset */
	struct insn *pending_rmw;	/* read of a locked RMW seen, write to come */
};

extern struct cm_model *model;
extern int in_roi;			/* read without records_lock: atomically */
extern struct vcpu *vcpus;

#define KERNEL_START 0xffff800000000000ull
#define KERNEL_TEXT_MAP 0xffffffff80000000ull
#define VMEMMAP_BYTES (1ull << 40)	/* the vmemmap region, 4-level paging */

/* ---- what bench/replay.c drives (hotline-cache.c) ----------------------- */

void block_executed(uint32_t core, const struct block *b);
void data_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr, uint32_t size,
		 int store);

/* ---- output (output.c) -------------------------------------------------- */

void dump_counters(void);
void report(qemu_plugin_id_t id, void *udata);
void remove_output(const char *path);

/* ---- the executing CPU, cpu=guest (guest-cpu.c) -------------------------- */

extern uint32_t current_core;
extern uint32_t nbases;

void guest_cpu_install(qemu_plugin_id_t id);
/* Settles current_core; returns the vCPU QEMU runs now (its CPUState), or
 * NULL where QEMU does not say. */
const void *follow_core(uint64_t block_vaddr);

/* ---- vCPU turns, cpu=guest (quantum.c) ---------------------------------- */

extern uint64_t quantum;		/* quantum=: instructions per turn, or 0 */
extern uint64_t phase;			/* phase=: deadlines this much earlier */
extern uint64_t deadlines;		/* the timer's deadlines so far (atomic) */
/* Per core: turns of 2^b to 2^(b+1) - 1 instructions, and their
 * instructions. */
struct turns {
	uint64_t count[64], insns[64];
};
extern struct turns *turns;

const char *quantum_install(void);	/* NULL, or what is wrong */
void quantum_arm(void);
extern int quantum_armed;

/* Arms the timer at the first block QEMU runs, when its clocks exist; every
 * block calls it, so the test is here, inline. */
static inline void quantum_start(void)
{
	if (__builtin_expect(!quantum_armed, 0))
		quantum_arm();
}
void turns_block(const void *vcpu, uint32_t core, uint32_t insns);
void turns_cut(void);
void turns_reset(void);

/* ---- the weave, interleave=block (weave.c) ------------------------------ */

extern int weave_blocks;		/* interleave=block */

void weave_install(void);
/* Hold a block or an access of the regions of interest for the window's
 * weave, in place of block_executed and data_access. */
void weave_block(uint32_t core, const struct block *b);
void weave_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr, uint32_t size,
		  int store);
/* Hand every held block and access to the model, woven. */
void weave_flush(void);

/* ---- the recorder (trace.c) --------------------------------------------- */

#include "trace-event.h"

#ifdef HOTLINE_CACHE_TRACE
void trace(struct trace_event e);
#define TRACE(...) trace((struct trace_event){ __VA_ARGS__ })
#else
#define TRACE(...) ((void)0)
#endif

#endif /* HOTLINE_CACHE_H */
