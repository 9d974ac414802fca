// ONNX models built in memory with ONNX's protobuf classes, for the tests of the importer and the
// exporter: a graph input "x", nodes, initializers and the attributes the importer reads, saved
// to a file.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace convgrid::test_data {

// A model built node by node: graph input "x" of N x dims (0 = symbolic), float initializers of
// zeros (float_data), and the attributes the importer reads.
class ModelBuilder {
 public:
  using Ints = std::vector<int64_t>;

  explicit ModelBuilder(Ints dims) {
    model_.set_ir_version(7);
    model_.add_opset_import()->set_version(13);
    auto* in = graph()->add_input();
    in->set_name("x");
    auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    shape->add_dim()->set_dim_param("N");
    for (int64_t d : dims) {
      if (d > 0)
        shape->add_dim()->set_dim_value(d);
      else
        shape->add_dim()->set_dim_param("S");
    }
  }

  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  void set_opset(int64_t version) { model_.mutable_opset_import(0)->set_version(version); }

  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, std::string output,
                        const std::string& name = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? output : name);
    for (auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return *n;
  }

  void init(const std::string& name, Ints dims) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    for (int64_t i = 0; i < count; ++i) t->add_float_data(0.f);
  }

  // A FLOAT scalar (no extents), as torch exports Clip's bounds: an initializer, or a Constant
  // node's value.
  void init_scalar(const std::string& name, float value) {
    *graph()->add_initializer() = scalar(name, value);
  }
  void constant_scalar(const std::string& name, float value) {
    auto* a = node("Constant", {}, name).add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = scalar(name, value);
  }

  void init_int64(const std::string& name, Ints values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }

  // A Conv node "name" of K filters R x S on C channels, reading `in`, writing `name`.
  onnx::NodeProto& conv(const std::string& name, const std::string& in, int64_t C, int64_t K,
                        int64_t R, int64_t S) {
    init(name + ".w", {K, C, R, S});
    return node("Conv", {in, name + ".w"}, name);
  }

  static onnx::TensorProto scalar(const std::string& name, float value) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(value);
    return t;
  }

  std::string save(const std::string& path, const std::string& output) {
    graph()->add_output()->set_name(output);
    std::ofstream f(path, std::ios::binary);
    model_.SerializeToOstream(&f);
    return path;
  }

 private:
  onnx::ModelProto model_;
};

inline void ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void integer(onnx::NodeProto& n, const std::string& name, int64_t value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

inline void real(onnx::NodeProto& n, const std::string& name, float value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

inline void text(onnx::NodeProto& n, const std::string& name, const std::string& value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

}  // namespace convgrid::test_data
