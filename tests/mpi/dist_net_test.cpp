// DistNet under mpiexec: a small network with every layer kind (conv with bias, ReLU, overlapping
// padded max pooling, average pooling, flatten, fully connected, softmax cross-entropy) on many
// grids gives the loss and every parameter gradient of the same network on one rank (within
// float rounding), the redistributions move exactly the words of the model on every rank, and
// the one-rank gradients agree with central finite differences of the loss. With reproducible
// arithmetic, data-parallel grids give the one-rank run's bits.
#include <mpi.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "algo/reproducible_conv.hpp"
#include "comm/communicator.hpp"
#include "convgrid/error.hpp"
#include "grid/process_grid.hpp"
#include "io/seeded_tensor.hpp"
#include "layout/grid_dims.hpp"
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

XentResult run_step(DistNet& net) {
  fill_seeded(net.input_slice(), net.input_tensor(), kSeed, TensorStream::input, net.input());
  return net.step(kLabels, kWeights, true);
}

// Every grid of P ranks that fits the layer, per compute layer; and a few mixes of them.
TEST(DistNet, MatchesOneRankOnEveryGridAndMovesTheModelsWords) {
  Communicator world = Communicator::world();
  Communicator self = world.split(world.rank(), 0);
  const Network net = small_net();
  DistNet ref(net, plans_on(net, {GridDims{}, GridDims{}, GridDims{}}), kBatch, self, kSeed);
  const XentResult r = run_step(ref);
  ASSERT_GT(r.loss, 0.5);
  const std::vector<std::vector<GridDims>> choices = grid_choices(net, world.size());
  ASSERT_FALSE(choices.empty());
  for (const auto& grids : choices) {
    SCOPED_TRACE(fmt::format("grids {} {} {}", grids[0].to_string(), grids[1].to_string(), grids[2].to_string()));
    DistNet d(net, plans_on(net, grids), kBatch, world, kSeed);
    const XentResult x = run_step(d);
    EXPECT_NEAR(x.loss, r.loss, 1e-5 * r.loss);
    EXPECT_EQ(x.correct, r.correct);
    ASSERT_EQ(d.params().size(), ref.params().size());
    for (size_t p = 0; p < d.params().size(); ++p) {
      const ParamShard& mine = d.params()[p];
      const ParamShard& whole = ref.params()[p];
      ASSERT_EQ(mine.global, whole.global);
      for_each_run(mine.slice, [&](int64_t a, int64_t b, int64_t c, int64_t d0, int64_t d1, int64_t off) {
        for (int64_t i = 0; i < d1 - d0; ++i) {
          const float want = whole.grad[whole.global.offset(a, b, c, d0 + i)];
          EXPECT_NEAR(mine.grad[off + i], want, 1e-5f + 1e-4f * std::abs(want)) << mine.name;
          EXPECT_EQ(mine.value[off + i], whole.value[whole.global.offset(a, b, c, d0 + i)]) << mine.name;
        }
      });
    }
    for (size_t i = 0; i < d.edge_words().size(); ++i) {
      int64_t fwd = d.edge_words()[i].forward, bwd = d.edge_words()[i].backward;
      MPI_Allreduce(MPI_IN_PLACE, &fwd, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &bwd, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(fwd, d.modelled_edge_words()[i].forward) << "layer " << i;
      EXPECT_EQ(bwd, d.modelled_edge_words()[i].backward) << "layer " << i;
    }
  }
}

TEST(DistNet, PlannerGridsMoveThePlannersWords) {
  Communicator world = Communicator::world();
  const Network net = small_net();
  NetworkPlanOptions o;
  o.layer.procs = world.size();
  o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  o.batch = kBatch;
  const NetworkPlan plan = plan_network(net, o);
  const std::vector<LayerPlan> plans = plan.layer_plans();
  DistNet d(net, plans, kBatch, world, kSeed);
  run_step(d);
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    int64_t fwd = d.edge_words()[i].forward, bwd = d.edge_words()[i].backward;
    MPI_Allreduce(MPI_IN_PLACE, &fwd, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &bwd, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(fwd + bwd, plan.layers[i].redistribution_words()) << plan.layers[i].name;
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
    d.traffic().conv.reset();
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
    for (auto* net_of : {&ref, &d}) {  // the same plain step on both
      for (ParamShard& p : net_of->params()) {
        for (size_t i = 0; i < p.value.size(); ++i) p.value[i] -= 0.5f * p.grad[i];
      }
    }
  }
  int64_t modelled = 0;
  for (const ComputeLayer& c : net.compute_layers()) {
    const ProcessGrid grid(data, world);
    const ReproducibleConv conv(conv_shape(net.layers()[c.layer], kSamples), grid);
    modelled += conv.modelled_words(Pass::forward) + conv.modelled_words(Pass::backward_weights);
  }
  EXPECT_EQ(d.traffic().conv.traffic().words(), modelled);
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
  const Network net = small_net();
  DistNet ref(net, plans_on(net, {GridDims{}, GridDims{}, GridDims{}}), kBatch, self, kSeed);
  run_step(ref);
  std::vector<std::vector<float>> grads;
  for (const ParamShard& p : ref.params()) grads.emplace_back(p.grad.begin(), p.grad.end());
  const float eps = 1e-3f;
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

}  // namespace
}  // namespace convgrid
