/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache: every access of every vCPU inside the guest's regions of
 * interest, through the coherent cache model (cachemodel/), attributed to
 * the instruction that made it.
 *
 *   -plugin hotline-cache.so,out=FILE,cpus=N,line=64,l1i=SIZE:ASSOC:LATENCY,
 *           l1d=...,l2=...[,l3=...],inclusion=POLICY,memory=LATENCY,
 *           peer=LATENCY,sb=ENTRIES:WINDOW,cpu=index|guest[,cpu_number=OFFSET],
 *           vmemmap=BASE,page_size=BYTES
 *
 * cpu=index trusts QEMU's vCPU index (multi-threaded TCG, where each vCPU's
 * callbacks run on a thread of its own: see "Threads" below).  cpu=guest finds
 * the executing CPU from the guest kernel's per-CPU base (gs_base in kernel
 * mode, k_gs_base in user mode), because single-threaded round-robin TCG
 * reports the index of the vCPU that translated a block, not of the one
 * running it (docs/qemu-notes.md).  A base is mapped to a CPU number by
 * reading the kernel's per-CPU variable cpu_number (its offset in the
 * per-CPU area given as cpu_number=) the first time that CPU runs kernel code.
 * The base is read only after QEMU switched vCPUs (follow_core).
 *
 * Data accesses use the guest-physical address.  An access by a LOCK-prefixed
 * instruction, or XCHG with a memory operand, is one locked read-modify-write
 * whether QEMU reports it as one callback (multi-threaded TCG) or as a read
 * and then a write (round-robin TCG).  Instruction fetches go through the L1I
 * once per executed block, for each line the block spans: the kernel's text
 * at physical address vaddr - 0xffffffff80000000 (no KASLR), user text at its
 * virtual address (the text of one binary then shares lines across
 * processes, as it does physically).  The store buffer's instruction window
 * is counted at block granularity.
 *
 * Misses keep the data's virtual address for attribution, reduced to what
 * attribution needs so that the records stay few: a struct page (vmemmap=
 * BASE, page_size=) as the same field of the page of pfn 0, the kernel image
 * (static objects) exactly, the rest of the kernel as its line, user data
 * and instruction fetches as 0.
 *
 * Counting happens inside the regions of interest (markers begin .. end, as
 * many as the guest marks); the marker reset clears the counts, the marker
 * dump writes them to OUT.dump1, OUT.dump2, ...
 *
 * POLICY is the L3's inclusion policy by name (cm_inclusion_name).
 *
 * Output (docs/hotline-cache-format.md), written to OUT at exit, tab-separated,
 * addresses in hex, one record a line after a '#' header with the options
 * and the names of the access kinds and of the outcomes (enum cm_outcome's,
 * cm_outcome_name), so that readers spell none of them:
 *   roi CPU INSTRUCTIONS                      instructions inside the ROIs
 *   insn PC KIND BYTES ACCESSES CYCLES L1x7 L2x7 L3x7
 *                                             outcome counts (enum cm_outcome),
 *                                             the instruction's bytes as run
 *   miss CPU PC KIND DATA L1 L2 L3 COUNT CYCLES
 *                                             accesses that missed the L1,
 *                                             by their outcome at each level
 *   stolen CPU PC DATA THIEF_CPU THIEF_PC COUNT
 *                                             coherence misses and who caused them
 *   rapw CPU STORE_PC LOAD_PC COUNT           reads after partial writes
 * and last an end marker counting the records of each type: a file without
 * it was cut short.  A write that fails (a full disk) fails the run: QEMU
 * exits with status 1 after one line naming the file (see fail_run).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachemodel.h"
#include "qemu-plugin-api.h"
#include "roi-marker.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HOTLINE_QEMU_PLUGIN_API_VERSION;

/* ---- options ------------------------------------------------------------ */

static struct cm_config config = {
	.cores = 1, .line_bytes = 64, .store_buffer_entries = 32, .store_buffer_window = 64,
};
static const char *out_path;
static uint32_t line_shift;		/* log2(line_bytes) */
static int cpu_from_guest;
static uint64_t cpu_number_offset;
static uint64_t vmemmap_base;
static uint32_t page_size = 64;
static char options_text[1024];

/* ---- records ------------------------------------------------------------ */

/* The kinds of access counted, and their names in the output (its header
 * lists them: readers take them from there). */
enum kind { KIND_READ, KIND_WRITE, KIND_RMW, KIND_FETCH, NKINDS };
static const char *const kind_names[NKINDS] = {
	[KIND_READ] = "read", [KIND_WRITE] = "write", [KIND_RMW] = "rmw", [KIND_FETCH] = "fetch",
};

/*
 * Counts per (instruction, kind).  An L1 hit, most accesses, is counted
 * apart (struct insn's l1_hits, or threaded its struct core_hits): it
 * reached no other level and took the L1's latency, which full_stats adds
 * when the counts are written.
 */
struct insn_stats {
	uint64_t accesses, cycles;	/* of the accesses that missed the L1 */
	uint64_t l1[CM_NOUTCOMES], l2[CM_NOUTCOMES], l3[CM_NOUTCOMES];
	struct tuple *last_miss;	/* the miss tuple this one counted last */
};

