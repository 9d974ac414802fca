// Tests of network descriptions: the built-in networks against published layer counts and
// multiply-adds, shape inference and its errors, and the JSON format (examples, round trips and
// every kind of malformed file).
#include "nn/network.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "nn/builtin_networks.hpp"
#include "nn/load_network.hpp"
#include "nn/network_json.hpp"
#include "nn/resnet50_layers.hpp"
#include "join_network.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

const std::filesystem::path kNetworks =
    std::filesystem::path(__FILE__).parent_path().parent_path() / "networks";

int64_t count(const Network& net, LayerKind kind) {
  return std::ranges::count_if(net.layers(), [&](const Layer& l) { return l.kind == kind; });
}

int64_t total_macs(const Network& net, int64_t batch) {
  int64_t sum = 0;
  for (const ComputeLayer& c : net.compute_layers()) {
    sum += conv_shape(net.layers()[c.layer], batch).macs();
  }
  return sum;
}

const Layer& layer(const Network& net, std::string_view name) {
  auto i = net.find(name);
  EXPECT_TRUE(i.has_value()) << "no layer " << name;
  return net.layers().at(i.value_or(0));
}

TEST(BuiltinNetworks, Resnet50HasTheLayersAndMultiplyAddsOfTorchvision) {
  const Network net = builtin_network("resnet50");
  EXPECT_EQ(count(net, LayerKind::conv), 53);
  EXPECT_EQ(std::ranges::count_if(net.layers(),
                                  [](const Layer& l) { return l.name.ends_with("_branch1"); }),
            4);
  EXPECT_EQ(count(net, LayerKind::fully_connected), 1);
  EXPECT_EQ(count(net, LayerKind::softmax_xent), 1);
  // torchvision's ResNet-50 v1.5: 4.09 GMAC per image.
  EXPECT_NEAR(static_cast<double>(total_macs(net, 1)), 4.09e9, 0.01 * 4.09e9);
  EXPECT_EQ(total_macs(net, 32), 32 * total_macs(net, 1));
}

TEST(BuiltinNetworks, Resnet50DistinctConvolutionsAreTheBenchmarkTable) {
  const Network net = builtin_network("resnet50");
  std::set<std::string> from_network, from_table;
  for (const ComputeLayer& c : net.compute_layers()) {
    const Layer& l = net.layers()[c.layer];
    if (l.kind == LayerKind::conv) from_network.insert(conv_shape(l, 32).to_string());
  }
  for (const NamedConv& c : resnet50_distinct_convs(32)) from_table.insert(c.shape.to_string());
  EXPECT_EQ(from_network, from_table);
  EXPECT_EQ(from_table.size(), resnet50_distinct_convs(32).size());
}

TEST(BuiltinNetworks, Resnet50ShapesFlowThroughTheBlocks) {
  const Network net = builtin_network("resnet50");
  EXPECT_EQ(layer(net, "conv1").out, (Activation{64, 112, 112}));
  EXPECT_EQ(layer(net, "pool1").out, (Activation{64, 56, 56}));
  EXPECT_EQ(layer(net, "res2c_relu").out, (Activation{256, 56, 56}));
  // The projection of res3a reads the block input, at stride 2, like the 3x3 of the main path.
  EXPECT_EQ(layer(net, "res3a_branch1").in, (Activation{256, 56, 56}));
  EXPECT_EQ(layer(net, "res3a_branch1").out, (Activation{512, 28, 28}));
  EXPECT_EQ(layer(net, "res3a_branch2a").in, (Activation{256, 56, 56}));
  EXPECT_EQ(layer(net, "res3a_branch2b").out, (Activation{128, 28, 28}));
  EXPECT_EQ(layer(net, "res4f_relu").out, (Activation{1024, 14, 14}));
  EXPECT_EQ(layer(net, "pool5").in, (Activation{2048, 7, 7}));
  EXPECT_EQ(layer(net, "fc1000").in, (Activation{2048, 1, 1}));
  EXPECT_EQ(net.output(), (Activation{1000, 1, 1}));
  EXPECT_EQ(conv_shape(layer(net, "fc1000"), 32),
            ConvShape::parse("N=32,C=2048,H=1,W=1,K=1000,R=1,S=1"));
  EXPECT_EQ(conv_shape(layer(net, "res5a_branch2b"), 8),
            ConvShape::parse("N=8,C=512,H=14,W=14,K=512,R=3,S=3,stride=2,pad=1"));
}

