#!/usr/bin/python3
"""Independent check of convgrid against PyTorch, on layers and grids the tests do not use.

For each layer below and each grid of 1, 2, 3, 4 and 6 ranks whose extents fit the layer, writes
random x, w, dy as .npy files, runs

    mpirun -np P convgrid conv --shape S --grid G --input x.npy --weight w.npy --grad-output dy.npy
        --output y.npy --grad-input dx.npy --grad-weight dw.npy --json run.json

and compares y with torch.nn.functional.conv2d, dx and dw with autograd (y.backward(dy)); PyTorch
computes in float64 from the same float32 inputs, so the error shown is convgrid's own. Asymmetric
padding is applied with F.pad, as conv2d pads both sides alike. Prints one row per run: the
relative error of each pass (max |convgrid - torch| / max |torch|) and whether every rank received
exactly the words the cost model predicts (--json, passes.*.ranks[]). Exits 1 if any error is over
1e-4, any rank's words differ from the model, or a run fails.

Needs Debian's python3-torch and python3-numpy (apt-get install -y python3-torch python3-numpy);
run it with /usr/bin/python3:

    /usr/bin/python3 bench/compare_torch.py --convgrid build/convgrid
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

TOLERANCE = 1e-4

# Layers not used by the tests: asymmetric stride, padding and dilation; a 1x1 at stride 2 (rows
# and columns no output reads); a dilated 5x5 at stride 3; a small ResNet-like 3x3.
SHAPES = [
    "N=3,C=5,H=13,W=11,K=4,R=3,S=2,stride=2x1,pad=1x0,pad_end=2x1,dilation=1x2",
    "N=2,C=8,H=9,W=10,K=6,R=1,S=1,stride=2",
    "N=2,C=4,H=23,W=20,K=5,R=5,S=5,stride=3,pad=2,dilation=2",
    "N=2,C=16,H=14,W=14,K=8,R=3,S=3,stride=1,pad=1",
]

# Grids Pn,Pk,Pc,Ph,Pw: every dimension split alone, and mixed splits, on 1 to 6 ranks.
GRIDS = [
    (1, 1, 1, 1, 1),
    (2, 1, 1, 1, 1), (1, 2, 1, 1, 1), (1, 1, 2, 1, 1), (1, 1, 1, 2, 1), (1, 1, 1, 1, 2),
    (3, 1, 1, 1, 1), (1, 3, 1, 1, 1), (1, 1, 1, 3, 1),
    (2, 2, 1, 1, 1), (1, 2, 1, 1, 2), (2, 1, 1, 1, 2), (1, 1, 1, 2, 2),
    (2, 3, 1, 1, 1), (1, 1, 2, 1, 3), (1, 1, 1, 2, 3),
]


class Layer:
    """A --shape string read into the numbers PyTorch needs (SPEC section 1)."""

    def __init__(self, text):
        self.text = text
        items = dict(item.split("=") for item in text.split(","))

        def pair(key, default):
            value = items.get(key, default)
            h, _, w = value.partition("x")
            return int(h), int(w or h)

        self.N, self.C, self.H, self.W, self.K, self.R, self.S = (int(items[k]) for k in "NCHWKRS")
        self.stride = pair("stride", "1")
        self.dilation = pair("dilation", "1")
        self.pad = pair("pad", "0")
        self.pad_end = pair("pad_end", items.get("pad", "0"))
        self.Ho = (self.H + self.pad[0] + self.pad_end[0] - self.dilation[0] * (self.R - 1) - 1) // self.stride[0] + 1
        self.Wo = (self.W + self.pad[1] + self.pad_end[1] - self.dilation[1] * (self.S - 1) - 1) // self.stride[1] + 1

    def fits(self, grid):
        """No grid extent is larger than the dimension it splits (convgrid rejects empty blocks)."""
        return all(p <= d for p, d in zip(grid, (self.N, self.K, self.C, self.Ho, self.Wo)))

    def torch_passes(self, x, w, dy):
        """y, dx, dw in float64: conv2d on the explicitly padded input, and autograd."""
        x = torch.from_numpy(x).double().requires_grad_()
        w = torch.from_numpy(w).double().requires_grad_()
        padded = F.pad(x, (self.pad[1], self.pad_end[1], self.pad[0], self.pad_end[0]))
        y = F.conv2d(padded, w, stride=self.stride, dilation=self.dilation)
        y.backward(torch.from_numpy(dy).double())
        return y.detach().numpy(), x.grad.numpy(), w.grad.numpy()


def relative_error(got, want):
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    return float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))


def words_match_model(report, ranks):
    """Every pass lists every rank, and each received exactly the model's words."""
    return len(report["passes"]) == 3 and all(
        len(p["ranks"]) == ranks
        and all(r["recv_words_measured"] == r["recv_words_model"] for r in p["ranks"])
        for p in report["passes"].values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--convgrid", required=True, help="path of the convgrid binary")
    parser.add_argument("--backend", default="onednn", choices=["onednn", "reference"])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    convgrid = os.path.abspath(args.convgrid)
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")

    rng = np.random.default_rng(args.seed)
    failures = 0
    print(f"{'grid':<10} {'P':>2} {'forward':>10} {'bwd-data':>10} {'bwd-weights':>11}  words = model")
    with tempfile.TemporaryDirectory() as work:
        path = {name: os.path.join(work, name + ".npy") for name in ("x", "w", "dy", "y", "dx", "dw")}
        report_path = os.path.join(work, "run.json")
        for text in SHAPES:
            layer = Layer(text)
            x = rng.standard_normal((layer.N, layer.C, layer.H, layer.W), dtype=np.float32)
            w = rng.standard_normal((layer.K, layer.C, layer.R, layer.S), dtype=np.float32)
            dy = rng.standard_normal((layer.N, layer.K, layer.Ho, layer.Wo), dtype=np.float32)
            for name, array in (("x", x), ("w", w), ("dy", dy)):
                np.save(path[name], array)
            want = layer.torch_passes(x, w, dy)
            print(f"\n{text}  (output {layer.Ho}x{layer.Wo})")
            for grid in filter(layer.fits, GRIDS):
                ranks = int(np.prod(grid))
                grid_text = ",".join(map(str, grid))
                run = subprocess.run(
                    mpirun + ["-np", str(ranks), convgrid, "conv", "--shape", text, "--grid", grid_text,
                              "--backend", args.backend, "--repeat", "1",
                              "--input", path["x"], "--weight", path["w"], "--grad-output", path["dy"],
                              "--output", path["y"], "--grad-input", path["dx"], "--grad-weight", path["dw"],
                              "--json", report_path],
                    capture_output=True, text=True, timeout=300)
                if run.returncode != 0:
                    failures += 1
                    print(f"{grid_text:<10} {ranks:>2} convgrid failed ({run.returncode}): {run.stderr.strip()}")
                    continue
                errors = [relative_error(np.load(path[name]), ref) for name, ref in zip(("y", "dx", "dw"), want)]
                with open(report_path) as f:
                    words_ok = words_match_model(json.load(f), ranks)
                bad = not words_ok or max(errors) > TOLERANCE
                failures += bad
                print(f"{grid_text:<10} {ranks:>2} {errors[0]:>10.2e} {errors[1]:>10.2e} {errors[2]:>11.2e}  "
                      f"{'yes' if words_ok else 'NO'}{'  <-- FAIL' if bad else ''}")
    print(f"\n{failures} failure(s); tolerance {TOLERANCE:g} relative")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