/*
 * Threaded (cpu=index): an instruction's L1 hits by core instead of in
 * l1[CM_HIT], each core's on a cache line of its own and written only by
 * that core's thread.  The marker reset moves base up to count instead of
 * clearing count, which another thread may be adding to.
 */
struct core_hits {
	_Alignas(64) uint64_t count[NKINDS], base[NKINDS];
};

/*
 * One per instruction address, shared by every translation of it.  What an
 * access that hits the L1 reads and writes is in the first cache line (the
 * struct is aligned to one): at default scale the fork storm runs some 60,000
 * instructions whose records outgrow the host's caches, and when an access
 * touched three lines of its instruction's record, the load of the per-core
 * pointer alone, on a line of its own, took 7% of the run (perf,
 * bench/README.md).
 */
struct insn {
	_Alignas(64) uint64_t pc;
	int locked;		/* read without records_lock: atomically */
	uint8_t len;
	/* Threaded, per core: the L1 hits, and the rest of the counts, made
	 * by the core's thread at its first miss here (under its tally's lock;
	 * stats_of). */
	struct core_hits *hits;
	struct insn_stats (**core_stats)[NKINDS];
	uint64_t l1_hits[NKINDS];	/* unthreaded */
	/* the first cache line ends here */
	struct insn *next;
	uint8_t bytes[16];	/* as executed: alternatives and paravirt patch the text */
	struct insn_stats stats[NKINDS];	/* unthreaded */
};
_Static_assert(offsetof(struct insn, next) == 64, "an L1 hit's fields fill one cache line");

/* One per translated block (start, end), for the fetches and the CPU. */
struct block {
	uint64_t vaddr, end;
	uint32_t insns;
	struct insn *first;
	struct block *next;
};

/*
 * Counted tuples: misses, coherence misses and reads after partial writes.
 * A tuple's key holds its record's fields by name; those a record does not
 * use stay 0:
 *   miss    cpu, pc, kind, data, outcome (at L1, L2, L3; enum cm_outcome)
 *   stolen  cpu, pc, data, other_cpu (the thief), other_pc (its instruction)
 *   rapw    cpu, pc (the load), other_pc (the store)
 */
struct key {
	uint64_t pc, data, other_pc;
	uint16_t cpu, other_cpu;	/* cm_config_error: at most 256 cores */
	uint8_t kind, outcome[3];
};
_Static_assert(sizeof(struct key) == 4 * sizeof(uint64_t),
	       "struct key has no padding: keys are hashed and compared as four words");

struct tuple {
	struct key key;
	uint64_t count, cycles;
	struct tuple *next;
};

#define BUCKETS (1u << 20)	/* a fork storm has some 10^5 instructions and blocks */
#define TUPLE_BUCKETS (1u << 16)	/* at first: a table doubles as it fills */
static struct insn *insns[BUCKETS];
static struct block *blocks[BUCKETS];

/* A hash of up to three words, 48 bits: a bucket of a table of 2^48 or fewer
 * (the tuple tables grow past 2^24 buckets at the seeds' scale). */
static uint64_t bucket(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull) ^ c;

	h ^= h >> 29;
	return h * 0x94d049bb133111ebull >> 16;
}

/*
 * The counted tuples.  Threaded, each core has a tally of its own: every
 * tuple a core counts has that core in its key (cpu), so the tallies are
 * disjoint, and a core's thread changes only its own, under the tally's
 * lock, which no other thread takes but to reset, dump or report.
 * Unthreaded there is one tally.
 */
struct tally {
	pthread_mutex_t lock;
	struct table {
		struct tuple **buckets;
		uint64_t mask;		/* buckets - 1 */
		uint64_t tuples;
	} misses, stolen, rapw;
};

static struct tally *tallies;
static uint32_t ntallies;		/* threaded: the cores; else 1 */

/* Every tuple of one table (misses, stolen, rapw), tally by tally, each in
 * bucket order. */
#define FOR_EACH_TUPLE(t, table)						\
	for (uint32_t set_ = 0; set_ < ntallies; set_++)			\
		for (uint64_t i_ = 0; i_ <= tallies[set_].table.mask; i_++)	\
			for (struct tuple *t = tallies[set_].table.buckets[i_]; t; t = t->next)

static void table_init(struct table *t)
{
	*t = (struct table){ calloc(TUPLE_BUCKETS, sizeof(*t->buckets)), TUPLE_BUCKETS - 1, 0 };
}

static void tally_init(struct tally *t)
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

static struct tuple *count_tuple(struct table *table, const struct key *key, uint64_t cycles)
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

/* ---- state -------------------------------------------------------------- */

/*
 * Threads.  Round-robin TCG (cpu=guest) runs every callback on one thread:
 * nothing here takes a lock (uncontended locking cost about a tenth of the
 * plugin's time).  Multi-threaded TCG (cpu=index) runs each vCPU's
 * callbacks on a thread of its own, so that the plugin gains with host
 * cores:
 *   - the model is threaded (cm_set_threaded): an access that hits its
 *     core's L1 takes no lock, any other takes the model's;
 *   - what one core counts on every access (struct vcpu, struct core_hits)
 *     is that core's own, written only by its thread;
 *   - what it counts after an L1 miss or a read after a partial write (its
 *     tally, its struct insn_stats) is its own too, under its tally's lock;
 *   - the instructions and blocks change under records_lock (translation);
 *     the markers and the report take it and every tally's lock (lock_all).
 */
