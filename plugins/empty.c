/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * empty: a plugin that is loaded and sees every translation but instruments
 * nothing; the baseline of bench/plugin_overhead.py for what loading a
 * plugin costs by itself.
 *
 *   -plugin empty.so,out=FILE      (FILE is accepted and left empty)
 */
#include <stdio.h>
#include <string.h>

#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id, (void)tb;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "out=", 4)) {
			fprintf(stderr, "empty: unknown option '%s'\n", argv[i]);
			return -1;
		}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
