#!/bin/sh
# Seed 002's dump copy; the program marks its two regions of interest itself.
out=$(dumpcopy "${ARG_file_mib:?}" "${ARG_buffer_kib:?}" "${ARG_window_kib:?}" \
               "${ARG_filter:?}" "${ARG_map_whole_windows:?}" "${ARG_measure:?}") || exit 1
rm -f vmcore
echo "hotline-summary: {\"workload\":\"dumpcopy\",\"file_mib\":$ARG_file_mib,\"buffer_kib\":$ARG_buffer_kib,\"window_kib\":$ARG_window_kib,\"filter\":$ARG_filter,\"map_whole_windows\":$ARG_map_whole_windows,\"measure\":$ARG_measure,${out#\{}"
