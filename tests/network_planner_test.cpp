// The network planner: its dynamic programme finds the cheapest assignment of candidate grids
// (checked against enumerating every assignment, with each edge's words recomputed rank by
// rank), and the targets of the planner issue on ResNet-50 at batch 256.
#include "plan/network_planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "model/gate_spread.hpp"
#include "model/redistribution.hpp"
#include "nn/builtin_networks.hpp"
#include "nn/network_json.hpp"
#include "join_network.hpp"
#include "throws_input_error.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

NetworkPlanOptions forward_options(int64_t procs, int64_t batch) {
  NetworkPlanOptions o;
  o.layer.procs = procs;
  o.layer.profile = load_profile("ib100-cpu");
  o.batch = batch;
  return o;
}

// A chain with a stride-2 layer, a pooling layer, a residual add and a flatten into fc.
const char* kSmallNetwork = R"({"name": "small", "input": {"C": 3, "H": 12, "W": 12}, "layers": [
  {"type": "conv", "name": "c1", "K": 8, "R": 3, "S": 3, "pad": 1},
  {"type": "relu", "name": "r1"},
  {"type": "conv", "name": "c2", "K": 8, "R": 3, "S": 3, "pad": 1},
  {"type": "relu", "name": "r2", "residual": "r1"},
  {"type": "max_pool", "name": "p1", "window": 2},
  {"type": "conv", "name": "c3", "K": 6, "R": 3, "S": 3, "stride": 2, "pad": 1},
  {"type": "flatten"},
  {"type": "fc", "name": "fc", "K": 5},
  {"type": "softmax_xent"}]})";

// Words of one edge between two grids, recomputed rank by rank from the placements.
int64_t edge_words(const Placement& from, const Placement& to, bool backward) {
  int64_t largest = 0;
  for (int64_t r = 0; r < from.dims().size(); ++r) {
    const Slice a = from.slice(r), b = to.slice(r);
    const int64_t both = slice_overlap(a, from.tensor(), b, to.tensor());
    largest = std::max(largest, (backward ? a.size() : b.size()) - both);
  }
  return largest;
}

// Enumerates every assignment of the layers' grids in `grids` (per compute layer) and returns
// the smallest total words.
// The options of the tests that compare the programme with enumeration: batch 4 on P ranks, the
// forward pass or the training step, `candidates` grids a layer.
NetworkPlanOptions enumerable_options(int64_t P, bool train, int candidates) {
  NetworkPlanOptions o = forward_options(P, 4);
  if (train) o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  o.candidates = candidates;
  return o;
}

