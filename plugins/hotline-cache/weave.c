/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Over 500 lines: the hold (the vCPU thread's side) and the weave (the
 * model's side) share one private layout of a window's events, their waits
 * and the words table, which a split would have to put in a header.
 *
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
 *
 * Two sides, two threads with model_thread=on (the default): the hold
 * (weave_block, weave_access, and the words' table that finds what an access
 * waits for) runs in QEMU's callbacks on the vCPU thread; the weave
 * (weave_window: the order, and the model's calls) on the model thread
 * (model-thread.c), one window behind.  Each window's held events are a
 * slot of a ring of MODEL_WINDOWS: the hold fills one while the model thread
 * weaves the ones handed before it, each in the order they were held, so
 * the model sees exactly the calls that weaving on the vCPU thread makes
 * (model_thread=off: the hold and the weave on the vCPU thread, one window
 * at a time), and the counts are the same, byte for byte.  What
 * each side owns: the hold, the slot it fills (`held`), the words' table
 * and the window's deadlines; the weave, the slots handed and not yet
 * consumed, and everything the model and the accounting count (account.c,
 * records.c's counts).  The rest the weave reads never changes while a
 * window is in flight (a block's record, an instruction's pc), or is taken
 * at the hold (whether an instruction is locked: EV_LOCKED, as translated
 * when it ran).  weave_flush waits for the model thread to consume
 * everything handed: the markers and the report at exit read and reset the
 * counts only after it.  When the ring is full the hold waits (the guest
 * pauses) until the model thread frees the oldest slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "fail.h"
#include "hotline-cache.h"
#include "model-thread.h"
#include "options.h"
#include "quantum.h"
#include "trace.h"
#include "weave.h"

static int weaving;			/* weave_install was called */
static int on_model_thread;		/* model_thread=on: the weave on the model thread */
static uint32_t cores;			/* cpus= */

#define WINDOW_EVENTS (1u << 20)

/* model_thread=on: the windows held or handed at once.  Each slot keeps the
 * arrays its windows grew to (some 1 MB at the default quantum). */
#define MODEL_WINDOWS 4

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
#define EV_REPEAT 64u		/* the core's last block ran again before this access */
#define EV_LOCKED 128u		/* the access's instruction was locked (struct insn's locked) */
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

/*
 * Per core, a window's events.  A block that runs again right after
 * itself (a `rep stosb` or `rep movsb` runs one byte a block, two thirds of
 * the blocks of a default-scale fork storm) is held as a flag on the access
 * after it (EV_REPEAT), not as an event of its own: 29% fewer events to
 * write and read back (bench/README.md).  repeat: such a block is held for
 * the access to come.
 */
static struct held {
	struct event *e;
	size_t n, cap;
	struct dep *d;
	size_t nd, dcap, dnext;	/* dnext: the first dep of an event not yet handed on */
	const struct block *last;	/* the last block held */
	int repeat;
	size_t folded;		/* repeated blocks held as EV_REPEAT this window */
} *windows,			/* per slot of the ring (model_thread=on, else one), per core */
  *held;			/* the hold's: the slot being filled, per core */

/*
 * The window's words: per 8-byte word touched, its last write (core, held
 * index) and the reads of each core since that write (the last one's held
 * index + 1; 0: none).  The table holds groups of the eight words of 64
 * bytes of memory side by side, open-addressed by the group's address:
 * most accesses touch the word after the last one (a page cleared or
 * copied byte by byte), and when each word had a slot of its own, hashed,
 * every eighth access of a page copy missed the host's caches on a new
 * slot (word_of: 8% of a default-scale fork storm, bench/README.md).  A
 * group carries its window's number (window); older ones count as empty,
 * and a word's state counts only once its bit in valid is set this window.
 */
#define GROUP_WORDS 8

struct group {
	uint64_t addr;		/* the words' address >> 3 (the first word's) */
	uint32_t window;
	uint32_t valid;		/* word i's state is this window's: bit i */
	/* then GROUP_WORDS of struct word, word_bytes each */
};

struct word {
	uint32_t writer, write_idx;	/* writer == cores: none */
	uint32_t reads;			/* read[] has a read: a store need not look */
	uint32_t read[];		/* per core */
};
static unsigned char *groups;
static size_t word_bytes, group_bytes;
static uint64_t groups_mask, ngroups;
static uint32_t window = 1;

/* Per core, the group of the word it touched last, in this window: most
 * accesses touch that word or its neighbour (a stack slot, a field read
 * and then written, a page cleared byte by byte). */
static struct last_group {
	uint64_t addr, slot;
	uint32_t window;
} *last_group;

static uint64_t window_deadlines;	/* the deadline count the window began at */

static __attribute__((noinline)) void *grow(void *array, size_t *cap, size_t size, size_t at_least)
{
	size_t n = *cap ? *cap : 4096;

	while (n < at_least)
		n *= 2;
	if (n == *cap)
		return array;
	array = checked(realloc(array, n * size), "the woven window", n * size);
	*cap = n;
	return array;
}

static inline struct group *slot(uint64_t i)
{
	return (struct group *)(groups + (i & groups_mask) * group_bytes);
}

static void groups_alloc(uint64_t slots)
{
	/* Host-line aligned, so that a group's header and first words share one. */
	groups = checked(aligned_alloc(64, slots * group_bytes), "the woven window",
			 slots * group_bytes);
	memset(groups, 0, slots * group_bytes);
	groups_mask = slots - 1;
	ngroups = 0;
}

static void weave_slot(uint32_t slot);

void weave_install(void)
{
	uint32_t slots;

	cores = options()->cache.cores;
	on_model_thread = options()->model_thread;
	slots = on_model_thread ? MODEL_WINDOWS : 1;
	windows = checked(calloc((size_t)slots * cores, sizeof(*windows)), "the woven window",
			  (size_t)slots * cores * sizeof(*windows));
	held = windows;
	if (on_model_thread)
		model_thread_install(slots, weave_slot);
	last_group = checked(calloc(cores, sizeof(*last_group)), "the woven window",
			     cores * sizeof(*last_group));
	word_bytes = sizeof(struct word) + cores * sizeof(uint32_t);
	group_bytes = (sizeof(struct group) + GROUP_WORDS * word_bytes + 63) & ~(size_t)63;
	groups_alloc(1u << 12);
	weaving = 1;
}

static uint64_t group_of(uint64_t addr);

/* Twice the slots, the window's groups moved over. */
static __attribute__((noinline)) void groups_grow(void)
{
	unsigned char *old = groups;
	uint64_t slots = groups_mask + 1;

	groups_alloc(2 * slots);
	for (uint64_t i = 0; i < slots; i++) {
		struct group *g = (struct group *)(old + i * group_bytes);

		if (g->window == window)
			memcpy(slot(group_of(g->addr)), g, group_bytes);
	}
	free(old);
	for (uint32_t c = 0; c < cores; c++)
		last_group[c].window = 0;	/* their slots moved */
}

/* The slot of the group's entry in this window, made empty if it had none. */
static uint64_t group_of(uint64_t addr)
{
	for (uint64_t i = bucket(addr, 0, 0);; i++) {
		struct group *g = slot(i);

		if (g->window != window) {
			if (4 * (ngroups + 1) > 3 * (groups_mask + 1)) {
				groups_grow();
				return group_of(addr);
			}
			ngroups++;
			g->addr = addr;
			g->window = window;
			g->valid = 0;
			return i & groups_mask;
		}
		if (g->addr == addr)
			return i & groups_mask;
	}
}

/* The state of word i of the group, made empty if it had none this window. */
static inline struct word *word_in(struct group *g, uint32_t i)
{
	struct word *w = (struct word *)((unsigned char *)(g + 1) + i * word_bytes);

	if (!(g->valid & 1u << i)) {
		g->valid |= 1u << i;
		memset(w, 0, word_bytes);
		w->writer = cores;
	}
	return w;
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
	uint64_t addr = paddr >> 3 & ~(uint64_t)(GROUP_WORDS - 1);
	struct last_group *last = &last_group[core];
	struct held *h = &held[core];
	size_t before = h->nd;
	struct word *w;
	uint32_t *read;

	if (last->window != window || last->addr != addr)
		*last = (struct last_group){ addr, group_of(addr), window };
	w = word_in(slot(last->slot), paddr >> 3 & (GROUP_WORDS - 1));
	read = w->read;

	if (w->writer != cores && w->writer != core)
		add_dep(h, idx, w->writer, w->write_idx);
	if (store) {
		for (uint32_t c = 0; w->reads && c < cores; c++) {
			if (!read[c])
				continue;
			if (c != core)
				add_dep(h, idx, c, read[c] - 1);
			read[c] = 0;
		}
		w->reads = 0;
		w->writer = core;
		w->write_idx = idx;
	} else {
		read[core] = idx + 1;
		w->reads = 1;
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

/* ---- the weave: a window's held events (win, per core) to the model, on
 * the model thread with model_thread=on ---- */

/* Whether the accesses that core's held event i waits for have reached
 * the model, the others having handed theirs up to next[].  Most events
 * wait for nothing and never come here: out of line. */
static __attribute__((noinline)) int deps_done(const struct held *h, size_t i, const size_t *next)
{
	for (size_t d = h->dnext; d < h->nd && h->d[d].event == i; d++)
		if (next[h->d[d].core] <= h->d[d].idx)
			return 0;
	return 1;
}

/* Whether the core's held event i, with these bits, starts a block not yet
 * handed on: a block, or an access after a repeated block (EV_REPEAT) that
 * has not run yet.  begun: per core, 1 + the index of the access whose
 * repeated block was handed on. */
static inline int starts_block(uint64_t bits, const size_t *begun, uint32_t core, size_t i)
{
	return (bits & EV_BLOCK) || ((bits & EV_REPEAT) && begun[core] != i + 1);
}

/* Hands the core's next block, and the accesses after it that are ready, to
 * the model; returns the instructions run (the block's).  If the core's next
 * event is an access that waited for another core's, no block: only the
 * accesses.  last: per core, the block handed on last; begun: as for
 * starts_block. */
static uint32_t deliver(struct held *win, uint32_t core, size_t *next,
		       const struct block **last, size_t *begun)
{
	struct held *h = &win[core];
	const struct event *e = h->e;
	size_t i = next[core], n = h->n;
	const struct block *b = NULL;

	if (e[i].bits & EV_BLOCK) {
		b = last[core] = e[i++].b;
	} else if ((e[i].bits & EV_REPEAT) && begun[core] != i + 1) {
		b = last[core];
		begun[core] = i + 1;
	}
	if (b)
		block_executed(core, b);
	/* Up to the next block (the first access may be the one whose repeated
	 * block was just handed on) or an access not ready; most accesses are
	 * neither, and take one test. */
	for (; i < n; i++) {
		uint64_t bits = e[i].bits;

		if (bits & (EV_BLOCK | EV_REPEAT | EV_DEPS) &&
		    (starts_block(bits, begun, core, i) ||
		     ((bits & EV_DEPS) && !deps_done(h, i, next))))
			break;
		data_access(core, e[i].n, !!(bits & EV_LOCKED), e[i].vaddr, ev_paddr(&e[i]),
			    ev_size(&e[i]), !!(bits & EV_STORE));
		if (bits & EV_DEPS)
			while (h->dnext < h->nd && h->d[h->dnext].event == i)
				h->dnext++;
	}
	next[core] = i;
	return b ? b->insns : 0;
}

/* Whether the core's next event can be handed on: a block, or an access
 * whose repeated block has not been (a block waits for nothing), or an
 * access that is ready. */
static inline int can_go(const struct held *win, uint32_t core, const size_t *next,
			 const size_t *begun)
{
	const struct held *h = &win[core];
	uint64_t bits = h->e[next[core]].bits;

	return !(bits & EV_DEPS) || starts_block(bits, begun, core, next[core]) ||
	       deps_done(h, next[core], next);
}

/* The hold: a repeated block held for an access that did not come, an
 * event after all. */
static void hold_repeat(uint32_t core)
{
	struct held *h = &held[core];

	if (h->repeat) {
		h->repeat = 0;
		*next_event(core) = (struct event){ .b = h->last, .bits = EV_BLOCK };
	}
}

/* A window's blocks and accesses (win, per core), woven; the slot emptied
 * for the hold to fill again. */
static void weave_window(struct held *win)
{
	size_t next[cores], begun[cores], n[cores];
	uint64_t ran[cores];
	const struct block *last[cores];

	for (uint32_t c = 0; c < cores; c++) {
		n[c] = win[c].n;	/* a copy the model's calls cannot change */
		next[c] = ran[c] = begun[c] = 0;
		last[c] = NULL;
	}
	for (;;) {
		uint32_t core = cores;

		for (uint32_t c = 0; c < cores; c++)
			if (next[c] < n[c] && (core == cores || ran[c] < ran[core]) &&
			    can_go(win, c, next, begun))
				core = c;
		if (core == cores) {
			for (uint32_t c = 0; c < cores; c++)
				if (next[c] < n[c]) {	/* QEMU's first access not yet woven is ready */
					fprintf(stderr, "hotline-cache: the weave found no core ready (a bug)\n");
					abort();
				}
			break;
		}
		ran[core] += deliver(win, core, next, last, begun);
	}
	for (uint32_t c = 0; c < cores; c++) {
		win[c].n = win[c].nd = win[c].dnext = win[c].folded = 0;
		win[c].last = NULL;
	}
}

/* model_thread=on, on the model thread: the slot handed. */
static void weave_slot(uint32_t slot)
{
	weave_window(&windows[(size_t)slot * cores]);
}

/* The hold: the window ends.  What it held is woven, here or on the model
 * thread (then the hold goes on in the ring's next slot, once it is free:
 * the guest waits for it), and the words' table starts again. */
static void window_end(void)
{
	int any = 0;

	/* The recorder writes what was held, and 'D' where it is woven. */
	TRACE('D', 0, 0, 0, 0, 0, 0, 0);
	for (uint32_t c = 0; c < cores; c++) {
		hold_repeat(c);
		any |= held[c].n != 0;
	}
	if (!on_model_thread)
		weave_window(held);
	else if (any)
		held = &windows[(size_t)model_thread_hand() * cores];
	ngroups = 0;
	if (!++window) {	/* after 2^32 windows: no slot may look current */
		memset(groups, 0, (groups_mask + 1) * group_bytes);
		window = 1;
	}
}

void weave_flush(void)
{
	if (!weaving)
		return;
	window_end();
	if (on_model_thread)
		model_thread_wait();
}

void weave_end(void)
{
	if (weaving && on_model_thread)
		model_thread_end();
}

/* The window ends at each deadline of the timer; the vCPU thread sees it at
 * the first block after it (the timer may run on another thread). */
static void window_check(uint32_t core)
{
	uint64_t now = deadlines();

	const struct held *h = &held[core];

	/* (The events as QEMU gave them, so that where a window is cut does
	 * not depend on how they are held.) */
	if (now != window_deadlines || h->n + h->folded + h->repeat >= WINDOW_EVENTS) {
		window_end();
		window_deadlines = now;
	}
}

void weave_block(uint32_t core, const struct block *b)
{
	struct held *h;

	window_check(core);
	h = &held[core];	/* after it: a window's end moves the hold to the ring's next slot */
	TRACE('B', core, 0, 0, b->insns, b->vaddr, b->end, 0);
	hold_repeat(core);
	if (b == h->last) {
		h->repeat = 1;
		return;
	}
	h->last = b;
	*next_event(core) = (struct event){ .b = b, .bits = EV_BLOCK };
}

void weave_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr, uint32_t size,
		  int store)
{
	struct held *h = &held[core];
	struct event *e = next_event(core);
	int locked = __atomic_load_n(&n->locked, __ATOMIC_RELAXED);

	TRACE('A', core, store, locked, size, n->pc, vaddr, paddr);
	*e = (struct event){ .n = n, .vaddr = vaddr,
			     .bits = paddr << EV_ADDR_SHIFT | (uint64_t)__builtin_ctz(size) << EV_SIZE_SHIFT |
				     (store ? EV_STORE : 0) | (h->repeat ? EV_REPEAT : 0) |
				     (locked ? EV_LOCKED : 0) };
	h->folded += h->repeat;
	h->repeat = 0;
	find_deps(e, paddr, store, core, (uint32_t)(held[core].n - 1));
}
