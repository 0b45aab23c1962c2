/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's records (records.c): one per instruction address and per
 * translated block, and the counted tuples (misses, thieves, reads after
 * partial writes).  The structures are here, for the accounting that fills
 * them and the output that writes them; the tables that hold them are
 * records.c's, reached through the functions below.
 */
#ifndef HOTLINE_CACHE_RECORDS_H
#define HOTLINE_CACHE_RECORDS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cachemodel.h"

/* The kinds of access counted; their names (kind_name) are the output's, and
 * its header lists them: readers take them from there. */
enum kind { KIND_READ, KIND_WRITE, KIND_RMW, KIND_FETCH, NKINDS };

const char *kind_name(enum kind kind);

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
	int locked;		/* read without the records' lock: atomically */
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

/* The tallies, after the options are parsed. */
void records_install(void);

/* The tally of a core's tuples (threaded: its own; else the one). */
struct tally *tally_of(uint32_t core);
/* How many tallies there are: threaded, the cores; else 1. */
uint32_t tallies(void);

/* Every tuple of one table (misses, stolen, rapw), tally by tally, each in
 * slot order. */
#define FOR_EACH_TUPLE(t, table)						\
	for (uint32_t set_ = 0; set_ < tallies(); set_++)			\
		for (const struct tuple *t = tally_of(set_)->table.slots,		\
		     *end_ = t + tally_of(set_)->table.mask + 1; t < end_; t++)	\
			if (t->count)

/* Counts the tuple; returns its slot, which stays its slot until the table
 * grows (a caller that keeps it compares the key before using it again). */
uint64_t count_tuple(struct table *table, const struct key *key, uint64_t cycles);

/* The record of the instruction at pc, and of the block (translation,
 * under lock_records). */
struct insn *insn_at(uint64_t pc, const uint8_t *bytes, size_t len);
struct block *block_at(uint64_t vaddr, uint64_t end, uint32_t count, struct insn *first);

/* Every instruction's record, in the order of their hash buckets. */
struct insn *first_insn(void);
struct insn *next_insn(const struct insn *n);

/* The marker reset: every count of the records and the tuples is 0. */
void records_reset(void);

/*
 * The records' lock (threaded only; round-robin TCG runs every callback on
 * one thread and takes none): the instructions and blocks change under it
 * (translation); the markers and the report take it and every tally's lock
 * (lock_all).
 */
void lock_records(void);
void unlock_records(void);
void lock_all(void);
void unlock_all(void);

#endif /* HOTLINE_CACHE_RECORDS_H */
