// The SGD update on each rank's parameter shards (see sgd.hpp).
#include "train/sgd.hpp"

#include "sim/compute.hpp"

namespace convgrid {

Sgd::Sgd(const std::vector<ParamShard>& params, SgdOptions options) : options_(options) {
  for (const ParamShard& p : params) {
    const MemoryScope scope("SGD momentum of ", p.name);
    velocity_.emplace_back(p.value.size(), 0.0f);
  }
}

void Sgd::step(std::vector<ParamShard>& params) {
  if (sim::kernels_skipped()) return;  // model mode: no local compute (sim/compute.hpp)
  const float lr = options_.lr, mu = options_.momentum, wd = options_.weight_decay;
  for (size_t i = 0; i < params.size(); ++i) {
    float* w = params[i].value.data();
    const float* g = params[i].grad.data();
    float* v = velocity_[i].data();
    for (size_t j = 0; j < params[i].value.size(); ++j) {
      v[j] = mu * v[j] + (g[j] + wd * w[j]);
      w[j] -= lr * v[j];
    }
  }
}

}  // namespace convgrid
