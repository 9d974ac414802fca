#!/usr/bin/python3
"""convgrid's built-in networks as torch.nn.Modules whose state_dict keys and shapes are exactly
the arrays `convgrid export` writes, so that an export loads with a strict load_state_dict
(bench/check_export.py) and bench/race_pytorch.py trains the same networks.

    fmnist         conv1 1->32 3x3 pad 1 + ReLU, conv2 32->64 3x3 pad 1 + ReLU, max pool 2x2/2,
                   conv3 64->128 3x3 pad 1 + ReLU, max pool 2x2/2, flatten, fc1 6272->256 + ReLU,
                   fc2 256->10; every layer with a bias
    resnet-fmnist  conv1 3x3 1->32 (no bias) + bn1 + ReLU; layer1 = one BasicBlock 32->32;
                   layer2 = one BasicBlock 32->64, stride 2, downsample conv 1x1/2 + BN;
                   layer3 = one BasicBlock 64->128, stride 2, the same kind of downsample;
                   global average pool, flatten, fc 128->10 (with bias)
    resnet50       convgrid's resnet50 as the planner plans it (3x224x224, 1000 classes): torchvision's
                   Bottleneck blocks [3, 4, 6, 3] without batch normalization (no convolution has a
                   bias; the stride on the 3x3 convolution), fc 2048->1000 with a bias; Caffe names

BasicBlock is torchvision's: conv1 3x3 (stride) pad 1, bn1, ReLU, conv2 3x3 pad 1, bn2, plus the
block's input (or downsample(input)), ReLU; no convolution has a bias; BatchNorm2d has eps 1e-5 and
momentum 0.1. Both networks end in logits (F.cross_entropy applies the softmax) and start from
PyTorch's default initialisation.

Run as a script, it checks ResNetFmnist's state_dict against the list above written out by hand,
and prints every network's keys and shapes:

    /usr/bin/python3 bench/torch_networks.py
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

BN_EPS, BN_MOMENTUM = 1e-5, 0.1


class Fmnist(nn.Module):
    """convgrid's built-in `fmnist` network (src/nn/builtin_networks.cpp)."""

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
        return self.fc2(x)


def batch_norm(channels):
    return nn.BatchNorm2d(channels, eps=BN_EPS, momentum=BN_MOMENTUM)


class BasicBlock(nn.Module):
    """torchvision's BasicBlock: two 3x3 convolutions with batch norm and the shortcut add."""

    def __init__(self, in_channels, channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = batch_norm(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = batch_norm(channels)
        self.downsample = None
        if stride != 1 or in_channels != channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, channels, 1, stride=stride, bias=False), batch_norm(channels))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + identity)


class ResNetFmnist(nn.Module):
    """convgrid's built-in `resnet-fmnist`: a 3-stage ResNet of BasicBlocks for 1x28x28 inputs."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1, bias=False)
        self.bn1 = batch_norm(32)
        self.layer1 = nn.Sequential(BasicBlock(32, 32))
        self.layer2 = nn.Sequential(BasicBlock(32, 64, stride=2))
        self.layer3 = nn.Sequential(BasicBlock(64, 128, stride=2))
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)  # 128 x 7 x 7 -> 128
        return self.fc(x)


class Bottleneck(nn.Module):
    """A ResNet-50 block as convgrid's resnet50 has it: 1x1, 3x3 (stride), 1x1 (x4), no batch norm."""

    def __init__(self, in_channels, width, stride, project):
        super().__init__()
        self.branch2a = nn.Conv2d(in_channels, width, 1, bias=False)
        self.branch2b = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.branch2c = nn.Conv2d(width, 4 * width, 1, bias=False)
        self.branch1 = nn.Conv2d(in_channels, 4 * width, 1, stride=stride, bias=False) if project else None

    def forward(self, x):
        y = F.relu(self.branch2a(x))
        y = F.relu(self.branch2b(y))
        y = self.branch2c(y)
        return F.relu(y + (self.branch1(x) if self.branch1 is not None else x))


