#!/bin/sh
# The validation microbenchmarks, one region of interest each (the program
# marks them around its measured loops).
set -e
if [ "${ARG_causes:?}" -eq 1 ]; then
    # The cause benchmarks of docs/causes.md instead of the tests: causes is
    # a program of its own, whose instructions lie at the addresses of
    # cachebench's, and the results tables name instructions by address.
    tests=""
    for benchmark in a b c d; do
        causes "$benchmark" > "causes-$benchmark.json"
        tests="$tests${tests:+,}$(cat "causes-$benchmark.json")"
    done
else
    cachebench sweep "${ARG_small_kib:?}" "${ARG_stride:?}" "${ARG_passes:?}" > sweep-small.json
    cachebench sweep "${ARG_large_kib:?}" "$ARG_stride" "$ARG_passes" > sweep-large.json
    cachebench pingpong "${ARG_handoffs:?}" > pingpong.json
    cachebench falseshare "${ARG_iterations:?}" > falseshare.json
    cachebench storeload "$ARG_iterations" > storeload.json
    tests="$(cat sweep-small.json),$(cat sweep-large.json),$(cat pingpong.json),$(cat falseshare.json),$(cat storeload.json)"
    # The pointer chase only when asked for (chase_steps > 0): a region of its own.
    if [ "${ARG_chase_steps:?}" -gt 0 ]; then
        cachebench chase "$ARG_large_kib" "$ARG_chase_steps" > chase.json
        tests="$tests,$(cat chase.json)"
    fi
    # The locked instruction after stores that hit, then after a store that
    # misses, when asked for (lock_iterations > 0): a program of its own
    # (lockload.c says why), a region each.
    if [ "${ARG_lock_iterations:?}" -gt 0 ]; then
        for mode in hits miss; do
            lockload "$ARG_lock_iterations" "$mode" > "lockload-$mode.json"
            tests="$tests,$(cat "lockload-$mode.json")"
        done
    fi
fi
echo "hotline-summary: {\"workload\":\"cachebench\",\"small_kib\":${ARG_small_kib:?},\"large_kib\":${ARG_large_kib:?},\"stride\":${ARG_stride:?},\"passes\":${ARG_passes:?},\"handoffs\":${ARG_handoffs:?},\"iterations\":${ARG_iterations:?},\"chase_steps\":${ARG_chase_steps:?},\"lock_iterations\":${ARG_lock_iterations:?},\"causes\":$ARG_causes,\"tests\":[$tests]}"
