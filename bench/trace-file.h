/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A recorded stream (OUT.trace of the plugin built with -DHOTLINE_CACHE_TRACE),
 * read whole, for the replays (bench/replay.c, bench/replay_contrib.c).
 */
#ifndef BENCH_TRACE_FILE_H
#define BENCH_TRACE_FILE_H

#include <stdio.h>
#include <stdlib.h>

#include "trace-event.h"

/* The stream's records and their number in *n, or NULL, having said why. */
static struct trace_event *read_trace(const char *path, size_t *n)
{
	struct trace_event *events;
	long bytes;
	FILE *f;

	if (!(f = fopen(path, "r")) || fseek(f, 0, SEEK_END) || (bytes = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		perror(path);
		return NULL;
	}
	*n = (size_t)bytes / sizeof(*events);
	events = malloc((*n + 1) * sizeof(*events));	/* not NULL for an empty stream */
	if (!events || fread(events, sizeof(*events), *n, f) != *n) {
		fprintf(stderr, "%s: short read\n", path);
		fclose(f);
		free(events);
		return NULL;
	}
	fclose(f);
	return events;
}

#endif /* BENCH_TRACE_FILE_H */