class ResNet50Plain(nn.Module):
    """convgrid's built-in `resnet50` (src/nn/builtin_networks.cpp): no batch normalization."""

    input_shape, classes = (3, 224, 224), 1000

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        blocks, in_channels = [], 64
        for stage, count in enumerate((3, 4, 6, 3)):
            width = 64 << stage
            for b in range(count):
                blocks.append(Bottleneck(in_channels, width, 2 if b == 0 and stage > 0 else 1, b == 0))
                in_channels = 4 * width
        self.blocks = nn.Sequential(*blocks)
        self.fc1000 = nn.Linear(2048, 1000)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 3, 2, 1)
        x = self.blocks(x)
        return self.fc1000(torch.flatten(F.avg_pool2d(x, 7), 1))


NETWORKS = {"fmnist": Fmnist, "resnet-fmnist": ResNetFmnist, "resnet50": ResNet50Plain}


def input_shape(name):
    """The per-sample input and the classes of a network: Fashion-MNIST's unless it says otherwise."""
    cls = NETWORKS[name]
    return getattr(cls, "input_shape", (1, 28, 28)), getattr(cls, "classes", 10)


def build_network(name):
    """A fresh module of the convgrid network called `name` (ValueError for an unknown one)."""
    if name not in NETWORKS:
        raise ValueError(f"unknown network '{name}' (known: {', '.join(NETWORKS)})")
    return NETWORKS[name]()


# ---------------------------------------------------------------------------------------------
# The keys `convgrid export` writes for resnet-fmnist, written out from the architecture above.


def expected_resnet_fmnist_shapes():
    """{key: shape} of resnet-fmnist, from the layer list (not from the module)."""
    convs = [("conv1", (32, 1, 3, 3))]
    bns = [("bn1", 32)]
    for stage, cin, cout in (("layer1", 32, 32), ("layer2", 32, 64), ("layer3", 64, 128)):
        block = f"{stage}.0"
        convs += [(f"{block}.conv1", (cout, cin, 3, 3)), (f"{block}.conv2", (cout, cout, 3, 3))]
        bns += [(f"{block}.bn1", cout), (f"{block}.bn2", cout)]
        if stage != "layer1":
            convs.append((f"{block}.downsample.0", (cout, cin, 1, 1)))
            bns.append((f"{block}.downsample.1", cout))
    shapes = {f"{name}.weight": shape for name, shape in convs}
    for name, c in bns:
        for buffer in ("weight", "bias", "running_mean", "running_var"):
            shapes[f"{name}.{buffer}"] = (c,)
        shapes[f"{name}.num_batches_tracked"] = ()
    shapes["fc.weight"] = (10, 128)
    shapes["fc.bias"] = (10,)
    return shapes


def check_resnet_fmnist():
    """Problems of ResNetFmnist's state_dict against the hand-written list (empty: none)."""
    got = {k: tuple(v.shape) for k, v in ResNetFmnist().state_dict().items()}
    want = expected_resnet_fmnist_shapes()
    problems = [f"missing {k} {want[k]}" for k in want if k not in got]
    problems += [f"unexpected {k} {got[k]}" for k in got if k not in want]
    problems += [f"{k}: shape {got[k]}, expected {want[k]}" for k in want if k in got and got[k] != want[k]]
    state = ResNetFmnist().state_dict()
    problems += [f"{k}: dtype {v.dtype}, expected torch.int64" for k, v in state.items()
                 if k.endswith("num_batches_tracked") and v.dtype != torch.int64]
    logits = ResNetFmnist().eval()(torch.zeros(2, 1, 28, 28))
    if tuple(logits.shape) != (2, 10):
        problems.append(f"logits of shape {tuple(logits.shape)} for 2 samples, expected (2, 10)")
    return problems


def main():
    for name in NETWORKS:
        state = build_network(name).state_dict()
        print(f"{name}: {len(state)} tensors")
        for key, value in state.items():
            print(f"  {key:<40} {str(value.dtype).replace('torch.', ''):<8} {list(value.shape)}")
    problems = check_resnet_fmnist()
    for p in problems:
        print(f"torch_networks: resnet-fmnist: {p}", file=sys.stderr)
    print(f"resnet-fmnist state_dict against the layer list: {'FAILED' if problems else 'ok'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