static int threaded;			/* cpu=index */
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_records(void)
{
	if (threaded)
		pthread_mutex_lock(&records_lock);
}

static void unlock_records(void)
{
	if (threaded)
		pthread_mutex_unlock(&records_lock);
}

static void lock_all(void)
{
	lock_records();
	for (uint32_t i = 0; threaded && i < ntallies; i++)
		pthread_mutex_lock(&tallies[i].lock);
}

static void unlock_all(void)
{
	for (uint32_t i = ntallies; threaded && i-- > 0;)
		pthread_mutex_unlock(&tallies[i].lock);
	unlock_records();
}

/* The tally of a core's tuples. */
static struct tally *tally_of(uint32_t core)
{
	return threaded ? &tallies[core] : &tallies[0];
}

/* A count that one thread adds to and others may read (threaded). */
static void add_count(uint64_t *count, uint64_t n)
{
	__atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static uint64_t read_count(const uint64_t *count)
{
	return __atomic_load_n(count, __ATOMIC_RELAXED);
}

/* Per core, on a cache line of its own; written only by that core's thread
 * but for roi_base (the marker reset, under lock_all). */
struct vcpu {
	_Alignas(64) uint64_t icount;	/* in executed blocks' instructions */
	uint64_t roi_icount;		/* the part of it inside ROIs */
	uint64_t roi_base;		/* roi_icount at the last reset */
	struct insn *pending_rmw;	/* read of a locked RMW seen, write to come */
};

static struct cm_model *model;
static int in_roi;			/* read without records_lock: atomically */
static struct vcpu *vcpus;

/* cpu=guest: the CPU running now, and the CPU of each per-CPU base. */
#define MAX_BASES 256
static uint32_t current_core;
static uint64_t bases[MAX_BASES];
static uint32_t base_core[MAX_BASES];
static uint32_t nbases;
static struct qemu_plugin_register *reg_gs, *reg_kgs;
static GByteArray *reg_buf;

#define KERNEL_START 0xffff800000000000ull
#define KERNEL_TEXT_MAP 0xffffffff80000000ull
#define VMEMMAP_BYTES (1ull << 40)	/* the vmemmap region, 4-level paging */

/* ---- report ------------------------------------------------------------- */

#define FORMAT_VERSION 3	/* docs/hotline-cache-format.md */

/* The records, in the order they are written; the end marker counts each. */
enum record { REC_ROI, REC_INSN, REC_MISS, REC_STOLEN, REC_RAPW, NRECORDS };
static const char *const record_names[NRECORDS] = {
	[REC_ROI] = "roi", [REC_INSN] = "insn", [REC_MISS] = "miss", [REC_STOLEN] = "stolen",
	[REC_RAPW] = "rapw",
};

/*
 * An output being written.  Every write is checked: the first failure's
 * errno is kept and the writes after it are skipped (a full disk stays
 * full), so one test at the end covers them all.
 */
struct output {
	FILE *f;
	int error;
	uint64_t records[NRECORDS];
};

static void __attribute__((format(printf, 2, 3))) emit(struct output *o, const char *format, ...)
{
	va_list args;

	if (o->error)
		return;
	va_start(args, format);
	if (vfprintf(o->f, format, args) < 0)
		o->error = errno ? errno : EIO;
	va_end(args);
}

/* A record's first field, its name; the caller writes the rest of the line. */
static void begin_record(struct output *o, enum record r)
{
	o->records[r]++;
	emit(o, "%s", record_names[r]);
}

/* An instruction's counts of one kind (under lock_all): threaded, the sum of
 * its cores', and its cores' L1 hits. */
static struct insn_stats all_stats(const struct insn *n, enum kind kind)
{
	struct insn_stats sum = n->stats[kind];

	sum.l1[CM_HIT] += n->l1_hits[kind];

	for (uint32_t c = 0; n->core_stats && c < config.cores; c++) {
		const struct insn_stats *s = n->core_stats[c] ? &(*n->core_stats[c])[kind] : NULL;

		for (int o = 0; s && o < CM_NOUTCOMES; o++) {
			sum.l1[o] += s->l1[o];
			sum.l2[o] += s->l2[o];
			sum.l3[o] += s->l3[o];
		}
		if (s) {
			sum.accesses += s->accesses;
			sum.cycles += s->cycles;
		}
	}
	for (uint32_t c = 0; n->hits && c < config.cores; c++)
		sum.l1[CM_HIT] += read_count(&n->hits[c].count[kind]) - n->hits[c].base[kind];
	return sum;
}

/* The counts of every access, L1 hits included. */
static struct insn_stats full_stats(const struct insn *n, enum kind kind)
{
	struct insn_stats full = all_stats(n, kind);
	uint64_t hits = full.l1[CM_HIT];

	full.accesses += hits;
	full.cycles += hits * (kind == KIND_FETCH ? config.l1i.latency : config.l1d.latency);
	full.l2[CM_NOT_REACHED] += hits;
	full.l3[CM_NOT_REACHED] += hits;
	return full;
}

static void write_counters(struct output *o)
{
	emit(o, "# hotline-cache %d%s\n# kinds", FORMAT_VERSION, options_text);
	for (int k = 0; k < NKINDS; k++)
		emit(o, " %s", kind_names[k]);
	emit(o, "\n# outcomes");
	for (int r = 0; r < CM_NOUTCOMES; r++)
		emit(o, " %s", cm_outcome_name(r));
	emit(o, "\n");
	for (uint32_t c = 0; c < config.cores; c++) {
		begin_record(o, REC_ROI);
		emit(o, "\t%u\t%" PRIu64 "\n", c,
		     read_count(&vcpus[c].roi_icount) - vcpus[c].roi_base);
	}
	for (uint32_t i = 0; i < BUCKETS; i++)
		for (struct insn *n = insns[i]; n; n = n->next)
			for (int k = 0; k < NKINDS; k++) {
				const struct insn_stats full = full_stats(n, k), *s = &full;

				if (!s->accesses)
					continue;
				begin_record(o, REC_INSN);
				emit(o, "\t0x%" PRIx64 "\t%s\t", n->pc, kind_names[k]);
				for (int b = 0; b < n->len; b++)
					emit(o, "%02x", n->bytes[b]);
				emit(o, "\t%" PRIu64 "\t%" PRIu64, s->accesses, s->cycles);
				for (int r = 0; r < CM_NOUTCOMES; r++)
					emit(o, "\t%" PRIu64, s->l1[r]);
				for (int r = 0; r < CM_NOUTCOMES; r++)
					emit(o, "\t%" PRIu64, s->l2[r]);
				for (int r = 0; r < CM_NOUTCOMES; r++)
					emit(o, "\t%" PRIu64, s->l3[r]);
				emit(o, "\n");
			}
	FOR_EACH_TUPLE(t, misses) {
		const struct key *k = &t->key;

		begin_record(o, REC_MISS);
		emit(o, "\t%u\t0x%" PRIx64 "\t%s\t0x%" PRIx64 "\t%s\t%s\t%s\t%" PRIu64 "\t%"
		     PRIu64 "\n", k->cpu, k->pc, kind_names[k->kind], k->data,
		     cm_outcome_name(k->outcome[0]), cm_outcome_name(k->outcome[1]),
		     cm_outcome_name(k->outcome[2]), t->count, t->cycles);
	}
	FOR_EACH_TUPLE(t, stolen) {
		const struct key *k = &t->key;

		begin_record(o, REC_STOLEN);
		emit(o, "\t%u\t0x%" PRIx64 "\t0x%" PRIx64 "\t%u\t0x%" PRIx64 "\t%" PRIu64 "\n",
		     k->cpu, k->pc, k->data, k->other_cpu, k->other_pc, t->count);
	}
	FOR_EACH_TUPLE(t, rapw) {
		const struct key *k = &t->key;

		begin_record(o, REC_RAPW);
		emit(o, "\t%u\t0x%" PRIx64 "\t0x%" PRIx64 "\t%" PRIu64 "\n", k->cpu,
		     k->other_pc, k->pc, t->count);
	}
	emit(o, "# end");
	for (int r = 0; r < NRECORDS; r++)
		emit(o, " %s=%" PRIu64, record_names[r], o->records[r]);
	emit(o, "\n");
}

/*
 * The counts, written to path and checked all the way down: the writes,
 * the flush of stdio's buffer, fsync (where a file system reports a failed
 * write-back; a device or pipe, which cannot be synchronised, says EINVAL)
 * and the close.  Returns 0, or the errno of the first failure.
 */
static int write_file(const char *path)
{
	struct output o = { .f = fopen(path, "w") };

	if (!o.f)
		return errno;
	write_counters(&o);
	if (!o.error && fflush(o.f))
		o.error = errno;
	if (!o.error && fsync(fileno(o.f)) && errno != EINVAL)
		o.error = errno;
	if (fclose(o.f) && !o.error)
		o.error = errno;
	return o.error;
}

/* The first write that failed, as the line that fail_run prints. */
static char failure[4096 + 256];

/* No file that could pass for a result is left: a regular file is removed
 * (never /dev/full, say, or a pipe). */
static void remove_output(const char *path)
{
	struct stat st;

	if (!stat(path, &st) && S_ISREG(st.st_mode))
		unlink(path);
}

/* A write failed: its file goes, and the first failure is kept for
 * fail_run (a dump fails while the guest runs; the run fails at exit). */
static void write_failed(const char *path, int error)
{
	remove_output(path);
	if (!failure[0])
		snprintf(failure, sizeof(failure),
			 "hotline-cache: cannot write %s: %s; its counts are lost\n", path,
			 strerror(error));
}

/*
 * A failed write fails the run.  QEMU calls the plugin's exit callback from
 * the C library's exit handlers (plugins/core.c registers it with atexit()),
 * once main has chosen the exit status, 0 after a clean shutdown; the
 * plugin API cannot change that status, and calling exit() again from an
 * exit handler is undefined behaviour.  So: one line on stderr naming the
 * file and the error (the runner quotes QEMU's last line), then _exit(1),
 * which ends the process at once with status 1.  It skips only stdio's
 * buffers, flushed here first, and the exit handlers registered before
 * QEMU's plugin core (handlers run last-registered first, so QEMU's own
 * have run).
 */
static void fail_run(void)
{
	fputs(failure, stderr);
	fflush(NULL);
	_exit(1);
}

static void table_clear(struct table *t)
{
	for (uint64_t i = 0; i <= t->mask; i++)
		free_tuples(&t->buckets[i]);
	t->tuples = 0;
}

/* The marker "reset": the counts start again (the caches keep their state). */
static void reset_counters(void)
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

/* The marker "dump": the counts so far, to OUT.dumpN, N from 1. */
static void dump_counters(void)
{
	static unsigned int dumps;
	char path[4096];
	int error;

	snprintf(path, sizeof(path), "%s.dump%u", out_path, ++dumps);
	if ((error = write_file(path)))
		write_failed(path, error);
}

/* Threaded: how many line accesses took the lock (stderr: QEMU's log). */
static void report_paths(void)
{
	uint64_t unlocked = 0, locked = 0;

	for (uint32_t c = 0; c < config.cores; c++) {
		struct cm_paths paths;

		cm_paths(model, c, &paths);
		unlocked += paths.unlocked;
		locked += paths.locked;
	}
	fprintf(stderr, "hotline-cache: threaded model: %" PRIu64 " line accesses, %" PRIu64
		" without the lock, %" PRIu64 " under it (%.2f%%)\n", unlocked + locked, unlocked,
		locked, unlocked + locked ? 100.0 * (double)locked / (double)(unlocked + locked) : 0.0);
}

static void report(qemu_plugin_id_t id, void *udata)
{
	int error;

	(void)id, (void)udata;
	lock_all();
	if (!failure[0] && (error = write_file(out_path)))
		write_failed(out_path, error);
	unlock_all();
	if (threaded)
		report_paths();
	cm_free(model);
	if (failure[0]) {
		remove_output(out_path);	/* after a failed dump: install's empty probe */
		fail_run();
	}
}

/* ---- the executing CPU (cpu=guest) -------------------------------------- */

static uint64_t read_register(struct qemu_plugin_register *reg)
{
	uint64_t value = 0;

	g_byte_array_set_size(reg_buf, 0);
	if (qemu_plugin_read_register(reg, reg_buf) >= 8)
		memcpy(&value, reg_buf->data, 8);
	return value;
}

static int core_of_base(uint64_t base, uint32_t *core)
{
	for (uint32_t i = 0; i < nbases; i++)
		if (bases[i] == base) {
			*core = base_core[i];
			return 1;
		}
	return 0;
}

/*
 * Sets current_core from the running CPU's per-CPU base; true if the base
 * named a CPU.  Otherwise current_core is left as it was: before the
 * per-CPU areas exist (early boot, outside any region), and in kernel code
 * that runs with the user's GS base (entry code before swapgs, exit code
 * after it).
 */
static int find_core(uint64_t block_vaddr)
{
	int kernel = block_vaddr >= KERNEL_START;
	uint64_t base = read_register(kernel ? reg_gs : reg_kgs);
	uint32_t number = 0;

	if (base < KERNEL_START)
		return 0;
	if (core_of_base(base, &current_core))
		return 1;
	if (!kernel || nbases == MAX_BASES)
		return 0;
	g_byte_array_set_size(reg_buf, 0);
	if (!qemu_plugin_read_memory_vaddr(base + cpu_number_offset, reg_buf, 4))
		return 0;
	memcpy(&number, reg_buf->data, 4);
	if (number >= config.cores)
		return 0;
	bases[nbases] = base;
	base_core[nbases++] = number;
	current_core = number;
	return 1;
}

/*
 * Reading a register costs more than the rest of a block's callback, so it
 * is read only when the running vCPU may have changed.  QEMU keeps the vCPU
 * it is running in its thread-local variable current_cpu (the CPUState that
 * qemu_plugin_read_register reads); Debian's QEMU exports it, though it is
 * not part of the plugin API.  Round-robin TCG runs every vCPU on one
 * thread, so its address is looked up once, on that thread.  While the same
 * vCPU runs, a block reads no register: find_core would give the core it
 * gave last (the same base, or an unusable one, which keeps the core).  After
 * a switch, blocks read the register until one settles the core, exactly
 * as every block did before.  Without the symbol every block reads it.
 */
static void *const *running_cpu;	/* &current_cpu on the vCPU thread, or NULL */
static pthread_t running_cpu_thread;
static int running_cpu_looked_up;
static const void *settled_cpu;		/* the vCPU find_core last settled on */

static void follow_core(uint64_t block_vaddr)
{
	const void *cpu = NULL;

	if (!running_cpu_looked_up) {
		running_cpu = dlsym(RTLD_DEFAULT, "current_cpu");
		running_cpu_thread = pthread_self();
		running_cpu_looked_up = 1;
	}
	if (running_cpu && pthread_equal(pthread_self(), running_cpu_thread))
		cpu = *running_cpu;
	if (cpu && cpu == settled_cpu)
		return;
	settled_cpu = find_core(block_vaddr) ? cpu : NULL;
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu_index)
{
	(void)id, (void)vcpu_index;
	if (reg_gs)
		return;
	GArray *regs = qemu_plugin_get_registers();
	qemu_plugin_reg_descriptor *d = (qemu_plugin_reg_descriptor *)regs->data;

	for (unsigned int i = 0; i < regs->len; i++) {
		if (!strcmp(d[i].name, "gs_base"))
			reg_gs = d[i].handle;
		else if (!strcmp(d[i].name, "k_gs_base"))
			reg_kgs = d[i].handle;
	}
	g_array_free(regs, 1);
	if (!reg_gs || !reg_kgs) {
		fprintf(stderr, "hotline-cache: QEMU offers no gs_base/k_gs_base register\n");
		exit(1);
	}
}

/* ---- callbacks ---------------------------------------------------------- */

/* What attribution needs of a data address (see the header comment). */
static uint64_t data_key(uint64_t vaddr, enum kind kind)
{
	if (kind == KIND_FETCH || vaddr < KERNEL_START)
		return 0;
	if (vmemmap_base && vaddr - vmemmap_base < VMEMMAP_BYTES)
		return vmemmap_base + (vaddr - vmemmap_base) % page_size;
	if (vaddr >= KERNEL_TEXT_MAP)
		return vaddr;
	return vaddr & ~(uint64_t)(config.line_bytes - 1);
}

static void account_miss(uint32_t core, uint64_t pc, uint64_t vaddr, enum kind kind,
			 struct insn *n, const struct cm_result *r);

static void account(uint32_t core, uint64_t pc, uint64_t vaddr, uint64_t paddr, uint32_t size,
		    enum kind kind, struct insn *n)
{
	static const uint32_t model_kind[] = { CM_LOAD, CM_STORE, CM_RMW, CM_IFETCH };
	struct cm_result r;

	if (cm_access(model, core, pc, paddr, size, model_kind[kind], vcpus[core].icount, &r)) {
		if (threaded)
			add_count(&n->hits[core].count[kind], 1);
		else
			n->l1_hits[kind]++;
		return;
	}
	account_miss(core, pc, vaddr, kind, n, &r);
}

/* The counts a core makes of an instruction's accesses of one kind beyond
 * its L1 hits (under its tally's lock, threaded). */
static struct insn_stats *stats_of(struct insn *n, uint32_t core, enum kind kind)
{
	if (!n->core_stats)
		return &n->stats[kind];
	if (!n->core_stats[core])
		n->core_stats[core] = calloc(1, sizeof(*n->core_stats[core]));
	return &(*n->core_stats[core])[kind];
}

/* The rest of account: an L1 miss, or a read after a partial write. */
static void account_miss(uint32_t core, uint64_t pc, uint64_t vaddr, enum kind kind,
			 struct insn *n, const struct cm_result *r)
{
	struct tally *tally = tally_of(core);
	struct insn_stats *s;

	if (threaded)
		pthread_mutex_lock(&tally->lock);
	s = stats_of(n, core, kind);
	s->l1[r->l1]++;
	if (r->l1 != CM_HIT) {
		struct key miss = { .cpu = core, .pc = pc, .kind = kind,
				    .data = data_key(vaddr, kind),
				    .outcome = { r->l1, r->l2, r->l3 } };

		s->accesses++;
		s->cycles += r->cycles;
		s->l2[r->l2]++;
		s->l3[r->l3]++;
		/* An instruction's misses often repeat its last one's tuple. */
		if (s->last_miss && !memcmp(&s->last_miss->key, &miss, sizeof(miss))) {
			s->last_miss->count++;
			s->last_miss->cycles += r->cycles;
		} else {
			s->last_miss = count_tuple(&tally->misses, &miss, r->cycles);
		}
		if (r->stolen_by >= 0) {
			struct key thief = { .cpu = core, .pc = pc, .data = miss.data,
					     .other_cpu = r->stolen_by, .other_pc = r->stolen_by_pc };

			count_tuple(&tally->stolen, &thief, 0);
		}
	}
	if (r->partial_write) {
		struct key pair = { .cpu = core, .pc = pc, .other_pc = r->store_pc };

		count_tuple(&tally->rapw, &pair, 0);
	}
	if (threaded)
		pthread_mutex_unlock(&tally->lock);
}

/*
 * What the plugin does with an executed block and with a data access once
 * it knows the executing core: everything after QEMU's part.  bench/replay.c
 * drives these two with a recorded stream (HOTLINE_CACHE_TRACE below), to
 * measure the model and the accounting without QEMU.
 */
static void block_executed(uint32_t core, const struct block *b)
{
	struct vcpu *v = &vcpus[core];

	v->icount += b->insns;
	if (__atomic_load_n(&in_roi, __ATOMIC_RELAXED)) {
		uint64_t offset = b->vaddr >= KERNEL_TEXT_MAP ? KERNEL_TEXT_MAP : 0;

		add_count(&v->roi_icount, b->insns);
		for (uint64_t line = b->vaddr >> line_shift; line <= (b->end - 1) >> line_shift;
		     line++)
			account(core, b->vaddr, line << line_shift, (line << line_shift) - offset,
				config.line_bytes, KIND_FETCH, b->first);
	}
}

static void data_access(uint32_t core, struct insn *n, uint64_t vaddr, uint64_t paddr,
			uint32_t size, int store)
{
	enum kind kind = store ? KIND_WRITE : KIND_READ;
	struct vcpu *v = &vcpus[core];

	if (__atomic_load_n(&n->locked, __ATOMIC_RELAXED)) {
		kind = KIND_RMW;
		if (!store) {
			v->pending_rmw = n;		/* round-robin: the read */
		} else if (v->pending_rmw == n) {
			v->pending_rmw = NULL;		/* round-robin: its write */
			return;
		}
	}
	account(core, n->pc, vaddr, paddr, size, kind, n);
}

/*
 * Measurement only (bench/README.md): built with -DHOTLINE_CACHE_TRACE, the
 * plugin also writes the first HOTLINE_CACHE_TRACE_MAX blocks and accesses
 * of the regions of interest, with their core, to OUT.trace as these
 * records, which bench/replay.c reads.
 */
struct trace_event {
	uint8_t type;		/* 'B' block, 'A' access */
	uint8_t core, store, locked;
	uint32_t size;		/* access: bytes; block: instructions */
	uint64_t pc;		/* block: its start */
	uint64_t vaddr;		/* block: its end */
	uint64_t paddr;
};

#ifdef HOTLINE_CACHE_TRACE
#ifndef HOTLINE_CACHE_TRACE_MAX
#define HOTLINE_CACHE_TRACE_MAX 20000000
#endif
static FILE *trace_file;
static uint64_t trace_events;

static void trace(struct trace_event e)
{
	lock_records();
	if (!trace_file) {
		char path[4096];

		snprintf(path, sizeof(path), "%s.trace", out_path);
		trace_file = fopen(path, "w");
	}
	if (trace_file && in_roi && trace_events++ < HOTLINE_CACHE_TRACE_MAX)
		fwrite(&e, sizeof(e), 1, trace_file);
	unlock_records();
}
#define TRACE(...) trace((struct trace_event){ __VA_ARGS__ })
#else
#define TRACE(...) ((void)0)
#endif

static void on_block(unsigned int vcpu_index, void *udata)
{
	struct block *b = udata;
	uint32_t core;

	/* Outside the regions of interest a block only matters while the CPUs'
	 * per-CPU bases are still being learnt: reading a register costs more
	 * than the rest of this callback. */
	if (!__atomic_load_n(&in_roi, __ATOMIC_RELAXED) &&
	    (!cpu_from_guest || nbases >= config.cores))
		return;
	if (cpu_from_guest)
		follow_core(b->vaddr);
	core = cpu_from_guest ? current_core : vcpu_index;
	if (core < config.cores) {
		TRACE('B', core, 0, 0, b->insns, b->vaddr, b->end, 0);
		block_executed(core, b);
	}
}

static void on_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		      void *udata)
{
	struct insn *n = udata;
	struct qemu_plugin_hwaddr *hw;
	uint32_t core;

	if (!__atomic_load_n(&in_roi, __ATOMIC_RELAXED))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	core = cpu_from_guest ? current_core : vcpu_index;
	if (core < config.cores) {
		uint64_t paddr = qemu_plugin_hwaddr_phys_addr(hw);
		uint32_t size = 1u << qemu_plugin_mem_size_shift(info);
		int store = qemu_plugin_mem_is_store(info);

		TRACE('A', core, store, n->locked, size, n->pc, vaddr, paddr);
		data_access(core, n, vaddr, paddr, size, store);
	}
}