int64_t brute_force_words(const Network& net, const NetworkPlanOptions& o, bool train,
                          const std::vector<std::vector<LayerPlan>>& grids) {
  const std::vector<ComputeLayer> compute = net.compute_layers();
  std::vector<ConvShape> shapes;
  for (const ComputeLayer& c : compute) shapes.push_back(conv_shape(net.layers()[c.layer], o.batch));
  const auto compute_index = [&](size_t layer) {
    for (size_t i = 0; i < compute.size(); ++i) {
      if (compute[i].layer == layer) return i;
    }
    throw Error("not a compute layer");
  };
  // Each edge: from, to, what it goes into, where it comes from (pooled, joined by a concat), and
  // for a concat's operand the concat's output and the operand's channels in it; for a scale's
  // gate, the scale's input as it leaves `to`.
  enum class Into { input, output, concat, gate };
  struct E {
    size_t from, to;
    Into into;
    Activation pooled;
    bool joined = false;
    Activation concat{};
    int64_t offset = 0, channels = 0;
    Activation main{};
  };
  std::vector<E> edges;
  for (size_t i = 0; i < compute.size(); ++i) {
    const ActivationSource s = net.input_source(compute[i].layer);
    if (s.layer) edges.push_back({compute_index(*s.layer), i, Into::input, s.pooled, s.joined});
  }
  for (size_t q = 0; q < net.layers().size(); ++q) {
    const Layer& layer = net.layers()[q];
    if (!layer.residual.empty()) {
      edges.push_back({compute_index(*net.residual_source(q).layer),
                       compute_index(*net.input_source(q).layer), Into::output, net.residual_source(q).pooled});
    }
    if (layer.kind == LayerKind::scale) {
      const ActivationSource gate = net.gate_source(q), main = net.input_source(q);
      edges.push_back({compute_index(*gate.layer), compute_index(*main.layer), Into::gate, gate.pooled, false, {}, 0, 0,
                       main.pooled});
    }
    if (layer.kind != LayerKind::concat) continue;
    const size_t root = compute_index(*net.concat_source(q, 0).layer);
    int64_t offset = 0;
    for (size_t j = 0; j <= layer.concat_inputs.size(); ++j) {
      const ActivationSource s = net.concat_source(q, j);
      const int64_t channels = j == 0 ? layer.in.C : net.layers()[*net.find(layer.concat_inputs[j - 1])].out.C;
      edges.push_back({compute_index(*s.layer), root, Into::concat, s.pooled, s.joined, layer.out, offset, channels});
      offset += channels;
    }
  }
  const auto joined = [&](const GridDims& g, const Activation& a) {
    return Placement::joined(g, Box4{{Range{0, o.batch}, Range{0, a.C}, Range{0, a.H}, Range{0, a.W}}});
  };
  std::vector<size_t> pick(compute.size(), 0);
  int64_t best = std::numeric_limits<int64_t>::max();
  std::function<void(size_t)> visit = [&](size_t i) {
    if (i == compute.size()) {
      int64_t total = 0;
      for (size_t l = 0; l < compute.size(); ++l) total += grids[l][pick[l]].words();
      for (const E& e : edges) {
        const LayerLayout a(shapes[e.from], grids[e.from][pick[e.from]].grid);
        const LayerLayout b(shapes[e.to], grids[e.to][pick[e.to]].grid);
        const Placement from = e.joined ? joined(a.dims(), e.pooled)
                                        : Placement::pooled_output_of(a, e.pooled.H, e.pooled.W);
        if (e.into == Into::gate) {  // every rank's words, counted one pair of ranks at a time
          const Placement main = Placement::pooled_output_of(b, e.main.H, e.main.W);
          for (bool back : {false, true}) {
            if (back && !train) continue;
            int64_t most = 0;
            for (int64_t r = 0; r < main.dims().size(); ++r) {
              const Slice held = from.slice(r), wanted = gate_wanted(main, r);
              const Box4 t = from.tensor();
              int64_t w = back ? 0 : wanted.size() - slice_overlap(wanted, t, held, t);
              for (int64_t q = 0; back && q < main.dims().size(); ++q) {
                if (q != r) w += slice_overlap(held, t, gate_wanted(main, q), t);
              }
              most = std::max(most, w);
            }
            total += most;
          }
          continue;
        }
        const Placement to = e.into == Into::output ? Placement::output_of(b)
                             : e.into == Into::input ? Placement::input_of(b)
                                                     : joined(b.dims(), e.concat).window(e.offset, e.channels);
        total += edge_words(from, to, false) + (train ? edge_words(from, to, true) : 0);
      }
      best = std::min(best, total);
      return;
    }
    for (pick[i] = 0; pick[i] < grids[i].size(); ++pick[i]) visit(i + 1);
  };
  visit(0);
  return best;
}

// The same over every grid that fits each layer (the first, which reads the network's input,
// without backward-data).
int64_t brute_force_words(const Network& net, const NetworkPlanOptions& o, bool train) {
  std::vector<std::vector<LayerPlan>> grids;
  for (const ComputeLayer& c : net.compute_layers()) {
    PlanOptions own = o.layer;
    if (!c.source) own.passes.erase(std::remove(own.passes.begin(), own.passes.end(), Pass::backward_data), own.passes.end());
    grids.push_back(best_layer_plans(conv_shape(net.layers()[c.layer], o.batch), own, 1000));
  }
  return brute_force_words(net, o, train, grids);
}

