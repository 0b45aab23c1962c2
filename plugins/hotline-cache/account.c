/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's accounting: every executed block's fetches and every data
 * access of the regions of interest through the coherent cache model, each
 * counted against the instruction that made it (records.c), the misses also
 * as tuples.  This is the plugin's hot path, kept in one file; what decides
 * which core made an access (hotline-cache.c, guest-cpu.c) and in what order
 * the model sees them (weave.c) comes before it.
 *
 * Threads: see hotline-cache.c.  An access that hits its core's L1 takes no
 * lock; what it counts is its core's own (struct vcpu, struct core_hits).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "fail.h"
#include "hotline-cache.h"
#include "options.h"

/* Per core, on a cache line of its own; written only by that core's thread
 * but for roi_base (the marker reset, under lock_all). */
struct vcpu {
	_Alignas(64) uint64_t icount;	/* in executed blocks' instructions */
	uint64_t roi_icount;		/* the part of it inside ROIs */
	uint64_t roi_base;		/* roi_icount at the last reset */
	struct insn *pending_rmw;	/* read of a locked RMW seen, write to come */
};

static struct cm_model *model;
static struct vcpu *vcpus;
static int inside;			/* in_roi; read without the records' lock: atomically */
/* Set at install from the options, read on every access. */
static int is_threaded;			/* cpu=index */
static uint32_t line_shift;		/* log2(line_bytes) */
static const struct options *opt;

void account_install(void)
{
	size_t bytes;

	opt = options();
	if (!(model = cm_new(&opt->cache)))
		out_of_memory("the cache model", sizeof(struct cm_config));
	while ((1u << line_shift) < opt->cache.line_bytes)
		line_shift++;
	bytes = opt->cache.cores * sizeof(*vcpus);
	vcpus = checked(aligned_alloc(_Alignof(struct vcpu), bytes), "the cores' counts", bytes);
	memset(vcpus, 0, bytes);
	is_threaded = threaded();
	if (is_threaded)
		cm_set_threaded(model);
}

int in_roi(void)
{
	return __atomic_load_n(&inside, __ATOMIC_RELAXED);
}

void set_in_roi(int in)
{
	__atomic_store_n(&inside, in, __ATOMIC_RELAXED);
}

uint64_t roi_instructions(uint32_t core)
{
	return read_count(&vcpus[core].roi_icount) - vcpus[core].roi_base;
}

/* What attribution needs of a data address (hotline-cache.c's header). */
static uint64_t data_key(uint64_t vaddr, enum kind kind)
{
	if (kind == KIND_FETCH || vaddr < KERNEL_START)
		return 0;
	if (opt->vmemmap_base && vaddr - opt->vmemmap_base < VMEMMAP_BYTES)
		return opt->vmemmap_base + (vaddr - opt->vmemmap_base) % opt->page_size;
	if (vaddr >= KERNEL_TEXT_MAP)
		return vaddr;
	return vaddr & ~(uint64_t)(opt->cache.line_bytes - 1);
}

static void account_miss(uint32_t core, uint64_t pc, uint64_t vaddr, enum kind kind,
			 struct insn *n, const struct cm_result *r);

static void account(uint32_t core, uint64_t pc, uint64_t vaddr, uint64_t paddr, uint32_t size,
		    enum kind kind, struct insn *n)
{
	static const uint32_t model_kind[] = { CM_LOAD, CM_STORE, CM_RMW, CM_IFETCH };
	struct cm_result r;

	if (cm_access(model, core, pc, paddr, size, model_kind[kind], vcpus[core].icount, &r)) {
		if (is_threaded)
			add_count(&n->hits[core].count[kind], 1);
		else
			n->l1_hits[kind]++;
		return;
	}
	account_miss(core, pc, vaddr, kind, n, &r);
}

/* The counts a core makes of an instruction's accesses of one kind beyond
 * its L1 hits (under its tally's lock, threaded). */
static struct insn_stats *stats_of(struct insn *n, uint32_t core, enum kind kind)
{
	if (!n->core_stats)
		return &n->stats[kind];
	if (!n->core_stats[core])
		n->core_stats[core] = checked(calloc(1, sizeof(*n->core_stats[core])),
					      "an instruction's counts",
					      sizeof(*n->core_stats[core]));
	return &(*n->core_stats[core])[kind];
}

/* The rest of account: an L1 miss, or a read after a partial write.  Out
 * of line, so that account's L1 hit saves no registers for it. */
