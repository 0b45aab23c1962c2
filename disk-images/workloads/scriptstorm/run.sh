#!/bin/sh
# Seed 003's git "make test": ARG_scripts short shell scripts, ARG_jobs at a
# time, each sourcing a shared library and running six small test cases of
# fork+exec'd programs through pipes.
scripts=${ARG_scripts:?hotline.arg.scriptstorm.scripts is required}
jobs=${ARG_jobs:?hotline.arg.scriptstorm.jobs is required}

cp "$(dirname "$0")/lib.sh" "$(dirname "$0")/script.sh" .
mkdir -p t
for w in alpha bravo charlie delta echo foxtrot golf hotel india juliett; do
    seq 1 20 | sed "s/^/$w/"
done > words

worker() {
    i=$1
    while [ $i -lt $scripts ]; do
        (cd t && script=$i sh ../script.sh)
        i=$((i + jobs))
    done
}

hotline-roi begin
j=0
while [ $j -lt $jobs ]; do
    worker $j &
    j=$((j + 1))
done
wait
hotline-roi end

passed=0; failed=0; ran=0; status=0
for f in t/result.*; do
    read p f_ < "$f"
    passed=$((passed + p)); failed=$((failed + f_)); ran=$((ran + 1))
done
[ $ran -eq $scripts ] && [ $failed -eq 0 ] || status=1
echo "hotline-summary: {\"workload\":\"scriptstorm\",\"scripts\":$scripts,\"jobs\":$jobs,\"scripts_run\":$ran,\"cases_passed\":$passed,\"cases_failed\":$failed}"
exit $status
