// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hotline-roi: mark the region of interest from a guest shell script.
 *
 *   hotline-roi begin|end|reset|dump|exit
 *
 * The marks are gem5 m5ops or multi-byte NOPs; see hotline-roi.h.
 */
#include "hotline-roi.h"

int main(int argc, char **argv)
{
	static const char *const names[] = { [ROI_BEGIN] = "begin", [ROI_END] = "end",
		[ROI_RESET] = "reset", [ROI_DUMP] = "dump", [ROI_EXIT] = "exit" };

	for (int op = ROI_BEGIN; argc == 2 && op <= ROI_EXIT; op++) {
		if (strcmp(argv[1], names[op]) == 0) {
			roi_mark(op, roi_under_gem5());
			return 0;
		}
	}
	fprintf(stderr, "usage: hotline-roi begin|end|reset|dump|exit\n");
	return 2;
}
