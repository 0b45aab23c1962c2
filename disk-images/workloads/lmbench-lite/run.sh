#!/bin/sh
# Seed 004's microbenchmarks, each test in its own region of interest, in the
# order lmbench reports them.
iterations=${ARG_iterations:?hotline.arg.lmbench-lite.iterations is required}
processes=${ARG_processes:?hotline.arg.lmbench-lite.processes is required}

results=
for test in fork exec pipe ctx null segv fpe; do
    # No command substitution inside the region: it would add a fork.
    hotline-roi begin
    lmbench-lite $test $iterations $processes > $test.json || exit 1
    hotline-roi end
    results="$results${results:+,}\"$test\":$(cat $test.json)"
done
echo "hotline-summary: {\"workload\":\"lmbench-lite\",\"iterations\":$iterations,\"processes\":$processes,\"tests\":{$results}}"
