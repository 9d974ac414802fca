// Tests of the ONNX importer: the checked-in torch export of a small residual network with batch
// normalization against the same network written in JSON, and models built here with the ONNX
// protobuf classes for each operator's attributes (asymmetric pads, auto_pad, Gemm and MatMul
// layouts, Clip's bounds, Pads, shapes computed in the graph, activations, gates); the refusals are
// in onnx_refusals_test.cpp.
#include "nn/onnx_import.hpp"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "nn/load_network.hpp"
#include "onnx_model_builder.hpp"
#include "train/onnx_initial_weights.hpp"
#include "temp_dir_test_base.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

using Ints = std::vector<int64_t>;
using namespace test_data;  // ModelBuilder and the attribute setters

const std::filesystem::path kData = std::filesystem::path(__FILE__).parent_path() / "data" / "onnx";

OnnxParams weights(std::string weight, std::string bias = "", bool transposed = false) {
  OnnxParams p;
  p.weight = std::move(weight);
  p.bias = std::move(bias);
  p.weight_transposed = transposed;
  return p;
}

class OnnxImportTest : public test_data::TempDirTest {
 protected:
  OnnxImportTest() : TempDirTest("onnx_import_test_") {}
};

TEST(OnnxImport, TorchResidualNetworkWithBatchNormEqualsItsJson) {
  const OnnxNetwork imported = import_onnx((kData / "tiny_resnet.onnx").string());
  EXPECT_EQ(imported.network, load_network((kData / "tiny_resnet.json").string()));
  EXPECT_EQ(load_network((kData / "tiny_resnet.onnx").string()), imported.network);
  EXPECT_EQ(imported.params.size(), 6u + 6u + 1u);  // 6 convs, 6 batch norms, the fc
  EXPECT_EQ(imported.params.at("conv1/Conv"), weights("conv1.weight"));
  EXPECT_EQ(imported.params.at("fc/Gemm"), weights("fc.weight", "fc.bias"));
  OnnxParams bn;
  bn.scale = "layer2.0.downsample.1.weight";
  bn.shift = "layer2.0.downsample.1.bias";
  bn.mean = "layer2.0.downsample.1.running_mean";
  bn.var = "layer2.0.downsample.1.running_var";
  EXPECT_EQ(imported.params.at("layer2/layer2.0/downsample/downsample.1/BatchNormalization"), bn);
}

TEST_F(OnnxImportTest, AsymmetricPadsStrideAndDilation) {
  ModelBuilder b({3, 9, 9});
  auto& node = b.conv("c", "x", 3, 5, 3, 2);
  ints(node, "pads", {0, 1, 2, 2});
  ints(node, "strides", {2, 1});
  ints(node, "dilations", {1, 2});
  const Network net = import_onnx(b.save(path("m.onnx"), "c")).network;
  const Layer& l = net.layers()[0];
  EXPECT_EQ(l.name, "c");
  const ConvParams& c = l.conv;
  EXPECT_EQ(Ints({c.K, c.R, c.S, c.stride_h, c.stride_w, c.dil_h, c.dil_w}),
            Ints({5, 3, 2, 2, 1, 1, 2}));
  EXPECT_EQ(Ints({c.pad_top, c.pad_left, c.pad_bottom, c.pad_right}), Ints({0, 1, 2, 2}));
  EXPECT_FALSE(c.bias);
  EXPECT_EQ(l.out, (Activation{5, (9 + 2 - 3) / 2 + 1, 9 + 3 - 3 + 1}));
  EXPECT_EQ(net.layers().size(), 1u);  // not flat: no loss appended
}

// group=G: the weight is K x C/G x R x S; depthwise when G = C = K.
TEST_F(OnnxImportTest, GroupedAndDepthwiseConvolutions) {
  ModelBuilder b({6, 8, 8});
  integer(b.conv("grouped", "x", 2, 9, 3, 3), "group", 3);  // 6 channels in 3 groups of 2
  integer(b.conv("depthwise", "grouped", 1, 9, 3, 3), "group", 9);
  const Network net = import_onnx(b.save(path("m.onnx"), "depthwise")).network;
  ASSERT_EQ(net.layers().size(), 2u);
  EXPECT_EQ(net.layers()[0].conv.groups, 3);
  EXPECT_EQ(net.layers()[1].conv.groups, 9);
  const ConvShape s = conv_shape(net.layers()[1], 4);
  EXPECT_EQ(s.to_string(), "N=4,C=9,H=6,W=6,K=9,R=3,S=3,groups=9");
  EXPECT_EQ(s.weight_elems(), 9 * 9);
}

