/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inline-count: the floor of bench/plugin_overhead.py without callbacks.
 * QEMU 10's inline operations count every executed block's instructions
 * and every memory access in a per-vCPU scoreboard, in the generated code
 * itself; at exit the totals of the whole run (boot included) are written:
 *
 *   -plugin inline-count.so,out=FILE
 *   FILE: insns=I accesses=A
 *
 * Its time over plain TCG is the least any instrument of every access can
 * cost in QEMU.  It runs in parallel mode only: in single-threaded
 * round-robin TCG with several vCPUs QEMU 10.0.2 crashes (SIGSEGV) in
 * generated code as the secondary CPUs come up when blocks carry per-vCPU
 * inline operations (docs/qemu-notes.md; seen again on the deterministic
 * smoke fork storm, 2026-11-25), so bench/plugin_overhead.py times it in
 * parallel mode alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;

struct counts {
	uint64_t insns, accesses;
};

static qemu_plugin_u64 insns, accesses;
static const char *out_path;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, insns, n);
	for (size_t i = 0; i < n; i++)
		qemu_plugin_register_vcpu_mem_inline_per_vcpu(qemu_plugin_tb_get_insn(tb, i),
							      QEMU_PLUGIN_MEM_RW,
							      QEMU_PLUGIN_INLINE_ADD_U64, accesses, 1);
}

static void on_exit_(qemu_plugin_id_t id, void *udata)
{
	FILE *out = fopen(out_path, "w");
	int failed;

	(void)id, (void)udata;
	failed = !out || fprintf(out, "insns=%" PRIu64 " accesses=%" PRIu64 "\n",
				 qemu_plugin_u64_sum(insns), qemu_plugin_u64_sum(accesses)) < 0;
	if (out && fclose(out))
		failed = 1;
	if (failed) {
		fprintf(stderr, "inline-count: cannot write %s: %s\n", out_path, strerror(errno));
		unlink(out_path);
		_exit(1);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	struct qemu_plugin_scoreboard *score;

	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4)) {
			fprintf(stderr, "inline-count: unknown option '%s' (expected out=FILE)\n",
				argv[i]);
			return -1;
		}
		out_path = argv[i] + 4;
	}
	if (!out_path) {
		fprintf(stderr, "inline-count: missing option out=FILE\n");
		return -1;
	}
	score = qemu_plugin_scoreboard_new(sizeof(struct counts));
	insns = (qemu_plugin_u64){ score, offsetof(struct counts, insns) };
	accesses = (qemu_plugin_u64){ score, offsetof(struct counts, accesses) };
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_, NULL);
	return 0;
}
