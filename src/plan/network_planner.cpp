// Dynamic programming over a network's compute layers (see network_planner.hpp).
#include "plan/network_planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "convgrid/error.hpp"
#include "model/batch_norm_volume.hpp"
#include "model/gate_spread.hpp"
#include "model/pass_cost.hpp"
#include "model/redistribution.hpp"

namespace convgrid {
namespace {

bool in_family(GridFamily family, const GridDims& g, int64_t procs) {
  switch (family) {
    case GridFamily::any: return true;
    case GridFamily::data_parallel: return g.Pn == procs;
    case GridFamily::batch_spatial: return g.Pk == 1 && g.Pc == 1;
    case GridFamily::channel_filter: return g.Pn == 1 && g.Ph == 1 && g.Pw == 1;
  }
  return false;
}

bool has_backward(const PlanOptions& o) {
  return std::find(o.passes.begin(), o.passes.end(), Pass::backward_data) != o.passes.end();
}

// One redistribution: `from`'s output (pooled to `pooled`, maybe joined by a concat on the way:
// ActivationSource) into `to`'s input; for the shortcut of a residual add, into `to`'s output;
// for an operand of a concat, into its channels of the concat's joined placement on `to`'s grid
// (`to` wrote the concat's first operand); for the gate of a scale, into every rank's samples and
// channels of the scale's input, which lies where `to` put it (`main_pooled`, `main_joined`;
// model/gate_spread.hpp). Indices are into the compute layers; the programme pays for it at
// layer max(from, to), when both grids are known.
struct Edge {
  enum class Into { input, output, concat, gate };
  size_t from = 0, to = 0;
  Into into = Into::input;
  Activation pooled{};
  bool joined = false;
  // concat only: the concat's output, and the operand's channels in it
  Activation concat{};
  int64_t offset = 0, channels = 0;
  std::string concat_name{};
  // gate only: the scale's input as it leaves `to`
  Activation main_pooled{};
  bool main_joined = false;
  size_t at() const { return std::max(from, to); }
};

// Where an activation from a compute layer on `layout` lies (ActivationSource).
Placement held(const LayerLayout& layout, const Activation& pooled, bool joined) {
  if (!joined) return Placement::pooled_output_of(layout, pooled.H, pooled.W);
  const int64_t N = layout.shape().N;
  return Placement::joined(layout.dims(), Box4{{Range{0, N}, Range{0, pooled.C}, Range{0, pooled.H}, Range{0, pooled.W}}});
}

// Words and modelled time of an edge between two grids, cached by what they depend on (the
// repeated blocks of a ResNet share their entries).
class EdgeCosts {
 public:
  explicit EdgeCosts(const PlanOptions& o) : o_(o) {}

  const EdgeFigures& figures(const Edge& e, const ConvShape& a, const GridDims& ga,
                             const ConvShape& b, const GridDims& gb) {
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", a.to_string(), ga.to_string(),
                                        e.pooled.to_string(), e.joined, static_cast<int>(e.into),
                                        e.concat.to_string(), e.offset, e.channels, b.to_string(), gb.to_string(),
                                        e.main_pooled.to_string(), e.main_joined);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const LayerLayout la(a, ga), lb(b, gb);
    const Placement from = held(la, e.pooled, e.joined);
    const RedistributionFigures r = e.into == Edge::Into::gate
                                        ? gate_figures(from, held(lb, e.main_pooled, e.main_joined))
                                        : redistribution_figures(from, to_placement(e, lb), o_.profile.node.ranks);
    EdgeFigures f;
    f.residual = e.into == Edge::Into::output;
    f.gate = e.into == Edge::Into::gate;
    f.concat = e.concat_name;
    const auto add = [&](const RedistributionStats& s) {
      f.words_max += s.max_words;
      f.words_mean += s.mean_words;
      // all_to_all_v posts every non-empty message at once: one round (max_load).
      f.time_s += pass_time(o_.profile, s.max_load, 0);
    };
    add(r.forward);
    if (has_backward(o_)) add(r.backward);
    return cache_.emplace(key, f).first->second;
  }

  static Placement to_placement(const Edge& e, const LayerLayout& lb) {
    if (e.into == Edge::Into::output) return Placement::output_of(lb);
    if (e.into == Edge::Into::input) return Placement::input_of(lb);
    return held(lb, e.concat, true).window(e.offset, e.channels);
  }