TEST_F(OnnxImportTest, AutoPad) {
  struct Case {
    std::string mode;
    int64_t kernel, stride;
    Ints pads;  // top, bottom on a 10-row input
    int64_t out;
  };
  for (const Case& k : {Case{"SAME_UPPER", 3, 2, {0, 1}, 5}, Case{"SAME_LOWER", 3, 2, {1, 0}, 5},
                        Case{"SAME_UPPER", 4, 1, {1, 2}, 10}, Case{"SAME_LOWER", 4, 1, {2, 1}, 10},
                        Case{"VALID", 3, 2, {0, 0}, 4}}) {
    ModelBuilder b({2, 10, 10});
    auto& c = b.conv("c", "x", 2, 4, k.kernel, k.kernel);
    ints(c, "strides", {k.stride, k.stride});
    text(c, "auto_pad", k.mode);
    const Layer l = import_onnx(b.save(path("m.onnx"), "c")).network.layers()[0];
    EXPECT_EQ(Ints({l.conv.pad_top, l.conv.pad_bottom}), k.pads) << k.mode << " " << k.kernel;
    EXPECT_EQ(Ints({l.conv.pad_left, l.conv.pad_right}), k.pads) << k.mode << " " << k.kernel;
    EXPECT_EQ(l.out, (Activation{4, k.out, k.out})) << k.mode << " " << k.kernel;
  }
}

// ceil_mode=1 (torchvision's GoogLeNet pools with MaxPool2d(3, 2, ceil_mode=True)) is the
// pooling's ceil_mode, with PyTorch's extents: max pooling, average pooling with padding counted
// (count_include_pad=1), and without padding, where count_include_pad=0 divides alike.
TEST_F(OnnxImportTest, CeilModePooling) {
  ModelBuilder b({2, 7, 7});
  const auto pool = [&](const char* op, const char* name, const char* in, int64_t window,
                        int64_t pad) -> onnx::NodeProto& {
    auto& p = b.node(op, {in}, name);
    ints(p, "kernel_shape", {window, window});
    ints(p, "strides", {2, 2});
    ints(p, "pads", {pad, pad, pad, pad});
    integer(p, "ceil_mode", 1);
    return p;
  };
  pool("MaxPool", "mp", "x", 2, 0);                                        // 7 -> 4 (floor: 3)
  integer(pool("AveragePool", "ap", "mp", 3, 1), "count_include_pad", 1);  // 4 -> 3 (floor: 2)
  pool("AveragePool", "ap0", "ap", 2, 0);                                  // 3 -> 2 (floor: 1)
  const Network net = import_onnx(b.save(path("m.onnx"), "ap0")).network;
  ASSERT_EQ(net.layers().size(), 3u);
  PoolParams mp{2, 2, 2, 2, 0, 0}, ap{3, 3, 2, 2, 1, 1}, ap0{2, 2, 2, 2, 0, 0};
  mp.ceil_mode = ap.ceil_mode = ap0.ceil_mode = true;
  EXPECT_EQ(net.layers()[0].pool, mp);
  EXPECT_EQ(net.layers()[1].pool, ap);
  EXPECT_EQ(net.layers()[2].pool, ap0);
  EXPECT_EQ(net.layers()[0].out, (Activation{2, 4, 4}));
  EXPECT_EQ(net.layers()[1].out, (Activation{2, 3, 3}));
  EXPECT_EQ(net.layers()[2].out, (Activation{2, 2, 2}));
}

