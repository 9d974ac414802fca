# convgrid train on a slice of Fashion-MNIST (Debian's dataset-fashion-mnist):
#  - the first 20 losses at 2, 3 and 4 ranks (planner grids, and forced spatial and channel grids
#    whose pooling needs halos) equal the one-rank run within 1e-4 relative, and the words the
#    redistributions move equal the model's (and the planner's);
#  - a run whose rank 1 is killed exits (no hang); resumed, it ends with the same final checkpoint,
#    byte for byte, as an uninterrupted run, also when its newest checkpoint is corrupt (refused
#    with a message, the previous one used); the checkpoint loads at another rank count; a resume
#    with another learning rate is refused, naming it;
#  - every rank's tracked memory equals the job's model; under --mem-per-rank the whole job fits
#    (every rank), the streamed layers give the same losses, and a limit nothing fits is refused
#    with the least, which runs;
#  - with --reproducible the first 50 losses at 2, 3 and 4 ranks are the one-rank run's exactly;
#  - --log-steps records each step's loss and seconds;
#  - bad input: missing data, a file that is not IDX, a bad grid, --resume without a directory,
#    --compute model outside the SMPI build.
source "$(dirname "$0")/lib.bash"
cli_init "$@"

base=(train --test-samples 128 --batch 32 --threads 1 --progress lines --seed 3 --lr 0.01)
common=("${base[@]}" --train-samples 640)

# losses_match A.json B.json STEPS [LIMIT]: the first STEPS losses agree within LIMIT relative
# (1e-4 unless given; 0: the same numbers).
losses_match() {
  "$PYTHON" - "$1" "$2" "$3" "${4:-1e-4}" <<'PY' || fail "$2: losses differ from $1"
import json, sys
a = json.load(open(sys.argv[1]))["steps"]
b = json.load(open(sys.argv[2]))["steps"]
n, limit = int(sys.argv[3]), float(sys.argv[4])
assert len(a) >= n and len(b) >= n, (len(a), len(b))
worst = max(abs(x["loss"] - y["loss"]) / abs(x["loss"]) for x, y in zip(a[:n], b[:n]))
print(f"{sys.argv[2]}: largest relative difference over {n} steps {worst:.2e}")
sys.exit(0 if worst <= limit else 1)
PY
}

run_one "${common[@]}" --log-steps --json one.json > one.txt || fail "one-rank training failed: $(cat one.txt)"
grep -q "^epoch 1: train loss" one.txt || fail "no epoch summary: $(cat one.txt)"
"$PYTHON" -c 'import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
assert len(steps) == 20 and all(s["seconds"] > 0 for s in steps), steps' one.json || fail "one.json: steps without their seconds"
# Each node's seconds in the last training step (the slowest rank's and the mean over ranks): a
# rank's nodes run one after another inside its step, so their means add up to no more than the
# slowest rank's step, and a convolution takes time.
node_seconds_ok() {  # FILE.json
  "$PYTHON" - "$1" <<'PY' || fail "$1: node seconds missing or more than the step: $(grep "time of the last" "${1%.json}.txt")"
import json, sys
j = json.load(open(sys.argv[1]))
total = 0.0
for n in j["nodes"]:
    mx, mean = n["seconds"]["max"], n["seconds"]["mean"]
    for d in ("forward", "backward"):
        assert 0 <= mean[d] <= mx[d], n
        total += mean[d]
    if n["kind"] == "conv":
        assert mean["forward"] > 0, n
assert 0 < total <= j["steps"][-1]["seconds"], (total, j["steps"][-1])
PY
  grep -q "^time of the last training step by node kind (ms, .*conv [0-9.]* | .*all [0-9.]*$" "${1%.json}.txt" ||
    fail "${1%.json}.txt: no time by node kind"
}
node_seconds_ok one.json
for np in 2 3 4; do
  run_mpi "$np" "${common[@]}" --log-steps --json "np$np.json" > "np$np.txt" || fail "np $np failed"
  losses_match one.json "np$np.json" 20
  node_seconds_ok "np$np.json"
  grep -Eq "redistribution ([0-9]+) \(model \1, planner \1\)" "np$np.txt" ||
    fail "np $np: redistribution words differ from the model: $(grep words "np$np.txt")"
