// The table of ResNet-50's distinct convolution shapes.
#include "nn/resnet50_layers.hpp"

#include <fmt/format.h>

namespace convgrid {

std::vector<NamedConv> resnet50_distinct_convs(int64_t batch) {
  // name, then the shape without the batch.
  static const char* const kLayers[][2] = {
      {"conv1_7x7_3-64_s2", "C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"},
      {"res2_1x1_64-64", "C=64,H=56,W=56,K=64,R=1,S=1"},
      {"res2_3x3_64-64", "C=64,H=56,W=56,K=64,R=3,S=3,pad=1"},
      {"res2_1x1_64-256", "C=64,H=56,W=56,K=256,R=1,S=1"},
      {"res2_1x1_256-64", "C=256,H=56,W=56,K=64,R=1,S=1"},
      {"res3_1x1_256-128", "C=256,H=56,W=56,K=128,R=1,S=1"},
      {"res3_3x3_128-128_s2", "C=128,H=56,W=56,K=128,R=3,S=3,stride=2,pad=1"},
      {"res3_1x1_128-512", "C=128,H=28,W=28,K=512,R=1,S=1"},
      {"res3_proj_256-512_s2", "C=256,H=56,W=56,K=512,R=1,S=1,stride=2"},
      {"res3_1x1_512-128", "C=512,H=28,W=28,K=128,R=1,S=1"},
      {"res3_3x3_128-128", "C=128,H=28,W=28,K=128,R=3,S=3,pad=1"},
      {"res4_1x1_512-256", "C=512,H=28,W=28,K=256,R=1,S=1"},
      {"res4_3x3_256-256_s2", "C=256,H=28,W=28,K=256,R=3,S=3,stride=2,pad=1"},
      {"res4_1x1_256-1024", "C=256,H=14,W=14,K=1024,R=1,S=1"},
      {"res4_proj_512-1024_s2", "C=512,H=28,W=28,K=1024,R=1,S=1,stride=2"},
      {"res4_1x1_1024-256", "C=1024,H=14,W=14,K=256,R=1,S=1"},
      {"res4_3x3_256-256", "C=256,H=14,W=14,K=256,R=3,S=3,pad=1"},
      {"res5_1x1_1024-512", "C=1024,H=14,W=14,K=512,R=1,S=1"},
      {"res5_3x3_512-512_s2", "C=512,H=14,W=14,K=512,R=3,S=3,stride=2,pad=1"},
      {"res5_1x1_512-2048", "C=512,H=7,W=7,K=2048,R=1,S=1"},
      {"res5_proj_1024-2048_s2", "C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2"},
      {"res5_1x1_2048-512", "C=2048,H=7,W=7,K=512,R=1,S=1"},
      {"res5_3x3_512-512", "C=512,H=7,W=7,K=512,R=3,S=3,pad=1"},
  };
  std::vector<NamedConv> out;
  for (const auto& [name, shape] : kLayers) {
    out.push_back({name, ConvShape::parse(fmt::format("N={},{}", batch, shape))});
  }
  return out;
}

}  // namespace convgrid
