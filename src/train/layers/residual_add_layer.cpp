// The residual add in training (a layer's `residual` in the network: the ResNet shortcut): the
// element-wise sum of the main path's activation and the shortcut's, in the main path's spread.
//
//   shortcut[main path's slice] := all-to-all from the shortcut's spread (model/redistribution)
//   out                         := main + shortcut (in place on the main path when it has no
//                                  other reader)
//   backward: dmain += dout; dshortcut := dout, sent back to the shortcut's holders and added
#include <algorithm>

#include "kernel/vector_loops.hpp"
#include "sim/compute.hpp"
#include "train/input_edge.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class ResidualAddLayer final : public TrainLayer {
 public:
  explicit ResidualAddLayer(const LayerSetup& s)
      : TrainLayer(s, s.layer().name + "+" + s.layer().residual, "residual_add") {
    set_output(*s.input, s.sole_reader);
    size_ = s.input->slice.size();
    const auto main = s.input->placement;
    const LayerSetup::Operand& shortcut = s.operands.at(0);
    edge_ = InputEdge(
        *this, "shortcut", *shortcut.spread, main->tensor(),
        [main](int64_t r) { return main->slice(r); }, s, shortcut.sole_reader, WantedByAll::partition(),
        Life::forward);
    if (!in_place()) {
      out_buf_ = describe_activation("out", Life::output_values, size_);
      dout_buf_ = describe_activation("dout", Life::output_grad, size_);
    }
  }

  LayerWords modelled_edge_words() const override { return edge_.modelled_words(); }

  ActivationData bind(const Communicator& world, ActivationData input,
                      ActivationData shortcut) override {
    main_ = input;
    edge_.bind(*this, world, shortcut);
    out_ = in_place() ? input : ActivationData{take_floats(out_buf_), take_floats(dout_buf_)};
    return out_;
  }

  void forward(StepContext&) override {
    edge_.forward(edge_traffic_);
    if (sim::kernels_skipped()) return;  // model mode: the move alone (sim/compute.hpp)
    const float* add = edge_.data();
    if (!in_place()) {
      add_arrays(main_.data, add, out_.data, size_);
      return;
    }
    add_into(out_.data, add, size_);
  }

  void backward(StepContext&) override {
    if (!sim::kernels_skipped()) {
      if (!in_place()) add_into(main_.grad, out_.grad, size_);
      std::copy(out_.grad, out_.grad + size_, edge_.grad());
    }
    edge_.backward(edge_traffic_);
  }

 private:
  int64_t size_ = 0;
  InputEdge edge_;
  size_t out_buf_ = 0, dout_buf_ = 0;
  ActivationData main_, out_;
};

}  // namespace

std::unique_ptr<TrainLayer> make_residual_add_layer(const LayerSetup& setup) {
  return std::make_unique<ResidualAddLayer>(setup);
}

}  // namespace convgrid
