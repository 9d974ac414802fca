// plan_and_run: plans one convolution layer for the ranks of MPI_COMM_WORLD with convgrid's
// planner, runs its forward pass distributed on seeded random data and checks it, using only
// convgrid's installed public headers:
//  - every rank's output slice against the loop-nest reference on the whole tensors (each rank
//    makes the whole input and weights from the same seed, so nothing needs gathering);
//  - the words every rank received against the cost model, and the busiest rank's against the
//    plan.
// Exits 1 on a mismatch. Usage: mpirun -np P plan_and_run ["N=8,C=32,...,pad=1"]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include <convgrid/conv_shape.hpp>
#include <convgrid/cost_model.hpp>
#include <convgrid/distributed_conv.hpp>
#include <convgrid/local_conv.hpp>
#include <convgrid/planner.hpp>

namespace {

using Dims = std::array<int64_t, 4>;

// A value in [-1, 1) from (seed, index): splitmix64, the same on every rank.
float seeded_value(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

std::vector<float> seeded_tensor(int64_t elems, uint64_t seed) {
  std::vector<float> t(elems);
  for (int64_t i = 0; i < elems; ++i) t[i] = seeded_value(seed, i);
  return t;
}

int64_t dense_index(const Dims& dims, const std::array<int64_t, 4>& c) {
  return ((c[0] * dims[1] + c[1]) * dims[2] + c[2]) * dims[3] + c[3];
}

// This rank's slice of a whole dense tensor of `dims`.
std::vector<float> take(const convgrid::TensorSlice& slice, const std::vector<float>& whole, const Dims& dims) {
  std::vector<float> part(slice.size());
  for (int64_t i = 0; i < slice.size(); ++i) part[i] = whole[dense_index(dims, slice.coord(i))];
  return part;
}

// The check on this rank: 0 when its outputs and words are right, else the count of mismatches.
int64_t plan_run_and_check(const convgrid::ConvShape& shape, int rank, int size) {
  using convgrid::Pass;
  convgrid::PlanRequest request;  // the forward pass alone, no memory limit
  request.ranks = size;
  const convgrid::LayerPlanSummary plan = convgrid::plan_layer_for(shape, request);
  if (rank == 0) std::printf("%s on %d ranks\n  plan: %s\n", shape.to_string().c_str(), size, plan.to_string().c_str());

  convgrid::DistributedConv conv(plan, MPI_COMM_WORLD);
  const Dims in_dims{shape.N, shape.C, shape.H, shape.W}, ker_dims{shape.K, shape.C, shape.R, shape.S},
      out_dims{shape.N, shape.K, shape.Ho(), shape.Wo()};
  const std::vector<float> in_all = seeded_tensor(shape.input_elems(), 1);
  const std::vector<float> ker_all = seeded_tensor(shape.weight_elems(), 2);
  const std::vector<float> in = take(conv.input_slice(), in_all, in_dims);
  const std::vector<float> ker = take(conv.weight_slice(), ker_all, ker_dims);
  std::vector<float> out(conv.output_slice().size());
  conv.forward(in.data(), ker.data(), out.data());

  std::vector<float> expected(shape.output_elems());
  convgrid::reference::forward(shape, in_all.data(), ker_all.data(), nullptr, expected.data());
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < conv.output_slice().size(); ++i) {
    const float want = expected[dense_index(out_dims, conv.output_slice().coord(i))];
    const double err = std::abs(out[i] - want) / (1.0 + std::abs(want));
    worst = std::max(worst, err);
    if (!(err <= 1e-4)) ++bad;
  }
  const int64_t words = conv.last_words();
  const int64_t model = convgrid::rank_words(shape, plan.grid, rank, Pass::forward);
  if (words != model || words != conv.modelled_words(Pass::forward, {Pass::forward})) {
    std::fprintf(stderr, "plan_and_run: rank %d received %lld words, the model says %lld\n", rank,
                 static_cast<long long>(words), static_cast<long long>(model));
    ++bad;
  }

  int64_t busiest = 0;
  MPI_Allreduce(&words, &busiest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  double worst_all = 0;
  MPI_Allreduce(&worst, &worst_all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (busiest != plan.passes.at(0).busiest_rank_words) {
    if (rank == 0) std::fprintf(stderr, "plan_and_run: the busiest rank received %lld words, the plan says %lld\n",
                                static_cast<long long>(busiest), static_cast<long long>(plan.passes.at(0).busiest_rank_words));
    ++bad;
  }
  if (rank == 0) {
    std::printf("  forward: busiest rank received %lld words (plan %lld, lower bound %.0f); largest relative error %.2g\n",
                static_cast<long long>(busiest), static_cast<long long>(plan.passes.at(0).busiest_rank_words),
                plan.passes.at(0).lower_bound_words, worst_all);
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t bad = 0;
  try {
    const convgrid::ConvShape shape =
        convgrid::ConvShape::parse(argc > 1 ? argv[1] : "N=8,C=32,H=16,W=16,K=32,R=3,S=3,pad=1");
    bad = plan_run_and_check(shape, rank, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_and_run: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t bad_all = 0;
  MPI_Allreduce(&bad, &bad_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s\n", bad_all == 0 ? "ok" : "MISMATCH");
  MPI_Finalize();
  return bad_all == 0 ? 0 : 1;
}
