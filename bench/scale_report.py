#!/usr/bin/env python3
"""The tables of docs/scale.md from bench/scale.sh's output: for every run, simulated against
modelled step time, whole and phase by phase (each pass summed over the layers, and the
redistributions), and the planner's advantage over data parallelism and the best batch x spatial
hybrid in simulated time; and the plot of both times against P (gnuplot, when installed).

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
order = {"planner": 0, "data": 1, "hybrid": 2}
rows.sort(key=lambda r: (r["platform"], int(r["procs"]), order.get(r["plan"], 9)))


def phases(j):
    sim, model = {}, {}
    for layer in j["layers"]:
        for p in layer["passes"]:
            sim[p["pass"]] = sim.get(p["pass"], 0) + p["seconds"]
            model[p["pass"]] = model.get(p["pass"], 0) + p["model_seconds"]
        sim["edges"] = sim.get("edges", 0) + layer["redistribution_seconds"]
        model["edges"] = model.get("edges", 0) + layer["model_redistribution_seconds"]
    return {k: f"{sim[k] / model[k]:.2f}" if model[k] > 0 else "-" for k in sim}


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
    sim, model = float(r["step_s"]), float(r["model_step_s"])
    done[(r["platform"], int(r["procs"]), r["plan"])] = sim
    run = json.load(open(os.path.join(out, name + ".json")))
    ph = phases(run)
    if abs(run["model_step_seconds"] - model) > 1e-9:
        # The run predates a change of the model and scale.csv carries the current model's step
        # (docs/results/scale/README.md): its JSON's phases are the old model's.
        ph = {k: "-" for k in ph}
    lines.append(f"| {r['platform']} | {r['procs']} | {r['plan']} | {r['words_equal_model']} | {sim * 1e3:.1f} | "
                 f"{model * 1e3:.1f} | {sim / model:.2f} | {ph['forward']} | {ph['backward_data']} | "
                 f"{ph['backward_weights']} | {ph['edges']} | {r['wall_s']} | {mem} |")
lines += ["", "| platform | P | planner's step, simulated | best other plan, simulated | planner's advantage |",
          "|---|---|---|---|---|"]
for (platform, procs, plan), sim in sorted(done.items()):
    if plan != "planner":
        continue
    others = {p: done[(platform, procs, p)] for p in ("data", "hybrid") if (platform, procs, p) in done}
    if not others:
        continue
    best = min(others, key=others.get)
    lines.append(f"| {platform} | {procs} | {sim * 1e3:.1f} ms | {others[best] * 1e3:.1f} ms ({best}) | "
                 f"{others[best] / sim:.2f}x |")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "scale.md"), "w").write(text)
print(text)

# Simulated (solid) against modelled (dashed) step time, per platform and plan, against P.
series, blocks = [], []
for platform in sorted({r["platform"] for r in rows}):
    for plan in ("planner", "data", "hybrid"):
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
