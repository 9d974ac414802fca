# convgrid train on residual networks with batch normalization:
#  - resnet-fmnist on a slice of Fashion-MNIST: the first 5 losses at 2 and 4 ranks (the planner's
#    grids, and forced grids that split rows and columns, or channels, so that batch norm reduces
#    over spatial and channel groups) equal the one-rank run within 1e-4 relative; every layer's
#    words equal its model on every rank, and the planner's redistribution and batch-norm words;
#    every rank's tracked memory equals the model. (Five steps: early training with batch norm
#    amplifies float rounding about threefold a step, so later losses drift apart by 1e-4 and
#    more whatever the grid, as two one-rank runs with sums in another order would.)
#  - with augmentation and a warm-up + cosine schedule, 2 ranks give the one-rank losses;
#  - a run killed at step 7 and resumed ends with the uninterrupted run's final checkpoint, byte
#    for byte (batch-norm running statistics included); `export` writes them as PyTorch names;
#  - resnet50 on synthetic data at 4 ranks, with channel and filter grids: plan --passes train and
#    train agree on every layer's grid and panels, on the job's memory (tracked = model on every
#    rank) and on the words moved between layers and by batch norm.
source "$(dirname "$0")/lib.bash"
cli_init "$@"

base=(train --network resnet-fmnist --test-samples 64 --batch 32 --threads 1 --progress none --seed 5 --lr 0.02)
common=("${base[@]}" --train-samples 384 --log-steps)

losses_match() {  # A.json B.json STEPS
  "$PYTHON" - "$1" "$2" "$3" <<'PY' || fail "$2: losses differ from $1"
import json, sys
a = json.load(open(sys.argv[1]))["steps"]
b = json.load(open(sys.argv[2]))["steps"]
n = int(sys.argv[3])
assert len(a) >= n and len(b) >= n, (len(a), len(b))
worst = max(abs(x["loss"] - y["loss"]) / abs(x["loss"]) for x, y in zip(a[:n], b[:n]))
print(f"{sys.argv[2]}: largest relative difference over {n} steps {worst:.2e}")
sys.exit(0 if worst <= 1e-4 else 1)
PY
}

# Every node equal to its model on every rank; memory tracked = model on every rank; with
# PLANNER set, the moves and batch-norm words equal the planner's.
words_and_memory_ok() {  # FILE.json [PLANNER]
  "$PYTHON" - "$1" "${2:-}" <<'PY' || fail "$1: words or memory differ from the model"
import json, sys
j = json.load(open(sys.argv[1]))
bad = [n["name"] for n in j["nodes"] if not n["equal_on_every_rank"]]
assert not bad, bad
assert j["peak_bytes_by_rank"] == j["modelled_bytes_by_rank"], (j["peak_bytes_by_rank"], j["modelled_bytes_by_rank"])
if sys.argv[2]:
    moves = sum(n["measured_moves"]["forward"] + n["measured_moves"]["backward"] for n in j["nodes"] if "pool" not in n["kind"])
    norm = sum(n["measured"]["forward"] + n["measured"]["backward"] for n in j["nodes"] if n["kind"] == "batch_norm")
    assert moves == j["planned"]["redistribution_words"], (moves, j["planned"])
    assert norm == j["planned"]["norm_words"], (norm, j["planned"])
print(f"{sys.argv[1]}: {len(j['nodes'])} layers equal to the model on every rank; memory {max(j['peak_bytes_by_rank'])}")
PY
}

run_one "${common[@]}" --json one.json > one.txt || fail "one-rank training failed: $(cat one.txt)"
words_and_memory_ok one.json planner
for np in 2 4; do
  run_mpi "$np" "${common[@]}" --json "np$np.json" > "np$np.txt" || fail "np $np failed: $(cat "np$np.txt")"
  losses_match one.json "np$np.json" 5
  words_and_memory_ok "np$np.json" planner
done
for grid in 1,1,1,2,2 1,2,2,1,1 2,2,1,1,1; do
  run_mpi 4 "${common[@]}" --grid "$grid" --json "g$grid.json" > "g$grid.txt" || fail "--grid $grid failed: $(cat "g$grid.txt")"
  losses_match one.json "g$grid.json" 5
  words_and_memory_ok "g$grid.json"