// MatMul weights are [F, K] and an Add of a constant after it is its bias; Gemm transB=0 too;
// Identity, Dropout and a 1x1 pooling of stride 1 disappear; Reshape [0, -1] is a flatten.
TEST_F(OnnxImportTest, FullyConnectedLayoutsAndRemovedNodes) {
  ModelBuilder b({2, 4, 4});
  b.node("Identity", {"x"}, "id");
  b.conv("c", "id", 2, 3, 1, 1);
  auto& p = b.node("MaxPool", {"c"}, "p");
  ints(p, "kernel_shape", {1, 1});
  b.node("Dropout", {"p"}, "d");
  b.init_int64("shape", {0, -1});
  b.node("Reshape", {"d", "shape"}, "flat");
  b.init("w1", {48, 7});
  b.node("MatMul", {"flat", "w1"}, "mm");
  b.init("b1", {7});
  b.node("Add", {"b1", "mm"}, "fc1");
  b.init("w2", {7, 5});
  b.init("b2", {5});
  auto& g = b.node("Gemm", {"fc1", "w2", "b2"}, "fc2");
  integer(g, "transB", 0);
  const OnnxNetwork m = import_onnx(b.save(path("m.onnx"), "fc2"));
  std::vector<std::string> names;
  for (const Layer& l : m.network.layers()) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"c", "flat", "mm", "fc2", "loss"}));
  EXPECT_EQ(m.network.layers()[2].conv.K, 7);
  EXPECT_TRUE(m.network.layers()[2].conv.bias);
  EXPECT_EQ(m.params.at("mm"), weights("w1", "b1", true));
  EXPECT_EQ(m.params.at("fc2"), weights("w2", "b2", true));
}

// Found by fuzzing: a MatMul whose output nothing reads (it looked up its readers with
// map::at) imports like any other fully connected layer, a dead end of the graph.
TEST_F(OnnxImportTest, MatMulThatNothingReads) {
  ModelBuilder b({2, 4, 4});
  b.node("Flatten", {"x"}, "flat");
  b.init("w1", {32, 7});
  b.node("MatMul", {"flat", "w1"}, "unread");
  b.init("w2", {32, 5});
  b.node("MatMul", {"flat", "w2"}, "out");
  const Network net = import_onnx(b.save(path("m.onnx"), "out")).network;
  ASSERT_TRUE(net.find("unread") && net.find("out"));
  EXPECT_EQ(net.layers()[*net.find("unread")].conv.K, 7);
  EXPECT_EQ(net.layers()[*net.find("out")].conv.K, 5);
}

// Names and kinds, inputs and residuals of the layers.
struct Wiring {
  std::string name;
  LayerKind kind;
  std::string input, residual;

  bool operator==(const Wiring&) const = default;
};

void PrintTo(const Wiring& w, std::ostream* os) {
  *os << w.name << " (" << to_string(w.kind) << ") input '" << w.input << "' residual '"
      << w.residual << "'";
}

std::vector<Wiring> wiring(const Network& net) {
  std::vector<Wiring> out;
  for (const Layer& l : net.layers()) out.push_back({l.name, l.kind, l.input, l.residual});
  return out;
}

// An Add read once by a layer is that layer's residual. MobileNet-V2's identity blocks end in an
// Add without an activation, x + block(x), which the next block's first conv and Add both read:
// that Add, an Add read by an Add or an Identity, and one that is the graph output, are add layers
// of their own (input: the first operand, residual: the second).
TEST_F(OnnxImportTest, AddsReadByMoreThanOneLayerAreAddLayers) {
  ModelBuilder b({2, 5, 5});
  b.conv("c0", "x", 2, 4, 1, 1);
  b.conv("c1", "c0", 4, 4, 1, 1);
  b.node("Add", {"c0", "c1"}, "s1");  // read by c2, s2 and s4
  b.conv("c2", "s1", 4, 4, 1, 1);
  b.node("Add", {"s1", "c2"}, "s2");  // read by an Add alone
  b.node("Identity", {"c2"}, "id");
  b.node("Add", {"s2", "id"}, "s3");  // read by an Identity alone
  b.node("Identity", {"s3"}, "s3_id");
  b.conv("c3", "s3_id", 4, 4, 1, 1);
  b.node("Add", {"c3", "s1"}, "s4");  // read by c4 alone: its residual
  b.conv("c4", "s4", 4, 4, 1, 1);
  b.node("Add", {"c4", "c3"}, "s5");  // the graph output
  const OnnxNetwork m = import_onnx(b.save(path("m.onnx"), "s5"));
  const LayerKind conv = LayerKind::conv, add = LayerKind::add;
  EXPECT_EQ(wiring(m.network), (std::vector<Wiring>{{"c0", conv, "", ""},
                                                    {"c1", conv, "", ""},
                                                    {"s1", add, "c0", "c1"},
                                                    {"c2", conv, "", ""},
                                                    {"s2", add, "s1", "c2"},
                                                    {"s3", add, "", "c2"},
                                                    {"c3", conv, "", ""},
                                                    {"c4", conv, "", "s1"},
                                                    {"s5", add, "", "c3"}}));
}

