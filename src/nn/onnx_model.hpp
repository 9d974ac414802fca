// An ONNX model file read with Debian's ONNX protobuf classes (libonnx-dev: onnx/onnx_pb.h, built
// with ONNX_ML and ONNX_NAMESPACE=onnx), and the small accessors the importer needs: a node's
// attributes with their defaults, a node's name as errors show it, and constant tensors as
// float or int64 values (from float_data/int64_data or little-endian raw_data).
//
// Private to the library: only the sources of the convgrid_onnx object library (src/*/onnx_*.cpp)
// and their tests include it (it pulls in protobuf).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace convgrid {

// The model in `path`. Throws InputError naming the file when it cannot be read or is not an
// ONNX model (protobuf refuses it, or it has no graph nodes).
onnx::ModelProto read_onnx_model(const std::string& path);

// The graph's constant tensors by name: its initializers and the values of its Constant nodes
// (a Constant's value wins over an initializer of the same name). The pointers are into `graph`.
std::map<std::string, const onnx::TensorProto*> constant_tensors(const onnx::GraphProto& graph);
std::map<std::string, onnx::TensorProto*> constant_tensors(onnx::GraphProto& graph);

// "'Conv_12' (Conv)", or "'Conv #3' (Conv)" for the unnamed node at index 3 of the graph.
std::string node_label(const onnx::NodeProto& node, int index);

// An attribute of a node; none when the node does not have it.
const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);
int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string string_attribute(const onnx::NodeProto& node, const std::string& name,
                             const std::string& fallback);
// An INTS attribute; none when absent.
std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                   const std::string& name);

// An INTS attribute that must have as many entries as `fallback` (2 for h, w; 4 for pads), or
// `fallback` when absent. InputError naming the attribute otherwise (1-D and 3-D operators).
std::vector<int64_t> ints_attribute(const onnx::NodeProto& node, const std::string& name,
                                    const std::vector<int64_t>& fallback);

// A TensorProto data_type as errors show it: "11 (DOUBLE)", or the number alone when unknown.
std::string element_type_name(int32_t data_type);

// The extents of a tensor.
std::vector<int64_t> tensor_dims(const onnx::TensorProto& t);
// The values of a FLOAT (resp. INT64) tensor, in order. Throws InputError naming the tensor when
// it has another element type or its data does not match its extents (or lives outside the file).
std::vector<float> float_values(const onnx::TensorProto& t);
std::vector<int64_t> int64_values(const onnx::TensorProto& t);

}  // namespace convgrid
