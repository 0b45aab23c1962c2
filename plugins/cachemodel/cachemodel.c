// SPDX-License-Identifier: GPL-2.0-or-later
// Over 500 lines: one translation unit, so that the compiler inlines an access's whole path.
/*
 * cachemodel: the coherent multi-core cache hierarchy declared in
 * cachemodel.h.  Structures, in the order an access meets them:
 *
 *   store buffer  per core, a ring of the last stores (read after partial write)
 *   cache         set-associative, LRU by access stamp; per line a MESI state
 *                 (meaningful in the L2, which carries its core's state)
 *   shadow        per cache, a fully associative LRU cache of the same number
 *                 of lines, which tells conflict misses from capacity misses
 *   seen          per cache, a bitmap of lines ever accessed: compulsory misses
 *   stolen        per core, lines another core's write took from its caches,
 *                 with a bit per cache and who took it from that cache with
 *                 which instruction: coherence misses
 *
 * The causes are those of docs/causes.md, section 1; classify() says how.
 *
 * Threaded (cm_set_threaded), each core's accesses on a thread of their own:
 * an access that hits its core's L1 with the permission it needs (a read:
 * the line is there; a write: also Exclusive or Modified in the core's L2),
 * and whose line the L1's shadow still holds, touches only that core's own
 * structures and takes no lock.  Everything else, everything that moves a
 * line into or out of a private cache or a shadow or changes another core's
 * state, runs under the model's one lock, in the same order as unthreaded.
 * Between the two:
 *
 *   - The words a lock-free hit reads and another core may change (the
 *     tags of the private caches, the L2's state, the MRU words) are written
 *     atomically (STORE releases, exchanges) and read so where another
 *     thread may be writing them (LOAD acquires).
 *   - A lock holder changing another core's private state brackets the
 *     change with that core's sequence count (remote_begin, remote_end):
 *     odd while it changes.  A lock-free hit reads the count before and
 *     after looking, and takes the lock instead if it moved (a seqlock).
 *   - The one change a core makes to shared state without the lock, a
 *     write hit taking its own line from Exclusive to Modified, is a
 *     compare-and-swap; a lock holder takes another core's line down or
 *     out with an atomic exchange (take_state), and learns from it whether
 *     the line was Modified.  So a line is Modified in at most one core,
 *     and a write that won the race happened before the line went.
 *   - A lock-free hit moves its line to the front of its L1's shadow: it
 *     changes the list's links, never the hash table or a node's line.  A
 *     lock holder taking a line from another core asks that core's shadows
 *     whether they hold it (invalidate_others), which only the core's own
 *     locked accesses change.  The stolen marks are read and written under
 *     the lock only.
 *   - A lock-free hit makes the line its core's MRU line, then reads the
 *     sequence count again: a lock holder that began meanwhile either is
 *     seen (and the hit forgets the MRU line) or sees the new MRU line when
 *     it drops the line (and forgets it).  All four are seq_cst, which
 *     makes one of the two certain.
 *
 * Unthreaded the same code runs with no lock and no count; on x86 the
 * atomics are plain loads and stores, but for the exchanges and the
 * and-not of a downgrade, which happen only when a line leaves a private
 * cache or is shared.
 */
#define _GNU_SOURCE		/* PTHREAD_MUTEX_ADAPTIVE_NP */
#include "cachemodel.h"
#include "huge-pages.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mesi { INVALID, SHARED, EXCLUSIVE, MODIFIED };

/* Words another thread may change while they are read (see above). */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Where another thread's change in between matters.  A test build names a
 * function for it (-DCM_RACE_POINT=f) that stalls now and then
 * (tests/cachemodel_stress.c), so that races of nanoseconds happen often. */
#ifdef CM_RACE_POINT
void CM_RACE_POINT(void);
#define RACE_POINT() CM_RACE_POINT()
#else
#define RACE_POINT() ((void)0)
#endif

/* ---- seen: a growable bitmap of line numbers ---------------------------- */

#define SEEN_CHUNK_BITS 24	/* lines per chunk: 2^24 bits = 2 MiB, a huge page */
#define SEEN_CHUNK_BYTES ((1u << SEEN_CHUNK_BITS) / 8)

/*
 * An allocation the model cannot go on without while it runs (cm_new's own
 * make it return NULL instead): said on stderr, and the process ends.
 */
static void out_of_memory(const char *what, size_t bytes)
{
	fprintf(stderr, "hotline cache model: out of memory: %zu bytes for %s\n", bytes, what);
	abort();
}

struct seen {
	uint64_t **chunks;
	size_t n;
};

/* Marks the line; true if it was already marked. */
static bool seen_test_and_set(struct seen *s, uint64_t line)
{
	size_t chunk = line >> SEEN_CHUNK_BITS;
	uint64_t bit = line & ((1u << SEEN_CHUNK_BITS) - 1);

	if (chunk >= s->n) {
		size_t n = chunk + 1;
		uint64_t **chunks = realloc(s->chunks, n * sizeof(*s->chunks));

		if (!chunks)
			out_of_memory("the seen lines' chunk index", n * sizeof(*s->chunks));
		s->chunks = chunks;
		memset(s->chunks + s->n, 0, (n - s->n) * sizeof(*s->chunks));
		s->n = n;
	}
	if (!s->chunks[chunk] && !(s->chunks[chunk] = huge_zalloc(SEEN_CHUNK_BYTES)))
		out_of_memory("a chunk of seen lines", SEEN_CHUNK_BYTES);
	uint64_t *word = &s->chunks[chunk][bit / 64], mask = 1ull << (bit % 64);
	bool was = *word & mask;

	*word |= mask;
	return was;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		huge_free(s->chunks[i], SEEN_CHUNK_BYTES);
	free(s->chunks);
}

/* ---- shadow: fully associative LRU of `cap` lines ------------------------ */

/*
 * A doubly linked list in recency order (head most recent) over a node
 * array, and an open-addressing hash table from line to node.
 */
struct shadow_node {
	uint64_t line;
	uint32_t prev, next;
};

struct shadow {
	uint32_t cap, used, head, tail, mask;
	struct shadow_node *nodes;
	uint32_t *table;	/* node index + 1; 0: empty */
};

#define NIL UINT32_MAX