TEST(BuiltinNetworks, Resnet50ComputeLayersFollowTheMainPath) {
  const Network net = builtin_network("resnet50");
  const auto compute = net.compute_layers();
  ASSERT_EQ(compute.size(), 54u);
  auto entry = [&](std::string_view name) {
    const size_t index = *net.find(name);
    auto it = std::ranges::find(compute, index, &ComputeLayer::layer);
    EXPECT_NE(it, compute.end()) << name;
    return *it;
  };
  auto at = [&](std::string_view name) { return net.find(name); };
  EXPECT_EQ(entry("conv1"), (ComputeLayer{0, std::nullopt, false}));
  EXPECT_EQ(entry("res2a_branch1"), (ComputeLayer{*at("res2a_branch1"), at("conv1"), true}));
  EXPECT_EQ(entry("res2a_branch2a"), (ComputeLayer{*at("res2a_branch2a"), at("conv1"), true}));
  EXPECT_EQ(entry("res2a_branch2b"),
            (ComputeLayer{*at("res2a_branch2b"), at("res2a_branch2a"), false}));
  EXPECT_EQ(entry("res2b_branch2a"),
            (ComputeLayer{*at("res2b_branch2a"), at("res2a_branch2c"), false}));
  EXPECT_EQ(entry("res3a_branch1"),
            (ComputeLayer{*at("res3a_branch1"), at("res2c_branch2c"), false}));
  EXPECT_EQ(entry("fc1000"), (ComputeLayer{*at("fc1000"), at("res5c_branch2c"), true}));
}

TEST(BuiltinNetworks, Vgg16HasTheLayersAndMultiplyAddsOfTorchvision) {
  const Network net = builtin_network("vgg16");
  EXPECT_EQ(count(net, LayerKind::conv), 13);
  EXPECT_EQ(count(net, LayerKind::fully_connected), 3);
  EXPECT_EQ(count(net, LayerKind::max_pool), 5);
  // torchvision's VGG-16: 15.47 GMAC per image.
  EXPECT_NEAR(static_cast<double>(total_macs(net, 1)), 15.47e9, 0.01 * 15.47e9);
  EXPECT_EQ(layer(net, "pool5").out, (Activation{512, 7, 7}));
  EXPECT_EQ(layer(net, "fc6").in, (Activation{25088, 1, 1}));
  const auto compute = net.compute_layers();
  EXPECT_FALSE(compute[1].through_pool_or_flatten);  // conv1_2 after conv1_1
  EXPECT_TRUE(compute[2].through_pool_or_flatten);   // conv2_1 after pool1
  EXPECT_EQ(compute[2].source, std::optional<size_t>(compute[1].layer));
}

TEST(BuiltinNetworks, FmnistShapes) {
  const Network net = builtin_network("fmnist");
  std::vector<std::string> flow;
  for (const Layer& l : net.layers()) flow.push_back(l.name + " " + l.out.to_string());
  const std::vector<std::string> expected = {
      "conv1 32x28x28",   "conv1_relu 32x28x28", "conv2 64x28x28",       "conv2_relu 64x28x28",
      "pool1 64x14x14",   "conv3 128x14x14",     "conv3_relu 128x14x14", "pool2 128x7x7",
      "flatten 6272x1x1", "fc1 256x1x1",         "fc1_relu 256x1x1",     "fc2 10x1x1",
      "loss 10x1x1"};
  EXPECT_EQ(flow, expected);
  EXPECT_EQ(net.input(), (Activation{1, 28, 28}));
}

TEST(BuiltinNetworks, UnknownNameListsTheKnownOnes) {
  EXPECT_TRUE(throws_input_error([] { builtin_network("resnet18"); },
                                 {"'resnet18'", "resnet50, vgg16, fmnist"}));
}

// ---- Shape inference ---------------------------------------------------------------------------

Layer conv(std::string name, int64_t K, int64_t R) {
  Layer l(LayerKind::conv, std::move(name));
  l.conv.K = K;
  l.conv.R = l.conv.S = R;
  return l;
}

Layer of_kind(LayerKind kind) { return Layer(kind, ""); }

Layer pool(LayerKind kind, PoolParams p) {
  Layer l(kind, "");
  l.pool = p;
  return l;
}

Layer max_pool(int64_t window, int64_t stride, int64_t pad) {
  return pool(LayerKind::max_pool, {window, window, stride, stride, pad, pad});
}

Layer fc(int64_t K, int64_t R) {
  Layer l(LayerKind::fully_connected, "f");
  l.conv.K = K;
  l.conv.R = R;
  return l;
}

TEST(Network, PoolingFollowsTheFloorFormula) {
  Network net("n", {4, 7, 8});
  EXPECT_EQ(net.add(max_pool(3, 2, 1)).out, (Activation{4, 4, 4}));  // (7+2-3)/2+1, (8+2-3)/2+1
  EXPECT_EQ(net.add(max_pool(2, 2, 0)).out, (Activation{4, 2, 2}));
  EXPECT_EQ(net.add(pool(LayerKind::avg_pool, {2, 1, 1, 1, 0, 0})).out, (Activation{4, 1, 2}));
}

