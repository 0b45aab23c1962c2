/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cpu=guest: the executing CPU, from the guest kernel's per-CPU base, in
 * round-robin TCG, where QEMU's vCPU index names the vCPU that translated a
 * block, not the one running it (hotline-cache.c's header, and
 * docs/qemu-notes.md).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-cpu.h"
#include "hotline-cache.h"
#include "options.h"

/* cpu=guest: the CPU running now, and the CPU of each per-CPU base. */
#define MAX_BASES 256
static uint32_t core_now;
static uint64_t bases[MAX_BASES];
static uint32_t base_core[MAX_BASES];
static uint32_t nbases;
static struct qemu_plugin_register *reg_gs, *reg_kgs;
static GByteArray *reg_buf;


static uint64_t read_register(struct qemu_plugin_register *reg)
{
	uint64_t value = 0;

	g_byte_array_set_size(reg_buf, 0);
	if (qemu_plugin_read_register(reg, reg_buf) >= 8)
		memcpy(&value, reg_buf->data, 8);
	return value;
}

static int core_of_base(uint64_t base, uint32_t *core)
{
	for (uint32_t i = 0; i < nbases; i++)
		if (bases[i] == base) {
			*core = base_core[i];
			return 1;
		}
	return 0;
}

uint32_t current_core(void)
{
	return core_now;
}

int all_cores_known(void)
{
	return nbases >= options()->cache.cores;
}

/*
 * Sets core_now from the running CPU's per-CPU base; true if the base
 * named a CPU.  Otherwise core_now is left as it was: before the
 * per-CPU areas exist (early boot, outside any region), and in kernel code
 * that runs with the user's GS base (entry code before swapgs, exit code
 * after it).
 */
static int find_core(uint64_t block_vaddr)
{
	int kernel = block_vaddr >= KERNEL_START;
	uint64_t base = read_register(kernel ? reg_gs : reg_kgs);
	uint32_t number = 0;

	if (base < KERNEL_START)
		return 0;
	if (core_of_base(base, &core_now))
		return 1;
	if (!kernel || nbases == MAX_BASES)
		return 0;
	g_byte_array_set_size(reg_buf, 0);
	if (!qemu_plugin_read_memory_vaddr(base + options()->cpu_number_offset, reg_buf, 4))
		return 0;
	memcpy(&number, reg_buf->data, 4);
	if (number >= options()->cache.cores)
		return 0;
	bases[nbases] = base;
	base_core[nbases++] = number;
	core_now = number;
	return 1;
}

/*
 * Reading a register costs more than the rest of a block's callback, so it
 * is read only when the running vCPU may have changed.  QEMU keeps the vCPU
 * it is running in its thread-local variable current_cpu (the CPUState that
 * qemu_plugin_read_register reads); Debian's QEMU exports it, though it is
 * not part of the plugin API.  Round-robin TCG runs every vCPU on one
 * thread, so its address is looked up once, on that thread.  While the same
 * vCPU runs, a block reads no register: find_core would give the core it
 * gave last (the same base, or an unusable one, which keeps the core).  After
 * a switch, blocks read the register until one settles the core, exactly
 * as every block did before.  Without the symbol every block reads it.
 */
static void *const *running_cpu;	/* &current_cpu on the vCPU thread, or NULL */
static pthread_t running_cpu_thread;
static int running_cpu_looked_up;
static const void *settled_cpu;		/* the vCPU find_core last settled on */

const void *follow_core(uint64_t block_vaddr)
{
	const void *cpu = NULL;

	if (!running_cpu_looked_up) {
		running_cpu = dlsym(RTLD_DEFAULT, "current_cpu");
		running_cpu_thread = pthread_self();
		running_cpu_looked_up = 1;
	}
	if (running_cpu && pthread_equal(pthread_self(), running_cpu_thread))
		cpu = *running_cpu;
	if (cpu && cpu == settled_cpu)
		return cpu;
	settled_cpu = find_core(block_vaddr) ? cpu : NULL;
	return cpu;
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu_index)
{
	(void)id, (void)vcpu_index;
	if (reg_gs)
		return;
	GArray *regs = qemu_plugin_get_registers();
	qemu_plugin_reg_descriptor *d = (qemu_plugin_reg_descriptor *)regs->data;

	for (unsigned int i = 0; i < regs->len; i++) {
		if (!strcmp(d[i].name, "gs_base"))
			reg_gs = d[i].handle;
		else if (!strcmp(d[i].name, "k_gs_base"))
			reg_kgs = d[i].handle;
	}
	g_array_free(regs, 1);
	if (!reg_gs || !reg_kgs) {
		fprintf(stderr, "hotline-cache: QEMU offers no gs_base/k_gs_base register\n");
		exit(1);
	}
}

void guest_cpu_install(qemu_plugin_id_t id)
{
	reg_buf = g_byte_array_new();
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
}