// Concat along channels is a concat layer reading its first input (DenseNet and Inception), an
// Add it reads is an add layer, a repeated operand stays repeated, and one input is the identity.
TEST_F(OnnxImportTest, ConcatsJoinChannels) {
  ModelBuilder b({2, 5, 5});
  b.conv("c0", "x", 2, 4, 1, 1);
  ints(b.conv("c1", "c0", 4, 3, 3, 3), "pads", {1, 1, 1, 1});
  b.conv("c2", "c0", 4, 4, 1, 1);
  b.node("Add", {"c0", "c2"}, "s");  // read by the concat only: an add layer
  integer(b.node("Concat", {"c1", "s", "c1"}, "cat"), "axis", 1);
  integer(b.node("Concat", {"cat"}, "one"), "axis", -3);  // the identity
  b.conv("c3", "one", 10, 4, 1, 1);
  const Network net = import_onnx(b.save(path("m.onnx"), "c3")).network;
  const auto& layers = net.layers();
  ASSERT_EQ(layers.size(), 6u);
  EXPECT_EQ(layers[3].name, "s");
  EXPECT_EQ(layers[3].kind, LayerKind::add);
  EXPECT_EQ(layers[4].name, "cat");
  EXPECT_EQ(layers[4].kind, LayerKind::concat);
  EXPECT_EQ(layers[4].input, "c1");
  EXPECT_EQ(layers[4].concat_inputs, (std::vector<std::string>{"s", "c1"}));
  EXPECT_EQ(layers[4].out, (Activation{3 + 4 + 3, 5, 5}));
  EXPECT_EQ(layers[5].input, "");
  EXPECT_EQ(layers[5].in.C, 10);
}

// DenseNet: each layer's Concat joins the block input and every new feature map so far. A Concat
// whose inputs begin with an earlier Concat's reads that one and joins only the rest, so each
// feature map moves into the joined placement once. torch's Pad of zeros before an AveragePool
// is the identity.
TEST_F(OnnxImportTest, DenseConcatsReadTheirPredecessorAndZeroPadsAreRemoved) {
  ModelBuilder b({2, 4, 4});
  b.conv("in", "x", 2, 4, 1, 1);
  b.conv("n1", "in", 4, 2, 1, 1);
  integer(b.node("Concat", {"in", "n1"}, "cat1"), "axis", 1);
  b.conv("n2", "cat1", 6, 2, 1, 1);
  integer(b.node("Concat", {"in", "n1", "n2"}, "cat2"), "axis", 1);
  b.conv("n3", "cat2", 8, 2, 1, 1);
  integer(b.node("Concat", {"in", "n1", "n2", "n3"}, "cat3"), "axis", 1);
  b.init_int64("zeros", {0, 0, 0, 0, 0, 0, 0, 0});
  b.node("Pad", {"cat3", "zeros"}, "padded");
  b.conv("out", "padded", 10, 3, 1, 1);
  const Network net = import_onnx(b.save(path("m.onnx"), "out")).network;
  const Layer& cat2 = net.layers()[*net.find("cat2")];
  EXPECT_EQ(cat2.input, "cat1");
  EXPECT_EQ(cat2.concat_inputs, (std::vector<std::string>{"n2"}));
  const Layer& cat3 = net.layers()[*net.find("cat3")];
  EXPECT_EQ(cat3.input, "cat2");
  EXPECT_EQ(cat3.concat_inputs, (std::vector<std::string>{"n3"}));
  EXPECT_EQ(cat3.out, (Activation{10, 4, 4}));
  EXPECT_EQ(net.layers().back().name, "out");
  EXPECT_EQ(net.producer(net.layers().size() - 1), net.find("cat3"));
}

