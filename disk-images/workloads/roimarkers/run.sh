#!/bin/sh
# The region-of-interest operations around loops of known counts.
out=$(roimarkers "${ARG_iterations:?}") || exit 1
echo "hotline-summary: {\"workload\":\"roimarkers\",${out#\{}"
