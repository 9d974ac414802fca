// Flatten in training: a change of view only (C x H x W of a sample read as C*H*W features); the
// activation keeps its spread and storage, and the next compute layer's redistribution reads it
// in the flattened view (model/redistribution.hpp).
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class FlattenLayer final : public TrainLayer {
 public:
  explicit FlattenLayer(const LayerSetup& s) : TrainLayer(s) { set_output(*s.input, true); }

  ActivationData bind(const Communicator&, ActivationData input, ActivationData) override {
    return input;
  }
  void forward(StepContext&) override {}
  void backward(StepContext&) override {}
};

}  // namespace

std::unique_ptr<TrainLayer> make_flatten_layer(const LayerSetup& setup) {
  return std::make_unique<FlattenLayer>(setup);
}

}  // namespace convgrid
