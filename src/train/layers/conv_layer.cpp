// Convolution and fully connected layers in training: the distributed convolution its plan names
// (algo/dist_conv.hpp) on the plan's grid, with the input redistributed into the grid's In
// placement first (train/input_edge.hpp) and its gradient sent back after backward-data.
//
//   In[n,c | In slice of g]   := all-to-all from the producer's spread (none for the first layer)
//   Out, dIn, dKer            := the algorithm's passes (its own header says what moves)
//   dbias[k]                  := all-reduce over all ranks of each rank's sum of dOut
//
// Parameters are sharded: the weights are the grid's at-rest Ker slices (each element on one
// rank), the bias is replicated (K values, all-reduced gradients, identical updates). Initial
// values, U(-b, b) with b = 1/sqrt(fan in) as PyTorch draws them, depend on the seed and the
// layer's index only, not on the grid or the number of ranks. The network's first compute layer
// reads the input the loader fills, and runs no backward-data.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algo/dist_conv.hpp"
#include "comm/collectives.hpp"
#include "comm/volume.hpp"
#include "convgrid/error.hpp"
#include "grid/process_grid.hpp"
#include "io/seeded_tensor.hpp"
#include "train/elementwise.hpp"
#include "train/input_edge.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

// A seed per layer, from the run's seed.
uint64_t layer_seed(uint64_t seed, size_t layer) {
  return splitmix64(seed + kSplitmixGamma * layer);
}

class ConvLayer final : public TrainLayer {
 public:
  explicit ConvLayer(const LayerSetup& s)
      : TrainLayer(s),
        plan_(*s.plan),
        procs_(s.procs),
        rank_(s.rank),
        seed_(layer_seed(s.seed, s.index)) {
    const Layer& layer = s.layer();
    const ConvShape shape = conv_shape(layer, s.batch);
    if (!(plan_.shape == shape)) {
      throw InputError(fmt::format("the plan of layer '{}' is for {}, the layer at batch {} is {}",
                                   layer.name, plan_.shape.to_string(), s.batch,
                                   shape.to_string()));
    }
    plan_.grid.validate_size(s.procs);
    layout_ = std::make_shared<const LayerLayout>(shape, plan_.grid);
    g_ = plan_.grid.coord_of(s.rank);
    first_ = s.input == nullptr;
    passes_ = first_
                  ? std::vector<Pass>{Pass::forward, Pass::backward_weights}
                  : std::vector<Pass>{Pass::forward, Pass::backward_data, Pass::backward_weights};
    const auto in_place = s.placement("in", [&] { return Placement::input_of(*layout_); });
    if (first_) {
      in_buf_ = describe_activation("in", Life::step, layout_->in_slice(g_).size());
    } else {
      edge_ = InputEdge(
          *this, "in", *s.input, in_place->tensor(),
          [in_place](int64_t r) { return in_place->slice(r); }, s, s.sole_reader, WantedByAll::partition(),
          Life::forward_to_backward);
    }
    const auto out_place = s.placement("out", [&] { return Placement::output_of(*layout_); });
    set_output({out_place, layout_, out_place->slice(s.rank)}, false);
    out_buf_ = describe_activation("out", Life::output_values, output().slice.size());
    dout_buf_ = describe_activation("dout", Life::output_grad, output().slice.size());
    const int64_t ker = layout_->ker_slice(g_).size();
    ker_buf_ = describe("weight", MemoryGroup::parameters, ker);
    dker_buf_ = describe("weight grad", MemoryGroup::parameters, ker);
    describe_held("weight momentum", MemoryGroup::parameters,
                  static_cast<int64_t>(sizeof(float)) * ker);
    if (layer.conv.bias) {
      bias_buf_ = describe("bias", MemoryGroup::parameters, shape.K);
      dbias_buf_ = describe("bias grad", MemoryGroup::parameters, shape.K);
      describe_held("bias momentum", MemoryGroup::parameters,
                    static_cast<int64_t>(sizeof(float)) * shape.K);
      if (reproducible())
        dbias_sum_buf_ =
            describe("bias grad sum", MemoryGroup::parameters, shape.K, sizeof(double));
    }
    describe_held("algorithm", MemoryGroup::layers,
                  modelled_algorithm_bytes(plan_, *layout_, g_, passes_, s.engine));
    engine_ = s.engine;
  }

  LayerWords modelled_words() const override {
    LayerWords w;
    for (Pass p : passes_) {
      const int64_t words = modelled_words_of(p);
      (p == Pass::forward ? w.forward : w.backward) += words;
    }
    if (layout_->shape().K > 0 && bias()) {
      const int64_t k = layout_->shape().K;
      w.backward += (reproducible() ? 2 : 1) *
                    all_reduce_words(k, static_cast<int>(procs_), static_cast<int>(rank_));
    }
    return w;
  }
  LayerWords modelled_edge_words() const override {
    return first_ ? LayerWords{} : edge_.modelled_words();
  }
  // backward-weights reads the input: the producer's storage when the edge reads it in place.
  StorageUse storage_use() const override {
    return {.reads_input_in_backward = !first_ && edge_.reads_in_place()};
  }