done
for grid in 1,1,1,2,2 1,2,1,2,1 1,1,2,1,2; do
  run_mpi 4 "${common[@]}" --grid "$grid" --log-steps --json "g$grid.json" > "g$grid.txt" || fail "grid $grid failed"
  losses_match one.json "g$grid.json" 20
  grep -Eq "redistribution ([0-9]+) \(model \1\) \| pooling halos [1-9]" "g$grid.txt" ||
    fail "grid $grid: words differ from the model or no pooling halo: $(grep words "g$grid.txt")"
done

# Memory: the tracked bytes of every rank equal the model of the job (train/training_memory.hpp).
# Under --mem-per-rank the whole job fits: some layers stream, the tracked peak of every rank is
# the model's and under the limit, and the losses are the same. A limit under every plan set is
# refused with the least the job needs, and that least runs.
job_memory_ok() {  # FILE.json [LIMIT]
  "$PYTHON" - "$1" "${2:-0}" <<'PY' || fail "$1: memory differs from the model or the limit: $(grep memory "${1%.json}.txt")"
import json, sys
j = json.load(open(sys.argv[1]))
limit = int(sys.argv[2])
tracked, model = j["peak_bytes_by_rank"], j["modelled_bytes_by_rank"]
print(f"{sys.argv[1]}: tracked {tracked}, model {model}, limit {limit}")
assert tracked == model, (tracked, model)
assert limit == 0 or max(tracked) <= limit, (tracked, limit)
PY
}
job_memory_ok np4.json
# Memory figures depend on the layouts and scratchpads oneDNN picks for this processor (AVX2 and
# AVX-512 differ), so every figure and limit below comes from this run, never from a constant.
# format_bytes BYTES: the figure as convgrid prints it ("28.8 MiB").
format_bytes() {
  "$PYTHON" - "$1" <<'PY'
import sys
b = int(sys.argv[1])
v, u = float(b), 0
while v >= 1024 and u < 4:
    v, u = v / 1024, u + 1
print(f"{b} B" if u == 0 else f"{v:.1f} " + ["B", "KiB", "MiB", "GiB", "TiB"][u])
PY
}
json_field() { "$PYTHON" -c 'import json, sys; print(eval("json.load(open(sys.argv[1]))" + sys.argv[2]))' "$1" "$2"; }
# convgrid plan prints the job train holds on the same plans (one kernel thread, as these runs).
OMP_NUM_THREADS=1 run_one plan --network fmnist --batch 32 --procs 4 --passes train --json plan4.json > plan4.txt ||
  fail "plan failed: $(cat plan4.txt)"
"$PYTHON" - plan4.json np4.json <<'PY' || fail "plan's training job differs from train's model"
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert plan["totals"]["training_job_bytes"] == max(run["modelled_bytes_by_rank"]), (plan["totals"], run["modelled_bytes_by_rank"])
PY
# The plan's whole training step: the loss's all-reduces are the loss node's words; with the
# biases' the step's words are at least what the run moved (the run takes each node's busiest
# rank, the plan each pass's and each all-reduce's, which may be different ranks) and at most
# what a bias's all-reduce can differ by between ranks (P - 2 words) more for each layer.
"$PYTHON" - plan4.json np4.json <<'PY' || fail "plan's training step differs from train's"
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t = plan["totals"]
loss = [n for n in run["nodes"] if n["kind"] == "softmax_xent"]
assert len(loss) == 1 and loss[0]["measured"]["forward"] == t["loss_words"] > 0, (loss, t)
assert t["bias_words"] > 0 and t["step_words"] == t["recv_words_max"] + t["loss_words"] + t["bias_words"], t
measured = run["words_per_step"]["measured"]
assert measured <= t["step_words"] <= measured + (plan["procs"] - 2) * len(plan["layers"]), (measured, t)
PY
grep -Eq "^  the whole training step: [0-9]+ words, [0-9.]+ ms, with the loss's all-reduces \([0-9]+ words" plan4.txt ||
  fail "no whole-step line: $(tail -4 plan4.txt)"