// The extents torch 1.13 gives for the same poolings (F.max_pool2d and F.avg_pool2d,
// ceil_mode=True): GoogLeNet's MaxPool2d(3, 2, ceil_mode=True) and MaxPool2d(2, 2,
// ceil_mode=True) from 112 rows (floor: 55 after the first), a last window over a row and the
// padding after it (6x7: floor 3x3), and one that would start in the padding after the input,
// which is dropped (3x3: not 3x3 but the floor's 2x2).
TEST(Network, PoolingInCeilModeFollowsPyTorch) {
  const auto ceil = [](Layer l) {
    l.pool.ceil_mode = true;
    return l;
  };
  Network googlenet("g", {64, 112, 112});
  EXPECT_EQ(googlenet.add(ceil(max_pool(3, 2, 0))).out, (Activation{64, 56, 56}));
  EXPECT_EQ(googlenet.add(ceil(max_pool(3, 2, 0))).out, (Activation{64, 28, 28}));
  EXPECT_EQ(googlenet.add(ceil(max_pool(3, 2, 0))).out, (Activation{64, 14, 14}));
  EXPECT_EQ(googlenet.add(ceil(max_pool(2, 2, 0))).out, (Activation{64, 7, 7}));
  EXPECT_EQ(Network("n", {2, 112, 112}).add(max_pool(3, 2, 0)).out, (Activation{2, 55, 55}));
  EXPECT_EQ(Network("n", {2, 6, 7}).add(ceil(pool(LayerKind::avg_pool, {3, 2, 2, 2, 1, 0}))).out,
            (Activation{2, 4, 4}));
  EXPECT_EQ(Network("n", {2, 6, 7}).add(pool(LayerKind::avg_pool, {3, 2, 2, 2, 1, 0})).out,
            (Activation{2, 3, 3}));
  EXPECT_EQ(Network("n", {2, 3, 3}).add(ceil(max_pool(2, 2, 1))).out, (Activation{2, 2, 2}));
}

TEST(Network, NamesUnnamedLayersByKindAndIndex) {
  Network net("n", {3, 8, 8});
  net.add(conv("c", 4, 3));
  EXPECT_EQ(net.add(of_kind(LayerKind::relu)).name, "relu1");
  EXPECT_EQ(net.add(of_kind(LayerKind::flatten)).name, "flatten2");
  EXPECT_EQ(net.add(of_kind(LayerKind::flatten)).out, (Activation{144, 1, 1}));
}

TEST(Network, RejectsShapesThatDoNotFit) {
  auto small = [] { return Network("n", {3, 4, 4}); };
  EXPECT_TRUE(throws_input_error([&] { small().add(conv("big", 8, 5)); },
                                 {"network 'n': layers[0] 'big' (conv)", "R=5", "H+pads=4"}));
  EXPECT_TRUE(throws_input_error([&] { small().add(max_pool(5, 1, 0)); },
                                 {"layers[0] 'max_pool0'", "window 5x5", "padded input 4x4"}));
  EXPECT_TRUE(throws_input_error([&] { small().add(max_pool(3, 1, 2)); },
                                 {"pad 2x2 is more than half the window 3x3"}));
  EXPECT_TRUE(throws_input_error([&] { small().add(max_pool(2, 0, 0)); }, {"stride(h)=0"}));
  EXPECT_TRUE(throws_input_error([&] { small().add(fc(10, 1)); },
                                 {"layers[0] 'f' (fc)", "input 3x4x4 is not flat"}));
  EXPECT_TRUE(throws_input_error([&] { small().add(fc(10, 3)); }, {"'f' (fc)", "R=S=1"}));
  EXPECT_TRUE(throws_input_error([&] { small().add(of_kind(LayerKind::softmax_xent)); },
                                 {"softmax_xent", "input 3x4x4 is not flat"}));
  EXPECT_TRUE(throws_input_error([] { Network("n", {3, 0, 4}); }, {"network 'n': input H=0"}));
}

