/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the cachebench programs share: failing with the call that failed,
 * and running a thread on one CPU.
 */
#ifndef CACHEBENCH_PIN_H
#define CACHEBENCH_PIN_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "PROGRAM: WHAT: the error", then exit status 1. */
static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, strerror(errno));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	errno = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (errno)
		die("pthread_setaffinity_np (needs at least 2 CPUs)");
}

#endif