// Training plans the first layer, which reads the network's input, without backward-data (no
// gradient of the data is wanted, and DistNet does not run it); every other layer runs all three
// passes, and a forward plan only the forward pass.
TEST(NetworkPlanner, TheFirstLayerHasNoBackwardDataPass) {
  const Network net = network_from_json(kSmallNetwork, "small");
  NetworkPlanOptions o = forward_options(4, 4);
  o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  const NetworkPlan plan = plan_network(net, o);
  ASSERT_GE(plan.layers.size(), 2u);
  EXPECT_EQ(plan.layers[0].plan.pass_list(), (std::vector<Pass>{Pass::forward, Pass::backward_weights}));
  for (size_t i = 1; i < plan.layers.size(); ++i) EXPECT_EQ(plan.layers[i].plan.pass_list(), o.layer.passes);
  if (plan.layers[0].data_parallel) {
    EXPECT_EQ(plan.layers[0].data_parallel->pass_list(), plan.layers[0].plan.pass_list());
  }
  const NetworkPlan forward = plan_network(net, forward_options(4, 4));
  for (const NetworkLayerPlan& l : forward.layers) EXPECT_EQ(l.plan.pass_list(), std::vector<Pass>{Pass::forward});
}

TEST(NetworkPlanner, DynamicProgrammeEqualsEnumeration) {
  const Network net = network_from_json(kSmallNetwork, "small");
  for (int64_t P : {2, 4}) {
    for (bool train : {false, true}) {
      SCOPED_TRACE(fmt::format("P={} {}", P, train ? "train" : "fwd"));
      const NetworkPlanOptions o = enumerable_options(P, train, 1000);
      const NetworkPlan plan = plan_network(net, o);
      EXPECT_EQ(plan.words(), brute_force_words(net, o, train));
      ASSERT_EQ(plan.layers.size(), 4u);
      EXPECT_EQ(plan.layers[1].edges_in.size(), 2u) << "c2 has its input and the shortcut";
    }
  }
}

TEST(NetworkPlanner, ConcatOperandsAreEdgesAndTheProgrammeEqualsEnumeration) {
  // The joins with a classifier: each operand is an edge into the concat's joined placement on
  // its first operand's grid (b1's, for both concats).
  const Network net = network_from_json(
      test_data::join_network_json(R"({"type": "flatten"}, {"type": "fc", "name": "fc", "K": 5}, {"type": "softmax_xent"})"),
      "joins");
  for (int64_t P : {2, 4}) {
    for (bool train : {false, true}) {
      SCOPED_TRACE(fmt::format("P={} {}", P, train ? "train" : "fwd"));
      const NetworkPlanOptions o = enumerable_options(P, train, P == 2 ? 1000 : 3);
      const NetworkPlan plan = plan_network(net, o);
      std::vector<std::vector<LayerPlan>> grids;
      for (size_t i = 0; i < plan.layers.size(); ++i) grids.push_back(layer_candidates(net, o, i));
      // b1 places both concats: it also takes the grids of the layers it shares an edge with
      // (all the others), as grouped layers do.
      const ConvShape b1 = conv_shape(net.layers()[1], o.batch);
      std::vector<LayerPlan> widened = grids[1];
      for (size_t neighbour : {0, 2, 3, 4}) {
        for (const LayerPlan& p : grids[neighbour]) {
          const bool listed = std::any_of(widened.begin(), widened.end(),
                                          [&](const LayerPlan& q) { return q.grid == p.grid; });
          if (!listed && p.grid.fits(b1)) widened.push_back(evaluate_grid(b1, p.grid, o.layer));
        }
      }
      grids[1] = widened;
      EXPECT_EQ(plan.words(), brute_force_words(net, o, train, grids));
      ASSERT_EQ(plan.layers.size(), 5u);
      // b1 (the concats' first operand's layer) takes both concats' operands: 3 + 3.
      int64_t operands = 0;
      for (const EdgeFigures& e : plan.layers[1].edges_in) operands += !e.concat.empty();
      EXPECT_EQ(operands, 6);
    }
  }
  // A concat of the network input (through a relu) has no grid to join in.
  const Network input_join = network_from_json(R"({"name": "j", "input": {"C": 3, "H": 4, "W": 4}, "layers": [
      {"type": "relu", "name": "r"}, {"type": "conv", "name": "c", "K": 2, "R": 1, "S": 1},
      {"type": "concat", "name": "x", "input": "r", "concat_inputs": ["c"]}]})", "j");
  EXPECT_TRUE(throws_input_error([&] { plan_network(input_join, forward_options(2, 4)); },
                                 {"concat 'x': its operand 'r' comes from the network input, not from a "
                                  "convolution or fully connected layer"}));
}

