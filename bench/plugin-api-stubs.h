/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU's side of the plugin API for the replays (bench/replay.c,
 * bench/replay_contrib.c), which feed a plugin a recorded stream without
 * QEMU: registering at install does nothing, and what only translation
 * calls aborts, since a replay translates nothing.  Included after the
 * plugin API's declarations (hotline's plugins/qemu-plugin-api.h or
 * QEMU's qemu-plugin.h); each replay stubs what else its plugin calls.
 */
#ifndef BENCH_PLUGIN_API_STUBS_H
#define BENCH_PLUGIN_API_STUBS_H

#include <stdlib.h>

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb)
{
	(void)id, (void)cb;
}
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata)
{
	(void)id, (void)cb, (void)userdata;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define UNUSED_API(type, call) type call { abort(); }
UNUSED_API(void, qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *i,
	   qemu_plugin_vcpu_udata_cb_t c, enum qemu_plugin_cb_flags f, void *u))
UNUSED_API(void, qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *i,
	   qemu_plugin_vcpu_mem_cb_t c, enum qemu_plugin_cb_flags f, enum qemu_plugin_mem_rw r,
	   void *u))
UNUSED_API(size_t, qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *t))
UNUSED_API(struct qemu_plugin_insn *, qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *t,
	   size_t i))
UNUSED_API(uint64_t, qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *i))
#pragma GCC diagnostic pop

#endif /* BENCH_PLUGIN_API_STUBS_H */
