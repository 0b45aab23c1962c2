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
 *           [,interleave=turn|block]][,model_thread=on|off]
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
 * model_thread=on (the default; with interleave=block, elsewhere it changes
 * nothing) weaves and accounts each window on a host thread of the
 * plugin's own while the vCPU thread runs the next (model-thread.c,
 * weave.c): the counts are the same as model_thread=off's, where the vCPU
 * thread weaves each window itself, byte for byte (the output's header
 * does not show the option).  When the model thread falls a few windows
 * behind, the vCPU thread waits for it, and the guest pauses.
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
 * Threads.  Round-robin TCG (cpu=guest) runs every callback on one thread:
 * nothing here takes a lock (uncontended locking cost about a tenth of the
 * plugin's time).  With interleave=block and model_thread=on the model is
 * on a second thread: the vCPU thread holds each window's events (weave.c)
 * and hands the window over through a ring (model-thread.c), one lock a
 * window; the model thread weaves it and runs the model and the
 * accounting, whose state (account.c, records.c's counts) is then its
 * alone until weave_flush has waited for it to consume everything handed,
 * which every marker and the report at exit do before they read, reset or
 * write a count, or leave the region (outside the regions nothing is
 * handed).  Multi-threaded TCG (cpu=index) runs each vCPU's
 * callbacks on a thread of its own, so that the plugin gains with host
 * cores:
 *   - the model is threaded (cm_set_threaded): an access that hits its
 *     core's L1 takes no lock, any other takes the model's;
 *   - what one core counts on every access (account.c's struct vcpu, struct
 *     core_hits) is that core's own, written only by its thread;
 *   - what it counts after an L1 miss or a read after a partial write (its
 *     tally, its struct insn_stats) is its own too, under its tally's lock;
 *   - the instructions and blocks change under the records' lock
 *     (translation); the markers and the report take it and every tally's
 *     lock (lock_all).
 *
 * The plugin's parts: hotline-cache.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "guest-cpu.h"
#include "hotline-cache.h"
#include "options.h"
#include "output.h"
#include "quantum.h"
#include "records.h"
#include "roi-marker.h"
#include "trace.h"
#include "weave.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;

/* ---- callbacks ---------------------------------------------------------- */

static void on_block(unsigned int vcpu_index, void *udata)
{
	const struct options *opt = options();
	struct block *b = udata;
	const void *vcpu = NULL;
	uint32_t core;

	quantum_start();
	/* Outside the regions of interest a block only matters while the CPUs'
	 * per-CPU bases are still being learnt: reading a register costs more
	 * than the rest of this callback. */
	if (!in_roi() && (!opt->cpu_from_guest || all_cores_known()))
		return;
	if (opt->cpu_from_guest)
		vcpu = follow_core(b->vaddr);
	core = opt->cpu_from_guest ? current_core() : vcpu_index;
	if (core < opt->cache.cores) {
		if (opt->cpu_from_guest && in_roi())
			turns_block(vcpu, core, b->insns);
		if (opt->interleave_block && in_roi()) {
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
	const struct options *opt = options();
	struct insn *n = udata;
	struct qemu_plugin_hwaddr *hw;
	uint32_t core;

	if (!in_roi())
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	core = opt->cpu_from_guest ? current_core() : vcpu_index;
	if (core < opt->cache.cores) {
		uint64_t paddr = qemu_plugin_hwaddr_phys_addr(hw);
		uint32_t size = 1u << qemu_plugin_mem_size_shift(info);
		int store = qemu_plugin_mem_is_store(info);

		if (opt->interleave_block) {
			weave_access(core, n, vaddr, paddr, size, store);
			return;
		}
		int locked = __atomic_load_n(&n->locked, __ATOMIC_RELAXED);

		TRACE('A', core, store, locked, size, n->pc, vaddr, paddr);
		data_access(core, n, locked, vaddr, paddr, size, store);
	}
}

static void on_marker(unsigned int vcpu_index, void *udata)
{
	int op = (int)(uintptr_t)udata;
	int from_guest = options()->cpu_from_guest;

	(void)vcpu_index;
	lock_all();
	/* What the region held so far belongs to it, whatever the marker does:
	 * woven and counted (with the model thread, consumed) before it acts. */
	weave_flush();
	if (op == ROI_BEGIN || op == ROI_END) {
		set_in_roi(op == ROI_BEGIN);
		/* Outside the regions on_block stops following the CPU: find it
		 * for the rest of this block.  Markers run in user mode. */
		if (op == ROI_BEGIN && from_guest)
			follow_core(0);
		if (from_guest)
			turns_cut();
	} else if (op == ROI_RESET) {
		account_reset();
		if (from_guest)
			turns_reset();
	} else if (op == ROI_DUMP) {
		dump_counters();
	}
	unlock_all();
}

void report(qemu_plugin_id_t id, void *udata)
{
	(void)id, (void)udata;
	lock_all();
	weave_flush();		/* the last window, a run that ends inside a region */
	write_output();
	unlock_all();
	weave_end();		/* the model thread, idle since weave_flush, joined */
	account_end();
	output_end();
}

/* ---- translation -------------------------------------------------------- */

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	int from_guest = options()->cpu_from_guest;
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
			qemu_plugin_register_vcpu_insn_exec_cb(qi, on_marker, from_guest ?
							       QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)op);
		qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, in);
	}
	if (first)
		qemu_plugin_register_vcpu_tb_exec_cb(
			tb, on_block, from_guest ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
			block_at(qemu_plugin_tb_vaddr(tb), end, (uint32_t)n, first));
	unlock_records();
}

/* ---- install ------------------------------------------------------------ */

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const struct options *opt = options();
	const char *error;

	for (int i = 0; i < argc; i++)
		if (!parse_option(argv[i])) {
			fprintf(stderr, "hotline-cache: bad option '%s'\n", argv[i]);
			return -1;
		}
	if (!opt->out_path || !info->system_emulation) {
		fprintf(stderr, "hotline-cache: needs out=FILE and full-system emulation\n");
		return -1;
	}
	if ((error = cm_config_error(&opt->cache))) {
		fprintf(stderr, "hotline-cache: %s\n", error);
		return -1;
	}
	if ((int)opt->cache.cores < info->system.smp_vcpus) {
		fprintf(stderr, "hotline-cache: cpus=%u but the machine has %d\n",
			opt->cache.cores, info->system.smp_vcpus);
		return -1;
	}
	/* Before the output is probed, so that bad options leave no file. */
	if ((error = quantum_install())) {
		fprintf(stderr, "hotline-cache: %s\n", error);
		return -1;
	}
	/* Fail now, not after the run, if the output cannot be written. */
	FILE *probe_out = fopen(opt->out_path, "w");

	if (!probe_out || fclose(probe_out)) {
		perror(opt->out_path);
		return -1;
	}
	account_install();
	records_install();
	if (opt->interleave_block)
		weave_install();
	if (opt->cpu_from_guest)
		guest_cpu_install(id);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, report, NULL);
	return 0;
}
