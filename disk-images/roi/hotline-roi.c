// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hotline-roi: mark the region of interest from inside the guest.
 *
 *   hotline-roi begin|end|reset|dump|exit
 *
 * Under gem5 (kernel command line has hotline.markers=m5) each command is a
 * gem5 m5op: the two bytes 0F 04 followed by a 16-bit function number, with
 * arguments in rdi and rsi (all zero here: act now, work id 0, thread 0).
 *
 * Anywhere else it is a multi-byte NOP, `nopl disp32(%rax,%rax,1)` encoded as
 * 0F 1F 84 00 followed by the 32-bit displacement 0x686c00NN ('h','l' in the
 * high bytes, NN the operation).  Any x86 executes it as a NOP; the QEMU
 * cache-model plugin recognises the bytes when it translates the block.
 */
#include <stdio.h>
#include <string.h>

enum roi_op { ROI_BEGIN = 1, ROI_END = 2, ROI_RESET = 3, ROI_DUMP = 4, ROI_EXIT = 5 };

#define NOP_MARKER(op) \
	asm volatile(".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x686c0000 + " #op ::: "memory")
#define M5OP(func) \
	asm volatile(".byte 0x0f, 0x04\n\t.word " #func :: "D"(0UL), "S"(0UL) : "rax", "memory")

static int under_gem5(void)
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

static void mark(enum roi_op op, int m5)
{
	/* Each case spells its constant out: the assembler needs literals. */
	switch (op) {
	case ROI_BEGIN: if (m5) M5OP(0x5a); else NOP_MARKER(1); break;
	case ROI_END:   if (m5) M5OP(0x5b); else NOP_MARKER(2); break;
	case ROI_RESET: if (m5) M5OP(0x40); else NOP_MARKER(3); break;
	case ROI_DUMP:  if (m5) M5OP(0x41); else NOP_MARKER(4); break;
	case ROI_EXIT:  if (m5) M5OP(0x21); else NOP_MARKER(5); break;
	}
}

int main(int argc, char **argv)
{
	static const char *const names[] = { [ROI_BEGIN] = "begin", [ROI_END] = "end",
		[ROI_RESET] = "reset", [ROI_DUMP] = "dump", [ROI_EXIT] = "exit" };

	for (int op = ROI_BEGIN; argc == 2 && op <= ROI_EXIT; op++) {
		if (strcmp(argv[1], names[op]) == 0) {
			mark(op, under_gem5());
			return 0;
		}
	}
	fprintf(stderr, "usage: hotline-roi begin|end|reset|dump|exit\n");
	return 2;
}
