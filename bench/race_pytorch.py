#!/usr/bin/python3
"""The PyTorch side of the race (bench/race.sh, docs/race.md): trains convgrid's built-in `fmnist`
network on Fashion-MNIST with DistributedDataParallel over gloo and logs what `convgrid train
--json` logs.

The network, as src/nn/builtin_networks.cpp builds it:

    conv1 1->32 3x3 pad 1 + ReLU, conv2 32->64 3x3 pad 1 + ReLU, max pool 2x2/2,
    conv3 64->128 3x3 pad 1 + ReLU, max pool 2x2/2, flatten, fc1 6272->256 + ReLU, fc2 256->10,
    softmax cross-entropy (mean over the batch)

trained with torch.optim.SGD(lr, momentum, weight_decay) on inputs (pixel/255 - 0.2860)/0.3530.
The script starts --procs processes itself (torch.multiprocessing), each with one thread and
pinned to one core (as `mpirun --bind-to core` pins convgrid's ranks); the global batch --batch is
split evenly over them, and a DistributedSampler (shuffled by --seed, set_epoch every epoch,
drop_last=False) deals out the samples. Only each epoch's training loop is timed (between
barriers, on rank 0): samples/s = training samples / that time. After every epoch the whole test
set (or its first --test-samples) is evaluated, split over the processes, each sample once.

Prints one line per epoch and, with --json FILE, writes
{"framework": "pytorch", ..., "epochs": [{"epoch", "train_loss", "train_accuracy", "test_loss",
"test_accuracy", "samples_per_s", "seconds"}, ...]}.

Needs Debian's python3-torch and python3-numpy (bash scripts/setup.sh --with-torch) and
dataset-fashion-mnist; run it with /usr/bin/python3:

    /usr/bin/python3 bench/race_pytorch.py --epochs 1 --train-samples 512 --test-samples 256
"""
import argparse
import gzip
import json
import os
import socket
import struct
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

