// A concat in training (DenseNet, Inception): its operands joined along channels, in the joined
// placement on the grid that wrote its first operand (Placement::joined: samples, rows and
// columns as that grid's Out, the joined channels balanced over each k x c plane). Every rank's
// slice is a whole box, and operand j's part of it is a channel sub-range, so
//
//   operand j [my slice of window(offset_j, C_j)] := all-to-all from operand j's spread
//   out [n, offset_j + c, h, w]                   := operand j [n, c, h, w], each j
//   backward: doperand j := its channels of dout, sent back to its holders and added
//
// Example: operands of 2 and 3 channels on a grid of Pk x Pc = 2 x 2: the 5 joined channels lie
// as blocks [0,2) [2,3) [3,4) [4,5) on ranks (pk, pc) = (0,0) (0,1) (1,0) (1,1); rank (0,1)
// receives channel 0 of operand 1, rank (0,0) both channels of operand 0 and nothing of operand 1.
// A concat never runs in place; an operand it reads twice is two edges whose gradients add up.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "convgrid/error.hpp"
#include "sim/compute.hpp"
#include "train/input_edge.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class ConcatLayer final : public TrainLayer {
 public:
  explicit ConcatLayer(const LayerSetup& s) : TrainLayer(s) {
    const Layer& layer = s.layer();
    if (s.input == nullptr || s.input->grid_layout == nullptr) {
      throw InputError(fmt::format(
          "layer '{}' (concat): its input '{}' does not come from a convolution or fully connected "
          "layer, whose grid the concat joins in",
          layer.name, layer.input.empty() ? "before it" : layer.input));
    }
    if (s.operands.size() != layer.concat_inputs.size()) {
      throw Error(fmt::format("layer '{}': {} operand spreads for {} concat inputs", layer.name,
                              s.operands.size(), layer.concat_inputs.size()));
    }
    const Box4 tensor{{Range{0, s.batch}, Range{0, layer.out.C}, Range{0, layer.out.H},
                       Range{0, layer.out.W}}};
    const auto out_place = s.placement("out", [&] { return Placement::joined(s.input->grid_layout->dims(), tensor); });
    set_output({out_place, s.input->grid_layout, out_place->slice(s.rank)}, false);
    const Box4& mine = output().slice.box;
    samples_ = mine.extent(0);
    plane_ = mine.extent(2) * mine.extent(3);
    channels_ = mine.extent(1);
    const std::vector<int64_t> channels = s.net->concat_channels(s.index);
    int64_t offset = 0;
    for (size_t j = 0; j < channels.size(); ++j) {
      const bool first = j == 0;
      const ActivationSpread& from = first ? *s.input : *s.operands[j - 1].spread;
      const int64_t C = channels[j];
      const auto window = s.placement(fmt::format("operand{}", j), [&] { return out_place->window(offset, C); });
      const Range part = mine.r[1].intersect(Range{offset, offset + C});
      parts_.push_back({InputEdge(
                            *this, fmt::format("operand{}", j), from, window->tensor(),
                            [window](int64_t r) { return window->slice(r); }, s,
                            first ? s.sole_reader : s.operands[j - 1].sole_reader, WantedByAll::partition(),
                            Life::forward),
                        part.empty() ? 0 : part.begin - mine.r[1].begin, part.size()});
      offset += C;
    }
    const int64_t n = output().slice.size();
    out_buf_ = describe_activation("out", Life::output_values, n);
    dout_buf_ = describe_activation("dout", Life::output_grad, n);
  }

  LayerWords modelled_edge_words() const override {
    LayerWords w;
    for (const Part& p : parts_) {
      w.forward += p.edge.modelled_words().forward;
      w.backward += p.edge.modelled_words().backward;
    }
    return w;
  }

  ActivationData bind(const Communicator& world, ActivationData input,
                      ActivationData second) override {
    const ActivationData both[] = {input, second};
    return bind_inputs(world, both);
  }

  ActivationData bind_inputs(const Communicator& world,
                             std::span<const ActivationData> inputs) override {
    if (inputs.size() != parts_.size()) {
      throw Error(fmt::format("layer '{}' (concat) joins {} operands but is bound to {}", name(),
                              parts_.size(), inputs.size()));
    }
    for (size_t j = 0; j < parts_.size(); ++j) parts_[j].edge.bind(*this, world, inputs[j]);
    out_ = {take_floats(out_buf_), take_floats(dout_buf_)};
    return out_;
  }

  void forward(StepContext&) override {
    for (Part& p : parts_) {
      p.edge.forward(edge_traffic_);
      if (sim::kernels_skipped()) continue;  // model mode: the moves alone (sim/compute.hpp)
      const float* from = p.edge.data();
      each_sample(p, [&](int64_t joined, int64_t own, int64_t n) {
        std::copy(from + own, from + own + n, out_.data + joined);
      });
    }
  }

  void backward(StepContext&) override {
    for (Part& p : parts_) {
      float* to = p.edge.grad();
      if (!sim::kernels_skipped()) {
        each_sample(p, [&](int64_t joined, int64_t own, int64_t n) {
          std::copy(out_.grad + joined, out_.grad + joined + n, to + own);
        });
      }
      p.edge.backward(edge_traffic_);
    }
  }

 private:
  // An operand's edge and its channels in this rank's output slice (from the slice's first).
  struct Part {
    InputEdge edge;
    int64_t first = 0, channels = 0;
  };

  // f(offset in the output slice, offset in the operand's slice, elements) for each sample: the
  // operand's channels of a sample are one run in both.
  template <class F>
  void each_sample(const Part& p, F&& f) const {
    const int64_t run = p.channels * plane_;
    if (run == 0) return;
    for (int64_t a = 0; a < samples_; ++a) f((a * channels_ + p.first) * plane_, a * run, run);
  }

  std::vector<Part> parts_;
  int64_t samples_ = 0, channels_ = 0, plane_ = 0;
  size_t out_buf_ = 0, dout_buf_ = 0;
  ActivationData out_;
};

}  // namespace

std::unique_ptr<TrainLayer> make_concat_layer(const LayerSetup& setup) {
  return std::make_unique<ConcatLayer>(setup);
}

}  // namespace convgrid