TEST(Network, RejectsBrokenReferencesNamesAndOrder) {
  Network net("n", {3, 4, 4});
  net.add(conv("a", 8, 3));
  EXPECT_TRUE(throws_input_error([&] { net.add(conv("a", 8, 3)); },
                                 {"layers[1] 'a'", "taken by layers[0]"}));
  Layer reads_unknown = conv("b", 8, 3);
  reads_unknown.input = "nope";
  EXPECT_TRUE(throws_input_error([&] { net.add(reads_unknown); },
                                 {"'b'", "input 'nope' names no earlier layer"}));
  Layer with_shortcut = conv("c", 4, 1);
  with_shortcut.residual = "a";  // a's output (8x2x2) is added to the input, which is a's output
  EXPECT_EQ(net.add(with_shortcut).out, (Activation{4, 2, 2}));
  Layer relu = of_kind(LayerKind::relu);
  relu.residual = "a";
  EXPECT_TRUE(throws_input_error([&] { net.add(relu); },
                                 {"residual 'a' has output 8x2x2 but the input is 4x2x2"}));
  net.add(of_kind(LayerKind::flatten));
  net.add(of_kind(LayerKind::softmax_xent));
  EXPECT_TRUE(throws_input_error([&] { net.add(of_kind(LayerKind::relu)); },
                                 {"follows the loss 'softmax_xent3'"}));
  EXPECT_THROW(conv_shape(net.layers()[2], 1), Error);
  EXPECT_TRUE(throws_input_error([&] { conv_shape(net.layers()[0], 0); }, {"N=0"}));
}

// ---- JSON --------------------------------------------------------------------------------------

TEST(NetworkJson, ExampleFileLoads) {
  const Network net = load_network((kNetworks / "example.json").string());
  EXPECT_EQ(net.name(), "example");
  EXPECT_EQ(layer(net, "relu1").out, (Activation{16, 32, 32}));
  EXPECT_EQ(layer(net, "pool1").out, (Activation{16, 16, 16}));
  EXPECT_TRUE(layer(net, "pool1").pool.ceil_mode);
  EXPECT_EQ(layer(net, "conv2").in, (Activation{16, 16, 16}));
  EXPECT_EQ(conv_shape(layer(net, "conv2"), 2),
            ConvShape::parse("N=2,C=16,H=16,W=16,K=32,R=3,S=3,stride=2,pad=0,pad_end=1"));
  EXPECT_EQ(conv_shape(layer(net, "conv3"), 2),
            ConvShape::parse("N=2,C=32,H=8,W=8,K=32,R=3,S=1,pad=1x0"));
  EXPECT_EQ(layer(net, "conv4").conv.dil_w, 2);
  EXPECT_EQ(layer(net, "block_relu").residual, "proj");
  EXPECT_EQ(layer(net, "pool2").pool.stride_h, 8);
  EXPECT_EQ(layer(net, "fc").in, (Activation{32, 1, 1}));
  EXPECT_EQ(net.output(), (Activation{10, 1, 1}));
  EXPECT_EQ(net.compute_layers().size(), 6u);
}

TEST(NetworkJson, NetworkFilesAreTheBuiltins) {
  for (const char* name : {"fmnist", "resnet-fmnist", "resnet50"}) {
    EXPECT_EQ(load_network((kNetworks / (std::string(name) + ".json")).string()), builtin_network(name)) << name;
    EXPECT_EQ(load_network(name), builtin_network(name));
  }
}

TEST(NetworkJson, WrittenNetworksReadBackTheSame) {
  std::vector<Network> nets = {load_network((kNetworks / "example.json").string())};
  for (const std::string& name : builtin_network_names()) nets.push_back(builtin_network(name));
  for (const Network& net : nets) {
    const std::string text = network_to_json(net);
    EXPECT_EQ(network_from_json(text, net.name()), net) << text;
    EXPECT_EQ(network_to_json(network_from_json(text, net.name())), text);
  }
}

// A valid network; each malformed case changes one piece of it.
constexpr std::string_view kTiny = R"({"name": "t", "input": {"C": 3, "H": 32, "W": 32},
 "layers": [
  {"type": "conv", "name": "c1", "K": 16, "R": 3, "S": 3, "pad": 1},
  {"type": "relu"},
  {"type": "max_pool", "window": 2},
  {"type": "flatten"},
  {"type": "fc", "name": "f", "K": 10},
  {"type": "softmax_xent"}]})";

