#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz harnesses: fuzz/corpus/<harness>/, a few tiny valid files
of each format (and copies of networks/ and profiles/ that are small). Deterministic bytes: run
it again after a format changes. Standard library only. The .npy seeds are named *-npy: the
repository ignores *.npy files."""
import gzip
import json
import os
import shutil
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def write(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy(shape, version=1):
    """A float32 .npy file as np.save writes it (values 0, 1, 2, ...)."""
    if len(shape) == 1:
        shape_text = "(%d,)" % shape[0]
    else:
        shape_text = "(" + ", ".join(str(s) for s in shape) + ")"
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_text
    if shape:
        head += " " * (21 - len(str(shape[0])))
    len_bytes = 2 if version == 1 else 4
    pad = 64 - (8 + len_bytes + len(head) + 1) % 64
    head = (head + " " * pad + "\n").encode()
    count = 1
    for s in shape:
        count *= s
    pre = b"\x93NUMPY" + bytes([version, 0])
    pre += struct.pack("<H" if version == 1 else "<I", len(head))
    return pre + head + struct.pack("<%df" % count, *range(count))


def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + data


def checkpoint(state, tensors):
    """A checkpoint as train/checkpoint_file.cpp writes it; tensors: (name, shape) with values
    0, 1, 2, ..."""
    header = dict(state)
    header["tensors"] = []
    data = b""
    offset = 0
    for name, shape in tensors:
        count = shape[0] * shape[1] * shape[2] * shape[3]
        header["tensors"].append({"name": name, "shape": shape, "offset": offset, "count": count})
        data += struct.pack("<%df" % count, *[0.5 * i for i in range(count)])
        offset += count
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = b"CVGCKPT1" + struct.pack("<Q", len(text)) + text + data
    return body + struct.pack("<I", zlib.crc32(body))


def main():
    shutil.rmtree(os.path.join(HERE, "corpus"), ignore_errors=True)

    shapes = ["N=32,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
              "N=1,C=3,H=7,W=5,K=2,R=3,S=1,stride=2x1,pad=1x0,pad_end=0x0,dilation=2x1",
              " N=8 , C=512,H=14,W=14,K=512,R=3,S=3,stride=2,pad=1"]
    for i, s in enumerate(shapes):
        write("shape_string", "shape%d" % i, s)

    for h in ["npy_whole", "npy_slice"]:
        write(h, "nchw-npy", npy([2, 3, 2, 2]))
        write(h, "ones-npy", npy([1, 1, 1, 3]))
        write(h, "empty-npy", npy([0, 2, 1, 1]))
        write(h, "v2-npy", npy([1, 2, 1, 2], version=2))
        write(h, "matrix-npy", npy([2, 3]))
        write(h, "scalar-npy", npy([]))

    images = idx([3, 4, 5], bytes(range(60)))
    labels = idx([5], bytes([9, 0, 3, 7, 1]))
    write("idx_plain", "images-idx3-ubyte", images)
    write("idx_plain", "labels-idx1-ubyte", labels)
    write("idx_gzip", "images-idx3-ubyte.gz", gzip.compress(images, mtime=0))
    write("idx_gzip", "labels-idx1-ubyte.gz", gzip.compress(labels, mtime=0))

    for name in ["example.json", "fmnist.json", "resnet-fmnist.json"]:
        with open(os.path.join(ROOT, "networks", name), "rb") as f:
            write("network_json", name, f.read())
    for name in sorted(os.listdir(os.path.join(ROOT, "profiles"))):
        with open(os.path.join(ROOT, "profiles", name), "rb") as f:
            write("machine_profile", name, f.read())

    state = {"network": "tiny", "batch": 4, "seed": 7, "epoch": 1, "batch_in_epoch": 2,
             "step": 5, "epoch_loss_sum": 3.25, "epoch_correct": 5, "epoch_samples": 8}
    write("checkpoint", "step-00000005.ckpt",
          checkpoint(state, [("c1.weight", [2, 1, 2, 2]), ("c1.weight.momentum", [2, 1, 2, 2]),
                             ("c1.bias", [2, 1, 1, 1]), ("c1.bias.momentum", [2, 1, 1, 1])]))
    write("checkpoint", "empty.ckpt", checkpoint(dict(state, step=2, epoch=0), []))


if __name__ == "__main__":
    main()
