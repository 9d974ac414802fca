// DistNet under mpiexec: a small network with every layer kind (conv with bias, ReLU6, ReLU,
// overlapping padded max pooling, average pooling, flatten, fully connected, softmax
// cross-entropy), a residual network with batch normalization, MobileNet-V2's add layers,
// pooling in ceil_mode, and Inception's and DenseNet's concats on many grids gives the loss and
// every parameter gradient of the same network on one rank (within float rounding), the
// redistributions move exactly the words of the model on every rank, and the one-rank gradients
// agree with central finite differences of the loss. With reproducible arithmetic, data-parallel
// grids give the one-rank run's bits.
#include <mpi.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "algo/reproducible_conv.hpp"
#include "comm/communicator.hpp"
#include "convgrid/error.hpp"
#include "grid/process_grid.hpp"
#include "io/seeded_tensor.hpp"
#include "convgrid/grid_dims.hpp"
#include "plan/network_planner.hpp"
#include "train/dist_net.hpp"
#include "small_network.hpp"

namespace convgrid {
namespace {

using test_net::kBatch;
using test_net::grid_choices;
using test_net::plans_on;
using test_net::small_net;

constexpr uint64_t kSeed = 11;

const std::vector<int32_t> kLabels = {0, 3, 4, 1, 2, 4};
const std::vector<float> kWeights = {1, 1, 1, 1, 1, 0};  // the last sample is padding

// Inputs uniform in [-8, 8): the small network's ReLU6 then clips some of its inputs (17 of 1944
// lie above 6), so that its gradient's cut at 6 is checked too (finite differences catch a ReLU6
// that passes the gradient above 6).
XentResult run_step(DistNet& net) {
  fill_seeded(net.input_slice(), net.input_tensor(), kSeed, TensorStream::input, net.input());
  for (int64_t i = 0; i < net.input_slice().size(); ++i) net.input()[i] *= 8;
  return net.step(kLabels, kWeights, true);
}

// The chain with pooling, the residual network with batch normalization, the add layers, the
// pooling in ceil_mode, the concats, a flatten read twice, the smooth activations and
// squeeze-and-excitation.
std::vector<Network> networks() {
  return {small_net(), test_net::residual_net(), test_net::add_net(), test_net::ceil_net(),
          test_net::concat_net(), test_net::shared_flatten_net(), test_net::activation_net(),
          test_net::se_net()};
}

// Every node's words of the last step equal its model on this rank (own work and input moves).
void expect_words_equal_model(const DistNet& d) {
  for (size_t i = 0; i < d.nodes().size(); ++i) {
    const TrainLayer& l = *d.nodes()[i].layer;
    const DistNet::NodeWords& w = d.last_step_words()[i];
    EXPECT_EQ(w.own.forward, l.modelled_words().forward) << l.name();
    EXPECT_EQ(w.own.backward, l.modelled_words().backward) << l.name();
    EXPECT_EQ(w.edge.forward, l.modelled_edge_words().forward) << l.name();
    EXPECT_EQ(w.edge.backward, l.modelled_edge_words().backward) << l.name();
  }
}

// Each shard of `tensors` (d's) equals the one-rank network's whole tensor where it lies: values
// exactly when `exact`, gradients (or, for state, values) within float rounding.
void expect_shards_match(std::vector<ParamShard>& mine_all, std::vector<ParamShard>& whole_all, bool state) {
  ASSERT_EQ(mine_all.size(), whole_all.size());
  for (size_t p = 0; p < mine_all.size(); ++p) {
    const ParamShard& mine = mine_all[p];
    const ParamShard& whole = whole_all[p];
    ASSERT_EQ(mine.name, whole.name);
    ASSERT_EQ(mine.global, whole.global);
    for_each_run(mine.slice, [&](int64_t a, int64_t b, int64_t c, int64_t d0, int64_t d1, int64_t off) {
      for (int64_t i = 0; i < d1 - d0; ++i) {
        const int64_t at = whole.global.offset(a, b, c, d0 + i);
        if (state) {
          EXPECT_NEAR(mine.value[off + i], whole.value[at], 1e-5f + 1e-4f * std::abs(whole.value[at])) << mine.name;
          continue;
        }
        const float want = whole.grad[at];
        EXPECT_NEAR(mine.grad[off + i], want, 1e-5f + 1e-4f * std::abs(want)) << mine.name;
        EXPECT_EQ(mine.value[off + i], whole.value[at]) << mine.name;
      }
    });
  }
}

std::string grids_text(const std::vector<GridDims>& grids) {
  std::string s;
  for (const GridDims& g : grids) s += g.to_string() + " ";
  return s;
}

// Every grid of P ranks that fits the layer, per compute layer, in a few mixes; every network
// (the concats' also with every layer on its most channel-split grid).
TEST(DistNet, MatchesOneRankOnEveryGridAndMovesTheModelsWords) {
  Communicator world = Communicator::world();
  Communicator self = world.split(world.rank(), 0);
  for (const Network& net : networks()) {
    SCOPED_TRACE(net.name());
    const std::vector<GridDims> ones(net.compute_layers().size(), GridDims{});
    DistNet ref(net, plans_on(net, ones), kBatch, self, kSeed);
    ref.poison_buffers_as_lives_begin(true);
    const XentResult r = run_step(ref);
    ASSERT_GT(r.loss, 0.5);
    const bool concats = net.name() == "concat";
    const std::vector<std::vector<GridDims>> choices =
        concats ? test_net::some_grid_choices(net, world.size(), 12) : grid_choices(net, world.size());
    ASSERT_FALSE(choices.empty());
    // The residual network's seven layers and the add network's four make many mixes at 6 and 8
    // ranks: at most 12 of them, spread over the list; the three-layer networks, every mix (the
    // concat network's are chosen so).
    const bool three_layers = net.compute_layers().size() == 3;
    const size_t stride = three_layers || concats ? 1 : (choices.size() + 11) / 12;
    for (size_t c = 0; c < choices.size(); c += stride) {
      const std::vector<GridDims>& grids = choices[c];
      SCOPED_TRACE(fmt::format("grids {}", grids_text(grids)));
      DistNet d(net, plans_on(net, grids), kBatch, world, kSeed);
      d.poison_buffers_as_lives_begin(true);  // a buffer read outside its life gives NaN
      const XentResult x = run_step(d);
      EXPECT_NEAR(x.loss, r.loss, 1e-5 * r.loss);
      EXPECT_EQ(x.correct, r.correct);
      expect_shards_match(d.params(), ref.params(), false);
      expect_shards_match(d.state(), ref.state(), true);  // running statistics
      expect_words_equal_model(d);
    }
  }
}

// The compute layer a node's main input comes from (through layers that keep its spread).
std::optional<size_t> main_compute_layer(const DistNet& d, int node) {
  while (node >= 0 && !d.nodes()[node].compute_index) node = d.nodes()[node].input;
  return node >= 0 ? d.nodes()[node].compute_index : std::nullopt;
}

int64_t max_over_ranks(int64_t x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return x;
}

int64_t sum_over_ranks(int64_t x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

// On the planner's grids, the words moving into each compute layer (its input, the shortcuts
// added to its output, and the operands of the concats joined in its grid) are the planner's
// edges: on the busiest rank, and over all ranks; and the batch normalizations in its output
// blocks move the planner's words for them. The concat network is planned once more over
// channel-parallel grids only, so that its joins lie in channel blocks. A concat moves all its
// operands in one node, so the busiest rank of its node is not the sum of the busiest ranks of its
// edges: for the layer its operands join in, only the words over all ranks are compared.
TEST(DistNet, PlannerGridsMoveThePlannersWords) {
  Communicator world = Communicator::world();
  const int64_t P = world.size();
  const std::pair<Network, GridFamily> cases[] = {{small_net(), GridFamily::any},
                                                  {test_net::residual_net(), GridFamily::any},
                                                  {test_net::add_net(), GridFamily::any},
                                                  {test_net::ceil_net(), GridFamily::any},
                                                  {test_net::activation_net(), GridFamily::any},
                                                  {test_net::se_net(), GridFamily::any},
                                                  {test_net::concat_net(), GridFamily::any},
                                                  {test_net::concat_net(), GridFamily::channel_filter}};
  for (const auto& [net, family] : cases) {
    SCOPED_TRACE(fmt::format("{}, {} grids", net.name(), to_string(family)));
    NetworkPlanOptions o;
    o.layer.procs = P;
    o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
    o.batch = kBatch;
    o.family = family;
    const NetworkPlan plan = plan_network(net, o);
    DistNet d(net, plan.layer_plans(), kBatch, world, kSeed);
    run_step(d);
    std::vector<int64_t> moved(plan.layers.size(), 0), total(plan.layers.size(), 0);
    std::vector<int64_t> normed(plan.layers.size(), 0);
    std::vector<bool> joins(plan.layers.size(), false);
    for (size_t i = 0; i < d.nodes().size(); ++i) {
      const TrainGraph::Node& n = d.nodes()[i];
      const DistNet::NodeWords& w = d.last_step_words()[i];
      const int64_t words = max_over_ranks(w.edge.forward) + max_over_ranks(w.edge.backward);
      const int64_t all = sum_over_ranks(w.edge.forward + w.edge.backward);
      if (n.layer->kind() == "batch_norm") {  // its all-reduces, in the grid of the layer before
        normed[*main_compute_layer(d, n.input)] += max_over_ranks(w.own.forward + w.own.backward);
      }
      std::optional<size_t> into = n.compute_index;
      // A residual add's shortcut moves into the main path, a concat's operands into the grid of
      // its first.
      if (!into && !n.operands.empty()) {
        into = main_compute_layer(d, n.input);
        ASSERT_TRUE(into.has_value());
        if (n.layer->kind() == "concat") joins[*into] = true;
      }
      if (!into) continue;
      moved[*into] += words;
      total[*into] += all;
    }
    for (size_t i = 0; i < plan.layers.size(); ++i) {
      const NetworkLayerPlan& l = plan.layers[i];
      double mean = 0;
      for (const EdgeFigures& e : l.edges_in) mean += e.words_mean;
      EXPECT_NEAR(static_cast<double>(total[i]), mean * static_cast<double>(P), 1e-6 * (1 + mean * P)) << l.name;
      if (!joins[i]) {
        EXPECT_EQ(moved[i], l.redistribution_words()) << l.name;
      }
      EXPECT_EQ(normed[i], l.norm_words) << l.name;
    }
    if (family == GridFamily::channel_filter && P > 1) {  // the joins lie in channel blocks
      const GridDims& root = plan.layers[1].plan.grid;  // b1, the first operand of every join
      EXPECT_GT(root.Pk * root.Pc, 1) << root.to_string();
    }
  }
}

// Reproducible arithmetic: the data-parallel grid of every rank count gives the one-rank run's
// loss and gradients bit for bit, over two steps with the weights moved in between, and the conv
// layers receive exactly the words ReproducibleConv models, on every rank.
TEST(DistNet, ReproducibleArithmeticGivesTheOneRankBits) {
  Communicator world = Communicator::world();
  const int64_t kSamples = std::max<int64_t>(8, world.size());  // a sample for every rank at least
  Communicator self = world.split(world.rank(), 0);
  const Network net = small_net();
  const int64_t P = world.size();
  std::vector<int32_t> labels(kSamples);
  std::vector<float> weights(kSamples, 1.0f);
  for (int64_t i = 0; i < kSamples; ++i) labels[i] = static_cast<int32_t>((3 * i + 1) % 5);
  weights.back() = 0.0f;  // a padding sample
  const auto run = [&](DistNet& d) {
    fill_seeded(d.input_slice(), d.input_tensor(), kSeed, TensorStream::input, d.input());
    return d.step(labels, weights, true);
  };
  const GridDims one{}, data{P, 1, 1, 1, 1};
  DistNet ref(net, plans_on(net, {one, one, one}, kSamples), kSamples, self, kSeed, Backend::onednn,
              Arithmetic::reproducible);
  DistNet d(net, plans_on(net, {data, data, data}, kSamples), kSamples, world, kSeed, Backend::onednn,
            Arithmetic::reproducible);
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE(fmt::format("step {}", step));
    const XentResult want = run(ref), got = run(d);
    ASSERT_GT(want.loss, 0.5);
    EXPECT_EQ(got.loss, want.loss);
    EXPECT_EQ(got.correct, want.correct);
    ASSERT_EQ(d.params().size(), ref.params().size());
    for (size_t p = 0; p < d.params().size(); ++p) {
      ParamShard& mine = d.params()[p];
      const ParamShard& whole = ref.params()[p];
      for_each_run(mine.slice, [&](int64_t a, int64_t b, int64_t c, int64_t d0, int64_t d1, int64_t off) {
        for (int64_t i = 0; i < d1 - d0; ++i) {
          EXPECT_EQ(mine.grad[off + i], whole.grad[whole.global.offset(a, b, c, d0 + i)]) << mine.name;
        }
      });
    }
    expect_words_equal_model(d);
    for (auto* net_of : {&ref, &d}) {  // the same plain step on both
      for (ParamShard& p : net_of->params()) {
        for (size_t i = 0; i < p.value.size(); ++i) p.value[i] -= 0.5f * p.grad[i];
      }
    }
  }
  expect_words_equal_model(d);
  if (P > 1) {  // a grid that splits more than samples is refused
    const GridDims rows{1, 1, 1, P, 1};
    EXPECT_THROW(DistNet(net, plans_on(net, {rows, data, data}, kSamples), kSamples, world, kSeed, Backend::onednn,
                         Arithmetic::reproducible),
                 InputError);
  }
}

TEST(DistNet, GradientsMatchFiniteDifferences) {
  Communicator world = Communicator::world();
  Communicator self = world.split(world.rank(), 0);
  if (world.rank() != 0) GTEST_SKIP() << "checked on rank 0 alone (one-rank network)";
  for (const Network& net : networks()) {
    SCOPED_TRACE(net.name());
    DistNet ref(net, plans_on(net, std::vector<GridDims>(net.compute_layers().size(), GridDims{})), kBatch, self,
                kSeed);
    ref.poison_buffers_as_lives_begin(true);
    run_step(ref);
    std::vector<std::vector<float>> grads;
    for (const ParamShard& p : ref.params()) grads.emplace_back(p.grad.begin(), p.grad.end());
    // Small enough that no ReLU input crosses 0 (at 1e-3 one does in the residual network).
    const float eps = 3e-4f;
    for (size_t p = 0; p < ref.params().size(); ++p) {
      const int64_t n = static_cast<int64_t>(ref.params()[p].value.size());
      for (int64_t i : {int64_t{0}, n / 3, n / 2, n - 1}) {
        float& w = ref.params()[p].value[i];
        const float keep = w;
        w = keep + eps;
        const double up = run_step(ref).loss;
        w = keep - eps;
        const double down = run_step(ref).loss;
        w = keep;
        const double fd = (up - down) / (2 * eps);
        EXPECT_NEAR(grads[p][i], fd, 2e-3 + 2e-2 * std::abs(fd)) << ref.params()[p].name << "[" << i << "]";
      }
    }
  }
}

}  // namespace
}  // namespace convgrid
