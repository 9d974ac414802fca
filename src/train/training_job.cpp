// The training job: plan, build, train, report.
#include "train/training_job.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <memory>

#include "comm/collective_check.hpp"
#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"
#include "convgrid/memory.hpp"
#include "io/idx.hpp"
#include "io/output_paths.hpp"
#include "nn/load_network.hpp"
#include "nn/onnx_import.hpp"
#include "plan/plan_broadcast.hpp"
#include "train/batches.hpp"
#include "train/onnx_initial_weights.hpp"
#include "train/synthetic_batches.hpp"
#include "train/training_plan.hpp"

namespace convgrid {
namespace {

// x of every rank, on rank 0 (empty elsewhere).
std::vector<int64_t> gather_to_root(const Communicator& world, int64_t x) {
  std::vector<int64_t> all(world.rank() == 0 ? world.size() : 0);
  MPI_Gather(&x, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0, world.raw());
  return all;
}

int64_t max_over_ranks(const Communicator& world, int64_t x) {
  int64_t out = x;
  MPI_Allreduce(&x, &out, 1, MPI_INT64_T, MPI_MAX, world.raw());
  return out;
}

bool all_ranks(const Communicator& world, bool x) {
  int in = x ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, world.raw());
  return out == 1;
}

// The same grid wherever it fits, the given plans elsewhere.
std::vector<LayerPlan> on_grid(std::vector<LayerPlan> plans, const std::string& grid,
                               const PlanOptions& o) {
  const GridDims g = GridDims::parse(grid);
  if (g.size() != o.procs) {
    throw InputError(
        fmt::format("--grid {} has {} ranks but the job has {}", grid, g.size(), o.procs));
  }
  for (LayerPlan& p : plans) {
    PlanOptions own = o;
    own.passes = p.pass_list();  // the first layer's has no backward-data (passes_in_network)
    if (g.fits(p.shape)) p = evaluate_grid(p.shape, g, own);
  }
  return plans;
}

void check_images(const Network& net, const FashionMnist& data) {
  const IdxHeader images = read_idx_header(data.train_images());
  const Activation& in = net.input();
  if (images.dims.size() != 3 || in.C != 1 || in.H != images.dims[1] || in.W != images.dims[2]) {
    throw InputError(fmt::format("network '{}' takes {} inputs; the images of {} are 1x{}x{}",
                                 net.name(), in.to_string(), data.train_images(),
                                 images.dims.size() > 1 ? images.dims[1] : 0,
                                 images.dims.size() > 2 ? images.dims[2] : 0));
  }
}

// The job's plan, made on rank 0 alone (plan/plan_broadcast.hpp): the other ranks hold its
// choices. An error in planning on rank 0 ends every rank with its message.
TrainingJobPlan plan_on_root(const Communicator& world, const Network& net, const JobPlanOptions& o) {
  TrainingJobPlan job;
  std::string error;
  if (world.rank() == 0) {
    try {
      job = plan_training_job(net, o);
    } catch (const std::exception& e) {  // an InputError above all; any other ends the job too
      error = e.what();
    }
  }
  collective_check(world, error.empty(), error);
  std::vector<ConvShape> shapes;
  for (const ComputeLayer& c : net.compute_layers()) {
    shapes.push_back(conv_shape(net.layers()[c.layer], o.planner.batch));
  }
  broadcast_plan_choices(world, shapes, job.plans);
  return job;
}

}  // namespace

TrainingJobPlan plan_training_job(const Network& net, const JobPlanOptions& o) {
  NetworkPlanOptions popt = o.planner;
  const bool limit = popt.layer.mem_per_rank_bytes.has_value();
  if (o.reproducible) {
    if (limit) throw InputError("--reproducible runs without --mem-per-rank (it does not stream)");
    if (popt.family != GridFamily::any && popt.family != GridFamily::data_parallel) {
      throw InputError(
          fmt::format("--reproducible runs data-parallel grids; --family {} asks for others",
                      to_string(popt.family)));
    }
    if (popt.batch < popt.layer.procs) {
      throw InputError(fmt::format("--reproducible runs data-parallel grids: a batch of {} cannot give each of {} "
                                   "ranks a sample", popt.batch, popt.layer.procs));
    }
    popt.family = GridFamily::data_parallel;
  }
  // With a grid given the limit is met on those grids (below), not by the planner's search.
  NetworkPlanOptions search = popt;
  if (!o.grid.empty()) search.layer.mem_per_rank_bytes.reset();
  const TrainingPlan planned = plan_training(net, search);
  TrainingJobPlan job{planned.plan, planned.plan.layer_plans(), planned.memory,
                      planned.unconstrained};
  if (!o.grid.empty()) {
    job.plans = on_grid(job.plans, o.grid, popt.layer);
    if (!o.reproducible) {  // under a limit, layers stream on their grids until the job fits
      try {
        job.plans = fit_training_on_grids(net, job.plans, popt);
      } catch (const InputError& e) {
        throw InputError(fmt::format("--grid {}: {}", o.grid, e.what()));
      }
    }
  }
  job.plans =
      plans_for(job.plans, o.reproducible ? Arithmetic::reproducible : Arithmetic::fast, net);
  if (!o.grid.empty() || o.reproducible) {
    job.busiest =
        busiest_training_memory(net, job.plans, popt.batch, popt.layer.procs, popt.layer.engine);
  }
  return job;
}

