/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay_contrib: QEMU's contrib cache plugin (contrib/plugins/cache.c, the
 * peer bench/plugin_overhead.py --contrib-cache times) fed the stream that
 * bench/replay.c feeds hotline-cache, without QEMU, so that the two models'
 * own work per event can be set side by side on the same accesses (callgrind
 * counts, or the loop's wall time): what the whole runs cannot separate from
 * QEMU's callbacks.  The peer's source is QEMU's and is not in this
 * repository: it is included from the QEMU tree given at compile time
 * (bench/README.md says how).
 *
 *   replay_contrib TRACE [CACHE.C OPTIONS...]
 *
 * The peer is called as QEMU calls it (its vcpu_insn_exec per instruction,
 * its vcpu_mem_access per access), with its own locks and statistics.  A
 * trace keeps a block's first and last instruction's address and its
 * length, not each instruction's: the instructions in between are spread
 * evenly over the block, which puts about as many of them on each line as
 * the block had.  'D' records (the weave's windows) are skipped: the peer
 * sees the turns as QEMU ran them.  Only the replay loop is measured when
 * callgrind runs with --toggle-collect=replay_events; the peer's statistics
 * go to standard error at the end, as QEMU would print them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cache.c"
#include "plugin-api-stubs.h"
#include "trace-file.h"

/* QEMU's side of the plugin API that cache.c calls at run time. */
struct qemu_plugin_hwaddr {
	uint64_t phys;
};
static struct qemu_plugin_hwaddr current;	/* the access being replayed */

struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr)
{
	(void)info, (void)vaddr;
	return &current;
}
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *h)
{
	(void)h;
	return false;
}
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *h)
{
	return h->phys;
}
bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret)
{
	(void)name;
	*ret = !strcmp(val, "on") || !strcmp(val, "true") || !strcmp(val, "yes");
	return *ret || !strcmp(val, "off") || !strcmp(val, "false") || !strcmp(val, "no");
}
void qemu_plugin_outs(const char *string)
{
	fputs(string, stderr);
}
/* The rest of translation's, which cache.c calls too. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
UNUSED_API(void *, qemu_plugin_insn_haddr(const struct qemu_plugin_insn *i))
UNUSED_API(char *, qemu_plugin_insn_disas(const struct qemu_plugin_insn *i))
UNUSED_API(const char *, qemu_plugin_insn_symbol(const struct qemu_plugin_insn *i))
#pragma GCC diagnostic warning "-Wunused-parameter"

/* An instruction's record, made once per address as vcpu_tb_trans makes it. */
static InsnData *insn_data(uint64_t addr)
{
	InsnData *data = g_hash_table_lookup(miss_ht, &addr);

	if (!data) {
		data = g_new0(InsnData, 1);
		data->disas_str = g_strdup("");
		data->symbol = "";
		data->addr = addr;
		g_hash_table_insert(miss_ht, &data->addr, data);
	}
	return data;
}

/* Per event: a block's instructions' records, or an access's instruction's. */
struct prepared {
	InsnData **insns;
	InsnData *insn;
};

static void __attribute__((noinline)) replay_events(const struct trace_event *e,
						    const struct prepared *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].type == 'B') {
			for (uint32_t k = 0; k < e[i].size; k++)
				vcpu_insn_exec(e[i].core, p[i].insns[k]);
		} else if (e[i].type == 'A') {
			current.phys = e[i].paddr;
			vcpu_mem_access(e[i].core, 0, e[i].vaddr, p[i].insn);
		}
	}
}

int main(int argc, char **argv)
{
	/* One core unless cores= says otherwise. */
	qemu_info_t info = { .system_emulation = true, .system = { .smp_vcpus = 1 } };
	struct trace_event *events;
	struct prepared *prepared;
	struct timespec t0, t1;
	size_t n, blocks = 0, accesses = 0, insns = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: replay_contrib TRACE [CACHE.C OPTIONS...]\n");
		return 2;
	}
	if (qemu_plugin_install(0, &info, argc - 2, argv + 2))
		return 1;
	if (!(events = read_trace(argv[1], &n)))
		return 1;
	prepared = calloc(n, sizeof(*prepared));
	for (size_t i = 0; i < n; i++) {
		const struct trace_event *e = &events[i];

		if (e->type == 'B') {
			uint64_t span = e->vaddr > e->pc ? e->vaddr - 1 - e->pc : 0;	/* end: past its last byte */

			prepared[i].insns = malloc(e->size * sizeof(InsnData *));
			for (uint32_t k = 0; k < e->size; k++)
				prepared[i].insns[k] = insn_data(e->pc + (e->size > 1 ?
							span * k / (e->size - 1) : 0));
			blocks++;
			insns += e->size;
		} else if (e->type == 'A') {
			prepared[i].insn = insn_data(e->pc);
			accesses++;
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	replay_events(events, prepared, n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;

	fprintf(stderr, "replay_contrib: %zu events (%zu data accesses, %zu blocks of %zu "
		"instructions) in %.3f s, %.1f ns per event\n", n, accesses, blocks, insns,
		seconds, seconds * 1e9 / (double)n);
	log_stats();
	return 0;
}
