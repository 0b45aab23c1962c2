/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay: the hotline-cache plugin's work without QEMU.  It reads a stream of
 * executed blocks and data accesses recorded by the plugin built with
 * -DHOTLINE_CACHE_TRACE (OUT.trace) and feeds it, event by event, to the
 * plugin's own block_executed and data_access (this file is linked with the
 * plugin's sources, plugins/hotline-cache/), so that what is measured is exactly the model and the
 * plugin's accounting, with nothing of QEMU's: under
 * `valgrind --tool=callgrind` it counts their instructions per access
 * repeatably on a loaded machine.  bench/README.md says how to record a
 * trace and run it.
 *
 *   replay TRACE OUT [threads|woven] [PLUGIN OPTIONS...]
 *
 * The options are the plugin's (cpus=, l1d=, ...; out= is OUT).  The counts
 * are written to OUT in the plugin's format, for comparing two builds of the
 * model on the same stream with cmp.  Only the replay loop is measured when
 * callgrind runs with --toggle-collect=replay_events (replay_woven with
 * `woven`).
 *
 * Without `threads` the plugin runs as in round-robin TCG (cpu=guest: one
 * thread, no locks), the whole stream in its order.  With it, as in
 * multi-threaded TCG (cpu=index: the threaded model, per-core counts): each
 * core's events, in their order, on a thread of its own, all at once; it
 * also says how many line accesses took the model's lock.  The
 * interleaving is the host's, so the counts differ from run to run, as in
 * parallel mode.
 *
 * With `woven`, as with interleave=block (weave.c): blocks and accesses are
 * held and woven at each deadline, which a stream gives as an event of type
 * 'D': the recorder writes one wherever the plugin wove (a window's end, a
 * marker), so that a stream recorded with interleave=block replays as the
 * plugin ran it (without `woven`, the 'D's are skipped and the model sees
 * the turns as QEMU ran them).
 *
 * The weave runs on the replay's one thread (model_thread=off) unless the
 * options say model_thread=on: then, as the plugin does by default, the
 * hold on the replay's thread and the weave and the model on the model
 * thread (model-thread.c), the counts the same.  The time said is then
 * until the model thread has consumed the last window.  Under callgrind
 * the model thread's work is under weave_slot, not replay_woven: toggle
 * collection on both (--toggle-collect=replay_woven
 * --toggle-collect=weave_slot), or leave model_thread= off to count the
 * work on one thread as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "hotline-cache.h"
#include "options.h"
#include "plugin-api-stubs.h"
#include "quantum.h"
#include "records.h"
#include "weave.h"
#include "trace-file.h"

/* The rest of QEMU's side that hotline-cache calls: replay calls none of it
 * at run time. */
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb)
{
	(void)id, (void)cb;
}
#pragma GCC diagnostic ignored "-Wunused-parameter"
UNUSED_API(void, qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *t,
	   qemu_plugin_vcpu_udata_cb_t c, enum qemu_plugin_cb_flags f, void *u))
UNUSED_API(uint64_t, qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *t))
UNUSED_API(size_t, qemu_plugin_insn_data(const struct qemu_plugin_insn *i, void *d, size_t l))
UNUSED_API(size_t, qemu_plugin_insn_size(const struct qemu_plugin_insn *i))
UNUSED_API(bool, qemu_plugin_mem_is_store(qemu_plugin_meminfo_t i))
UNUSED_API(unsigned int, qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t i))
UNUSED_API(struct qemu_plugin_hwaddr *, qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t i,
	   uint64_t v))
UNUSED_API(bool, qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *h))
UNUSED_API(uint64_t, qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *h))
UNUSED_API(GArray *, qemu_plugin_get_registers(void))
UNUSED_API(int, qemu_plugin_read_register(struct qemu_plugin_register *h, GByteArray *b))
UNUSED_API(bool, qemu_plugin_read_memory_vaddr(uint64_t a, GByteArray *d, size_t l))
UNUSED_API(GByteArray *, g_byte_array_set_size(GByteArray *a, unsigned int l))
UNUSED_API(char *, g_array_free(GArray *a, int f))
#pragma GCC diagnostic warning "-Wunused-parameter"

/* cpu=guest's register buffer, made at install; replay reads no register. */
GByteArray *g_byte_array_new(void)
{
	static GByteArray unused;

	return &unused;
}

/* The blocks and instructions of the stream, made as translation would. */
struct prepared {
	struct block *block;
	struct insn *insn;
};

static void __attribute__((noinline)) replay_events(const struct trace_event *e,
						    const struct prepared *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].type == 'B')
			block_executed(e[i].core, p[i].block);
		else if (e[i].type == 'A')
			data_access(e[i].core, p[i].insn, p[i].insn->locked, e[i].vaddr, e[i].paddr,
				    e[i].size, e[i].store);
	}
}

/* woven: the stream as on_block and on_access hand it to weave.c, a 'D'
 * where the timer's deadline falls; weave_flush returns once every window
 * is woven and counted (model_thread=on: consumed by the model thread). */
