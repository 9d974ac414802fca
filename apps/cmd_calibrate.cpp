// convgrid calibrate: measures this machine's profile (model/machine_profile.hpp) and writes it as
// the profile "local" (default profiles/local.json). Run under mpirun with at least 2 ranks:
//   alpha     median one-way time of many round trips of 8 bytes between ranks 0 and 1;
//   beta      median one-way time of round trips of 16 MiB between ranks 0 and 1, less alpha,
//             per byte (buffers allocated and touched once, reused);
//   flop rate oneDNN forward convolution of ResNet-50's res2 3x3 layer at batch 8, on one thread,
//             on every rank at once (as in a run with one rank per core): median time of the
//             repeats after a warm-up on each rank, then the median over ranks.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/mpi_error.hpp"
#include "commands.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "layer_run.hpp"
#include "model/machine_profile.hpp"
#include "nn/resnet50_layers.hpp"

namespace convgrid::cli {
namespace {

struct CalibrateOptions {
  std::string out = "profiles/local.json";
  bool json = false;
};

constexpr int kSmallFloats = 2, kSmallBytes = kSmallFloats * sizeof(float);
constexpr int kSmallWarmup = 1000, kSmallTrips = 10000;
constexpr int kLargeFloats = 4 << 20;  // 16 MiB
constexpr int kLargeWarmup = 3, kLargeTrips = 30;
constexpr int kConvBatch = 8, kConvWarmup = 3, kConvRepeat = 20;
constexpr const char* kConvLayer = "res2_3x3_64-64";

// One-way seconds of each timed round trip of `count` floats between ranks 0 and 1, as rank 0
// sees it (empty on other ranks, which take no part).
std::vector<double> ping_pong(const Communicator& world, std::vector<float>& buf, int count,
                              int warmup, int trips) {
  std::vector<double> one_way;
  if (world.rank() > 1) return one_way;
  const int peer = 1 - world.rank();
  const auto send = [&] {
    check_mpi(MPI_Send(buf.data(), count, MPI_FLOAT, peer, 0, world.raw()), "MPI_Send");
  };
  const auto recv = [&] {
    check_mpi(MPI_Recv(buf.data(), count, MPI_FLOAT, peer, 0, world.raw(), MPI_STATUS_IGNORE),
              "MPI_Recv");
  };
  for (int i = 0; i < warmup + trips; ++i) {
    const double t0 = MPI_Wtime();
    if (world.rank() == 0) {
      send();
      recv();
    } else {
      recv();
      send();
    }
    if (i >= warmup && world.rank() == 0) one_way.push_back((MPI_Wtime() - t0) / 2);
  }
  return one_way;
}

// Rank 0's median, on every rank.
double median_from_rank0(const Communicator& world, const std::vector<double>& v) {
  double m = world.rank() == 0 ? median_of(v) : 0;
  check_mpi(MPI_Bcast(&m, 1, MPI_DOUBLE, 0, world.raw()), "MPI_Bcast");
  return m;
}

// Median seconds of one forward convolution of `shape` on this rank.
double time_forward(const ConvShape& shape) {
  LocalConv conv(shape, false, Backend::onednn);
  conv.prepare(Pass::forward);
  Buffer in(shape.input_elems()), ker(shape.weight_elems());
  in.fill(0.5f);
  ker.fill(0.01f);
  conv.load(Tensor::input, in.data());
  conv.load(Tensor::weights, ker.data());
  std::vector<double> seconds;
  for (int i = 0; i < kConvWarmup + kConvRepeat; ++i) {
    const double t0 = MPI_Wtime();
    conv.run(Pass::forward);
    if (i >= kConvWarmup) seconds.push_back(MPI_Wtime() - t0);
  }
  return median_of(seconds);
}

ConvShape calibration_layer() {
  for (const NamedConv& c : resnet50_distinct_convs(kConvBatch)) {
    if (c.name == kConvLayer) return c.shape;
  }
  throw Error(fmt::format("calibrate: ResNet-50 layer {} not found", kConvLayer));
}

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  check_mpi(MPI_Get_processor_name(name, &len), "MPI_Get_processor_name");
  return std::string(name, len);
}

// Rank 0 writes the file; every rank learns whether it could, so that all fail together (rank 0,
// whose message is the one printed, says why).
void write_on_rank0(const Communicator& world, const MachineProfile& p, const std::string& path) {
  int ok = 1;
  std::string why;
  if (world.rank() == 0) {
    try {
      const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      write_profile(p, path);
    } catch (const std::exception& e) {
      ok = 0;
      why = fmt::format(" ({})", e.what());
    }
  }
  check_mpi(MPI_Bcast(&ok, 1, MPI_INT, 0, world.raw()), "MPI_Bcast");
  if (!ok) throw Error(fmt::format("--out {}: cannot write the profile{}", path, why));
}

struct Measurements {
  double alpha = 0;            // one-way seconds of an 8-byte message
  double large = 0;            // one-way seconds of a 16 MiB message
  double beta = 0;             // (large - alpha) / bytes
  std::vector<double> conv_s;  // each rank's median convolution time
  double conv_median = 0;      // their median
  int threads = 1;             // of the local kernel
};

Measurements measure(const Communicator& world, const ConvShape& layer) {
  Measurements m;
  std::vector<float> buf(kLargeFloats, 1.0f);  // allocated and touched once, reused
  check_mpi(MPI_Barrier(world.raw()), "MPI_Barrier");
  m.alpha =
      median_from_rank0(world, ping_pong(world, buf, kSmallFloats, kSmallWarmup, kSmallTrips));
  m.large =
      median_from_rank0(world, ping_pong(world, buf, kLargeFloats, kLargeWarmup, kLargeTrips));
  m.beta = (m.large - m.alpha) / (double{kLargeFloats} * sizeof(float));

  m.threads = set_kernel_threads(1);
  check_mpi(MPI_Barrier(world.raw()), "MPI_Barrier");
  const double mine = time_forward(layer);
  m.conv_s.resize(world.size());
  check_mpi(MPI_Allgather(&mine, 1, MPI_DOUBLE, m.conv_s.data(), 1, MPI_DOUBLE, world.raw()),
            "MPI_Allgather");
  m.conv_median = median_of(m.conv_s);
  return m;
}

std::string threads_used(const Measurements& m) {
  return m.threads == 1 ? "1 thread" : fmt::format("{} threads", m.threads);
}

MachineProfile local_profile(const Measurements& m, const ConvShape& layer, int P,
                             const std::string& host) {
  MachineProfile p;
  p.name = "local";
  p.description =
      fmt::format("This machine ({}, {} ranks), measured by convgrid calibrate on {:%Y-%m-%d}",
                  host, P, fmt::gmtime(std::time(nullptr)));
  p.source = fmt::format(
      "convgrid calibrate: alpha = median one-way time of {} round trips of {} B between ranks 0 "
      "and 1; beta = (median one-way time of {} round trips of 16 MiB - alpha) / bytes; "
      "flop_rate = oneDNN forward convolution of ResNet-50 {} at batch {} ({}), {}, median of {} "
      "after {} warm-up runs on each of {} ranks at once, median over ranks; no overlap assumed",
      kSmallTrips, kSmallBytes, kLargeTrips, kConvLayer, kConvBatch, layer.to_string(),
      threads_used(m), kConvRepeat, kConvWarmup, P);
  p.alpha_s = m.alpha;
  p.beta_s_per_byte = m.beta;
  p.flop_rate = layer.flops() / m.conv_median;
  p.overlap = false;
  // A measurement that makes no sense (clock trouble) fails the profile's own validation here.
  profile_from_json(profile_to_json(p), "measured by convgrid calibrate");
  return p;
}

void print_table(const Measurements& m, const MachineProfile& p, int P, const std::string& host) {
  const auto [fastest, slowest] = std::minmax_element(m.conv_s.begin(), m.conv_s.end());
  fmt::print("convgrid calibrate: {} ranks on {}\n", P, host);
  fmt::print("  alpha      {:9.3f} us        median one-way time, {} round trips of {} B\n",
             m.alpha * 1e6, kSmallTrips, kSmallBytes);
  fmt::print(
      "  beta       {:9.3g} s/B       {:.2f} GB/s; 16 MiB one way: {:.3f} ms (median of {})\n",
      m.beta, 1e-9 / m.beta, m.large * 1e3, kLargeTrips);
  fmt::print(
      "  flop rate  {:9.1f} GFLOP/s   per rank, {}; {} batch {}: {:.2f} ms "
      "(ranks {:.2f}-{:.2f} ms)\n",
      p.flop_rate * 1e-9, threads_used(m), kConvLayer, kConvBatch, m.conv_median * 1e3,
      *fastest * 1e3, *slowest * 1e3);
}

int run_calibrate(const CalibrateOptions& o) {
  const Communicator world = Communicator::world();
  const int P = world.size();
  if (P < 2) {
    throw InputError(
        "calibrate measures alpha and beta by ping-pong between ranks 0 and 1: run it with at "
        "least 2 ranks (mpirun -np 2 convgrid calibrate)");
  }
  const ConvShape layer = calibration_layer();
  const Measurements m = measure(world, layer);
  const std::string host = host_name();
  const MachineProfile p = local_profile(m, layer, P, host);
  write_on_rank0(world, p, o.out);
  if (world.rank() == 0) {
    if (o.json) {
      fmt::print("{}\n", profile_to_json(p).dump(2));
    } else {
      print_table(m, p, P, host);
      fmt::print("wrote profile \"local\" to {}\n", o.out);
    }
  }
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Measure this machine's profile (alpha, beta, flop rate) under mpirun -np 2 or more");
  sub->add_option("--out", o->out, "Profile file to write")->capture_default_str();
  sub->add_flag("--json", o->json, "Print the profile as JSON instead of a table");
  registry.emplace_back(sub, [o] { return run_calibrate(*o); });
}

}  // namespace convgrid::cli
