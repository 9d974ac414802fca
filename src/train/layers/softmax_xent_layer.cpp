// The loss in training: softmax cross-entropy over the logits where they lie
// (train/softmax_xent.hpp: three all-reduces over all ranks, of N, 2N and N words). Its forward
// writes the logits' gradient, so it must be the logits' only reader.
#include <fmt/format.h>

#include "comm/volume.hpp"
#include "convgrid/error.hpp"
#include "train/softmax_xent.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class SoftmaxXentLayer final : public TrainLayer {
 public:
  explicit SoftmaxXentLayer(const LayerSetup& s)
      : TrainLayer(s), batch_(s.batch), procs_(s.procs), rank_(s.rank) {
    if (!s.sole_reader) {
      throw InputError(
          fmt::format("layer '{}': the loss must be the only reader of its logits", name()));
    }
    set_output(*s.input, true);
  }

  StorageUse storage_use() const override { return {.writes_input_grad_in_forward = true}; }

  LayerWords modelled_words() const override {
    const int q = static_cast<int>(procs_), me = static_cast<int>(rank_);
    return {2 * all_reduce_words(batch_, q, me) + all_reduce_words(2 * batch_, q, me), 0};
  }

  ActivationData bind(const Communicator& world, ActivationData input, ActivationData) override {
    world_ = &world;
    logits_ = input;
    return input;
  }

  void forward(StepContext& step) override {
    step.loss = softmax_xent(*world_, output().slice, logits_.data, step.labels, step.weights,
                             logits_.grad, traffic_);
  }
  void backward(StepContext&) override {}

 private:
  int64_t batch_, procs_, rank_;
  const Communicator* world_ = nullptr;
  ActivationData logits_;
};

}  // namespace

std::unique_ptr<TrainLayer> make_softmax_xent_layer(const LayerSetup& setup) {
  return std::make_unique<SoftmaxXentLayer>(setup);
}

}  // namespace convgrid
