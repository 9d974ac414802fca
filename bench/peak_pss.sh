#!/usr/bin/env bash
# Runs a command and writes the peak proportional set size (PSS, kB) of it and its descendants
# to a file: memory actually used, where a maximum RSS counts SMPI's folded buffers (one
# physical block mapped at many addresses, SMPI_SHARED_MALLOC) once per mapping.
# Usage: bench/peak_pss.sh OUT_FILE COMMAND [ARGS...]   (exit status: the command's)
#   PEAK_PSS_LIMIT_KB  stop the command (SIGTERM to it and its descendants) once their PSS passes
#                      this many kB, before the machine runs out; exit status 137, and a line on
#                      stderr. The file holds the peak so far while the command runs.
set -uo pipefail
limit=${PEAK_PSS_LIMIT_KB:-0}
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
  ((total > peak)) && peak=$total && echo "$peak" > "$out"
  if ((limit > 0 && total > limit)); then
    echo "peak_pss.sh: $total kB past the limit of $limit kB: stopping the command" >&2
    kill -TERM $(descendants "$pid") "$pid" 2>/dev/null
    wait "$pid"
    echo "$peak" > "$out"
    exit 137
  fi
  sleep 5
done
wait "$pid"
status=$?
echo "$peak" > "$out"
exit "$status"