  double objective(const EdgeFigures& f) const {
    return o_.objective == Objective::volume ? static_cast<double>(f.words_max) : f.time_s;
  }

 private:
  const PlanOptions& o_;
  std::unordered_map<std::string, EdgeFigures> cache_;
};

// A layer's candidate grids, best first, and whether its family had none.
struct Candidates {
  std::vector<LayerPlan> plans;
  bool fallback = false;
};

}  // namespace

GridFilter family_filter(GridFamily family, const ConvShape& shape, int64_t procs, bool& fallback) {
  fallback = false;
  if (family == GridFamily::any) return {};
  const std::vector<GridDims> grids = all_grids(procs);
  fallback = std::none_of(grids.begin(), grids.end(), [&](const GridDims& g) {
    return g.fits(shape) && in_family(family, g, procs);
  });
  if (fallback) return {};
  return [family, procs](const GridDims& g) { return in_family(family, g, procs); };
}

namespace {

Candidates candidates_for(const std::string& name, const ConvShape& shape,
                          const NetworkPlanOptions& no) {
  const PlanOptions& o = no.layer;
  const int64_t procs = o.procs;
  Candidates c;
  const GridFilter allowed = family_filter(no.family, shape, procs, c.fallback);
  try {
    c.plans = best_layer_plans(shape, o, static_cast<size_t>(std::max(1, no.candidates)), allowed);
    // Data parallelism moves no activation between layers: always a candidate when allowed.
    const GridDims dp{procs, 1, 1, 1, 1};
    const bool listed = std::any_of(c.plans.begin(), c.plans.end(),
                                    [&](const LayerPlan& p) { return p.grid == dp; });
    if (!listed && dp.fits(shape) && (!allowed || allowed(dp))) {
      LayerPlan p = evaluate_grid(shape, dp, o);
      if (!o.mem_per_rank_bytes || p.memory_bytes <= *o.mem_per_rank_bytes) c.plans.push_back(p);
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("layer '{}': {}", name, e.what()));
  }
  return c;
}

// The error for a memory limit some layer cannot meet: it names the first such layer and the
// smallest limit under which every layer has a grid (the largest of the layers' smallest needs).
[[noreturn]] void throw_memory_error(const Network& net, const std::vector<ComputeLayer>& compute,
                                     const std::vector<ConvShape>& shapes, const NetworkPlanOptions& no,
                                     size_t failed) {
  PlanOptions unlimited = no.layer;
  unlimited.mem_per_rank_bytes.reset();
  int64_t needed = 0;
  for (size_t i = 0; i < compute.size(); ++i) {
    bool fallback = false;
    const GridFilter allowed = family_filter(no.family, shapes[i], no.layer.procs, fallback);
    PlanOptions own = unlimited;
    own.passes = passes_in_network(compute[i], no.layer.passes);
    needed = std::max(needed, smallest_memory_bytes(shapes[i], own, allowed));
  }
  throw InputError(fmt::format(
      "layer '{}' ({}) fits under no grid of {} ranks in {} per rank; the smallest limit that "
      "works for the whole network is {} ({} bytes)",
      net.layers()[compute[failed].layer].name, shapes[failed].to_string(), no.layer.procs,
      format_bytes(*no.layer.mem_per_rank_bytes), format_bytes(needed), needed));
}

}  // namespace

struct CandidateCache {
  std::map<std::pair<size_t, int64_t>, Candidates> entries;  // (compute layer, limit; -1: none)
};

std::shared_ptr<CandidateCache> make_candidate_cache() { return std::make_shared<CandidateCache>(); }

std::vector<Pass> passes_in_network(const ComputeLayer& c, const std::vector<Pass>& passes) {
  if (c.source) return passes;
  std::vector<Pass> own;
  std::copy_if(passes.begin(), passes.end(), std::back_inserter(own), [](Pass p) { return p != Pass::backward_data; });
  return own;
}

