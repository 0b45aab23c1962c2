/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How hotline-cache stops when it cannot go on (fail.c): one line on stderr
 * saying why, no file left that could pass for a result, QEMU's exit status 1.
 */
#ifndef HOTLINE_CACHE_FAIL_H
#define HOTLINE_CACHE_FAIL_H

#include <stddef.h>

/* Removes path if it is a regular file (never /dev/full, say, or a pipe). */
void remove_output(const char *path);

/* An allocation of bytes for what failed: the run stops. */
_Noreturn void out_of_memory(const char *what, size_t bytes);

/* A call that returned an error number (a pthread call, say): the run stops,
 * as for an allocation, with the call and the error named. */
_Noreturn void call_failed(const char *call, int error);

/* p, an allocation of bytes for what, if it succeeded; else the run stops. */
static inline void *checked(void *p, const char *what, size_t bytes)
{
	if (__builtin_expect(!p, 0))
		out_of_memory(what, bytes);
	return p;
}

/* error, what a pthread call returned: nothing if 0, else the run stops. */
static inline void checked_call(int error, const char *call)
{
	if (__builtin_expect(error != 0, 0))
		call_failed(call, error);
}

#endif /* HOTLINE_CACHE_FAIL_H */