// A Pad of zeros is padding for the Conv or AveragePool reading it (torch exports avg_pool2d's
// padding and nn.ZeroPad2d as a Pad): added to a convolution's own pads, asymmetric ones too,
// and before its auto_pad, which sees the padded extent; an average pooling counts the zeros
// (convgrid's avg_pool divides by the window, padding included). Pads of pads add up, the pads
// may be an attribute (opset 2), and two readers fold one Pad each.
TEST_F(OnnxImportTest, ZeroPadsFoldIntoTheConvolutionOrAveragePoolingReadingThem) {
  ModelBuilder b({2, 10, 10});
  b.init_int64("bottom_right", {0, 0, 0, 0, 0, 0, 1, 1});
  b.node("Pad", {"x", "bottom_right"}, "p1");
  auto& c1 = b.conv("c1", "p1", 2, 4, 3, 3);  // 11 x 11, own pads top 1: 12 x 11 -> 5 x 5
  ints(c1, "strides", {2, 2});
  ints(c1, "pads", {1, 0, 0, 0});
  b.init_int64("top_left", {0, 0, 1, 1, 0, 0, 0, 0});
  b.node("Pad", {"c1", "top_left"}, "p2");
  b.node("Pad", {"p2", "bottom_right"}, "p3");  // a row and a column each side of the 5 x 5
  b.init_int64("nothing", {0, 0, 0, 0, 0, 0, 0, 0});
  b.node("Pad", {"p3", "nothing"}, "p3_same");  // the identity on a padded tensor
  auto& c2 = b.conv("c2", "p3_same", 4, 4, 3, 3);  // auto_pad on 7 x 7: 7 -> 4, pads 1 and 1
  ints(c2, "strides", {2, 2});
  text(c2, "auto_pad", "SAME_UPPER");
  b.init_int64("around", {0, 0, 1, 1, 0, 0, 1, 1});
  b.node("Pad", {"c2", "around"}, "p4");
  ints(b.node("AveragePool", {"p4"}, "ap"), "kernel_shape", {3, 3});  // count_include_pad=0
  auto& ap2 = b.node("AveragePool", {"p4"}, "ap2");  // a second reader, its own pads too
  ints(ap2, "kernel_shape", {5, 5});
  ints(ap2, "pads", {1, 1, 1, 1});
  integer(ap2, "count_include_pad", 1);
  integer(b.node("Concat", {"ap", "ap2"}, "cat"), "axis", 1);
  const Network net = import_onnx(b.save(path("m.onnx"), "cat")).network;
  const Layer& l1 = net.layers()[*net.find("c1")];
  EXPECT_EQ(Ints({l1.conv.pad_top, l1.conv.pad_left, l1.conv.pad_bottom, l1.conv.pad_right}),
            Ints({1, 0, 1, 1}));
  EXPECT_EQ(l1.out, (Activation{4, 5, 5}));
  const Layer& l2 = net.layers()[*net.find("c2")];
  EXPECT_EQ(Ints({l2.conv.pad_top, l2.conv.pad_left, l2.conv.pad_bottom, l2.conv.pad_right}),
            Ints({2, 2, 2, 2}));
  EXPECT_EQ(l2.in, (Activation{4, 5, 5}));
  EXPECT_EQ(l2.out, (Activation{4, 4, 4}));  // ceil(7 / 2)
  const Layer& ap = net.layers()[*net.find("ap")];
  EXPECT_EQ(ap.kind, LayerKind::avg_pool);
  EXPECT_EQ(ap.pool, (PoolParams{3, 3, 1, 1, 1, 1}));
  EXPECT_EQ(net.producer(*net.find("ap")), net.find("c2"));
  EXPECT_EQ(net.layers()[*net.find("ap2")].pool, (PoolParams{5, 5, 1, 1, 2, 2}));
  EXPECT_EQ(net.layers()[*net.find("cat")].out, (Activation{8, 4, 4}));
  EXPECT_EQ(net.producer(*net.find("ap2")), net.find("c2"));

  ModelBuilder old({2, 6, 6});  // opset 2: the pads are an attribute
  old.set_opset(2);
  ints(old.node("Pad", {"x"}, "p"), "pads", {0, 0, 1, 1, 0, 0, 1, 1});
  old.conv("c", "p", 2, 4, 3, 3);
  const Layer c = import_onnx(old.save(path("old.onnx"), "c")).network.layers()[0];
  EXPECT_EQ(Ints({c.conv.pad_top, c.conv.pad_left, c.conv.pad_bottom, c.conv.pad_right}),
            Ints({1, 1, 1, 1}));
}

