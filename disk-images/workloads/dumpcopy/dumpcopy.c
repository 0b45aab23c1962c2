// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dumpcopy: seed 002 (makedumpfile copying /proc/vmcore to /dev/null, 2015).
 *
 *   dumpcopy FILE_MIB BUFFER_KIB WINDOW_KIB FILTER MAP_WHOLE_WINDOWS
 *
 * Creates a FILE_MIB file standing in for /proc/vmcore in the current
 * directory (tmpfs), then copies its dumpable pages to /dev/null twice, each
 * copy in its own region of interest:
 *
 *   read: pread() the dumpable runs in BUFFER_KIB pieces, write() each piece;
 *   mmap: mmap() each dumpable run in pieces of at most WINDOW_KIB (with
 *         MAP_POPULATE: /proc/vmcore's mappings come with their page tables
 *         filled in, so neither copy takes page faults), memcpy() it into the
 *         buffer, write() that, munmap().  With MAP_WHOLE_WINDOWS=1 it maps the
 *         whole WINDOW_KIB-aligned window around a run instead and reuses it
 *         for the following runs inside it: the "larger chunks" the thread
 *         proposed.
 *
 * FILTER=0 dumps every page (makedumpfile -d0).  FILTER!=0 dumps pages the
 * way -d31 fragments them: alternating runs of 1-10 dumped and 1-52 excluded
 * pages, lengths from a fixed-seed generator, so about 17% of the pages in
 * runs of 5.5 on average (the seed: 74,273 of 458,917 pages, 13,454 mmaps).
 *
 * Prints one JSON object with the pages dumped and the calls each copy made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hotline-roi.h"

#define PAGE 4096L

struct calls {
	long reads, mmaps, munmaps, writes, bytes;
};

static void die(const char *what)
{
	fprintf(stderr, "dumpcopy: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t lcg_state = 12345;

static uint32_t lcg(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return lcg_state >> 16;
}

/* dumped[p] for every page, as makedumpfile's bitmap. */
static char *dumpable_pages(long pages, int filter)
{
	char *dumped = malloc(pages);
	long p = 0;

	if (!dumped)
		die("malloc");
	if (!filter) {
		memset(dumped, 1, pages);
		return dumped;
	}
	while (p < pages) {
		long in = 1 + lcg() % 10, out = 1 + lcg() % 52;

		for (; in > 0 && p < pages; in--)
			dumped[p++] = 1;
		for (; out > 0 && p < pages; out--)
			dumped[p++] = 0;
	}
	return dumped;
}

static void make_file(const char *path, long bytes, char *buf, long buf_bytes)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	if (fd < 0)
		die("open for writing");
	for (long done = 0; done < bytes; done += buf_bytes) {
		for (long i = 0; i < buf_bytes; i += 4)
			*(uint32_t *)(buf + i) = lcg();
		if (write(fd, buf, buf_bytes) != buf_bytes)
			die("write");
	}
	close(fd);
}

static void put(int out, const char *buf, long n, struct calls *c)
{
	c->writes++;
	if (write(out, buf, n) != n)
		die("write /dev/null");
	c->bytes += n;
}

/* The next run of dumped pages at or after *start: [*start, return). */
static long next_run(const char *dumped, long pages, long *start)
{
	long end;

	while (*start < pages && !dumped[*start])
		(*start)++;
	for (end = *start; end < pages && dumped[end]; end++)
		;
	return end;
}

static void copy_read(int fd, int out, const char *dumped, long pages, char *buf,
		      long buf_bytes, struct calls *c)
{
	for (long p = 0, end; (end = next_run(dumped, pages, &p)) > p; p = end) {
		for (long off = p * PAGE; off < end * PAGE; off += buf_bytes) {
			long n = end * PAGE - off < buf_bytes ? end * PAGE - off : buf_bytes;

			c->reads++;
			if (pread(fd, buf, n, off) != n)
				die("pread");
			put(out, buf, n, c);
		}
	}
}

static void copy_mmap(int fd, int out, const char *dumped, long pages, char *buf,
		      long buf_bytes, long window, int whole_windows, struct calls *c)
{
	char *map = NULL;
	long map_off = 0, map_len = 0;

	for (long p = 0, end; (end = next_run(dumped, pages, &p)) > p; p = end) {
		for (long off = p * PAGE; off < end * PAGE;) {
			long want = end * PAGE - off;

			if (!map || off < map_off || off >= map_off + map_len) {
				if (map) {
					c->munmaps++;
					munmap(map, map_len);
				}
				if (whole_windows) {
					map_off = off / window * window;
					map_len = window < pages * PAGE - map_off ? window
										  : pages * PAGE - map_off;
				} else {
					map_off = off;
					map_len = want < window ? want : window;
				}
				c->mmaps++;
				map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd,
					   map_off);
				if (map == MAP_FAILED)
					die("mmap");
			}
			long n = map_off + map_len - off;

			n = n < want ? n : want;
			n = n < buf_bytes ? n : buf_bytes;
			memcpy(buf, map + (off - map_off), n);
			put(out, buf, n, c);
			off += n;
		}
	}
	if (map) {
		c->munmaps++;
		munmap(map, map_len);
	}
}