std::map<std::string, std::string> training_recipe(const TrainJobOptions& o,
                                                     int64_t train_samples) {
  const TrainOptions& t = o.train;
  const LrScheduleOptions& s = t.schedule;
  std::map<std::string, std::string> r{
      {"lr", fmt::format("{}", t.sgd.lr)},
      {"momentum", fmt::format("{}", t.sgd.momentum)},
      {"weight-decay", fmt::format("{}", t.sgd.weight_decay)},
      {"lr-schedule", std::string(to_string(s.kind))},
      {"warmup-epochs", fmt::format("{}", s.warmup_epochs)},
      {"data", o.data.synthetic ? "synthetic" : "fashion-mnist"},
      {"train-samples", fmt::format("{}", train_samples)},
      {"crop-padding", fmt::format("{}", o.data.augment.crop_padding)},
      {"flip", o.data.augment.flip ? "on" : "off"}};
  if (s.kind == LrKind::cosine) r["epochs"] = fmt::format("{}", t.epochs);
  if (s.kind == LrKind::steps) {
    r["milestones"] = fmt::format("{}", fmt::join(s.milestones, ","));
    r["lr-gamma"] = fmt::format("{}", s.gamma);
  }
  return r;
}

TrainJobReport run_training_job(const Communicator& world, TrainJobOptions o,
                                const TrainJobObserver& observer) {
  if (o.train.epochs < 1)
    throw InputError(fmt::format("--epochs {}: must be at least 1", o.train.epochs));
  if (o.batch < 1) throw InputError(fmt::format("--batch {}: must be at least 1", o.batch));
  if (o.train.resume && o.train.checkpoint_dir.empty())
    throw InputError("--resume needs --checkpoint-dir");
  StallWatchdog watchdog(world.rank(), o.stall);
  check_output_dir(world, o.train.checkpoint_dir, "--checkpoint-dir");
  if (!o.train.checkpoint_dir.empty()) remove_partial_checkpoints(world, o.train.checkpoint_dir);
  const Network net = load_network(o.network, o.input_shape);
  const FashionMnist data{o.data.dir.empty() ? FashionMnist{}.dir : o.data.dir};
  if (o.data.synthetic && o.data.augment.enabled()) {
    throw InputError(
        "--crop-padding and --flip augment Fashion-MNIST images, not --data synthetic");
  }
  if (!o.data.synthetic) check_images(net, data);
  o.plan.planner.layer.procs = world.size();
  o.plan.planner.batch = o.batch;

  TrainJobReport report;
  report.threads = use_kernel_threads(o.threads, world);
  report.network = net.name();
  report.procs = world.size();
  report.batch = o.batch;
  report.plan = plan_on_root(world, net, o.plan);
  const auto count = [&](int64_t asked, int64_t synthetic, auto&& all) {
    return asked > 0 ? asked : o.data.synthetic ? synthetic : all();
  };
  report.train_count = count(o.data.train_samples, 8 * o.batch, [&] { return data.train_count(); });
  report.test_count = count(o.data.test_samples, o.batch, [&] { return data.test_count(); });
  std::unique_ptr<BatchSource> train, test;
  if (o.data.synthetic) {
    const int64_t classes = net.output().C;
    train = std::make_unique<SyntheticBatchSource>(report.train_count, o.batch, o.seed, classes);
    test = std::make_unique<SyntheticBatchSource>(report.test_count, o.batch, o.seed + 1, classes);
  } else {
    train =
        std::make_unique<IdxBatchSource>(data.train_images(), data.train_labels(),
                                         report.train_count, o.batch, o.seed, true, o.data.augment);
    test = std::make_unique<IdxBatchSource>(data.test_images(), data.test_labels(),
                                            report.test_count, o.batch, o.seed, false);
  }
  const TrainingMemory modelled =
      training_memory(net, report.plan.plans, o.batch, world.size(), world.rank());
  // From here on no rank's tracked bytes may pass --mem-per-rank (convgrid/memory.hpp): the
  // plans' model of them fits it, so this only stops a job the model got wrong, with a message.
  const ScopedMemoryLimit memory_limit(o.plan.planner.layer.mem_per_rank_bytes);
  DistNet dnet(net, report.plan.plans, o.batch, world, o.seed);
  // An ONNX model starts from its initializers (PyTorch's weights), not convgrid's initialisation.
  if (is_onnx_path(o.network)) {
    load_initial_tensors(onnx_initial_tensors(o.network, o.input_shape), o.network, dnet.params(),
                         dnet.state());
  }
  if (observer.started) observer.started(report);

  TrainState initial;
  initial.network = net.name();
  initial.batch = o.batch;
  initial.seed = o.seed;
  initial.recipe = training_recipe(o, report.train_count);
  Trainer trainer(world, dnet, *train, *test, initial, o.train, &watchdog);
  // The words of the last training step (the test evaluation's steps are not training steps).
  std::vector<DistNet::NodeWords> last;
  std::vector<DistNet::NodeSeconds> last_seconds;
  TrainObserver inner = observer.trainer;
  inner.step = [&](int64_t epoch, int64_t batch, int64_t batches, double loss, double rate) {
    last = dnet.last_step_words();
    last_seconds = dnet.last_step_seconds();
    if (observer.trainer.step) observer.trainer.step(epoch, batch, batches, loss, rate);
  };
  report.epochs = trainer.run(inner);
  report.steps = trainer.steps();
  // Each step's time is the slowest rank's (one all-reduce for them all, after the run).
  std::vector<double> step_seconds;
  for (const StepRecord& r : report.steps) step_seconds.push_back(r.seconds);
  if (!step_seconds.empty()) {  // the same count on every rank (SimGrid fails on a zero count)
    MPI_Allreduce(MPI_IN_PLACE, step_seconds.data(), static_cast<int>(step_seconds.size()),
                  MPI_DOUBLE, MPI_MAX, world.raw());
  }
  for (size_t i = 0; i < step_seconds.size(); ++i) report.steps[i].seconds = step_seconds[i];
  report.last_checkpoint = trainer.last_checkpoint();

  const bool stepped = all_ranks(world, !last.empty());
  // Each node's seconds: forward and backward of every node in one vector, reduced twice.
  std::vector<double> seconds_max, seconds_sum;
  if (stepped) {
    for (const DistNet::NodeSeconds& s : last_seconds) seconds_max.insert(seconds_max.end(), {s.forward, s.backward});
    seconds_sum = seconds_max;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, seconds_max.data(), static_cast<int>(seconds_max.size()), MPI_DOUBLE,
                            MPI_MAX, world.raw()),
              "MPI_Allreduce");
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, seconds_sum.data(), static_cast<int>(seconds_sum.size()), MPI_DOUBLE,
                            MPI_SUM, world.raw()),
              "MPI_Allreduce");
  }
  const double ranks = static_cast<double>(world.size());
  for (size_t i = 0; stepped && i < dnet.nodes().size(); ++i) {
    const TrainLayer& l = *dnet.nodes()[i].layer;
    NodeStepReport n{l.name(), std::string(l.kind()), {}, {}, {}, {}, true, {}, {}};
    const LayerWords mo = l.modelled_words(), me = l.modelled_edge_words();
    const DistNet::NodeWords& w = last[i];
    n.measured = {max_over_ranks(world, w.own.forward), max_over_ranks(world, w.own.backward)};
    n.measured_edge = {max_over_ranks(world, w.edge.forward),
                       max_over_ranks(world, w.edge.backward)};
    n.modelled = {max_over_ranks(world, mo.forward), max_over_ranks(world, mo.backward)};
    n.modelled_edge = {max_over_ranks(world, me.forward), max_over_ranks(world, me.backward)};
    n.equal_on_every_rank =
        all_ranks(world, w.own.forward == mo.forward && w.own.backward == mo.backward &&
                             w.edge.forward == me.forward && w.edge.backward == me.backward);
    n.seconds_max = {seconds_max[2 * i], seconds_max[2 * i + 1]};
    n.seconds_mean = {seconds_sum[2 * i] / ranks, seconds_sum[2 * i + 1] / ranks};
    report.nodes.push_back(n);
  }
  const int64_t tracked = MemoryTracker::peak_bytes();
  report.tracked_bytes_by_rank = gather_to_root(world, tracked);
  report.modelled_bytes_by_rank = gather_to_root(world, modelled.total());
  report.peak_bytes = max_over_ranks(world, tracked);
  report.data_bytes = max_over_ranks(world, std::max(train->image_bytes(), test->image_bytes()));
  return report;
}

}  // namespace convgrid