done
grep -Eq "batch_norm ([1-9][0-9]*) \(planner \1\)" np4.txt || fail "no batch-norm words: $(grep words np4.txt)"

# Augmentation and a schedule: the same draws and rates on any number of ranks.
aug=("${common[@]}" --crop-padding 2 --flip --lr-schedule cosine --warmup-epochs 0.5)
run_one "${aug[@]}" --json aug1.json > aug1.txt || fail "augmented one-rank run failed: $(cat aug1.txt)"
run_mpi 2 "${aug[@]}" --json aug2.json > aug2.txt || fail "augmented 2-rank run failed: $(cat aug2.txt)"
losses_match aug1.json aug2.json 5
! cmp -s <("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' one.json) \
         <("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' aug1.json) ||
  fail "augmentation changed no loss"

# Kill and resume: byte-identical final checkpoint, running statistics included.
ck=("${base[@]}" --train-samples 256 --epochs 2 --checkpoint-every 3)
run_mpi 2 "${ck[@]}" --checkpoint-dir full > full.txt || fail "uninterrupted run failed: $(cat full.txt)"
final=$(ls full | tail -1)
[[ $final == step-00000016.ckpt ]] || fail "final checkpoint is $final, expected step-00000016.ckpt"
status=0
run_mpi 2 "${ck[@]}" --checkpoint-dir cut --raise-at 1:8:KILL > cut.txt 2>&1 || status=$?
[[ $status -ne 0 && $status -ne 124 ]] || fail "the killed run exited with $status (124: it hung)"
run_mpi 2 "${ck[@]}" --checkpoint-dir cut --resume > resumed.txt || fail "resume failed: $(cat resumed.txt)"
grep -q "resumed from .*step-00000006.ckpt" resumed.txt || fail "did not resume from step 6: $(cat resumed.txt)"
cmp full/$final cut/$final || fail "the resumed run's final checkpoint differs from the uninterrupted one"
run_one export --checkpoint full --network resnet-fmnist --out w.npz > export.txt || fail "export failed: $(cat export.txt)"
grep -q "layer2.0.downsample.1.running_var" export.txt || fail "no running statistics exported: $(cat export.txt)"
grep -q "layer3.0.bn2.num_batches_tracked" export.txt || fail "no num_batches_tracked exported: $(cat export.txt)"

# resnet50 on synthetic data: plan and train agree.
r50=(--network resnet50 --batch 4)
OMP_NUM_THREADS=1 run_one plan "${r50[@]}" --plan channel --procs 4 --passes train --json plan50.json > plan50.txt ||
  fail "plan resnet50 failed: $(cat plan50.txt)"
run_mpi 4 train "${r50[@]}" --family channel_filter --data synthetic --train-samples 4 --test-samples 4 --threads 1 --progress none \
  --json train50.json > train50.txt || fail "resnet50 synthetic training failed: $(cat train50.txt)"
"$PYTHON" - plan50.json train50.json <<'PY' || fail "plan and train of resnet50 differ"
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [(l["grid"], l["panels"]) for l in plan["layers"]] == [(l["grid"], l["panels"]) for l in run["layers"]]
assert any(l["grid"][0] != 4 for l in run["layers"]), "every layer data-parallel"
assert plan["totals"]["training_job_bytes"] == max(run["modelled_bytes_by_rank"]), (plan["totals"], run["modelled_bytes_by_rank"])
assert run["peak_bytes_by_rank"] == run["modelled_bytes_by_rank"]
assert all(n["equal_on_every_rank"] for n in run["nodes"]), [n["name"] for n in run["nodes"] if not n["equal_on_every_rank"]]
moves = sum(n["measured_moves"]["forward"] + n["measured_moves"]["backward"] for n in run["nodes"] if "pool" not in n["kind"])
assert moves == plan["totals"]["redistribution_words"], (moves, plan["totals"]["redistribution_words"])
print(f"resnet50: {len(run['layers'])} layers on the planned grids; moves {moves} words; job {plan['totals']['training_job_bytes']} bytes")
PY
echo "train_residual: ok"
