/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * interleave=block (with quantum=): the cores' accesses reach the model
 * interleaved block by block in the order in which CPUs running at the same
 * moment would make them, not turn by turn as QEMU ran them.
 *
 * Round-robin TCG runs one vCPU at a time, and with quantum= each for at
 * most a quantum of instructions between two deadlines of the timer
 * (quantum.c).  Every vCPU's turns between two deadlines cover the same
 * stretch of the guest's time: on hardware they would have run at once.
 * So this file holds each core's blocks and accesses from one deadline to
 * the next (a window) and then hands them to the model (block_executed,
 * data_access) woven: the next block is always that of the core that has
 * run the fewest instructions in the window so far (the lowest-numbered
 * core on a tie), with the accesses that follow it.  One instruction is one
 * unit of time, as in QEMU's icount with shift=0; a core that ran nothing
 * in the window (halted) weaves nothing.
 *
 * The weave keeps what the guest saw.  The guest's values come from QEMU's
 * order, so two accesses of different cores to the same 8-byte word, one of
 * them a write, reach the model in QEMU's order: a read after the write
 * whose value it read, a write after the reads that read the value before
 * it and after the write before it.  A core whose next access would come
 * before such an access of another core waits, and the core that has run
 * the fewest instructions among those that need not wait goes on.  So a
 * ping-pong's handoffs, or a lock's, stay one miss each (the reader waits
 * for the write it saw), while two CPUs writing different words of one line
 * (false sharing) interleave freely.  The access that QEMU made first of all
 * those not yet woven never waits, so the weave always goes on.
 *
 * This is the bound-weave split of ZSim (Sanchez and Kozyrakis, ISCA 2013):
 * QEMU runs the cores in turn (the bound phase), the model sees them
 * interleaved (the weave).  What it cannot give is the guest's behaviour
 * under that interleaving: a CPU that spins, spins for its whole turn, as it
 * does without the weave (docs/interleaving.md).  The result depends on
 * the deadlines only, which depend on virtual time only: reruns stay
 * bit-identical.
 *
 * A window is woven early when one core has held WINDOW_EVENTS events (a
 * vCPU alone runs up to quantum x cpus instructions in a window; this caps
 * the memory a long quantum takes), and at every marker and at exit, so that
 * a region's counts hold exactly the region's accesses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotline-cache.h"

int weave_blocks;			/* interleave=block */

#define WINDOW_EVENTS (1u << 20)

/*
 * A block or an access, as on_block and on_access saw it, in 24 bytes: a
 * window holds tens of thousands a core, and at 40 bytes they took the
 * host's caches from the model (bench/README.md, "The cost of the weave").
 * bits: the access's physical address above EV_ADDR_SHIFT, then its size's
 * log2 and the flags below.
 */
struct event {
	union {
		const struct block *b;
		struct insn *n;
	};
	uint64_t vaddr;
	uint64_t bits;
};

#define EV_BLOCK 1u
#define EV_STORE 2u
#define EV_DEPS 4u		/* waits for accesses of other cores (struct dep) */
#define EV_SIZE_SHIFT 3		/* 3 bits: log2 of the size, up to 128 bytes */
#define EV_ADDR_SHIFT 8		/* physical addresses have at most 52 bits */

static inline uint64_t ev_paddr(const struct event *e)
{
	return e->bits >> EV_ADDR_SHIFT;
}

static inline uint32_t ev_size(const struct event *e)
{
	return 1u << (e->bits >> EV_SIZE_SHIFT & 7);
}

/* An access of another core that the core's held event `event` waits
 * for: that core's held event idx.  A core's deps are in the order of
 * their events. */
struct dep {
	uint32_t event, core, idx;
};

static struct held {
	struct event *e;
	size_t n, cap;
	struct dep *d;
	size_t nd, dcap, dnext;	/* dnext: the first dep of an event not yet handed on */
} *held;				/* per core */

/*
 * The window's words: per 8-byte word touched, its last write (core, held
 * index) and the reads of each core since that write (the last one's held
 * index + 1; 0: none), open-addressed by the word's address, each slot one
 * struct word and its cores' reads side by side (word_bytes), so that an
 * access touches one host line where it can.  A window's words carry its
 * number (window); older ones count as empty.
 */
