#!/usr/bin/python3
"""Exports torchvision models to ONNX and plans each with `convgrid plan --network X.onnx` (issue
#17): batch 256 on P = 1024 by default. For each model it prints the plan's words against data
parallelism and against the lower bound; for resnet50 and vgg16 it also plans the built-in network
of the same name and checks that every convolution and fully connected layer gets the same grid,
panels and words (the layers are matched by shape: the built-in resnet50 lists a block's projection
before its main path, torchvision after, and has no batch normalization, which is not a compute
layer). Models convgrid cannot express yet must fail with the importer's one-line refusal (the
first unsupported node in graph order).

    /usr/bin/python3 bench/onnx_models.py --convgrid build/convgrid [--models resnet18,vgg16]

Models are exported with random weights (weights=None), in training mode (batch normalization stays
a layer; dropout is exported and removed by the importer), opset 13, to --dir (default /tmp/onnx-models).
Needs python3-torch, python3-torchvision and python3-onnx (bash scripts/setup.sh --with-torch).
Exit status 1 when a plan differs from the built-in or a model fails in an unexpected way.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import warnings

# Expected outcome: "plan" (imports and plans), or the text the one-line refusal must contain.
MODELS = {
    "resnet18": "plan",
    "resnet50": "plan",
    "vgg16": "plan",
    "mobilenet_v2": "plan",
    "resnext50_32x4d": "group=32 is not supported yet",
    "densenet121": "Concat (concatenation along channels) is not supported yet",
    # torchvision's GoogLeNet pools with ceil_mode=True (a larger output than convgrid's floor)
    # before its first Concat.
    "googlenet": "ceil_mode=1 on input 64x112x112 gives a larger output",
}
BUILTIN = {"resnet50": "resnet50", "vgg16": "vgg16"}


def export(name, path):
    import torch
    import torchvision

    if os.path.exists(path):
        return
    kwargs = {"aux_logits": False, "init_weights": False} if name == "googlenet" else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.zeros(2, 3, 224, 224), path, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "N"}},
                          opset_version=13, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)


def plan(convgrid, network, out, args):
    cmd = [convgrid, "plan", "--network", network, "--batch", str(args.batch), "--procs",
           str(args.procs), "--passes", args.passes, "--json", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def compute_layers(plan_json):
    """The multiset of (shape, grid, panels, words of each pass) of the compute layers."""
    rows = []
    for l in plan_json["layers"]:
        words = tuple(sorted((p, f["recv_words_max"]) for p, f in l["passes"].items()))
        rows.append((l["shape"], tuple(l["grid"]), l["panels"], words))
    return collections.Counter(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--convgrid", default="build/convgrid")
    p.add_argument("--dir", default="/tmp/onnx-models")
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--procs", type=int, default=1024)
    p.add_argument("--passes", default="train", choices=["fwd", "train"])
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    failures = 0
    print(f"convgrid plan at batch {a.batch} on P = {a.procs}, passes {a.passes}")
    print(f"{'model':<16} {'layers':>6} {'words':>14} {'data-par':>14} {'dp/plan':>8} {'bound':>14} "
          f"{'plan/bound':>10}  built-in")
    for name in a.models.split(","):
        onnx_path = os.path.join(a.dir, name + ".onnx")
        export(name, onnx_path)
        out = os.path.join(a.dir, name + ".plan.json")
        rc, text = plan(a.convgrid, onnx_path, out, a)
        expected = MODELS[name]
        if expected != "plan":
            ok = rc != 0 and expected in text and len(text.splitlines()) == 1
            failures += not ok
            print(f"{name:<16} refused{'' if ok else ' UNEXPECTEDLY'}: {text}")
            continue
        if rc != 0:
            failures += 1
            print(f"{name:<16} FAILED: {text}")
            continue
        with open(out) as f:
            got = json.load(f)
        t = got["totals"]
        dp, words, bound = t["data_parallel_words"], t["recv_words_max"], t["lower_bound_words"]
        same = ""
        if name in BUILTIN:
            ref_out = os.path.join(a.dir, name + ".builtin.plan.json")
            rc2, text2 = plan(a.convgrid, BUILTIN[name], ref_out, a)
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
        print(f"{name:<16} {len(got['layers']):>6} {words:>14} {dp if dp is not None else 'n/a':>14} "
              f"{(dp / words if dp else 0):>8.2f} {bound:>14.0f} {words / bound:>10.2f}  {same}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
