// The buffers a layer describes and later allocates, and the figures of an exchange.
#include "train/train_layer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "convgrid/error.hpp"

namespace convgrid {

TrainLayer::TrainLayer(const LayerSetup& setup)
    : name_(setup.layer().name), kind_(to_string(setup.layer().kind)) {}

TrainLayer::TrainLayer(const LayerSetup&, std::string name, std::string_view kind)
    : name_(std::move(name)), kind_(kind) {}

ActivationData TrainLayer::bind_inputs(const Communicator& world,
                                       std::span<const ActivationData> inputs) {
  if (inputs.empty() || inputs.size() > 2) {
    throw Error(fmt::format("layer '{}' ({}) binds {} inputs, not 1 or 2", name_, kind_,
                            inputs.size()));
  }
  return bind(world, inputs[0], inputs.size() > 1 ? inputs[1] : ActivationData{});
}

size_t TrainLayer::describe(std::string role, MemoryGroup group, int64_t count,
                            int64_t element_bytes) {
  count = std::max<int64_t>(count, 1);
  specs_.push_back({std::move(role), group, count * element_bytes});
  counts_.push_back(count);
  return specs_.size() - 1;
}

size_t TrainLayer::describe_activation(std::string role, Life life, int64_t count,
                                       int64_t element_bytes) {
  const size_t index = describe(std::move(role), MemoryGroup::activations, count, element_bytes);
  specs_[index].life = life;
  return index;
}

void TrainLayer::describe_held(std::string role, MemoryGroup group, int64_t bytes) {
  specs_.push_back({std::move(role), group, bytes});
  counts_.push_back(-1);
}

int64_t TrainLayer::count(size_t index) const { return counts_.at(index); }

void* TrainLayer::bound(size_t index) const { return index < bound_.size() ? bound_[index] : nullptr; }

template <class T, class Vector, class Make>
T* TrainLayer::take(std::vector<Vector>& pool, size_t index, Make&& make) {
  const int64_t n = count(index);
  if (specs_.at(index).bytes != n * static_cast<int64_t>(sizeof(T))) {
    throw Error(fmt::format("layer '{}': buffer '{}' is not of {}-byte elements", name_,
                            specs_[index].role, sizeof(T)));
  }
  if (bound_.size() < specs_.size()) bound_.resize(specs_.size(), nullptr);
  if (bound_[index] != nullptr) return static_cast<T*>(bound_[index]);
  if (specs_[index].life != Life::persistent) {
    if (index >= places_.size() || places_[index] == nullptr) {
      throw Error(fmt::format("layer '{}': activation buffer '{}' has no place in the arena", name_,
                              specs_[index].role));
    }
    bound_[index] = places_[index];
    return static_cast<T*>(bound_[index]);
  }
  if (pool.size() < specs_.size()) pool.resize(specs_.size());
  pool[index] = make(n);
  bound_[index] = pool[index].data();
  return static_cast<T*>(bound_[index]);
}

float* TrainLayer::take_floats(size_t index) {
  return take<float>(floats_, index, [](int64_t n) { return Buffer(n); });
}

double* TrainLayer::take_doubles(size_t index) {
  return take<double>(doubles_, index,
                      [](int64_t n) { return TrackedVector<double>(static_cast<size_t>(n), 0.0); });
}

int32_t* TrainLayer::take_ints(size_t index) {
  return take<int32_t>(ints_, index,
                       [](int64_t n) { return TrackedVector<int32_t>(static_cast<size_t>(n), 0); });
}

namespace {

// The entry of `map` under the layer's `role`, made by `make` the first time.
template <class Map, class Make>
const typename Map::mapped_type& made_once(Map& map, const LayerSetup& s, const std::string& role, Make&& make) {
  const std::string key = s.layer().name + "/" + role;
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(key, make()).first;
  return it->second;
}

}  // namespace

std::shared_ptr<const Placement> LayerSetup::placement(const std::string& role,
                                                      const std::function<Placement()>& make) const {
  const auto made = [&] { return std::make_shared<const Placement>(make()); };
  return cache == nullptr ? made() : made_once(cache->placements, *this, role, made);
}

std::optional<SliceSum> LayerSetup::sum(const std::string& role,
                                        const std::function<std::optional<SliceSum>()>& make) const {
  return cache == nullptr ? make() : made_once(cache->sums, *this, role, make);
}

ExchangeFigures exchange_figures(const Placement& held, const Box4& wanted_tensor,
                                 const std::function<Slice(int64_t)>& wanted,
                                 const WantedByAll& all, int64_t procs, int64_t rank,
                                 std::optional<bool> known_moves) {
  const Box4& held_tensor = held.tensor();
  const Slice my_held = held.slice(rank), my_wanted = wanted(rank);
  const int64_t mine = slice_overlap(my_held, held_tensor, my_wanted, wanted_tensor);
  ExchangeFigures f;
  // Held slices partition the tensor: this rank receives what it wants less what it holds.
  f.recv_words = my_wanted.size() - mine;
  if (all.partitions) {
    f.send_words = my_held.size() - mine;
  } else if (all.sum) {
    if (!same_extents(held_tensor, wanted_tensor)) throw Error("exchange_figures: a sum of wanted slices in another view");
    f.send_words = all.sum->overlap(my_held) - mine;
  } else {
    for (int64_t r = 0; r < procs; ++r) {
      if (r != rank) f.send_words += slice_overlap(my_held, held_tensor, wanted(r), wanted_tensor);
    }
  }
  if (known_moves) {
    f.moves = *known_moves;
  } else {
    f.moves = f.recv_words > 0 || f.send_words > 0;
    for (int64_t r = 0; r < procs && !f.moves; ++r) {
      const Slice w = wanted(r);
      f.moves = w.size() > slice_overlap(held.slice(r), held_tensor, w, wanted_tensor);
    }
  }
  f.identity = same_extents(held_tensor, wanted_tensor) && f.recv_words == 0 &&
               my_held.box == my_wanted.box && my_held.flat == my_wanted.flat;
  if (f.moves && procs > 1) {
    f.staging_bytes = static_cast<int64_t>(sizeof(float)) *
                      (std::max<int64_t>(f.send_words, 1) + std::max<int64_t>(f.recv_words, 1));
  }
  return f;
}

}  // namespace convgrid