// ReduceMean over rows and columns (torch's x.mean([2, 3]), MNASNet's) is a global average
// pooling, with keepdims 0 or 1 and the axes an attribute or (opset 18) an input, negative or not.
TEST_F(OnnxImportTest, MeanOverRowsAndColumnsIsGlobalAveragePooling) {
  ModelBuilder b({2, 5, 5});
  b.conv("c", "x", 2, 4, 3, 3);
  auto& rm = b.node("ReduceMean", {"c"}, "rm");
  ints(rm, "axes", {3, 2});
  integer(rm, "keepdims", 0);
  b.init("fc.w", {10, 4});
  integer(b.node("Gemm", {"rm", "fc.w"}, "fc"), "transB", 1);
  const Network net = import_onnx(b.save(path("m.onnx"), "fc")).network;
  ASSERT_GE(net.layers().size(), 3u);
  EXPECT_EQ(net.layers()[1].kind, LayerKind::global_avg_pool);
  EXPECT_EQ(net.layers()[1].name, "rm");
  EXPECT_EQ(net.layers()[1].out, (Activation{4, 1, 1}));
  EXPECT_EQ(net.layers()[2].kind, LayerKind::fully_connected);

  ModelBuilder b18({2, 5, 5});
  b18.set_opset(18);
  b18.init_int64("axes", {-1, -2});
  b18.node("ReduceMean", {"x", "axes"}, "rm");
  const Network net18 = import_onnx(b18.save(path("m18.onnx"), "rm")).network;
  EXPECT_EQ(net18.layers()[0].kind, LayerKind::global_avg_pool);
  EXPECT_EQ(net18.layers()[0].out, (Activation{2, 1, 1}));
}

// x.view(x.size(0), -1) is a Reshape by [N, -1], computed from the activation's Shape: a flatten.
// A Shape of the flattened tensor is [N, C*H*W], and reshaping by it again is a flatten too.
TEST_F(OnnxImportTest, ReshapesByComputedShapesAreFlattens) {
  ModelBuilder b({2, 5, 5});
  b.conv("c", "x", 2, 4, 3, 3);
  b.node("Shape", {"c"}, "shape");
  b.init_int64("zero", {0});
  b.init_int64("one", {1});
  b.init_int64("minus_one", {-1});
  b.node("Gather", {"shape", "zero"}, "n");
  integer(b.node("Concat", {"n", "minus_one"}, "view"), "axis", 0);
  b.node("Reshape", {"c", "view"}, "flat");
  b.node("Shape", {"flat"}, "flat_shape");
  b.node("Gather", {"flat_shape", "zero"}, "n2");
  b.node("Gather", {"flat_shape", "one"}, "f");
  integer(b.node("Concat", {"n2", "f"}, "same"), "axis", 0);
  b.node("Reshape", {"flat", "same"}, "again");
  b.init("fc.w", {10, 36});
  integer(b.node("Gemm", {"again", "fc.w"}, "fc"), "transB", 1);
  const Network net = import_onnx(b.save(path("m.onnx"), "fc")).network;
  ASSERT_EQ(net.layers().size(), 5u);  // conv, two flattens, fc, the loss
  EXPECT_EQ(net.layers()[1].kind, LayerKind::flatten);
  EXPECT_EQ(net.layers()[1].name, "flat");
  EXPECT_EQ(net.layers()[2].kind, LayerKind::flatten);
  EXPECT_EQ(net.layers()[2].out, (Activation{36, 1, 1}));
  EXPECT_EQ(net.layers()[3].kind, LayerKind::fully_connected);
}

