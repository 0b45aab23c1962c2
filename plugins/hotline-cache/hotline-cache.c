/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache: every access of every vCPU inside the guest's regions of
 * interest, through the coherent cache model (cachemodel/), attributed to
 * the instruction that made it.
 *
 *   -plugin hotline-cache.so,out=FILE,cpus=N,line=64,l1i=SIZE:ASSOC:LATENCY,
 *           l1d=...,l2=...[,l3=...],inclusion=POLICY,memory=LATENCY,
 *           peer=LATENCY,sb=ENTRIES:WINDOW,cpu=index|guest[,cpu_number=OFFSET],
 *           vmemmap=BASE,page_size=BYTES[,quantum=INSTRUCTIONS[,phase=NS]
 *           [,interleave=turn|block]]
 *
 * cpu=index trusts QEMU's vCPU index (multi-threaded TCG, where each vCPU's
 * callbacks run on a thread of its own: see "Threads" below).  cpu=guest finds
 * the executing CPU from the guest kernel's per-CPU base (gs_base in kernel
 * mode, k_gs_base in user mode), because single-threaded round-robin TCG
 * reports the index of the vCPU that translated a block, not of the one
 * running it (docs/qemu-notes.md).  A base is mapped to a CPU number by
 * reading the kernel's per-CPU variable cpu_number (its offset in the
 * per-CPU area given as cpu_number=) the first time that CPU runs kernel code.
 * The base is read only after QEMU switched vCPUs (follow_core).
 *
 * Data accesses use the guest-physical address.  An access by a LOCK-prefixed
 * instruction, or XCHG with a memory operand, is one locked read-modify-write
 * whether QEMU reports it as one callback (multi-threaded TCG) or as a read
 * and then a write (round-robin TCG).  Instruction fetches go through the L1I
 * once per executed block, for each line the block spans: the kernel's text
 * at physical address vaddr - 0xffffffff80000000 (no KASLR), user text at its
 * virtual address (the text of one binary then shares lines across
 * processes, as it does physically).  The store buffer's instruction window
 * is counted at block granularity.
 *
 * Misses keep the data's virtual address for attribution, reduced to what
 * attribution needs so that the records stay few: a struct page (vmemmap=
 * BASE, page_size=) as the same field of the page of pfn 0, the kernel image
 * (static objects) exactly, the rest of the kernel as its line, user data
 * and instruction fetches as 0.
 *
 * Counting happens inside the regions of interest (markers begin .. end, as
 * many as the guest marks); the marker reset clears the counts, the marker
 * dump writes them to OUT.dump1, OUT.dump2, ...
 *
 * POLICY is the L3's inclusion policy by name (cm_inclusion_name).
 *
 * quantum= (cpu=guest only) bounds each vCPU's turn in round-robin TCG to
 * that many instructions, and the turns are measured; phase= shifts the turn
 * boundaries, so that repeats interleave differently (quantum.c).
 * interleave=block (with quantum=) has the model see each window's accesses
 * woven block by block as CPUs running at once would make them (weave.c);
 * interleave=turn, the default, as QEMU's turns ran them.
 *
 * Output (docs/hotline-cache-format.md), written to OUT at exit, tab-separated,
 * addresses in hex, one record a line after a '#' header with the options
 * and the names of the access kinds and of the outcomes (enum cm_outcome's,
 * cm_outcome_name), so that readers spell none of them:
 *   roi CPU INSTRUCTIONS                      instructions inside the ROIs
 *   insn PC KIND BYTES ACCESSES CYCLES L1x7 L2x7 L3x7
 *                                             outcome counts (enum cm_outcome),
 *                                             the instruction's bytes as run
 *   miss CPU PC KIND DATA L1 L2 L3 COUNT CYCLES
 *                                             accesses that missed the L1,
 *                                             by their outcome at each level
 *   stolen CPU PC DATA THIEF_CPU THIEF_PC COUNT
 *                                             coherence misses and who caused them
 *   rapw CPU STORE_PC LOAD_PC COUNT           reads after partial writes
 *   turns CPU LOG2 TURNS INSTRUCTIONS         cpu=guest: the vCPU turns of
 *                                             2^LOG2 .. 2^(LOG2+1)-1
 *                                             instructions (quantum.c)
 * and last an end marker counting the records of each type: a file without
 * it was cut short.  A write that fails (a full disk) fails the run: QEMU
 * exits with status 1 after one line naming the file (output.c's fail_run).
 *
 * The plugin's parts: hotline-cache.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotline-cache.h"
#include "roi-marker.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;

/* ---- state ---------------------------------------------------------------- */

int threaded;
pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
struct cm_model *model;
int in_roi;
struct vcpu *vcpus;

/* ---- callbacks ---------------------------------------------------------- */

/* What attribution needs of a data address (see the header comment). */
static uint64_t data_key(uint64_t vaddr, enum kind kind)
{
	if (kind == KIND_FETCH || vaddr < KERNEL_START)
		return 0;
	if (vmemmap_base && vaddr - vmemmap_base < VMEMMAP_BYTES)
		return vmemmap_base + (vaddr - vmemmap_base) % page_size;
	if (vaddr >= KERNEL_TEXT_MAP)
		return vaddr;
	return vaddr & ~(uint64_t)(config.line_bytes - 1);
}

static void account_miss(uint32_t core, uint64_t pc, uint64_t vaddr, enum kind kind,
			 struct insn *n, const struct cm_result *r);

static void account(uint32_t core, uint64_t pc, uint64_t vaddr, uint64_t paddr, uint32_t size,
		    enum kind kind, struct insn *n)
{
	static const uint32_t model_kind[] = { CM_LOAD, CM_STORE, CM_RMW, CM_IFETCH };
	struct cm_result r;

	if (cm_access(model, core, pc, paddr, size, model_kind[kind], vcpus[core].icount, &r)) {
		if (threaded)
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
		n->core_stats[core] = calloc(1, sizeof(*n->core_stats[core]));
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

	if (threaded)
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
		if (r->stolen_by >= 0) {
			struct key thief = { .cpu = core, .pc = pc, .data = miss.data,
					     .other_cpu = r->stolen_by, .other_pc = r->stolen_by_pc };

			count_tuple(&tally->stolen, &thief, 0);
		}
	}
	if (r->partial_write) {
		struct key pair = { .cpu = core, .pc = pc, .other_pc = r->store_pc };

		count_tuple(&tally->rapw, &pair, 0);
	}
	if (threaded)
		pthread_mutex_unlock(&tally->lock);
}

/*
 * What the plugin does with an executed block and with a data access once
 * it knows the executing core: everything after QEMU's part.  bench/replay.c
 * drives these two with a recorded stream (HOTLINE_CACHE_TRACE below), to
 * measure the model and the accounting without QEMU.
 */
void block_executed(uint32_t core, const struct block *b)
{
	struct vcpu *v = &vcpus[core];

	v->icount += b->insns;
	if (__atomic_load_n(&in_roi, __ATOMIC_RELAXED)) {
		uint64_t offset = b->vaddr >= KERNEL_TEXT_MAP ? KERNEL_TEXT_MAP : 0;

		add_count(&v->roi_icount, b->insns);
		for (uint64_t line = b->vaddr >> line_shift; line <= (b->end - 1) >> line_shift;
		     line++) {
			uint64_t paddr = (line << line_shift) - offset;

			if (cm_fetch_hits(model, core, paddr))	/* unthreaded only */
				b->first->l1_hits[KIND_FETCH]++;
			else
				account(core, b->vaddr, line << line_shift, paddr, config.line_bytes,
					KIND_FETCH, b->first);
		}
	}
}

void data_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr,
			uint32_t size, int store)
{
	enum kind kind = store ? KIND_WRITE : KIND_READ;
	struct vcpu *v = &vcpus[core];

	if (__atomic_load_n(&n->locked, __ATOMIC_RELAXED)) {
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

static void on_block(unsigned int vcpu_index, void *udata)
{
	struct block *b = udata;
	const void *vcpu = NULL;
	uint32_t core;

	quantum_start();
	/* Outside the regions of interest a block only matters while the CPUs'
	 * per-CPU bases are still being learnt: reading a register costs more
	 * than the rest of this callback. */
	if (!__atomic_load_n(&in_roi, __ATOMIC_RELAXED) &&
	    (!cpu_from_guest || nbases >= config.cores))
		return;
	if (cpu_from_guest)
		vcpu = follow_core(b->vaddr);
	core = cpu_from_guest ? current_core : vcpu_index;
	if (core < config.cores) {
		if (cpu_from_guest && __atomic_load_n(&in_roi, __ATOMIC_RELAXED))
			turns_block(vcpu, core, b->insns);
		if (weave_blocks && __atomic_load_n(&in_roi, __ATOMIC_RELAXED)) {
			weave_block(core, b);
			return;
		}
		TRACE('B', core, 0, 0, b->insns, b->vaddr, b->end, 0);
		block_executed(core, b);
	}
}

static void on_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		      void *udata)
{
	struct insn *n = udata;
	struct qemu_plugin_hwaddr *hw;
	uint32_t core;

	if (!__atomic_load_n(&in_roi, __ATOMIC_RELAXED))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	core = cpu_from_guest ? current_core : vcpu_index;
	if (core < config.cores) {
		uint64_t paddr = qemu_plugin_hwaddr_phys_addr(hw);
		uint32_t size = 1u << qemu_plugin_mem_size_shift(info);
		int store = qemu_plugin_mem_is_store(info);

		if (weave_blocks) {
			weave_access(core, n, vaddr, paddr, size, store);
			return;
		}
		TRACE('A', core, store, n->locked, size, n->pc, vaddr, paddr);
		data_access(core, n, vaddr, paddr, size, store);
	}
}

static void on_marker(unsigned int vcpu_index, void *udata)
{
	int op = (int)(uintptr_t)udata;

	(void)vcpu_index;
	lock_all();
	/* What the region held so far belongs to it, whatever the marker does. */
	weave_flush();
	if (op == ROI_BEGIN || op == ROI_END) {
		__atomic_store_n(&in_roi, op == ROI_BEGIN, __ATOMIC_RELAXED);
		/* Outside the regions on_block stops following the CPU: find it
		 * for the rest of this block.  Markers run in user mode. */
		if (in_roi && cpu_from_guest)
			follow_core(0);
		if (cpu_from_guest)
			turns_cut();
	} else if (op == ROI_RESET) {
		reset_counters();
		if (cpu_from_guest)
			turns_reset();
	} else if (op == ROI_DUMP) {
		dump_counters();
	}
	unlock_all();
}

/* ---- translation -------------------------------------------------------- */

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct insn *first = NULL;
	uint64_t end = 0;

	(void)id;
	lock_records();
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
		uint8_t bytes[16];
		size_t len = qemu_plugin_insn_data(qi, bytes, sizeof(bytes));
		uint64_t pc = qemu_plugin_insn_vaddr(qi);
		struct insn *in = insn_at(pc, bytes, len);
		int op = roi_marker_op(bytes, len);

		if (!first)
			first = in;
		end = pc + qemu_plugin_insn_size(qi);
		if (op >= ROI_BEGIN && op <= ROI_DUMP)
			qemu_plugin_register_vcpu_insn_exec_cb(qi, on_marker, cpu_from_guest ?
							       QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)op);
		qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, in);
	}
	if (first)
		qemu_plugin_register_vcpu_tb_exec_cb(
			tb, on_block, cpu_from_guest ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
			block_at(qemu_plugin_tb_vaddr(tb), end, (uint32_t)n, first));
	unlock_records();
}

