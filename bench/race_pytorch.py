#!/usr/bin/python3
"""The PyTorch side of the race (bench/race.sh, docs/race.md): trains convgrid's built-in `fmnist`
(or, with --network, `resnet-fmnist`) network on Fashion-MNIST with DistributedDataParallel over
gloo and logs what `convgrid train --json` logs.

The networks are the modules of bench/torch_networks.py, built as src/nn/builtin_networks.cpp
builds them; `fmnist`:

    conv1 1->32 3x3 pad 1 + ReLU, conv2 32->64 3x3 pad 1 + ReLU, max pool 2x2/2,
    conv3 64->128 3x3 pad 1 + ReLU, max pool 2x2/2, flatten, fc1 6272->256 + ReLU, fc2 256->10,
    softmax cross-entropy (mean over the batch)

trained with torch.optim.SGD(lr, momentum, weight_decay) on inputs (pixel/255 - 0.2860)/0.3530.
Batch normalisation (resnet-fmnist) uses each process's share of the batch (torch's SyncBatchNorm
runs on GPUs only), and DDP sends rank 0's running statistics to every process before each step.
--augment pads each training image by 2 pixels of raw value 0 (before the normalisation), takes a
random 28x28 crop and flips it left-right with probability 1/2 (torchvision's RandomCrop(28,
padding=2) and RandomHorizontalFlip), drawn per sample from a generator seeded by --seed and the
rank. --lr-schedule cosine with --warmup-epochs X: over the first W = round(X * steps per epoch)
steps the rate rises linearly, lr * (s + 1) / W at step s, then falls along a cosine from lr to 0
over the remaining steps of the run (LambdaLR, stepped after every batch); constant keeps lr after
the warm-up.
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
    /usr/bin/python3 bench/race_pytorch.py --network resnet-fmnist --augment --lr-schedule cosine \
        --warmup-epochs 1 --epochs 5
"""
import argparse
import gzip
import json
import math
import os
import socket
import struct
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_networks import NETWORKS, build_network, input_shape  # noqa: E402

MEAN, STD = 0.2860, 0.3530
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
EVAL_BATCH = 1000  # test samples per forward pass in the evaluation (no gradients)
CROP_PAD = 2  # --augment: pixels of padding around each image before the random 28x28 crop
# The name error messages start with: this script's, or that of the script importing load_split.
PROG = os.path.splitext(os.path.basename(sys.argv[0] or "race_pytorch"))[0]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--network", default="fmnist", choices=sorted(NETWORKS),
                   help="the convgrid network to train (default: fmnist)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=64, help="global batch, split evenly over --procs")
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--lr-schedule", choices=("constant", "cosine"), default="constant",
                   help="constant, or cosine from lr to 0 per step after the warm-up (default: constant)")
    p.add_argument("--warmup-epochs", type=float, default=0.0,
                   help="epochs of linear warm-up, lr * (s + 1) / W over the first W steps (default: 0)")
    p.add_argument("--data", choices=("fashion-mnist", "synthetic"), default="fashion-mnist",
                   help="synthetic: seeded N(0, 1) inputs of the network's shape and random labels "
                        "(8 batches to train and 1 to test unless --train-samples/--test-samples)")
    p.add_argument("--augment", action="store_true",
                   help="random 28x28 crops of images padded by 2, and random left-right flips")
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
    if not 0 <= a.warmup_epochs <= a.epochs:
        p.error(f"--warmup-epochs {a.warmup_epochs} is not between 0 and --epochs {a.epochs}")
    return a


# ---------------------------------------------------------------------------------------------
# Data


