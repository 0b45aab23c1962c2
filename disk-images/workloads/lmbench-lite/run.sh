#!/bin/sh
# Seed 004's microbenchmarks, each test in its own region of interest, in the
# order lmbench reports them: the first ARG_first of them.
iterations=${ARG_iterations:?hotline.arg.lmbench-lite.iterations is required}
first=${ARG_first:?hotline.arg.lmbench-lite.first is required}
processes=${ARG_processes:?hotline.arg.lmbench-lite.processes is required}

results=
n=0
for test in fork exec pipe ctx null segv fpe; do
    n=$((n + 1))
    [ $n -le $first ] || break
    # No command substitution inside the region: it would add a fork.
    hotline-roi begin
    lmbench-lite $test $iterations $processes > $test.json || exit 1
    hotline-roi end
    results="$results${results:+,}\"$test\":$(cat $test.json)"
done
echo "hotline-summary: {\"workload\":\"lmbench-lite\",\"iterations\":$iterations,\"first\":$first,\"processes\":$processes,\"tests\":{$results}}"