/* ---- install ------------------------------------------------------------ */

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *error;

	for (int i = 0; i < argc; i++) {
		if (!parse_option(argv[i])) {
			fprintf(stderr, "hotline-cache: bad option '%s'\n", argv[i]);
			return -1;
		}
		if (strncmp(argv[i], "out=", 4) &&
		    strlen(options_text) + strlen(argv[i]) + 2 < sizeof(options_text)) {
			strcat(options_text, " ");
			strcat(options_text, argv[i]);
		}
	}
	if (!out_path || !info->system_emulation) {
		fprintf(stderr, "hotline-cache: needs out=FILE and full-system emulation\n");
		return -1;
	}
	if ((error = cm_config_error(&config))) {
		fprintf(stderr, "hotline-cache: %s\n", error);
		return -1;
	}
	if ((int)config.cores < info->system.smp_vcpus) {
		fprintf(stderr, "hotline-cache: cpus=%u but the machine has %d\n", config.cores,
			info->system.smp_vcpus);
		return -1;
	}
	/* Before the output is probed, so that bad options leave no file. */
	if ((error = quantum_install())) {
		fprintf(stderr, "hotline-cache: %s\n", error);
		return -1;
	}
	/* Fail now, not after the run, if the output cannot be written. */
	FILE *probe_out = fopen(out_path, "w");

	if (!probe_out || fclose(probe_out)) {
		perror(out_path);
		return -1;
	}
	model = cm_new(&config);
	while ((1u << line_shift) < config.line_bytes)
		line_shift++;
	vcpus = aligned_alloc(_Alignof(struct vcpu), config.cores * sizeof(*vcpus));
	memset(vcpus, 0, config.cores * sizeof(*vcpus));
	threaded = !cpu_from_guest;
	if (threaded)
		cm_set_threaded(model);
	ntallies = threaded ? config.cores : 1;
	tallies = calloc(ntallies, sizeof(*tallies));
	for (uint32_t i = 0; i < ntallies; i++)
		tally_init(&tallies[i]);
	turns = calloc(config.cores, sizeof(*turns));
	if (weave_blocks)
		weave_install();
	if (cpu_from_guest)
		guest_cpu_install(id);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, report, NULL);
	return 0;
}