// Sigmoid, Tanh, HardSigmoid (PyTorch's: alpha 1/6) and HardSwish are layers of their own; x *
// Sigmoid(x) is one silu layer and x * HardSigmoid(x) one hardswish, named after the Mul, where
// the Mul is the activation's only reader (a sigmoid read twice stays a sigmoid).
TEST_F(OnnxImportTest, SmoothActivationsAndTheProductsThatAreSiluAndHardswish) {
  ModelBuilder b({2, 5, 5});
  b.conv("c", "x", 2, 4, 3, 3);
  b.node("Sigmoid", {"c"}, "sig");
  b.node("Mul", {"c", "sig"}, "silu");
  auto& hs = b.node("HardSigmoid", {"silu"}, "hs");
  real(hs, "alpha", 1.0f / 6.0f);
  b.node("Mul", {"hs", "silu"}, "hardswish");  // the activation first
  b.node("Tanh", {"hardswish"}, "tanh");
  b.node("HardSwish", {"tanh"}, "hardswish14");
  auto& alone = b.node("HardSigmoid", {"hardswish14"}, "hardsigmoid");
  real(alone, "alpha", 1.0f / 6.0f);
  b.node("Sigmoid", {"hardsigmoid"}, "gate");
  b.node("Add", {"gate", "gate"}, "twice");  // read twice: a sigmoid layer
  b.node("Relu", {"twice"}, "r");
  const Network net = import_onnx(b.save(path("m.onnx"), "r")).network;
  std::vector<std::pair<std::string, LayerKind>> got;
  for (const Layer& l : net.layers()) got.emplace_back(l.name, l.kind);
  const std::vector<std::pair<std::string, LayerKind>> want = {
      {"c", LayerKind::conv},          {"silu", LayerKind::silu},
      {"hardswish", LayerKind::hardswish}, {"tanh", LayerKind::tanh},
      {"hardswish14", LayerKind::hardswish}, {"hardsigmoid", LayerKind::hardsigmoid},
      {"gate", LayerKind::sigmoid},    {"r", LayerKind::relu}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(net.layers().back().residual, "gate");  // gate + gate: the relu's input and residual
}

// A squeeze-and-excitation block's Mul of an activation and its N x C x 1 x 1 gate, in either
// order, is a scale layer named after the Mul, its input the activation and its gate the layer
// that wrote the gate.
TEST_F(OnnxImportTest, SqueezeAndExcitationProductsAreScaleLayers) {
  ModelBuilder b({2, 5, 5});
  b.conv("c", "x", 2, 4, 3, 3);
  b.node("GlobalAveragePool", {"c"}, "pooled");
  b.conv("squeeze", "pooled", 4, 2, 1, 1);
  b.node("Relu", {"squeeze"}, "r");
  b.conv("expand", "r", 2, 4, 1, 1);
  b.node("Sigmoid", {"expand"}, "gate");
  b.node("Mul", {"gate", "c"}, "scaled");  // torchvision's order: scale * input
  b.node("GlobalAveragePool", {"scaled"}, "pooled2");
  b.node("Mul", {"scaled", "pooled2"}, "scaled2");  // the other order
  const Network net = import_onnx(b.save(path("m.onnx"), "scaled2")).network;
  const Layer& scaled = net.layers()[*net.find("scaled")];
  EXPECT_EQ(scaled.kind, LayerKind::scale);
  EXPECT_EQ(scaled.gate, "gate");
  EXPECT_EQ(net.producer(*net.find("scaled")), net.find("c"));
  EXPECT_EQ(scaled.out, (Activation{4, 3, 3}));  // the 3x3 conv without padding
  const Layer& scaled2 = net.layers()[*net.find("scaled2")];
  EXPECT_EQ(scaled2.gate, "pooled2");
  EXPECT_EQ(net.producer(*net.find("scaled2")), net.find("scaled"));
}

// torch's eval-mode exports share equal weights through an Identity of the initializer: the
// Identity's output is that constant.
TEST_F(OnnxImportTest, IdentitiesOfConstantsAreTheConstants) {
  ModelBuilder b({2, 5, 5});
  b.conv("c", "x", 2, 4, 3, 3);
  b.node("Identity", {"c.w"}, "shared.w");
  b.node("Conv", {"c", "shared.w"}, "c2");  // 4 channels in, but c.w is [4, 2, 3, 3]: refused
  const std::string bad = b.save(path("bad.onnx"), "c2");
  EXPECT_TRUE(throws_input_error([&] { load_network(bad); }, {"node 'c2' (Conv): weight 'c.w' is [4,2,3,3] but the input has C=4"}));
  ModelBuilder ok({2, 5, 5});
  ok.conv("c", "x", 2, 4, 1, 1);
  ok.init("w2", {2, 4, 1, 1});
  ok.node("Identity", {"w2"}, "w2_again");
  ok.node("Conv", {"c", "w2_again"}, "c2");
  const OnnxNetwork net = import_onnx(ok.save(path("ok.onnx"), "c2"));
  EXPECT_EQ(net.network.layers()[1].conv.K, 2);
  EXPECT_EQ(net.params.at("c2").weight, "w2");  // the initializer itself
}

// Clip [0, 6] is relu6 and Clip [0, inf) relu, whether the bounds are attributes (opset 6) or
// inputs (opset 11 on: initializers or Constant nodes; an empty name is an absent bound).
TEST_F(OnnxImportTest, ClipIsRelu6OrRelu) {
  struct Case {
    std::string label;
    std::function<void(ModelBuilder&)> clip;  // adds the Clip "clip" reading "c"
    LayerKind kind;
  };
  const std::vector<Case> cases = {
      {"attributes",
       [](ModelBuilder& b) {
         b.set_opset(6);
         auto& n = b.node("Clip", {"c"}, "clip");
         real(n, "min", 0);
         real(n, "max", 6);
       },
       LayerKind::relu6},
      {"initializers",
       [](ModelBuilder& b) {
         b.init_scalar("lo", 0);
         b.init_scalar("hi", 6);
         b.node("Clip", {"c", "lo", "hi"}, "clip");
       },
       LayerKind::relu6},
      {"constant nodes",
       [](ModelBuilder& b) {
         b.constant_scalar("lo", 0);
         b.constant_scalar("hi", 6);
         b.node("Clip", {"c", "lo", "hi"}, "clip");
       },
       LayerKind::relu6},
      {"min attribute alone",
       [](ModelBuilder& b) {
         b.set_opset(6);
         real(b.node("Clip", {"c"}, "clip"), "min", 0);
       },
       LayerKind::relu},
      {"max attribute at the float's largest value, ONNX's default",
       [](ModelBuilder& b) {
         b.set_opset(6);
         auto& n = b.node("Clip", {"c"}, "clip");
         real(n, "min", 0);
         real(n, "max", std::numeric_limits<float>::max());
       },
       LayerKind::relu},
      {"min input, max empty",
       [](ModelBuilder& b) {
         b.init_scalar("lo", 0);
         b.node("Clip", {"c", "lo", ""}, "clip");
       },
       LayerKind::relu},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.label);
    ModelBuilder b({2, 5, 5});
    b.conv("c", "x", 2, 3, 3, 3);
    k.clip(b);
    const Network net = import_onnx(b.save(path("m.onnx"), "clip")).network;
    ASSERT_EQ(net.layers().size(), 2u);
    const Layer& l = net.layers()[1];
    EXPECT_EQ(l.name, "clip");
    EXPECT_EQ(l.kind, k.kind);
    EXPECT_EQ(l.in, (Activation{3, 3, 3}));
    EXPECT_EQ(l.out, (Activation{3, 3, 3}));
  }
}

