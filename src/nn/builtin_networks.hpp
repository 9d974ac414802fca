// The reference networks of SPEC section 9, built in:
//   resnet50  ImageNet 3x224x224, torchvision's ResNet-50 v1.5 (the stride of a bottleneck on its
//             3x3), 53 convolutions (4 of them projection shortcuts) and fc1000;
//   vgg16     ImageNet 3x224x224, VGG-16 (configuration D): 13 convolutions and 3 fully connected;
//   fmnist    Fashion-MNIST 1x28x28: 3 convolutions and 2 fully connected, for training.
// Batch normalisation is not a layer kind, so ResNet-50 has none (a per-channel element-wise
// layer in training mode; its statistics would reduce over the nhw-fibre).
#pragma once

#include <string>
#include <vector>

#include "nn/network.hpp"

namespace convgrid {

// The names builtin_network knows, in a fixed order.
std::vector<std::string> builtin_network_names();

// Throws InputError listing the known names when `name` is none of them.
Network builtin_network(const std::string& name);

}  // namespace convgrid
