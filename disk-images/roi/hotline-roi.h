/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Region-of-interest markers for guest programs: the same instructions as
 * the hotline-roi command, for programs that mark their own regions (so that
 * set-up such as thread creation stays outside).
 *
 * Under gem5 (kernel command line has hotline.markers=m5) each mark is a gem5
 * m5op: the two bytes 0F 04 followed by a 16-bit function number, arguments
 * in rdi and rsi (all zero here: act now, work id 0, thread 0).
 *
 * Anywhere else it is a multi-byte NOP, `nopl disp32(%rax,%rax,1)` encoded as
 * 0F 1F 84 00 followed by the 32-bit displacement 0x686c00NN ('h','l' in the
 * high bytes, NN the operation).  Any x86 executes it as a NOP; the QEMU
 * plugins recognise the bytes when they translate the block.
 */
#ifndef HOTLINE_ROI_H
#define HOTLINE_ROI_H

#include <stdio.h>
#include <string.h>

enum roi_op { ROI_BEGIN = 1, ROI_END = 2, ROI_RESET = 3, ROI_DUMP = 4, ROI_EXIT = 5 };

#define ROI_NOP_MARKER(op) \
	asm volatile(".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x686c0000 + " #op ::: "memory")
#define ROI_M5OP(func) \
	asm volatile(".byte 0x0f, 0x04\n\t.word " #func :: "D"(0UL), "S"(0UL) : "rax", "memory")

static inline int roi_under_gem5(void)
{
	char cmdline[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = '\0';
		fclose(f);
	}
	return strstr(cmdline, "hotline.markers=m5") != NULL;
}

/*
 * hotline's kernels count their mechanisms' events per CPU
 * (/proc/hotline/counters, docs/kernel-counters.md) over the regions of
 * interest: "start" just before a begin mark, "stop" just after an end
 * mark, both outside the region.  A kernel without the file is fine.
 */
static inline void roi_counters(const char *word)
{
	FILE *f = fopen("/proc/hotline/counters", "w");

	if (f) {
		fputs(word, f);
		fclose(f);
	}
}

static inline void roi_mark(enum roi_op op, int m5)
{
	if (op == ROI_BEGIN)
		roi_counters("start");
	/* Each case spells its constant out: the assembler needs literals. */
	switch (op) {
	case ROI_BEGIN: if (m5) ROI_M5OP(0x5a); else ROI_NOP_MARKER(1); break;
	case ROI_END:   if (m5) ROI_M5OP(0x5b); else ROI_NOP_MARKER(2); break;
	case ROI_RESET: if (m5) ROI_M5OP(0x40); else ROI_NOP_MARKER(3); break;
	case ROI_DUMP:  if (m5) ROI_M5OP(0x41); else ROI_NOP_MARKER(4); break;
	case ROI_EXIT:  if (m5) ROI_M5OP(0x21); else ROI_NOP_MARKER(5); break;
	}
	if (op == ROI_END)
		roi_counters("stop");
}

#endif /* HOTLINE_ROI_H */
