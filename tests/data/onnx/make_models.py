#!/usr/bin/python3
"""Writes the ONNX models of tests/onnx_import_test.cpp (checked in next to this script, so that the
tests need no PyTorch):

    tiny_resnet.onnx   a torchvision-style residual network with batch normalization for 1x28x28
                       inputs and small channels: conv1 3x3 1->4 + bn1 + ReLU, layer1 = BasicBlock
                       4->4, layer2 = BasicBlock 4->8 stride 2 (downsample conv 1x1/2 + BN), global
                       average pool, flatten, fc 8->10; PyTorch's default initialisation, seed 0.
                       tiny_resnet.json is the same network in convgrid's JSON format.
    tiny_resnet.losses.json
                       PyTorch's training losses of tiny_resnet from its exported weights: SGD
                       (lr 0.1, momentum 0.9, no weight decay) on the first 64 Fashion-MNIST
                       training images as one batch, for 4 steps. convgrid train --train-samples 64
                       --batch 64 visits the same 64 images each epoch in another order, which
                       changes neither the mean loss nor the batch statistics, so its losses must
                       be these (tests/cli/onnx.sh, within 1e-4 relative).
    tiny_mobilenet.onnx, tiny_mobilenet.losses.json
                       the same for a MobileNet-V2 of torchvision's own blocks for 1x28x28 inputs:
                       conv 3x3/2 1->8 + BN + ReLU6, three InvertedResidual blocks 8->8 (expand 2,
                       2, 3: depthwise convolutions, ReLU6, and identity shortcuts whose sums, with
                       no activation after them, the next block's conv and Add both read: add
                       layers), an InvertedResidual 8->12 stride 2, global average pool, fc 12->10.
    tiny_densenet.onnx, tiny_densenet.losses.json
                       a DenseNet of torchvision's own blocks: conv 3x3 1->8 + BN + ReLU, a
                       _DenseBlock of 3 layers (growth 4, bottleneck 2x: each layer's Concat joins
                       the block input and every new feature map so far), a _Transition to 10
                       channels (BN, ReLU, conv 1x1, AvgPool 2x2: torch exports a Pad of zeros
                       before it), a _DenseBlock of 2 layers, BN, ReLU, global average pool, fc.
    tiny_googlenet.onnx, tiny_googlenet.losses.json
                       a GoogLeNet of torchvision's own Inception blocks (conv + BN + ReLU as
                       conv_block, BN with PyTorch's default epsilon, which convgrid trains with:
                       torchvision's BasicConv2d has 0.001): conv 3x3 1->8, MaxPool 3/2 with
                       ceil_mode (28 -> 14, where the floor gives 13), Inception 8 -> 4+6+2+2,
                       MaxPool 3/2 ceil_mode (14 -> 7), Inception 14 -> 4+4+4+4, global average
                       pool, fc 16->10. Trained at learning rate 0.05 (see MODELS).
    tiny_inception.onnx, tiny_inception.losses.json
                       what torch exports as more than a layer: conv 3x3 1->8 + BN + ReLU,
                       nn.ZeroPad2d((0, 1, 0, 1)) before a conv 3x3/2 without padding (28 -> 29 ->
                       14: a Pad of zeros folded into the convolution, its pads computed from
                       constants by ConstantOfShape, Slice, Transpose ...), a block of
                       torchvision's InceptionA at small widths, 8 -> 4+4+6+2 (its
                       avg_pool2d(3, 1, padding=1) is a Pad of zeros and an AveragePool),
                       x.mean([2, 3], keepdim=True) (a ReduceMean), x.view(x.size(0), -1) (a
                       Reshape by Shape, Gather, Unsqueeze and Concat), fc 16->10.
    tiny_activations.onnx, tiny_activations.losses.json
                       PyTorch's smooth activations: conv 3x3 1->8 + BN + nn.SiLU (exported as
                       x * Sigmoid(x)), conv 3x3 8->8 + BN + nn.Hardswish (x * HardSigmoid(x)),
                       conv 3x3/2 8->8 + nn.Tanh, t + torch.sigmoid(t) (a sigmoid whose input is
                       read twice: not in place), conv 1x1 8->8 + nn.Hardsigmoid, global average
                       pool, fc 8->10.
    tiny_mobilenet_v3.onnx, tiny_mobilenet_v3.losses.json
                       MobileNet-V3's blocks, squeeze-and-excitation gates among them: conv 3x3/2
                       1->8 + BN + Hardswish, torchvision's InvertedResidual 8->8 (depthwise 3x3,
                       SqueezeExcitation with a Hardsigmoid gate, ReLU) and 8->16 (expand 24,
                       depthwise 5x5/2, SqueezeExcitation, Hardswish), conv 1x1 16->16 + BN +
                       Hardswish, global average pool, fc 16->10 (torchvision's own
                       InvertedResidualConfig and blocks).
    <name>.grads.json  for each model: PyTorch's gradient of every parameter at the first step, by
                       its name (the ONNX initializer's).

Exported in training mode (batch normalization stays a node of its own: eval mode folds it into
the convolution) at opset 13, with a symbolic batch dimension.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (bash scripts/setup.sh
--with-torch):

    /usr/bin/python3 tests/data/onnx/make_models.py [name ...]   # default: every model
"""
import copy
import json
import os
import sys
import warnings
from functools import partial

