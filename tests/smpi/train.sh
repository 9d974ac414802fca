# convgrid train under smpirun (SMPI build): the real training step (every layer, pooling, the
# residual adds, the loss, SGD) on a simulated cluster, on synthetic data.
#  - --compute run, 16 ranks: the first 8 losses of fmnist equal one simulated rank's within 1e-4
#    relative, on the planner's grids and on a grid that splits rows and columns (pooling halos);
#    every layer's words equal the model on every rank;
#  - --compute model, 64 ranks: resnet-fmnist (batch normalization, residual adds) runs with its
#    kernels skipped and their flops injected; every layer's words equal the model on every rank,
#    and every step is timed on the simulated cluster.
# Usage: bash train.sh <path-to-convgrid of the SMPI build>
source "$(dirname "$0")/lib.bash"

# run NAME NP ARGS...: trains under smpirun on ib100-cpu, NAME.txt and NAME.json
run() {
  local name=$1 np=$2
  shift 2
  timeout 300 bash "$root/scripts/smpirun.sh" --platform ib100-cpu --np "$np" "$convgrid" train \
    --data synthetic --seed 5 --lr 0.01 --threads 1 --progress none --log-steps --json "$name.json" "$@" \
    > "$name.txt" 2>&1 || fail "$name: $(tail -5 "$name.txt")"
  grep -q "every layer equal to its model on every rank" "$name.txt" ||
    fail "$name: words differ from the model: $(grep words "$name.txt")"
}

fmnist=(--network fmnist --batch 32 --train-samples 256 --test-samples 32)
run one 1 "${fmnist[@]}"
run planner 16 "${fmnist[@]}"
run spatial 16 "${fmnist[@]}" --grid 1,1,1,4,4
grep -Eq "pooling halos [1-9]" spatial.txt || fail "grid 1,1,1,4,4 moved no pooling halo: $(grep words spatial.txt)"
/usr/bin/python3 - one.json planner.json spatial.json <<'PY' || fail "losses at 16 ranks differ from one rank's"
import json, sys
runs = [json.load(open(p))["steps"] for p in sys.argv[1:]]
assert all(len(r) == 8 for r in runs), [len(r) for r in runs]
for path, r in zip(sys.argv[2:], runs[1:]):
    worst = max(abs(a["loss"] - b["loss"]) / abs(a["loss"]) for a, b in zip(runs[0], r))
    print(f"{path}: largest relative difference over 8 steps {worst:.2e}")
    assert worst <= 1e-4, worst
PY

run model 64 --network resnet-fmnist --batch 64 --train-samples 128 --test-samples 64 --compute model
grep -q "^compute model: the kernels are skipped" model.txt || fail "no compute line: $(head -3 model.txt)"
/usr/bin/python3 - model.json <<'PY' || fail "model.json: wrong report"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["procs"] == 64, j["procs"]
assert len(j["steps"]) == 2 and all(s["seconds"] > 0 for s in j["steps"]), j["steps"]
assert all(n["equal_on_every_rank"] for n in j["nodes"]), [n for n in j["nodes"] if not n["equal_on_every_rank"]]
assert j["words_per_step"]["measured"] == j["words_per_step"]["modelled"] > 0, j["words_per_step"]
PY
echo "train under smpirun: 16 ranks equal one rank's losses, words equal the model (16 and 64 ranks)"
