/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's records: one per instruction address and per translated
 * block, and the counted tuples (misses, coherence misses with their
 * thieves, reads after partial writes) in tables that grow as they fill.
 */
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "hotline-cache.h"
#include "huge-pages.h"
#include "options.h"
#include "records.h"

static const char *const kind_names[NKINDS] = {
	[KIND_READ] = "read", [KIND_WRITE] = "write", [KIND_RMW] = "rmw", [KIND_FETCH] = "fetch",
};

const char *kind_name(enum kind kind)
{
	return kind_names[kind];
}

#define BUCKETS (1u << 20)	/* a fork storm has some 10^5 instructions and blocks */
#define TUPLE_SLOTS (1u << 16)	/* at first: a table doubles as it fills */

static struct insn *insns[BUCKETS];
static struct block *blocks[BUCKETS];
static struct tally *tally;	/* per core threaded, else one */
static uint32_t ntallies;	/* threaded: the cores; else 1 */
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

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

static void tally_init(struct tally *t)
{
	pthread_mutex_init(&t->lock, NULL);
	table_init(&t->misses);
	table_init(&t->stolen);
	table_init(&t->rapw);
}

void records_install(void)
{
	ntallies = threaded() ? options()->cache.cores : 1;
	tally = checked(calloc(ntallies, sizeof(*tally)), "the tallies",
			ntallies * sizeof(*tally));
	for (uint32_t i = 0; i < ntallies; i++)
		tally_init(&tally[i]);
}

struct tally *tally_of(uint32_t core)
{
	return ntallies > 1 ? &tally[core] : &tally[0];
}

uint32_t tallies(void)
{
	return ntallies;
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

void lock_records(void)
{
	if (threaded())
		pthread_mutex_lock(&records_lock);
}

void unlock_records(void)
{
	if (threaded())
		pthread_mutex_unlock(&records_lock);
}

void lock_all(void)
{
	lock_records();
	for (uint32_t i = 0; threaded() && i < ntallies; i++)
		pthread_mutex_lock(&tally[i].lock);
}

void unlock_all(void)
{
	for (uint32_t i = ntallies; threaded() && i-- > 0;)
		pthread_mutex_unlock(&tally[i].lock);
	unlock_records();
}

static void table_clear(struct table *t)
{
	memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->tuples = 0;
}

/* The marker "reset": the counts start again (the caches keep their state). */
void records_reset(void)
{
	uint32_t cores = options()->cache.cores;

	for (uint32_t i = 0; i < BUCKETS; i++)
		for (struct insn *n = insns[i]; n; n = n->next) {
			memset(n->stats, 0, sizeof(n->stats));
			memset(n->l1_hits, 0, sizeof(n->l1_hits));
			for (uint32_t c = 0; n->core_stats && c < cores; c++)
				if (n->core_stats[c])
					memset(n->core_stats[c], 0, sizeof(*n->core_stats[c]));
			for (uint32_t c = 0; n->hits && c < cores; c++)
				for (int k = 0; k < NKINDS; k++)
					n->hits[c].base[k] = read_count(&n->hits[c].count[k]);
		}
	for (uint32_t set = 0; set < ntallies; set++) {
		table_clear(&tally[set].misses);
		table_clear(&tally[set].stolen);
		table_clear(&tally[set].rapw);
	}
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
	if (threaded() && !n->hits) {
		uint32_t cores = options()->cache.cores;

		n->hits = checked(aligned_alloc(_Alignof(struct core_hits), cores * sizeof(*n->hits)),
				  "an instruction's L1 hits", cores * sizeof(*n->hits));
		memset(n->hits, 0, cores * sizeof(*n->hits));
		n->core_stats = checked(calloc(cores, sizeof(*n->core_stats)),
					"an instruction's counts", cores * sizeof(*n->core_stats));
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

struct insn *first_insn(void)
{
	for (uint32_t i = 0; i < BUCKETS; i++)
		if (insns[i])
			return insns[i];
	return NULL;
}

/* The next record in its bucket's chain, or the first of the next bucket
 * that has one. */
struct insn *next_insn(const struct insn *n)
{
	if (n->next)
		return n->next;
	for (uint32_t i = (bucket(n->pc, 0, 0) & (BUCKETS - 1)) + 1; i < BUCKETS; i++)
		if (insns[i])
			return insns[i];
	return NULL;
}