static __attribute__((noinline)) void account_miss(uint32_t core, uint64_t pc, uint64_t vaddr,
						   enum kind kind, struct insn *n,
						   const struct cm_result *r)
{
	struct tally *tally = tally_of(core);
	struct insn_stats *s;

	if (is_threaded)
		pthread_mutex_lock(&tally->lock);
	s = stats_of(n, core, kind);
	s->l1[r->l1]++;
	if (r->l1 != CM_HIT) {
		struct key miss = { .cpu = core, .pc = pc, .kind = kind,
				    .data = data_key(vaddr, kind),
				    .outcome = { r->l1, r->l2, r->l3 } };

		s->accesses++;
		s->cycles += r->cycles;
		s->l2[r->l2]++;
		s->l3[r->l3]++;
		/* An instruction's misses often repeat its last one's tuple.  Its
		 * slot may have gone to another tuple as the table grew, or been
		 * emptied (a miss's key is never all zeros): the key says. */
		struct tuple *last = &tally->misses.slots[s->last_miss & tally->misses.mask];

		if (!memcmp(&last->key, &miss, sizeof(miss))) {
			last->count++;
			last->cycles += r->cycles;
		} else {
			s->last_miss = count_tuple(&tally->misses, &miss, r->cycles);
		}
		/* The thieves table is the L1's: an L2 coherence miss under an
		 * L1 capacity or conflict miss names no thief of the L1. */
		if (r->l1 == CM_COHERENCE && r->stolen_by >= 0) {
			struct key thief = { .cpu = core, .pc = pc, .data = miss.data,
					     .other_cpu = r->stolen_by, .other_pc = r->stolen_by_pc };

			count_tuple(&tally->stolen, &thief, 0);
		}
	}
	if (r->partial_write) {
		struct key pair = { .cpu = core, .pc = pc, .other_pc = r->store_pc };

		count_tuple(&tally->rapw, &pair, 0);
	}
	if (is_threaded)
		pthread_mutex_unlock(&tally->lock);
}

/*
 * What the plugin does with an executed block and with a data access once
 * it knows the executing core: everything after QEMU's part.  bench/replay.c
 * drives these two with a recorded stream (trace.c), to measure the model
 * and the accounting without QEMU.
 */
void block_executed(uint32_t core, const struct block *b)
{
	struct vcpu *v = &vcpus[core];

	v->icount += b->insns;
	if (__atomic_load_n(&inside, __ATOMIC_RELAXED)) {
		uint64_t offset = b->vaddr >= KERNEL_TEXT_MAP ? KERNEL_TEXT_MAP : 0;

		add_count(&v->roi_icount, b->insns);
		for (uint64_t line = b->vaddr >> line_shift; line <= (b->end - 1) >> line_shift;
		     line++) {
			uint64_t paddr = (line << line_shift) - offset;

			if (cm_fetch_hits(model, core, paddr))	/* unthreaded only */
				b->first->l1_hits[KIND_FETCH]++;
			else
				account(core, b->vaddr, line << line_shift, paddr,
					opt->cache.line_bytes, KIND_FETCH, b->first);
		}
	}
}

void data_access(uint32_t core, struct insn *n, int locked, uint64_t vaddr, uint64_t paddr,
		 uint32_t size, int store)
{
	enum kind kind = store ? KIND_WRITE : KIND_READ;
	struct vcpu *v = &vcpus[core];

	if (locked) {
		kind = KIND_RMW;
		if (!store) {
			v->pending_rmw = n;		/* round-robin: the read */
		} else if (v->pending_rmw == n) {
			v->pending_rmw = NULL;		/* round-robin: its write */
			return;
		}
	}
	account(core, n->pc, vaddr, paddr, size, kind, n);
}

void account_reset(void)
{
	records_reset();
	for (uint32_t c = 0; c < opt->cache.cores; c++)
		vcpus[c].roi_base = read_count(&vcpus[c].roi_icount);
}

/* Threaded: how many line accesses took the lock (stderr: QEMU's log). */
static void report_paths(void)
{
	uint64_t unlocked = 0, locked = 0;

	for (uint32_t c = 0; c < opt->cache.cores; c++) {
		struct cm_paths paths;

		cm_paths(model, c, &paths);
		unlocked += paths.unlocked;
		locked += paths.locked;
	}
	fprintf(stderr, "hotline-cache: threaded model: %" PRIu64 " line accesses, %" PRIu64
		" without the lock, %" PRIu64 " under it (%.2f%%)\n", unlocked + locked, unlocked,
		locked, unlocked + locked ? 100.0 * (double)locked / (double)(unlocked + locked) : 0.0);
}

void account_end(void)
{
	if (is_threaded)
		report_paths();
	cm_free(model);
}
