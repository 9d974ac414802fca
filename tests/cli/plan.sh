# convgrid plan on the command line: a plan's JSON has the documented keys and its words are the
# busiest rank's; bad input (P = 0, an unmeetable memory limit, an unknown profile, a malformed
# size, a malformed flag) ends with one error line and exit status 1, and the memory message
# gives the smallest limit that works, which then does work.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

shape=N=32,C=64,H=56,W=56,K=64,R=3,S=3,pad=1
run_one plan --shape "$shape" --procs 8 --passes train --json plan.json > plan.txt \
  || fail "plan exited with status $?: $(< plan.txt)"
"$PYTHON" - plan.json <<'PY' || fail "plan.json lacks documented keys or is inconsistent"
import json, sys
j = json.load(open(sys.argv[1]))
layer = j["layers"][0]
assert len(layer["grid"]) == 5 and eval("*".join(map(str, layer["grid"]))) == 8
for p in ("forward", "backward_data", "backward_weights"):
    f = layer["passes"][p]
    for key in ("recv_words_max", "recv_words_mean", "lower_bound_words", "memory_bytes", "time_s"):
        assert key in f, key
    assert f["recv_words_max"] >= f["recv_words_mean"]
assert j["totals"]["recv_words_max"] == sum(layer["passes"][p]["recv_words_max"] for p in layer["passes"])
PY

expect_fail_with "--procs 0" plan --shape "$shape" --procs 0
expect_fail_with "unknown-profile" plan --shape "$shape" --procs 4 --profile unknown-profile
expect_fail_with "12XB" plan --shape "$shape" --procs 4 --mem-per-rank 12XB
expect_fail_with "--objective" plan --shape "$shape" --procs 4 --objective speed

set +e
run_one plan --shape "$shape" --procs 4 --mem-per-rank 1KiB > /dev/null 2> mem.txt
status=$?
set -e
[[ $status -eq 1 ]] || fail "unmeetable memory limit: exit status $status, expected 1"
smallest=$(sed -n 's/.*smallest limit that works is .* (\([0-9]*\) bytes).*/\1/p' mem.txt)
[[ -n "$smallest" ]] || fail "the memory message does not give the smallest limit: $(< mem.txt)"
run_one plan --shape "$shape" --procs 4 --mem-per-rank "$smallest" > /dev/null \
  || fail "the smallest limit the message gave ($smallest bytes) does not work"
echo "PASS"
