// The initial weights of a network imported from ONNX (`convgrid train --network X.onnx`): the
// model's initializers under convgrid's parameter names and in its layouts (which initializer
// holds which parameter: nn/onnx_param_links.hpp), the reverse of what `convgrid export` writes
// (apps/cmd_export.cpp, nn/onnx_export.hpp), so that training starts where PyTorch's model stood
// instead of at convgrid's own seeded initialisation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nn/network.hpp"
#include "train/train_layer.hpp"

namespace convgrid {

// Whole tensors by convgrid parameter name, row-major in convgrid's layout. InputError naming
// the file and the tensor when an initializer is not FLOAT or its size is not the layer's, and
// naming the layer when a batch norm's epsilon or momentum is not convgrid's (PyTorch's defaults).
std::map<std::string, std::vector<float>> onnx_initial_tensors(
    const std::string& path, const std::optional<Activation>& input_shape = {});

// Fills every shard (trainable parameters and state such as running statistics) with its slice
// of the tensor of its name. InputError naming the tensor when one is missing or of another size;
// every shard is checked before any is written.
void load_initial_tensors(const std::map<std::string, std::vector<float>>& tensors,
                          const std::string& origin, std::vector<ParamShard>& params,
                          std::vector<ParamShard>& state);

}  // namespace convgrid
