#!/usr/bin/env bash
# Fails when a process started by the tests of this `npm test` run is still running, and kills it.
# The test steps run with PARKWAY_TEST_RUN=<id> in their environment, which every process they start
# inherits (unless given an environment of its own); this script runs without it.
# Usage: check-leftovers.sh ID
set -uo pipefail
marker="PARKWAY_TEST_RUN=${1:?usage: check-leftovers.sh ID}"
left=()
for environ in /proc/[0-9]*/environ; do
  pid=${environ#/proc/}
  pid=${pid%/environ}
  # A process may end, or not be readable, between the listing and the read.
  if { tr '\0' '\n' <"$environ"; } 2>/dev/null | grep -qxF -- "$marker"; then
    left+=("$pid")
  fi
done
if [[ ${#left[@]} -eq 0 ]]; then
  echo "no process left running"
  exit 0
fi
for pid in "${left[@]}"; do
  echo "left running: $pid $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"
done
kill -KILL "${left[@]}" 2>/dev/null
exit 1