static void print_calls(const char *name, const struct calls *c)
{
	printf("\"%s\":{\"reads\":%ld,\"mmaps\":%ld,\"munmaps\":%ld,\"writes\":%ld,\"bytes\":%ld}",
	       name, c->reads, c->mmaps, c->munmaps, c->writes, c->bytes);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: dumpcopy FILE_MIB BUFFER_KIB WINDOW_KIB FILTER "
				"MAP_WHOLE_WINDOWS MEASURE\n");
		return 2;
	}
	long bytes = atol(argv[1]) << 20, buf_bytes = atol(argv[2]) << 10;
	long window = atol(argv[3]) << 10;
	int filter = atoi(argv[4]), whole_windows = atoi(argv[5]);
	/* Which copies run inside a region of interest: 1 read(), 2 mmap(), 3
	 * both.  Both always run; measuring one at a time gives each its own
	 * results tables. */
	int measure = atoi(argv[6]);
	long pages = bytes / PAGE, dumped_pages = 0;
	struct calls by_read = { 0 }, by_mmap = { 0 };
	int m5 = roi_under_gem5();

	if (bytes <= 0 || buf_bytes <= 0 || buf_bytes % PAGE || window <= 0 || window % PAGE ||
	    measure < 1 || measure > 3) {
		fprintf(stderr, "dumpcopy: sizes must be positive, buffer and window whole pages\n");
		return 2;
	}
	char *buf = malloc(buf_bytes);
	char *dumped = dumpable_pages(pages, filter);

	if (!buf)
		die("malloc");
	make_file("vmcore", bytes, buf, buf_bytes);
	for (long p = 0; p < pages; p++)
		dumped_pages += dumped[p];
	int fd = open("vmcore", O_RDONLY), out = open("/dev/null", O_WRONLY);

	if (fd < 0 || out < 0)
		die("open");
	if (measure & 1)
		roi_mark(ROI_BEGIN, m5);
	copy_read(fd, out, dumped, pages, buf, buf_bytes, &by_read);
	if (measure & 1)
		roi_mark(ROI_END, m5);
	if (measure & 2)
		roi_mark(ROI_BEGIN, m5);
	copy_mmap(fd, out, dumped, pages, buf, buf_bytes, window, whole_windows, &by_mmap);
	if (measure & 2)
		roi_mark(ROI_END, m5);
	if (by_read.bytes != dumped_pages * PAGE || by_mmap.bytes != dumped_pages * PAGE) {
		fprintf(stderr, "dumpcopy: copied %ld and %ld bytes, expected %ld\n", by_read.bytes,
			by_mmap.bytes, dumped_pages * PAGE);
		return 1;
	}
	printf("{\"pages\":%ld,\"pages_dumped\":%ld,", pages, dumped_pages);
	print_calls("read", &by_read);
	printf(",");
	print_calls("mmap", &by_mmap);
	printf("}\n");
	return 0;
}
