/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * roi-count: count guest instructions, loads and stores of all vCPUs inside
 * each region of interest, as marked by the guest's hotline-roi helper.
 *
 *   -plugin roi-count.so,out=FILE
 *
 * It is the smallest instrument that shows whether two runs executed the
 * same guest work: in deterministic mode the counts of every region must be
 * identical from run to run.  One line per region is written to FILE when
 * the region ends:
 *
 *   roi N insns=I loads=L stores=S
 *
 * A callback per executed block adds its instruction count and one per
 * memory access adds a load or a store; the marker instructions' callback
 * snapshots the totals.  A locked read-modify-write counts as one load and
 * one store.
 *
 * Why callbacks and not QEMU's per-vCPU inline scoreboard adds: in
 * single-threaded round-robin TCG with several vCPUs (hotline's deterministic
 * mode), QEMU 10.0 compiles the translating vCPU's index into each block as a
 * constant, and blocks with per-vCPU inline ops crash QEMU there (measured:
 * -smp 4 -accel tcg,thread=single segfaults in generated code, -smp 1 and
 * thread=multi do not).  Plain global counters are exact in that mode, since
 * only one vCPU runs at a time, and atomic adds keep them right in parallel
 * mode.
 *
 * Every write is checked: if one fails (a full disk), QEMU exits with
 * status 1 after one line naming FILE and the error, as hotline-cache does
 * (its fail_run says why _exit).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu-plugin-api.h"
#include "roi-marker.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;


struct counts {
	uint64_t insns;
	uint64_t loads;
	uint64_t stores;
};

static struct counts total;
static const char *out_path;
static FILE *out;
static int write_error;		/* errno of the first failed write, 0 if none */
static struct counts at_begin;
static int in_roi, roi_number;

static void check(int failed)
{
	if (failed && !write_error)
		write_error = errno ? errno : EIO;
}

static void add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static struct counts totals(void)
{
	return (struct counts){ __atomic_load_n(&total.insns, __ATOMIC_RELAXED),
				__atomic_load_n(&total.loads, __ATOMIC_RELAXED),
				__atomic_load_n(&total.stores, __ATOMIC_RELAXED) };
}

static void on_block(unsigned int vcpu_index, void *udata)
{
	(void)vcpu_index;
	add(&total.insns, (uintptr_t)udata);
}

static void on_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		      void *udata)
{
	(void)vcpu_index, (void)vaddr, (void)udata;
	add(qemu_plugin_mem_is_store(info) ? &total.stores : &total.loads, 1);
}

/*
 * Under multi-threaded TCG the other vCPUs keep counting while a marker
 * reads the totals: the counts are then approximate.
 */
static void on_marker(unsigned int vcpu_index, void *udata)
{
	int op = (int)(uintptr_t)udata;
	struct counts now = totals();

	(void)vcpu_index;
	if (op == ROI_BEGIN && !in_roi) {
		at_begin = now;
		in_roi = 1;
	} else if (op == ROI_END && in_roi) {
		in_roi = 0;
		check(fprintf(out, "roi %d insns=%" PRIu64 " loads=%" PRIu64 " stores=%" PRIu64
			      "\n", roi_number++, now.insns - at_begin.insns,
			      now.loads - at_begin.loads, now.stores - at_begin.stores) < 0);
		check(fflush(out) != 0);
	}
}

static int marker_op(const struct qemu_plugin_insn *insn)
{
	uint8_t bytes[ROI_MARKER_LEN];

	if (qemu_plugin_insn_size(insn) != ROI_MARKER_LEN)
		return 0;
	return roi_marker_op(bytes, qemu_plugin_insn_data(insn, bytes, ROI_MARKER_LEN));
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		int op = marker_op(insn);

		qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (op == ROI_BEGIN || op == ROI_END)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)op);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	if (in_roi)
		check(fprintf(out, "roi %d unterminated\n", roi_number) < 0);
	check(fflush(out) != 0);
	check(fsync(fileno(out)) != 0 && errno != EINVAL);	/* EINVAL: a device or pipe */
	check(fclose(out) != 0);
	if (write_error) {
		fprintf(stderr, "roi-count: cannot write %s: %s\n", out_path, strerror(write_error));
		fflush(NULL);
		_exit(1);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0) {
			path = argv[i] + 4;
		} else {
			fprintf(stderr, "roi-count: unknown option '%s' (expected out=FILE)\n",
				argv[i]);
			return -1;
		}
	}
	if (!path) {
		fprintf(stderr, "roi-count: missing option out=FILE\n");
		return -1;
	}
	if (!info->system_emulation) {
		fprintf(stderr, "roi-count: needs full-system emulation\n");
		return -1;
	}
	out_path = path;
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