namespace {

// Layer i's memory limit: its own (layer_limits[i]) when it has one, else the common one.
std::optional<int64_t> layer_limit(const NetworkPlanOptions& no, size_t i) {
  if (i < no.layer_limits.size() && no.layer_limits[i] > 0) return no.layer_limits[i];
  return no.layer.mem_per_rank_bytes;
}

// The options of layer i alone: its limit in place of the common one, and its passes.
NetworkPlanOptions layer_options(const ComputeLayer& c, const NetworkPlanOptions& no, size_t i) {
  NetworkPlanOptions own = no;
  own.layer.mem_per_rank_bytes = layer_limit(no, i);
  own.layer.passes = passes_in_network(c, no.layer.passes);
  return own;
}

// Layer i's candidates under its own limit, from the cache when there is one. InputError (not
// cached) when no grid fits.
const Candidates& candidates_of(const Network& net, const ComputeLayer& c, const ConvShape& shape,
                                const NetworkPlanOptions& no, size_t i, Candidates& scratch) {
  const auto compute = [&] { return candidates_for(net.layers()[c.layer].name, shape, layer_options(c, no, i)); };
  if (!no.cache) return scratch = compute();
  const std::pair<size_t, int64_t> key{i, layer_limit(no, i).value_or(-1)};
  auto it = no.cache->entries.find(key);
  if (it == no.cache->entries.end()) it = no.cache->entries.emplace(key, compute()).first;
  return it->second;
}

// A grouped layer's own best grids are seldom its neighbours': a depthwise layer moves next to
// nothing on a channel split, while the 1x1 layers around it prefer samples and pixels, and
// moving the activation between the two can cost far more than either layer. So a grouped
// layer's candidates also take the grids its neighbours' candidates list (where they fit, are in
// the family and under the limit), which lets the search keep one grid across them. The same
// holds for a layer that writes a concat's first operand: its grid places the whole concat, which
// every operand moves into and every reader reads (a DenseNet block's transition convolution
// places all of the block's concats), so it takes its neighbours' grids as well.
void add_neighbour_grids(std::vector<Candidates>& cand, const std::vector<Edge>& edges,
                         const std::vector<ComputeLayer>& compute, const std::vector<ConvShape>& shapes,
                         const NetworkPlanOptions& no) {
  const std::vector<Candidates> own = cand;  // the neighbours' own lists, not what they gain here
  std::vector<bool> widen(cand.size(), false);
  for (size_t i = 0; i < cand.size(); ++i) widen[i] = shapes[i].groups > 1;
  for (const Edge& e : edges) {
    if (e.into == Edge::Into::concat) widen[e.to] = true;
  }
  for (size_t i = 0; i < cand.size(); ++i) {
    if (!widen[i]) continue;
    const PlanOptions o = layer_options(compute[i], no, i).layer;
    bool fallback = false;
    const GridFilter allowed = family_filter(no.family, shapes[i], o.procs, fallback);
    std::vector<LayerPlan>& list = cand[i].plans;
    for (const Edge& e : edges) {
      if (e.from != i && e.to != i) continue;
      for (const LayerPlan& p : own[e.from == i ? e.to : e.from].plans) {
        const GridDims& g = p.grid;
        if (!g.fits(shapes[i]) || (allowed && !allowed(g))) continue;
        if (std::any_of(list.begin(), list.end(), [&](const LayerPlan& q) { return q.grid == g; })) continue;
        LayerPlan q = evaluate_grid(shapes[i], g, o);
        if (!o.mem_per_rank_bytes || q.memory_bytes <= *o.mem_per_rank_bytes) list.push_back(std::move(q));
      }
    }
  }
}

}  // namespace

std::vector<LayerPlan> layer_candidates(const Network& net, const NetworkPlanOptions& no, size_t index) {
  const std::vector<ComputeLayer> compute = net.compute_layers();
  if (index >= compute.size()) throw Error(fmt::format("compute layer {} of {}", index, compute.size()));
  Candidates scratch;
  const ConvShape shape = conv_shape(net.layers()[compute[index].layer], no.batch);
  return candidates_of(net, compute[index], shape, no, index, scratch).plans;
}

std::string_view to_string(GridFamily family) {
  switch (family) {
    case GridFamily::any: return "planner";
    case GridFamily::data_parallel: return "data_parallel";
    case GridFamily::batch_spatial: return "batch_spatial";
    case GridFamily::channel_filter: return "channel_filter";
  }
  return "unknown";
}

int64_t NetworkLayerPlan::redistribution_words() const {
  int64_t w = 0;
  for (const EdgeFigures& e : edges_in) w += e.words_max;
  return w;
}

double NetworkLayerPlan::redistribution_time_s() const {
  double t = 0;
  for (const EdgeFigures& e : edges_in) t += e.time_s;
  return t;
}

int64_t NetworkPlan::layer_words() const {
  int64_t w = 0;
  for (const NetworkLayerPlan& l : layers) w += l.plan.words();
  return w;
}

