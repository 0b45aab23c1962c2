/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quantum=N (cpu=guest: single-threaded round-robin TCG with icount): vCPU
 * turns of at most N instructions, and the turns measured.
 *
 * Round-robin TCG gives each vCPU in a round the instructions left until the
 * next QEMU_CLOCK_VIRTUAL deadline divided by the number of vCPUs (QEMU
 * 10.0's icount_percpu_budget), and runs the virtual clock's timers when the
 * deadline is reached.  With -icount shift=0 one instruction is one virtual
 * nanosecond, so a timer every N x cpus nanoseconds, re-armed from its own
 * expiry, bounds every turn to N instructions, deterministically: the
 * deadlines depend on virtual time only.  The timer does nothing else: it
 * raises no interrupt and changes no clock the guest reads.  QEMU offers no
 * timer to plugins, so its own timer_init_full, timer_mod and
 * qemu_clock_get_ns are looked up as guest-cpu.c looks up current_cpu
 * (Debian's QEMU exports them; without them the plugin refuses quantum=).
 *
 * A turn, as measured, is a stretch of blocks run by one vCPU inside the
 * regions of interest, ended by a switch of QEMU's running vCPU
 * (current_cpu) or, with quantum=, by a deadline of the timer.  Turns of a
 * vCPU that QEMU runs again at once (the others halted) count as one up to
 * the next deadline, since no other CPU ran in between: so a turn is at most
 * quantum x cpus instructions, and at most quantum while every vCPU runs.
 * Their lengths go to a histogram per core in powers of two (the turns
 * records).
 *
 * phase=P moves every deadline P virtual nanoseconds earlier than quantum=
 * alone puts it (0 <= P < quantum x cpus): the first turn of each vCPU is
 * shortened by about P / cpus instructions, and every later turn boundary
 * falls that much earlier in each vCPU's instruction stream.  The guest sees
 * nothing of it, yet its CPUs interleave differently, as they would on
 * hardware run again: this is how repeats of a deterministic run differ,
 * each by a phase it names (the experiment derives it from the repeat).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "options.h"
#include "quantum.h"

static struct turns *turns;		/* per core */

/* QEMU's timer API (include/qemu/timer.h), looked up at run time. */
enum { QEMU_CLOCK_VIRTUAL = 1, SCALE_NS = 1 };
typedef void timer_cb(void *opaque);
static void (*timer_init_full)(void *ts, void *group, int clock, int scale, int attributes,
			       timer_cb *cb, void *opaque);
static void (*timer_mod)(void *ts, int64_t expire);
static int64_t (*clock_get_ns)(int clock);

/* A QEMUTimer is seven words in QEMU 10.0; room for more. */
static _Alignas(16) unsigned char timer[256];
static int64_t period, next_expiry;
/* Deadlines so far: the timer may run on QEMU's main loop thread, so it only
 * counts, and the vCPU thread ends its turn (and weave.c its window) when it
 * sees the count change. */
static uint64_t deadline_count;

void count_deadline(void)
{
	__atomic_add_fetch(&deadline_count, 1, __ATOMIC_RELAXED);
}

uint64_t deadlines(void)
{
	return __atomic_load_n(&deadline_count, __ATOMIC_RELAXED);
}

static void on_deadline(void *opaque)
{
	(void)opaque;
	count_deadline();
	next_expiry += period;
	timer_mod(timer, next_expiry);
}

const char *quantum_install(void)
{
	const struct options *o = options();
	uint64_t quantum = o->quantum, phase = o->phase;
	uint32_t cores = o->cache.cores;

	turns = checked(calloc(cores, sizeof(*turns)), "the turns", cores * sizeof(*turns));
	if (!quantum)
		return phase ? "phase= needs quantum=" :
		       o->interleave_block ?
		       "interleave=block needs quantum= (its windows are the turns)" : NULL;
	if (!o->cpu_from_guest)
		return "quantum= needs cpu=guest (round-robin TCG)";
	if (quantum > INT64_MAX / 2 / cores)
		return "quantum= is too large";
	if (phase >= quantum * cores)
		return "phase= must be below quantum= x cpus=";
	timer_init_full = dlsym(RTLD_DEFAULT, "timer_init_full");
	timer_mod = dlsym(RTLD_DEFAULT, "timer_mod");
	clock_get_ns = dlsym(RTLD_DEFAULT, "qemu_clock_get_ns");
	if (!timer_init_full || !timer_mod || !clock_get_ns)
		return "quantum= needs QEMU's timer_init_full, timer_mod and qemu_clock_get_ns, "
		       "which this QEMU does not export";
	period = (int64_t)(quantum * cores);
	return NULL;
}

static int quantum_armed;

/* At the first block QEMU runs, when its clocks exist. */
static __attribute__((noinline)) void quantum_arm(void)
{
	quantum_armed = 1;
	if (!options()->quantum)
		return;
	timer_init_full(timer, NULL, QEMU_CLOCK_VIRTUAL, SCALE_NS, 0, on_deadline, NULL);
	next_expiry = clock_get_ns(QEMU_CLOCK_VIRTUAL) + period - (int64_t)options()->phase;
	timer_mod(timer, next_expiry);
}

/* Every block calls it: the test is all it does after the first. */
void quantum_start(void)
{
	if (__builtin_expect(!quantum_armed, 0))
		quantum_arm();
}

/* The turn being run: by which vCPU (QEMU's CPUState), as which core. */
static const void *turn_vcpu;
static uint32_t turn_core;
static uint64_t turn_insns, turn_deadlines;

void turns_block(const void *vcpu, uint32_t core, uint32_t insns)
{
	uint64_t now = deadlines();

	if (vcpu != turn_vcpu || now != turn_deadlines) {
		if (turn_vcpu && turn_insns) {
			struct turns *t = &turns[turn_core];
			unsigned int bucket = 63 - (unsigned int)__builtin_clzll(turn_insns);

			t->count[bucket]++;
			t->insns[bucket] += turn_insns;
		}
		turn_vcpu = vcpu;
		turn_insns = 0;
		turn_deadlines = now;
	}
	turn_core = core;
	turn_insns += insns;
}

/* A region's edge: the turn it cuts is not measured. */
void turns_cut(void)
{
	turn_vcpu = NULL;
	turn_insns = 0;
}

/* The marker reset. */
void turns_reset(void)
{
	memset(turns, 0, options()->cache.cores * sizeof(*turns));
	turns_cut();
}

const struct turns *turns_of(uint32_t core)
{
	return &turns[core];
}
