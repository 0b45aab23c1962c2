#!/bin/sh
# bench/groundtruth.c's patterns of the chosen groups, one region of interest
# per timed measurement (the program marks them); its JSON lines, one per
# pattern, become the summary's "patterns".
set -e
groups=""
[ "${ARG_forwarding:?}" -eq 1 ] && groups="$groups forwarding"
[ "${ARG_drain:?}" -eq 1 ] && groups="$groups drain"
[ "${ARG_sharing:?}" -eq 1 ] && groups="$groups sharing"
names=""
for group in $groups; do
    names="$names $(groundtruth --list | awk -v g="$group" '$2 == g { printf "%s ", $1 }')"
done
if [ -z "$names" ]; then
    echo "groundtruth: no pattern group chosen (forwarding, drain, sharing are all 0)"
    exit 1
fi
# shellcheck disable=SC2086  # the names are words
groundtruth --iterations "${ARG_iterations:?}" --rounds "${ARG_rounds:?}" $names > patterns.json
echo "hotline-summary: {\"workload\":\"groundtruth\",\"forwarding\":$ARG_forwarding,\"drain\":$ARG_drain,\"sharing\":$ARG_sharing,\"iterations\":$ARG_iterations,\"rounds\":$ARG_rounds,\"patterns\":[$(paste -s -d, patterns.json)]}"
