"""The table of bench/train_scale.sh: per run, the training step's simulated time (each step's,
the slowest rank's), the model's step on the same plan (the whole step, `totals.step_time_s`: its
layers, moves and the loss's and biases' all-reduces; `time_s`, layers and moves, in plans written
before the plan had the whole step), and `convgrid step`'s simulated step on it when
docs/results/scale has that run (bench/scale.sh).

Usage: python3 bench/train_scale_report.py OUT_DIR
"""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])


def grids(layers):
    """Each layer's grid as "Pn,Pk,Pc,Ph,Pw" (plan and train write lists, step a string)."""
    return [l["grid"] if isinstance(l["grid"], str) else ",".join(map(str, l["grid"])) for l in layers]


scale = pathlib.Path("docs/results/scale")
print("| platform | P | plan | grids as `step`'s | words equal the model on every rank | train step ms (each) "
      "| model step ms | train / model | `step` simulated ms | train / `step` |")
print("|---|---|---|---|---|---|---|---|---|---|")
def order(path):
    """platform, P, then plan: "a-b-256" after "a-b-64"."""
    platform, plan, procs = path.stem.rsplit("-", 2)
    return platform, int(procs) if procs.isdigit() else 0, plan


for run in sorted((p for p in out.glob("*.json") if not p.name.endswith(".plan.json")), key=order):
    if run.name.endswith(".plan.json"):
        continue
    platform, plan, procs = run.stem.rsplit("-", 2)
    j = json.loads(run.read_text())
    model = json.loads(run.with_suffix(".plan.json").read_text())
    plan_grids = grids(model["layers"])
    step_times = [s["seconds"] * 1e3 for s in j["steps"]]
    equal = all(n["equal_on_every_rank"] for n in j["nodes"])
    model_ms = model["totals"].get("step_time_s", model["totals"]["time_s"]) * 1e3
    train_ms = step_times[-1]
    step_run = scale / f"{platform}-{plan}-{procs}.json"
    step_ms, same = "-", "-"
    if step_run.exists():
        s = json.loads(step_run.read_text())
        step_ms = s["step_seconds"] * 1e3
        same = "yes" if grids(s["layers"]) == plan_grids else "no"
    train_grids = grids(j["layers"])
    assert train_grids == plan_grids, (run, "train ran other grids than plan gives")
    print(f"| {platform} | {procs} | {plan} | {same} | {'yes' if equal else 'NO'} | "
          f"{', '.join(f'{t:.1f}' for t in step_times)} | {model_ms:.1f} | {train_ms / model_ms:.2f} | "
          + (f"{step_ms:.1f} | {train_ms / step_ms:.3f} |" if step_run.exists() else "- | - |"))
