// The buffers DistNet and Sgd allocate, stage by stage, mirrored from train/dist_net.cpp (its
// constructor), train/box_exchange.cpp (staging) and train/sgd.cpp (momentum).
#include "train/training_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "convgrid/error.hpp"
#include "layout/layer_layout.hpp"
#include "model/grid_memory.hpp"
#include "model/redistribution.hpp"
#include "model/streamed_memory.hpp"
#include "model/streamed_volume.hpp"
#include "train/pool_kernel.hpp"

namespace convgrid {
namespace {

constexpr int64_t kFloat = sizeof(float);

// DistNet never allocates an empty buffer.
int64_t at_least_one(int64_t n) { return std::max<int64_t>(n, 1); }

// What a BoxExchange on rank `me` keeps: whether it is the identity (the wanted storage is the
// held one), and its staging words (send and receive buffers, only when anything moves anywhere).
// Held slices partition the tensor (an at-rest placement), so rank r receives |wanted(r)| less
// what it holds of it.
struct ExchangeFootprint {
  bool identity = false;
  int64_t staging_words = 0;
};

template <class Held, class Wanted>
ExchangeFootprint exchange_footprint(const Box4& held_tensor, const Held& held,
                                     const Box4& wanted_tensor, const Wanted& wanted, int64_t procs,
                                     int64_t me) {
  const Slice my_held = held(me), my_wanted = wanted(me);
  int64_t send = 0, recv = 0;
  bool moves = false;
  for (int64_t r = 0; r < procs; ++r) {
    if (r == me) continue;
    const Slice their_held = held(r), their_wanted = wanted(r);
    send += slice_overlap(my_held, held_tensor, their_wanted, wanted_tensor);
    recv += slice_overlap(their_held, held_tensor, my_wanted, wanted_tensor);
    moves = moves || their_wanted.size() >
                         slice_overlap(their_held, held_tensor, their_wanted, wanted_tensor);
  }
  moves = moves || recv > 0;
  ExchangeFootprint f;
  f.identity = same_extents(held_tensor, wanted_tensor) && recv == 0 &&
               my_held.box == my_wanted.box && my_held.flat == my_wanted.flat;
  f.staging_words = moves && procs > 1 ? at_least_one(send) + at_least_one(recv) : 0;
  return f;
}

// Words of the at-rest slices the layer model counts for `passes` (model/grid_memory.cpp):
// In, Ker and dOut as read, Out, dIn and dKer as written.
int64_t at_rest_words(const LayerLayout& L, GridCoord g, const std::vector<Pass>& passes) {
  const int64_t in = L.in_slice(g).size(), ker = L.ker_slice(g).size(), out = L.out_slice(g).size();
  bool has_in = false, has_ker = false, has_dout = false;
  int64_t words = 0;
  for (Pass p : passes) {
    switch (p) {
      case Pass::forward:
        has_in = has_ker = true;
        words += out;
        break;
      case Pass::backward_data:
        has_ker = has_dout = true;
        words += in;
        break;
      case Pass::backward_weights:
        has_in = has_dout = true;
        words += ker;
        break;
    }
  }
  return words + (has_in ? in : 0) + (has_ker ? ker : 0) + (has_dout ? out : 0);
}

}  // namespace

TrainingMemory training_memory(const Network& net, const std::vector<LayerPlan>& plans,
                               int64_t batch, int64_t procs, int64_t rank, Backend engine) {
  check_trainable(net);
  const std::vector<ComputeLayer> compute = net.compute_layers();
  if (plans.size() != compute.size()) {
    throw InputError(fmt::format("{} plans for the {} compute layers of '{}'", plans.size(),
                                 compute.size(), net.name()));
  }
  if (rank < 0 || rank >= procs) throw InputError(fmt::format("rank {} of {} ranks", rank, procs));
  TrainingMemory m;
  std::shared_ptr<const Placement> prev;  // where the last stage's output lies
  std::unique_ptr<LayerLayout> last_layout;
  size_t ci = 0;
  for (const Layer& layer : net.layers()) {
    switch (layer.kind) {
      case LayerKind::conv:
      case LayerKind::fully_connected: {
        const LayerPlan& plan = plans[ci++];
        const ConvShape shape = conv_shape(layer, batch);
        if (!(plan.shape == shape)) {
          throw InputError(
              fmt::format("the plan of layer '{}' is for {}, the layer at batch {} is {}",
                          layer.name, plan.shape.to_string(), batch, shape.to_string()));
        }
        plan.grid.validate_size(procs);
        auto L = std::make_unique<LayerLayout>(shape, plan.grid);
        const GridCoord g = plan.grid.coord_of(rank);
        const auto in_place = std::make_shared<const Placement>(Placement::input_of(*L));
        const int64_t in_size = L->in_slice(g).size();
        const bool first = prev == nullptr;
        if (first) {
          m.activations += kFloat * at_least_one(in_size);  // filled by the loader; no gradient
        } else {
          const auto held = [&](int64_t r) { return prev->slice(r); };
          const auto wanted = [&](int64_t r) { return in_place->slice(r); };
          const ExchangeFootprint f =
              exchange_footprint(prev->tensor(), held, in_place->tensor(), wanted, procs, rank);
          m.exchanges += kFloat * f.staging_words;
          if (!f.identity) m.activations += kFloat * 2 * at_least_one(in_size);
        }
        const int64_t out = L->out_slice(g).size(), ker = L->ker_slice(g).size();
        m.activations += kFloat * 2 * at_least_one(out);
        m.parameters += kFloat * (2 * at_least_one(ker) + ker);  // value, gradient, momentum
        if (layer.conv.bias) m.parameters += kFloat * 3 * shape.K;
        // The first layer's input has no gradient: DistNet runs no backward-data there.
        const std::vector<Pass> passes =
            first ? std::vector<Pass>{Pass::forward, Pass::backward_weights}
                  : std::vector<Pass>{Pass::forward, Pass::backward_data, Pass::backward_weights};
        const int64_t layer_bytes =
            plan.panels > 0
                ? streamed_memory_bytes(*L, g, passes, plan.panels, StreamOptions{}.pieces, engine)
                : grid_memory_bytes(*L, g, passes, engine);
        m.layers += layer_bytes - kFloat * at_rest_words(*L, g, passes);
        prev = std::make_shared<const Placement>(Placement::output_of(*L));
        last_layout = std::move(L);
        break;
      }
      case LayerKind::max_pool:
      case LayerKind::avg_pool: {
        const PoolGeometry geo{layer.pool, layer.kind == LayerKind::max_pool, layer.in.H,
                               layer.in.W};
        const auto out_place = std::make_shared<const Placement>(
            Placement::pooled_output_of(*last_layout, layer.out.H, layer.out.W));
        const auto region_of = [&](int64_t r) {
          return Slice::whole(pool_input_region(geo, out_place->slice(r)));
        };
        const auto held = [&](int64_t r) { return prev->slice(r); };
        const ExchangeFootprint f =
            exchange_footprint(prev->tensor(), held, prev->tensor(), region_of, procs, rank);
        m.exchanges += kFloat * f.staging_words;
        if (!f.identity) m.activations += kFloat * 2 * at_least_one(region_of(rank).size());
        const int64_t out = at_least_one(out_place->slice(rank).size());
        m.activations +=
            kFloat * 2 * out + static_cast<int64_t>(sizeof(int32_t)) * out;  // and argmax
        prev = out_place;
        break;
      }
      case LayerKind::relu:
      case LayerKind::flatten:
      case LayerKind::softmax_xent:
        break;  // in place, in the producer's buffers
    }
  }
  return m;
}

TrainingMemory busiest_training_memory(const Network& net, const std::vector<LayerPlan>& plans,
                                       int64_t batch, int64_t procs, Backend engine) {
  TrainingMemory busiest;
  for (int64_t r = 0; r < procs; ++r) {
    const TrainingMemory m = training_memory(net, plans, batch, procs, r, engine);
    if (r == 0 || m.total() > busiest.total()) busiest = m;
  }
  return busiest;
}

}  // namespace convgrid
