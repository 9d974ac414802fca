# convgrid step: one training step of every conv and fc layer of a network on its planned grids
# (the first layer without backward-data, as training runs it), with the redistributions between
# layers. On 1, 2, 3 and 4 ranks, for the planner, data
# parallelism and the batch x spatial hybrid, every rank's words equal the model, pass by pass and
# edge by edge, and the report's totals are the layers' sums; --compute model needs the SMPI
# build and says so in one line.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

for np in 1 2 3 4; do
  for plan in planner data hybrid; do
    run_mpi "$np" step --network fmnist --batch 12 --plan "$plan" --json "s$np$plan.json" > "s$np$plan.txt" ||
      fail "step on $np ranks, plan $plan: $(cat "s$np$plan.txt")"
    grep -q "words equal the model on every rank: yes" "s$np$plan.txt" || fail "np $np $plan: $(tail -2 "s$np$plan.txt")"
    "$PYTHON" - "s$np$plan.json" "$np" <<'PY' || fail "np $np $plan: the JSON report is wrong"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ranks"] == int(sys.argv[2]) and j["words_equal_model_on_every_rank"] is True
layers = j["layers"]
assert [l["name"] for l in layers] == ["conv1", "conv2", "conv3", "fc1", "fc2"], layers
for l in layers:
    assert l["words_equal_model_on_every_rank"] is True
    assert l["words_max"] == l["model_words_max"], l
    # the first layer reads the data: no backward-data, as in training
    assert [p["pass"] for p in l["passes"]] == (["forward", "backward_weights"] if l["name"] == "conv1"
                                                else ["forward", "backward_data", "backward_weights"]), l
    assert sum(p["words_max"] for p in l["passes"]) + l["redistribution_words_max"] == l["words_max"], l
assert j["step_words"] == sum(l["words_max"] for l in layers)
if int(sys.argv[2]) > 1:
    assert j["step_words"] > 0
PY
  done
done
# Data parallelism moves no activation between layers.
"$PYTHON" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert all(l["redistribution_words_max"] == 0 for l in j["layers"])' s4data.json ||
  fail "data parallelism redistributed an activation"

expect_fail_with "--compute model skips the kernels and works on a simulated clock" step --network fmnist --batch 4 --compute model
expect_fail_with "--compute comm skips the kernels" step --network fmnist --batch 4 --compute comm
expect_fail_with "--compute 'fast': expected run, model or comm" step --network fmnist --batch 4 --compute fast
expect_fail_with "--plan 'best': expected planner, data, hybrid or channel" step --network fmnist --batch 4 --plan best
expect_fail_with "--compute model skips the kernels" conv --shape N=1,C=1,H=4,W=4,K=1,R=1,S=1 --compute model
expect_fail_with "--compute model skips the kernels" bench --layers res5a_branch2b --compute model
