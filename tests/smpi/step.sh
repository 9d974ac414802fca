# convgrid step under smpirun (SMPI build): one training step of a network's conv and fc layers
# on their planned grids, with the redistributions between them, at 64 simulated ranks; with
# --compute model (kernels skipped, their modelled flops injected) and with --compute run (real
# kernels), every rank's words equal the model, and simulated time is reported beside the model.
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
echo "step under smpirun: words equal the model on every rank (64 ranks, 3 plans, model and run)"
