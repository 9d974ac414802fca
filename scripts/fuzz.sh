#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the parsers (fuzz/, CONVGRID_FUZZ) with clang in build-fuzz/
# and runs each for the given seconds over a copy of its seed corpus (fuzz/corpus/<harness>/).
# A finding is a crash, a sanitizer report, an exception other than convgrid::InputError (or
# one whose message is not one line naming the file), an input that runs longer than 10 s, one
# allocation of more than 512 MiB or a process above 2 GiB. The script prints each harness's
# result, and for a finding the file that reproduces it (rerun: build-fuzz/fuzz/fuzz_<harness>
# <file>); it exits 1 when any harness found something.
# Usage: scripts/fuzz.sh [seconds per harness, default 30] [most runs per harness, default none]
# (CONVGRID_FUZZ_DIR: the build dir). A harness stops at whichever limit it meets first.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: seconds per harness must be a whole number >= 1, not '$seconds'" >&2
  exit 2
fi
most_runs=${2:-}
if [[ -n "$most_runs" && ! "$most_runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: most runs per harness must be a whole number >= 1, not '$most_runs'" >&2
  exit 2
fi
dir=${CONVGRID_FUZZ_DIR:-build-fuzz}

cmake -S . -B "$dir" -DCONVGRID_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"

runs="$dir/runs"  # per harness: the corpus it grows, its log, what it found and its one-line result
rm -rf "$runs"
# fuzz_one HARNESS: runs one harness; its result goes to $runs/<name>/result (a FINDING line when
# it found something).
fuzz_one() {
  local harness=$1 h=${1##*/fuzz_}
  local log="$runs/$h/log"
  mkdir -p "$runs/$h/corpus" "$runs/$h/findings"
  cp fuzz/corpus/"$h"/* "$runs/$h/corpus/"
  if "$harness" -max_total_time="$seconds" ${most_runs:+-runs="$most_runs"} -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -print_final_stats=1 -artifact_prefix="$runs/$h/findings/" "$runs/$h/corpus" >"$log" 2>&1; then
    echo "fuzz: $h: no finding in $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") runs," \
      "$(sed -n 's/^stat::.*total_time.*: *//p;s/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | head -n 1) s" \
      > "$runs/$h/result"
    return 0
  fi
  local finding
  finding=$(find "$runs/$h/findings" -type f | head -n 1)
  {
    echo "fuzz: $h: FINDING, reproduce with $harness ${finding:-(no file: see the log)}"
    grep -a -m 5 -E "ERROR|runtime error|terminate called|what\(\)|fuzz finding" "$log" |
      cut -c 1-300 | sed 's/^/  /' || true
    echo "  (whole log: $log)"
  } > "$runs/$h/result"
  return 1
}
# The harnesses run side by side, one per core (each is one process), and report in order.
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
harnesses=("$dir"/fuzz/fuzz_*)
for harness in "${harnesses[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $cores ]]; do wait -n || true; done
  fuzz_one "$harness" &
done
wait
found=0
for harness in "${harnesses[@]}"; do
  result="$runs/${harness##*/fuzz_}/result"
  if [[ ! -f $result ]]; then
    echo "fuzz: ${harness##*/fuzz_}: no result (the harness did not run to the end)"
    found=1
    continue
  fi
  cat "$result"
  if grep -q "FINDING" "$result"; then found=1; fi
done
exit "$found"
