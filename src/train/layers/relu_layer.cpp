// ReLU in training: y = max(x, 0) on whatever each rank holds of its input; nothing moves. In
// place (the input's storage) when no other layer reads the input, else into a buffer of its own.
#include <algorithm>

#include "train/elementwise.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class ReluLayer final : public TrainLayer {
 public:
  explicit ReluLayer(const LayerSetup& s) : TrainLayer(s) {
    set_output(*s.input, s.sole_reader);
    size_ = s.input->slice.size();
    if (!in_place()) {
      out_buf_ = describe_activation("out", Life::output_values, size_);
      dout_buf_ = describe_activation("dout", Life::output_grad, size_);
    }
  }

  // backward reads y, the output.
  StorageUse storage_use() const override { return {.reads_output_in_backward = true}; }

  ActivationData bind(const Communicator&, ActivationData input, ActivationData) override {
    in_ = input;
    if (in_place()) return input;
    out_ = {take_floats(out_buf_), take_floats(dout_buf_)};
    return out_;
  }

  void forward(StepContext&) override {
    if (in_place()) {
      relu_forward(in_.data, size_);
      return;
    }
    for (int64_t i = 0; i < size_; ++i) out_.data[i] = std::max(in_.data[i], 0.0f);
  }

  void backward(StepContext&) override {
    if (in_place()) {
      relu_backward(in_.data, in_.grad, size_);
      return;
    }
    for (int64_t i = 0; i < size_; ++i) in_.grad[i] += out_.data[i] > 0.0f ? out_.grad[i] : 0.0f;
  }

 private:
  int64_t size_ = 0;
  size_t out_buf_ = 0, dout_buf_ = 0;
  ActivationData in_, out_;
};

}  // namespace

std::unique_ptr<TrainLayer> make_relu_layer(const LayerSetup& setup) {
  return std::make_unique<ReluLayer>(setup);
}

}  // namespace convgrid