def read_idx(path, magic, dims):
    """The array of one gzip IDX file, its header checked: magic number and the trailing dims."""
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        sys.exit(f"{PROG}: error: {path} not found (apt-get install -y dataset-fashion-mnist, "
                 f"or bash scripts/setup.sh)")
    except (OSError, EOFError) as e:
        sys.exit(f"{PROG}: error: {path}: {e}")
    ndim = len(dims) + 1
    if len(data) < 4 + 4 * ndim or struct.unpack(">I", data[:4])[0] != magic:
        sys.exit(f"{PROG}: error: {path}: not an IDX file with magic number {magic}")
    shape = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    if list(shape[1:]) != list(dims) or len(data) != 4 + 4 * ndim + int(np.prod(shape)):
        sys.exit(f"{PROG}: error: {path}: shape {shape} or size {len(data)} is wrong")
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_split(data_dir, split, limit):
    """Normalised images (float32, N x 1 x 28 x 28) and labels (int64) of the first `limit` samples."""
    images_file, labels_file = (os.path.join(data_dir, f) for f in FILES[split])
    images = read_idx(images_file, 2051, (28, 28))
    labels = read_idx(labels_file, 2049, ())
    if len(images) != len(labels):
        sys.exit(f"{PROG}: error: {images_file} has {len(images)} images, {labels_file} {len(labels)} labels")
    if limit:
        if limit > len(images):
            sys.exit(f"{PROG}: error: {limit} {split} samples asked for, the {split} set has {len(images)}")
        images, labels = images[:limit], labels[:limit]
    x = (images.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(x).unsqueeze(1).contiguous(), torch.from_numpy(labels.astype(np.int64))


def synthetic_split(network, count, seed):
    """Seeded N(0, 1) inputs of the network's input shape and uniform labels over its classes."""
    shape, classes = input_shape(network)
    g = torch.Generator().manual_seed(seed)
    return torch.randn(count, *shape, generator=g), torch.randint(0, classes, (count,), generator=g)


def normalised_zero():
    """The value a raw pixel 0 has after the normalisation of load_split: what --augment pads with."""
    return float((np.zeros(1, dtype=np.uint8).astype(np.float32) / 255.0 - MEAN) / STD)


def augment(xb, generator, pad_value):
    """Random crops of xb (B x 1 x 28 x 28, normalised) padded by CROP_PAD pixels of pad_value,
    each flipped left-right with probability 1/2: one draw per sample from `generator`."""
    b, _, h, w = xb.shape
    padded = F.pad(xb, (CROP_PAD,) * 4, value=pad_value)
    dy = torch.randint(0, 2 * CROP_PAD + 1, (b,), generator=generator)
    dx = torch.randint(0, 2 * CROP_PAD + 1, (b,), generator=generator)
    flip = torch.rand(b, generator=generator) < 0.5
    rows = (dy[:, None] + torch.arange(h))[:, :, None]  # B x h x 1
    cols = dx[:, None] + torch.arange(w)  # B x w
    cols = torch.where(flip[:, None], cols.flip(1), cols)[:, None, :]  # B x 1 x w
    crops = padded[torch.arange(b)[:, None, None], 0, rows, cols]  # B x h x w
    return crops.unsqueeze(1)


def lr_factor(warmup_steps, total_steps, schedule):
    """The multiplier of the base rate at step s (0-based), for LambdaLR."""
    def factor(s):
        if s < warmup_steps:
            return (s + 1) / warmup_steps
        if schedule == "constant":
            return 1.0
        return 0.5 * (1 + math.cos(math.pi * (s - warmup_steps) / max(1, total_steps - warmup_steps)))
    return factor


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

    if args.data == "synthetic":
        train_x, train_y = synthetic_split(args.network, args.train_samples or 8 * args.batch, args.seed)
        test_x, test_y = synthetic_split(args.network, args.test_samples or args.batch, args.seed + 1)
    else:
        train_x, train_y = load_split(args.data_dir, "train", args.train_samples)
        test_x, test_y = load_split(args.data_dir, "test", args.test_samples)
    local_batch = args.batch // procs

    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP broadcasts rank 0's too)
    net = build_network(args.network)
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
    steps_per_epoch = math.ceil(len(sampler) / local_batch)
    warmup_steps = math.floor(args.warmup_epochs * steps_per_epoch + 0.5)  # as src/train/lr_schedule.hpp
    schedule = torch.optim.lr_scheduler.LambdaLR(
        opt, lr_factor(warmup_steps, args.epochs * steps_per_epoch, args.lr_schedule))
    crops = torch.Generator().manual_seed(args.seed * 1000003 + rank)
    pad_value = normalised_zero()

    info = {
        "framework": "pytorch", "torch_version": torch.__version__,
        "mkldnn_available": torch.backends.mkldnn.is_available(),
        "cpu_capability": cpu_capability(), "blas": blas_library(),
        "memory_format": "channels_last" if args.channels_last else "nchw",
        "network": args.network, "procs": procs, "threads_per_proc": torch.get_num_threads(),
        "bound_to_cores": bool(cores) and not args.no_bind,
        "batch": args.batch, "batch_per_proc": local_batch, "seed": args.seed, "lr": args.lr,
        "momentum": args.momentum, "weight_decay": args.weight_decay,
        "lr_schedule": args.lr_schedule, "warmup_epochs": args.warmup_epochs, "warmup_steps": warmup_steps,
        "augment": args.augment, "data": args.data,
        "train_samples": len(train_x), "test_samples": len(test_x),
        "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "epochs": [],
    }
    if root:
        print(f"race_pytorch: {args.network}, torch {info['torch_version']}, oneDNN (mkldnn) "
              f"{'available' if info['mkldnn_available'] else 'NOT available'}, "
              f"ATen {info['cpu_capability']}, BLAS {' '.join(info['blas']) or '(none loaded)'}, "
              f"{info['memory_format']}; DDP over gloo, {procs} processes x "
              f"{info['threads_per_proc']} thread, batch {args.batch} ({local_batch} per process), "
              f"{len(train_x)} training and {len(test_x)} test samples, seed {args.seed}, "
              f"lr {args.lr} {args.lr_schedule} (warm-up {warmup_steps} steps){', augmented' if args.augment else ''}, "
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
            if args.augment:
                xb = augment(xb, crops, pad_value)
                if args.channels_last:
                    xb = xb.contiguous(memory_format=torch.channels_last)
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces (averages) the gradients here
            opt.step()
            schedule.step()
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