static void __attribute__((noinline)) replay_woven(const struct trace_event *e,
						   const struct prepared *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].type == 'B')
			weave_block(e[i].core, p[i].block);
		else if (e[i].type == 'A')
			weave_access(e[i].core, p[i].insn, e[i].vaddr, e[i].paddr, e[i].size,
				     e[i].store);
		else if (e[i].type == 'D')
			count_deadline();
	}
	weave_flush();
}

/* threads: one core's events, taken out of the stream in order. */
struct core_stream {
	pthread_t thread;
	struct trace_event *events;
	struct prepared *prepared;
	size_t n;
};

static void *replay_core(void *arg)
{
	struct core_stream *c = arg;

	replay_events(c->events, c->prepared, c->n);
	return NULL;
}

static void replay_threads(const struct trace_event *e, const struct prepared *p, size_t n)
{
	uint32_t ncores = options()->cache.cores;
	struct core_stream *cores = calloc(ncores, sizeof(*cores));

	for (size_t i = 0; i < n; i++)
		cores[e[i].core].n++;
	for (uint32_t c = 0; c < ncores; c++) {
		cores[c].events = malloc((cores[c].n + 1) * sizeof(*e));
		cores[c].prepared = malloc((cores[c].n + 1) * sizeof(*p));
		cores[c].n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct core_stream *c = &cores[e[i].core];

		c->events[c->n] = e[i];
		c->prepared[c->n++] = p[i];
	}
	for (uint32_t c = 0; c < ncores; c++)
		pthread_create(&cores[c].thread, NULL, replay_core, &cores[c]);
	for (uint32_t c = 0; c < ncores; c++) {
		pthread_join(cores[c].thread, NULL);
		free(cores[c].events);
		free(cores[c].prepared);
	}
	free(cores);
}

static double elapsed(struct timespec from, struct timespec to)
{
	return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_nsec - from.tv_nsec) * 1e-9;
}

int main(int argc, char **argv)
{
	char out_option[4200];
	char *options[64];
	int threads = argc > 3 && !strcmp(argv[3], "threads");
	int woven = argc > 3 && !strcmp(argv[3], "woven"), noptions = 0;
	size_t n, accesses = 0, blocks = 0;
	struct trace_event *events;
	struct prepared *prepared;
	struct timespec t0, t1, c0, c1, p0, p1;
	qemu_info_t info = { .system_emulation = true, .system = { .smp_vcpus = 1 } };

	if (argc < 3 || argc > 60) {
		fprintf(stderr, "usage: replay TRACE OUT [threads|woven] [PLUGIN OPTIONS...]\n");
		return 2;
	}
	snprintf(out_option, sizeof(out_option), "out=%s", argv[2]);
	options[noptions++] = out_option;
	options[noptions++] = "model_thread=off";	/* a model_thread= given wins */
	for (int i = 3 + threads + woven; i < argc; i++)
		options[noptions++] = argv[i];
	options[noptions++] = threads ? "cpu=index" : "cpu=guest";	/* the last cpu= counts */
	if (qemu_plugin_install(0, &info, noptions, options))
		return 1;
	set_in_roi(1);
	if (woven)		/* interleave=block without quantum='s timer */
		weave_install();

	if (!(events = read_trace(argv[1], &n)))
		return 1;
	prepared = calloc(n, sizeof(*prepared));
	for (size_t i = 0; i < n; i++) {
		struct trace_event *e = &events[i];

		if (e->type == 'B') {
			prepared[i].block = block_at(e->pc, e->vaddr, e->size,
						     insn_at(e->pc, (const uint8_t *)"", 0));
			blocks++;
		} else if (e->type == 'A') {
			prepared[i].insn = insn_at(e->pc, (const uint8_t *)"", 0);
			accesses++;
		}
	}
	for (size_t i = 0; i < n; i++)	/* insn_at took it from the (absent) bytes */
		if (events[i].type == 'A')
			prepared[i].insn->locked = events[i].locked;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
	if (threads)
		replay_threads(events, prepared, n);
	else if (woven)
		replay_woven(events, prepared, n);
	else
		replay_events(events, prepared, n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
	double seconds = elapsed(t0, t1), own = elapsed(c0, c1), all = elapsed(p0, p1);

	fprintf(stderr, "replay: %zu events (%zu data accesses, %zu blocks) in %.3f s, %.1f ns per event%s\n",
		n, accesses, blocks, seconds, seconds * 1e9 / (double)n,
		threads ? ", a thread per core" : woven ? ", woven" : "");
	/* CPU time per event: the replay's thread (the vCPU thread's share of
	 * the work) and the other threads together (the model thread's, with
	 * model_thread=on; the cores' threads with `threads`). */
	fprintf(stderr, "replay: CPU %.1f ns per event on the replay's thread, %.1f on the others\n",
		own * 1e9 / (double)n, (all > own ? all - own : 0) * 1e9 / (double)n);
	report(0, NULL);
	return 0;
}