struct word {
	uint64_t addr;
	uint32_t window;
	uint32_t writer, write_idx;	/* writer == cores: none */
	uint32_t read[];		/* per core */
};
static unsigned char *words;
static size_t word_bytes;
static uint64_t words_mask, nwords;
static uint32_t window = 1;

/* Per core, the slot of the word it touched last, in this window: most
 * accesses touch the word of the access before them (a stack slot, a
 * field read and then written). */
static struct last_word {
	uint64_t addr, slot;
	uint32_t window;
} *last_word;

static uint64_t window_deadlines;	/* the deadline count the window began at */

/* The weave cannot go on without its memory: the run stops, saying why. */
static void *checked(void *p)
{
	if (!p) {
		fprintf(stderr, "hotline-cache: out of memory for the woven window\n");
		abort();
	}
	return p;
}

static __attribute__((noinline)) void *grow(void *array, size_t *cap, size_t size, size_t at_least)
{
	size_t n = *cap ? *cap : 4096;

	while (n < at_least)
		n *= 2;
	if (n == *cap)
		return array;
	array = checked(realloc(array, n * size));
	*cap = n;
	return array;
}

static inline struct word *slot(uint64_t i)
{
	return (struct word *)(words + (i & words_mask) * word_bytes);
}

static void words_alloc(uint64_t slots)
{
	words = checked(calloc(slots, word_bytes));
	words_mask = slots - 1;
	nwords = 0;
}

void weave_install(void)
{
	held = calloc(config.cores, sizeof(*held));
	last_word = calloc(config.cores, sizeof(*last_word));
	word_bytes = (sizeof(struct word) + config.cores * sizeof(uint32_t) + 7) & ~(size_t)7;
	words_alloc(1u << 15);
}

static uint64_t word_of(uint64_t addr);

/* Twice the slots, the window's words moved over. */
static void words_grow(void)
{
	unsigned char *old = words;
	uint64_t slots = words_mask + 1;

	words_alloc(2 * slots);
	for (uint64_t i = 0; i < slots; i++) {
		struct word *w = (struct word *)(old + i * word_bytes);

		if (w->window == window)
			memcpy(slot(word_of(w->addr)), w, word_bytes);
	}
	free(old);
	for (uint32_t c = 0; c < config.cores; c++)
		last_word[c].window = 0;	/* their slots moved */
}

/* The slot of the word's entry in this window, made empty if it had none. */
static uint64_t word_of(uint64_t addr)
{
	for (uint64_t i = bucket(addr, 0, 0);; i++) {
		struct word *w = slot(i);

		if (w->window != window) {
			if (4 * (nwords + 1) > 3 * (words_mask + 1)) {
				words_grow();
				return word_of(addr);
			}
			nwords++;
			memset(w, 0, word_bytes);
			w->addr = addr;
			w->window = window;
			w->writer = config.cores;
			return i & words_mask;
		}
		if (w->addr == addr)
			return i & words_mask;
	}
}

static inline void add_dep(struct held *h, uint32_t event, uint32_t core, uint32_t idx)
{
	if (__builtin_expect(h->nd == h->dcap, 0))
		h->d = grow(h->d, &h->dcap, sizeof(*h->d), h->nd + 1);
	h->d[h->nd++] = (struct dep){ event, core, idx };
}

/* What the access (core's held event idx) must wait for, and the word's
 * state after it. */
static void find_deps(struct event *e, uint64_t paddr, int store, uint32_t core, uint32_t idx)
{
	uint64_t addr = paddr >> 3;
	struct last_word *last = &last_word[core];
	struct held *h = &held[core];
	size_t before = h->nd;
	struct word *w;
	uint32_t *read;

	if (last->window != window || last->addr != addr)
		*last = (struct last_word){ addr, word_of(addr), window };
	w = slot(last->slot);
	read = w->read;

	if (w->writer != config.cores && w->writer != core)
		add_dep(h, idx, w->writer, w->write_idx);
	if (store) {
		for (uint32_t c = 0; c < config.cores; c++) {
			if (!read[c])
				continue;
			if (c != core)
				add_dep(h, idx, c, read[c] - 1);
			read[c] = 0;
		}
		w->writer = core;
		w->write_idx = idx;
	} else {
		read[core] = idx + 1;
	}
	if (h->nd != before)
		e->bits |= EV_DEPS;
}