static uint32_t hash_line(uint64_t line, uint32_t mask)
{
	return (uint32_t)((line * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* False if out of memory. */
static bool shadow_init(struct shadow *s, uint32_t cap)
{
	uint32_t size = 1;

	while (size < 2 * cap)
		size <<= 1;
	s->cap = cap;
	s->used = 0;
	s->head = s->tail = NIL;
	s->mask = size - 1;
	s->nodes = huge_zalloc(cap * sizeof(*s->nodes));
	s->table = huge_zalloc(size * sizeof(*s->table));
	return s->nodes && s->table;
}

static uint32_t *shadow_slot(struct shadow *s, uint64_t line)
{
	uint32_t i = hash_line(line, s->mask);

	while (s->table[i] && s->nodes[s->table[i] - 1].line != line)
		i = (i + 1) & s->mask;
	return &s->table[i];
}

static bool shadow_holds(struct shadow *s, uint64_t line)
{
	return *shadow_slot(s, line) != 0;
}

/*
 * Linear-probing deletion by backward shift, no tombstones: after emptying
 * slot i, the entry in the next full slot j moves back to i unless its home
 * slot lies cyclically in (i, j].
 */
static bool moves_back(uint32_t home, uint32_t i, uint32_t j)
{
	return i <= j ? (home <= i || home > j) : (home <= i && home > j);
}

static void shadow_unhash(struct shadow *s, uint64_t line)
{
	uint32_t i = (uint32_t)(shadow_slot(s, line) - s->table), j = i;

	s->table[i] = 0;
	for (;;) {
		j = (j + 1) & s->mask;
		if (!s->table[j])
			return;
		if (moves_back(hash_line(s->nodes[s->table[j] - 1].line, s->mask), i, j)) {
			s->table[i] = s->table[j];
			s->table[j] = 0;
			i = j;
		}
	}
}

static void list_unlink(struct shadow *s, uint32_t n)
{
	struct shadow_node *node = &s->nodes[n];

	if (node->prev != NIL)
		s->nodes[node->prev].next = node->next;
	else
		s->head = node->next;
	if (node->next != NIL)
		s->nodes[node->next].prev = node->prev;
	else
		s->tail = node->prev;
}

static void list_push_head(struct shadow *s, uint32_t n)
{
	s->nodes[n].prev = NIL;
	s->nodes[n].next = s->head;
	if (s->head != NIL)
		s->nodes[s->head].prev = n;
	s->head = n;
	if (s->tail == NIL)
		s->tail = n;
}

/* Moves node to the front if it is still the line's; false if it is not. */
static bool shadow_touch(struct shadow *s, uint32_t node, uint64_t line)
{
	if (node >= s->used || s->nodes[node].line != line)
		return false;
	list_unlink(s, node);
	list_push_head(s, node);
	return true;
}

/* Accesses the line; true if it was present before.  *left is the line
 * that made room for it plus one, or 0 if none had to. */
static bool shadow_access(struct shadow *s, uint64_t line, uint64_t *left)
{
	uint32_t *slot = shadow_slot(s, line), n;

	*left = 0;
	if (*slot) {
		n = *slot - 1;
		list_unlink(s, n);
		list_push_head(s, n);
		return true;
	}
	if (s->used < s->cap) {
		n = s->used++;
	} else {
		n = s->tail;
		list_unlink(s, n);
		*left = s->nodes[n].line + 1;
		shadow_unhash(s, s->nodes[n].line);
		slot = shadow_slot(s, line);
	}
	s->nodes[n].line = line;
	*slot = n + 1;
	list_push_head(s, n);
	return false;
}

static void shadow_free(struct shadow *s)
{
	huge_free(s->nodes, s->cap * sizeof(*s->nodes));
	huge_free(s->table, (s->mask + 1) * sizeof(*s->table));
}

/* ---- cache: set-associative, LRU ---------------------------------------- */

struct way {
	uint64_t tag;		/* line number + 1; 0: invalid */
	uint64_t stamp;		/* last access, for LRU */
	uint8_t state;		/* enum mesi (L2); MODIFIED marks a dirty L3 line */
	/* L1: the line's node in the shadow when it came in or was last hit
	 * there, so that a hit moves it to the front without the shadow's
	 * hash (checked before use: the shadow may have dropped the line and
	 * given the node to another). */
	uint32_t node;
};

/* A core's caches that have stolen marks (struct stolen), by their bit. */
enum marked { MARKED_L1I, MARKED_L1D, MARKED_L2, NMARKED, UNMARKED = NMARKED };

struct cache {
	uint32_t sets, assoc, latency;
	uint32_t marked;	/* enum marked */
	uint64_t clock;
	struct way *ways;
	struct shadow shadow;
	struct seen seen;
};

/* False if out of memory. */
static bool cache_init(struct cache *c, const struct cm_cache_config *cfg, uint32_t line_bytes,
		       enum marked marked)
{
	c->marked = marked;
	c->assoc = cfg->assoc;
	c->sets = cfg->size_bytes / line_bytes / cfg->assoc;
	c->latency = cfg->latency;
	c->clock = 0;
	c->ways = huge_zalloc((size_t)c->sets * c->assoc * sizeof(*c->ways));
	memset(&c->seen, 0, sizeof(c->seen));
	return shadow_init(&c->shadow, c->sets * c->assoc) && c->ways;
}

static void cache_free(struct cache *c)
{
	huge_free(c->ways, (size_t)c->sets * c->assoc * sizeof(*c->ways));
	shadow_free(&c->shadow);
	seen_free(&c->seen);
}

static struct way *cache_set(struct cache *c, uint64_t line)
{
	return &c->ways[(line & (c->sets - 1)) * c->assoc];
}

/*
 * The way holding the line, or NULL.  Threaded, tags change only under the
 * lock, so a lock holder reads them plainly; a lock-free hit reads its own
 * with cache_find_unlocked, since a lock holder may be dropping the line.
 */
static struct way *cache_find(struct cache *c, uint64_t line)
{
	struct way *set = cache_set(c, line);

	for (uint32_t i = 0; i < c->assoc; i++)
		if (set[i].tag == line + 1)
			return &set[i];
	return NULL;
}

static struct way *cache_find_unlocked(struct cache *c, uint64_t line)
{
	struct way *set = cache_set(c, line);

	for (uint32_t i = 0; i < c->assoc; i++)
		if (LOAD(&set[i].tag) == line + 1)
			return &set[i];
	return NULL;
}

static void cache_touch(struct cache *c, struct way *w)
{
	w->stamp = ++c->clock;
}

/* The way the line goes into: an invalid one, else the least recently used. */
static struct way *cache_victim(struct cache *c, uint64_t line)
{
	struct way *set = cache_set(c, line), *victim = &set[0];

	for (uint32_t i = 0; i < c->assoc; i++) {
		if (!set[i].tag)
			return &set[i];
		if (set[i].stamp < victim->stamp)
			victim = &set[i];
	}
	return victim;
}

static void cache_drop(struct cache *c, uint64_t line)
{
	struct way *w = cache_find(c, line);

	if (w)
		STORE(&w->tag, 0);
}

/* ---- stolen: the lines other cores' writes took from a core ------------- */

/*
 * A line another core's write took from some of this core's caches, for
 * their coherence misses: a bit per cache (enum marked) and, per cache, the
 * first write that took the line from it: its core and instruction.  (One
 * line's marks may come from two writes: the L1I's from one, the L1D's and
 * L2's from a later one if the L2 took the line back through the L1D in
 * between.)
 *
 * A cache's bit is set only if the cache held the line when it was taken
 * and its shadow still holds it (otherwise the next miss is capacity or
 * conflict, classify()); it is cleared when the cache takes the line back,
 * and when the shadow lets the line go (private_shadow_access): the next
 * access of the cache to the line is that miss, so nothing can bring the
 * line back into the shadow first.  So a core has no more marked lines than
 * its shadows hold lines.  (Each cache's own shadow decides, not the L2's:
 * an L1's hits never reach the L2, whose shadow may let go of a line the L1
 * keeps using.)
 */
struct stolen {
	uint64_t tag;		/* line + 1; 0: an empty slot */
	uint64_t pc[NMARKED];
	int16_t by[NMARKED];
	uint8_t caches;		/* 1 << enum marked for each */
};

/*
 * Per core, an open-addressing table of marked lines (linear probing,
 * deletion by backward shift, as the shadow's), with twice as many slots as
 * the core's shadows have lines: by the above it never fills (cm_check
 * counts).  Read and written under the model's lock only.
 */
struct stolen_table {
	uint32_t used, most, mask;
	struct stolen *slots;
};

/* False if out of memory. */
static bool stolen_init(struct stolen_table *t, uint32_t most)
{
	uint32_t size = 1;

	while (size < 2 * most)
		size <<= 1;
	t->used = 0;
	t->most = most;
	t->mask = size - 1;
	t->slots = calloc(size, sizeof(*t->slots));
	return t->slots;
}

static struct stolen *stolen_slot(struct stolen_table *t, uint64_t line)
{
	uint32_t i = hash_line(line, t->mask);

	while (t->slots[i].tag && t->slots[i].tag != line + 1)
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

/* The line's marks, or NULL.  (Most of the time a core has none.) */
static struct stolen *stolen_find(struct stolen_table *t, uint64_t line)
{
	struct stolen *s;

	if (!t->used)
		return NULL;
	s = stolen_slot(t, line);
	return s->tag ? s : NULL;
}

/* `by`'s write at `pc` took the line from the caches in `caches`. */
static void stolen_mark(struct stolen_table *t, uint64_t line, uint8_t caches, int16_t by,
			uint64_t pc)
{
	struct stolen *s = stolen_slot(t, line);

	if (!s->tag) {
		*s = (struct stolen){ .tag = line + 1 };
		t->used++;
	}
	s->caches |= caches;
	for (int i = 0; i < NMARKED; i++) {
		if (caches & 1u << i) {
			s->by[i] = by;
			s->pc[i] = pc;
		}
	}
}

/* The caches in `caches` took the line back, or their shadows let it go. */
static void stolen_clear(struct stolen_table *t, uint64_t line, uint8_t caches)
{
	struct stolen *s = stolen_find(t, line);
	uint32_t i, j;

	if (!s)
		return;
	s->caches &= (uint8_t)~caches;
	if (s->caches)
		return;
	t->used--;
	i = j = (uint32_t)(s - t->slots);
	t->slots[i].tag = 0;
	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->slots[j].tag)
			return;
		if (moves_back(hash_line(t->slots[j].tag - 1, t->mask), i, j)) {
			t->slots[i] = t->slots[j];
			t->slots[j].tag = 0;
			i = j;
		}
	}
}

/* ---- per core: the store buffer ---------------------------------------- */

struct store {
	uint64_t addr, pc, icount;
	uint32_t size;
};

/*
 * Most loads overlap no store in the buffer.  Per core, for each 4-byte
 * granule (hashed into STORE_FILTER slots), the youngest store that touched
 * it: its number among the core's stores (from 1) and its instruction count.
 * A load whose granules' slots hold no store still in the ring and in the
 * window overlaps none, and skips the walk; a collision only costs a walk.
 * The slot is a multiplicative hash of the granule, not its low bits: a page
 * copy's load and the store just before it lie a whole number of pages
 * apart, and with the low bits three loads in four of `rep movsb` found the
 * previous byte's store in their slot and walked the whole buffer (18% of
 * the model's instructions on the fork storm, bench/README.md).
 */
#define STORE_GRANULE_SHIFT 2
#define STORE_FILTER_BITS 9
#define STORE_FILTER (1u << STORE_FILTER_BITS)

struct store_filter {
	uint64_t number, icount;
};

struct core {
	/* Threaded: odd while a lock holder changes this core's private state
	 * (remote_begin); the core's lock-free hits check it.  Cache-line
	 * aligned, like the whole struct: cores share no line. */
	_Alignas(64) uint32_t seq;
	struct cache l1i, l1d, l2;
	/*
	 * The line of the last fetch ([0]) and data access ([1]), while it is
	 * still this core's most recently used line in that L1 (mru_word): another
	 * access to it hits and changes no state (it is already the most recent
	 * in the set and in the shadow, and already seen), so it needs no
	 * lookup.  A data write takes this path only if the word says the line
	 * is Modified.  Anything that removes the line clears the word, anything
	 * that downgrades a line clears the data word's Modified bit.
	 */
	uint64_t mru[2];
	/*
	 * Unthreaded: the line that was the MRU line before it (prev, a word
	 * like mru's and kept the same way), with where both lie in the L1
	 * (way) and its shadow (node).  A page copy alternates between a
	 * source and a destination line, so that 19% of the line accesses of
	 * the fork storm are to this line (bench/README.md): it is second in
	 * the L1's shadow, so an access to it only moves it to the front of the
	 * shadow and makes it the most recent in its set, and the two swap.
	 * The way and node are checked before use: a line that left the L1 or
	 * the shadow is no longer there, and one that came back became the MRU
	 * line on the way (so the word is new).  What downgrades a line
	 * clears the data word's Modified bit, as for mru.
	 */
	uint64_t prev[2];
	struct way *mru_way[2], *prev_way[2];
	uint32_t mru_node[2], prev_node[2];
	struct stolen_table stolen;
	struct store *stores;	/* ring of store_buffer_entries */
	uint32_t next_store, stores_used;
	uint64_t stores_made;	/* ever: the number of the youngest */
	struct store_filter store_filter[STORE_FILTER];
	struct cm_paths paths;		/* threaded: accesses by path */
};

struct cm_model {
	struct cm_config cfg;
	uint32_t line_shift;
	uint32_t latency[CM_NSOURCES];	/* by enum cm_source */
	struct core *cores;
	uint32_t initialised;		/* cores whose caches cm_free frees */
	struct cache l3;
	bool has_l3;
	bool threaded;			/* cm_set_threaded */
	pthread_mutex_t lock;		/* threaded: everything but lock-free hits */
};

/* ---- configuration ------------------------------------------------------ */

static bool power_of_two(uint64_t n)
{
	return n && !(n & (n - 1));
}

static const char *cache_error(const struct cm_cache_config *c, uint32_t line_bytes)
{
	if (!c->assoc || !c->size_bytes || c->size_bytes % (c->assoc * line_bytes))
		return "a cache's size must be a whole number of sets of assoc lines";
	if (!power_of_two(c->size_bytes / line_bytes / c->assoc))
		return "a cache's number of sets must be a power of two";
	return NULL;
}

const char *cm_config_error(const struct cm_config *cfg)
{
	const char *e;

	if (cfg->cores < 1 || cfg->cores > 256)
		return "cores must be 1..256";
	if (!power_of_two(cfg->line_bytes) || cfg->line_bytes < 8)
		return "line_bytes must be a power of two >= 8";
	if ((e = cache_error(&cfg->l1i, cfg->line_bytes)) || (e = cache_error(&cfg->l1d, cfg->line_bytes)) ||
	    (e = cache_error(&cfg->l2, cfg->line_bytes)))
		return e;
	if (cfg->l3.size_bytes && (e = cache_error(&cfg->l3, cfg->line_bytes)))
		return e;
	if (cfg->inclusion >= CM_NINCLUSIONS)
		return "inclusion must be a value of enum cm_inclusion (cm_inclusion_name)";
	if (cfg->store_buffer_entries < 1 || cfg->store_buffer_entries > 4096)
		return "store_buffer_entries must be 1..4096";
	return NULL;
}

/*
 * The model's lock spins a little before it sleeps (glibc's adaptive
 * mutex): it is held for about a microsecond at a time, and on the smoke
 * fork storm in parallel mode a plain mutex spent a tenth of the process's
 * CPU time in futex calls to sleep and wake, the adaptive one a hundredth.
 */
static void init_lock(pthread_mutex_t *lock)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
#ifdef __GLIBC__
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	pthread_mutex_init(lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

struct cm_model *cm_new(const struct cm_config *cfg)
{
	struct cm_model *m;

	if (cm_config_error(cfg))
		return NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return NULL;
	m->cfg = *cfg;
	while ((1u << m->line_shift) < cfg->line_bytes)
		m->line_shift++;
	m->latency[CM_FROM_L1] = cfg->l1d.latency;
	m->latency[CM_FROM_L2] = cfg->l2.latency;
	m->latency[CM_FROM_L3] = cfg->l3.latency;
	m->latency[CM_FROM_PEER] = cfg->peer_latency;
	m->latency[CM_FROM_MEMORY] = cfg->memory_latency;
	init_lock(&m->lock);
	/* A multiple of the alignment, as aligned_alloc wants: sizeof is. */
	size_t bytes = cfg->cores * sizeof(*m->cores);

	if (!(m->cores = aligned_alloc(_Alignof(struct core), bytes)))
		goto fail;
	memset(m->cores, 0, bytes);
	for (uint32_t i = 0; i < cfg->cores; i++) {
		struct core *c = &m->cores[i];

		m->initialised = i + 1;
		if (!cache_init(&c->l1i, &cfg->l1i, cfg->line_bytes, MARKED_L1I) ||
		    !cache_init(&c->l1d, &cfg->l1d, cfg->line_bytes, MARKED_L1D) ||
		    !cache_init(&c->l2, &cfg->l2, cfg->line_bytes, MARKED_L2) ||
		    !stolen_init(&c->stolen,
				 c->l1i.shadow.cap + c->l1d.shadow.cap + c->l2.shadow.cap) ||
		    !(c->stores = calloc(cfg->store_buffer_entries, sizeof(*c->stores))))
			goto fail;
	}
	m->has_l3 = cfg->l3.size_bytes != 0;
	if (m->has_l3 && !cache_init(&m->l3, &cfg->l3, cfg->line_bytes, UNMARKED))
		goto fail;
	return m;

fail:
	cm_free(m);
	return NULL;
}

void cm_free(struct cm_model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->initialised; i++) {
		cache_free(&m->cores[i].l1i);
		cache_free(&m->cores[i].l1d);
		cache_free(&m->cores[i].l2);
		free(m->cores[i].stolen.slots);
		free(m->cores[i].stores);
	}
	if (m->has_l3)
		cache_free(&m->l3);
	free(m->cores);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void cm_set_threaded(struct cm_model *m)
{
	m->threaded = true;
}

void cm_paths(const struct cm_model *m, uint32_t core, struct cm_paths *paths)
{
	*paths = m->cores[core].paths;
}

/* ---- coherence ---------------------------------------------------------- */

static struct cache *marked_cache(struct core *c, int marked)
{
	return marked == MARKED_L1I ? &c->l1i : marked == MARKED_L1D ? &c->l1d : &c->l2;
}

/*
 * A private cache's shadow sees an access; the line it lets go of to make
 * room loses its mark for that cache (struct stolen).  Threaded, under the
 * lock: a lock-free hit only moves a line its shadow holds to the front.
 */
static bool private_shadow_access(struct core *c, struct cache *cache, uint64_t line)
{
	uint64_t left;
	bool hit = shadow_access(&cache->shadow, line, &left);

	if (left)
		stolen_clear(&c->stolen, left - 1, 1u << cache->marked);
	return hit;
}

/* A core's MRU word: line + 1, shifted left by one, and the line's Modified
 * bit; 0 for none.  One word, so that a lock-free hit reads and writes both
 * at once. */
static uint64_t mru_word(uint64_t line, bool modified)
{
	return (line + 1) << 1 | modified;
}

/* A read hits the line whatever its bit, a write only if it is Modified. */
static bool mru_hit(uint64_t word, uint64_t line, bool write)
{
	return (word | !write) == mru_word(line, true);
}

/* (seq_cst: against a lock-free hit making the line its MRU line, see
 * remote_begin.) */
static void forget_mru(struct core *c, uint64_t line)
{
	for (int i = 0; i < 2; i++)
		if (__atomic_load_n(&c->mru[i], __ATOMIC_SEQ_CST) >> 1 == line + 1)
			STORE(&c->mru[i], 0);
}

/*
 * Threaded: a lock holder is about to change core c's private state, or
 * has changed it.  The changes are release stores (STORE, exchanges), so a
 * lock-free hit that sees one (its loads acquire) sees the odd count too
 * when it reads the count again.  The odd count is seq_cst, like the MRU
 * word a lock-free hit writes and the count it reads after, and like
 * forget_mru's read of that word: of the two threads, one sees the other's
 * write.
 */
static void remote_begin(struct cm_model *m, struct core *c)
{
	if (m->threaded)
		__atomic_store_n(&c->seq, LOAD(&c->seq) + 1, __ATOMIC_SEQ_CST);
}

static void remote_end(struct cm_model *m, struct core *c)
{
	if (m->threaded)
		__atomic_store_n(&c->seq, LOAD(&c->seq) + 1, __ATOMIC_RELEASE);
}

/* Takes a line in a core's L2 to state `to`, atomically against the core's
 * lock-free Exclusive-to-Modified; returns the state it had. */
static uint8_t take_state(struct way *w, uint8_t to)
{
	return __atomic_exchange_n(&w->state, to, __ATOMIC_ACQ_REL);
}

/* Removes the line from a core's private caches (L1s and L2, which is
 * inclusive of them); returns the state it had there. */
static uint8_t drop_private(struct cm_model *m, struct core *c, uint64_t line)
{
	struct way *w = cache_find(&c->l2, line);
	uint8_t was;

	if (!w)
		return INVALID;
	remote_begin(m, c);
	was = take_state(w, INVALID);	/* first: a lock-free write now fails */
	RACE_POINT();
	forget_mru(c, line);
	cache_drop(&c->l1i, line);
	cache_drop(&c->l1d, line);
	STORE(&w->tag, 0);
	remote_end(m, c);
	return was;
}

/* A dirty line leaving the private caches goes to the L3, if it keeps it. */
static void write_back(struct cm_model *m, uint64_t line)
{
	struct way *w = m->has_l3 ? cache_find(&m->l3, line) : NULL;

	if (w)
		w->state = MODIFIED;
}

/* The caches of core c that hold the line and whose shadows hold it too:
 * those whose next miss on it is a coherence miss if it is taken now. */
static uint8_t caches_to_mark(struct core *c, uint64_t line)
{
	uint8_t caches = 0;

	for (int i = 0; i < NMARKED; i++) {
		struct cache *cache = marked_cache(c, i);

		if (cache_find(cache, line) && shadow_holds(&cache->shadow, line))
			caches |= (uint8_t)(1u << i);
	}
	return caches;
}

/* `writer`'s write at `pc` takes the line from every other core; true if
 * one of them had it Modified. */
static bool invalidate_others(struct cm_model *m, uint32_t writer, uint64_t line, uint64_t pc)
{
	bool modified = false;

	for (uint32_t i = 0; i < m->cfg.cores; i++) {
		struct core *c = &m->cores[i];
		uint8_t caches;

		if (i == writer || !cache_find(&c->l2, line))
			continue;
		caches = caches_to_mark(c, line);	/* before they lose it */
		modified |= drop_private(m, c, line) == MODIFIED;
		if (caches)
			stolen_mark(&c->stolen, line, caches, (int16_t)writer, pc);
	}
	return modified;
}

/* ---- one line ----------------------------------------------------------- */

/*
 * A miss of core c's private cache, given whether it is the cache's first
 * access to the line and whether the cache's shadow held the line: the
 * first of compulsory, coherence (another core's write took the line from
 * this cache, which has not taken it back, and the shadow still held it),
 * conflict (the shadow held it), capacity.  A coherence miss names its
 * thief in r, unless r is NULL (the L2's, after the L1's coherence miss
 * named its own).
 */
static uint8_t classify(struct core *c, struct cache *cache, bool first, bool shadow_hit,
			uint64_t line, struct cm_result *r)
{
	struct stolen *s;

	if (first)
		return CM_COMPULSORY;
	if (!shadow_hit)
		return CM_CAPACITY;
	s = stolen_find(&c->stolen, line);
	if (!s || !(s->caches & 1u << cache->marked))
		return CM_CONFLICT;
	if (r) {
		r->stolen_by = s->by[cache->marked];
		r->stolen_by_pc = s->pc[cache->marked];
	}
	return CM_COHERENCE;
}

/* An access to a cache level: its seen bitmap and shadow see every one. */
struct probe {
	bool first, shadow_hit;
	struct way *way;
};

/* (owner: the core whose private cache c is, NULL for the L3.) */
static struct probe probe(struct cache *c, struct core *owner, uint64_t line)
{
	struct probe p;
	uint64_t left;

	p.first = !seen_test_and_set(&c->seen, line);
	if (owner)
		p.shadow_hit = private_shadow_access(owner, c, line);
	else
		p.shadow_hit = shadow_access(&c->shadow, line, &left);
	p.way = cache_find(c, line);
	if (p.way)
		cache_touch(c, p.way);
	return p;
}

static void evict_from_l3(struct cm_model *m, uint64_t victim)
{
	/* An inclusive L3 takes its victims out of every private cache. */
	if (m->cfg.inclusion == CM_INCLUSIVE)
		for (uint32_t i = 0; i < m->cfg.cores; i++)
			drop_private(m, &m->cores[i], victim);
}

static void fill_l3(struct cm_model *m, uint64_t line, uint8_t state)
{
	struct way *w = cache_victim(&m->l3, line);

	if (w->tag)
		evict_from_l3(m, w->tag - 1);
	w->tag = line + 1;
	w->state = state;
	cache_touch(&m->l3, w);
}

/* The line enters the core's L2 (and then an L1), pushing out a victim;
 * returns its way. */
static struct way *fill_l2(struct cm_model *m, struct core *c, uint64_t line, uint8_t state)
{
	struct way *w = cache_victim(&c->l2, line);

	if (w->tag) {
		uint64_t victim = w->tag - 1;

		/* The L2 is inclusive of its L1s. */
		forget_mru(c, victim);
		cache_drop(&c->l1i, victim);
		cache_drop(&c->l1d, victim);
		if (m->has_l3 && m->cfg.inclusion == CM_EXCLUSIVE)
			fill_l3(m, victim, LOAD(&w->state) == MODIFIED ? MODIFIED : SHARED);
		else if (LOAD(&w->state) == MODIFIED)
			write_back(m, victim);
	}
	STORE(&w->state, state);
	STORE(&w->tag, line + 1);
	cache_touch(&c->l2, w);
	return w;
}

static struct way *fill_l1(struct cache *l1, uint64_t line)
{
	struct way *w = cache_victim(l1, line);

	STORE(&w->tag, line + 1);
	w->state = SHARED;	/* unused: the L2 carries the state */
	w->node = l1->shadow.head;	/* the access put the line there */
	cache_touch(l1, w);
	return w;
}

/* Who served the access, and so its latency. */
static void set_source(struct cm_model *m, struct cm_result *r, uint8_t source)
{
	r->source = source;
	r->cycles = m->latency[source];
}

/* Where an access left its line: its ways in the core's L1 and L2 (l2
 * NULL where the access did not look: a read that hit the L1), so that the
 * MRU word needs no second search. */
struct placed {
	struct way *l1, *l2;
};

static struct placed access_line_slow(struct cm_model *m, uint32_t core, uint64_t pc,
				      uint64_t line, uint32_t kind, struct cm_result *r);

/* Whether the line the access left is Modified in the core's L2. */
static bool placed_modified(struct core *me, struct placed at, uint64_t line)
{
	return LOAD(&(at.l2 ? at.l2 : cache_find(&me->l2, line))->state) == MODIFIED;
}

static void access_line_threaded(struct cm_model *m, uint32_t core, uint64_t pc, uint64_t line,
				 uint32_t kind, struct cm_result *r);

/* Unthreaded, past the MRU line: the lookup, and the line becomes the MRU
 * line.  Out of line, so that an MRU hit saves no registers. */
static __attribute__((noinline)) void access_line_unthreaded(struct cm_model *m, uint32_t core,
							     uint64_t pc, uint64_t line,
							     uint32_t kind, struct cm_result *r)
{
	struct core *me = &m->cores[core];
	int data = kind != CM_IFETCH;
	struct cache *l1 = data ? &me->l1d : &me->l1i;
	struct placed at = access_line_slow(m, core, pc, line, kind, r);

	if (me->mru[data] >> 1 != line + 1) {
		me->prev[data] = me->mru[data];
		me->prev_way[data] = me->mru_way[data];
		me->prev_node[data] = me->mru_node[data];
	}
	STORE(&me->mru[data], mru_word(line, data && placed_modified(me, at, line)));
	me->mru_way[data] = at.l1;
	me->mru_node[data] = l1->shadow.head;	/* access_line_slow put it there */
}

/* Unthreaded: an access to the previous line (struct core) that needs no
 * more than the L1 has; false, having changed nothing, if it needs more or
 * the line has gone. */
static inline bool prev_hit(struct core *me, uint64_t line, int data, bool write,
			    struct cm_result *r)
{
	struct cache *l1 = data ? &me->l1d : &me->l1i;
	struct way *w = me->prev_way[data];
	uint32_t node = me->prev_node[data];
	uint64_t word = me->prev[data];

	if (!mru_hit(word, line, write) || w->tag != line + 1 ||
	    !shadow_touch(&l1->shadow, node, line))
		return false;
	cache_touch(l1, w);
	me->prev[data] = me->mru[data];
	me->prev_way[data] = me->mru_way[data];
	me->prev_node[data] = me->mru_node[data];
	me->mru[data] = word;
	me->mru_way[data] = w;
	me->mru_node[data] = node;
	r->l1 = CM_HIT;
	r->source = CM_FROM_L1;
	r->cycles = l1->latency;
	return true;
}

static inline void access_line(struct cm_model *m, uint32_t core, uint64_t pc, uint64_t line,
			       uint32_t kind, struct cm_result *r)
{
	struct core *me = &m->cores[core];
	int data = kind != CM_IFETCH;
	bool write = kind == CM_STORE || kind == CM_RMW;

	if (m->threaded) {
		access_line_threaded(m, core, pc, line, kind, r);
	} else if (mru_hit(LOAD(&me->mru[data]), line, write)) {
		r->l1 = CM_HIT;
		r->source = CM_FROM_L1;
		r->cycles = data ? me->l1d.latency : me->l1i.latency;
	} else if (!prev_hit(me, line, data, write, r)) {
		access_line_unthreaded(m, core, pc, line, kind, r);
	}
}

/*
 * Threaded: the access if it hits the core's L1 with the permission it
 * needs, without the lock (see the top of this file); false, having changed
 * nothing, if it does not or if another core's state changed under it.  What
 * it does on a hit is what the unthreaded path does: the MRU line hits with
 * no change; another line moves to the front of the L1's shadow and becomes
 * the most recent of its set, a write takes an Exclusive line to Modified,
 * and the line becomes the MRU line.  A hit of a line the shadow has lost
 * takes the lock: the shadow takes the line back, and the line it lets go
 * of loses its stolen mark (private_shadow_access).
 */
static bool hit_unlocked(struct core *me, uint64_t line, uint32_t kind,
			 struct cm_result *r)
{
	int data = kind != CM_IFETCH;
	bool write = kind == CM_STORE || kind == CM_RMW;
	struct cache *l1 = data ? &me->l1d : &me->l1i;
	uint32_t seq = __atomic_load_n(&me->seq, __ATOMIC_ACQUIRE);
	struct way *w, *mine = NULL;
	uint8_t state = INVALID;
	uint32_t node;		/* the line's node in the L1's shadow, + 1 */

	if (seq & 1)
		return false;
	if (mru_hit(LOAD(&me->mru[data]), line, write)) {
		RACE_POINT();
		if (LOAD(&me->seq) != seq)
			return false;
		r->l1 = CM_HIT;
		r->source = CM_FROM_L1;
		r->cycles = l1->latency;
		return true;
	}
	if (!(w = cache_find_unlocked(l1, line)) || !(node = *shadow_slot(&l1->shadow, line)))
		return false;
	if (data) {
		if (!(mine = cache_find_unlocked(&me->l2, line)))
			return false;
		state = LOAD(&mine->state);
		if (state == INVALID || (write && state == SHARED))
			return false;	/* an upgrade, under the lock */
	}
	RACE_POINT();
	if (LOAD(&me->seq) != seq)
		return false;
	RACE_POINT();
	/* A lock holder that took the line down or out since has exchanged
	 * its state first: the compare-and-swap fails. */
	if (write && state == EXCLUSIVE &&
	    !__atomic_compare_exchange_n(&mine->state, &state, MODIFIED, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return false;
	RACE_POINT();
	list_unlink(&l1->shadow, node - 1);
	list_push_head(&l1->shadow, node - 1);
	cache_touch(l1, w);
	r->l1 = CM_HIT;
	r->source = CM_FROM_L1;
	r->cycles = l1->latency;
	__atomic_store_n(&me->mru[data], mru_word(line, write || state == MODIFIED),
			 __ATOMIC_SEQ_CST);
	RACE_POINT();
	if (__atomic_load_n(&me->seq, __ATOMIC_SEQ_CST) != seq)
		STORE(&me->mru[data], 0);	/* it may have missed the line going */
	return true;
}

/*
 * Threaded, past a lock-free hit: the unthreaded path under the lock.  The
 * serial part of a threaded run; out of line, so that a profile shows its
 * share (bench/README.md).
 */
static __attribute__((noinline)) void access_line_locked(struct cm_model *m, uint32_t core,
							 uint64_t pc, uint64_t line, uint32_t kind,
							 struct cm_result *r)
{
	struct core *me = &m->cores[core];
	int data = kind != CM_IFETCH;

	pthread_mutex_lock(&m->lock);
	struct placed at = access_line_slow(m, core, pc, line, kind, r);

	STORE(&me->mru[data], mru_word(line, data && placed_modified(me, at, line)));
	pthread_mutex_unlock(&m->lock);
}

/* Threaded: a lock-free hit, or the rest under the lock. */
static __attribute__((noinline)) void access_line_threaded(struct cm_model *m, uint32_t core,
							   uint64_t pc, uint64_t line, uint32_t kind,
							   struct cm_result *r)
{
	struct core *me = &m->cores[core];

	if (hit_unlocked(me, line, kind, r)) {
		me->paths.unlocked++;
		return;
	}
	me->paths.locked++;
	access_line_locked(m, core, pc, line, kind, r);
}

static struct placed access_line_slow(struct cm_model *m, uint32_t core, uint64_t pc,
				      uint64_t line, uint32_t kind, struct cm_result *r)
{
	struct core *me = &m->cores[core];
	struct cache *l1 = kind == CM_IFETCH ? &me->l1i : &me->l1d;
	bool write = kind == CM_STORE || kind == CM_RMW;
	struct probe p1, p2, p3;
	struct way *mine;	/* the core's state, in its L2 */

	/* An L1 hit: the line was seen when it came in, so only the shadow
	 * and the way's recency change. */
	p1.way = cache_find(l1, line);
	if (p1.way) {
		p1.shadow_hit = shadow_touch(&l1->shadow, p1.way->node, line) ||
				private_shadow_access(me, l1, line);
		p1.way->node = l1->shadow.head;
		cache_touch(l1, p1.way);
		if (!write) {
			r->l1 = CM_HIT;
			set_source(m, r, CM_FROM_L1);
			r->cycles = l1->latency;
			return (struct placed){ p1.way, NULL };
		}
		mine = cache_find(&me->l2, line);
		if (LOAD(&mine->state) == SHARED) {
			/* The core holds the line Shared in its L2 too, which the
			 * write asks for permission: an upgrade of both. */
			probe(&me->l2, me, line);
			r->l1 = r->l2 = CM_UPGRADE;
			invalidate_others(m, core, line, pc);
			STORE(&mine->state, MODIFIED);
			set_source(m, r, CM_FROM_L1);
			r->cycles = m->cfg.peer_latency;
			return (struct placed){ p1.way, mine };
		}
		STORE(&mine->state, MODIFIED);
		r->l1 = CM_HIT;
		set_source(m, r, CM_FROM_L1);
		r->cycles = l1->latency;
		return (struct placed){ p1.way, mine };
	}
	p1.shadow_hit = private_shadow_access(me, l1, line);
	p1.first = !seen_test_and_set(&l1->seen, line);
	r->l1 = classify(me, l1, p1.first, p1.shadow_hit, line, r);

	p2 = probe(&me->l2, me, line);
	if (p2.way) {
		if (write && LOAD(&p2.way->state) == SHARED) {
			r->l2 = CM_UPGRADE;
			invalidate_others(m, core, line, pc);
			STORE(&p2.way->state, MODIFIED);
			set_source(m, r, CM_FROM_L2);
			r->cycles = m->cfg.peer_latency;
		} else {
			if (write)
				STORE(&p2.way->state, MODIFIED);
			r->l2 = CM_HIT;
			set_source(m, r, CM_FROM_L2);
		}
		struct way *in_l1 = fill_l1(l1, line);

		stolen_clear(&me->stolen, line, 1u << l1->marked);
		return (struct placed){ in_l1, p2.way };
	}
	r->l2 = classify(me, &me->l2, p2.first, p2.shadow_hit, line,
			 r->l1 == CM_COHERENCE ? NULL : r);

	/* Beyond the private caches: who else has the line? */
	bool peer_modified = false, peers = false;

	for (uint32_t i = 0; i < m->cfg.cores; i++) {
		struct core *peer = &m->cores[i];
		struct way *w = i == core ? NULL : cache_find(&peer->l2, line);
		uint8_t state;

		if (!w)
			continue;
		peers = true;
		state = LOAD(&w->state);
		if (!write && state != SHARED) {
			/* A read takes an exclusive or modified line down to shared
			 * (threaded: the peer may just have taken it to modified). */
			remote_begin(m, peer);
			RACE_POINT();
			state = take_state(w, SHARED);
			__atomic_fetch_and(&peer->mru[1], ~(uint64_t)1, __ATOMIC_SEQ_CST);
			if (peer->prev[1] >> 1 == line + 1)
				peer->prev[1] &= ~(uint64_t)1;
			remote_end(m, peer);
			if (state == MODIFIED)
				write_back(m, line);
		}
		if (state == MODIFIED)
			peer_modified = true;
	}
	/* (A write learns again from the invalidations whether a peer had it
	 * modified: threaded, a peer may have written it since.) */
	if (write && invalidate_others(m, core, line, pc))
		peer_modified = true;

	uint8_t source = CM_FROM_MEMORY;

	if (m->has_l3) {
		p3 = probe(&m->l3, NULL, line);
		if (p3.way) {
			r->l3 = CM_HIT;
			source = CM_FROM_L3;
			if (m->cfg.inclusion == CM_EXCLUSIVE)
				p3.way->tag = 0;	/* it moves up */
		} else {
			/* The shared L3 loses lines only to its own evictions. */
			r->l3 = p3.first ? CM_COMPULSORY : p3.shadow_hit ? CM_CONFLICT : CM_CAPACITY;
			if (m->cfg.inclusion != CM_EXCLUSIVE)
				fill_l3(m, line, SHARED);
		}
	}
	/* Only a modified line comes from another core's cache; clean data
	 * comes from the L3 or memory. */
	if (peer_modified)
		source = CM_FROM_PEER;
	set_source(m, r, source);
	struct placed at;

	at.l2 = fill_l2(m, me, line, write ? MODIFIED : peers ? SHARED : EXCLUSIVE);
	at.l1 = fill_l1(l1, line);
	stolen_clear(&me->stolen, line, 1u << l1->marked | 1u << MARKED_L2);
	return at;
}

/* ---- store buffer ------------------------------------------------------- */

/* The granules an access of `size` bytes at addr touches (a store of 0
 * bytes marks its address's; a load of 0 bytes overlaps nothing partially). */
static uint64_t first_granule(uint64_t addr)
{
	return addr >> STORE_GRANULE_SHIFT;
}

static uint64_t last_granule(uint64_t addr, uint32_t size)
{
	return (addr + (size ? size : 1) - 1) >> STORE_GRANULE_SHIFT;
}

static struct store_filter *filter_slot(struct core *c, uint64_t granule)
{
	return &c->store_filter[(granule * 0x9e3779b97f4a7c15ull) >> (64 - STORE_FILTER_BITS)];
}

/*
 * The youngest store that may overlap the load, still in the ring and in the
 * window: its number, or 0 if none can.  Every overlapping store touched one
 * of the load's granules, so none is younger than this one.
 */
static uint64_t youngest_overlap(struct cm_model *m, struct core *c, uint64_t addr,
				 uint32_t size, uint64_t icount)
{
	uint64_t youngest = 0;

	if (!size)
		return 0;
	for (uint64_t g = first_granule(addr), last = last_granule(addr, size); g <= last; g++) {
		const struct store_filter *f = filter_slot(c, g);

		if (f->number > youngest && c->stores_made - f->number < c->stores_used &&
		    icount - f->icount <= m->cfg.store_buffer_window)
			youngest = f->number;
	}
	return youngest;
}

/* Whether the load reads after a partial write (then in r too). */
static bool check_partial_write(struct cm_model *m, struct core *c, uint64_t addr, uint32_t size,
				uint64_t icount, struct cm_result *r)
{
	uint32_t n = m->cfg.store_buffer_entries, younger, i;
	uint64_t youngest = youngest_overlap(m, c, addr, size, icount);

	if (!youngest)
		return false;
	/* Youngest first: the youngest overlapping store is the one the load
	 * would forward from.  The younger ones (all in the window) cannot
	 * overlap, and are skipped. */
	younger = (uint32_t)(c->stores_made - youngest);
	i = c->next_store >= younger ? c->next_store - younger : c->next_store + n - younger;
	for (uint32_t k = younger + 1; k <= c->stores_used; k++) {
		struct store *s = &c->stores[i = i ? i - 1 : n - 1];

		if (icount - s->icount > m->cfg.store_buffer_window)
			return false;
		if (s->addr >= addr + size || addr >= s->addr + s->size)
			continue;
		if (s->addr > addr || s->addr + s->size < addr + size) {
			r->partial_write = 1;
			r->store_pc = s->pc;
			return true;
		}
		return false;
	}
	return false;
}

static void record_store(struct cm_model *m, struct core *c, uint64_t pc, uint64_t addr,
			 uint32_t size, uint64_t icount)
{
	uint32_t n = m->cfg.store_buffer_entries;

	c->stores[c->next_store] = (struct store){ addr, pc, icount, size };
	c->next_store = c->next_store + 1 == n ? 0 : c->next_store + 1;
	if (c->stores_used < n)
		c->stores_used++;
	c->stores_made++;
	for (uint64_t g = first_granule(addr), last = last_granule(addr, size); g <= last; g++)
		*filter_slot(c, g) = (struct store_filter){ c->stores_made, icount };
}

/* ---- the interface ------------------------------------------------------ */

bool cm_access(struct cm_model *m, uint32_t core, uint64_t pc, uint64_t paddr, uint32_t size,
	       uint32_t kind, uint64_t icount, struct cm_result *result)
{
	struct core *c = &m->cores[core];
	uint64_t first = paddr >> m->line_shift;
	uint64_t last = (paddr + (size ? size : 1) - 1) >> m->line_shift;
	bool partial = false;

	memset(result, 0, sizeof(*result));
	result->stolen_by = -1;
	if (kind == CM_LOAD || kind == CM_RMW)
		partial = check_partial_write(m, c, paddr, size, icount, result);
	if (kind == CM_STORE || kind == CM_RMW)
		record_store(m, c, pc, paddr, size, icount);
	if (first == last) {
		access_line(m, core, pc, first, kind, result);
		return result->l1 == CM_HIT && !partial;
	}
	for (uint64_t line = first; line <= last; line++) {
		struct cm_result r = *result;

		r.l1 = r.l2 = r.l3 = CM_NOT_REACHED;
		access_line(m, core, pc, line, kind, &r);
		/* A split access reports its slowest part. */
		if (line == first || r.cycles > result->cycles)
			*result = r;
	}
	return result->l1 == CM_HIT && !partial;
}

bool cm_fetch_hits(const struct cm_model *m, uint32_t core, uint64_t paddr)
{
	return !m->threaded && mru_hit(m->cores[core].mru[0], paddr >> m->line_shift, false);
}

/* ---- consistency (cm_check) -------------------------------------------- */

static bool in_cache(struct cache *c, uint64_t line)
{
	return cache_find(c, line) != NULL;
}

/* Each mark is for caches that do not hold the line and whose shadows do
 * (struct stolen), so that the table cannot fill. */
static const char *check_marks(struct core *c)
{
	const struct stolen_table *t = &c->stolen;
	uint32_t used = 0;

	for (uint32_t i = 0; i <= t->mask; i++) {
		const struct stolen *s = &t->slots[i];

		if (!s->tag)
			continue;
		used++;
		if (!s->caches)
			return "a stolen mark for no cache";
		for (int k = 0; k < NMARKED; k++) {
			struct cache *cache = marked_cache(c, k);

			if (!(s->caches & 1u << k))
				continue;
			if (in_cache(cache, s->tag - 1))
				return "a line is marked stolen from a cache that holds it";
			if (!shadow_holds(&cache->shadow, s->tag - 1))
				return "a line is marked stolen from a cache whose shadow has let it go";
		}
	}
	if (used != t->used || used > t->most)
		return "a core's stolen marks are not the number counted, or more than its shadows' lines";
	return NULL;
}

static const char *check_core(struct cm_model *m, uint32_t i)
{
	struct core *c = &m->cores[i];
	struct cache *l1s[2] = { &c->l1i, &c->l1d };
	const char *e;

	if ((e = check_marks(c)))
		return e;

	for (int k = 0; k < 2; k++) {
		struct cache *l1 = l1s[k];

		for (uint32_t w = 0; w < l1->sets * l1->assoc; w++)
			if (l1->ways[w].tag && !in_cache(&c->l2, l1->ways[w].tag - 1))
				return "a line in an L1 is not in its core's L2";
		if (c->mru[k] && !in_cache(l1, (c->mru[k] >> 1) - 1))
			return "a core's MRU line is not in its L1";
	}
	if ((c->mru[1] & 1) && cache_find(&c->l2, (c->mru[1] >> 1) - 1)->state != MODIFIED)
		return "a core's MRU data line is marked Modified but is not";
	/* (The previous line may have left the L1: prev_hit checks.) */
	if ((c->prev[1] & 1) && in_cache(&c->l1d, (c->prev[1] >> 1) - 1) &&
	    cache_find(&c->l2, (c->prev[1] >> 1) - 1)->state != MODIFIED)
		return "a core's previous data line is marked Modified but is not";
	for (uint32_t w = 0; w < c->l2.sets * c->l2.assoc; w++) {
		const struct way *way = &c->l2.ways[w];
		uint64_t line = way->tag - 1;

		if (!way->tag)
			continue;
		if (way->state == INVALID)
			return "a line in an L2 has no state";
		if (m->has_l3 && m->cfg.inclusion == CM_INCLUSIVE && !in_cache(&m->l3, line))
			return "a private line is not in the inclusive L3";
		for (uint32_t j = 0; j < m->cfg.cores; j++) {
			const struct way *other = j == i ? NULL : cache_find(&m->cores[j].l2, line);

			if (other && (way->state != SHARED || other->state != SHARED))
				return way->state == MODIFIED && other->state == MODIFIED ?
					"a line is Modified in two cores" :
					"a line is Exclusive or Modified in one core and in another too";
		}
	}
	return NULL;
}

const char *cm_check(struct cm_model *m)
{
	const char *e;

	for (uint32_t i = 0; i < m->cfg.cores; i++)
		if ((e = check_core(m, i)))
			return e;
	return NULL;
}

/* ---- names and layout (cachemodel.h) ------------------------------------ */

static const char *const kind_names[CM_NKINDS] = {
	[CM_IFETCH] = "ifetch", [CM_LOAD] = "load", [CM_STORE] = "store", [CM_RMW] = "rmw",
};
static const char *const outcome_names[CM_NOUTCOMES] = {
	[CM_NOT_REACHED] = "not-reached", [CM_HIT] = "hit", [CM_COMPULSORY] = "compulsory",
	[CM_CAPACITY] = "capacity", [CM_CONFLICT] = "conflict", [CM_COHERENCE] = "coherence",
	[CM_UPGRADE] = "upgrade",
};
static const char *const source_names[CM_NSOURCES] = {
	[CM_FROM_L1] = "l1", [CM_FROM_L2] = "l2", [CM_FROM_L3] = "l3", [CM_FROM_PEER] = "peer",
	[CM_FROM_MEMORY] = "memory",
};
static const char *const inclusion_names[CM_NINCLUSIONS] = {
	[CM_NON_INCLUSIVE] = "non-inclusive", [CM_INCLUSIVE] = "inclusive",
	[CM_EXCLUSIVE] = "exclusive",
};

const char *cm_kind_name(uint32_t kind)
{
	return kind < CM_NKINDS ? kind_names[kind] : NULL;
}

const char *cm_outcome_name(uint32_t outcome)
{
	return outcome < CM_NOUTCOMES ? outcome_names[outcome] : NULL;
}

const char *cm_source_name(uint32_t source)
{
	return source < CM_NSOURCES ? source_names[source] : NULL;
}

const char *cm_inclusion_name(uint32_t inclusion)
{
	return inclusion < CM_NINCLUSIONS ? inclusion_names[inclusion] : NULL;
}

#define MEMBER(type, member) \
	{ #type, #member, offsetof(struct type, member), sizeof(((struct type *)0)->member) }
#define SIZE(type) { #type, "", 0, sizeof(struct type) }

const struct cm_member *cm_layout(void)
{
	static const struct cm_member layout[] = {
		SIZE(cm_cache_config),
		MEMBER(cm_cache_config, size_bytes),
		MEMBER(cm_cache_config, assoc),
		MEMBER(cm_cache_config, latency),
		SIZE(cm_config),
		MEMBER(cm_config, cores),
		MEMBER(cm_config, line_bytes),
		MEMBER(cm_config, l1i),
		MEMBER(cm_config, l1d),
		MEMBER(cm_config, l2),
		MEMBER(cm_config, l3),
		MEMBER(cm_config, inclusion),
		MEMBER(cm_config, memory_latency),
		MEMBER(cm_config, peer_latency),
		MEMBER(cm_config, store_buffer_entries),
		MEMBER(cm_config, store_buffer_window),
		SIZE(cm_result),
		MEMBER(cm_result, l1),
		MEMBER(cm_result, l2),
		MEMBER(cm_result, l3),
		MEMBER(cm_result, source),
		MEMBER(cm_result, partial_write),
		MEMBER(cm_result, stolen_by),
		MEMBER(cm_result, cycles),
		MEMBER(cm_result, stolen_by_pc),
		MEMBER(cm_result, store_pc),
		{ NULL, NULL, 0, 0 },
	};

	return layout;
}
