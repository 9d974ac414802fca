// The layer kinds training runs: one class per kind in train/layers/, each registered here by its
// factory. Adding a kind: its file, and one line in layer_registry.cpp.
#pragma once

#include <memory>

#include "train/train_layer.hpp"

namespace convgrid {

// The layer of setup.layer()'s kind. Throws InputError naming the layer when training does not
// run that kind, or its input is not what the kind needs.
std::unique_ptr<TrainLayer> make_train_layer(const LayerSetup& setup);

// The residual add before a layer that has a `residual` (setup.input: the main path,
// setup.operands: the shortcut's producer alone).
std::unique_ptr<TrainLayer> make_residual_add(const LayerSetup& setup);

}  // namespace convgrid
