// The distributed network (see dist_net.hpp): stages built once from the network and its plans,
// then forward in order and backward in reverse. Each stage knows where its output and the
// gradient of its output live on this rank (ReLU and flatten reuse their producer's buffers).
#include "train/dist_net.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "algo/grid_conv.hpp"
#include "algo/reproducible_conv.hpp"
#include "algo/streamed_conv.hpp"
#include "comm/collectives.hpp"
#include "convgrid/error.hpp"
#include "grid/process_grid.hpp"
#include "io/seeded_tensor.hpp"
#include "model/redistribution.hpp"
#include "train/box_exchange.hpp"
#include "train/elementwise.hpp"
#include "train/pool_kernel.hpp"

namespace convgrid {

struct DistNet::Stage {
  LayerKind kind = LayerKind::relu;
  std::string name;
  std::shared_ptr<const Placement> placement;  // of this stage's output over the ranks
  Slice out_slice;      // this rank's part of it
  float* out = nullptr;   // this rank's output
  float* dout = nullptr;  // and its gradient
  Stage* prev = nullptr;

  // conv and fully_connected
  std::unique_ptr<ProcessGrid> grid;
  std::unique_ptr<GridConv> grid_conv;
  std::unique_ptr<StreamedConv> streamed_conv;
  std::unique_ptr<ReproducibleConv> reproducible_conv;
  TrackedVector<double> dbias_sum;  // K (reproducible arithmetic)
  std::unique_ptr<BoxExchange> in_exchange;  // none for the first layer (the loader fills `in`)
  size_t compute_index = 0;
  float* in = nullptr;    // the layer's In slice (the exchange's wanted storage, or prev's)
  float* din = nullptr;
  Buffer in_buf, din_buf, out_buf, dout_buf, ker, dker, bias, dbias;
  bool has_bias = false;

  // pooling
  PoolGeometry pool;
  Box4 region;
  std::unique_ptr<BoxExchange> region_exchange;
  float* region_in = nullptr;
  float* dregion = nullptr;
  Buffer region_buf, dregion_buf;
  TrackedVector<int32_t> argmax;

  const LayerLayout& layout() const {
    return grid_conv ? grid_conv->layout() : streamed_conv ? streamed_conv->layout() : reproducible_conv->layout();
  }