import torch
import torch.nn as nn
from torchvision.models.densenet import _DenseBlock, _Transition
from torchvision.models.googlenet import Inception
from torchvision.models.mobilenetv2 import InvertedResidual
from torchvision.ops.misc import Conv2dNormActivation

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
from race_pytorch import load_split  # noqa: E402
from torch_networks import BN_EPS, BN_MOMENTUM, BasicBlock, batch_norm  # noqa: E402

DATA_DIR = "/usr/share/datasets/fashion-mnist"
SAMPLES, STEPS, LR, MOMENTUM = 64, 4, 0.1, 0.9


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn1 = batch_norm(4)
        self.relu = nn.ReLU()
        self.layer1 = nn.Sequential(BasicBlock(4, 4))
        self.layer2 = nn.Sequential(BasicBlock(4, 8, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TinyMobileNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            Conv2dNormActivation(1, 8, stride=2, activation_layer=nn.ReLU6),
            InvertedResidual(8, 8, 1, 2),
            InvertedResidual(8, 8, 1, 2),
            InvertedResidual(8, 8, 1, 3),
            InvertedResidual(8, 12, 2, 2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.features(x)), 1))


class TinyDenseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), batch_norm(8), nn.ReLU(),
            _DenseBlock(num_layers=3, num_input_features=8, bn_size=2, growth_rate=4, drop_rate=0),
            _Transition(num_input_features=20, num_output_features=10),
            _DenseBlock(num_layers=2, num_input_features=10, bn_size=2, growth_rate=4, drop_rate=0),
            batch_norm(18), nn.ReLU(),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(18, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.features(x)), 1))