TEST_F(OnnxImportTest, InputShapeFromTheFlagWhereSymbolic) {
  ModelBuilder b({3, 0, 0});
  b.conv("c", "x", 3, 4, 3, 3);
  const std::string file = b.save(path("m.onnx"), "c");
  EXPECT_TRUE(throws_input_error([&] { import_onnx(file); },
                                 {file, "input 'x' has the shape 3x?x?", "--input-shape"}));
  EXPECT_EQ(load_network(file, Activation{3, 32, 16}).input(), (Activation{3, 32, 16}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        load_network(file, Activation{1, 32, 32});
      },
      {"--input-shape 1x32x32 contradicts input 'x' of shape 3x?x?"}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        load_network("resnet50", Activation{3, 32, 32});
      },
      {"--input-shape 3x32x32 applies to .onnx networks"}));
  EXPECT_EQ(parse_input_shape("3x224x224"), (Activation{3, 224, 224}));
  for (const char* bad : {"3x224", "3x224x224x1", "0x2x2", "ax2x2", "3x2x2 "}) {
    EXPECT_TRUE(throws_input_error([&] { parse_input_shape(bad); }, {bad, "CxHxW"})) << bad;
  }
}

// A batch norm's epsilon plans (planning does not use it) but does not train (googlenet's 1e-3).
TEST_F(OnnxImportTest, BatchNormConstantsMatterToTrainingOnly) {
  ModelBuilder b({2, 4, 4});
  for (const char* t : {"s", "b", "m", "v"}) b.init(t, {2});
  auto& bn = b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, "bn");
  auto* eps = bn.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(1e-3f);
  const std::string file = b.save(path("m.onnx"), "bn");
  EXPECT_EQ(import_onnx(file).params.at("bn").epsilon, 1e-3f);
  EXPECT_TRUE(throws_input_error([&] { onnx_initial_tensors(file); },
                                 {file, "layer 'bn' (BatchNormalization): epsilon=0.001 is not "
                                        "supported for training"}));
}

}  // namespace
}  // namespace convgrid
