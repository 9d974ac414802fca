#!/usr/bin/env python3
"""The tables of docs/scale.md from bench/scale.sh's output: for every run, simulated against
modelled step time, whole and phase by phase (each pass summed over the layers, and the
redistributions), and the planner's advantage over data parallelism and the best batch x spatial
hybrid in simulated time; and the plot of both times against P (gnuplot, when installed).

The modelled times are the current model's: `convgrid plan --network resnet50 --plan PLAN
--passes train` (build/convgrid) for each run's platform, plan and P, after checking that it
chooses the grids and panels the run ran. A simulated time does not depend on the model, so runs
made before a change of the model compare with the current one (the modelled figures a run's own
JSON carries are those of the binary that ran it).

Usage: bench/scale_report.py OUT_DIR   (reads OUT_DIR/scale.csv and OUT_DIR/*.json, writes
OUT_DIR/scale.md, prints it, and writes OUT_DIR/time.svg)"""
import csv
import json
import os
import shutil
import subprocess
import sys

out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "scale.csv"))))
order = {"planner": 0, "time": 1, "data": 2, "hybrid": 3}
rows.sort(key=lambda r: (r["platform"], int(r["procs"]), order.get(r["plan"], 9)))


def current_model(run, platform, plan, procs):
    """The current model's plan for the run: {layer name: plan layer}, and its step time."""
    path = os.path.join(out, f".model-{platform}-{plan}-{procs}.json")
    # "time": the planner with --objective time (bench/scale.sh)
    family = ["--plan", "planner", "--objective", "time"] if plan == "time" else ["--plan", plan]
    subprocess.run(["build/convgrid", "plan", "--network", run["network"], "--batch", str(run["batch"]),
                    "--procs", str(procs), "--passes", "train", "--profile", run["profile"], *family,
                    "--json", path], check=True, stdout=subprocess.DEVNULL)
    model = json.load(open(path))
    os.remove(path)
    layers = {layer["name"]: layer for layer in model["layers"]}
    for layer in run["layers"]:
        m = layers[layer["name"]]
        ran = (layer["grid"], layer["panels"])
        planned = (",".join(str(e) for e in m["grid"]), m["panels"])
        if ran != planned:
            sys.exit(f"{platform} {plan} P={procs}: layer {layer['name']} ran {ran}, the model plans {planned}")
    return layers, model["totals"]["time_s"]


def phases(run, model):
    sim, modelled = {}, {}
    for layer in run["layers"]:
        m = model[layer["name"]]
        for p in layer["passes"]:
            if p["pass"] not in m["passes"]:
                continue  # a run from before the first layer was planned without backward-data
            sim[p["pass"]] = sim.get(p["pass"], 0) + p["seconds"]
            modelled[p["pass"]] = modelled.get(p["pass"], 0) + m["passes"][p["pass"]]["time_s"]
        sim["edges"] = sim.get("edges", 0) + layer["redistribution_seconds"]
        modelled["edges"] = modelled.get("edges", 0) + m["redistribution_time_s"]
    return {k: f"{sim[k] / modelled[k]:.2f}" if modelled[k] > 0 else "-" for k in sim}


lines = ["| platform | P | plan | words equal the model on every rank | simulated step ms | modelled step ms | "
         "simulated / modelled | forward | backward-data | backward-weights | redistributions | wall s | peak memory GB |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
done = {}
for r in rows:
    name = f"{r['platform']}-{r['plan']}-{r['procs']}"
    mem = f"{int(r['peak_pss_kb']) / 1e6:.1f}" if r.get("peak_pss_kb", "").isdigit() else "-"
    if r["finished"] != "yes":
        lines.append(f"| {r['platform']} | {r['procs']} | {r['plan']} | not finished: {r['finished']} | | | | | | | | {r['wall_s']} | {mem} |")
        continue
    sim = float(r["step_s"])
    done[(r["platform"], int(r["procs"]), r["plan"])] = sim
    run = json.load(open(os.path.join(out, name + ".json")))
    layers, model = current_model(run, r["platform"], r["plan"], int(r["procs"]))
    r["model_step_s"] = model
    ph = phases(run, layers)
    lines.append(f"| {r['platform']} | {r['procs']} | {r['plan']} | {r['words_equal_model']} | {sim * 1e3:.1f} | "
                 f"{model * 1e3:.1f} | {sim / model:.2f} | {ph['forward']} | {ph['backward_data']} | "
                 f"{ph['backward_weights']} | {ph['edges']} | {r['wall_s']} | {mem} |")
lines += ["", "| platform | P | planner | its step, simulated | best other plan, simulated | planner's advantage |",
          "|---|---|---|---|---|---|"]
for (platform, procs, plan), sim in sorted(done.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][2], 9))):
    if plan not in ("planner", "time"):
        continue
    others = {p: done[(platform, procs, p)] for p in ("data", "hybrid") if (platform, procs, p) in done}
    if not others:
        continue
    best = min(others, key=others.get)
    objective = "fewest words" if plan == "planner" else "least modelled time"
    lines.append(f"| {platform} | {procs} | {objective} | {sim * 1e3:.1f} ms | {others[best] * 1e3:.1f} ms ({best}) | "
                 f"{others[best] / sim:.2f}x |")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "scale.md"), "w").write(text)
print(text)

# Simulated (solid) against modelled (dashed) step time, per platform and plan, against P.
series, blocks = [], []
for platform in sorted({r["platform"] for r in rows}):
    for plan in ("planner", "time", "data", "hybrid"):
        pts = sorted((int(r["procs"]), float(r["step_s"]), float(r["model_step_s"]))
                     for r in rows if r["platform"] == platform and r["plan"] == plan and r["finished"] == "yes")
        if not pts:
            continue
        for kind, col in (("simulated", 1), ("modelled", 2)):
            blocks.append("\n".join(f"{q[0]} {q[col] * 1e3}" for q in pts) + "\ne")
            series.append(f"'-' with linespoints title '{platform} {plan} {kind}'" + (" dt 2" if kind == "modelled" else ""))
if series and shutil.which("gnuplot"):
    script = (f"set terminal svg size 900,560\nset output '{out}/time.svg'\nset logscale xy 2\n"
              "set xlabel 'ranks P'\nset ylabel 'ResNet-50 training step, batch 256 (ms)'\nset key outside\n"
              "plot " + ", ".join(series) + "\n" + "\n".join(blocks) + "\n")
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
