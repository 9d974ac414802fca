#!/usr/bin/env bash
# The race of issue 6 (docs/race.md): trains the built-in `fmnist` network on Fashion-MNIST with
# PyTorch DDP (bench/race_pytorch.py, gloo, 2 processes x 1 thread) and with `convgrid train`
# (mpirun, 2 ranks x 1 thread), the same epochs, batch, optimiser and seed, both with the glibc
# malloc settings of MACHINE.md, then prints samples/s and test accuracy per epoch for both and
# the speed ratio convgrid/pytorch. Writes pytorch.{json,txt}, convgrid.{json,txt} and race.txt
# (the table) to --out.
#
# Usage: bench/race.sh [--network fmnist|resnet-fmnist] [--epochs 3] [--batch 64]
#                      [--train-samples K] [--test-samples K]
#                      [--out docs/results/race] [--lr 0.02] [--momentum 0.9]
#                      [--weight-decay 5e-4] [--seed 1] [--data-dir DIR]
#                      [--lr-schedule constant|cosine] [--warmup-epochs X] [--augment]
#                      [--data fashion-mnist|synthetic]
#                      [--torch-channels-last] [--only pytorch|convgrid|table] [--target 1.3]
#   --target R             the speed ratio the table checks (issue 6: 1.3; with synthetic data only
#                          the speed is compared, the labels being random)
#   --augment              random crops (padding 2) and flips of the training images on both sides
#   --only SIDE            run one side; the table then uses the other side's JSON already in --out
#                          (--only table: run neither, print the table of the JSON files in --out)
#   --torch-channels-last  PyTorch in channels-last memory format (default: its usual NCHW)
set -euo pipefail
cd "$(dirname "$0")/.."

epochs=3 batch=64 lr=0.02 momentum=0.9 weight_decay=5e-4 seed=1
train_samples="" test_samples="" data_dir="" out=docs/results/race only=""
network=fmnist lr_schedule=constant warmup_epochs=0 augment=0 data=fashion-mnist target=1.3
torch_extra=()
procs=2  # the race is 2 processes x 1 thread on the 2 cores of these machines

die() { echo "race: error: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  opt=$1
  shift
  case "$opt" in
    --torch-channels-last) torch_extra+=(--channels-last); continue ;;
    --augment) augment=1; continue ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --epochs|--batch|--lr|--momentum|--weight-decay|--seed|--train-samples|--test-samples|--data-dir|--out|--only) ;;
    --network|--lr-schedule|--warmup-epochs|--data|--target) ;;
    *) die "unknown argument '$opt' (see --help)" ;;
  esac
  [ $# -ge 1 ] || die "$opt needs a value"
  value=$1
  shift
  case "$opt" in
    --epochs) epochs=$value ;;
    --batch) batch=$value ;;
    --lr) lr=$value ;;
    --momentum) momentum=$value ;;
    --weight-decay) weight_decay=$value ;;
    --seed) seed=$value ;;
    --train-samples) train_samples=$value ;;
    --test-samples) test_samples=$value ;;
    --data-dir) data_dir=$value ;;
    --out) out=$value ;;
    --only) only=$value ;;
    --network) network=$value ;;
    --lr-schedule) lr_schedule=$value ;;
    --warmup-epochs) warmup_epochs=$value ;;
    --data) data=$value ;;
    --target) target=$value ;;
  esac
done
case "$only" in ""|pytorch|convgrid|table) ;; *) die "--only $only: expected pytorch, convgrid or table" ;; esac
run_pytorch=1 run_convgrid=1
[ "$only" = convgrid ] && run_pytorch=0
[ "$only" = pytorch ] && run_convgrid=0
[ "$only" = table ] && run_pytorch=0 run_convgrid=0

# Fail before anything runs when a side cannot.
if [ "$run_convgrid" -eq 1 ]; then
  [ -x build/convgrid ] || die "build/convgrid is missing: build it first (bash scripts/build.sh convgrid_cli)"
  ./build/convgrid train --help 2>/dev/null | grep -q -- "--weight-decay" ||
    die "build/convgrid has no 'train' command with --weight-decay: rebuild it (bash scripts/build.sh convgrid_cli)"
  command -v mpirun >/dev/null || die "mpirun is missing (bash scripts/setup.sh)"
fi
if [ "$run_pytorch" -eq 1 ]; then
  # Debian's torch, with OpenBLAS: without it libtorch runs the fully connected layers on the
  # reference BLAS (~3 instead of ~100 GFLOP/s here), which would handicap PyTorch.
  if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null ||
     ! dpkg-query -W -f='${Status}' libopenblas0 2>/dev/null | grep -q "install ok installed"; then
    bash scripts/setup.sh --with-torch
  fi
fi

# Both sides: one thread per process, and the malloc settings of MACHINE.md (a fresh page costs
# ~12 us here; PyTorch DDP measured 305-374 ms/step with them, 587 ms without).
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
export OMP_NUM_THREADS=1
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

common=(--epochs "$epochs" --batch "$batch" --lr "$lr" --momentum "$momentum" --weight-decay "$weight_decay"
        --seed "$seed" --network "$network" --lr-schedule "$lr_schedule" --warmup-epochs "$warmup_epochs"
        --data "$data")