// A squeeze-and-excitation block between two convolutions: c1's activation scaled by the sigmoid of
// two 1x1 convolutions of its pooling, then c2. The gate's move is an edge from `expand` (after c1)
// into c1, exact both ways, and the programme with it equals enumerating every assignment.
TEST(NetworkPlanner, GatesAreEdgesAndTheProgrammeEqualsEnumeration) {
  const Network net = network_from_json(R"({"name": "se", "input": {"C": 2, "H": 4, "W": 4}, "layers": [
      {"type": "conv", "name": "c1", "K": 4, "R": 3, "S": 3, "pad": 1}, {"type": "relu", "name": "r1"},
      {"type": "global_avg_pool", "name": "squeezed"}, {"type": "conv", "name": "reduce", "K": 2, "R": 1, "S": 1},
      {"type": "relu"}, {"type": "conv", "name": "expand", "K": 4, "R": 1, "S": 1}, {"type": "sigmoid", "name": "gate"},
      {"type": "scale", "name": "scaled", "input": "r1", "gate": "gate"},
      {"type": "conv", "name": "c2", "K": 4, "R": 3, "S": 3, "pad": 1}]})", "se");
  for (int64_t P : {2, 4}) {
    for (bool train : {false, true}) {
      SCOPED_TRACE(fmt::format("P={} {}", P, train ? "train" : "fwd"));
      const NetworkPlanOptions o = enumerable_options(P, train, 1000);
      const NetworkPlan plan = plan_network(net, o);
      EXPECT_EQ(plan.words(), brute_force_words(net, o, train));
      ASSERT_EQ(plan.layers.size(), 4u);
      const auto gates = std::count_if(plan.layers[0].edges_in.begin(), plan.layers[0].edges_in.end(),
                                       [](const EdgeFigures& e) { return e.gate; });
      EXPECT_EQ(gates, 1) << "c1 takes the gate's edge";
      EXPECT_EQ(plan.layers[3].edges_in.size(), 1u) << "c2 reads the scaled activation where c1 wrote it";
    }
  }
  // A flattened activation is not scaled: the gate's channels would be its features.
  const Network flat = network_from_json(R"({"name": "f", "input": {"C": 2, "H": 4, "W": 4}, "layers": [
      {"type": "conv", "name": "c", "K": 2, "R": 3, "S": 3, "pad": 1}, {"type": "flatten", "name": "f"},
      {"type": "fc", "name": "g", "K": 32}, {"type": "scale", "name": "s", "input": "f", "gate": "g"},
      {"type": "fc", "name": "out", "K": 10}]})", "f");
  EXPECT_TRUE(throws_input_error([&] { plan_network(flat, forward_options(2, 4)); },
                                 {"scale 's': its input 32x1x1 is a flattened activation (2x4x4 before), which "
                                  "convgrid does not scale"}));
}

// A MobileNet-V2 block: 1x1 expansion, depthwise 3x3, 1x1 projection, ReLU6 between.
const char* kMobileBlock = R"({"name": "mobile", "input": {"C": 8, "H": 16, "W": 16}, "layers": [
  {"type": "conv", "name": "expand", "K": 32, "R": 1, "S": 1}, {"type": "relu6", "name": "a1"},
  {"type": "conv", "name": "depthwise", "K": 32, "R": 3, "S": 3, "pad": 1, "groups": 32},
  {"type": "relu6", "name": "a2"}, {"type": "conv", "name": "project", "K": 8, "R": 1, "S": 1}]})";

