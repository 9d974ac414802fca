// Delivering an input into a layer's own spread, and its gradient back.
#include "train/input_edge.hpp"

namespace convgrid {

InputEdge::InputEdge(TrainLayer& owner, const std::string& role, const ActivationSpread& from,
                     Box4 wanted_tensor, std::function<Slice(int64_t)> wanted,
                     const LayerSetup& setup, bool sole_reader, const WantedByAll& all,
                     Life data_life)
    : from_placement_(from.placement),
      wanted_tensor_(wanted_tensor),
      wanted_(std::move(wanted)),
      wanted_size_(wanted_(setup.rank).size()),
      sole_reader_(sole_reader) {
  const std::string key = owner.name() + "/" + role;
  std::optional<bool> known;
  if (setup.cache != nullptr) {
    const auto it = setup.cache->moves.find(key);
    if (it != setup.cache->moves.end()) known = it->second;
  }
  figures_ = exchange_figures(*from.placement, wanted_tensor_, wanted_, all,
                              setup.procs, setup.rank, known);
  if (setup.cache != nullptr) setup.cache->moves[key] = figures_.moves;
  owner.describe_held(role + " staging", MemoryGroup::exchanges, figures_.staging_bytes);
  if (!figures_.identity) data_buf_ = owner.describe_activation(role, data_life, wanted_size_);
  if (!(figures_.identity && sole_reader_)) {
    grad_buf_ = owner.describe_activation("d" + role, Life::backward, wanted_size_);
  }
}

LayerWords InputEdge::modelled_words() const { return {figures_.recv_words, figures_.send_words}; }

void InputEdge::bind(TrainLayer& owner, const Communicator& world, ActivationData from) {
  from_ = from;
  exchange_ = std::make_unique<BoxExchange>(
      world, from_placement_->tensor(), [p = from_placement_](int64_t r) { return p->slice(r); },
      wanted_tensor_, wanted_);
  data_ = figures_.identity ? from.data : owner.take_floats(data_buf_);
  grad_ = figures_.identity && sole_reader_ ? from.grad : owner.take_floats(grad_buf_);
}

void InputEdge::forward(TrafficCounter& traffic) { exchange_->forward(from_.data, data_, traffic); }

void InputEdge::backward(TrafficCounter& traffic) {
  exchange_->reverse_add(grad_, from_.grad, traffic);
}

}  // namespace convgrid