torch_augment=() convgrid_augment=()
[ "$augment" -eq 1 ] && torch_augment=(--augment) convgrid_augment=(--crop-padding 2 --flip)
[ -n "$train_samples" ] && common+=(--train-samples "$train_samples")
[ -n "$test_samples" ] && common+=(--test-samples "$test_samples")
[ -n "$data_dir" ] && common+=(--data-dir "$data_dir")

mkdir -p "$out"
if [ "$run_pytorch" -eq 1 ]; then
  rm -f "$out/pytorch.json"
  echo "== PyTorch DDP (gloo), $procs processes x 1 thread"
  # OPENBLAS_CORETYPE=Haswell (set on these machines) halves OpenBLAS sgemm: not for this run.
  env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=1 \
    /usr/bin/python3 bench/race_pytorch.py "${common[@]}" --procs "$procs" "${torch_extra[@]}" "${torch_augment[@]}" \
    --json "$out/pytorch.json" 2>&1 | tee "$out/pytorch.txt"
  echo
fi
if [ "$run_convgrid" -eq 1 ]; then
  rm -f "$out/convgrid.json"
  echo "== convgrid, $procs ranks x 1 thread"
  mpirun -np "$procs" --bind-to core -x GLIBC_TUNABLES -x OMP_NUM_THREADS \
    ./build/convgrid train "${common[@]}" "${convgrid_augment[@]}" --threads 1 --json "$out/convgrid.json" 2>&1 |
    tee "$out/convgrid.txt"
  echo
fi

# The table, from the two JSON files (standard library only).
if [ -n "$only" ] && [ "$only" != table ] && { [ ! -f "$out/pytorch.json" ] || [ ! -f "$out/convgrid.json" ]; }; then
  echo "race: no table: $out holds only the $only side (run the other with --only)"
  exit 0
fi
/usr/bin/python3 - "$out/pytorch.json" "$out/convgrid.json" "$target" <<'EOF' | tee "$out/race.txt"
import json
import sys

runs = {}
target = float(sys.argv[3])
for name, path in zip(("pytorch", "convgrid"), sys.argv[1:3]):
    try:
        with open(path) as f:
            runs[name] = json.load(f)
    except FileNotFoundError:
        sys.exit(f"race: error: {path} is missing: run that side (bench/race.sh --only {name})")

pt, cg = runs["pytorch"], runs["convgrid"]
for key in ("procs", "batch", "lr", "momentum", "weight_decay", "seed", "train_samples", "test_samples"):
    a, b = pt.get(key), cg.get(key)
    if a is not None and b is not None and abs(float(a) - float(b)) > 1e-6 * max(1.0, abs(float(a))):
        print(f"race: warning: the runs differ in {key}: pytorch {a}, convgrid {b}")
if len(pt["epochs"]) != len(cg["epochs"]):
    print(f"race: warning: pytorch ran {len(pt['epochs'])} epochs, convgrid {len(cg['epochs'])}")

print(f"{cg.get('network', 'fmnist')} on {pt.get('data', 'fashion-mnist')}: {pt['procs']} processes x 1 thread, batch {pt['batch']}, "
      f"{pt['train_samples']} training and {pt['test_samples']} test samples, lr {pt['lr']}, "
      f"momentum {pt['momentum']}, weight decay {pt['weight_decay']}, seed {pt['seed']}")
print(f"pytorch: torch {pt.get('torch_version')}, oneDNN {'yes' if pt.get('mkldnn_available') else 'no'}, "
      f"{pt.get('memory_format', 'nchw')}")
print()
print(f"{'framework':<10} {'epoch':>5} {'samples/s':>10} {'train loss':>10} {'test loss':>9} {'test accuracy':>13}")
for name in ("pytorch", "convgrid"):
    for e in runs[name]["epochs"]:
        print(f"{name:<10} {e['epoch']:>5} {e['samples_per_s']:>10.1f} {e['train_loss']:>10.4f} "
              f"{e['test_loss']:>9.4f} {e['test_accuracy']:>13.4f}")
print()
print(f"{'epoch':>5} {'speed convgrid/pytorch':>22} {'accuracy convgrid - pytorch':>27}")
pairs = list(zip(pt["epochs"], cg["epochs"]))
for p, c in pairs:
    print(f"{p['epoch']:>5} {c['samples_per_s'] / p['samples_per_s']:>21.2f}x "
          f"{c['test_accuracy'] - p['test_accuracy']:>+27.4f}")
if pairs:
    mean_pt = sum(p["samples_per_s"] for p, _ in pairs) / len(pairs)
    mean_cg = sum(c["samples_per_s"] for _, c in pairs) / len(pairs)
    ratio = mean_cg / mean_pt
    print(f"{'mean':>5} {ratio:>21.2f}x   (mean samples/s: convgrid {mean_cg:.1f}, pytorch {mean_pt:.1f})")
    last_p, last_c = pairs[-1]
    # Synthetic labels are random: their accuracy says nothing, and only the speed is compared.
    synthetic = pt.get("data") == "synthetic"
    met = ratio >= target and (synthetic or last_c["test_accuracy"] >= last_p["test_accuracy"])
    what = "" if synthetic else (f" at equal or better test accuracy after {len(pairs)} "
                                 f"epoch{'s' if len(pairs) != 1 else ''}")
    print(f"target (>= {target:g}x the samples/s{what}): {'met' if met else 'not met'}")
EOF
