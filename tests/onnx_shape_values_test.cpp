// Tests of the shape values an ONNX graph computes (nn/onnx_shape_values.hpp): each operator on
// nodes built with ONNX's protobuf classes, the values worked out by hand (the batch N kept
// symbolic through Shape, Gather, Concat and arithmetic), torch's two exports that need them
// (x.view(x.size(0), -1) and F.pad's pads), and each refusal's message.
#include "nn/onnx_shape_values.hpp"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "onnx_model_builder.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

using Ints = std::vector<int64_t>;
using namespace test_data;  // the attribute setters

constexpr ShapeElement N{1, true};
ShapeElement k(int64_t v) { return {v, false}; }

// Values by tensor name; "x" is an activation of ONNX shape [N, 3, 5, 7].
class ShapeValues : public ::testing::Test {
 protected:
  void set(const std::string& name, Ints dims, std::vector<ShapeElement> values) {
    values_[name] = ShapeValue{std::move(dims), std::move(values)};
  }
  void set(const std::string& name, Ints values) {
    std::vector<ShapeElement> v;
    for (int64_t x : values) v.push_back(k(x));
    set(name, {static_cast<int64_t>(values.size())}, v);
  }

  onnx::NodeProto node(const std::string& op, std::vector<std::string> inputs) {
    onnx::NodeProto n;
    n.set_op_type(op);
    for (const auto& i : inputs) n.add_input(i);
    n.add_output("out");
    return n;
  }

  bool computes(const onnx::NodeProto& n) const { return computes_shape_value(n, value_of()); }

  ShapeValue eval(const onnx::NodeProto& n) const {
    return evaluate_shape_node(n, value_of(), [](const std::string& t) -> ShapeValue {
      if (t != "x") ADD_FAILURE() << "the shape of " << t;
      return {{4}, {N, k(3), k(5), k(7)}};
    });
  }

  ShapeValueOf value_of() const {
    return [this](const std::string& t) -> std::optional<ShapeValue> {
      auto it = values_.find(t);
      if (it == values_.end()) return std::nullopt;
      return it->second;
    };
  }

  std::map<std::string, ShapeValue> values_;
};

TEST_F(ShapeValues, ShapeOfAnActivationHasTheBatchFirst) {
  auto shape = node("Shape", {"x"});
  EXPECT_TRUE(computes(shape));
  EXPECT_EQ(eval(shape), (ShapeValue{{4}, {N, k(3), k(5), k(7)}}));
  integer(shape, "start", 1);  // opset 15
  integer(shape, "end", -1);
  EXPECT_EQ(eval(shape), (ShapeValue{{2}, {k(3), k(5)}}));
  set("v", {2, 3}, {k(1), k(2), k(3), k(4), k(5), k(6)});
  EXPECT_EQ(eval(node("Shape", {"v"})), (ShapeValue{{2}, {k(2), k(3)}}));  // a value's extents
}

// x.view(x.size(0), -1): Shape, Gather of index 0 (a scalar), Unsqueeze, Concat with [-1].
TEST_F(ShapeValues, ViewByTheBatchIsNThenMinusOne) {
  set("shape", {4}, {N, k(3), k(5), k(7)});
  set("zero", {}, {k(0)});
  const ShapeValue size0 = eval(node("Gather", {"shape", "zero"}));
  EXPECT_EQ(size0, (ShapeValue{{}, {N}}));
  values_["size0"] = size0;
  set("axes", {0});
  values_["n"] = eval(node("Unsqueeze", {"size0", "axes"}));  // opset 13: axes an input
  EXPECT_EQ(values_["n"], (ShapeValue{{1}, {N}}));
  set("minus_one", {-1});
  auto cat = node("Concat", {"n", "minus_one"});
  integer(cat, "axis", 0);
  EXPECT_TRUE(computes(cat));
  EXPECT_EQ(eval(cat), (ShapeValue{{2}, {N, k(-1)}}));
  EXPECT_EQ(to_string(eval(cat)), "[N,-1]");
  // x.view(x.shape[0], x.shape[1] * x.shape[2] * x.shape[3]): the features multiply out
  set("c", {}, {k(3)});
  set("h", {}, {k(5)});
  values_["ch"] = eval(node("Mul", {"c", "h"}));
  EXPECT_EQ(values_["ch"], (ShapeValue{{}, {k(15)}}));
  auto old = node("Unsqueeze", {"ch"});  // opset 11: axes an attribute
  ints(old, "axes", {0});
  EXPECT_EQ(eval(old), (ShapeValue{{1}, {k(15)}}));
}

