// bench_kernels: the local convolution engine against bare oneDNN, on every distinct
// convolution shape of ResNet-50 (ImageNet 224x224, torchvision v1.5: stride on the 3x3) at
// batch 32, for the three passes.
//
// Each benchmark "<layer>/<pass>" times, back to back in alternating order every iteration,
//   engine: LocalConv::run(pass) on resident tensors (loaded once, in oneDNN's layouts), and
//   bare:   a oneDNN primitive made here with format any and its own buffers, on the same data,
// and reports the GFLOP/s of each from its fastest iteration, and their ratio. Other work on a
// shared machine only ever adds time; pairing the two and taking each one's fastest iteration
// keeps the ratio meaningful there.
//
// One thread unless OMP_NUM_THREADS says otherwise (Debian's oneDNN runs on OpenMP).
// At the end it prints a Markdown table (over --benchmark_repetitions when given).
//   full run, about 2 minutes:      bench_kernels
//   steadier, about 5 minutes:      bench_kernels --benchmark_min_time=2  (the documented one)
//   quick, under a minute:          bench_kernels --benchmark_min_time=0.05
//   a subset:                       bench_kernels --benchmark_filter='res4.*backward'
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "convgrid/conv_shape.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "nn/resnet50_layers.hpp"

namespace convgrid {
namespace {

// The distinct convolutions of ResNet-50 at batch 32.
const std::vector<NamedConv>& resnet50() {
  static const std::vector<NamedConv> layers = resnet50_distinct_convs(32);
  return layers;
}

constexpr Pass kPasses[] = {Pass::forward, Pass::backward_data, Pass::backward_weights};

// One thread unless OMP_NUM_THREADS says otherwise; returns the count in effect.
int use_one_thread_unless_told() {
  return std::getenv("OMP_NUM_THREADS") == nullptr ? set_kernel_threads(1) : kernel_threads();
}

std::vector<float> random_data(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// A oneDNN primitive as a user of oneDNN would write it: format any, default attributes,
// buffers allocated by oneDNN, plain data reordered in once.
class BarePass {
 public:
  BarePass(Pass p, const ConvShape& g, const dnnl::engine& engine, dnnl::stream& stream,
           const std::map<int, const float*>& plain_inputs)
      : stream_(stream) {
    using tag = dnnl::memory::format_tag;
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::dims src{g.N, g.C, g.H, g.W}, wei{g.K, g.C, g.R, g.S},
        dst{g.N, g.K, g.Ho(), g.Wo()};
    const dnnl::memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dil_h - 1, g.dil_w - 1},
        pad_l{g.pad_top, g.pad_left}, pad_r{g.pad_bottom, g.pad_right};
    const dnnl::memory::desc src_any(src, f32, tag::any), wei_any(wei, f32, tag::any),
        dst_any(dst, f32, tag::any);
    const dnnl::convolution_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_any, wei_any,
         dnnl::memory::desc(), dst_any, strides, dilates, pad_l, pad_r},
        engine);
    dnnl::primitive_desc pd = fwd;
    if (p == Pass::backward_data) {
      pd = dnnl::convolution_backward_data::primitive_desc(
          {dnnl::algorithm::convolution_direct, src_any, wei_any, dst_any, strides, dilates, pad_l,
           pad_r},
          engine, fwd);
    } else if (p == Pass::backward_weights) {
      pd = dnnl::convolution_backward_weights::primitive_desc(
          {dnnl::algorithm::convolution_direct, src_any, wei_any, dnnl::memory::desc(), dst_any,
           strides, dilates, pad_l, pad_r},
          engine, fwd);
    }
    primitive_ = dnnl::primitive(pd);
    const std::map<int, std::pair<dnnl::memory::dims, tag>> plain = {
        {DNNL_ARG_SRC, {src, tag::nchw}},     {DNNL_ARG_DIFF_SRC, {src, tag::nchw}},
        {DNNL_ARG_WEIGHTS, {wei, tag::oihw}}, {DNNL_ARG_DIFF_WEIGHTS, {wei, tag::oihw}},
        {DNNL_ARG_DST, {dst, tag::nchw}},     {DNNL_ARG_DIFF_DST, {dst, tag::nchw}}};
    for (const auto& [arg, layout] : plain) {
      const dnnl::memory::desc md = pd.query_md(dnnl::query::exec_arg_md, arg);
      if (md.is_zero()) continue;
      dnnl::memory mem(md, engine);
      if (auto in = plain_inputs.find(arg); in != plain_inputs.end()) {
        dnnl::memory user({layout.first, f32, layout.second}, engine,
                          const_cast<float*>(in->second));
        dnnl::reorder(user, mem).execute(stream, user, mem);
      }
      args_.emplace(arg, mem);
    }
    stream.wait();
  }

