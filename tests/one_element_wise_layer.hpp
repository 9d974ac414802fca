// One element-wise training layer of a given kind on a 1 x 1 x 5 input, batch 1, on one rank,
// whose arena buffers (none in place) are vectors of its own: for the tests of ReLU's family and
// of the smooth activations. An add layer gets a residual: an earlier layer of the same shape.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "nn/network.hpp"
#include "train/layer_registry.hpp"

namespace convgrid::test_layers {

class OneLayer {
 public:
  OneLayer(LayerKind kind, bool sole_reader) : net_("n", {1, 1, 5}) {
    Layer layer(kind, "act");
    if (kind == LayerKind::add) {
      net_.add(Layer(LayerKind::relu, "shortcut"));
      layer.residual = "shortcut";
    }
    net_.add(layer);
    input_.slice = Slice::whole(Box4{{Range{0, 1}, Range{0, 1}, Range{0, 1}, Range{0, 5}}});
    LayerSetup s;
    s.net = &net_;
    s.index = net_.layers().size() - 1;
    s.input = &input_;
    s.sole_reader = sole_reader;
    layer_ = make_train_layer(s);
    std::vector<std::byte*> places;
    for (const BufferSpec& b : layer_->buffers()) {
      arena_.emplace_back(static_cast<size_t>(b.bytes) / sizeof(float));
      places.push_back(reinterpret_cast<std::byte*>(arena_.back().data()));
    }
    layer_->place_activations(std::move(places));
  }

  TrainLayer& operator*() { return *layer_; }
  TrainLayer* operator->() { return layer_.get(); }

 private:
  Network net_;
  ActivationSpread input_;
  std::unique_ptr<TrainLayer> layer_;
  std::vector<std::vector<float>> arena_;
};

}  // namespace convgrid::test_layers