/* Every block and access takes one: the growing is out of line. */
static inline struct event *next_event(uint32_t core)
{
	struct held *h = &held[core];

	if (__builtin_expect(h->n == h->cap, 0))
		h->e = grow(h->e, &h->cap, sizeof(*h->e), h->n + 1);
	return &h->e[h->n++];
}

/* Whether the accesses that core's held event i waits for have reached
 * the model, the others having handed theirs up to next[]. */
static int deps_done(const struct held *h, size_t i, const size_t *next)
{
	for (size_t d = h->dnext; d < h->nd && h->d[d].event == i; d++)
		if (next[h->d[d].core] <= h->d[d].idx)
			return 0;
	return 1;
}

/* Whether core's held event i may reach the model.  Most events wait for
 * nothing: that test is inline, the rest not. */
static inline int ready(uint32_t core, size_t i, const size_t *next)
{
	const struct held *h = &held[core];

	return !(h->e[i].bits & EV_DEPS) || deps_done(h, i, next);
}

/* Hands the core's next event, and the accesses after it that are ready,
 * to the model; returns the instructions run (a block's). */
static uint32_t deliver(uint32_t core, size_t *next)
{
	struct held *h = &held[core];
	size_t *i = &next[core];
	uint32_t insns = 0;

	if (h->e[*i].bits & EV_BLOCK) {
		const struct block *b = h->e[(*i)++].b;

		block_executed(core, b);
		insns = b->insns;
	}
	for (; *i < h->n && !(h->e[*i].bits & EV_BLOCK) && ready(core, *i, next); (*i)++) {
		const struct event *e = &h->e[*i];

		data_access(core, e->n, e->vaddr, ev_paddr(e), ev_size(e), !!(e->bits & EV_STORE));
		if (e->bits & EV_DEPS)
			while (h->dnext < h->nd && h->d[h->dnext].event == *i)
				h->dnext++;
	}
	return insns;
}

void weave_flush(void)
{
	uint32_t cores = config.cores;
	size_t next[cores];
	uint64_t ran[cores];

	if (!weave_blocks)
		return;
	/* The recorder writes what was held, and 'D' where it is woven. */
	TRACE('D', 0, 0, 0, 0, 0, 0, 0);
	for (uint32_t c = 0; c < cores; c++)
		next[c] = ran[c] = 0;
	for (;;) {
		uint32_t core = cores, left = 0;

		for (uint32_t c = 0; c < cores; c++) {
			if (next[c] == held[c].n)
				continue;
			left++;
			if ((core == cores || ran[c] < ran[core]) && ready(c, next[c], next))
				core = c;
		}
		if (!left)
			break;
		if (core == cores) {	/* QEMU's first access not yet woven always is ready */
			fprintf(stderr, "hotline-cache: the weave found no core ready (a bug)\n");
			abort();
		}
		ran[core] += deliver(core, next);
	}
	for (uint32_t c = 0; c < cores; c++)
		held[c].n = held[c].nd = held[c].dnext = 0;
	nwords = 0;
	if (!++window) {	/* after 2^32 windows: no slot may look current */
		memset(words, 0, (words_mask + 1) * word_bytes);
		window = 1;
	}
}

/* The window ends at each deadline of the timer; the vCPU thread sees it at
 * the first block after it (the timer may run on another thread). */
static void window_check(uint32_t core)
{
	uint64_t now = __atomic_load_n(&deadlines, __ATOMIC_RELAXED);

	if (now != window_deadlines || held[core].n >= WINDOW_EVENTS) {
		weave_flush();
		window_deadlines = now;
	}
}

void weave_block(uint32_t core, const struct block *b)
{
	window_check(core);
	TRACE('B', core, 0, 0, b->insns, b->vaddr, b->end, 0);
	*next_event(core) = (struct event){ .b = b, .bits = EV_BLOCK };
}

void weave_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr, uint32_t size,
		  int store)
{
	struct event *e = next_event(core);

	TRACE('A', core, store, n->locked, size, n->pc, vaddr, paddr);
	*e = (struct event){ .n = n, .vaddr = vaddr,
			     .bits = paddr << EV_ADDR_SHIFT | (uint64_t)__builtin_ctz(size) << EV_SIZE_SHIFT |
				     (store ? EV_STORE : 0) };
	find_deps(e, paddr, store, core, (uint32_t)(held[core].n - 1));
}
