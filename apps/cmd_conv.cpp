// convgrid conv: one convolution layer, all three passes, on one rank or on a grid of MPI ranks.
// Inputs come from .npy files (each rank reads only its slice) or from a seed; outputs are
// written the same way. Prints per pass the times, GFLOP/s, the words each rank received next
// to the cost model's words, and peak bytes; --check compares with the loop-nest reference.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "algo/grid_conv.hpp"
#include "comm/communicator.hpp"
#include "io/output_paths.hpp"
#include "commands.hpp"
#include "kernel_flags.hpp"
#include "conv_report.hpp"
#include "layer_run.hpp"
#include "convgrid/error.hpp"
#include "convgrid/memory.hpp"
#include "convgrid/npy.hpp"
#include "io/npy_slices.hpp"
#include "io/seeded_tensor.hpp"
#include "layout/pack.hpp"
#include "model/grid_memory.hpp"
#include "model/grid_volume.hpp"
#include "model/streamed_memory.hpp"
#include "model/streamed_volume.hpp"
#include "plan/layer_planner.hpp"
#include "sim/compute.hpp"

namespace convgrid::cli {
namespace {

struct ConvOptions {
  std::string shape, grid;
  std::string input, weight, grad_output;      // read
  std::string output, grad_input, grad_weight;  // written
  std::string pass = "all";
  std::string backend = "onednn";
  uint64_t seed = 1;
  int repeat = 5;
  int64_t panels = -1;       // -1: the grid algorithm unless --mem-per-rank needs streaming
  std::string mem_per_rank;
  bool check = false;
  std::string json;
  std::string compute = "run";
  int threads = 0;  // kernel threads per rank; 0: fitted to the launch
};

std::vector<Pass> passes_of(const std::string& name) {
  if (name == "fwd") return {Pass::forward};
  if (name == "bwd-data") return {Pass::backward_data};
  if (name == "bwd-weights") return {Pass::backward_weights};
  return {Pass::forward, Pass::backward_data, Pass::backward_weights};
}

bool has(const std::vector<Pass>& v, Pass p) { return std::find(v.begin(), v.end(), p) != v.end(); }

void require(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

// Flags naming files must fit the passes that run: a file nobody reads or writes is an error.
void check_file_flags(const ConvOptions& o, const std::vector<Pass>& passes) {
  const bool fwd = has(passes, Pass::forward), bd = has(passes, Pass::backward_data),
             bw = has(passes, Pass::backward_weights);
  require(o.input.empty() || fwd || bw, "--input is read only by the fwd and bwd-weights passes");
  require(o.weight.empty() || fwd || bd, "--weight is read only by the fwd and bwd-data passes");
  require(o.grad_output.empty() || bd || bw, "--grad-output is read only by the backward passes");
  require(o.output.empty() || fwd, "--output is written only by the fwd pass");
  require(o.grad_input.empty() || bd, "--grad-input is written only by the bwd-data pass");
  require(o.grad_weight.empty() || bw, "--grad-weight is written only by the bwd-weights pass");
}

void load(const Communicator& world, LayerTensor& t, const std::string& path, uint64_t seed,
          TensorStream stream, const char* what) {
  if (path.empty()) {
    fill_seeded(t.slice, t.global, seed, stream, t.data.data());
  } else {
    read_npy_slice(world, path, t.global, t.slice, t.data.data(), what);
  }
}

// The whole tensor, for the reference check (every rank holds it: --check is for verification).
std::vector<float> whole_tensor(const LayerTensor& t, const std::string& path, uint64_t seed,
                                TensorStream stream) {
  std::vector<float> v(t.global.volume());
  if (path.empty()) {
    fill_seeded(Slice::whole(t.global), t.global, seed, stream, v.data());
  } else {
    NpyArray a = read_npy(path);
    std::copy(a.data.data(), a.data.data() + v.size(), v.begin());
  }
  return v;
}

CheckResult compare(const Communicator& world, const LayerTensor& got, const std::vector<float>& ref) {
  std::vector<float> want(got.slice.size());
  pack_box(got.slice, nullptr, got.global, ref.data(), want.data());
  double local[2] = {0, 0};
  for (size_t i = 0; i < want.size(); ++i) {
    local[0] = std::max(local[0], static_cast<double>(std::fabs(got.data[i] - want[i])));
  }
  for (float v : ref) local[1] = std::max(local[1], static_cast<double>(std::fabs(v)));
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, world.raw());
  return {global[0], global[1]};
}

int run_conv(const ConvOptions& o) {
  apply_compute_flag(o.compute);
  require(!o.check || !sim::kernels_skipped(), "--check compares computed results: it needs --compute run");
  const Communicator world = Communicator::world();
  use_kernel_threads(o.threads, world);
  const ConvShape shape = ConvShape::parse(o.shape);
  const std::vector<Pass> passes = passes_of(o.pass);
  check_file_flags(o, passes);
  check_output_file(world, o.output, "--output");
  check_output_file(world, o.grad_input, "--grad-input");
  check_output_file(world, o.grad_weight, "--grad-weight");
  check_output_file(world, o.json, "--json");
  require(o.repeat >= 1, fmt::format("--repeat {} must be at least 1", o.repeat));
  const Backend backend = o.backend == "reference" ? Backend::reference : Backend::onednn;

  require(o.panels >= -1, fmt::format("--panels {} must be 0 (the grid algorithm) or more", o.panels));
  PlanOptions plan;
  plan.procs = world.size();
  plan.passes = passes;
  plan.profile = load_profile("local-default");
  plan.engine = backend;
  if (!o.mem_per_rank.empty()) plan.mem_per_rank_bytes = parse_bytes(o.mem_per_rank);
  GridDims dims;
  int64_t panels = std::max<int64_t>(o.panels, 0);
  std::string choice = "given by --grid";
  if (!o.grid.empty()) {
    dims = GridDims::parse(o.grid);
    dims.validate_size(world.size());
    dims.validate_for(shape);
    if (o.panels < 0 && plan.mem_per_rank_bytes) {
      panels = plan_on_grid(shape, dims, plan).panels;  // streamed when the limit asks for it
      choice += panels > 0 ? fmt::format(", streamed in {} panels to fit --mem-per-rank", panels) : "";
    }
  } else {
    if (o.panels >= 0) plan.allow_streaming = false;  // the panels are given
    const LayerPlan chosen = plan_layer(shape, plan);
    dims = chosen.grid;
    if (o.panels < 0) panels = chosen.panels;
    choice = "chosen by the planner: fewest words received by the busiest rank";
    if (chosen.panels > 0) choice += fmt::format(", streamed in {} panels to fit --mem-per-rank", panels);
  }
  if (o.panels > 0) choice += fmt::format(", streamed in {} panels (--panels)", panels);
  const ProcessGrid grid(dims, world);
  LayerRun run(shape, grid, backend, panels);
  LayerTensor &in = run.in(), &ker = run.ker(), &dout = run.dout();
  LayerTensor &out = run.out(), &din = run.din(), &dker = run.dker();
  load(world, in, o.input, o.seed, TensorStream::input, "the layer's input (N,C,H,W)");
  load(world, ker, o.weight, o.seed, TensorStream::weights, "the layer's weights (K,C,R,S)");
  load(world, dout, o.grad_output, o.seed, TensorStream::grad_output,
       "the layer's output gradient (N,K,Ho,Wo)");

  std::map<Pass, PassTiming> timing = run.time_steps(world, passes, o.repeat);

  ConvReport report{shape, dims, o.backend, choice, o.repeat, {}};
  const LayerLayout& layout = run.layout();
  int64_t model_bytes =
      panels > 0 ? streamed_memory_bytes(layout, grid.coord(), passes, panels, StreamOptions{}.pieces, backend)
                 : grid_memory_bytes(layout, grid.coord(), passes, backend);
  MPI_Allreduce(&model_bytes, &report.model_bytes, 1, MPI_INT64_T, MPI_MAX, world.raw());
  Held held;
  for (Pass p : passes) {
    const PassTiming& t = timing[p];
    const PassVolume model = panels > 0 ? streamed_pass_volume(layout, grid.coord(), p, panels)
                                        : grid_pass_volume(layout, grid.coord(), p, held);
    held = held_after(p, held);
    RankPassStats s;
    s.recv_words_measured = static_cast<double>(t.traffic.words());
    s.messages_measured = static_cast<double>(t.traffic.messages());
    s.recv_words_model = static_cast<double>(model.words());
    s.messages_model = static_cast<double>(model.messages);
    s.peak_bytes = static_cast<double>(t.peak_bytes);
    s.min_s = min_of(t.seconds);
    s.median_s = median_of(t.seconds);
    s.comm_s = t.split.comm;
    s.compute_s = t.split.compute;
    s.own_s = t.own_seconds;
    report.passes.push_back({p, gather_stats(world, s), std::nullopt});
  }

  if (!o.output.empty()) write_npy_slice(world, o.output, out.global, out.slice, out.data.data());
  if (!o.grad_input.empty()) write_npy_slice(world, o.grad_input, din.global, din.slice, din.data.data());
  if (!o.grad_weight.empty()) write_npy_slice(world, o.grad_weight, dker.global, dker.slice, dker.data.data());

  bool check_failed = false;
  if (o.check) {
    const std::vector<float> x = whole_tensor(in, o.input, o.seed, TensorStream::input);
    const std::vector<float> w = whole_tensor(ker, o.weight, o.seed, TensorStream::weights);
    const std::vector<float> dy = whole_tensor(dout, o.grad_output, o.seed, TensorStream::grad_output);
    for (PassReport& pr : report.passes) {
      std::vector<float> ref;
      const LayerTensor* got = nullptr;
      switch (pr.pass) {
        case Pass::forward:
          ref.resize(shape.output_elems());
          reference::forward(shape, x.data(), w.data(), nullptr, ref.data());
          got = &out;
          break;
        case Pass::backward_data:
          ref.resize(shape.input_elems());
          reference::backward_data(shape, dy.data(), w.data(), ref.data());
          got = &din;
          break;
        case Pass::backward_weights:
          ref.resize(shape.weight_elems());
          reference::backward_weights(shape, dy.data(), x.data(), ref.data(), nullptr);
          got = &dker;
          break;
      }
      pr.check = compare(world, *got, ref);
      check_failed |= !pr.check->ok();
    }
  }

  if (world.rank() == 0) {
    print_report(report);
    if (!o.json.empty()) {
      std::ofstream f(o.json);
      f << report_json(report).dump(2) << "\n";
      if (!f) throw Error(fmt::format("--json {}: cannot write the file", o.json));
    }
  }
  return check_failed ? 2 : 0;
}

}  // namespace

void add_conv_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<ConvOptions>();
  CLI::App* sub = app.add_subcommand("conv", "Run one convolution layer (forward and backward passes)");
  sub->add_option("--shape", o->shape, "Layer, e.g. N=32,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1")->required();
  sub->add_option("--grid", o->grid, "Processor grid Pn,Pk,Pc,Ph,Pw (product = number of ranks); default: fewest words");
  sub->add_option("--input", o->input, "Input x (N,C,H,W) .npy; default: generated from --seed");
  sub->add_option("--weight", o->weight, "Weights w (K,C,R,S) .npy; default: generated from --seed");
  sub->add_option("--grad-output", o->grad_output, "Output gradient dy (N,K,Ho,Wo) .npy; default: generated");
  sub->add_option("--output", o->output, "Write the output y (forward)");
  sub->add_option("--grad-input", o->grad_input, "Write the input gradient dx (backward-data)");
  sub->add_option("--grad-weight", o->grad_weight, "Write the weight gradient dw (backward-weights)");
  sub->add_option("--pass", o->pass, "Passes to run")->check(CLI::IsMember({"fwd", "bwd-data", "bwd-weights", "all"}));
  sub->add_option("--backend", o->backend, "Local kernels")->check(CLI::IsMember({"onednn", "reference"}));
  sub->add_option("--panels", o->panels, "Stream each pass in B panels (SPEC section 5); 0: the grid algorithm");
  sub->add_option("--mem-per-rank", o->mem_per_rank, "Per-rank memory limit for the planner: BYTES or e.g. 512MiB");
  sub->add_option("--seed", o->seed, "Seed of the generated inputs");
  sub->add_option("--repeat", o->repeat, "Timed repeats after one warm-up");
  add_compute_flag(sub, o->compute);
  add_threads_flag(sub, o->threads);
  sub->add_flag("--check", o->check, "Compare with the loop-nest reference; exit 2 if off by more than 1e-4 relative");
  sub->add_option("--json", o->json, "Write the figures as JSON");
  registry.emplace_back(sub, [o] { return run_conv(*o); });
}

}  // namespace convgrid::cli