int64_t NetworkPlan::redistribution_words() const {
  int64_t w = 0;
  for (const NetworkLayerPlan& l : layers) w += l.redistribution_words();
  return w;
}

double NetworkPlan::time_s() const {
  double t = 0;
  for (const NetworkLayerPlan& l : layers) t += l.plan.time_s() + l.redistribution_time_s() + l.norm_time_s;
  return t;
}

int64_t NetworkPlan::norm_words() const {
  int64_t w = 0;
  for (const NetworkLayerPlan& l : layers) w += l.norm_words;
  return w;
}

double NetworkPlan::lower_bound_words() const {
  double w = 0;
  for (const NetworkLayerPlan& l : layers) {
    for (const PassFigures& f : l.plan.passes) w += f.lower_bound_words;
  }
  return w;
}

int64_t NetworkPlan::memory_bytes() const {
  int64_t m = 0;
  for (const NetworkLayerPlan& l : layers) m = std::max(m, l.plan.memory_bytes);
  return m;
}

std::vector<LayerPlan> NetworkPlan::layer_plans() const {
  std::vector<LayerPlan> out;
  for (const NetworkLayerPlan& l : layers) out.push_back(l.plan);
  return out;
}

std::optional<int64_t> NetworkPlan::data_parallel_words() const {
  int64_t w = 0;
  for (const NetworkLayerPlan& l : layers) {
    if (!l.data_parallel) return std::nullopt;
    w += l.data_parallel->words() + l.data_parallel_norm_words;
  }
  return w;
}

