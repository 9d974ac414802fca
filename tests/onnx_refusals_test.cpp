// Tests of the ONNX importer's refusals: every node it cannot express is one line naming the file,
// the node (or <op> #index), its operator and what is missing, built with the ONNX protobuf classes
// (tests/onnx_model_builder.hpp); and files that are not ONNX models at all.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nn/load_network.hpp"
#include "onnx_model_builder.hpp"
#include "temp_dir_test_base.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

using namespace test_data;  // ModelBuilder and the attribute setters

const std::filesystem::path kData = std::filesystem::path(__FILE__).parent_path() / "data" / "onnx";

class OnnxImportTest : public test_data::TempDirTest {
 protected:
  OnnxImportTest() : TempDirTest("onnx_refusals_test_") {}
};

// Each refusal is one line naming the file, the node (or <op> #index) and what is missing.
TEST_F(OnnxImportTest, UnsupportedNodesAreOneLineErrors) {
  struct Case {
    std::string label;
    std::function<std::string(ModelBuilder&)> build;  // adds nodes after "x"; returns the output
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"group that does not divide",
       [](ModelBuilder& b) {
         integer(b.conv("Conv_12", "x", 1, 4, 3, 3), "group", 3);
         return "Conv_12";
       },
       {"node 'Conv_12' (Conv): group=3 does not divide the input's C=2 and the weight's K=4"}},
      {"group weight mismatch",
       [](ModelBuilder& b) {
         integer(b.conv("Conv_13", "x", 2, 4, 3, 3), "group", 2);
         return "Conv_13";
       },
       {"node 'Conv_13' (Conv): weight 'Conv_13.w' is [4,2,3,3] but the input has C=2 in group=2 "
        "groups"}},
      {"concat of the graph input",
       [](ModelBuilder& b) {
         b.conv("c0", "x", 2, 2, 1, 1);
         integer(b.node("Concat", {"c0", "x"}, "cat"), "axis", 1);
         return "cat";
       },
       {"node 'cat' (Concat): its input 1 is the graph input 'x', which in convgrid only the first "
        "layer may read"}},
      {"pad as the output",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, 1, 1, 0, 0, 1, 1});
         b.node("Pad", {"x", "p"}, "padded");
         return "padded";
       },
       {"the graph output 'padded' is a Pad of zeros, which convgrid folds only into a Conv or an "
        "AveragePool reading it"}},
      {"pad read by a max pooling",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, 1, 1, 0, 0, 1, 1});
         b.node("Pad", {"x", "p"}, "padded");
         ints(b.node("MaxPool", {"padded"}, "mp"), "kernel_shape", {3, 3});
         return "mp";
       },
       {"node 'mp' (MaxPool): its input 'padded' is a Pad of zeros, which convgrid folds only into "
        "a Conv or an AveragePool reading it"}},
      {"pad read by a relu",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, 1, 1, 0, 0, 1, 1});
         b.node("Pad", {"x", "p"}, "padded");
         b.node("Relu", {"padded"}, "r");
         return "r";
       },
       {"node 'r' (Relu): its input 'padded' is a Pad of zeros"}},
      {"pad of channels",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 1, 0, 0, 0, 0, 0, 0});
         b.node("Pad", {"x", "p"}, "padded");
         return "padded";
       },
       {"node 'padded' (Pad): pads=[0,1,0,0,0,0,0,0] are not supported (only zeros before and "
        "after rows and columns)"}},
      {"negative pad",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, -1, 0, 0, 0, 0, 0});
         b.node("Pad", {"x", "p"}, "padded");
         return "padded";
       },
       {"node 'padded' (Pad): pads=[0,0,-1,0,0,0,0,0] are not supported"}},
      {"reflecting pad",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, 1, 1, 0, 0, 1, 1});
         text(b.node("Pad", {"x", "p"}, "padded"), "mode", "reflect");
         return "padded";
       },
       {"node 'padded' (Pad): mode=reflect is not supported (only constant zeros)"}},
      {"pad of ones",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, 1, 1, 0, 0, 1, 1});
         b.init_scalar("one", 1);
         b.node("Pad", {"x", "p", "one"}, "padded");
         return "padded";
       },
       {"node 'padded' (Pad): constant_value 'one' is not 0 (only a Pad of zeros is supported)"}},
      {"asymmetric pad before an average pooling",
       [](ModelBuilder& b) {
         b.init_int64("p", {0, 0, 0, 0, 0, 0, 1, 1});
         b.node("Pad", {"x", "p"}, "padded");
         ints(b.node("AveragePool", {"padded"}, "ap"), "kernel_shape", {2, 2});
         return "ap";
       },
       {"node 'ap' (AveragePool): its input 'padded' is padded with zeros [0,0,1,1] (top, left, "
        "bottom, right), asymmetric; convgrid pools with the same padding on both sides"}},
      {"shape value as an activation",
       [](ModelBuilder& b) {
         b.node("Shape", {"x"}, "s");
         b.node("Relu", {"s"}, "r");
         return "r";
       },
       {"node 'r' (Relu): its input 's' is a shape value (integers computed from shapes and "
        "constants), not an activation"}},
      {"reshape by twice the batch",
       [](ModelBuilder& b) {
         b.node("Shape", {"x"}, "s");
         b.init_int64("zero", {0});
         b.init_int64("two", {2});
         b.init_int64("minus_one", {-1});
         b.node("Gather", {"s", "zero"}, "n");
         b.node("Mul", {"n", "two"}, "n2");
         integer(b.node("Concat", {"n2", "minus_one"}, "view"), "axis", 0);
         b.node("Reshape", {"x", "view"}, "rs");
         return "rs";
       },
       {"node 'rs' (Reshape): shape [2*N,-1] is not supported: only a Reshape of N x 2x7x7 to "
        "[N, 98] (flatten)"}},
      {"pads by the batch",
       [](ModelBuilder& b) {
         b.node("Shape", {"x"}, "s");
         b.node("Concat", {"s", "s"}, "pads");
         b.node("Pad", {"x", "pads"}, "padded");
         return "padded";
       },
       {"node 'padded' (Pad): its pads 'pads' is [N,2,7,7,N,2,7,7], which depends on the batch N"}},
      {"shape arithmetic",
       [](ModelBuilder& b) {
         b.node("Shape", {"x"}, "s");
         b.node("Mul", {"s", "s"}, "sq");
         return "sq";
       },
       {"node 'sq' (Mul): N * N is not N times a number"}},
      {"hardsigmoid of onnx's defaults",
       [](ModelBuilder& b) {
         b.node("HardSigmoid", {"x"}, "hs");
         return "hs";
       },
       {"node 'hs' (HardSigmoid): alpha=0.2 beta=0.5 are not supported (only PyTorch's "
        "Hardsigmoid: alpha=1/6, beta=0.5)"}},
      {"product of two images",
       [](ModelBuilder& b) {
         b.node("Relu", {"x"}, "r");
         b.node("Relu", {"r"}, "r2");
         b.node("Mul", {"r", "r2"}, "product");
         return "product";
       },
       {"node 'product' (Mul): it multiplies N x 2x7x7 by N x 2x7x7, which convgrid does not support "
        "(only by a gate of one value per sample and channel, N x C x 1 x 1; x * Sigmoid(x), SiLU; x * "
        "HardSigmoid(x), Hardswish)"}},
      {"gate of the graph input",
       [](ModelBuilder& b) {
         b.node("GlobalAveragePool", {"x"}, "pooled");
         b.node("Mul", {"pooled", "x"}, "scaled");
         return "scaled";
       },
       {"node 'scaled' (Mul): it reads the graph input 'x', which in convgrid only the first layer may read"}},
      {"product by a constant",
       [](ModelBuilder& b) {
         b.init("w", {1});
         b.node("Mul", {"x", "w"}, "scaled");
         return "scaled";
       },
       {"node 'scaled' (Mul): it multiplies by the constant 'w', which is not supported"}},
      {"mean over channels",
       [](ModelBuilder& b) {
         ints(b.node("ReduceMean", {"x"}, "rm"), "axes", {1});
         return "rm";
       },
       {"node 'rm' (ReduceMean): axes=[1] are not supported (only 2,3: the mean over rows and "
        "columns)"}},
      {"mean over everything",
       [](ModelBuilder& b) {
         b.node("ReduceMean", {"x"}, "rm");
         return "rm";
       },
       {"node 'rm' (ReduceMean): axes=[] are not supported"}},
      {"concat along rows",
       [](ModelBuilder& b) {
         b.conv("c0", "x", 2, 2, 1, 1);
         integer(b.node("Concat", {"c0", "c0"}, "cat"), "axis", 2);
         return "cat";
       },
       {"node 'cat' (Concat): axis=2 is not supported (only 1: along channels)"}},
      {"unnamed clip without bounds",
       [](ModelBuilder& b) {
         b.node("Relu", {"x"}, "r");
         b.node("Clip", {"r"}, "c", " ").set_name("");
         return "c";
       },
       {"node 'Clip #1' (Clip): bounds [-inf, inf] are not supported (only [0, 6], ReLU6, and "
        "[0, inf), ReLU)"}},
      {"clip bounds",
       [](ModelBuilder& b) {
         b.init_scalar("lo", -1);
         b.init_scalar("hi", 1);
         b.node("Clip", {"x", "lo", "hi"}, "clip3");
         return "clip3";
       },
       {"node 'clip3' (Clip): bounds [-1, 1] are not supported (only [0, 6], ReLU6, and [0, inf), "
        "ReLU)"}},
      {"clip max alone",
       [](ModelBuilder& b) {
         real(b.node("Clip", {"x"}, "clip"), "max", 6);
         return "clip";
       },
       {"node 'clip' (Clip): bounds [-inf, 6] are not supported"}},
      {"clip bound twice",
       [](ModelBuilder& b) {
         b.init_scalar("lo", 0);
         real(b.node("Clip", {"x", "lo"}, "clip"), "min", 0);
         return "clip";
       },
       {"node 'clip' (Clip): its min is given both as an attribute and as input 1 'lo'"}},
      {"clip bound of two values",
       [](ModelBuilder& b) {
         b.init("hi", {2});
         b.node("Clip", {"x", "", "hi"}, "clip");
         return "clip";
       },
       {"node 'clip' (Clip): its max 'hi' has 2 values, not 1"}},
      {"clip bound not constant",
       [](ModelBuilder& b) {
         b.node("Relu", {"x"}, "r");
         b.node("Clip", {"r", "r"}, "clip");
         return "clip";
       },
       {"node 'clip' (Clip): its min 'r' is not a constant (initializer)"}},
      {"other op",
       [](ModelBuilder& b) {
         b.node("Erf", {"x"}, "s");
         return "s";
       },
       {"node 's' (Erf): the operator Erf is not supported"}},
      // Found by fuzzing: names from the file are written with their control characters escaped,
      // so that the refusal stays one line.
      {"control characters in names",
       [](ModelBuilder& b) {
         b.node("Sig\nmoid", {"x"}, "s", "bad\nname\x7f");
         return "s";
       },
       {"node 'bad\\x0aname\\x7f' (Sig\\x0amoid): the operator Sig\\x0amoid is not supported"}},
      {"identity pooling of an add",
       [](ModelBuilder& b) {
         b.node("Relu", {"x"}, "r");
         b.node("Relu", {"r"}, "r2");
         b.node("Add", {"r2", "r"}, "sum");
         ints(b.node("MaxPool", {"sum"}, "mp"), "kernel_shape", {1, 1});
         b.node("Relu", {"mp"}, "end");
         return "end";
       },
       {"node 'mp' (MaxPool): it is the identity on an Add, which must be read by a layer"}},
      {"add of the input to itself",
       [](ModelBuilder& b) {
         b.node("Add", {"x", "x"}, "sum");
         b.node("Relu", {"sum"}, "end");
         return "end";
       },
       {"node 'sum' (Add): it adds the graph input to itself"}},
      {"avg pool excluding pads",
       [](ModelBuilder& b) {
         auto& p = b.node("AveragePool", {"x"}, "ap");
         ints(p, "kernel_shape", {3, 3});
         ints(p, "pads", {1, 1, 1, 1});
         return "ap";
       },
       {"node 'ap' (AveragePool): count_include_pad=0 with pads 1x1 is not supported"}},
      {"asymmetric pool pads",
       [](ModelBuilder& b) {
         auto& p = b.node("MaxPool", {"x"}, "mp");
         ints(p, "kernel_shape", {3, 3});
         ints(p, "pads", {0, 0, 1, 1});
         return "mp";
       },
       {"node 'mp' (MaxPool): pads=[0,0,1,1] are asymmetric"}},
      {"reshape 3-D",
       [](ModelBuilder& b) {
         b.init_int64("s", {0, 2, -1});
         b.node("Reshape", {"x", "s"}, "rs");
         return "rs";
       },
       {"node 'rs' (Reshape): shape [0,2,-1] is not supported"}},
      {"weights not constant",
       [](ModelBuilder& b) {
         b.node("Relu", {"x"}, "r");
         b.node("Conv", {"x", "r"}, "cv");
         return "cv";
       },
       {"node 'cv' (Conv): its weight 'r' is not a constant"}},
      {"second reader of the input",
       [](ModelBuilder& b) {
         b.node("Relu", {"x"}, "r");
         b.node("Relu", {"x"}, "r2");
         return "r2";
       },
       {"node 'r2' (Relu): it reads the graph input 'x'"}},
      {"zero stride",
       [](ModelBuilder& b) {
         ints(b.conv("cv", "x", 2, 4, 3, 3), "strides", {0, 1});
         return "cv";
       },
       {"node 'cv' (Conv): strides=[0,1] and dilations=[1,1] must be at least 1"}},
      {"shape mismatch",
       [](ModelBuilder& b) {
         b.conv("cv", "x", 3, 4, 3, 3);
         return "cv";
       },
       {"node 'cv' (Conv): weight 'cv.w' is [4,3,3,3] but the input has C=2"}},
  };
  for (const Case& c : cases) {
    ModelBuilder b({2, 7, 7});
    const std::string file = b.save(path(c.label + ".onnx"), c.build(b));
    std::vector<std::string> parts = c.parts;
    parts.push_back(file);
    EXPECT_TRUE(throws_input_error([&] { load_network(file); }, parts)) << c.label;
  }
}


TEST_F(OnnxImportTest, FilesThatAreNotOnnx) {
  std::ifstream in(kData / "tiny_resnet.onnx", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  };
  for (size_t cut : {size_t{1}, size_t{100}, bytes.size() / 2, bytes.size() - 3}) {
    const std::string file = write("cut.onnx", bytes.substr(0, cut));
    EXPECT_TRUE(throws_input_error([&] { load_network(file); }, {file})) << cut;
  }
  const std::string garbage = write("garbage.onnx", std::string(300, '\xff'));
  EXPECT_TRUE(throws_input_error([&] { load_network(garbage); }, {garbage, "not an ONNX model"}));
  const std::string empty = write("empty.onnx", "");
  EXPECT_TRUE(throws_input_error([&] { load_network(empty); }, {empty, "no graph nodes"}));
  EXPECT_TRUE(throws_input_error([&] { load_network(path("absent.onnx")); },
                                 {"absent.onnx", "cannot open"}));
}

}  // namespace
}  // namespace convgrid
