// The scale layer in training (a squeeze-and-excitation block's product, nn/network.hpp): its
// input times its gate, one value per sample and channel, in the input's spread.
//
//   gate[my input slice's samples x channels] := all-to-all from the gate's spread; every rank of
//                                               a spatial split receives the same values
//                                               (model/gate_spread.hpp)
//   out  := x * gate[n, c]
//   backward: dx += dout * gate[n, c]; dgate[n, c] := sum over my pixels of dout * x, sent back
//             to the gate's holders, where the ranks' partial sums add up
// Never in place: backward reads the input.
#include <fmt/format.h>

#include <algorithm>

#include "convgrid/error.hpp"
#include "model/gate_spread.hpp"
#include "sim/compute.hpp"
#include "train/input_edge.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class ScaleLayer final : public TrainLayer {
 public:
  explicit ScaleLayer(const LayerSetup& s) : TrainLayer(s) {
    if (s.input == nullptr || s.operands.size() != 1)
      throw Error(fmt::format("layer '{}' (scale): an input and a gate are needed", s.layer().name));
    set_output(*s.input, false);
    slice_ = s.input->slice;
    size_ = slice_.size();
    const auto main = s.input->placement;
    gate_box_ = gate_wanted(*main, s.rank).box;
    edge_ = InputEdge(
        *this, "gate", *s.operands[0].spread, gate_tensor(*main),
        [main](int64_t r) { return gate_wanted(*main, r); }, s, s.operands[0].sole_reader,
        WantedByAll::overlapping(s.sum("gate", [&] { return gate_wanted_sum(*main); })),
        Life::forward_to_backward);
    out_buf_ = describe_activation("out", Life::output_values, size_);
    dout_buf_ = describe_activation("dout", Life::output_grad, size_);
  }

  StorageUse storage_use() const override { return {.reads_input_in_backward = true}; }
  LayerWords modelled_edge_words() const override { return edge_.modelled_words(); }

  ActivationData bind(const Communicator& world, ActivationData input, ActivationData gate) override {
    in_ = input;
    edge_.bind(*this, world, gate);
    out_ = {take_floats(out_buf_), take_floats(dout_buf_)};
    return out_;
  }

  void forward(StepContext&) override {
    edge_.forward(edge_traffic_);
    if (sim::kernels_skipped()) return;  // model mode: the move alone (sim/compute.hpp)
    const float* g = edge_.data();
    for_each_plane_run(slice_, [&](int64_t n, int64_t c, int64_t off, int64_t len) {
      const float v = g[gate_index(n, c)];
      for (int64_t i = off; i < off + len; ++i) out_.data[i] = in_.data[i] * v;
    });
  }

  void backward(StepContext&) override {
    if (!sim::kernels_skipped()) {
      const float* g = edge_.data();
      float* dg = edge_.grad();
      std::fill(dg, dg + edge_.wanted_size(), 0.0f);
      for_each_plane_run(slice_, [&](int64_t n, int64_t c, int64_t off, int64_t len) {
        const int64_t j = gate_index(n, c);
        float sum = 0.0f;
        for (int64_t i = off; i < off + len; ++i) {
          in_.grad[i] += out_.grad[i] * g[j];
          sum += out_.grad[i] * in_.data[i];
        }
        dg[j] += sum;
      });
    }
    edge_.backward(edge_traffic_);
  }

 private:
  // Sample n, channel c in the delivered gate (the wanted box, samples then channels).
  int64_t gate_index(int64_t n, int64_t c) const {
    return (n - gate_box_.r[0].begin) * gate_box_.extent(1) + (c - gate_box_.r[1].begin);
  }

  Slice slice_;
  int64_t size_ = 0;
  Box4 gate_box_;
  InputEdge edge_;
  size_t out_buf_ = 0, dout_buf_ = 0;
  ActivationData in_, out_;
};

}  // namespace

std::unique_ptr<TrainLayer> make_scale_layer(const LayerSetup& setup) {
  return std::make_unique<ScaleLayer>(setup);
}

}  // namespace convgrid
