// Reading and writing networks as JSON: a strict reader (types and keys here, shapes in
// Network::add) and a writer that the reader reads back to the same network.
#include "nn/network_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "convgrid/error.hpp"
#include "io/strict_json.hpp"

namespace convgrid {
namespace {

using Json = nlohmann::ordered_json;
using Pair = std::pair<int64_t, int64_t>;

constexpr LayerKind kKinds[] = {LayerKind::conv,
                                LayerKind::relu,
                                LayerKind::relu6,
                                LayerKind::sigmoid,
                                LayerKind::tanh,
                                LayerKind::hardsigmoid,
                                LayerKind::hardswish,
                                LayerKind::silu,
                                LayerKind::add,
                                LayerKind::scale,
                                LayerKind::concat,
                                LayerKind::max_pool,
                                LayerKind::avg_pool,
                                LayerKind::global_avg_pool,
                                LayerKind::batch_norm,
                                LayerKind::flatten,
                                LayerKind::fully_connected,
                                LayerKind::softmax_xent};

// A value as the file spells it, cut short when long.
std::string shown(const Json& value) {
  std::string s = value.dump();
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

// One JSON object being read. Every lookup records its key as known, so that keys left over at
// the end are unknown. Getters take the value to use when the key is absent; none: required.
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string where) : object_(object), where_(std::move(where)) {
    if (!object.is_object()) fail(fmt::format("must be an object, not {}", shown(object)));
  }

  void set_where(std::string where) { where_ = std::move(where); }
  [[noreturn]] void fail(std::string_view what) const {
    throw InputError(fmt::format("{}: {}", where_, what));
  }

  bool has(const char* key) { return find(key) != nullptr; }

  const Json& value(const char* key) {
    if (const Json* v = find(key)) return *v;
    fail(fmt::format("missing key '{}'", key));
  }

  int64_t integer(const char* key, std::optional<int64_t> fallback = {}) {
    if (fallback && !has(key)) return *fallback;
    return as_integer(key, value(key));
  }

  // An integer n (meaning n x n) or a pair [h, w].
  Pair pair(const char* key, std::optional<Pair> fallback = {}) {
    if (fallback && !has(key)) return *fallback;
    const Json& v = value(key);
    if (v.is_array() && v.size() == 2) return {as_integer(key, v[0]), as_integer(key, v[1])};
    if (v.is_array())
      fail(fmt::format("'{}' must be an integer or a pair [h, w], not {}", key, shown(v)));
    const int64_t n = as_integer(key, v);
    return {n, n};
  }

  bool boolean(const char* key, bool fallback) {
    if (!has(key)) return fallback;
    const Json& v = value(key);
    if (!v.is_boolean()) fail(fmt::format("'{}' must be true or false, not {}", key, shown(v)));
    return v.get<bool>();
  }

  std::string string(const char* key, std::optional<std::string> fallback = {}) {
    if (fallback && !has(key)) return *fallback;
    const Json& v = value(key);
    if (!v.is_string()) fail(fmt::format("'{}' must be a string, not {}", key, shown(v)));
    return v.get<std::string>();
  }

  // A non-empty array of strings.
  std::vector<std::string> strings(const char* key) {
    const Json& v = value(key);
    if (!v.is_array() || v.empty()) fail(fmt::format("'{}' must be a non-empty array of layer names, not {}", key, shown(v)));
    std::vector<std::string> out;
    for (const Json& e : v) {
      if (!e.is_string()) fail(fmt::format("'{}' must hold layer names (strings), not {}", key, shown(e)));
      out.push_back(e.get<std::string>());
    }
    return out;
  }

  void check_no_other_keys() const {
    for (const auto& [key, v] : object_.items()) {
      if (std::ranges::find(known_, key) == known_.end()) {
        fail(fmt::format("unknown key '{}' (known: {})", key, fmt::join(known_, ", ")));
      }
    }
  }