  ActivationData bind(const Communicator& world, ActivationData input, ActivationData) override {
    world_ = &world;
    grid_ = std::make_unique<ProcessGrid>(plan_.grid, world);
    conv_ = make_dist_conv(plan_, *grid_, engine_);
    if (first_) {
      in_ = take_floats(in_buf_);
    } else {
      edge_.bind(*this, world, input);
      in_ = edge_.data();
    }
    out_ = take_floats(out_buf_);
    dout_ = take_floats(dout_buf_);
    init_parameters();
    return {out_, dout_};
  }

  void forward(StepContext&) override {
    if (!first_) edge_.forward(edge_traffic_);
    conv_->new_step();
    conv_->forward(in_, ker_, out_, traffic_);
    if (bias()) add_bias(output().slice, bias_, out_);
  }

  void backward(StepContext&) override {
    if (bias()) bias_gradient();
    if (!first_) {
      conv_->backward_data(dout_, ker_, edge_.grad(), traffic_);
      conv_->backward_weights(dout_, in_, dker_, traffic_);
      edge_.backward(edge_traffic_);
    } else {
      conv_->backward_weights(dout_, in_, dker_, traffic_);
    }
  }

  std::vector<ParamShard> params() override {
    const ConvShape& shape = layout_->shape();
    const Slice kslice = layout_->ker_slice(g_);
    std::vector<ParamShard> p{{name() + ".weight", weight_box(shape), kslice, false,
                               std::span<float>(ker_, kslice.size()),
                               std::span<float>(dker_, kslice.size())}};
    if (bias()) {
      const Box4 b = bias_box();
      p.push_back({name() + ".bias", b, Slice::whole(b), true, std::span<float>(bias_, shape.K),
                   std::span<float>(dbias_, shape.K)});
    }
    return p;
  }

  float* loader_input() override { return first_ ? in_ : nullptr; }

 private:
  bool bias() const { return bias_buf_ != kNone; }
  bool reproducible() const { return plan_.algorithm == ConvAlgorithm::reproducible; }
  Box4 bias_box() const {
    return {{Range{0, layout_->shape().K}, Range{0, 1}, Range{0, 1}, Range{0, 1}}};
  }

  int64_t modelled_words_of(Pass p) const {
    return convgrid::modelled_words(plan_, *layout_, g_, p, passes_);
  }

  void init_parameters() {
    const ConvShape& shape = layout_->shape();
    const float bound = 1.0f / std::sqrt(static_cast<float>(shape.Cg() * shape.R * shape.S));  // fan-in
    ker_ = take_floats(ker_buf_);
    dker_ = take_floats(dker_buf_);
    const Slice kslice = layout_->ker_slice(g_);
    fill_seeded(kslice, weight_box(shape), seed_, TensorStream::weights, ker_);
    for (int64_t i = 0; i < kslice.size(); ++i) ker_[i] *= bound;
    if (!bias()) return;
    bias_ = take_floats(bias_buf_);
    dbias_ = take_floats(dbias_buf_);
    const Box4 b = bias_box();
    fill_seeded(Slice::whole(b), b, seed_, TensorStream::bias, bias_);
    for (int64_t i = 0; i < shape.K; ++i) bias_[i] *= bound;
  }

  // The sum of dOut per output channel over all ranks: in double, per-plane sums added in a fixed
  // order, with reproducible arithmetic; in float otherwise.
  void bias_gradient() {
    const int64_t K = layout_->shape().K;
    if (reproducible()) {
      double* sum = take_doubles(dbias_sum_buf_);
      std::fill(sum, sum + K, 0.0);
      accumulate_bias_grad(output().slice, dout_, sum);
      all_reduce_sum(*world_, std::span<double>(sum, K), traffic_);
      for (int64_t k = 0; k < K; ++k) dbias_[k] = static_cast<float>(sum[k]);
      return;
    }
    std::fill(dbias_, dbias_ + K, 0.0f);
    accumulate_bias_grad(output().slice, dout_, dbias_);
    all_reduce_sum(*world_, std::span<float>(dbias_, K), traffic_);
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);

  LayerPlan plan_;
  int64_t procs_, rank_;
  uint64_t seed_;
  Backend engine_ = Backend::onednn;
  std::shared_ptr<const LayerLayout> layout_;
  GridCoord g_;
  bool first_ = false;
  std::vector<Pass> passes_;
  InputEdge edge_;
  size_t in_buf_ = kNone, out_buf_ = kNone, dout_buf_ = kNone, ker_buf_ = kNone, dker_buf_ = kNone;
  size_t bias_buf_ = kNone, dbias_buf_ = kNone, dbias_sum_buf_ = kNone;
  const Communicator* world_ = nullptr;
  std::unique_ptr<ProcessGrid> grid_;
  std::unique_ptr<DistConv> conv_;
  float *in_ = nullptr, *out_ = nullptr, *dout_ = nullptr, *ker_ = nullptr, *dker_ = nullptr;
  float *bias_ = nullptr, *dbias_ = nullptr;
};

}  // namespace

std::unique_ptr<TrainLayer> make_conv_layer(const LayerSetup& setup) {
  return std::make_unique<ConvLayer>(setup);
}

}  // namespace convgrid
