// Max, average and global average pooling in training (train/pool_kernel.hpp): a pooling layer
// runs in the blocks its input lies in, pooled (Placement::pooled: a grid's Out pooled, or a concat's
// joined placement pooled), so each rank pools the windows of its own output slice after gathering
// their input region:
//
//   region[n,c | windows of my pooled slice] := all-to-all from the input's holders (halos)
//   Out[pooled slice]                        := local pooling of the region
//   dregion                                  := local pooling backward; back to the holders, added
//
// Global average pooling is average pooling with the whole input as its window.
#include <fmt/format.h>

#include <algorithm>

#include "convgrid/error.hpp"
#include "sim/compute.hpp"
#include "train/input_edge.hpp"
#include "train/pool_kernel.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class PoolLayer final : public TrainLayer {
 public:
  explicit PoolLayer(const LayerSetup& s) : TrainLayer(s) {
    const Layer& layer = s.layer();
    if (s.input == nullptr || s.input->grid_layout == nullptr) {
      throw InputError(
          fmt::format("layer '{}' ({}) must follow a convolution: it pools in that "
                      "layer's blocks",
                      layer.name, to_string(layer.kind)));
    }
    geo_ = PoolGeometry{layer.pool, layer.kind == LayerKind::max_pool, layer.in.H, layer.in.W};
    const auto out_place = s.placement("out", [&] { return s.input->placement->pooled(layer.out.H, layer.out.W); });
    set_output({out_place, s.input->grid_layout, out_place->slice(s.rank)}, false);
    const PoolGeometry geo = geo_;
    const auto region_of = [geo, out_place](int64_t r) {
      return Slice::whole(pool_input_region(geo, out_place->slice(r)));
    };
    region_ = region_of(s.rank).box;
    edge_ = InputEdge(*this, "region", *s.input, s.input->placement->tensor(), region_of, s,
                      s.sole_reader, WantedByAll::overlapping(s.sum("regions", [&] { return pool_input_regions(geo, *out_place); })), Life::forward);
    const int64_t n = output().slice.size();
    out_buf_ = describe_activation("out", Life::output_values, n);
    dout_buf_ = describe_activation("dout", Life::output_grad, n);
    argmax_buf_ = describe_activation("argmax", Life::forward_to_backward, n, sizeof(int32_t));
  }

  LayerWords modelled_edge_words() const override { return edge_.modelled_words(); }

  ActivationData bind(const Communicator& world, ActivationData input, ActivationData) override {
    edge_.bind(*this, world, input);
    out_ = {take_floats(out_buf_), take_floats(dout_buf_)};
    argmax_ = take_ints(argmax_buf_);
    return out_;
  }

  void forward(StepContext&) override {
    edge_.forward(edge_traffic_);
    if (sim::kernels_skipped()) return;  // model mode: the halo moves alone (sim/compute.hpp)
    pool_forward(geo_, region_, edge_.data(), output().slice, out_.data, argmax_);
  }

  void backward(StepContext&) override {
    if (!sim::kernels_skipped()) {
      std::fill(edge_.grad(), edge_.grad() + region_.volume(), 0.0f);
      pool_backward(geo_, region_, output().slice, out_.grad, argmax_, edge_.grad());
    }
    edge_.backward(edge_traffic_);
  }

 private:
  PoolGeometry geo_;
  Box4 region_;
  InputEdge edge_;
  size_t out_buf_ = 0, dout_buf_ = 0, argmax_buf_ = 0;
  ActivationData out_;
  int32_t* argmax_ = nullptr;
};

}  // namespace

std::unique_ptr<TrainLayer> make_pool_layer(const LayerSetup& setup) {
  return std::make_unique<PoolLayer>(setup);
}

}  // namespace convgrid
