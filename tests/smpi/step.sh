# convgrid step under smpirun (SMPI build): one training step of a network's conv and fc layers
# on their planned grids, with the redistributions between them, at 64 simulated ranks; with
# --compute model (kernels skipped, their modelled flops injected) and with --compute run (real
# kernels), every rank's words equal the model, and simulated time is reported beside the model.
# Then ResNet-50 with data parallelism in model mode, with and without SimGrid's collective
# temporaries folded (platforms/folded_collective_temporaries.cpp): its butterfly reduce-scatters
# fold, and every word and simulated time printed is the same.
# Usage: bash step.sh <path-to-convgrid of the SMPI build>
source "$(dirname "$0")/lib.bash"

for compute in model run; do
  for plan in planner data hybrid; do
    timeout 300 bash "$root/scripts/smpirun.sh" --platform ib100-cpu --np 64 "$convgrid" step --network fmnist \
      --batch 64 --plan "$plan" --compute "$compute" --json "$compute-$plan.json" > "$compute-$plan.txt" 2>&1 ||
      fail "step, compute $compute, plan $plan: $(tail -5 "$compute-$plan.txt")"
    grep -q "words equal the model on every rank: yes" "$compute-$plan.txt" ||
      fail "compute $compute, plan $plan: $(tail -3 "$compute-$plan.txt")"
    /usr/bin/python3 - "$compute-$plan.json" <<'PY' || fail "$compute-$plan.json: wrong report"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ranks"] == 64 and j["words_equal_model_on_every_rank"] is True, j
assert j["step_seconds"] > 0 and j["model_step_seconds"] > 0, j
assert all(l["words_max"] == l["model_words_max"] for l in j["layers"]), j["layers"]
PY
  done
done

for fold in 1 0; do
  CONVGRID_FOLD_TEMPORARIES=$fold CONVGRID_FOLD_REPORT=1 timeout 300 bash "$root/scripts/smpirun.sh" --platform ib100-cpu \
    --np 64 "$convgrid" step --network resnet50 --batch 64 --plan data --compute model > "fold$fold.txt" 2> "fold$fold.err" ||
    fail "resnet50 step, folding $fold: $(tail -5 "fold$fold.err")"
done
folded=$(sed -nE 's/^folded_collective_temporaries: ([0-9]+) buffers.*/\1/p' fold1.err)
[[ -n $folded && $folded -gt 0 ]] || fail "no collective temporary was folded: $(tail -3 fold1.err)"
! grep -q "^folded_collective_temporaries" fold0.err || fail "CONVGRID_FOLD_TEMPORARIES=0 still folded: $(cat fold0.err)"
cmp -s fold1.txt fold0.txt || fail "folding SimGrid's temporaries changed the step: $(diff fold1.txt fold0.txt | head -5)"
grep -q "words equal the model on every rank: yes" fold1.txt || fail "resnet50 step: $(tail -3 fold1.txt)"
echo "step under smpirun: words equal the model on every rank (64 ranks, 3 plans, model and run);" \
  "$folded collective temporaries folded without changing a resnet50 step"
