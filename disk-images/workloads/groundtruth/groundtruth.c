// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest build of bench/groundtruth.c: the same source the host's
 * microbenchmarks run (bench/groundtruth.py), with each timed measurement
 * marked as a region of interest by hotline-roi.h, so that every pattern
 * runs natively, on gem5 and through the QEMU model from one source.  The
 * image's cache key covers the included file (disk_image.image_inputs).
 */
#define HOTLINE_ROI 1
#include "../../../bench/groundtruth.c"
