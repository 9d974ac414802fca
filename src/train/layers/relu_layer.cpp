// ReLU, ReLU6 and the add layer in training: y = max(x, 0), min(max(x, 0), 6), resp. x, on
// whatever each rank holds of its input; nothing moves. In place (the input's storage) when no
// other layer reads the input, else into a buffer of its own. Backward passes the gradient where
// the output says the function's slope is 1: y > 0, 0 < y < 6 (train/elementwise.hpp), resp.
// everywhere. An add layer is the identity because its sum, input + residual, is the residual
// add that the graph puts before every layer with a residual (residual_add_layer.cpp).
#include <algorithm>

#include "kernel/vector_loops.hpp"
#include "sim/compute.hpp"
#include "train/elementwise.hpp"
#include "train/layers/elementwise_storage.hpp"

namespace convgrid {
namespace {

// What tells them apart: the function of one value, whether the gradient passes where the
// output is y (and so whether backward reads the output), and the vectorised in-place loops.
struct Relu {
  static constexpr bool kReadsOutput = true;
  static float of(float x) { return std::max(x, 0.0f); }
  static bool passes(float y) { return y > 0.0f; }
  static void forward(float* data, int64_t n) { relu_forward(data, n); }
  static void backward(const float* y, float* grad, int64_t n) { relu_backward(y, grad, n); }
};

struct Relu6 {
  static constexpr bool kReadsOutput = true;
  static float of(float x) { return relu6(x); }
  static bool passes(float y) { return relu6_passes(y); }
  static void forward(float* data, int64_t n) { relu6_forward(data, n); }
  static void backward(const float* y, float* grad, int64_t n) { relu6_backward(y, grad, n); }
};

struct Identity {  // passes the gradient everywhere: backward does not read the output
  static constexpr bool kReadsOutput = false;
  static float of(float x) { return x; }
  static void forward(float*, int64_t) {}
  static void backward(const float*, float*, int64_t) {}
};

template <class F>
class ElementwiseLayer final : public ElementwiseStorage {
 public:
  explicit ElementwiseLayer(const LayerSetup& s) : ElementwiseStorage(s, s.sole_reader) {}

  // backward reads y, the output, unless the function is the identity.
  StorageUse storage_use() const override { return {.reads_output_in_backward = F::kReadsOutput}; }

  // Nothing moves: in model mode (sim/compute.hpp) there is nothing to do.
  void forward(StepContext&) override {
    if (sim::kernels_skipped()) return;
    if (in_place()) {
      F::forward(in_.data, size_);
      return;
    }
    for (int64_t i = 0; i < size_; ++i) out_.data[i] = F::of(in_.data[i]);
  }

  void backward(StepContext&) override {
    if (sim::kernels_skipped()) return;
    if (in_place()) {
      F::backward(in_.data, in_.grad, size_);
      return;
    }
    if constexpr (F::kReadsOutput) {
      for (int64_t i = 0; i < size_; ++i)
        in_.grad[i] += F::passes(out_.data[i]) ? out_.grad[i] : 0.0f;
    } else {
      add_into(in_.grad, out_.grad, size_);
    }
  }
};

}  // namespace

std::unique_ptr<TrainLayer> make_relu_layer(const LayerSetup& setup) {
  return std::make_unique<ElementwiseLayer<Relu>>(setup);
}

std::unique_ptr<TrainLayer> make_relu6_layer(const LayerSetup& setup) {
  return std::make_unique<ElementwiseLayer<Relu6>>(setup);
}

std::unique_ptr<TrainLayer> make_add_layer(const LayerSetup& setup) {
  return std::make_unique<ElementwiseLayer<Identity>>(setup);
}

}  // namespace convgrid
