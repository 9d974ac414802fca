// The distinct convolution layers of ResNet-50 (ImageNet 224x224, torchvision v1.5: the stride
// of a bottleneck sits on its 3x3), each with a name, for benchmarks and per-layer comparisons.
#pragma once

#include <string>
#include <vector>

#include "convgrid/conv_shape.hpp"

namespace convgrid {

struct NamedConv {
  std::string name;
  ConvShape shape;
};

// Every distinct convolution shape of ResNet-50 at batch N, in network order.
std::vector<NamedConv> resnet50_distinct_convs(int64_t batch);

}  // namespace convgrid
