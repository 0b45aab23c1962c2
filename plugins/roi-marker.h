/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guest's region-of-interest marker, as disk-images/roi/hotline-roi.h
 * emits it: nopl 0x686c00NN(%rax,%rax,1), the bytes 0F 1F 84 00 NN 00 6C 68,
 * NN the operation.  Plugins recognise it when they translate a block.
 */
#ifndef HOTLINE_ROI_MARKER_H
#define HOTLINE_ROI_MARKER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { ROI_MARKER_LEN = 8, ROI_BEGIN = 1, ROI_END = 2, ROI_RESET = 3, ROI_DUMP = 4 };

/* The marker's operation, or 0 if these bytes are not a marker. */
static inline int roi_marker_op(const uint8_t *bytes, size_t len)
{
	static const uint8_t prefix[4] = { 0x0f, 0x1f, 0x84, 0x00 };

	if (len != ROI_MARKER_LEN || memcmp(bytes, prefix, 4) || bytes[5] || bytes[6] != 0x6c ||
	    bytes[7] != 0x68)
		return 0;
	return bytes[4];
}

#endif /* HOTLINE_ROI_MARKER_H */
