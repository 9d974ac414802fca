// bench_planner: how long the planner takes on one core, the target being all of
// ResNet-50 at batch 256 for P = 65536 in under 10 seconds (forward and training passes), with
// smaller P and VGG-16 for scale. Each benchmark plans the whole network once per iteration and
// reports the plan's words per rank as counters, so a faster planner that plans worse shows. The
// training step is planned as `convgrid plan --passes train` plans it: with the training job's
// memory model on every rank (train/training_job.hpp), whose busiest rank is a counter too.
//   bench_planner                                   (about a minute)
//   bench_planner --benchmark_filter='resnet50/65536'
#include <benchmark/benchmark.h>

#include <string>

#include "nn/builtin_networks.hpp"
#include "plan/network_planner.hpp"
#include "train/training_job.hpp"

namespace convgrid {
namespace {

void plan_whole_network(benchmark::State& state, const std::string& network, bool train) {
  const Network net = builtin_network(network);
  NetworkPlanOptions o;
  o.layer.procs = state.range(0);
  o.layer.profile = load_profile("ib100-cpu");
  if (train) o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  o.batch = 256;
  NetworkPlan plan;
  int64_t job_bytes = 0;
  for (auto _ : state) {
    if (train) {
      const TrainingJobPlan job = plan_training_job(net, JobPlanOptions{o, "", false});
      plan = job.plan;
      job_bytes = job.busiest.total();
    } else {
      plan = plan_network(net, o);
    }
    benchmark::DoNotOptimize(plan.layers.data());
  }
  if (train) state.counters["job_bytes"] = static_cast<double>(job_bytes);
  state.counters["words"] = static_cast<double>(plan.words());
  state.counters["bound"] = plan.lower_bound_words();
  state.counters["redistribution"] = static_cast<double>(plan.redistribution_words());
}

void register_all() {
  for (const char* net : {"resnet50", "vgg16"}) {
    for (bool train : {false, true}) {
      const std::string name = std::string(net) + (train ? "/train" : "/fwd");
      benchmark::RegisterBenchmark(name.c_str(), [net = std::string(net), train](benchmark::State& s) {
        plan_whole_network(s, net, train);
      })->Arg(256)->Arg(4096)->Arg(65536)->Unit(benchmark::kSecond)->Iterations(1);
    }
  }
}

}  // namespace
}  // namespace convgrid

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  convgrid::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
