/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's records: one per instruction address and per translated
 * block, and the counted tuples (misses, coherence misses with their
 * thieves, reads after partial writes) in tables that grow as they fill.
 */
#include <stdlib.h>
#include <string.h>

#include "hotline-cache.h"

const char *const kind_names[NKINDS] = {
	[KIND_READ] = "read", [KIND_WRITE] = "write", [KIND_RMW] = "rmw", [KIND_FETCH] = "fetch",
};


struct insn *insns[BUCKETS];
struct block *blocks[BUCKETS];
struct tally *tallies;
uint32_t ntallies;		/* threaded: the cores; else 1 */

static void table_init(struct table *t)
{
	*t = (struct table){ calloc(TUPLE_BUCKETS, sizeof(*t->buckets)), TUPLE_BUCKETS - 1, 0 };
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

/*
 * Twice the buckets, once the table holds as many tuples as buckets: at
 * default scale the fork storm counts 5 million miss tuples, and walking
 * chains five deep in a table of a million buckets, a cache miss a step,
 * took 18% of the run (perf, bench/README.md).  The tuples stay where they
 * are (an instruction's last_miss points at one); only the chains are
 * relinked, in the order of the old buckets, so the table's order, and with
 * it the output's, depends only on what was counted.
 */
static void table_grow(struct table *t)
{
	uint64_t mask = t->mask * 2 + 1;
	struct tuple **buckets = calloc(mask + 1, sizeof(*buckets));

	if (!buckets)
		return;		/* longer chains, still right */
	for (uint64_t i = 0; i <= t->mask; i++)
		for (struct tuple *u = t->buckets[i], *next; u; u = next) {
			struct tuple **slot = &buckets[tuple_hash(&u->key) & mask];

			next = u->next;
			u->next = *slot;
			*slot = u;
		}
	free(t->buckets);
	t->buckets = buckets;
	t->mask = mask;
}

struct tuple *count_tuple(struct table *table, const struct key *key, uint64_t cycles)
{
	struct tuple **slot = &table->buckets[tuple_hash(key) & table->mask], *t;

	for (t = *slot; t; t = t->next)
		if (!memcmp(&t->key, key, sizeof(*key)))
			break;
	if (!t) {
		t = calloc(1, sizeof(*t));
		*t = (struct tuple){ .key = *key, .next = *slot };
		*slot = t;
		if (++table->tuples > table->mask)
			table_grow(table);
	}
	t->count++;
	t->cycles += cycles;
	return t;
}

static void free_tuples(struct tuple **slot)
{
	while (*slot) {
		struct tuple *next = (*slot)->next;

		free(*slot);
		*slot = next;
	}
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
	for (uint64_t i = 0; i <= t->mask; i++)
		free_tuples(&t->buckets[i]);
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
		n = aligned_alloc(_Alignof(struct insn), sizeof(*n));
		memset(n, 0, sizeof(*n));
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
	b = calloc(1, sizeof(*b));
	*b = (struct block){ vaddr, end, count, first, *slot };
	*slot = b;
	return b;
}