 private:
  const Json* find(const char* key) {
    if (std::ranges::find(known_, key) == known_.end()) known_.emplace_back(key);
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  int64_t as_integer(const char* key, const Json& v) const {
    if (!v.is_number_integer()) fail(fmt::format("'{}' must be an integer, not {}", key, shown(v)));
    if (v.is_number_unsigned() && v.get<uint64_t>() > std::numeric_limits<int64_t>::max()) {
      fail(fmt::format("'{}' = {} is out of range", key, shown(v)));
    }
    return v.get<int64_t>();
  }

  const Json& object_;
  std::string where_;
  std::vector<std::string> known_;
};

struct ReadLayer {
  Layer layer;
  std::optional<int64_t> C;  // the input channels (fc: features) the file says the layer takes
};

ReadLayer read_layer(const Json& j, size_t index) {
  ObjectReader r(j, fmt::format("layers[{}]", index));
  ReadLayer out;
  Layer& l = out.layer;
  l.name = r.string("name", "");
  if (!l.name.empty()) r.set_where(fmt::format("layers[{}] '{}'", index, l.name));
  const std::string type = r.string("type");
  const auto* kind =
      std::ranges::find_if(kKinds, [&](LayerKind k) { return to_string(k) == type; });
  if (kind == std::end(kKinds)) {
    std::vector<std::string_view> known;  // a loop: clang 14 (the fuzz build) fails on views here
    for (LayerKind k : kKinds) known.push_back(to_string(k));
    r.fail(fmt::format("unknown layer type '{}' (known: {})", type, fmt::join(known, ", ")));
  }
  l.kind = *kind;
  l.input = r.string("input", "");
  l.residual = r.string("residual", "");
  r.string("comment", "");
  ConvParams& c = l.conv;
  PoolParams& p = l.pool;
  switch (l.kind) {
    case LayerKind::conv:
      if (r.has("C")) out.C = r.integer("C");
      c.K = r.integer("K");
      c.R = r.integer("R");
      c.S = r.integer("S");
      std::tie(c.stride_h, c.stride_w) = r.pair("stride", Pair{1, 1});
      std::tie(c.pad_top, c.pad_left) = r.pair("pad", Pair{0, 0});
      std::tie(c.pad_bottom, c.pad_right) = r.pair("pad_end", Pair{c.pad_top, c.pad_left});
      std::tie(c.dil_h, c.dil_w) = r.pair("dilation", Pair{1, 1});
      c.groups = r.integer("groups", 1);
      c.bias = r.boolean("bias", false);
      break;
    case LayerKind::fully_connected:
      if (r.has("C")) out.C = r.integer("C");
      c.K = r.integer("K");
      c.bias = r.boolean("bias", false);
      break;
    case LayerKind::max_pool:
    case LayerKind::avg_pool:
      std::tie(p.window_h, p.window_w) = r.pair("window");
      std::tie(p.stride_h, p.stride_w) = r.pair("stride", Pair{p.window_h, p.window_w});
      std::tie(p.pad_h, p.pad_w) = r.pair("pad", Pair{0, 0});
      p.ceil_mode = r.boolean("ceil_mode", false);
      break;
    case LayerKind::concat:
      l.concat_inputs = r.strings("concat_inputs");
      break;
    case LayerKind::scale:
      l.gate = r.string("gate");
      break;
    case LayerKind::relu:
    case LayerKind::relu6:
    case LayerKind::sigmoid:
    case LayerKind::tanh:
    case LayerKind::hardsigmoid:
    case LayerKind::hardswish:
    case LayerKind::silu:
    case LayerKind::add:
    case LayerKind::global_avg_pool:
    case LayerKind::batch_norm:
    case LayerKind::flatten:
    case LayerKind::softmax_xent:
      break;
  }
  r.check_no_other_keys();
  return out;
}

Network read_network(const Json& j) {
  ObjectReader top(j, "top level");
  const std::string name = top.string("name");
  top.string("comment", "");
  ObjectReader in(top.value("input"), "input");
  const Activation input{in.integer("C"), in.integer("H"), in.integer("W")};
  in.check_no_other_keys();
  const Json& layers = top.value("layers");
  if (!layers.is_array() || layers.empty()) {
    top.fail(fmt::format("'layers' must be a non-empty array, not {}", shown(layers)));
  }
  top.check_no_other_keys();
  Network net(name, input);
  for (size_t i = 0; i < layers.size(); ++i) {
    auto [layer, C] = read_layer(layers[i], i);
    const Layer& added = net.add(std::move(layer));
    if (C && *C != added.in.C) {
      throw InputError(fmt::format("layers[{}] '{}': C={} but its input is {}", i, added.name, *C,
                                   added.in.to_string()));
    }
  }
  return net;
}

Json pair_json(int64_t h, int64_t w) { return h == w ? Json(h) : Json::array({h, w}); }

Json layer_json(const Layer& l) {
  Json j = {{"type", std::string(to_string(l.kind))}, {"name", l.name}};
  if (!l.input.empty()) j["input"] = l.input;
  if (!l.residual.empty()) j["residual"] = l.residual;
  if (!l.concat_inputs.empty()) j["concat_inputs"] = l.concat_inputs;
  if (!l.gate.empty()) j["gate"] = l.gate;
  const ConvParams& c = l.conv;
  const PoolParams& p = l.pool;
  switch (l.kind) {
    case LayerKind::conv:
      j.update({{"C", l.in.C},
                {"K", c.K},
                {"R", c.R},
                {"S", c.S},
                {"stride", pair_json(c.stride_h, c.stride_w)},
                {"pad", pair_json(c.pad_top, c.pad_left)}});
      if (c.pad_bottom != c.pad_top || c.pad_right != c.pad_left) {
        j["pad_end"] = pair_json(c.pad_bottom, c.pad_right);
      }
      if (c.dil_h != 1 || c.dil_w != 1) j["dilation"] = pair_json(c.dil_h, c.dil_w);
      if (c.groups != 1) j["groups"] = c.groups;
      j["bias"] = c.bias;
      break;
    case LayerKind::fully_connected:
      j.update({{"C", l.in.C}, {"K", c.K}, {"bias", c.bias}});
      break;
    case LayerKind::max_pool:
    case LayerKind::avg_pool:
      j.update({{"window", pair_json(p.window_h, p.window_w)},
                {"stride", pair_json(p.stride_h, p.stride_w)},
                {"pad", pair_json(p.pad_h, p.pad_w)}});
      if (p.ceil_mode) j["ceil_mode"] = true;
      break;
    case LayerKind::relu:
    case LayerKind::relu6:
    case LayerKind::sigmoid:
    case LayerKind::tanh:
    case LayerKind::hardsigmoid:
    case LayerKind::hardswish:
    case LayerKind::silu:
    case LayerKind::add:
    case LayerKind::scale:
    case LayerKind::concat:
    case LayerKind::global_avg_pool:
    case LayerKind::batch_norm:
    case LayerKind::flatten:
    case LayerKind::softmax_xent:
      break;
  }
  return j;
}

}  // namespace

Network network_from_json(std::string_view text, const std::string& origin) {
  const Json json = parse_ordered_json(text, origin);  // its errors start with origin already
  try {
    return read_network(json);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", origin, e.what()));
  }
}

std::string network_to_json(const Network& network) {
  const Activation& a = network.input();
  std::string out =
      fmt::format("{{\n  \"name\": {},\n  \"input\": {},\n  \"layers\": [\n",
                  Json(network.name()).dump(), Json{{"C", a.C}, {"H", a.H}, {"W", a.W}}.dump());
  const auto& layers = network.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    out +=
        fmt::format("    {}{}\n", layer_json(layers[i]).dump(), i + 1 < layers.size() ? "," : "");
  }
  return out + "  ]\n}\n";
}

}  // namespace convgrid