std::string tiny_with(std::string_view from, std::string_view to) {
  std::string text(kTiny);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(NetworkJson, TinyNetworkIsValid) {
  const Network net = network_from_json(kTiny, "t.json");
  EXPECT_EQ(layer(net, "f").in, (Activation{4096, 1, 1}));
  EXPECT_FALSE(layer(net, "c1").conv.bias);
  EXPECT_EQ(layer(net, "max_pool2").pool, (PoolParams{2, 2, 2, 2, 0, 0}));
}

// ceil_mode on max_pool and avg_pool: read, written only where true, read back the same.
TEST(NetworkJson, CeilModeReadsAndWritesBack) {
  const Network net = network_from_json(
      tiny_with("\"window\": 2", "\"window\": 3, \"stride\": 2, \"ceil_mode\": true"), "t.json");
  const Layer& p = layer(net, "max_pool2");
  EXPECT_TRUE(p.pool.ceil_mode);
  EXPECT_EQ(p.out, (Activation{16, 16, 16}));  // ceil(29 / 2) + 1 (floor: 15)
  const std::string text = network_to_json(net);
  EXPECT_NE(text.find("\"ceil_mode\":true"), std::string::npos) << text;
  EXPECT_EQ(network_from_json(text, "t.json"), net);
  const std::string floor = network_to_json(network_from_json(
      tiny_with("\"window\": 2", "\"window\": 2, \"ceil_mode\": false"), "t.json"));
  EXPECT_EQ(floor.find("ceil_mode"), std::string::npos) << floor;
}

// relu6 is read and written like relu: no keys of its own, the input's shape, a name of its kind.
TEST(NetworkJson, Relu6ReadsBackAndKeepsTheShape) {
  const Network net =
      network_from_json(tiny_with("{\"type\": \"relu\"}", "{\"type\": \"relu6\"}"), "t.json");
  const Layer& r = layer(net, "relu61");
  EXPECT_EQ(r.kind, LayerKind::relu6);
  EXPECT_EQ(r.in, (Activation{16, 32, 32}));
  EXPECT_EQ(r.out, (Activation{16, 32, 32}));
  const std::string text = network_to_json(net);
  EXPECT_NE(text.find("{\"type\":\"relu6\",\"name\":\"relu61\"}"), std::string::npos) << text;
  EXPECT_EQ(network_from_json(text, "t.json"), net);
  EXPECT_TRUE(throws_input_error(
      [] { network_from_json(tiny_with("\"relu\"", "\"relu6\", \"max\": 6"), "t.json"); },
      {"t.json: layers[1]: unknown key 'max'"}));
}

// The smooth activations are read and written as relu6 is: no keys of their own, the input's
// shape, a name of their kind.
TEST(NetworkJson, SmoothActivationsReadBackAndKeepTheShape) {
  for (const char* type : {"sigmoid", "tanh", "hardsigmoid", "hardswish", "silu"}) {
    SCOPED_TRACE(type);
    const std::string kind = fmt::format("{{\"type\": \"{}\"}}", type);
    const Network net = network_from_json(tiny_with("{\"type\": \"relu\"}", kind), "t.json");
    const Layer& r = layer(net, fmt::format("{}1", type));
    EXPECT_EQ(to_string(r.kind), type);
    EXPECT_EQ(r.out, (Activation{16, 32, 32}));
    const std::string text = network_to_json(net);
    EXPECT_NE(text.find(fmt::format("{{\"type\":\"{}\",\"name\":\"{}1\"}}", type, type)), std::string::npos)
        << text;
    EXPECT_EQ(network_from_json(text, "t.json"), net);
  }
}

// scale multiplies its input by its gate, one value per sample and channel: read and written with
// the gate as its only key, the input's shape; refused without a gate, with a gate of another
// shape, and a gate on another kind of layer.
TEST(NetworkJson, ScaleReadsBackAndNeedsAGateOfOneValuePerChannel) {
  const std::string gated = tiny_with("{\"type\": \"relu\"}",
                                      "{\"type\": \"relu\", \"name\": \"r\"}, {\"type\": \"global_avg_pool\", "
                                      "\"name\": \"g\"}, {\"type\": \"scale\", \"name\": \"s\", \"input\": \"r\", "
                                      "\"gate\": \"g\"}");
  const Network net = network_from_json(gated, "t.json");
  const Layer& s = layer(net, "s");
  EXPECT_EQ(s.kind, LayerKind::scale);
  EXPECT_EQ(s.gate, "g");
  EXPECT_EQ(s.out, (Activation{16, 32, 32}));
  EXPECT_EQ(net.operands(*net.find("s")).back(), net.find("g"));
  const std::string text = network_to_json(net);
  EXPECT_NE(text.find("\"gate\":\"g\""), std::string::npos) << text;
  EXPECT_EQ(network_from_json(text, "t.json"), net);
  EXPECT_TRUE(throws_input_error(
      [] { network_from_json(tiny_with("{\"type\": \"relu\"}", "{\"type\": \"scale\"}"), "t.json"); },
      {"t.json: layers[1]", "missing key 'gate'"}));
  Network n("n", {3, 4, 4});
  n.add(Layer(LayerKind::relu, "r"));
  Layer wrong(LayerKind::scale, "s");
  wrong.gate = "r";
  EXPECT_TRUE(throws_input_error([&] { Network copy = n; copy.add(wrong); },
                                 {"layers[1] 's' (scale): gate 'r' has output 3x4x4 but must be 3x1x1 for the input 3x4x4"}));
  Layer relu(LayerKind::relu, "x");
  relu.gate = "r";
  EXPECT_TRUE(throws_input_error([&] { Network copy = n; copy.add(relu); },
                                 {"layers[1] 'x' (relu): it has a gate 'r' but only a scale has one"}));
}

// add is the sum of its input and its residual as a layer of its own: read and written with the
// residual as its only key, the input's shape, what the next layer reads; refused without one.
TEST(NetworkJson, AddReadsBackAndNeedsAResidual) {
  const Network net = network_from_json(
      tiny_with(
          "{\"type\": \"relu\"}",
          "{\"type\": \"relu\"}, {\"type\": \"add\", \"name\": \"sum\", \"residual\": \"c1\"}"),
      "t.json");
  const Layer& sum = layer(net, "sum");
  EXPECT_EQ(sum.kind, LayerKind::add);
  EXPECT_EQ(sum.residual, "c1");
  EXPECT_EQ(sum.in, (Activation{16, 32, 32}));
  EXPECT_EQ(sum.out, (Activation{16, 32, 32}));
  EXPECT_EQ(net.producer(*net.find("max_pool3")), net.find("sum"));
  const std::string text = network_to_json(net);
  EXPECT_NE(text.find("{\"type\":\"add\",\"name\":\"sum\",\"residual\":\"c1\"}"), std::string::npos)
      << text;
  EXPECT_EQ(network_from_json(text, "t.json"), net);
  EXPECT_TRUE(throws_input_error(
      [] { network_from_json(tiny_with("\"relu\"", "\"add\", \"name\": \"sum\""), "t.json"); },
      {"t.json: network 't': layers[1] 'sum' (add): it has no residual"}));
}

// A concat's output has its operands' channels in order on their common H x W; readers trace
// through it to the layer that wrote its first operand, joined; it reads and writes back.
TEST(NetworkJson, ConcatJoinsChannelsAndReadsBack) {
  const Network net = network_from_json(test_data::join_network_json(), "j.json");
  const Layer& cat = layer(net, "cat");
  EXPECT_EQ(cat.kind, LayerKind::concat);
  EXPECT_EQ(cat.in, (Activation{4, 8, 8}));
  EXPECT_EQ(cat.out, (Activation{4 + 5 + 6, 8, 8}));
  EXPECT_EQ(layer(net, "dense").out, (Activation{15 + 3 + 3, 4, 4}));
  const size_t dense = *net.find("dense");
  EXPECT_EQ(net.operands(dense), (std::vector<std::optional<size_t>>{net.find("pool"), net.find("c4"),
                                                                      net.find("c4")}));
  const ActivationSource c4 = net.input_source(*net.find("c4"));
  EXPECT_EQ(c4.layer, net.find("b1"));
  EXPECT_TRUE(c4.joined);
  EXPECT_TRUE(c4.through_pool_or_flatten);
  EXPECT_EQ(c4.pooled, (Activation{15, 4, 4}));
  const ActivationSource b3 = net.concat_source(*net.find("cat"), 2);
  EXPECT_EQ(b3.layer, net.find("stem"));
  EXPECT_FALSE(b3.joined);
  EXPECT_EQ(b3.pooled, (Activation{6, 8, 8}));
  EXPECT_EQ(net.concat_source(dense, 0).layer, net.find("b1"));
  EXPECT_TRUE(net.concat_source(dense, 0).joined);
  const std::string text = network_to_json(net);
  EXPECT_NE(text.find(R"("concat_inputs":["b2","b3"])"), std::string::npos) << text;
  EXPECT_EQ(network_from_json(text, "j.json"), net);
}

TEST(NetworkJson, ConcatsThatDoNotJoinAreNamedErrors) {
  const auto with = [](const std::string& last) { return test_data::join_network_json(last); };
  EXPECT_TRUE(throws_input_error(
      [&] { network_from_json(with(R"({"type": "concat", "name": "x", "input": "stem", "concat_inputs": ["c4"]})"), "j.json"); },
      {"j.json: network 'joins': layers[8] 'x' (concat): concat input 'c4' is 3x4x4 but the input is "
       "6x8x8: the operands of a concat must have the same H x W"}));
  EXPECT_TRUE(throws_input_error(
      [&] { network_from_json(with(R"({"type": "concat", "name": "x", "concat_inputs": ["later"]})"), "j.json"); },
      {"j.json: network 'joins': layers[8] 'x' (concat): concat input 'later' names no earlier layer"}));
  EXPECT_TRUE(throws_input_error(
      [&] { network_from_json(with(R"({"type": "concat", "name": "x", "concat_inputs": []})"), "j.json"); },
      {"j.json: layers[8] 'x': 'concat_inputs' must be a non-empty array of layer names, not []"}));
  EXPECT_TRUE(throws_input_error(
      [&] { network_from_json(with(R"({"type": "concat", "name": "x", "concat_inputs": [3]})"), "j.json"); },
      {"j.json: layers[8] 'x': 'concat_inputs' must hold layer names (strings), not 3"}));
  EXPECT_TRUE(throws_input_error(
      [&] { network_from_json(with(R"({"type": "relu", "name": "x", "concat_inputs": ["c4"]})"), "j.json"); },
      {"j.json: layers[8] 'x': unknown key 'concat_inputs'"}));
}

TEST(NetworkJson, MalformedFilesAreNamedErrors) {
  struct Case {
    std::string text;
    std::vector<std::string> parts;
  };
  const std::string big = "18446744073709551615";
  const std::vector<Case> cases = {
      {tiny_with("\"layers\": [", "\"layers\": [}"), {"not valid JSON", "line 2, column 13"}},
      {"", {"not valid JSON", "line 1, column 1"}},
      {"[1, 2]", {"top level: must be an object, not [1,2]"}},
      {tiny_with("\"name\": \"t\", ", ""), {"top level: missing key 'name'"}},
      {tiny_with("\"name\": \"t\"", "\"name\": 7"), {"top level: 'name' must be a string, not 7"}},
      {tiny_with("\"name\": \"t\"", "\"name\": \"t\", \"nmae\": \"u\""),
       {"top level: unknown key 'nmae' (known: name, comment, input, layers)"}},
      {tiny_with("\"C\": 3, ", ""), {"input: missing key 'C'"}},
      {tiny_with("\"W\": 32", "\"W\": 32, \"N\": 1"), {"input: unknown key 'N'"}},
      {tiny_with("\"H\": 32", "\"H\": -32"), {"network 't': input H=-32"}},
      {tiny_with("\"layers\": [", "\"layers\": 5, \"x\": ["),
       {"'layers' must be a non-empty array, not 5"}},
      {R"({"name": "t", "input": {"C": 1, "H": 1, "W": 1}, "layers": []})",
       {"'layers' must be a non-empty array, not []"}},
      {tiny_with("{\"type\": \"relu\"}", "3"), {"layers[1]: must be an object, not 3"}},
      {tiny_with("{\"type\": \"relu\"}", "{\"name\": \"r\"}"),
       {"layers[1] 'r': missing key 'type'"}},
      {tiny_with("\"relu\"", "\"ReLU\""),
       {"layers[1]: unknown layer type 'ReLU' (known: conv, relu, relu6, sigmoid, tanh, hardsigmoid, "
        "hardswish, silu, add, scale, concat, max_pool, avg_pool, global_avg_pool, batch_norm, flatten, "
        "fc, softmax_xent)"}},
      {tiny_with("\"relu\"", "\"relu\", \"K\": 3"), {"layers[1]: unknown key 'K'"}},
      {tiny_with("\"pad\": 1", "\"padding\": 1"), {"layers[0] 'c1': unknown key 'padding'"}},
      {tiny_with("\"K\": 16, ", ""), {"layers[0] 'c1': missing key 'K'"}},
      {tiny_with("\"K\": 16", "\"K\": \"16\""),
       {"layers[0] 'c1': 'K' must be an integer, not \"16\""}},
      {tiny_with("\"K\": 16", "\"K\": 16.5"), {"'K' must be an integer, not 16.5"}},
      {tiny_with("\"K\": 16", "\"K\": " + big), {"'K' = " + big + " is out of range"}},
      {tiny_with("\"pad\": 1", "\"pad\": [1, 1, 1]"),
       {"'c1': 'pad' must be an integer or a pair [h, w], not [1,1,1]"}},
      {tiny_with("\"pad\": 1", "\"pad\": [1, true]"), {"'pad' must be an integer, not true"}},
      {tiny_with("\"pad\": 1", "\"bias\": 1"), {"'c1': 'bias' must be true or false, not 1"}},
      {tiny_with("\"K\": 16", "\"K\": 16, \"K\": 8"), {"key 'K' appears twice in one object"}},
      {tiny_with("\"K\": 16", "\"K\": 0"), {"layers[0] 'c1' (conv): shape: K=0"}},
      {tiny_with("\"pad\": 1", "\"pad\": -1"), {"'c1' (conv)", "pad(top)=-1"}},
      {tiny_with("\"window\": 2", "\"window\": [2, 0]"),
       {"layers[2] 'max_pool2' (max_pool): window(w)=0"}},
      {tiny_with("\"window\": 2", "\"window\": 64"),
       {"window 64x64 is larger than the padded input"}},
      {tiny_with("\"window\": 2", "\"window\": 2, \"ceil_mode\": 1"),
       {"layers[2]: 'ceil_mode' must be true or false, not 1"}},
      {tiny_with("\"pad\": 1", "\"pad\": 1, \"ceil_mode\": true"),
       {"layers[0] 'c1': unknown key 'ceil_mode'"}},
      {tiny_with("\"K\": 16", "\"K\": 16, \"C\": 4"),
       {"layers[0] 'c1': C=4 but its input is 3x32x32"}},
      {tiny_with("\"K\": 10", "\"K\": 10, \"C\": 4096"), {}},  // the right C passes
      {tiny_with("{\"type\": \"flatten\"},", ""), {"'f' (fc): input 16x16x16 is not flat"}},
      {tiny_with("{\"type\": \"relu\"}",
                 "{\"type\": \"relu\", \"residual\": \"c1\", \"input\": \"x\"}"),
       {"layers[1] 'relu1' (relu): input 'x' names no earlier layer"}},
      {tiny_with("{\"type\": \"flatten\"}", "{\"type\": \"flatten\", \"residual\": \"c1\"}"),
       {"residual 'c1' has output 16x32x32 but the input is 16x16x16"}},
      {tiny_with("\"name\": \"f\"", "\"name\": \"c1\""),
       {"layers[4] 'c1' (fc): the name is taken by layers[0]"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    if (c.parts.empty()) {
      EXPECT_NO_THROW(network_from_json(c.text, "t.json"));
      continue;
    }
    std::vector<std::string> parts = c.parts;
    parts.push_back("t.json: ");
    EXPECT_TRUE(throws_input_error([&] { network_from_json(c.text, "t.json"); }, parts));
  }
}

// Numbers beyond a double escaped as nlohmann's out_of_range, without the file's name; deeply
// nested arrays overflowed the stack while the error was being written (SIGSEGV).
TEST(NetworkJson, HugeNumbersAndDeepNestingAreNamedErrors) {
  EXPECT_TRUE(throws_input_error(
      [] { network_from_json(tiny_with("\"K\": 16", "\"K\": 1e999"), "t.json"); },
      {"t.json: not valid JSON: number overflow parsing '1e999'"}));
  EXPECT_TRUE(throws_input_error(
      [] { network_from_json(tiny_with("\"H\": 32", "\"H\": -1e400"), "t.json"); },
      {"t.json: not valid JSON", "'-1e400'"}));
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(throws_input_error([&] { network_from_json(deep, "t.json"); },
                                 {"t.json: arrays and objects nested more than 64 deep"}));
  const std::string deep_layer = tiny_with("{\"type\": \"relu\"}", std::string(100000, '[') +
                                                                         std::string(100000, ']'));
  EXPECT_TRUE(throws_input_error([&] { network_from_json(deep_layer, "t.json"); },
                                 {"t.json: arrays and objects nested more than 64 deep"}));

  // Found by fuzz/network_json: a layer type with a newline (as names, quoted in errors).
  EXPECT_TRUE(throws_input_error(
      [] { network_from_json(tiny_with("\"relu\"", "\"re\\nlu\""), "t.json"); },
      {"t.json: the string \"re\\nlu\" holds the control character U+000A"}));

  const std::string path = ::testing::TempDir() + "convgrid_network_test_huge.json";
  std::ofstream(path) << tiny_with("\"W\": 32", "\"W\": 1e999");
  EXPECT_TRUE(throws_input_error([&] { load_network(path); },
                                 {path + ": not valid JSON: number overflow"}));
  std::filesystem::remove(path);
}

TEST(NetworkJson, LoadNamesTheFile) {
  const std::string path = ::testing::TempDir() + "convgrid_network_test_bad.json";
  std::ofstream(path)
      << "{\"name\": \"t\",\n\"input\": {\"C\": 1, \"H\": 1, \"W\": 1},\n\"layers\": x}";
  EXPECT_TRUE(throws_input_error([&] { load_network(path); },
                                 {path + ": not valid JSON", "line 3, column 11"}));
  std::filesystem::remove(path);
  EXPECT_TRUE(throws_input_error(
      [&] { load_network(path); },
      {"'" + path + "' is neither a built-in network (resnet50, vgg16, fmnist, resnet-fmnist) nor a readable file",
       "No such file"}));
}

}  // namespace
}  // namespace convgrid