class ConvBlock(nn.Module):
    """torchvision's BasicConv2d with BatchNorm2d's default epsilon."""

    def __init__(self, in_channels, out_channels, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = batch_norm(out_channels)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class TinyGoogLeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBlock(1, 8, kernel_size=3, padding=1)
        self.pool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception1 = Inception(8, 4, 4, 6, 2, 2, 2, conv_block=ConvBlock)
        self.pool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception2 = Inception(14, 4, 4, 4, 2, 4, 4, conv_block=ConvBlock)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool2(self.inception1(self.pool1(self.stem(x))))
        return self.fc(torch.flatten(self.avgpool(self.inception2(x)), 1))


class SmallInceptionA(nn.Module):
    """torchvision's InceptionA (inception_v3's Mixed_5b to 5d) with 4+4+6+2 output channels."""

    def __init__(self, in_channels):
        super().__init__()
        self.branch1x1 = ConvBlock(in_channels, 4, kernel_size=1)
        self.branch5x5_1 = ConvBlock(in_channels, 3, kernel_size=1)
        self.branch5x5_2 = ConvBlock(3, 4, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = ConvBlock(in_channels, 4, kernel_size=1)
        self.branch3x3dbl_2 = ConvBlock(4, 6, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = ConvBlock(6, 6, kernel_size=3, padding=1)
        self.branch_pool = ConvBlock(in_channels, 2, kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool(nn.functional.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([b1, b5, b3, bp], 1)


class TinyInception(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBlock(1, 8, kernel_size=3, padding=1)
        self.pad = nn.ZeroPad2d((0, 1, 0, 1))  # left, right, top, bottom
        self.down = ConvBlock(8, 8, kernel_size=3, stride=2)
        self.inception = SmallInceptionA(8)
        self.fc = nn.Linear(4 + 4 + 6 + 2, 10)

    def forward(self, x):
        x = self.inception(self.down(self.pad(self.stem(x))))
        x = x.mean([2, 3], keepdim=True)
        return self.fc(x.view(x.size(0), -1))


class TinyActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = batch_norm(8)
        self.silu = nn.SiLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = batch_norm(8)
        self.hardswish = nn.Hardswish()
        self.conv3 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.tanh = nn.Tanh()
        self.conv4 = nn.Conv2d(8, 8, 1)
        self.hardsigmoid = nn.Hardsigmoid()
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.hardswish(self.bn2(self.conv2(self.silu(self.bn1(self.conv1(x))))))
        t = self.tanh(self.conv3(x))
        x = self.hardsigmoid(self.conv4(t + torch.sigmoid(t)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class TinyMobileNetV3(nn.Module):
    def __init__(self):
        super().__init__()
        from torchvision.models.mobilenetv3 import InvertedResidual as V3Block
        from torchvision.models.mobilenetv3 import InvertedResidualConfig
        norm = partial(nn.BatchNorm2d, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.features = nn.Sequential(
            Conv2dNormActivation(1, 8, 3, stride=2, norm_layer=norm, activation_layer=nn.Hardswish),
            V3Block(InvertedResidualConfig(8, 3, 8, 8, True, "RE", 1, 1, 1.0), norm),
            V3Block(InvertedResidualConfig(8, 5, 24, 16, True, "HS", 2, 1, 1.0), norm),
            Conv2dNormActivation(16, 16, 1, norm_layer=norm, activation_layer=nn.Hardswish),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.features(x)), 1))


def export(model, name, shape):
    path = os.path.join(HERE, name + ".onnx")
    model = copy.deepcopy(model)  # tracing in training mode updates the running statistics
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.zeros(2, *shape), path, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                          opset_version=13, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return path


def write(name, make, lr):
    """<name>.onnx, the model `make` builds after seeding with 0, and <name>.losses.json (SGD at
    learning rate `lr`); for the models of GRADIENTS also <name>.grads.json, every parameter's
    gradient at the first step by its name (the ONNX initializer's)."""
    torch.manual_seed(0)
    model = make()
    export(model, name, (1, 28, 28))
    x, y = load_split(DATA_DIR, "train", SAMPLES)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM, weight_decay=0)
    model.train()
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if step == 0 and name in GRADIENTS:
            grads = {n: p.grad.flatten().tolist() for n, p in model.named_parameters()}
            with open(os.path.join(HERE, name + ".grads.json"), "w") as f:
                json.dump(grads, f, separators=(",", ":"))
                f.write("\n")
        opt.step()
        losses.append(loss.item())
    path = os.path.join(HERE, name + ".losses.json")
    with open(path, "w") as f:
        json.dump({"samples": SAMPLES, "lr": lr, "momentum": MOMENTUM, "weight_decay": 0,
                   "losses": losses}, f, indent=1)
        f.write("\n")
    print(f"wrote {path}: {losses}")


# The models whose first step's gradients are written too (all of them): a gradient that moves
# the losses little in 4 steps, as a squeeze-and-excitation gate's does, is checked all the same.
GRADIENTS = {"tiny_resnet", "tiny_mobilenet", "tiny_densenet", "tiny_googlenet", "tiny_inception",
             "tiny_activations", "tiny_mobilenet_v3"}

# Each model and its learning rate. At 0.1 tiny_googlenet amplifies rounding about tenfold a step
# (PyTorch's own float32 and float64 losses differ by 3e-6 at step 4, more than the other models'
# 1e-6 at most), which would leave little of the 1e-4 the comparison allows; at 0.05, 2e-7.
MODELS = {"tiny_resnet": (TinyResNet, LR), "tiny_mobilenet": (TinyMobileNet, LR),
          "tiny_densenet": (TinyDenseNet, LR), "tiny_googlenet": (TinyGoogLeNet, LR / 2),
          "tiny_inception": (TinyInception, LR), "tiny_activations": (TinyActivations, LR),
          "tiny_mobilenet_v3": (TinyMobileNetV3, LR)}


def main():
    for name in sys.argv[1:] or MODELS:
        write(name, *MODELS[name])


if __name__ == "__main__":
    main()