  void execute() {
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

 private:
  dnnl::stream& stream_;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
};

// One layer's data, engine and bare primitives; one layer is held at a time.
class Workload {
 public:
  explicit Workload(const ConvShape& g)
      : shape_(g),
        in_(random_data(g.input_elems(), 1)),
        ker_(random_data(g.weight_elems(), 2)),
        dout_(random_data(g.output_elems(), 3)),
        engine_conv_(g, false) {}

  // The engine's pass p, prepared and with its inputs loaded.
  LocalConv& engine_for(Pass p) {
    engine_conv_.prepare(p);
    const bool reads_input = p != Pass::backward_data, reads_weights = p != Pass::backward_weights;
    if (reads_input) engine_conv_.load(Tensor::input, in_.data());
    if (reads_weights) engine_conv_.load(Tensor::weights, ker_.data());
    if (p != Pass::forward) engine_conv_.load(Tensor::grad_output, dout_.data());
    return engine_conv_;
  }

  BarePass& bare_for(Pass p) {
    auto& slot = bare_[static_cast<size_t>(p)];
    if (!slot) {
      slot.emplace(p, shape_, dnnl_engine_, stream_,
                   std::map<int, const float*>{{DNNL_ARG_SRC, in_.data()},
                                               {DNNL_ARG_WEIGHTS, ker_.data()},
                                               {DNNL_ARG_DIFF_DST, dout_.data()}});
    }
    return *slot;
  }

 private:
  ConvShape shape_;
  std::vector<float> in_, ker_, dout_;
  LocalConv engine_conv_;
  dnnl::engine dnnl_engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{dnnl_engine_};
  std::array<std::optional<BarePass>, 3> bare_;
};

Workload& workload_for(const NamedConv& layer) {
  static std::string current;
  static std::unique_ptr<Workload> held;
  if (current != layer.name) {
    held.reset();  // free the previous layer's buffers first
    held = std::make_unique<Workload>(layer.shape);
    current = layer.name;
  }
  return *held;
}

template <typename F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void bm_pass(benchmark::State& state, const NamedConv& layer, Pass p) {
  const ConvShape& shape = layer.shape;
  Workload& w = workload_for(layer);
  LocalConv& engine = w.engine_for(p);
  BarePass& bare = w.bare_for(p);
  engine.run(p);  // warm-up: first touch of scratchpads and caches
  bare.execute();
  double engine_best = 1e30, bare_best = 1e30;
  bool engine_first = true;
  for (auto _ : state) {
    double te = 0, tb = 0;
    if (engine_first) {
      te = seconds([&] { engine.run(p); });
      tb = seconds([&] { bare.execute(); });
    } else {
      tb = seconds([&] { bare.execute(); });
      te = seconds([&] { engine.run(p); });
    }
    engine_first = !engine_first;
    engine_best = std::min(engine_best, te);
    bare_best = std::min(bare_best, tb);
    state.SetIterationTime(te + tb);
  }
  const double gflop = shape.flops() / 1e9;
  state.counters["engine_GFLOP/s"] = gflop / engine_best;
  state.counters["bare_GFLOP/s"] = gflop / bare_best;
  state.counters["engine/bare"] = bare_best / engine_best;
  state.SetLabel(shape.to_string());
}

void register_benchmarks() {
  for (const NamedConv& layer : resnet50()) {
    for (Pass p : kPasses) {
      benchmark::RegisterBenchmark(fmt::format("{}/{}", layer.name, pass_name(p)).c_str(), bm_pass,
                                   layer, p)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

// The console output, then a Markdown table of the best GFLOP/s of each side over each
// benchmark's repetitions, and their ratio.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const std::string& name = run.run_name.function_name;
      auto [it, fresh] = rows_.try_emplace(name);
      if (fresh) order_.push_back(name);
      Row& row = it->second;
      row.engine = std::max(row.engine, run.counters.at("engine_GFLOP/s").value);
      row.bare = std::max(row.bare, run.counters.at("bare_GFLOP/s").value);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::string table =
        "\n| layer | pass | engine GFLOP/s | bare GFLOP/s | engine/bare |\n"
        "|---|---|---:|---:|---:|\n";
    for (const std::string& name : order_) {
      const Row& r = rows_.at(name);
      const size_t slash = name.find('/');
      table += fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.3f} |\n", name.substr(0, slash),
                           name.substr(slash + 1), r.engine, r.bare, r.engine / r.bare);
    }
    GetOutputStream() << table;
  }

 private:
  struct Row {
    double engine = 0.0, bare = 0.0;
  };
  std::map<std::string, Row> rows_;
  std::vector<std::string> order_;
};

}  // namespace
}  // namespace convgrid

int main(int argc, char** argv) {
  try {
    const int threads = convgrid::use_one_thread_unless_told();
    benchmark::AddCustomContext("omp_threads", std::to_string(threads));
    benchmark::AddCustomContext(
        "onednn", fmt::format("{}.{}.{}", dnnl::version()->major, dnnl::version()->minor,
                              dnnl::version()->patch));
    convgrid::register_benchmarks();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    convgrid::TableReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 1;
  }
  return 0;
}
