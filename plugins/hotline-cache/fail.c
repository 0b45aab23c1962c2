/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How hotline-cache stops when it cannot go on: as a failed write does
 * (output.c's fail_run), one line, no output, QEMU exits 1.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "options.h"

void remove_output(const char *path)
{
	struct stat st;

	if (path && !stat(path, &st) && S_ISREG(st.st_mode))
		unlink(path);
}

void out_of_memory(const char *what, size_t bytes)
{
	if (bytes >= (size_t)1 << 20)
		fprintf(stderr, "hotline-cache: out of memory for %s (%zu MiB more); the run's "
			"counts are lost\n", what, bytes >> 20);
	else
		fprintf(stderr, "hotline-cache: out of memory for %s (%zu bytes more); the run's "
			"counts are lost\n", what, bytes);
	fflush(NULL);
	remove_output(options()->out_path);
	_exit(1);
}