job=$(json_field plan4.json '["totals"]["training_job_bytes"]')
grep -qF "  training job per rank (convgrid train on these plans, its peak): $(format_bytes "$job")" plan4.txt ||
  fail "no training job line of $(format_bytes "$job"): $(tail -3 plan4.txt)"
# A limit of 83% of the unconstrained job (24 MiB of 28.8 on AVX-512) needs some layers streamed.
limit=$((job * 83 / 100))
run_mpi 4 "${common[@]}" --mem-per-rank "$limit" --log-steps --json mem.json > mem.txt || fail "--mem-per-rank $limit run failed: $(cat mem.txt)"
grep -Eq "^(conv|fc)[0-9] +[0-9,]+ +[1-9]" mem.txt || fail "--mem-per-rank $limit streamed nothing: $(cat mem.txt)"
job_memory_ok mem.json "$limit"
losses_match one.json mem.json 20
grep -qF "; limit $limit; unconstrained plans $(format_bytes "$job")" mem.txt ||
  fail "no memory line with the limit and $(format_bytes "$job") unconstrained: $(grep memory mem.txt)"
grep -q "^memory per rank (busiest): tracked peak .*, model .*; limit" mem.txt || fail "no memory line: $(grep memory mem.txt)"
# convgrid plan under the same limit shows what train ran: the same grids and panels, the same job.
OMP_NUM_THREADS=1 run_one plan --network fmnist --batch 32 --procs 4 --passes train --mem-per-rank "$limit" \
  --json planmem.json > planmem.txt || fail "plan --mem-per-rank $limit failed: $(cat planmem.txt)"
grep -qF "memory limit $(format_bytes "$limit") per rank for the whole training job (as convgrid train)" planmem.txt ||
  fail "plan does not say the limit is the job's: $(head -1 planmem.txt)"
"$PYTHON" - planmem.json mem.json <<'PY' || fail "plan under $limit bytes differs from train's run"
import json, sys
plan, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [(l["grid"], l["panels"]) for l in plan["layers"]] == [(l["grid"], l["panels"]) for l in run["layers"]], (plan["layers"], run["layers"])
assert plan["totals"]["training_job_bytes"] == max(run["modelled_bytes_by_rank"])
PY
status=0
run_mpi 4 "${common[@]}" --mem-per-rank 5MiB > small.txt 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "--mem-per-rank 5MiB ran"
least=$(sed -nE 's/.*--mem-per-rank 5.0 MiB: training fmnist at batch 32 on 4 ranks needs at least .* \(([0-9]+) bytes\) per rank.*/\1/p' small.txt)
[[ -n "$least" ]] || fail "no least in the error: $(cat small.txt)"
# Two steps: its fc1 streams in 1,568 panels, and twenty took 40-110 s here, against the 60 s limit.
run_mpi 4 "${base[@]}" --train-samples 64 --mem-per-rank "$least" --json least.json > least.txt ||
  fail "the least, $least bytes, does not run: $(cat least.txt)"
