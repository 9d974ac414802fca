# convgrid plan on the command line: a plan's JSON (of a layer or a network) has the documented
# keys and its words are the busiest rank's; --plan keeps a network to a family of grids; bad input (P = 0, an unmeetable memory limit, an unknown profile, a malformed
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

# --top K: the K best grids by the objective, best first; the first is the plan's.
for objective in volume time; do
  run_one plan --shape "$shape" --procs 8 --passes train --objective "$objective" --profile ib100-cpu --top 3 \
    --json top.json > top.txt || fail "plan --top exited with status $?: $(< top.txt)"
  "$PYTHON" - top.json "$objective" <<'PY' || fail "plan --top $objective: the list is not the best 3 in order from the plan's"
import json, sys
j = json.load(open(sys.argv[1]))
top, key = j["top"], "words" if sys.argv[2] == "volume" else "time_s"
assert len(top) == 3 and top[0]["grid"] == j["layers"][0]["grid"]
assert all(top[i][key] <= top[i + 1][key] for i in range(2)), top
assert len({tuple(t["grid"]) for t in top}) == 3
PY
done
expect_fail_with "--top" plan --network resnet50 --procs 4 --top 3

# A network: one entry per convolution and fully connected layer, each with its shape string
# (which parses back), its grid and the words moved into it; the totals add up.
run_one plan --network resnet50 --batch 64 --procs 16 --json net.json > net.txt \
  || fail "plan --network exited with status $?: $(< net.txt)"
grep -q "data parallelism" net.txt || fail "the network table lacks the data-parallel total"
"$PYTHON" - net.json <<'PY' || fail "net.json lacks documented keys or its totals do not add up"
import json, math, sys
j = json.load(open(sys.argv[1]))
layers = j["layers"]
assert len(layers) == 54, len(layers)
assert layers[0]["name"] == "conv1" and layers[-1]["name"] == "fc1000"
assert layers[0]["shape"].startswith("N=64,C=3,H=224,W=224,K=64,R=7,S=7")
total = 0
for l in layers:
    assert math.prod(l["grid"]) == 16
    total += l["redistribution_words"] + sum(p["recv_words_max"] for p in l["passes"].values())
t = j["totals"]
assert t["recv_words_max"] == total, (t["recv_words_max"], total)
assert t["recv_words_max"] == t["layer_words"] + t["redistribution_words"]
assert t["data_parallel_words"] >= t["recv_words_max"]
assert 0 < t["lower_bound_words"] <= t["recv_words_max"]
PY
# --plan: the grids of a family, as convgrid step runs them; the modelled redistribution time is
# in the JSON beside its words. Data parallelism puts every rank on the batch; the hybrid splits
# only the batch and the image.
for family in data hybrid; do
  run_one plan --network resnet50 --batch 64 --procs 16 --passes train --plan "$family" --json "$family.json" \
    > "$family.txt" || fail "plan --plan $family exited with status $?: $(< "$family.txt")"
  "$PYTHON" - "$family.json" "$family" <<'PY' || fail "plan --plan $family: a grid outside the family"
import json, sys
j, family = json.load(open(sys.argv[1])), sys.argv[2]
assert j["plan"] == family
for l in j["layers"]:
    n, k, c, h, w = l["grid"]
    assert (k, c) == (1, 1), l
    assert family == "hybrid" or (h, w) == (1, 1), l
    assert l["redistribution_time_s"] >= 0
    assert l["fallback"] is False, l
PY
done
# A layer no grid of the family fits (fc1000 at batch 8 on 16 ranks has no batch x spatial grid)
# is planned over every grid and marked; a family that fits no layer at all is refused.
run_one plan --network resnet50 --batch 8 --procs 16 --plan hybrid --json fallback.json > fallback.txt ||
  fail "plan --plan hybrid at P > N exited with status $?: $(< fallback.txt)"
grep -q "^fc1000 +" fallback.txt && grep -q "^+ no batch_spatial grid of 16 ranks fits 1 layer (fc1000)" fallback.txt ||
  fail "plan --plan hybrid: the fallback layer is not marked: $(< fallback.txt)"
"$PYTHON" -c 'import json,sys; l = json.load(open(sys.argv[1]))["layers"]; assert [x["name"] for x in l if x["fallback"]] == ["fc1000"], l' \
  fallback.json || fail "plan --plan hybrid: JSON fallback flags"
expect_fail_with "no data_parallel grid of 16 ranks fits any layer of network 'resnet50' at batch 8" \
  plan --network resnet50 --batch 8 --procs 16 --plan data
expect_fail_with "--plan 'diagonal'" plan --network resnet50 --procs 4 --plan diagonal
expect_fail_with "--plan" plan --shape "$shape" --procs 4 --plan data

shape_of_layer=$("$PYTHON" -c 'import json,sys; print(json.load(open("net.json"))["layers"][5]["shape"])')
run_one plan --shape "$shape_of_layer" --procs 16 > /dev/null || fail "a layer's shape string does not parse: $shape_of_layer"

printf '{"name": "broken", "input": {"C": 3, "H": 8, "W": 8}, "layers": [{"type": "conv", "K": 0}]}' > broken.json
expect_fail_with "broken.json" plan --network broken.json --procs 4
expect_fail_with "nosuch" plan --network nosuch --procs 4
expect_fail_with "--batch 0" plan --network resnet50 --batch 0 --procs 4
expect_fail_with "--shape or --network" plan --procs 4
expect_fail_with "excludes" plan --network resnet50 --shape "$shape" --procs 4
set +e
run_one plan --network resnet50 --batch 64 --procs 4 --mem-per-rank 1KiB > /dev/null 2> netmem.txt
status=$?
set -e
[[ $status -eq 1 ]] || fail "unmeetable network memory limit: exit status $status, expected 1"
grep -q "layer 'conv1'" netmem.txt || fail "the network memory message does not name the layer: $(< netmem.txt)"
smallest=$(sed -n 's/.*smallest limit that works for the whole network is .* (\([0-9]*\) bytes).*/\1/p' netmem.txt)
[[ -n "$smallest" ]] || fail "the network memory message does not give the smallest limit: $(< netmem.txt)"
run_one plan --network resnet50 --batch 64 --procs 4 --mem-per-rank "$smallest" > /dev/null \
  || fail "the smallest network limit the message gave ($smallest bytes) does not work"

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
