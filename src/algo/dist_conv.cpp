// The factory of the distributed convolution and the model beside it: one adapter per algorithm,
// and the figures each algorithm's model gives (model/grid_volume, model/streamed_volume and
// model/*_memory; the reproducible algorithm's own accounting below).
#include "algo/dist_conv.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "algo/reproducible_conv.hpp"
#include "algo/streamed_conv.hpp"
#include "comm/volume.hpp"
#include "convgrid/error.hpp"
#include "model/grid_memory.hpp"
#include "model/streamed_memory.hpp"
#include "model/streamed_volume.hpp"

namespace convgrid {
namespace {

// GridConv and StreamedConv share their calls.
template <class Algorithm>
class Adapter final : public DistConv {
 public:
  template <class... Args>
  explicit Adapter(Args&&... args) : conv_(std::forward<Args>(args)...) {}

  const LayerLayout& layout() const override { return conv_.layout(); }
  void forward(const float* in, const float* ker, float* out, TrafficCounter& t) override {
    conv_.forward(in, ker, out, t);
  }
  void backward_data(const float* dout, const float* ker, float* din, TrafficCounter& t) override {
    conv_.backward_data(dout, ker, din, t);
  }
  void backward_weights(const float* dout, const float* in, float* dker,
                        TrafficCounter& t) override {
    conv_.backward_weights(dout, in, dker, t);
  }
  void new_step() override {
    if constexpr (requires(Algorithm & a) { a.new_step(); }) conv_.new_step();
  }
  const PassSeconds& last_seconds() const override { return conv_.last_seconds(); }

 private:
  Algorithm conv_;
};

class Reproducible final : public DistConv {
 public:
  Reproducible(const ConvShape& shape, const ProcessGrid& grid, Backend backend)
      : conv_(shape, grid, backend) {}

  const LayerLayout& layout() const override { return conv_.layout(); }
  void forward(const float* in, const float* ker, float* out, TrafficCounter& t) override {
    conv_.forward(in, ker, out, t);
  }
  // Reads the weights forward gathered in this step.
  void backward_data(const float* dout, const float*, float* din, TrafficCounter&) override {
    conv_.backward_data(dout, din);
  }
  void backward_weights(const float* dout, const float* in, float* dker,
                        TrafficCounter& t) override {
    conv_.backward_weights(dout, in, dker, t);
  }
  const PassSeconds& last_seconds() const override { return seconds_; }