job_memory_ok least.json "$least"
# With --grid the layers stream on the given grids until the job fits: 70% of the job on these
# grids (30 MiB of 43.2 on AVX-512).
run_mpi 4 "${common[@]}" --grid 1,1,1,2,2 --json gfree.json > gfree.txt || fail "--grid 1,1,1,2,2 failed: $(cat gfree.txt)"
glimit=$(($("$PYTHON" -c 'import json, sys; print(max(json.load(open(sys.argv[1]))["modelled_bytes_by_rank"]))' gfree.json) * 70 / 100))
run_mpi 4 "${common[@]}" --grid 1,1,1,2,2 --mem-per-rank "$glimit" --log-steps --json gmem.json > gmem.txt ||
  fail "--grid with --mem-per-rank $glimit failed: $(cat gmem.txt)"
grep -Eq "^conv3 +1,1,1,2,2 +[1-9]" gmem.txt || fail "--grid 1,1,1,2,2 at $glimit bytes: conv3 does not stream on its grid: $(cat gmem.txt)"
job_memory_ok gmem.json "$glimit"
losses_match one.json gmem.json 20

# Reproducible arithmetic: the first 50 losses at 2, 3 and 4 ranks are the one-rank run's, to the
# last bit; a grid that splits more than samples is refused.
repro=("${base[@]}" --train-samples 1600 --reproducible --log-steps)
run_one "${repro[@]}" --json r1.json > r1.txt || fail "one-rank reproducible training failed: $(cat r1.txt)"
grep -q ", reproducible arithmetic$" r1.txt || fail "no reproducible header: $(head -1 r1.txt)"
for np in 2 3 4; do
  run_mpi "$np" "${repro[@]}" --json "r$np.json" > "r$np.txt" || fail "reproducible np $np failed: $(cat "r$np.txt")"
  losses_match r1.json "r$np.json" 50 0
done
status=0
run_mpi 2 "${repro[@]}" --grid 1,1,1,2,1 > rgrid.txt 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "--reproducible ran a grid that splits rows"
grep -q "reproducible arithmetic splits samples only; grid 1,1,1,2,1" rgrid.txt || fail "no grid error: $(cat rgrid.txt)"
status=0
run_mpi 2 train --batch 1 --train-samples 16 --test-samples 8 --threads 1 --reproducible > rbatch.txt 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "--reproducible ran a batch of 1 on 2 ranks"
grep -q "a batch of 1 cannot give each of 2 ranks a sample" rbatch.txt || fail "no batch error: $(cat rbatch.txt)"

# Checkpoints: an uninterrupted run, then one killed at step 7 and resumed.
ck=(--train-samples 256 --epochs 2 --checkpoint-every 3)
common=("${base[@]}")
run_mpi 2 "${common[@]}" "${ck[@]}" --checkpoint-dir full > full.txt || fail "uninterrupted run failed"
final=$(ls full | tail -1)
[[ $final == step-00000016.ckpt ]] || fail "final checkpoint is $final, expected step-00000016.ckpt"
status=0
run_mpi 2 "${common[@]}" "${ck[@]}" --checkpoint-dir cut --raise-at 1:8:KILL > cut.txt 2>&1 || status=$?
[[ $status -ne 0 && $status -ne 124 ]] || fail "the killed run exited with $status (124: it hung)"
[[ ! -e cut/$final ]] || fail "the killed run wrote the final checkpoint"
run_mpi 2 "${common[@]}" "${ck[@]}" --checkpoint-dir cut --resume > resumed.txt || fail "resume failed"
grep -q "resumed from .*step-00000006.ckpt" resumed.txt || fail "did not resume from step 6: $(cat resumed.txt)"
cmp full/$final cut/$final || fail "the resumed run's final checkpoint differs from the uninterrupted one"