NetworkPlan plan_network(const Network& net, const NetworkPlanOptions& no) {
  const PlanOptions& o = no.layer;
  if (o.procs < 1) throw InputError(fmt::format("--procs {} must be at least 1", o.procs));
  const std::vector<ComputeLayer> compute = net.compute_layers();
  if (compute.empty()) throw InputError(fmt::format("network '{}' has no convolution or fully connected layer", net.name()));
  const size_t L = compute.size();
  std::vector<ConvShape> shapes;
  std::map<size_t, size_t> index_of;  // layers() index -> compute index
  for (size_t i = 0; i < L; ++i) {
    shapes.push_back(conv_shape(net.layers()[compute[i].layer], no.batch));
    index_of[compute[i].layer] = i;
  }
  // A family may fall back to every grid on some layers (NetworkLayerPlan::fallback), not on
  // all: that plan would not be of the family at all (data parallelism on more ranks than samples).
  if (no.family != GridFamily::any && std::all_of(shapes.begin(), shapes.end(), [&](const ConvShape& s) {
        bool fallback = false;
        family_filter(no.family, s, o.procs, fallback);
        return fallback;
      })) {
    throw InputError(fmt::format("no {} grid of {} ranks fits any layer of network '{}' at batch {}{}", to_string(no.family),
                                 o.procs, net.name(), no.batch,
                                 no.family == GridFamily::data_parallel ? " (data parallelism needs P <= batch)" : ""));
  }

  // The edges: each layer's input, each residual add's shortcut into the main path's output,
  // and each concat's operands into its joined placement.
  std::vector<Edge> edges;
  for (size_t i = 0; i < L; ++i) {
    const ActivationSource s = net.input_source(compute[i].layer);
    if (s.layer) edges.push_back({.from = index_of.at(*s.layer), .to = i, .pooled = s.pooled, .joined = s.joined});
  }
  for (size_t q = 0; q < net.layers().size(); ++q) {
    const Layer& layer = net.layers()[q];
    if (!layer.residual.empty()) {
      const ActivationSource main = net.input_source(q), shortcut = net.residual_source(q);
      if (!main.layer || !shortcut.layer || main.through_pool_or_flatten) continue;
      edges.push_back({.from = index_of.at(*shortcut.layer), .to = index_of.at(*main.layer),
                       .into = Edge::Into::output, .pooled = shortcut.pooled, .joined = shortcut.joined});
    }
    if (layer.kind == LayerKind::scale) {
      const ActivationSource main = net.input_source(q), gate = net.gate_source(q);
      if (!main.layer || !gate.layer) {
        throw InputError(fmt::format(
            "scale '{}': its {} comes from the network input, not from a convolution or fully connected layer",
            layer.name, main.layer ? "gate" : "input"));
      }
      if (main.pooled != layer.in) {  // a flatten on the way: the gate's channels are not the input's
        throw InputError(fmt::format("scale '{}': its input {} is a flattened activation ({} before), which "
                                     "convgrid does not scale",
                                     layer.name, layer.in.to_string(), main.pooled.to_string()));
      }
      edges.push_back({.from = index_of.at(*gate.layer), .to = index_of.at(*main.layer), .into = Edge::Into::gate,
                       .pooled = gate.pooled, .joined = gate.joined, .main_pooled = main.pooled,
                       .main_joined = main.joined});
    }
    if (layer.kind != LayerKind::concat) continue;
    const std::vector<int64_t> channels = net.concat_channels(q);
    int64_t offset = 0;
    size_t root = 0;
    for (size_t j = 0; j < channels.size(); ++j) {
      const ActivationSource s = net.concat_source(q, j);
      const std::string& operand = j == 0 ? net.layers()[*net.producer(q)].name : layer.concat_inputs[j - 1];
      if (!s.layer) {
        throw InputError(fmt::format(
            "concat '{}': its operand '{}' comes from the network input, not from a convolution "
            "or fully connected layer (a concat's operands lie where the layers that wrote them put them)",
            layer.name, j == 0 && !net.producer(q) ? std::string("input") : operand));
      }
      if (j == 0) root = index_of.at(*s.layer);
      edges.push_back({.from = index_of.at(*s.layer), .to = root, .into = Edge::Into::concat,
                       .pooled = s.pooled, .joined = s.joined, .concat = layer.out, .offset = offset,
                       .channels = channels[j], .concat_name = layer.name});
      offset += channels[j];
    }
  }

  // live[t]: the layers up to t that an edge paid for after t still needs.
  std::vector<std::vector<size_t>> live(L);
  for (const Edge& e : edges) {
    for (size_t t = std::min(e.from, e.to); t < e.at(); ++t) live[t].push_back(std::min(e.from, e.to));
  }
  for (auto& l : live) {
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
  }

  std::vector<Candidates> cand;
  for (size_t i = 0; i < L; ++i) {
    Candidates scratch;
    try {
      cand.push_back(candidates_of(net, compute[i], shapes[i], no, i, scratch));
    } catch (const InputError&) {
      // The error names the limit every layer fits under, each with its own passes.
      NetworkPlanOptions own = no;
      own.layer.mem_per_rank_bytes = layer_limit(no, i);
      if (!own.layer.mem_per_rank_bytes) throw;
      throw_memory_error(net, compute, shapes, own, i);
    }
  }
  add_neighbour_grids(cand, edges, compute, shapes, no);

  // Batch normalization runs where its input lies: in a compute layer's output blocks (pooled
  // when a pooling layer comes between), and its all-reduces cost what that grid gives them.
  // per compute layer: each follower's activation, and whether a concat joined it
  std::vector<std::vector<std::pair<Activation, bool>>> norms(L);
  for (size_t q = 0; q < net.layers().size(); ++q) {
    if (net.layers()[q].kind != LayerKind::batch_norm) continue;
    const ActivationSource s = net.input_source(q);
    if (s.layer) norms[index_of.at(*s.layer)].push_back({s.pooled, s.joined});
  }
  std::map<std::pair<size_t, int>, BatchNormFigures> norm_cache;
  const auto norm_of = [&](size_t i, int c) -> const BatchNormFigures& {
    auto it = norm_cache.find({i, c});
    if (it != norm_cache.end()) return it->second;
    BatchNormFigures sum;
    const LayerLayout layout(shapes[i], cand[i].plans[c].grid);
    for (const auto& [a, joined] : norms[i]) {
      const BatchNormFigures f = batch_norm_figures(held(layout, a, joined), o.procs, o.profile);
      sum.words_max += f.words_max;
      sum.time_s += f.time_s;
    }
    if (!has_backward(o)) sum = {};  // inference moves nothing
    return norm_cache.emplace(std::pair{i, c}, sum).first->second;
  };
  const auto norm_objective = [&](size_t i, int c) {
    if (norms[i].empty()) return 0.0;
    const BatchNormFigures& f = norm_of(i, c);
    return o.objective == Objective::volume ? static_cast<double>(f.words_max) : f.time_s;
  };

  EdgeCosts costs(o);
  using State = std::vector<int>;  // candidate index of each live layer, in live[] order
  struct Entry {
    double cost;
    State prev;
    int choice;
  };
  std::vector<std::map<State, Entry>> table(L);
  std::map<State, Entry> start{{State{}, Entry{0, {}, -1}}};
  static const std::vector<size_t> kNone;
  for (size_t t = 0; t < L; ++t) {
    const std::vector<size_t>& before = t ? live[t - 1] : kNone;
    const std::map<State, Entry>& prev = t ? table[t - 1] : start;
    // Cheapest states first: a transition whose cost before its edges (which cost >= 0) already
    // reaches the best entry of its next state is skipped without evaluating the edges.
    std::vector<const std::pair<const State, Entry>*> order;
    for (const auto& e : prev) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return a->second.cost < b->second.cost; });
    for (const auto* item : order) {
      const State& state = item->first;
      const Entry& entry = item->second;
      for (int c = 0; c < static_cast<int>(cand[t].plans.size()); ++c) {
        const auto choice_of = [&](size_t u) {
          if (u == t) return c;
          const auto it = std::find(before.begin(), before.end(), u);
          if (it == before.end()) throw Error(fmt::format("plan_network: layer {} is not live at {}", u, t));
          return state[it - before.begin()];
        };
        State next;
        for (size_t u : live[t]) next.push_back(choice_of(u));
        double cost = entry.cost + cand[t].plans[c].objective(o.objective) + norm_objective(t, c);
        const auto known = table[t].find(next);
        if (known != table[t].end() && known->second.cost <= cost) continue;
        for (const Edge& e : edges) {
          if (e.at() != t) continue;
          const LayerPlan& a = cand[e.from].plans[choice_of(e.from)];
          const LayerPlan& b = cand[e.to].plans[choice_of(e.to)];
          cost += costs.objective(costs.figures(e, shapes[e.from], a.grid, shapes[e.to], b.grid));
        }
        auto [it, inserted] = table[t].try_emplace(next, Entry{cost, state, c});
        if (!inserted && cost < it->second.cost) it->second = Entry{cost, state, c};
      }
    }
  }

  // The cheapest end, then back through the choices.
  const auto best = std::min_element(table[L - 1].begin(), table[L - 1].end(), [](const auto& a, const auto& b) {
    return a.second.cost < b.second.cost;
  });
  std::vector<int> choice(L);
  State state = best->first;
  for (size_t t = L; t-- > 0;) {
    const Entry& e = table[t].at(state);
    choice[t] = e.choice;
    state = e.prev;
  }

  NetworkPlan plan;
  plan.network = net.name();
  plan.batch = no.batch;
  plan.procs = o.procs;
  plan.family = no.family;
  for (size_t i = 0; i < L; ++i) {
    NetworkLayerPlan l;
    l.name = net.layers()[compute[i].layer].name;
    l.plan = cand[i].plans[choice[i]];
    l.fallback = cand[i].fallback;
    if (o.procs <= shapes[i].N) {
      PlanOptions own = o;
      own.passes = passes_in_network(compute[i], o.passes);
      l.data_parallel = evaluate_grid(shapes[i], GridDims{o.procs, 1, 1, 1, 1}, own);
    }
    if (!norms[i].empty()) {
      l.norm_words = norm_of(i, choice[i]).words_max;
      l.norm_time_s = norm_of(i, choice[i]).time_s;
      if (l.data_parallel && has_backward(o)) {
        const LayerLayout dp(shapes[i], l.data_parallel->grid);
        for (const auto& [a, joined] : norms[i]) {
          l.data_parallel_norm_words += batch_norm_figures(held(dp, a, joined), o.procs, o.profile).words_max;
        }
      }
    }
    plan.layers.push_back(std::move(l));
  }
  for (const Edge& e : edges) {
    EdgeFigures f = costs.figures(e, shapes[e.from], plan.layers[e.from].plan.grid, shapes[e.to],
                                  plan.layers[e.to].plan.grid);
    f.from_layer = plan.layers[e.from].name;
    f.from_index = e.from;
    f.pooled = e.pooled;
    plan.layers[e.to].edges_in.push_back(f);
  }
  if (has_backward(o)) {
    std::vector<int64_t> biases;
    for (size_t i = 0; i < L; ++i) {
      if (net.layers()[compute[i].layer].conv.bias) biases.push_back(shapes[i].K);
    }
    const bool loss = std::any_of(net.layers().begin(), net.layers().end(),
                                  [](const Layer& l) { return l.kind == LayerKind::softmax_xent; });
    plan.collectives = step_collectives(loss, no.batch, biases, o.procs, o.profile);
  }
  return plan;
}

}  // namespace convgrid
