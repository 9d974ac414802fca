// Reading an ONNX file into onnx::ModelProto, and typed access to attributes and constants.
#include "nn/onnx_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

static_assert(std::endian::native == std::endian::little, "raw_data is little-endian");

// The values of a tensor held either in its typed field or as raw little-endian bytes.
template <class T, class Field>
std::vector<T> values(const onnx::TensorProto& t, int32_t type, const char* type_name,
                      const Field& typed) {
  if (t.data_type() != type) {
    throw InputError(fmt::format("tensor '{}' has ONNX element type {}, not {}", t.name(),
                                 element_type_name(t.data_type()), type_name));
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    throw InputError(
        fmt::format("tensor '{}' keeps its data in an external file, which is not "
                    "supported (save the model with its data inside)",
                    t.name()));
  }
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) throw InputError(fmt::format("tensor '{}' has a negative extent {}", t.name(), d));
    count = checked_mul(count, d, "tensor elements");
  }
  std::vector<T> out;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != static_cast<size_t>(count) * sizeof(T)) {
      throw InputError(fmt::format("tensor '{}' [{}] has {} bytes of data, not {}", t.name(),
                                   fmt::join(t.dims(), ","), raw.size(), count * sizeof(T)));
    }
    out.resize(static_cast<size_t>(count));
    if (!raw.empty()) std::memcpy(out.data(), raw.data(), raw.size());  // never null into memcpy
    return out;
  }
  if (typed.size() != count) {
    throw InputError(fmt::format("tensor '{}' [{}] has {} values, not {}", t.name(),
                                 fmt::join(t.dims(), ","), typed.size(), count));
  }
  out.assign(typed.begin(), typed.end());
  return out;
}

}  // namespace

onnx::ModelProto read_onnx_model(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad()) throw InputError(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes.str())) {
    throw InputError(
        fmt::format("{}: not an ONNX model (protobuf cannot decode its {} bytes; "
                    "truncated or another format?)",
                    path, bytes.str().size()));
  }
  if (!model.has_graph() || model.graph().node_size() == 0) {
    throw InputError(
        fmt::format("{}: not an ONNX model (it has no graph nodes; truncated?)", path));
  }
  return model;
}

std::map<std::string, const onnx::TensorProto*> constant_tensors(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::TensorProto*> out;
  for (const auto& t : graph.initializer()) out[t.name()] = &t;
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() == 0) continue;
    if (const auto* v = find_attribute(node, "value"); v && v->has_t())
      out[node.output(0)] = &v->t();
  }
  return out;
}

std::map<std::string, onnx::TensorProto*> constant_tensors(onnx::GraphProto& graph) {
  std::map<std::string, onnx::TensorProto*> out;
  for (const auto& [name, t] : constant_tensors(std::as_const(graph)))
    out[name] = const_cast<onnx::TensorProto*>(t);  // into `graph`, which is not const
  return out;
}

std::string node_label(const onnx::NodeProto& node, int index) {
  const std::string name =
      node.name().empty() ? fmt::format("{} #{}", node.op_type(), index) : node.name();
  return fmt::format("'{}' ({})", name, node.op_type());
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* a = find_attribute(node, name);
  return a ? a->i() : fallback;
}

float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const auto* a = find_attribute(node, name);
  return a ? a->f() : fallback;
}

std::string string_attribute(const onnx::NodeProto& node, const std::string& name,
                             const std::string& fallback) {
  const auto* a = find_attribute(node, name);
  return a ? a->s() : fallback;
}

std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                   const std::string& name) {
  const auto* a = find_attribute(node, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<int64_t> ints_attribute(const onnx::NodeProto& node, const std::string& name,
                                    const std::vector<int64_t>& fallback) {
  auto v = ints_attribute(node, name);
  if (!v) return fallback;
  if (v->size() != fallback.size()) {
    throw InputError(
        fmt::format("{}=[{}] has {} entries; only 2-D operators ({} entries) are supported", name,
                    fmt::join(*v, ","), v->size(), fallback.size()));
  }
  return *v;
}

std::string element_type_name(int32_t data_type) {
  const std::string& name = onnx::TensorProto_DataType_Name(data_type);
  return name.empty() ? std::to_string(data_type) : fmt::format("{} ({})", data_type, name);
}

std::vector<int64_t> tensor_dims(const onnx::TensorProto& t) {
  return {t.dims().begin(), t.dims().end()};
}

std::vector<float> float_values(const onnx::TensorProto& t) {
  return values<float>(t, onnx::TensorProto::FLOAT, "FLOAT", t.float_data());
}

std::vector<int64_t> int64_values(const onnx::TensorProto& t) {
  return values<int64_t>(t, onnx::TensorProto::INT64, "INT64", t.int64_data());
}

}  // namespace convgrid