// A depthwise layer's own best grids split channels, where it moves next to nothing, but its 1x1
// neighbours prefer other grids, and moving the activation between them can cost more than both
// layers. Its candidates therefore include its neighbours': the plan is the best assignment of
// the expansion's and the projection's own candidates and the depthwise layer's own and theirs
// (enumerated), and here the depthwise layer takes one of theirs.
TEST(NetworkPlanner, GroupedLayersMayTakeTheirNeighboursGrids) {
  const Network net = network_from_json(kMobileBlock, "mobile");
  NetworkPlanOptions o = forward_options(64, 16);
  o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  const NetworkPlan plan = plan_network(net, o);
  std::vector<std::vector<LayerPlan>> grids = {layer_candidates(net, o, 0), layer_candidates(net, o, 1),
                                               layer_candidates(net, o, 2)};
  const std::vector<LayerPlan> own_depthwise = grids[1];
  const ConvShape depthwise = conv_shape(net.layers()[2], o.batch);
  for (size_t neighbour : {0, 2}) {
    for (const LayerPlan& p : grids[neighbour]) {
      if (p.grid.fits(depthwise)) grids[1].push_back(evaluate_grid(depthwise, p.grid, o.layer));
    }
  }
  EXPECT_EQ(plan.words(), brute_force_words(net, o, true, grids));
  const GridDims chosen = plan.layers[1].plan.grid;
  EXPECT_TRUE(std::none_of(own_depthwise.begin(), own_depthwise.end(),
                           [&](const LayerPlan& p) { return p.grid == chosen; }))
      << chosen.to_string() << " is among the depthwise layer's own candidates";
  // Restricted to its own candidates it would move more.
  std::vector<std::vector<LayerPlan>> own = grids;
  own[1] = own_depthwise;
  EXPECT_LT(plan.words(), brute_force_words(net, o, true, own));
}

TEST(NetworkPlanner, ReportedEdgesAreTheirRedistributions) {
  const Network net = network_from_json(kSmallNetwork, "small");
  const NetworkPlan plan = plan_network(net, forward_options(4, 4));
  int64_t sum = 0;
  for (const NetworkLayerPlan& l : plan.layers) {
    for (const EdgeFigures& e : l.edges_in) {
      EXPECT_GE(e.words_max, e.words_mean);
      sum += e.words_max;
    }
  }
  EXPECT_EQ(plan.redistribution_words(), sum);
  EXPECT_EQ(plan.words(), plan.layer_words() + sum);
}

TEST(NetworkPlanner, OneRankMovesNothing) {
  const NetworkPlan plan = plan_network(builtin_network("resnet50"), forward_options(1, 8));
  EXPECT_EQ(plan.words(), 0);
  ASSERT_TRUE(plan.data_parallel_words());
  EXPECT_EQ(*plan.data_parallel_words(), 0);
}

TEST(NetworkPlanner, FamiliesKeepToTheirGridsOrFallBack) {
  const Network net = builtin_network("resnet50");
  for (GridFamily f : {GridFamily::data_parallel, GridFamily::batch_spatial, GridFamily::channel_filter}) {
    // Data parallelism on 32 ranks (N = 32); the others on 64.
    NetworkPlanOptions o = forward_options(f == GridFamily::data_parallel ? 32 : 64, 32);
    o.family = f;
    const NetworkPlan plan = plan_network(net, o);
    for (const NetworkLayerPlan& l : plan.layers) {
      const GridDims& g = l.plan.grid;
      SCOPED_TRACE(fmt::format("{} {} {}", to_string(f), l.name, g.to_string()));
      if (l.fallback) continue;
      if (f == GridFamily::data_parallel) {
        EXPECT_EQ(g.Pn, 32);
      } else if (f == GridFamily::batch_spatial) {
        EXPECT_TRUE(g.Pk == 1 && g.Pc == 1);
      } else {
        EXPECT_TRUE(g.Pn == 1 && g.Ph == 1 && g.Pw == 1);
      }
    }
    // fc1000 is 1x1 at N = 32 < 64: no batch x spatial grid of 64 fits it, while Pk = 64 does
    // (1000 filters); conv1's 64 filters take Pk = 64 too. Pn = 32 fits every layer.
    EXPECT_EQ(plan.layers.back().fallback, f == GridFamily::batch_spatial);
    EXPECT_FALSE(plan.layers.front().fallback);
  }
}

TEST(NetworkPlanner, AFamilyThatFitsNoLayerIsRefused) {
  // Data parallelism on 64 ranks at batch 32 would fall back on every layer: not a plan of the
  // family at all.
  const Network net = builtin_network("resnet50");
  NetworkPlanOptions o = forward_options(64, 32);
  o.family = GridFamily::data_parallel;
  EXPECT_TRUE(throws_input_error([&] { plan_network(net, o); },
                                 {"no data_parallel grid of 64 ranks fits any layer", "resnet50", "batch 32", "P <= batch"}));
}