  void conv_forward(const float* input, const float* weights, float* output, TrafficCounter& t) {
    if (reproducible_conv) {
      reproducible_conv->forward(input, weights, output, t);
    } else if (grid_conv) {
      grid_conv->new_step();
      grid_conv->forward(input, weights, output, t);
    } else {
      streamed_conv->forward(input, weights, output, t);
    }
  }
  void conv_backward_data(const float* g, const float* weights, float* dinput, TrafficCounter& t) {
    if (reproducible_conv) reproducible_conv->backward_data(g, dinput);
    else if (grid_conv) grid_conv->backward_data(g, weights, dinput, t);
    else streamed_conv->backward_data(g, weights, dinput, t);
  }
  void conv_backward_weights(const float* g, const float* input, float* dweights, TrafficCounter& t) {
    if (reproducible_conv) reproducible_conv->backward_weights(g, input, dweights, t);
    else if (grid_conv) grid_conv->backward_weights(g, input, dweights, t);
    else streamed_conv->backward_weights(g, input, dweights, t);
  }
};

namespace {

SliceOf slices_of(std::shared_ptr<const Placement> p) {
  return [p](int64_t r) { return p->slice(r); };
}

int64_t words(const TrafficCounter& t) { return t.traffic().words(); }

// A seed per layer, from the run's seed.
uint64_t layer_seed(uint64_t seed, size_t layer) { return splitmix64(seed + kSplitmixGamma * layer); }

}  // namespace

DistNet::DistNet(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch,
                 const Communicator& world, uint64_t seed, Backend backend, Arithmetic arithmetic)
    : world_(world), batch_(batch) {
  check_trainable(net);
  const std::vector<ComputeLayer> compute = net.compute_layers();
  if (plans.size() != compute.size()) {
    throw InputError(fmt::format("{} plans for the {} compute layers of '{}'", plans.size(),
                                 compute.size(), net.name()));
  }
  const int me = world.rank();
  Stage* prev = nullptr;
  Stage* last_conv = nullptr;
  size_t ci = 0;
  model_edges_.assign(compute.size(), {});
  edge_words_.assign(compute.size(), {});
  for (size_t li = 0; li < net.layers().size(); ++li) {
    const Layer& layer = net.layers()[li];
    auto st = std::make_unique<Stage>();
    Stage& s = *st;
    s.kind = layer.kind;
    s.name = layer.name;
    s.prev = prev;
    switch (layer.kind) {
      case LayerKind::conv:
      case LayerKind::fully_connected: {
        const LayerPlan& plan = plans[ci];
        const ConvShape shape = conv_shape(layer, batch);
        if (!(plan.shape == shape)) {
          throw InputError(fmt::format("the plan of layer '{}' is for {}, the layer at batch {} is {}",
                                       layer.name, plan.shape.to_string(), batch, shape.to_string()));
        }
        s.compute_index = ci;
        s.grid = std::make_unique<ProcessGrid>(plan.grid, world);
        if (arithmetic == Arithmetic::reproducible) {
          if (plan.panels > 0) {
            throw InputError(fmt::format("layer '{}': reproducible arithmetic does not stream (plan of {} panels)",
                                         layer.name, plan.panels));
          }
          s.reproducible_conv = std::make_unique<ReproducibleConv>(shape, *s.grid, backend);
        } else if (plan.panels > 0) {
          StreamOptions o;
          o.panels = plan.panels;
          s.streamed_conv = std::make_unique<StreamedConv>(shape, *s.grid, o, backend);
        } else {
          s.grid_conv = std::make_unique<GridConv>(shape, *s.grid, backend);
        }
        const LayerLayout& layout = s.layout();
        const GridCoord g = s.grid->coord();
        const auto in_place = std::make_shared<const Placement>(Placement::input_of(layout));
        const int64_t in_size = layout.in_slice(g).size();
        if (prev != nullptr) {
          const RedistributionFigures f = redistribution_figures(*prev->placement, *in_place);
          model_edges_[ci] = {f.forward.max_words, f.backward.max_words};
          s.in_exchange = std::make_unique<BoxExchange>(world, prev->placement->tensor(), slices_of(prev->placement),
                                                        in_place->tensor(), slices_of(in_place));
          if (s.in_exchange->identity()) {
            s.in = prev->out;
            s.din = prev->dout;
          }
        }
        if (s.in == nullptr) {
          s.in_buf = Buffer(std::max<int64_t>(in_size, 1));
          s.in = s.in_buf.data();
          if (prev != nullptr) {  // the first layer's input has no gradient
            s.din_buf = Buffer(std::max<int64_t>(in_size, 1));
            s.din = s.din_buf.data();
          }
        }
        const auto out_place = std::make_shared<const Placement>(Placement::output_of(layout));
        s.placement = out_place;
        s.out_slice = out_place->slice(me);
        s.out_buf = Buffer(std::max<int64_t>(s.out_slice.size(), 1));
        s.dout_buf = Buffer(std::max<int64_t>(s.out_slice.size(), 1));
        s.out = s.out_buf.data();
        s.dout = s.dout_buf.data();
        // Parameters: U(-b, b) with b = 1/sqrt(fan in), from the seed (PyTorch's default range).
        const Box4 kbox = weight_box(shape);
        const Slice kslice = layout.ker_slice(g);
        s.ker = Buffer(std::max<int64_t>(kslice.size(), 1));
        s.dker = Buffer(std::max<int64_t>(kslice.size(), 1));
        const float bound = 1.0f / std::sqrt(static_cast<float>(shape.C * shape.R * shape.S));
        const uint64_t lseed = layer_seed(seed, li);
        fill_seeded(kslice, kbox, lseed, TensorStream::weights, s.ker.data());
        for (int64_t i = 0; i < kslice.size(); ++i) s.ker[i] *= bound;
        params_.push_back({layer.name + ".weight", kbox, kslice, false,
                           s.ker.span().first(kslice.size()), s.dker.span().first(kslice.size())});
        s.has_bias = layer.conv.bias;
        if (s.has_bias) {
          const Box4 bbox{{Range{0, shape.K}, Range{0, 1}, Range{0, 1}, Range{0, 1}}};
          s.bias = Buffer(shape.K);
          s.dbias = Buffer(shape.K);
          if (s.reproducible_conv) s.dbias_sum.assign(shape.K, 0.0);
          fill_seeded(Slice::whole(bbox), bbox, lseed, TensorStream::bias, s.bias.data());
          for (int64_t i = 0; i < shape.K; ++i) s.bias[i] *= bound;
          params_.push_back({layer.name + ".bias", bbox, Slice::whole(bbox), true, s.bias.span(),
                             s.dbias.span()});
        }
        if (prev == nullptr) {
          input_tensor_ = input_box(shape);
          input_slice_ = layout.in_slice(g);
          input_ = s.in;
        }
        last_conv = &s;
        ++ci;
        break;
      }
      case LayerKind::relu:
      case LayerKind::flatten:
      case LayerKind::softmax_xent:
        if (prev == nullptr) {  // a flatten before the first layer: nothing to do
          break;
        }
        s.placement = prev->placement;
        s.out_slice = prev->out_slice;
        s.out = prev->out;
        s.dout = prev->dout;
        break;
      case LayerKind::max_pool:
      case LayerKind::avg_pool: {
        s.pool = PoolGeometry{layer.pool, layer.kind == LayerKind::max_pool, layer.in.H, layer.in.W};
        const auto out_place = std::make_shared<const Placement>(
            Placement::pooled_output_of(last_conv->layout(), layer.out.H, layer.out.W));
        s.placement = out_place;
        s.out_slice = out_place->slice(me);
        // Rank r needs the input region of its pooled slice (a box, halos included).
        const PoolGeometry geo = s.pool;
        const auto region_of = [geo, out_place](int64_t r) {
          return Slice::whole(pool_input_region(geo, out_place->slice(r)));
        };
        s.region = region_of(me).box;
        s.region_exchange = std::make_unique<BoxExchange>(world, prev->placement->tensor(), slices_of(prev->placement),
                                                          prev->placement->tensor(), region_of);
        if (s.region_exchange->identity()) {
          s.region_in = prev->out;
          s.dregion = prev->dout;
        } else {
          s.region_buf = Buffer(std::max<int64_t>(s.region.volume(), 1));
          s.dregion_buf = Buffer(std::max<int64_t>(s.region.volume(), 1));
          s.region_in = s.region_buf.data();
          s.dregion = s.dregion_buf.data();
        }
        s.out_buf = Buffer(std::max<int64_t>(s.out_slice.size(), 1));
        s.dout_buf = Buffer(std::max<int64_t>(s.out_slice.size(), 1));
        s.out = s.out_buf.data();
        s.dout = s.dout_buf.data();
        s.argmax.assign(std::max<int64_t>(s.out_slice.size(), 1), 0);
        break;
      }
    }
    stages_.push_back(std::move(st));
    if (stages_.back()->out != nullptr) prev = stages_.back().get();
  }
}

DistNet::~DistNet() = default;

XentResult DistNet::step(std::span<const int32_t> labels, std::span<const float> weights, bool train) {
  if (static_cast<int64_t>(labels.size()) != batch_ || static_cast<int64_t>(weights.size()) != batch_) {
    throw Error(fmt::format("step: {} labels and {} weights for a batch of {}", labels.size(),
                            weights.size(), batch_));
  }
  for (auto& e : edge_words_) e = {};
  XentResult result;
  for (auto& sp : stages_) {
    Stage& s = *sp;
    switch (s.kind) {
      case LayerKind::conv:
      case LayerKind::fully_connected: {
        if (s.in_exchange) {
          const int64_t before = words(traffic_.redistribution);
          s.in_exchange->forward(s.prev->out, s.in, traffic_.redistribution);
          edge_words_[s.compute_index].forward = words(traffic_.redistribution) - before;
        }
        s.conv_forward(s.in, s.ker.data(), s.out, traffic_.conv);
        if (s.has_bias) add_bias(s.out_slice, s.bias.data(), s.out);
        break;
      }
      case LayerKind::relu:
        if (s.prev != nullptr) relu_forward(s.out, s.out_slice.size());
        break;
      case LayerKind::max_pool:
      case LayerKind::avg_pool:
        s.region_exchange->forward(s.prev->out, s.region_in, traffic_.pooling);
        pool_forward(s.pool, s.region, s.region_in, s.out_slice, s.out, s.argmax.data());
        break;
      case LayerKind::flatten:
        break;
      case LayerKind::softmax_xent:
        result = softmax_xent(world_, s.out_slice, s.out, labels, weights, s.dout, traffic_.reductions);
        break;
    }
  }
  if (!train) return result;
  for (auto it = stages_.rbegin(); it != stages_.rend(); ++it) {
    Stage& s = **it;
    switch (s.kind) {
      case LayerKind::conv:
      case LayerKind::fully_connected: {
        if (s.has_bias && s.reproducible_conv) {  // per-plane sums added up in double
          const std::span<double> sum(s.dbias_sum);
          std::fill(sum.begin(), sum.end(), 0.0);
          accumulate_bias_grad(s.out_slice, s.dout, sum.data());
          all_reduce_sum(world_, sum, traffic_.reductions);
          for (size_t k = 0; k < sum.size(); ++k) s.dbias[static_cast<int64_t>(k)] = static_cast<float>(sum[k]);
        } else if (s.has_bias) {
          s.dbias.fill(0.0f);
          accumulate_bias_grad(s.out_slice, s.dout, s.dbias.data());
          all_reduce_sum(world_, s.dbias.span(), traffic_.reductions);
        }
        if (s.in_exchange) {
          s.conv_backward_data(s.dout, s.ker.data(), s.din, traffic_.conv);
          s.conv_backward_weights(s.dout, s.in, s.dker.data(), traffic_.conv);
          const int64_t before = words(traffic_.redistribution);
          if (s.din != s.prev->dout) std::memset(s.prev->dout, 0, s.prev->out_slice.size() * sizeof(float));
          s.in_exchange->reverse_add(s.din, s.prev->dout, traffic_.redistribution);
          edge_words_[s.compute_index].backward = words(traffic_.redistribution) - before;
        } else {
          s.conv_backward_weights(s.dout, s.in, s.dker.data(), traffic_.conv);
        }
        break;
      }
      case LayerKind::relu:
        if (s.prev != nullptr) relu_backward(s.out, s.dout, s.out_slice.size());
        break;
      case LayerKind::max_pool:
      case LayerKind::avg_pool: {
        const Stage& p = *s.prev;
        if (s.dregion != p.dout) std::memset(p.dout, 0, p.out_slice.size() * sizeof(float));
        std::memset(s.dregion, 0, s.region.volume() * sizeof(float));
        pool_backward(s.pool, s.region, s.out_slice, s.dout, s.argmax.data(), s.dregion);
        s.region_exchange->reverse_add(s.dregion, p.dout, traffic_.pooling);
        break;
      }
      case LayerKind::flatten:
      case LayerKind::softmax_xent:
        break;
    }
  }
  return result;
}

}  // namespace convgrid