# A corrupt newest checkpoint is refused and the one before it used.
rm cut/$final cut/step-00000015.ckpt
"$PYTHON" -c "
import sys
p = 'cut/step-00000012.ckpt'
b = bytearray(open(p, 'rb').read()); b[len(b) // 2] ^= 0xFF; open(p, 'wb').write(b)"
run_mpi 3 "${common[@]}" "${ck[@]}" --checkpoint-dir cut --resume > again.txt 2>&1 || fail "resume at 3 ranks failed"
grep -q "step-00000012.ckpt is corrupt" again.txt || fail "corrupt checkpoint not reported: $(cat again.txt)"
grep -q "resumed from .*step-00000009.ckpt" again.txt || fail "did not fall back to step 9: $(cat again.txt)"
[[ -e cut/$final ]] || fail "the run resumed at 3 ranks wrote no final checkpoint"
# Another learning rate is another run: refused, naming the option, not resumed or restarted.
before=$(ls cut)
expect_fail_with "was written with --lr 0.01, this run has --lr 0.02" \
  train --test-samples 128 --batch 32 --threads 1 --seed 3 --lr 0.02 "${ck[@]}" --checkpoint-dir cut --resume
[[ $(ls cut) == "$before" ]] || fail "the refused resume changed the checkpoint directory"

# Bad input.
expect_fail_with "nowhere/train-images-idx3-ubyte.gz" train --data-dir nowhere
mkdir fake && printf 'not an idx file' | gzip > fake/train-images-idx3-ubyte.gz
cp /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz /usr/share/datasets/fashion-mnist/t10k* fake/
expect_fail_with "not an IDX file" train --data-dir fake
expect_fail_with "--grid 2,1,1,1,1 has 2 ranks but the job has 1" train --grid 2,1,1,1,1
expect_fail_with "--resume needs --checkpoint-dir" train --resume
expect_fail_with "--epochs 0" train --epochs 0
expect_fail_with "--compute model" train --compute model
expect_fail_with "network 'vgg16' takes 3x224x224 inputs" train --network vgg16
# Bad networks: one line naming the layer. A reference to a later layer (what a cycle would need),
# a residual add of another shape, an unknown layer type, pooling straight on the input.
bad_net() {  # NAME LAYERS-JSON
  printf '{"name": "%s", "input": {"C": 1, "H": 28, "W": 28}, "layers": [%s]}\n' "$1" "$2" > "$1.json"
}
bad_net cycle '{"type": "conv", "name": "c1", "K": 4, "R": 3, "S": 3, "pad": 1, "input": "c2"},
  {"type": "conv", "name": "c2", "K": 4, "R": 3, "S": 3, "pad": 1}, {"type": "flatten"}, {"type": "fc", "K": 10}, {"type": "softmax_xent"}'
expect_fail_with "layers[0] 'c1' (conv): input 'c2' names no earlier layer" train --network cycle.json
bad_net mismatch '{"type": "conv", "name": "c1", "K": 4, "R": 3, "S": 3, "pad": 1},
  {"type": "conv", "name": "c2", "K": 8, "R": 3, "S": 3, "pad": 1}, {"type": "relu", "name": "add", "residual": "c1"},
  {"type": "flatten"}, {"type": "fc", "K": 10}, {"type": "softmax_xent"}'
expect_fail_with "layers[2] 'add' (relu): residual 'c1' has output 4x28x28 but the input is 8x28x28" train --network mismatch.json
bad_net unknown '{"type": "conv", "name": "c1", "K": 4, "R": 3, "S": 3}, {"type": "dropout", "name": "drop"}'
expect_fail_with "layers[1] 'drop': unknown layer type 'dropout'" train --network unknown.json
bad_net poolfirst '{"type": "max_pool", "name": "p0", "window": 2}, {"type": "flatten"}, {"type": "fc", "K": 10}, {"type": "softmax_xent"}'
expect_fail_with "layer 0 'p0' (max_pool) reads the network input" train --network poolfirst.json
expect_fail_with "--mem-per-rank 2.0 MiB: training fmnist at batch 64 on 1 ranks needs at least" train --mem-per-rank 2MiB
expect_fail_with "--reproducible runs without --mem-per-rank" train --reproducible --mem-per-rank 64MiB
expect_fail_with "--reproducible runs data-parallel grids; --family channel_filter" train --reproducible --family channel_filter
echo "train: ok"
