// The smooth activations in training (train/smooth_activations.hpp): y = f(x) on whatever each
// rank holds of its input; nothing moves. Where the slope is a function of the output (sigmoid,
// tanh, Hardsigmoid) the layer runs in place when no other layer reads its input, as ReLU does;
// where it needs the input (Hardswish, SiLU) the output has a buffer of its own and backward reads
// the input, which therefore lives until then (StorageUse::reads_input_in_backward).
#include "convgrid/error.hpp"
#include "sim/compute.hpp"
#include "train/layers/elementwise_storage.hpp"
#include "train/smooth_activations.hpp"

namespace convgrid {
namespace {

template <class F>
class SmoothActivationLayer final : public ElementwiseStorage {
 public:
  explicit SmoothActivationLayer(const LayerSetup& s)
      : ElementwiseStorage(s, F::kSlopeOfOutput && s.sole_reader) {}

  StorageUse storage_use() const override {
    return {.reads_input_in_backward = !F::kSlopeOfOutput, .reads_output_in_backward = F::kSlopeOfOutput};
  }

  void forward(StepContext&) override {
    if (sim::kernels_skipped()) return;  // model mode: no local compute (sim/compute.hpp)
    float* out = in_place() ? in_.data : out_.data;
    for (int64_t i = 0; i < size_; ++i) out[i] = F::of(in_.data[i]);
  }

  void backward(StepContext&) override {
    if (sim::kernels_skipped()) return;
    if (in_place()) {  // the input's storage holds y and, in place, the gradient dy -> dx
      for (int64_t i = 0; i < size_; ++i) in_.grad[i] *= F::slope(in_.data[i]);
      return;
    }
    const float* at = F::kSlopeOfOutput ? out_.data : in_.data;
    for (int64_t i = 0; i < size_; ++i) in_.grad[i] += out_.grad[i] * F::slope(at[i]);
  }
};

}  // namespace

std::unique_ptr<TrainLayer> make_smooth_activation_layer(const LayerSetup& setup) {
  switch (setup.layer().kind) {
    case LayerKind::sigmoid:
      return std::make_unique<SmoothActivationLayer<SigmoidFn>>(setup);
    case LayerKind::tanh:
      return std::make_unique<SmoothActivationLayer<TanhFn>>(setup);
    case LayerKind::hardsigmoid:
      return std::make_unique<SmoothActivationLayer<HardsigmoidFn>>(setup);
    case LayerKind::hardswish:
      return std::make_unique<SmoothActivationLayer<HardswishFn>>(setup);
    case LayerKind::silu:
      return std::make_unique<SmoothActivationLayer<SiluFn>>(setup);
    default:
      throw Error(std::string("not a smooth activation: ") + std::string(to_string(setup.layer().kind)));
  }
}

}  // namespace convgrid
