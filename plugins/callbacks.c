/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * callbacks: the floor under hotline-cache, for bench/plugin_overhead.py.
 * It registers what hotline-cache registers, the way hotline-cache does (a
 * callback per executed block, reading the registers as deterministic mode's
 * does; a memory callback on every instruction), and in the memory callback
 * asks QEMU for the access's physical address, as any cache model of
 * physical lines must.  Then it does nothing: its run's time over plain TCG
 * is what QEMU's callback mechanism costs, and the rest of hotline-cache's
 * is the model's and the accounting's.
 *
 * With insn=on it registers what QEMU's contrib/plugins/cache.c registers
 * instead: on every instruction an execution callback (its instruction
 * fetch) and a memory callback, no registers, no block callback.  That is
 * the floor under the peer hotline-cache is timed against
 * (bench/plugin_overhead.py --contrib-cache), which pays a callback per
 * instruction where hotline-cache pays one per block.
 *
 *   -plugin callbacks.so,out=FILE[,insn=on]   (FILE is accepted and left empty)
 */
#include <stdio.h>
#include <string.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;

static int per_insn;			/* insn=on: contrib cache.c's callbacks */

/* A block executed, or with insn=on an instruction. */
static void on_exec(unsigned int vcpu_index, void *udata)
{
	(void)vcpu_index, (void)udata;
}

/* The physical address is asked for and dropped: the compiler cannot drop
 * the calls, which go into QEMU. */
static void on_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		      void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);

	(void)vcpu_index, (void)udata;
	if (hw && !qemu_plugin_hwaddr_is_io(hw))
		(void)qemu_plugin_hwaddr_phys_addr(hw);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (per_insn)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
	if (!per_insn)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_R_REGS, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "insn=on") || !strcmp(argv[i], "insn=off")) {
			per_insn = !strcmp(argv[i], "insn=on");
		} else if (strncmp(argv[i], "out=", 4)) {
			fprintf(stderr, "callbacks: unknown option '%s' (expected out=FILE "
				"or insn=on|off)\n", argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
