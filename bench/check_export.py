#!/usr/bin/python3
"""Loads a `convgrid export` archive into the PyTorch twin of its network and measures top-1
accuracy on the Fashion-MNIST test set, to check the export against what convgrid train printed.

    convgrid train --network fmnist --epochs 1 --checkpoint-dir ck     # prints "test ... accuracy A"
    convgrid export --checkpoint ck --network fmnist --out w.npz
    /usr/bin/python3 bench/check_export.py --npz w.npz --network fmnist --expect A

The archive is loaded with a strict load_state_dict into the module of bench/torch_networks.py
(every key present, none extra, every shape equal); the model runs in eval mode (batch norm on its
running statistics) on inputs (pixel/255 - 0.2860)/0.3530, as convgrid normalises them
(src/io/idx.hpp). Prints the accuracy; with --expect ACC (a fraction, as convgrid prints it) exits 1
when the two differ by more than 0.1 percentage points.

Needs Debian's python3-torch and python3-numpy (bash scripts/setup.sh --with-torch) and
dataset-fashion-mnist.
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from race_pytorch import EVAL_BATCH, load_split  # noqa: E402
from torch_networks import NETWORKS, build_network  # noqa: E402

TOLERANCE = 0.001  # 0.1 percentage points


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--npz", required=True, help="the archive convgrid export wrote")
    p.add_argument("--network", required=True, choices=sorted(NETWORKS))
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist",
                   help="directory of the Fashion-MNIST IDX files (gzip)")
    p.add_argument("--test-samples", type=int, default=0,
                   help="use only the first K test samples, as convgrid train --test-samples (0: all)")
    p.add_argument("--expect", type=float, metavar="ACC",
                   help="the test accuracy convgrid printed (a fraction, e.g. 0.8512)")
    a = p.parse_args(argv)
    if a.test_samples < 0:
        p.error("--test-samples must not be negative")
    if a.expect is not None and not 0 <= a.expect <= 1:
        p.error(f"--expect {a.expect}: an accuracy is a fraction in [0, 1], as convgrid prints it")
    return a


def load_npz(path):
    """{name: tensor} of every array of the archive (float32 or int64, any rank)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: torch.from_numpy(np.array(archive[name])) for name in archive.files}
    except (OSError, ValueError) as e:
        sys.exit(f"check_export: error: {path}: {e}")


def listed(keys, limit=4):
    """'a, b, c, d and 5 more': a short list of names for a one-line message."""
    keys = sorted(keys)
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return ", ".join(keys[:limit]) + more


def mismatch(model, state):
    """What keeps `state` from loading strictly into `model`, in a few words ("" if nothing)."""
    want = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    problems = []
    if want.keys() - got.keys():
        problems.append(f"{len(want.keys() - got.keys())} arrays missing ({listed(want.keys() - got.keys())})")
    if got.keys() - want.keys():
        problems.append(f"{len(got.keys() - want.keys())} unexpected ({listed(got.keys() - want.keys())})")
    shapes = [f"{k} {list(got[k])} (expected {list(want[k])})" for k in sorted(want.keys() & got.keys())
              if got[k] != want[k]]
    if shapes:
        problems.append(f"{len(shapes)} of another shape ({listed(shapes, 2)})")
    return "; ".join(problems)


def load_model(network, state, path):
    """The module of `network` with `state` loaded strictly, in eval mode."""
    model = build_network(network)
    problem = mismatch(model, state)
    if problem:
        sys.exit(f"check_export: error: {path} does not fit network {network}: {problem}")
    model.load_state_dict(state, strict=True)
    return model.eval()


def accuracy(model, x, y):
    """Correct predictions (argmax of the logits) over x, y, and their count."""
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), EVAL_BATCH):
            correct += (model(x[i:i + EVAL_BATCH]).argmax(1) == y[i:i + EVAL_BATCH]).sum().item()
    return correct, len(x)


def main():
    args = parse_args()
    model = load_model(args.network, load_npz(args.npz), args.npz)
    x, y = load_split(args.data_dir, "test", args.test_samples)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    correct, n = accuracy(model, x, y)
    acc = correct / n
    print(f"check_export: {args.network} from {args.npz}: test accuracy {acc:.4f} ({correct} of {n})")
    if args.expect is None:
        return 0
    diff = abs(acc - args.expect)
    ok = diff <= TOLERANCE + 1e-9
    print(f"check_export: expected {args.expect:.4f}: difference {100 * diff:.2f} points "
          f"({'within' if ok else 'over'} the {100 * TOLERANCE:.1f} allowed)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