 private:
  ReproducibleConv conv_;
  PassSeconds seconds_;
};

// What GridConv holds when pass p starts, the passes before it in `passes` having run.
Held held_before(Pass p, const std::vector<Pass>& passes) {
  Held held;
  for (Pass q : passes) {
    if (q == p) return held;
    held = held_after(q, held);
  }
  throw Error("modelled words of a pass the step does not run");
}

// ReproducibleConv's buffers (algo/reproducible_conv.cpp): the whole Ker gathered (float) when
// the n-fibre has several ranks, one sample's dKer (float, convolutions), the double sum of dKer
// and this rank's reduced part (double), and the one-sample engine.
int64_t reproducible_buffers(const LayerLayout& L, GridCoord g, const std::vector<Pass>& passes,
                             Backend engine) {
  const ConvShape& s = L.shape();
  const int64_t total = s.weight_elems();
  const bool many = L.dims().nhw_size() > 1;
  const bool fc = fully_connected(s);
  int64_t bytes = 0;
  const bool fwd = std::ranges::find(passes, Pass::forward) != passes.end();
  const bool bwd_w = std::ranges::find(passes, Pass::backward_weights) != passes.end();
  if (fwd && many) bytes += 4 * total;
  if (bwd_w) {
    bytes += 8 * total;
    if (!fc) bytes += 4 * total;
    if (many) bytes += 8 * std::max<int64_t>(L.ker_slice(g).size(), 1);
  }
  if (!fc) {
    ConvShape one = s;
    one.N = 1;
    bytes += engine_bytes(one, false, engine, passes);
  }
  return bytes;
}

// Words of this rank's at-rest slices that `passes` read or write (each tensor once).
int64_t at_rest_words(const LayerLayout& L, GridCoord g, const std::vector<Pass>& passes) {
  const auto has = [&](Pass p) { return std::ranges::find(passes, p) != passes.end(); };
  const int64_t in = L.in_slice(g).size(), ker = L.ker_slice(g).size(), out = L.out_slice(g).size();
  const bool f = has(Pass::forward), d = has(Pass::backward_data), w = has(Pass::backward_weights);
  return (f || w ? in : 0) + (f || d ? ker : 0) + (d || w ? out : 0) + (f ? out : 0) +
         (d ? in : 0) + (w ? ker : 0);
}

}  // namespace

std::unique_ptr<DistConv> make_dist_conv(const LayerPlan& plan, const ProcessGrid& grid,
                                         Backend backend, bool local_work) {
  if (!(grid.dims() == plan.grid)) {
    throw Error(fmt::format("the plan is for grid {}, the process grid is {}",
                            plan.grid.to_string(), grid.dims().to_string()));
  }
  switch (plan.algorithm) {
    case ConvAlgorithm::grid:
      return std::make_unique<Adapter<GridConv>>(plan.shape, grid, backend);
    case ConvAlgorithm::streamed:
      return std::make_unique<Adapter<StreamedConv>>(
          plan.shape, grid, StreamOptions{plan.panels, StreamOptions{}.pieces, local_work},
          backend);
    case ConvAlgorithm::reproducible:
      return std::make_unique<Reproducible>(plan.shape, grid, backend);
  }
  throw Error("unknown convolution algorithm");
}

PassVolume modelled_pass_volume(const LayerPlan& plan, const LayerLayout& layout, GridCoord g,
                                Pass p, const std::vector<Pass>& passes, int64_t ranks_per_node) {
  switch (plan.algorithm) {
    case ConvAlgorithm::grid:
      return grid_pass_volume(layout, g, p, held_before(p, passes), ranks_per_node);
    case ConvAlgorithm::streamed:
      return streamed_pass_volume(layout, g, p, plan.panels, ranks_per_node);
    case ConvAlgorithm::reproducible:
      break;
  }
  throw Error("the reproducible algorithm models its words only (modelled_words)");
}

int64_t modelled_words(const LayerPlan& plan, const LayerLayout& layout, GridCoord g, Pass p,
                       const std::vector<Pass>& passes) {
  if (plan.algorithm != ConvAlgorithm::reproducible) {
    return modelled_pass_volume(plan, layout, g, p, passes).words();
  }
  // As ReproducibleConv::modelled_words: the Ker all-gather over the n-fibre, and the double
  // reduce-scatter of dKer (two words a value).
  const ConvShape& s = layout.shape();
  const int q = static_cast<int>(layout.dims().nhw_size());
  const int64_t mine = layout.ker_slice(g).size();
  switch (p) {
    case Pass::forward:
      return s.weight_elems() - mine;
    case Pass::backward_data:
      return 0;
    case Pass::backward_weights:
      return 2 * reduce_scatter_words(q, mine);
  }
  return 0;
}

int64_t modelled_memory_bytes(const LayerPlan& plan, const LayerLayout& layout, GridCoord g,
                              const std::vector<Pass>& passes, Backend engine) {
  switch (plan.algorithm) {
    case ConvAlgorithm::grid:
      return grid_memory_bytes(layout, g, passes, engine);
    case ConvAlgorithm::streamed:
      return streamed_memory_bytes(layout, g, passes, plan.panels, StreamOptions{}.pieces, engine);
    case ConvAlgorithm::reproducible:
      return 4 * at_rest_words(layout, g, passes) + reproducible_buffers(layout, g, passes, engine);
  }
  throw Error("unknown convolution algorithm");
}

int64_t modelled_algorithm_bytes(const LayerPlan& plan, const LayerLayout& layout, GridCoord g,
                                 const std::vector<Pass>& passes, Backend engine) {
  return modelled_memory_bytes(plan, layout, g, passes, engine) -
         static_cast<int64_t>(sizeof(float)) * at_rest_words(layout, g, passes);
}

}  // namespace convgrid