MEAN, STD = 0.2860, 0.3530
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
EVAL_BATCH = 1000  # test samples per forward pass in the evaluation (no gradients)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=64, help="global batch, split evenly over --procs")
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--seed", type=int, default=1, help="seed of the initial weights and the data order")
    p.add_argument("--procs", type=int, default=2, help="DDP processes (one thread each)")
    p.add_argument("--train-samples", type=int, default=0, help="use only the first K training samples (0: all)")
    p.add_argument("--test-samples", type=int, default=0, help="use only the first K test samples (0: all)")
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist",
                   help="directory of the Fashion-MNIST IDX files (gzip)")
    p.add_argument("--no-bind", action="store_true", help="do not pin each process to one core")
    p.add_argument("--channels-last", action="store_true",
                   help="keep model and inputs in channels-last (NHWC) memory format (default: PyTorch's NCHW)")
    p.add_argument("--json", metavar="FILE", help="write the run's log here")
    a = p.parse_args(argv)
    for name in ("epochs", "batch", "procs"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.batch % a.procs:
        p.error(f"--batch {a.batch} is not divisible by --procs {a.procs}")
    if a.train_samples < 0 or a.test_samples < 0:
        p.error("--train-samples and --test-samples must not be negative")
    return a


# ---------------------------------------------------------------------------------------------
# Data


def read_idx(path, magic, dims):
    """The array of one gzip IDX file, its header checked: magic number and the trailing dims."""
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        sys.exit(f"race_pytorch: error: {path} not found (apt-get install -y dataset-fashion-mnist, "
                 f"or bash scripts/setup.sh)")
    except (OSError, EOFError) as e:
        sys.exit(f"race_pytorch: error: {path}: {e}")
    ndim = len(dims) + 1
    if len(data) < 4 + 4 * ndim or struct.unpack(">I", data[:4])[0] != magic:
        sys.exit(f"race_pytorch: error: {path}: not an IDX file with magic number {magic}")
    shape = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    if list(shape[1:]) != list(dims) or len(data) != 4 + 4 * ndim + int(np.prod(shape)):
        sys.exit(f"race_pytorch: error: {path}: shape {shape} or size {len(data)} is wrong")
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_split(data_dir, split, limit):
    """Normalised images (float32, N x 1 x 28 x 28) and labels (int64) of the first `limit` samples."""
    images_file, labels_file = (os.path.join(data_dir, f) for f in FILES[split])
    images = read_idx(images_file, 2051, (28, 28))
    labels = read_idx(labels_file, 2049, ())
    if len(images) != len(labels):
        sys.exit(f"race_pytorch: error: {images_file} has {len(images)} images, {labels_file} {len(labels)} labels")
    if limit:
        if limit > len(images):
            sys.exit(f"race_pytorch: error: {limit} {split} samples asked for, the {split} set has {len(images)}")
        images, labels = images[:limit], labels[:limit]
    x = (images.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(x).unsqueeze(1).contiguous(), torch.from_numpy(labels.astype(np.int64))


# ---------------------------------------------------------------------------------------------
# Network


class Fmnist(nn.Module):
    """convgrid's built-in `fmnist` network (src/nn/builtin_networks.cpp); PyTorch's default init."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 128, 3, padding=1)
        self.fc1 = nn.Linear(128 * 7 * 7, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
        x = F.max_pool2d(F.relu(self.conv3(x)), 2, 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)  # logits: F.cross_entropy applies the softmax


# ---------------------------------------------------------------------------------------------
# One process


def cpu_capability():
    """The vector instruction set ATen's own kernels dispatch to (torch 1.13 has no API for it)."""
    line = [l for l in torch.__config__.show().splitlines() if "CPU capability usage:" in l]
    return line[0].split(":", 1)[1].strip() if line else None


def blas_library():
    """The BLAS this process loaded (fully connected layers run on it): Debian's libblas.so.3
    alternative is OpenBLAS when libopenblas0 is installed, else the slow reference BLAS."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libblas" in line or "openblas" in line}
    return sorted(os.path.realpath(p) for p in paths if p.startswith("/"))


def evaluate(model, x, y, rank, procs):
    """Test loss and accuracy over all of x, y: each process takes a contiguous slice."""
    n = len(x)
    lo, hi = n * rank // procs, n * (rank + 1) // procs
    sums = torch.zeros(2, dtype=torch.float64)  # loss sum, correct
    model.eval()
    with torch.no_grad():
        for i in range(lo, hi, EVAL_BATCH):
            logits = model(x[i:min(i + EVAL_BATCH, hi)])
            target = y[i:min(i + EVAL_BATCH, hi)]
            sums[0] += F.cross_entropy(logits, target, reduction="sum").item()
            sums[1] += (logits.argmax(1) == target).sum().item()
    model.train()
    dist.all_reduce(sums)
    return sums[0].item() / n, sums[1].item() / n


def worker(rank, args, port, cores):
    torch.set_num_threads(1)
    if cores and not args.no_bind:
        os.sched_setaffinity(0, {cores[rank % len(cores)]})
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.procs)
    procs, root = args.procs, rank == 0

    train_x, train_y = load_split(args.data_dir, "train", args.train_samples)
    test_x, test_y = load_split(args.data_dir, "test", args.test_samples)
    local_batch = args.batch // procs

    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP broadcasts rank 0's too)
    net = Fmnist()
    if args.channels_last:
        net = net.to(memory_format=torch.channels_last)
        train_x = train_x.contiguous(memory_format=torch.channels_last)
        test_x = test_x.contiguous(memory_format=torch.channels_last)
    model = DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    # Deals each process ceil(n / procs) indices, shuffled by seed and epoch; with drop_last=False
    # it repeats a few samples so that every process gets as many (as PyTorch users run it).
    sampler = DistributedSampler(range(len(train_x)), num_replicas=procs, rank=rank, shuffle=True,
                                 seed=args.seed, drop_last=False)

    info = {
        "framework": "pytorch", "torch_version": torch.__version__,
        "mkldnn_available": torch.backends.mkldnn.is_available(),
        "cpu_capability": cpu_capability(), "blas": blas_library(),
        "memory_format": "channels_last" if args.channels_last else "nchw",
        "network": "fmnist", "procs": procs, "threads_per_proc": torch.get_num_threads(),
        "bound_to_cores": bool(cores) and not args.no_bind,
        "batch": args.batch, "batch_per_proc": local_batch, "seed": args.seed, "lr": args.lr,
        "momentum": args.momentum, "weight_decay": args.weight_decay,
        "train_samples": len(train_x), "test_samples": len(test_x),
        "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "epochs": [],
    }
    if root:
        print(f"race_pytorch: torch {info['torch_version']}, oneDNN (mkldnn) "
              f"{'available' if info['mkldnn_available'] else 'NOT available'}, "
              f"ATen {info['cpu_capability']}, BLAS {' '.join(info['blas']) or '(none loaded)'}, "
              f"{info['memory_format']}; DDP over gloo, {procs} processes x "
              f"{info['threads_per_proc']} thread, batch {args.batch} ({local_batch} per process), "
              f"{len(train_x)} training and {len(test_x)} test samples, seed {args.seed}, "
              f"GLIBC_TUNABLES={info['glibc_tunables'] or '(unset)'}", flush=True)

    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        indices = torch.tensor(list(sampler), dtype=torch.int64)
        sums = torch.zeros(3, dtype=torch.float64)  # loss sum, correct, samples (this process)

        dist.barrier()
        start = time.perf_counter()
        for i in range(0, len(indices), local_batch):
            # The batch straight from the resident tensors: what a DataLoader over a TensorDataset
            # with this sampler yields, without its per-sample indexing and collation in Python.
            idx = indices[i:i + local_batch]
            xb, yb = train_x[idx], train_y[idx]
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces (averages) the gradients here
            opt.step()
            sums[0] += loss.item() * len(idx)
            sums[1] += (logits.detach().argmax(1) == yb).sum().item()
            sums[2] += len(idx)
        dist.barrier()
        seconds = time.perf_counter() - start

        dist.all_reduce(sums)
        test_loss, test_accuracy = evaluate(model, test_x, test_y, rank, procs)
        record = {"epoch": epoch, "train_loss": sums[0].item() / sums[2].item(),
                  "train_accuracy": sums[1].item() / sums[2].item(), "test_loss": test_loss,
                  "test_accuracy": test_accuracy, "samples_per_s": len(train_x) / seconds, "seconds": seconds}
        info["epochs"].append(record)
        if root:
            print(f"epoch {epoch}: train loss {record['train_loss']:.4f} accuracy {record['train_accuracy']:.4f} | "
                  f"test loss {test_loss:.4f} accuracy {test_accuracy:.4f} | "
                  f"{record['samples_per_s']:.0f} samples/s ({seconds:.1f} s)", flush=True)

    if root and args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=2)
            f.write("\n")
    dist.barrier()
    # Leave without tearing DDP and gloo down: in torch 1.13 the process group's destructor joins
    # its worker thread while holding the GIL, and that thread may need the GIL to free a tensor
    # of the last collective, so the process sometimes hangs at exit (seen here, spinning a core).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = parse_args()
    # Read the data once here, so that a missing or corrupt file is one clear error rather than
    # one per process; the workers read it again (passing 200 MB through /dev/shm may not fit).
    load_split(args.data_dir, "train", args.train_samples)
    load_split(args.data_dir, "test", args.test_samples)
    # The workers are fresh interpreters (spawn): what os.environ holds now is what their OpenBLAS
    # reads when torch loads it. OPENBLAS_CORETYPE=Haswell (set on these machines) halves its sgemm
    # on AVX-512 cores (docs/race.md), and it is to run one thread per process.
    if os.environ.pop("OPENBLAS_CORETYPE", None):
        print("race_pytorch: not passing OPENBLAS_CORETYPE to the workers (it slows OpenBLAS down)", file=sys.stderr)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # everything runs on this machine
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < args.procs and not args.no_bind:
        print(f"race_pytorch: {args.procs} processes on {len(cores)} cores: not pinning", file=sys.stderr)
        cores = []
    mp.spawn(worker, args=(args, free_port(), cores), nprocs=args.procs, join=True)


if __name__ == "__main__":
    main()
