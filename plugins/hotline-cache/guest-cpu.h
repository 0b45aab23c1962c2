/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executing CPU, cpu=guest (guest-cpu.c): from the guest kernel's
 * per-CPU base, in round-robin TCG.
 */
#ifndef HOTLINE_CACHE_GUEST_CPU_H
#define HOTLINE_CACHE_GUEST_CPU_H

#include <stdint.h>

#include "qemu-plugin-api.h"

void guest_cpu_install(qemu_plugin_id_t id);

/* Settles the current core; returns the vCPU QEMU runs now (its CPUState),
 * or NULL where QEMU does not say. */
const void *follow_core(uint64_t block_vaddr);

/* The core running now, as follow_core settled it last. */
uint32_t current_core(void);

/* Whether every core's per-CPU base is known (until then blocks outside
 * the regions of interest are followed too). */
int all_cores_known(void);

#endif /* HOTLINE_CACHE_GUEST_CPU_H */