// F.pad(x, (0, 1, 0, 1)) at opset 13: torch's pads [left, right, top, bottom] become ONNX's
// [N, C, H, W] begins and ends by ConstantOfShape, Concat, Reshape, Slice (step -1), Transpose.
TEST_F(ShapeValues, TorchPadsBecomeOnnxPads) {
  set("torch", {0, 1, 0, 1});
  set("four", {1}, {k(4)});
  auto zeros = node("ConstantOfShape", {"four"});
  auto* value = zeros.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(0);
  EXPECT_TRUE(computes(zeros));
  values_["zeros"] = eval(zeros);
  auto cat = node("Concat", {"torch", "zeros"});
  integer(cat, "axis", 0);
  values_["cat"] = eval(cat);
  set("pairs", {-1, 2});
  values_["rows"] = eval(node("Reshape", {"cat", "pairs"}));
  EXPECT_EQ(values_["rows"].dims, (Ints{4, 2}));
  set("start", {-1});
  set("end", {-9223372036854775807});
  set("axis", {0});
  set("step", {-1});
  values_["reversed"] = eval(node("Slice", {"rows", "start", "end", "axis", "step"}));
  EXPECT_EQ(values_["reversed"], (ShapeValue{{4, 2}, {k(0), k(0), k(0), k(0), k(0), k(1), k(0), k(1)}}));
  auto t = node("Transpose", {"reversed"});
  ints(t, "perm", {1, 0});
  values_["columns"] = eval(t);
  EXPECT_EQ(values_["columns"].dims, (Ints{2, 4}));
  set("flat", {-1});
  values_["pads"] = eval(node("Reshape", {"columns", "flat"}));
  auto cast = node("Cast", {"pads"});
  integer(cast, "to", onnx::TensorProto::INT64);
  EXPECT_EQ(known_values(eval(cast), "pads"), (Ints{0, 0, 0, 0, 0, 0, 1, 1}));
}

TEST_F(ShapeValues, ArithmeticKeepsNTimesANumber) {
  set("n", {}, {N});
  set("two", {}, {k(2)});
  set("pair", {2}, {N, k(6)});
  EXPECT_EQ(eval(node("Mul", {"n", "two"})), (ShapeValue{{}, {ShapeElement{2, true}}}));
  values_["twice"] = eval(node("Mul", {"two", "n"}));
  EXPECT_EQ(to_string(values_["twice"]), "[2*N]");
  EXPECT_EQ(eval(node("Div", {"twice", "two"})), (ShapeValue{{}, {N}}));
  EXPECT_EQ(eval(node("Div", {"twice", "n"})), (ShapeValue{{}, {k(2)}}));
  EXPECT_EQ(eval(node("Sub", {"twice", "n"})), (ShapeValue{{}, {N}}));
  EXPECT_EQ(eval(node("Sub", {"n", "n"})), (ShapeValue{{}, {k(0)}}));
  set("pair2", {2}, {ShapeElement{2, true}, k(6)});
  EXPECT_EQ(eval(node("Div", {"pair2", "two"})), (ShapeValue{{2}, {N, k(3)}}));  // one by all
  set("three", {}, {k(3)});
  EXPECT_EQ(eval(node("Add", {"three", "two"})), (ShapeValue{{}, {k(5)}}));
  EXPECT_EQ(eval(node("Div", {"three", "two"})), (ShapeValue{{}, {k(1)}}));  // truncating
}

