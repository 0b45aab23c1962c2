/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's counts, written out (docs/hotline-cache-format.md): at
 * exit to OUT, and at each dump marker to OUT.dumpN.  Every write is
 * checked; a write that fails fails the run (fail_run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account.h"
#include "fail.h"
#include "hotline-cache.h"
#include "options.h"
#include "output.h"
#include "quantum.h"
#include "records.h"

#define FORMAT_VERSION 4	/* docs/hotline-cache-format.md */

/* The records, in the order they are written; the end marker counts each. */
enum record { REC_ROI, REC_INSN, REC_MISS, REC_STOLEN, REC_RAPW, REC_TURNS, NRECORDS };
static const char *const record_names[NRECORDS] = {
	[REC_ROI] = "roi", [REC_INSN] = "insn", [REC_MISS] = "miss", [REC_STOLEN] = "stolen",
	[REC_RAPW] = "rapw", [REC_TURNS] = "turns",
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
	uint32_t cores = options()->cache.cores;
	struct insn_stats sum = n->stats[kind];

	sum.l1[CM_HIT] += n->l1_hits[kind];

	for (uint32_t c = 0; n->core_stats && c < cores; c++) {
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
	for (uint32_t c = 0; n->hits && c < cores; c++)
		sum.l1[CM_HIT] += read_count(&n->hits[c].count[kind]) - n->hits[c].base[kind];
	return sum;
}

/* The counts of every access, L1 hits included. */
static struct insn_stats full_stats(const struct insn *n, enum kind kind)
{
	const struct cm_config *config = &options()->cache;
	struct insn_stats full = all_stats(n, kind);
	uint64_t hits = full.l1[CM_HIT];

	full.accesses += hits;
	full.cycles += hits * (kind == KIND_FETCH ? config->l1i.latency : config->l1d.latency);
	full.l2[CM_NOT_REACHED] += hits;
	full.l3[CM_NOT_REACHED] += hits;
	return full;
}

static void write_counters(struct output *o)
{
	uint32_t cores = options()->cache.cores;

	emit(o, "# hotline-cache %d%s\n# kinds", FORMAT_VERSION, options()->text);
	for (int k = 0; k < NKINDS; k++)
		emit(o, " %s", kind_name(k));
	emit(o, "\n# outcomes");
	for (int r = 0; r < CM_NOUTCOMES; r++)
		emit(o, " %s", cm_outcome_name(r));
	emit(o, "\n");
	for (uint32_t c = 0; c < cores; c++) {
		begin_record(o, REC_ROI);
		emit(o, "\t%u\t%" PRIu64 "\n", c, roi_instructions(c));
	}
	for (const struct insn *n = first_insn(); n; n = next_insn(n))
		for (int k = 0; k < NKINDS; k++) {
			const struct insn_stats full = full_stats(n, k), *s = &full;

			if (!s->accesses)
				continue;
			begin_record(o, REC_INSN);
			emit(o, "\t0x%" PRIx64 "\t%s\t", n->pc, kind_name(k));
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
		     PRIu64 "\n", k->cpu, k->pc, kind_name(k->kind), k->data,
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
	for (uint32_t c = 0; c < cores; c++) {
		const struct turns *t = turns_of(c);

		for (int b = 0; b < 64; b++) {
			if (!t->count[b])
				continue;
			begin_record(o, REC_TURNS);
			emit(o, "\t%u\t%d\t%" PRIu64 "\t%" PRIu64 "\n", c, b, t->count[b],
			     t->insns[b]);
		}
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

/* The marker "dump": the counts so far, to OUT.dumpN, N from 1. */
void dump_counters(void)
{
	static unsigned int dumps;
	char path[4096];
	int error;

	snprintf(path, sizeof(path), "%s.dump%u", options()->out_path, ++dumps);
	if ((error = write_file(path)))
		write_failed(path, error);
}

void write_output(void)
{
	const char *out = options()->out_path;
	int error;

	if (!failure[0] && (error = write_file(out)))
		write_failed(out, error);
}

void output_end(void)
{
	if (failure[0]) {
		remove_output(options()->out_path);	/* after a failed dump: install's empty probe */
		fail_run();
	}
}
