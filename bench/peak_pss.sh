#!/usr/bin/env bash
# Runs a command and writes the peak proportional set size (PSS, kB) of it and its descendants
# to a file: memory actually used, where a maximum RSS counts SMPI's folded buffers (one
# physical block mapped at many addresses, SMPI_SHARED_MALLOC) once per mapping.
# Usage: bench/peak_pss.sh OUT_FILE COMMAND [ARGS...]   (exit status: the command's)
set -uo pipefail
out=$1
shift
"$@" &
pid=$!
descendants() {
  local p
  for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$p"
    descendants "$p"
  done
}
peak=0
while kill -0 "$pid" 2>/dev/null; do
  total=0
  for p in $pid $(descendants "$pid"); do
    kb=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || true)
    total=$((total + ${kb:-0}))
  done
  ((total > peak)) && peak=$total
  sleep 5
done
wait "$pid"
status=$?
echo "$peak" > "$out"
exit "$status"
