#!/bin/sh
# The validation microbenchmarks, one region of interest each (the program
# marks them around its measured loops).
set -e
cachebench sweep "${ARG_small_kib:?}" "${ARG_stride:?}" "${ARG_passes:?}" > sweep-small.json
cachebench sweep "${ARG_large_kib:?}" "$ARG_stride" "$ARG_passes" > sweep-large.json
cachebench pingpong "${ARG_handoffs:?}" > pingpong.json
cachebench falseshare "${ARG_iterations:?}" > falseshare.json
cachebench storeload "$ARG_iterations" > storeload.json
# The pointer chase only when asked for (chase_steps > 0): a region of its own.
chase=""
if [ "${ARG_chase_steps:?}" -gt 0 ]; then
    cachebench chase "$ARG_large_kib" "$ARG_chase_steps" > chase.json
    chase=",$(cat chase.json)"
fi
# The locked instruction after stores, when asked for (lock_iterations > 0):
# a program of its own (lockload.c says why).
lockload=""
if [ "${ARG_lock_iterations:?}" -gt 0 ]; then
    lockload "$ARG_lock_iterations" > lockload.json
    lockload=",$(cat lockload.json)"
fi
echo "hotline-summary: {\"workload\":\"cachebench\",\"small_kib\":$ARG_small_kib,\"large_kib\":$ARG_large_kib,\"stride\":$ARG_stride,\"passes\":$ARG_passes,\"handoffs\":$ARG_handoffs,\"iterations\":$ARG_iterations,\"chase_steps\":$ARG_chase_steps,\"lock_iterations\":$ARG_lock_iterations,\"tests\":[$(cat sweep-small.json),$(cat sweep-large.json),$(cat pingpong.json),$(cat falseshare.json),$(cat storeload.json)$chase$lockload]}"
