/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How hotline-cache stops when it cannot go on: as a failed write does
 * (output.c's fail_run), one line, no output, QEMU exits 1.  Either of the
 * plugin's threads may fail (the vCPU thread, or the model's:
 * model-thread.c): the first to fail says why and ends the process, the
 * model thread with it (_exit ends every thread, and nothing of the counts
 * is written); a second failing meanwhile waits for that end, so that one
 * line is said.
 */
#include <stdio.h>
#include <string.h>
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

/* The first failure goes on; any other thread that fails waits for its end. */
static void one_failure(void)
{
	static int failing;

	if (__atomic_exchange_n(&failing, 1, __ATOMIC_ACQ_REL))
		for (;;)
			pause();
}

/* After the line: the output removed, the process ended with status 1. */
static _Noreturn void stop_run(void)
{
	fflush(NULL);
	remove_output(options()->out_path);
	_exit(1);
}

void out_of_memory(const char *what, size_t bytes)
{
	one_failure();
	if (bytes >= (size_t)1 << 20)
		fprintf(stderr, "hotline-cache: out of memory for %s (%zu MiB more); the run's "
			"counts are lost\n", what, bytes >> 20);
	else
		fprintf(stderr, "hotline-cache: out of memory for %s (%zu bytes more); the run's "
			"counts are lost\n", what, bytes);
	stop_run();
}

void call_failed(const char *call, int error)
{
	one_failure();
	fprintf(stderr, "hotline-cache: %s failed: %s; the run's counts are lost\n", call,
		strerror(error));
	stop_run();
}
