/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's records: one per instruction address and per translated
 * block, and the counted tuples (misses, coherence misses with their
 * thieves, reads after partial writes) in tables that grow as they fill.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hotline-cache.h"
#include "huge-pages.h"

const char *const kind_names[NKINDS] = {
	[KIND_READ] = "read", [KIND_WRITE] = "write", [KIND_RMW] = "rmw", [KIND_FETCH] = "fetch",
};


struct insn *insns[BUCKETS];
struct block *blocks[BUCKETS];
struct tally *tallies;
uint32_t ntallies;		/* threaded: the cores; else 1 */

/* As a failed write does (output.c): one line, no output, QEMU exits 1. */
static void out_of_memory(const char *what, size_t bytes)
{
	fprintf(stderr, "hotline-cache: out of memory for %s (%zu MiB more); the run's counts "
		"are lost\n", what, bytes >> 20);
	fflush(NULL);
	remove_output(out_path);
	_exit(1);
}

/*
 * The instruction and block records, which live as long as the plugin:
 * carved in translation order from chunks of 2 MiB pages (huge-pages.h), so
 * that the records of the instructions a block runs lie together.
 */
#define RECORD_CHUNK ((size_t)32 << 20)

static void *record_zalloc(size_t bytes, size_t align)
{
	static char *next, *end;

	next = (char *)(((uintptr_t)next + align - 1) & ~(uintptr_t)(align - 1));
	if (!next || next + bytes > end) {
		size_t chunk = bytes > RECORD_CHUNK ? bytes : RECORD_CHUNK;

		if (!(next = huge_zalloc(chunk)))
			out_of_memory("instruction and block records", chunk);
		end = next + chunk;
	}
	next += bytes;
	return next - bytes;
}

static void table_init(struct table *t)
{
	if (!(t->slots = huge_zalloc(TUPLE_SLOTS * sizeof(*t->slots))))
		out_of_memory("counted tuples", TUPLE_SLOTS * sizeof(*t->slots));
	t->mask = TUPLE_SLOTS - 1;
	t->tuples = 0;
}

void tally_init(struct tally *t)
{
	pthread_mutex_init(&t->lock, NULL);
	table_init(&t->misses);
	table_init(&t->stolen);
	table_init(&t->rapw);
}

static uint64_t tuple_hash(const struct key *key)
{
	uint64_t w[4];

	memcpy(w, key, sizeof(w));
	return bucket(w[0], w[1], w[2] ^ w[3] * 0xd6e8feb86659fd93ull);
}

/* The slot of the tuple with this key, or the empty slot where it would go. */
static uint64_t find_slot(const struct tuple *slots, uint64_t mask, const struct key *key)
{
	uint64_t i = tuple_hash(key) & mask;

	while (slots[i].count && memcmp(&slots[i].key, key, sizeof(*key)))
		i = (i + 1) & mask;
	return i;
}

/*
 * Twice the slots.  The tuples move in the order of the old slots, so the
 * table's order, and with it the output's, depends only on what was
 * counted.
 */
static void table_grow(struct table *t)
{
	uint64_t mask = t->mask * 2 + 1;
	size_t bytes = (mask + 1) * sizeof(struct tuple);
	struct tuple *slots = huge_zalloc(bytes);

	if (!slots)
		out_of_memory("counted tuples", bytes);
	for (uint64_t i = 0; i <= t->mask; i++)
		if (t->slots[i].count)
			slots[find_slot(slots, mask, &t->slots[i].key)] = t->slots[i];
	huge_free(t->slots, (t->mask + 1) * sizeof(struct tuple));
	t->slots = slots;
	t->mask = mask;
}

uint64_t count_tuple(struct table *table, const struct key *key, uint64_t cycles)
{
	uint64_t i = find_slot(table->slots, table->mask, key);

	if (!table->slots[i].count) {
		if (4 * (table->tuples + 1) > 3 * (table->mask + 1)) {
			table_grow(table);
			i = find_slot(table->slots, table->mask, key);
		}
		table->slots[i].key = *key;
		table->tuples++;
	}
	table->slots[i].count++;
	table->slots[i].cycles += cycles;
	return i;
}

