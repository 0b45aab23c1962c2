/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The recorder (trace.c): built with -DHOTLINE_CACHE_TRACE, TRACE records
 * an event for bench/replay.c; otherwise it is nothing.
 */
#ifndef HOTLINE_CACHE_TRACE_H
#define HOTLINE_CACHE_TRACE_H

#include "trace-event.h"

#ifdef HOTLINE_CACHE_TRACE
void trace(struct trace_event e);
#define TRACE(...) trace((struct trace_event){ __VA_ARGS__ })
#else
#define TRACE(...) ((void)0)
#endif

#endif /* HOTLINE_CACHE_TRACE_H */
