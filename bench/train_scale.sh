#!/usr/bin/env bash
# The real training step at scale (docs/scale.md, "The real training step"): `convgrid train` on
# synthetic data, ResNet-50 at batch 256, under smpirun in model mode (kernels skipped, their
# modelled flops injected). Unlike `convgrid step` (bench/scale.sh), this is the training loop
# itself: every layer (pooling, residual adds, the loss), SGD, no barrier between phases. Each run
# checks that every rank's words equal the model, layer by layer; the report sets each step's
# simulated time beside the model's step (`convgrid plan`'s time_s on the same plan) and beside
# `convgrid step`'s simulated step when bench/scale.sh has run that plan.
#
# Usage: bash bench/train_scale.sh [OUT_DIR]   (default docs/results/train-scale)
#   TRAIN_SCALE_PROCS      rank counts (default 64: 1.5-3 minutes a run here; 256: 8-17 minutes, 2-4.4 GB)
#   TRAIN_SCALE_PLATFORMS  platforms (default "ib100-cpu nvlink-gpu")
#   TRAIN_SCALE_PLANS      planner, data, hybrid, time (default "planner data")
#   TRAIN_SCALE_STEPS      training steps a run (default 2; the last is reported, the first also
#                          creates the fibres' communicators)
#   CONVGRID_SMPI_BUILD_DIR  the SMPI build to run (default build-smpi)
# In model mode the element-wise layers' local work (pooling, ReLU, batch norm, the adds, SGD) is
# skipped as the kernels are; it takes no simulated time (the model leaves it out too). Their
# moves and all-reduces run.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/train-scale}
procs=${TRAIN_SCALE_PROCS:-64}
platforms=${TRAIN_SCALE_PLATFORMS:-ib100-cpu nvlink-gpu}
plans=${TRAIN_SCALE_PLANS:-planner data}
steps=${TRAIN_SCALE_STEPS:-2}
mkdir -p "$out"
bash scripts/setup.sh
bash scripts/build_smpi.sh convgrid_cli > /dev/null
bash scripts/build.sh convgrid_cli > /dev/null  # build/convgrid plan: the model's step

# The flags that choose a plan's grids: train's, then plan's.
train_flags() {
  case $1 in
    planner) echo "--family any" ;; data) echo "--family data_parallel" ;;
    hybrid) echo "--family batch_spatial" ;; time) echo "--family any --objective time" ;;
    *) echo "train_scale.sh: unknown plan '$1'" >&2; exit 2 ;;
  esac
}
plan_flags() { if [[ $1 == time ]]; then echo "--plan planner --objective time"; else echo "--plan $1"; fi; }

status=0
for platform in $platforms; do
  for plan in $plans; do
    for p in $procs; do
      name="$platform-$plan-$p"
      echo "== $name"
      build/convgrid plan --network resnet50 --batch 256 --procs "$p" --passes train --profile "$platform" \
        $(plan_flags "$plan") --json "$out/$name.plan.json" > /dev/null || { status=1; continue; }
      start=$(date +%s)
      bash scripts/smpirun.sh --platform "$platform" --np "$p" "${CONVGRID_SMPI_BUILD_DIR:-build-smpi}/convgrid" train --network resnet50 \
        --data synthetic --batch 256 --train-samples $((256 * steps)) --test-samples 256 --compute model \
        --profile "$platform" $(train_flags "$plan") --progress lines --progress-every 1 --log-steps \
        --json "$out/$name.json" > "$out/$name.txt" 2>&1 || { echo "   failed: $(tail -2 "$out/$name.txt")"; status=1; }
      echo "   $(($(date +%s) - start)) s"
    done
  done
done
/usr/bin/python3 bench/train_scale_report.py "$out" > "$out/train-scale.md" || status=1
cat "$out/train-scale.md"
exit "$status"