TEST_F(ShapeValues, SqueezeAndSliceInTheirOlderForms) {
  set("v", {1, 3, 1}, {k(4), k(5), k(6)});
  EXPECT_EQ(eval(node("Squeeze", {"v"})), (ShapeValue{{3}, {k(4), k(5), k(6)}}));
  auto one = node("Squeeze", {"v"});
  ints(one, "axes", {-1});
  EXPECT_EQ(eval(one).dims, (Ints{1, 3}));
  set("w", {4}, {N, k(3), k(5), k(7)});
  auto slice = node("Slice", {"w"});  // opset 1: attributes, no steps
  ints(slice, "starts", {1});
  ints(slice, "ends", {100});
  EXPECT_EQ(eval(slice), (ShapeValue{{3}, {k(3), k(5), k(7)}}));
  set("start", {-3});
  set("end", {-1});
  EXPECT_EQ(eval(node("Slice", {"w", "start", "end"})), (ShapeValue{{2}, {k(3), k(5)}}));
  set("zero", {0});
  set("four", {4});
  set("two", {2});
  EXPECT_EQ(eval(node("Slice", {"w", "zero", "four", "zero", "two"})), (ShapeValue{{2}, {N, k(5)}}));
}

TEST_F(ShapeValues, RefusalsNameTheValues) {
  set("n", {}, {N});
  set("one", {}, {k(1)});
  set("two", {}, {k(2)});
  set("zero", {}, {k(0)});
  set("pair", {2}, {N, k(6)});
  set("three", {1, 2, 3});
  set("big", {}, {k(int64_t{1} << 62)});
  set("huge", {70000});
  struct Case {
    onnx::NodeProto node;
    std::string message;
  };
  auto to_float = node("Cast", {"pair"});
  integer(to_float, "to", onnx::TensorProto::FLOAT);
  auto bad_perm = node("Transpose", {"three"});
  ints(bad_perm, "perm", {1, 0});
  auto twice = node("Concat", {"pair", "pair"});
  integer(twice, "axis", 0);
  const std::vector<Case> cases = {
      {node("Mul", {"n", "n"}), "N * N is not N times a number"},
      {node("Add", {"n", "one"}), "N + 1 adds a number to the batch N"},
      {node("Div", {"n", "two"}), "N / 2 is not N times a number"},
      {node("Div", {"one", "n"}), "1 / N divides by the batch N"},
      {node("Div", {"one", "zero"}), "1 / 0 divides by zero"},
      {node("Mul", {"big", "big"}), "overflows"},
      {node("Add", {"pair", "three"}), "extents [2] and [3] are not supported"},
      {node("Gather", {"pair", "two"}), "index 2 is out of range for 2 elements"},
      {to_float, "a cast to element type 1 (FLOAT) is not supported (only to integers)"},
      {bad_perm, "perm=[1,0] is not a permutation of 1 axes"},
      {node("Reshape", {"three", "two"}), "shape [2] does not fit 3 elements"},
      {node("ConstantOfShape", {"huge"}), "has more than 65536 elements"},
      {node("ConstantOfShape", {"pair"}), "its shape 'pair' is [N,6], which depends on the batch N"},
      {node("Unsqueeze", {"three"}), "it has no axes"},
      {node("Identity", {"missing"}), "its input 0 'missing' is not a shape value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.node.op_type() + ": " + c.message);
    EXPECT_TRUE(throws_input_error([&] { eval(c.node); }, {c.message}));
  }
}

// A node computes a shape value when it is a Shape or ConstantOfShape, or when its data inputs
// are shape values; the same operators on activations (or float constants) are not shape values.
TEST_F(ShapeValues, OnlyNodesOfShapeValuesComputeThem) {
  set("pair", {2}, {N, k(6)});
  EXPECT_TRUE(computes(node("Gather", {"pair", "pair"})));
  EXPECT_TRUE(computes(node("Concat", {"pair", "pair"})));
  EXPECT_FALSE(computes(node("Concat", {"pair", "x"})));  // an activation among them
  EXPECT_FALSE(computes(node("Concat", {"x", "x"})));
  EXPECT_FALSE(computes(node("Mul", {"x", "pair"})));
  EXPECT_FALSE(computes(node("Reshape", {"x", "pair"})));  // a Reshape of an activation
  EXPECT_FALSE(computes(node("Relu", {"pair"})));
}

}  // namespace
}  // namespace convgrid
