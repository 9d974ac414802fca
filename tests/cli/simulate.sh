# convgrid simulate on the command line: for fmnist at P = 1, 2, 4, 8 the CSV has its header and a
# row for every P and strategy, the planner receives no more than data parallelism and no less
# than the lower bound, and the two pictures are SVG files (when gnuplot is on PATH; without it
# the command must say the plots were skipped and still succeed). Bad input (P = 0, a malformed
# list, an unknown network) ends with one error line and exit status 1.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

run_one simulate --network fmnist --procs 1,2,4,8 --batch 64 --out sim > sim.txt \
  || fail "simulate exited with status $?: $(< sim.txt)"
"$PYTHON" - sim/simulate.csv <<'PY' || fail "sim/simulate.csv is incomplete or inconsistent: $(< sim.txt)"
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0] == "procs,strategy,words_per_rank,time_s,fallback_layers", lines[0]
strategies = ["planner", "data_parallel", "batch_spatial", "channel_filter", "lower_bound"]
words = {}
for row in csv.DictReader(lines):
    assert row["strategy"] in strategies, row
    key = (int(row["procs"]), row["strategy"])
    assert key not in words, "two rows for %s" % (key,)
    words[key] = float(row["words_per_rank"]) if row["words_per_rank"] else None
    if row["strategy"] == "lower_bound":
        assert row["time_s"] == "" and row["fallback_layers"] == "", row
    elif words[key] is not None:
        assert float(row["time_s"]) > 0 and int(row["fallback_layers"]) >= 0, row
for p in (1, 2, 4, 8):
    for s in strategies:
        assert (p, s) in words, "no row for P=%d %s" % (p, s)
    planner, dp, bound = words[p, "planner"], words[p, "data_parallel"], words[p, "lower_bound"]
    assert planner is not None and bound is not None, "P=%d: no planner or lower bound" % p
    assert dp is None or planner <= dp, "P=%d: planner %s > data parallel %s" % (p, planner, dp)
    assert bound <= planner, "P=%d: lower bound %s > planner %s" % (p, bound, planner)
PY
if command -v gnuplot > /dev/null; then
  for picture in words time; do
    [[ -s sim/$picture.svg ]] || fail "sim/$picture.svg was not drawn: $(< sim.txt)"
    head -c 200 "sim/$picture.svg" | grep -q -e '<?xml' -e '<svg' || fail "sim/$picture.svg is not an SVG file"
  done
else
  grep -q "plots skipped" sim.txt || fail "without gnuplot the output does not say the plots were skipped"
fi

# The words-against-memory sweep of one layer: the frontier falls as memory grows, no plan is below
# the memory-independent bound, and the frontier's least memory is the smallest limit plan accepts.
layer=N=16,C=64,H=8,W=8,K=64,R=3,S=3,pad=1
run_one simulate --shape "$layer" --procs 8 --sweep-memory --out sweep > sweep.txt \
  || fail "simulate --sweep-memory exited with status $?: $(< sweep.txt)"
least=$("$PYTHON" - sweep/sweep.csv <<'PY' || fail "sweep.csv is inconsistent"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and set(r["algorithm"] for r in rows) <= {"3D", "2D", "2.5D"}
assert {"3D", "2D", "2.5D"} & set(r["algorithm"] for r in rows) == {"3D", "2D", "2.5D"}, "all three kinds"
front = sorted((int(r["memory_bytes"]), int(r["words_per_rank"])) for r in rows if r["frontier"] == "1")
assert all(a[1] > b[1] for a, b in zip(front, front[1:])), "frontier words must fall as memory grows"
for r in rows:
    assert float(r["bound_words"]) <= int(r["words_per_rank"]) + 1e-6
    assert float(r["memory_bound_words"]) <= int(r["words_per_rank"]) + 1e-6
    # no plan with less memory than the frontier's first point
    assert int(r["memory_bytes"]) >= front[0][0]
print(front[0][0])
PY
)
run_one plan --shape "$layer" --procs 8 --passes train --mem-per-rank "$least" > /dev/null \
  || fail "the sweep's least memory ($least bytes) is not a limit plan accepts"
set +e
run_one plan --shape "$layer" --procs 8 --passes train --mem-per-rank $((least - 1)) > /dev/null 2> less.txt
status=$?
set -e
[[ $status -eq 1 ]] || fail "one byte under the sweep's least memory still has a plan"
grep -q "($least bytes)" less.txt || fail "plan's smallest limit differs from the sweep's: $(< less.txt)"
if command -v gnuplot > /dev/null; then
  head -c 200 sweep/sweep.svg | grep -q -e '<?xml' -e '<svg' || fail "sweep/sweep.svg is not an SVG file"
fi
expect_fail_with "--sweep-memory" simulate --shape "$layer" --procs 8 --out bad
expect_fail_with "one P" simulate --shape "$layer" --procs 8,16 --sweep-memory --out bad

expect_fail_with "--procs 0" simulate --network fmnist --procs 0 --out bad
expect_fail_with "'x'" simulate --network fmnist --procs 4,x --out bad
expect_fail_with "nosuch" simulate --network nosuch --procs 4 --out bad
echo "PASS"
