// Fuzzes the ONNX importer (import_onnx): the input is the .onnx file's bytes, parsed by ONNX's
// protobuf classes and then checked node by node by convgrid. A model it accepts is a network
// convgrid can run: every conv and fc layer's shape at batch 2 validates, every parameter the
// importer names is one of the model's initializers, and the network's JSON form reads back.
#include "convgrid/error.hpp"
#include "fuzz_input.hpp"
#include "nn/network_json.hpp"
#include "nn/onnx_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  static const fuzz::InputFile file("model.onnx");
  const std::string& path = file.write(data, size);
  fuzz::only_input_errors(path, [&] {
    const OnnxNetwork imported = import_onnx(path);
    const Network& net = imported.network;
    for (const ComputeLayer& c : net.compute_layers()) conv_shape(net.layers()[c.layer], 2).validate();
    for (const auto& [layer, params] : imported.params) {
      fuzz::require(net.find(layer).has_value(), "parameters of a layer the network lacks: " + layer);
    }
    const std::string text = network_to_json(net);
    fuzz::require(network_from_json(text, "written.json") == net, "network_to_json does not read back: " + text);
  });
  return 0;
}