TEST(NetworkPlanner, ErrorsNameTheLayer) {
  const Network net = builtin_network("resnet50");
  NetworkPlanOptions o = forward_options(4, 8);
  o.layer.mem_per_rank_bytes = 1024;
  EXPECT_TRUE(throws_input_error([&] { plan_network(net, o); }, {"layer 'conv1'", "smallest limit"}));
  // The limit the message gives works for every layer, and one byte less does not.
  int64_t needed = 0;
  try {
    plan_network(net, o);
  } catch (const InputError& e) {
    const std::string m = e.what();
    const size_t open = m.rfind('('), space = m.find(' ', open);
    needed = std::stoll(m.substr(open + 1, space - open - 1));
  }
  o.layer.mem_per_rank_bytes = needed;
  const NetworkPlan plan = plan_network(net, o);
  EXPECT_EQ(plan.memory_bytes(), needed) << "the limit is the largest layer's smallest need";
  o.layer.mem_per_rank_bytes = needed - 1;
  EXPECT_THROW(plan_network(net, o), InputError);
  EXPECT_TRUE(throws_input_error([&] { plan_network(net, forward_options(0, 8)); }, {"--procs 0"}));
}

// Issue #4 targets on ResNet-50 at batch 256, forward.

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Ratios words / bound over the layers whose bound is at least half the plan's words.
std::vector<double> tight_ratios(const std::vector<LayerPlan>& plans) {
  std::vector<double> r;
  for (const LayerPlan& p : plans) {
    const double bound = p.passes.front().lower_bound_words;
    const double words = static_cast<double>(p.words());
    if (bound >= 0.5 * words && words > 0) r.push_back(words / bound);
  }
  return r;
}

TEST(NetworkPlannerTargets, Resnet50LayersAreCloseToTheBound) {
  const Network net = builtin_network("resnet50");
  for (int64_t P : {512, 4096}) {
    const NetworkPlanOptions o = forward_options(P, 256);
    std::vector<LayerPlan> layer_plans;
    for (const ComputeLayer& c : net.compute_layers()) {
      layer_plans.push_back(plan_layer(conv_shape(net.layers()[c.layer], 256), o.layer));
    }
    const std::vector<LayerPlan> network_plans = plan_network(net, o).layer_plans();
    for (const auto& [what, plans] : {std::pair{"layer by layer", layer_plans}, std::pair{"network", network_plans}}) {
      const std::vector<double> r = tight_ratios(plans);
      SCOPED_TRACE(fmt::format("P={} {}: {} layers, median {:.3f}, max {:.3f}", P, what, r.size(),
                               r.empty() ? 0 : median(r), r.empty() ? 0 : *std::max_element(r.begin(), r.end())));
      ASSERT_GE(r.size(), 10u);
      EXPECT_LE(median(r), 1.10);
      // conv1 (7x7 on 3 channels) at P = 4096 is 1.81: its outputs' sums are 147 long, and that
      // floor raised its bound into the layers counted here (before, it was under half the words).
      EXPECT_LE(*std::max_element(r.begin(), r.end()), 1.85);
    }
  }
}

TEST(NetworkPlannerTargets, Resnet50BeatsDataParallelismAtP256) {
  const NetworkPlan plan = plan_network(builtin_network("resnet50"), forward_options(256, 256));
  ASSERT_TRUE(plan.data_parallel_words());
  const double gain = static_cast<double>(*plan.data_parallel_words()) / plan.words();
  RecordProperty("gain", fmt::format("{:.3f}", gain));
  EXPECT_GE(gain, 2.5) << plan.words() << " words against " << *plan.data_parallel_words();
}

TEST(NetworkPlannerTargets, Resnet50BeatsTheBestHybridBeyondTheBatch) {
  const Network net = builtin_network("resnet50");
  NetworkPlanOptions o = forward_options(1024, 256);
  const NetworkPlan plan = plan_network(net, o);
  o.family = GridFamily::batch_spatial;
  const NetworkPlan hybrid = plan_network(net, o);
  const double gain = static_cast<double>(hybrid.words()) / plan.words();
  EXPECT_GE(gain, 4.0) << plan.words() << " words against " << hybrid.words();
}

}  // namespace
}  // namespace convgrid