static void on_marker(unsigned int vcpu_index, void *udata)
{
	int op = (int)(uintptr_t)udata;

	(void)vcpu_index;
	lock_all();
	if (op == ROI_BEGIN || op == ROI_END) {
		__atomic_store_n(&in_roi, op == ROI_BEGIN, __ATOMIC_RELAXED);
		/* Outside the regions on_block stops following the CPU: find it
		 * for the rest of this block.  Markers run in user mode. */
		if (in_roi && cpu_from_guest)
			follow_core(0);
	} else if (op == ROI_RESET) {
		reset_counters();
	} else if (op == ROI_DUMP) {
		dump_counters();
	}
	unlock_all();
}

/* ---- translation -------------------------------------------------------- */

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
static struct insn *insn_at(uint64_t pc, const uint8_t *bytes, size_t len)
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

static struct block *block_at(uint64_t vaddr, uint64_t end, uint32_t count, struct insn *first)
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

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct insn *first = NULL;
	uint64_t end = 0;

	(void)id;
	lock_records();
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
		uint8_t bytes[16];
		size_t len = qemu_plugin_insn_data(qi, bytes, sizeof(bytes));
		uint64_t pc = qemu_plugin_insn_vaddr(qi);
		struct insn *in = insn_at(pc, bytes, len);
		int op = roi_marker_op(bytes, len);

		if (!first)
			first = in;
		end = pc + qemu_plugin_insn_size(qi);
		if (op >= ROI_BEGIN && op <= ROI_DUMP)
			qemu_plugin_register_vcpu_insn_exec_cb(qi, on_marker, cpu_from_guest ?
							       QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)op);
		qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, in);
	}
	if (first)
		qemu_plugin_register_vcpu_tb_exec_cb(
			tb, on_block, cpu_from_guest ? QEMU_PLUGIN_CB_R_REGS : QEMU_PLUGIN_CB_NO_REGS,
			block_at(qemu_plugin_tb_vaddr(tb), end, (uint32_t)n, first));
	unlock_records();
}

