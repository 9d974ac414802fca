// Tests of writing trained weights into a copy of an ONNX model (nn/onnx_export.hpp), on a model
// built here with every kind of parameter tensor: conv weight and bias, batch norm's four, a
// grouped conv, a MatMul weight held transposed with its bias in a Constant node, and a Gemm
// transB=1 weight; initializers in float_data and in raw_data. Every replaced tensor holds exactly
// the given values (transposed back where ONNX holds [F, K]) as raw_data; with its old data put
// back, the written model equals the original byte for byte; importing the written model gives
// back exactly the parameters (round trip). Each refusal is one line naming the value, and
// nothing is written then.
#include "nn/onnx_export.hpp"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "nn/onnx_model.hpp"
#include "onnx_model_builder.hpp"
#include "temp_dir_test_base.hpp"
#include "throws_input_error.hpp"
#include "train/onnx_initial_weights.hpp"

namespace convgrid {
namespace {

using Ints = std::vector<int64_t>;
using Parameters = std::map<std::string, std::vector<float>>;
using test_data::integer;
using test_data::ModelBuilder;

class OnnxExportTest : public test_data::TempDirTest {
 protected:
  OnnxExportTest() : TempDirTest("onnx_export_test_") {}

  // Input 2 x 4 x 4:
  //   c1   Conv 3x3 pad 1, 2 -> 3 channels, bias   c1.w [3,2,3,3], c1.b [3] (raw_data)
  //   bn   BatchNormalization                      bn.s, bn.b, bn.m, bn.v [3]
  //   clip Clip [0, 6] (relu6)                     lo, hi: scalars, no parameters
  //   g    Conv 1x1 group=3 (depthwise)            g.w [3,1,1,1]
  //   f    Flatten                                 -> 48
  //   mm   MatMul + Add                            mm.w [48,5] (transposed), mm.b [5] (Constant)
  //   fc2  Gemm transB=1, bias                     fc2.w [4,5], fc2.b [4]
  // and an initializer no node reads, "unused".
  std::string build_model() {
    ModelBuilder b({2, 4, 4});
    test_data::ints(b.conv("c1", "x", 2, 3, 3, 3), "pads", {1, 1, 1, 1});
    b.graph()->mutable_node(0)->add_input("c1.b");
    b.init("c1.b", {3});
    for (const char* t : {"bn.s", "bn.b", "bn.m", "bn.v"}) b.init(t, {3});
    b.node("BatchNormalization", {"c1", "bn.s", "bn.b", "bn.m", "bn.v"}, "bn");
    b.init_scalar("lo", 0);
    b.init_scalar("hi", 6);
    b.node("Clip", {"bn", "lo", "hi"}, "clip");
    integer(b.conv("g", "clip", 1, 3, 1, 1), "group", 3);
    b.node("Flatten", {"g"}, "f");
    auto* value = b.node("Constant", {}, "mm.b").add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_name("mm.b");
    value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    value->mutable_t()->add_dims(5);
    for (int i = 0; i < 5; ++i) value->mutable_t()->add_float_data(0.5f * i);
    b.init("mm.w", {48, 5});
    b.node("MatMul", {"f", "mm.w"}, "mm");
    b.node("Add", {"mm", "mm.b"}, "mm_add");
    b.init("fc2.w", {4, 5});
    b.init("fc2.b", {4});
    integer(b.node("Gemm", {"mm_add", "fc2.w", "fc2.b"}, "fc2"), "transB", 1);
    b.init("unused", {2});
    for (auto& t : *b.graph()->mutable_initializer()) {
      if (t.name() == "c1.b") {  // as torch writes them: raw_data, no float_data
        t.clear_float_data();
        t.set_raw_data(std::string(3 * sizeof(float), '\0'));
      }
      if (t.name() == "unused") t.mutable_float_data()->Set(1, 2.5f);
    }
    return b.save(path("model.onnx"), "fc2");
  }

