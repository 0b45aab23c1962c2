/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Zeroed memory from 2 MiB pages where the host gives them, for the large
 * tables that the cache model and hotline-cache read at random on every
 * access.  This host's transparent huge pages are "madvise" (Debian's
 * default): without MADV_HUGEPAGE such a table lies in 4 KiB pages, and at
 * default scale nearly every lookup also missed the host's TLB
 * (bench/README.md).
 */
#ifndef HOTLINE_HUGE_PAGES_H
#define HOTLINE_HUGE_PAGES_H

#include <stddef.h>
#include <sys/mman.h>

/* NULL if there is no memory; free with huge_free(p, bytes). */
static inline void *huge_zalloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, bytes, MADV_HUGEPAGE);	/* a hint: refused, the pages stay small */
	return p;
}

static inline void huge_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

#endif /* HOTLINE_HUGE_PAGES_H */