/* ---- install ------------------------------------------------------------ */

static int parse_u32(const char *value, uint32_t *out_value)
{
	char *end;
	unsigned long v = strtoul(value, &end, 0);

	if (!*value || *end || v > UINT32_MAX)
		return 0;
	*out_value = (uint32_t)v;
	return 1;
}

static int parse_u64(const char *value, uint64_t *out_value)
{
	char *end;

	*out_value = strtoull(value, &end, 0);
	return *value && !*end;
}

static int parse_inclusion(const char *value, uint32_t *out_value)
{
	for (uint32_t i = 0; cm_inclusion_name(i); i++)
		if (!strcmp(value, cm_inclusion_name(i))) {
			*out_value = i;
			return 1;
		}
	return 0;
}

static int parse_cache(const char *value, struct cm_cache_config *c)
{
	char extra;
	unsigned int size, assoc, latency;

	if (sscanf(value, "%u:%u:%u%c", &size, &assoc, &latency, &extra) != 3)
		return 0;
	*c = (struct cm_cache_config){ size, assoc, latency };
	return 1;
}

static int parse_option(const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
	char key[32];

	if (klen >= sizeof(key))
		return 0;
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (!strcmp(key, "out"))
		return (out_path = v), *v != '\0';
	if (!strcmp(key, "cpus"))
		return parse_u32(v, &config.cores);
	if (!strcmp(key, "line"))
		return parse_u32(v, &config.line_bytes);
	if (!strcmp(key, "l1i"))
		return parse_cache(v, &config.l1i);
	if (!strcmp(key, "l1d"))
		return parse_cache(v, &config.l1d);
	if (!strcmp(key, "l2"))
		return parse_cache(v, &config.l2);
	if (!strcmp(key, "l3"))
		return parse_cache(v, &config.l3);
	if (!strcmp(key, "inclusion"))
		return parse_inclusion(v, &config.inclusion);
	if (!strcmp(key, "memory"))
		return parse_u32(v, &config.memory_latency);
	if (!strcmp(key, "peer"))
		return parse_u32(v, &config.peer_latency);
	if (!strcmp(key, "sb"))
		return sscanf(v, "%u:%u", &config.store_buffer_entries,
			      &config.store_buffer_window) == 2;
	if (!strcmp(key, "cpu")) {
		cpu_from_guest = !strcmp(v, "guest");
		return cpu_from_guest || !strcmp(v, "index");
	}
	if (!strcmp(key, "vmemmap"))
		return parse_u64(v, &vmemmap_base);
	if (!strcmp(key, "page_size"))
		return parse_u32(v, &page_size) && page_size > 0;
	if (!strcmp(key, "cpu_number"))
		return parse_u64(v, &cpu_number_offset);
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *error;

	for (int i = 0; i < argc; i++) {
		if (!parse_option(argv[i])) {
			fprintf(stderr, "hotline-cache: bad option '%s'\n", argv[i]);
			return -1;
		}
		if (strncmp(argv[i], "out=", 4) &&
		    strlen(options_text) + strlen(argv[i]) + 2 < sizeof(options_text)) {
			strcat(options_text, " ");
			strcat(options_text, argv[i]);
		}
	}
	if (!out_path || !info->system_emulation) {
		fprintf(stderr, "hotline-cache: needs out=FILE and full-system emulation\n");
		return -1;
	}
	if ((error = cm_config_error(&config))) {
		fprintf(stderr, "hotline-cache: %s\n", error);
		return -1;
	}
	if ((int)config.cores < info->system.smp_vcpus) {
		fprintf(stderr, "hotline-cache: cpus=%u but the machine has %d\n", config.cores,
			info->system.smp_vcpus);
		return -1;
	}
	/* Fail now, not after the run, if the output cannot be written. */
	FILE *probe_out = fopen(out_path, "w");

	if (!probe_out || fclose(probe_out)) {
		perror(out_path);
		return -1;
	}
	model = cm_new(&config);
	while ((1u << line_shift) < config.line_bytes)
		line_shift++;
	vcpus = aligned_alloc(_Alignof(struct vcpu), config.cores * sizeof(*vcpus));
	memset(vcpus, 0, config.cores * sizeof(*vcpus));
	threaded = !cpu_from_guest;
	if (threaded)
		cm_set_threaded(model);
	ntallies = threaded ? config.cores : 1;
	tallies = calloc(ntallies, sizeof(*tallies));
	for (uint32_t i = 0; i < ntallies; i++)
		tally_init(&tallies[i]);
	if (cpu_from_guest) {
		reg_buf = g_byte_array_new();
		qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, report, NULL);
	return 0;
}