  // Values for every parameter of the model, all different: the sizes of its initial tensors.
  Parameters trained(const std::string& model) {
    Parameters out = onnx_initial_tensors(model);
    float next = 0.125f;
    for (auto& [name, values] : out) {
      for (float& v : values) v = next += 0.0625f;
    }
    return out;
  }
};

TEST_F(OnnxExportTest, EveryParameterTensorHoldsItsValuesAndNothingElseChanges) {
  const std::string model = build_model();
  const Parameters params = trained(model);
  ASSERT_EQ(params.size(), 11u);
  const std::vector<OnnxExportedTensor> written = export_onnx(model, params, path("out.onnx"));

  std::vector<std::string> names, parameters;
  for (const OnnxExportedTensor& t : written) {
    names.push_back(t.tensor);
    parameters.push_back(t.parameter);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"c1.w", "c1.b", "bn.s", "bn.b", "bn.m", "bn.v", "g.w",
                                             "mm.w", "mm.b", "fc2.w", "fc2.b"}));
  EXPECT_EQ(parameters,
            (std::vector<std::string>{"c1.weight", "c1.bias", "bn.weight", "bn.bias",
                                      "bn.running_mean", "bn.running_var", "g.weight", "mm.weight",
                                      "mm.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_EQ(written[0].dims, Ints({3, 2, 3, 3}));
  EXPECT_EQ(written[7].dims, Ints({48, 5}));

  const onnx::ModelProto original = read_onnx_model(model);
  onnx::ModelProto out = read_onnx_model(path("out.onnx"));
  const auto before = constant_tensors(original.graph());
  const auto after = constant_tensors(*out.mutable_graph());
  for (const OnnxExportedTensor& w : written) {
    SCOPED_TRACE(w.tensor);
    onnx::TensorProto& t = *after.at(w.tensor);
    EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
    EXPECT_EQ(t.float_data_size(), 0);
    EXPECT_EQ(tensor_dims(t), tensor_dims(*before.at(w.tensor)));
    EXPECT_EQ(tensor_dims(t), w.dims);
    const std::vector<float>& want = params.at(w.parameter);
    ASSERT_EQ(t.raw_data().size(), want.size() * sizeof(float));
    if (w.tensor == "mm.w") {  // ONNX [F=48, K=5], convgrid [K, F]
      const std::vector<float> got = float_values(t);
      for (int f = 0; f < 48; ++f) {
        for (int k = 0; k < 5; ++k) ASSERT_EQ(got[f * 5 + k], want[k * 48 + f]) << f << ", " << k;
      }
    } else {
      EXPECT_EQ(std::memcmp(t.raw_data().data(), want.data(), t.raw_data().size()), 0);
    }
    t = *before.at(w.tensor);  // the old data back: the rest must be as it was
  }
  EXPECT_EQ(out.SerializeAsString(), original.SerializeAsString());
}

TEST_F(OnnxExportTest, ImportingTheWrittenModelGivesBackTheParameters) {
  const std::string model = build_model();
  const Parameters params = trained(model);
  export_onnx(model, params, path("out.onnx"));
  EXPECT_EQ(onnx_initial_tensors(path("out.onnx")), params);
  // Written over itself, a second time: the same bytes.
  export_onnx(path("out.onnx"), params, path("again.onnx"));
  EXPECT_EQ(read_onnx_model(path("again.onnx")).SerializeAsString(),
            read_onnx_model(path("out.onnx")).SerializeAsString());
}

TEST_F(OnnxExportTest, RefusalsNameTheValueAndWriteNothing) {
  const std::string model = build_model();
  const std::string out = path("out.onnx");
  const auto refuses = [&](Parameters params, std::initializer_list<std::string_view> parts) {
    const auto result = throws_input_error([&] { export_onnx(model, params, out); }, parts);
    EXPECT_FALSE(std::filesystem::exists(out));
    return result;
  };
  Parameters missing = trained(model);
  missing.erase("bn.running_var");
  EXPECT_TRUE(refuses(missing, {model, "no value for bn.running_var", "'bn.v'"}));
  Parameters shorter = trained(model);
  shorter.at("c1.weight").pop_back();
  EXPECT_TRUE(refuses(shorter, {model, "c1.weight has 53 values", "'c1.w' [3, 2, 3, 3] holds 54"}));
  Parameters extra = trained(model);
  extra["zz.weight"] = {1};
  EXPECT_TRUE(refuses(extra, {model, "no tensor of the model holds zz.weight"}));
  EXPECT_TRUE(
      throws_input_error([&] { export_onnx(model, trained(model), path("nodir/out.onnx")); },
                         {"nodir/out.onnx: cannot write"}));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir()),
                          std::filesystem::directory_iterator()),
            1);  // model.onnx alone: no temporary file left

  onnx::ModelProto doubled = read_onnx_model(model);
  for (auto& t : *doubled.mutable_graph()->mutable_initializer()) {
    if (t.name() != "fc2.w") continue;
    t.set_data_type(onnx::TensorProto::DOUBLE);
    t.clear_float_data();
    for (int i = 0; i < 20; ++i) t.add_double_data(0);
  }
  const std::string doubled_path = path("double.onnx");
  std::ofstream(doubled_path, std::ios::binary) << doubled.SerializeAsString();
  EXPECT_TRUE(throws_input_error(
      [&] { export_onnx(doubled_path, trained(model), out); },
      {doubled_path, "initializer 'fc2.w' of layer 'fc2' has element type 11 (DOUBLE)",
       "FLOAT only"}));
  EXPECT_FALSE(std::filesystem::exists(out));
}

// Two convs that read one weight tensor: written once when they agree, refused when they differ.
TEST_F(OnnxExportTest, ASharedTensorTakesOneValue) {
  ModelBuilder b({2, 3, 3});
  b.init("w", {2, 2, 1, 1});
  b.node("Conv", {"x", "w"}, "a");
  b.node("Conv", {"a", "w"}, "b");
  const std::string model = b.save(path("shared.onnx"), "b");
  Parameters params = {{"a.weight", {1, 2, 3, 4}}, {"b.weight", {1, 2, 3, 4}}};
  const auto written = export_onnx(model, params, path("out.onnx"));
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].parameter, "a.weight");
  EXPECT_EQ(onnx_initial_tensors(path("out.onnx")), params);
  params.at("b.weight")[3] = 5;
  EXPECT_TRUE(
      throws_input_error([&] { export_onnx(model, params, path("other.onnx")); },
                         {model, "initializer 'w' holds both a.weight and b.weight", "differ"}));
}

}  // namespace
}  // namespace convgrid
