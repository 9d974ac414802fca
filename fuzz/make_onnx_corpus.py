#!/usr/bin/python3
"""Writes the seed corpus of the ONNX importer's harness (fuzz/corpus/onnx_model/): the tiny
residual network, the tiny Inception (torch's exports of nn.ZeroPad2d and x.view(x.size(0), -1):
shape values), the tiny network of smooth activations and the tiny MobileNet-V3 (squeeze-and-
excitation) of tests/data/onnx, and four small models built with ONNX's helpers, between them
every operator the importer maps (Conv with groups and asymmetric pads, Clip as ReLU6, an Add read
twice, BatchNormalization, pooling, Flatten, Gemm, MatMul + Add, Reshape, Softmax, Concat, Pads of
zeros removed or folded into a Conv or AveragePool, ReduceMean). Needs
python3-onnx (scripts/setup.sh --with-torch); run it again after the importer's formats change."""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "onnx_model")


def init(name, *dims):
    values = (np.arange(int(np.prod(dims)), dtype=np.float32) % 7 - 3) / 8
    return helper.make_tensor(name, TensorProto.FLOAT, dims, values.tolist())


def save(name, nodes, inits, input_dims, output):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *input_dims])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, os.path.join(OUT, name + ".onnx"))


def mobile_block():
    """A stem, 1x1 expansion, ReLU6 (Clip with constant inputs), depthwise 3x3, a grouped 1x1
    projection, an Add read by the next Conv and by a later Add, global pooling, Flatten, Gemm,
    Softmax."""
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["s"], name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["s", "w1"], ["c1"], name="expand"),
        helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="depthwise", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c2", "w3"], ["c3"], name="project", group=2),
        helper.make_node("Add", ["c3", "s"], ["a1"], name="add1"),
        helper.make_node("Conv", ["a1", "w4"], ["c4"], name="next", pads=[0, 1, 1, 0]),
        helper.make_node("Add", ["c4", "a1"], ["a2"], name="add2"),
        helper.make_node("GlobalAveragePool", ["a2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "w5", "b5"], ["y"], name="fc", transB=1),
        helper.make_node("Softmax", ["y"], ["p"], name="softmax"),
    ]
    inits = [init("w0", 4, 3, 3, 3), init("w1", 8, 4, 1, 1), helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
             helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0]), init("w2", 8, 1, 3, 3),
             init("w3", 4, 4, 1, 1), init("w4", 4, 4, 2, 2), init("w5", 5, 4), init("b5", 5)]
    save("mobile_block", nodes, inits, [3, 6, 6], "p")


def plain_net():
    """Conv with bias and auto_pad, BatchNormalization, Relu, MaxPool, AveragePool, Reshape to
    2-D, MatMul with an Add of a constant (a bias)."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv", auto_pad="SAME_UPPER", strides=[2, 2],
                         kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "s", "t", "m", "v"], ["n1"], name="bn"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[1, 1]),
        helper.make_node("AveragePool", ["p1"], ["p2"], name="avg", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p2", "shape"], ["f"], name="reshape"),
        helper.make_node("MatMul", ["f", "w2"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "b2"], ["y"], name="bias"),
    ]
    inits = [init("w1", 6, 3, 3, 3), init("b1", 6), init("s", 6), init("t", 6), init("m", 6),
             helper.make_tensor("v", TensorProto.FLOAT, [6], [1.0] * 6),
             helper.make_tensor("shape", TensorProto.INT64, [2], [0, -1]), init("w2", 24, 3), init("b2", 3)]
    save("plain_net", nodes, inits, [3, 9, 9], "y")


def joins():
    """Inception's join (three branches, one pooled, a Concat), then DenseNet's (Concats of a
    growing prefix), a Pad of zeros before an AveragePool, a Concat of one input."""
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["s"], name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["s", "w1"], ["b1"], name="branch1"),
        helper.make_node("Conv", ["s", "w2"], ["b2"], name="branch2", pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["s"], ["b3"], name="branch3", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["b1", "b2", "b3"], ["cat"], name="inception", axis=1),
        helper.make_node("Conv", ["cat", "w3"], ["n1"], name="dense1"),
        helper.make_node("Concat", ["cat", "n1"], ["d1"], name="join1", axis=1),
        helper.make_node("Conv", ["d1", "w4"], ["n2"], name="dense2"),
        helper.make_node("Concat", ["cat", "n1", "n2"], ["d2"], name="join2", axis=1),
        helper.make_node("Concat", ["d2"], ["d2_id"], name="one", axis=-3),
        helper.make_node("Pad", ["d2_id", "zeros"], ["pad"], name="pad"),
        helper.make_node("AveragePool", ["pad"], ["p"], name="avg", kernel_shape=[2, 2], strides=[2, 2]),
    ]
    inits = [init("w0", 4, 3, 3, 3), init("w1", 2, 4, 1, 1), init("w2", 3, 4, 3, 3), init("w3", 2, 9, 1, 1),
             init("w4", 2, 11, 1, 1), helper.make_tensor("zeros", TensorProto.INT64, [8], [0] * 8)]
    save("joins", nodes, inits, [3, 6, 6], "p")


def padded():
    """Pads of zeros folded into a Conv (bottom and right only) and, one Pad after another, into an
    AveragePool; a ReduceMean over rows and columns; Gemm."""
    nodes = [
        helper.make_node("Pad", ["x", "after"], ["q1"], name="pad1"),
        helper.make_node("Conv", ["q1", "w0"], ["c1"], name="conv", strides=[2, 2]),
        helper.make_node("Pad", ["c1", "before"], ["q2"], name="pad2"),
        helper.make_node("Pad", ["q2", "after"], ["q3"], name="pad3"),
        helper.make_node("AveragePool", ["q3"], ["a"], name="avg", kernel_shape=[3, 3]),
        helper.make_node("ReduceMean", ["a"], ["m"], name="mean", axes=[2, 3], keepdims=0),
        helper.make_node("Gemm", ["m", "w1", "b1"], ["y"], name="fc", transB=1),
    ]
    inits = [helper.make_tensor("after", TensorProto.INT64, [8], [0, 0, 0, 0, 0, 0, 1, 1]),
             helper.make_tensor("before", TensorProto.INT64, [8], [0, 0, 1, 1, 0, 0, 0, 0]),
             init("w0", 4, 3, 3, 3), init("w1", 5, 4), init("b1", 5)]
    save("padded", nodes, inits, [3, 7, 7], "y")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for model in ("tiny_resnet.onnx", "tiny_inception.onnx", "tiny_activations.onnx", "tiny_mobilenet_v3.onnx"):
        shutil.copy(os.path.join(os.path.dirname(HERE), "tests", "data", "onnx", model), OUT)
    mobile_block()
    plain_net()
    joins()
    padded()
