#!/usr/bin/python3
"""Exports torchvision models to ONNX and plans each with `convgrid plan --network X.onnx` (issue
#17): a training step at batch 256 on P = 256 and 1024 by default. For each model and P it prints
the plan's words (the busiest rank's, summed over layers, passes and redistributions) against data
parallelism, against the best batch x spatial hybrid (`--plan hybrid`) and against the lower bound,
and, over the layers whose bound is at least half their words, the median of words / bound;
mobilenet_v2 at P = 1024 must beat the hybrid by 2x (issue #17's target). For
resnet50 and vgg16 it also plans the built-in network of the same name and checks that every
convolution and fully connected layer gets the same grid, panels and words (the layers are matched
by shape: the built-in resnet50 lists a block's projection before its main path, torchvision after,
and has no batch normalization, which is not a compute layer). A model convgrid could not express
would be listed with the text of the importer's one-line refusal it must fail with.

    /usr/bin/python3 bench/onnx_models.py --convgrid build/convgrid [--models resnet18,vgg16] [--procs 1024]
    /usr/bin/python3 bench/onnx_models.py --markdown docs/results/models.md   # the table of docs/models.md
    /usr/bin/python3 bench/onnx_models.py --models all --markdown docs/results/models-all.md

Models are exported with random weights (weights=None), in training mode (batch normalization stays
a layer; dropout is exported and removed by the importer), opset 13, to --dir (default /tmp/onnx-models).
Needs python3-torch, python3-torchvision and python3-onnx (bash scripts/setup.sh --with-torch).
Exit status 1 when a plan differs from the built-in, a target is missed or a model fails in an
unexpected way.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import warnings

# Expected outcome: "plan" (imports and plans), or the text the one-line refusal must contain.
# The first seven are issue #17's, planned by default; `--models all` adds the others.
MODELS = {
    "resnet18": "plan",
    "resnet50": "plan",
    "vgg16": "plan",
    "mobilenet_v2": "plan",
    "resnext50_32x4d": "plan",
    "densenet121": "plan",
    "googlenet": "plan",
    "alexnet": "plan",
    "vgg11": "plan",
    "vgg19_bn": "plan",
    "resnet34": "plan",
    "resnet101": "plan",
    "wide_resnet50_2": "plan",
    "resnext101_32x8d": "plan",
    "densenet169": "plan",
    "squeezenet1_0": "plan",
    "squeezenet1_1": "plan",
    "regnet_x_400mf": "plan",
    "inception_v3": "plan",  # avg_pool2d(padding=1): a Pad of zeros folded into the AveragePool
    "mnasnet1_0": "plan",  # x.mean([2, 3]): ReduceMean
    "mobilenet_v3_small": "plan",  # squeeze-and-excitation (scale layers), Hardswish, Hardsigmoid
    "regnet_y_400mf": "plan",  # squeeze-and-excitation with a Sigmoid gate
    # The channel shuffle views the channels as 2 x C/2 and transposes them: a 5-D Reshape.
    "shufflenet_v2_x1_0": "node '/stage2/stage2.0/Reshape' (Reshape): shape [N,2,58,28,28] is not "
                          "supported",
}
ISSUE_MODELS = list(MODELS)[:7]
# Not listed: efficientnet_b0 and convnext_tiny, which torch cannot export in training mode
# (stochastic depth draws with Bernoulli, which has no ONNX export).
BUILTIN = {"resnet50": "resnet50", "vgg16": "vgg16"}
# Issue #17's target: at least this many times fewer words than the best batch x spatial hybrid.
HYBRID_TARGETS = {("mobilenet_v2", 1024): 2.0}


def export(name, path):
    import torch
    import torchvision

    if os.path.exists(path):
        return
    inception = name in ("googlenet", "inception_v3")
    kwargs = {"aux_logits": False, "init_weights": False} if inception else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    side = 299 if name == "inception_v3" else 224
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.zeros(2, 3, side, side), path, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "N"}},
                          opset_version=13, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)


def plan(convgrid, network, out, args, procs, strategy="planner"):
    cmd = [convgrid, "plan", "--network", network, "--batch", str(args.batch), "--procs",
           str(procs), "--passes", args.passes, "--plan", strategy, "--json", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def median(values):
    v = sorted(values)
    if not v:
        return None
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def layer_ratios(plan_json):
    """words / bound of each compute layer (all passes) whose bound is at least half its words."""
    ratios = []
    for l in plan_json["layers"]:
        words = sum(f["recv_words_max"] for f in l["passes"].values())
        bound = sum(f["lower_bound_words"] for f in l["passes"].values())
        if words > 0 and bound >= 0.5 * words:
            ratios.append(words / bound)
    return ratios


def compute_layers(plan_json):
    """The multiset of (shape, grid, panels, words of each pass) of the compute layers."""
    rows = []
    for l in plan_json["layers"]:
        words = tuple(sorted((p, f["recv_words_max"]) for p, f in l["passes"].items()))
        rows.append((l["shape"], tuple(l["grid"]), l["panels"], words))
    return collections.Counter(rows)


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a and b else "n/a"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--convgrid", default="build/convgrid")
    p.add_argument("--dir", default="/tmp/onnx-models")
    p.add_argument("--models", default=",".join(ISSUE_MODELS),
                   help="comma-separated, or 'all' (default: issue #17's seven)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--procs", default="256,1024", help="comma-separated rank counts")
    p.add_argument("--passes", default="train", choices=["fwd", "train"])
    p.add_argument("--markdown", help="also write the table as Markdown to this file")
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    failures = 0
    header = ["model", "P", "conv+fc layers", "words", "data-parallel", "dp/plan", "hybrid",
              "hybrid/plan", "bound", "plan/bound", "median layer words/bound (layers)", "built-in"]
    rows, refusals = [], []
    print(f"convgrid plan at batch {a.batch}, passes {a.passes}")
    print(" | ".join(header))
    for name in list(MODELS) if a.models == "all" else a.models.split(","):
        onnx_path = os.path.join(a.dir, name + ".onnx")
        export(name, onnx_path)
        for procs in [int(x) for x in a.procs.split(",")]:
            out = os.path.join(a.dir, f"{name}.P{procs}.plan.json")
            rc, text = plan(a.convgrid, onnx_path, out, a, procs)
            expected = MODELS[name]
            if expected != "plan":
                ok = rc != 0 and expected in text and len(text.splitlines()) == 1
                failures += not ok
                line = f"{name} refused{'' if ok else ' UNEXPECTEDLY'}: {text}"
                print(line)
                refusals.append(line)
                break
            if rc != 0:
                failures += 1
                print(f"{name} P={procs} FAILED: {text}")
                continue
            with open(out) as f:
                got = json.load(f)
            hybrid_out = os.path.join(a.dir, f"{name}.P{procs}.hybrid.json")
            rc_h, text_h = plan(a.convgrid, onnx_path, hybrid_out, a, procs, "hybrid")
            hybrid = None
            if rc_h == 0:
                with open(hybrid_out) as f:
                    hybrid = json.load(f)["totals"]["recv_words_max"]
            t = got["totals"]
            dp, words, bound = t["data_parallel_words"], t["recv_words_max"], t["lower_bound_words"]
            same = ""
            if name in BUILTIN:
                ref_out = os.path.join(a.dir, f"{name}.P{procs}.builtin.plan.json")
                rc2, text2 = plan(a.convgrid, BUILTIN[name], ref_out, a, procs)
                if rc2 != 0:
                    sys.exit(f"onnx_models: built-in {name}: {text2}")
                with open(ref_out) as f:
                    ref = json.load(f)
                a_layers, b_layers = compute_layers(got), compute_layers(ref)
                same = "equal" if a_layers == b_layers else "DIFFERENT"
                if a_layers != b_layers:
                    failures += 1
                    only_onnx = a_layers - b_layers
                    only_builtin = b_layers - a_layers
                    same += f" (only ONNX: {sorted(only_onnx)[:3]}; only built-in: {sorted(only_builtin)[:3]})"
            target = HYBRID_TARGETS.get((name, procs))
            if target is not None and (hybrid is None or hybrid < target * words):
                failures += 1
                same = (same + "; " if same else "") + f"MISSES the hybrid target {target}x"
            ratios = layer_ratios(got)
            m = median(ratios)
            row = [name, str(procs), str(len(got["layers"])), str(words),
                   str(dp) if dp is not None else "n/a", fmt_ratio(dp, words),
                   str(hybrid) if hybrid is not None else f"none ({text_h})", fmt_ratio(hybrid, words),
                   f"{bound:.0f}", fmt_ratio(words, bound),
                   f"{m:.3f} ({len(ratios)})" if m is not None else "n/a (0)", same or "-"]
            rows.append(row)
            print(" | ".join(row))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"Training step (forward, backward-data, backward-weights) at batch {a.batch}; "
                    "words are float32 elements the busiest rank receives, summed over layers, passes "
                    "and redistributions. Made by `bench/onnx_models.py`.\n\n")
            f.write("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
            for r in rows:
                f.write("| " + " | ".join(r) + " |\n")
            for line in refusals:
                f.write(f"\n{line}\n")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
