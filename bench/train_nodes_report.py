#!/usr/bin/python3
"""Where a real training step's time goes, node by node, against the planner's model (docs/scale.md,
"Where the real step's time goes"). Reads NAME.json (`convgrid train --json`, whose nodes carry
the last training step's seconds) and NAME.plan.json (`convgrid plan --passes train --json` of the
same plan) and prints, for each compute layer, the seconds its node took (mean over ranks, forward
and backward, the moves into it included) against the model's (its passes and the redistributions
into it), the nodes the model has no layer for (the loss: the plan's whole step has its
all-reduces), and the words and time of the step against the plan's.

    /usr/bin/python3 bench/train_nodes_report.py docs/results/train-nodes/nvlink-gpu-time-64 [...]
"""
import json
import sys


def report(base):
    run = json.load(open(base + ".json"))
    plan = json.load(open(base + ".plan.json"))
    layers = {layer["name"]: layer for layer in plan["layers"]}
    step = run["steps"][-1]["seconds"]
    rows, others = [], []
    for node in run["nodes"]:
        mean = node["seconds"]["mean"]
        took = mean["forward"] + mean["backward"]
        layer = layers.get(node["name"])
        if layer is None:
            if took > 0:
                others.append((node["name"], node["kind"], took))
            continue
        model = sum(p["time_s"] for p in layer["passes"].values()) + layer["redistribution_time_s"]
        rows.append((node["name"], took, model))
    planned = run["planned"]
    planned_words = planned["layer_words"] + planned["redistribution_words"] + planned["norm_words"]
    print(f"## {base}\n")
    totals = plan["totals"]
    print(f"step {step * 1e3:.3f} ms simulated; model of the layers and moves {totals['time_s'] * 1e3:.3f} ms "
          f"({step / totals['time_s']:.3f}), of the whole step {totals['step_time_s'] * 1e3:.3f} ms "
          f"({step / totals['step_time_s']:.3f}: the loss's all-reduces {totals['loss_time_s'] * 1e6:.1f} us, "
          f"the biases' {totals['bias_time_s'] * 1e6:.1f} us); words {run['words_per_step']['measured']} "
          f"measured, {planned_words} in the layers and moves ({run['words_per_step']['measured'] - planned_words:+d}), "
          f"{totals['step_words']} in the whole step ({run['words_per_step']['measured'] - totals['step_words']:+d})\n")
    print("| node | kind | simulated (us) | model (us) | simulated - model (us) |")
    print("|---|---|---|---|---|")
    rows.sort(key=lambda r: -abs(r[1] - r[2]))
    for name, took, model in rows[:8]:
        print(f"| {name} | layer | {took * 1e6:.1f} | {model * 1e6:.1f} | {(took - model) * 1e6:+.1f} |")
    for name, kind, took in others:
        print(f"| {name} | {kind} | {took * 1e6:.1f} | - | {took * 1e6:+.1f} |")
    rest = sum(r[1] - r[2] for r in rows[8:])
    print(f"| the other {len(rows) - 8} layers | | | | {rest * 1e6:+.1f} |\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for base in sys.argv[1:]:
        report(base)