void lock_all(void)
{
	lock_records();
	for (uint32_t i = 0; threaded && i < ntallies; i++)
		pthread_mutex_lock(&tallies[i].lock);
}

void unlock_all(void)
{
	for (uint32_t i = ntallies; threaded && i-- > 0;)
		pthread_mutex_unlock(&tallies[i].lock);
	unlock_records();
}

static void table_clear(struct table *t)
{
	memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->tuples = 0;
}

/* The marker "reset": the counts start again (the caches keep their state). */
void reset_counters(void)
{
	for (uint32_t i = 0; i < BUCKETS; i++)
		for (struct insn *n = insns[i]; n; n = n->next) {
			memset(n->stats, 0, sizeof(n->stats));
			memset(n->l1_hits, 0, sizeof(n->l1_hits));
			for (uint32_t c = 0; n->core_stats && c < config.cores; c++)
				if (n->core_stats[c])
					memset(n->core_stats[c], 0, sizeof(*n->core_stats[c]));
			for (uint32_t c = 0; n->hits && c < config.cores; c++)
				for (int k = 0; k < NKINDS; k++)
					n->hits[c].base[k] = read_count(&n->hits[c].count[k]);
		}
	for (uint32_t set = 0; set < ntallies; set++) {
		table_clear(&tallies[set].misses);
		table_clear(&tallies[set].stolen);
		table_clear(&tallies[set].rapw);
	}
	for (uint32_t c = 0; c < config.cores; c++)
		vcpus[c].roi_base = read_count(&vcpus[c].roi_icount);
}

/* LOCK prefix among the prefixes, or XCHG (86/87) with a memory operand. */
static int is_locked(const uint8_t *bytes, size_t len)
{
	size_t i = 0;

	for (; i < len; i++) {
		uint8_t b = bytes[i];

		if (b == 0xf0)
			return 1;
		if (!(b == 0x66 || b == 0x67 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
		      b == 0x64 || b == 0x65 || b == 0xf2 || b == 0xf3 || (b & 0xf0) == 0x40))
			break;
	}
	return i + 1 < len && (bytes[i] == 0x86 || bytes[i] == 0x87) && (bytes[i + 1] >> 6) != 3;
}

/* The record of the instruction at pc, with the bytes of its latest
 * translation: code patched at boot (alternatives, paravirt, static keys)
 * is retranslated, and what runs in the ROI is the patched code. */
struct insn *insn_at(uint64_t pc, const uint8_t *bytes, size_t len)
{
	struct insn **slot = &insns[bucket(pc, 0, 0) & (BUCKETS - 1)], *n;

	for (n = *slot; n; n = n->next)
		if (n->pc == pc)
			break;
	if (!n) {
		n = record_zalloc(sizeof(*n), _Alignof(struct insn));
		n->pc = pc;
		n->next = *slot;
		*slot = n;
	}
	if (threaded && !n->hits) {
		n->hits = aligned_alloc(_Alignof(struct core_hits), config.cores * sizeof(*n->hits));
		memset(n->hits, 0, config.cores * sizeof(*n->hits));
		n->core_stats = calloc(config.cores, sizeof(*n->core_stats));
	}
	__atomic_store_n(&n->locked, is_locked(bytes, len), __ATOMIC_RELAXED);
	n->len = len < sizeof(n->bytes) ? len : sizeof(n->bytes);
	memcpy(n->bytes, bytes, n->len);
	return n;
}

struct block *block_at(uint64_t vaddr, uint64_t end, uint32_t count, struct insn *first)
{
	struct block **slot = &blocks[bucket(vaddr, end, 0) & (BUCKETS - 1)], *b;

	for (b = *slot; b; b = b->next)
		if (b->vaddr == vaddr && b->end == end)
			return b;
	b = record_zalloc(sizeof(*b), _Alignof(struct block));
	*b = (struct block){ .vaddr = vaddr, .end = end, .insns = count, .first = first,
			     .next = *slot };
	*slot = b;
	return b;
}
