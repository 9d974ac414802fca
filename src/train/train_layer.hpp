// One layer of a network in training, as one rank runs it (SPEC section 8). Every layer kind is
// one class behind this interface (train/layers/*.cpp, registered in train/layer_registry.cpp):
// forward, backward, the words it moves and the buffers it holds.
//
// A layer is built in two steps. Its constructor is pure (no MPI): from the network, the plan and
// where its inputs lie, it fixes where its output lies (ActivationSpread), the words this rank
// receives in a step (modelled_words), and every buffer it will hold (buffers()). The memory
// model (train/training_memory.hpp) adds up those descriptions for any rank without running
// anything. bind() then allocates exactly the described buffers and builds the exchanges with the
// communicator, and forward()/backward() run.
//
// Gradients. A layer adds its input's gradient into its producer's storage, or writes it there
// directly when it is the only reader of that input (LayerSetup::sole_reader; each operand of a
// concat is a read of its own, so a concat reading one layer twice is not its sole reader); the
// network zeroes each activation's gradient when its life begins (train/step_memory.hpp). In-place
// layers (ReLU, flatten, a residual add whose main input has no other reader) use their input's
// storage for their output and its gradient; a concat never does.
//
// Lives. Activation buffers live only part of a step: from the pass that first writes them to the
// last that reads them. Each is described with its Life; the step's memory plan
// (train/step_memory.hpp) turns lives into step times, places the buffers in one arena so that
// buffers whose lives do not meet share bytes, and both the running network and the memory
// model take the arena from that plan. A buffer is freed, for reuse, right after its last use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/traffic.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "layout/box.hpp"
#include "layout/layer_layout.hpp"
#include "model/redistribution.hpp"
#include "nn/network.hpp"
#include "plan/layer_planner.hpp"
#include "train/softmax_xent.hpp"

namespace convgrid {

// Where an activation lies: its placement over the ranks, the grid of the compute layer that
// wrote it (pooling keeps its input's blocks: Placement::pooled; a concat joins its operands in
// the grid of its first operand: Placement::joined), and this rank's part.
struct ActivationSpread {
  std::shared_ptr<const Placement> placement;
  std::shared_ptr<const LayerLayout> grid_layout;
  Slice slice;
};

// The four parts of a rank's memory in training (train/training_memory.hpp).
enum class MemoryGroup { activations, parameters, exchanges, layers };

// When an activation buffer holds something, in the step's passes (see Lives above). The
// graph resolves output_values and output_grad, which depend on the readers.
enum class Life {
  persistent,           // parameters, state, the algorithms' and exchanges' buffers: always
  step,                 // the whole step (the input the loader fills before it)
  output_values,        // this layer's output: its forward to the last pass reading it
  output_grad,          // its gradient: the first reader's write to this layer's backward
  forward_to_backward,  // this layer's forward to its backward (a copy its backward reads)
  forward,              // this layer's forward only (a copy its backward does not read)
  backward,             // this layer's backward only (an input gradient before it is sent)
};

// One buffer a layer holds, in bytes; buffers of the `layers` and `exchanges` groups are held by
// the convolution algorithm and the exchanges (their own models), the others by the layer.
struct BufferSpec {
  std::string role;  // "out", "dout", "weight", ... (for reports)
  MemoryGroup group = MemoryGroup::activations;
  int64_t bytes = 0;
  Life life = Life::persistent;  // activations: never persistent
};

// How a layer uses storage it did not allocate (its input's, and its output's when in place),
// for the lives of its producers' buffers.
struct StorageUse {
  bool reads_input_in_backward = false;       // the values bind() was given as `input`
  bool reads_output_in_backward = false;      // its output's values (in place: its input's)
  bool writes_input_grad_in_forward = false;  // the loss writes its logits' gradient
};

// One parameter tensor as this rank holds it: its part (`slice`) of the global tensor `global`
// (a box from the origin: KCRS for weights, K x 1 x 1 x 1 for per-channel vectors), the values
// and the gradient of the last step (empty for state such as batch-norm running statistics), and
// whether every rank holds the whole of it.
struct ParamShard {
  std::string name;  // "<layer>.weight", "<layer>.bias", "<layer>.running_mean", ...
  Box4 global;
  Slice slice;
  bool replicated = false;
  std::span<float> value, grad;
};

// What the graphs of every rank of one job share, found once (the memory model builds a graph for
// each rank), by layer and role: whether each exchange moves anything anywhere, the layer's
// placements, and pooling's sums of every rank's region. All are the same on every rank.
struct JobCache {
  std::map<std::string, bool> moves;
  std::map<std::string, std::shared_ptr<const Placement>> placements;
  std::map<std::string, std::optional<SliceSum>> sums;
};

// What a layer is built from.
struct LayerSetup {
  const Network* net = nullptr;
  size_t index = 0;  // in net->layers()
  int64_t batch = 1, procs = 1, rank = 0;
  uint64_t seed = 0;
  Backend engine = Backend::onednn;
  const LayerPlan* plan = nullptr;  // conv and fully connected layers
  // Where the input lies; none for the network's input (read by the first compute layer only,
  // which the loader fills).
  const ActivationSpread* input = nullptr;
  bool sole_reader = true;  // no other layer reads `input`
  // The layer's other inputs, in order: a residual add's shortcut, a concat's operands after its
  // input (one may repeat; then neither read is the sole reader).
  struct Operand {
    const ActivationSpread* spread = nullptr;
    bool sole_reader = true;  // no other layer, and no other operand, reads it
  };
  std::vector<Operand> operands = {};
  // Shared by the graphs of all ranks the memory model builds; none for one running rank.
  JobCache* cache = nullptr;

  const Layer& layer() const { return net->layers()[index]; }
  // The layer's placement called `role`: made here, or once per job when there is a cache.
  std::shared_ptr<const Placement> placement(const std::string& role, const std::function<Placement()>& make) const;
  // The layer's sum called `role` (JobCache::sums) likewise.
  std::optional<SliceSum> sum(const std::string& role, const std::function<std::optional<SliceSum>()>& make) const;
};

// Words this rank receives in one training step.
struct LayerWords {
  int64_t forward = 0, backward = 0;
  int64_t total() const { return forward + backward; }
};

// An activation's storage on this rank: values and gradient.
struct ActivationData {
  float* data = nullptr;
  float* grad = nullptr;
};

// The batch's labels and sample weights (weight 0: a padding sample), whether the step trains,
// and the loss once the loss layer ran.
struct StepContext {
  std::span<const int32_t> labels;
  std::span<const float> weights;
  bool train = true;
  XentResult loss;
};

class TrainLayer {
 public:
  // Named after its layer, or `name` and `kind` (a residual add: "<layer>+<shortcut>").
  explicit TrainLayer(const LayerSetup& setup);
  TrainLayer(const LayerSetup& setup, std::string name, std::string_view kind);
  virtual ~TrainLayer() = default;
  TrainLayer(const TrainLayer&) = delete;
  TrainLayer& operator=(const TrainLayer&) = delete;

  const std::string& name() const { return name_; }
  // The layer kind as the network format spells it, or "residual_add".
  std::string_view kind() const { return kind_; }
  const ActivationSpread& output() const { return output_; }
  const std::vector<BufferSpec>& buffers() const { return specs_; }
  // Words this rank receives in a training step: in the layer's own work (a convolution's
  // algorithm, reductions) and in delivering its inputs (redistributions, halos); measured in
  // traffic() and edge_traffic().
  virtual LayerWords modelled_words() const { return {}; }
  virtual LayerWords modelled_edge_words() const { return {}; }
  // Whether the output (and its gradient) is the input's storage.
  bool in_place() const { return in_place_; }
  virtual StorageUse storage_use() const { return {}; }

  // Where each activation buffer lies in the step's arena (train/step_memory.hpp), one entry
  // per described buffer (null for the others); before bind().
  void place_activations(std::vector<std::byte*> places) { places_ = std::move(places); }
  // The storage of described buffer `index` once bound (null before).
  void* bound(size_t index) const;

  // Allocates the described buffers and builds what moves data; `input` and `shortcut` are the
  // storage of the layers this one reads (empty for the network input). Returns the output's.
  virtual ActivationData bind(const Communicator& world, ActivationData input,
                              ActivationData shortcut) = 0;
  // The same for any number of inputs, as the network binds every layer: `inputs` holds the
  // storage of the input and then of each LayerSetup::operands. A layer of more than two inputs
  // (a concat) overrides it; by default it is bind(input, the first operand or none).
  virtual ActivationData bind_inputs(const Communicator& world,
                                     std::span<const ActivationData> inputs);
  virtual void forward(StepContext& step) = 0;
  virtual void backward(StepContext& step) = 0;
  // Trainable parameters and state (checkpointed, not trained), as this rank holds them.
  virtual std::vector<ParamShard> params() { return {}; }
  virtual std::vector<ParamShard> state() { return {}; }
  // The storage the loader fills (the layer reading the network input; bind() first).
  virtual float* loader_input() { return nullptr; }
  // Words received since construction: in the layer's own work, and in delivering its inputs.
  TrafficCounter& traffic() { return traffic_; }
  TrafficCounter& edge_traffic() { return edge_traffic_; }

 protected:
  friend class InputEdge;
  // Describes a buffer of `count` elements of `element_bytes` (at least one element: a layer
  // never allocates an empty buffer); returns its index for take_*(). Constructors only.
  size_t describe(std::string role, MemoryGroup group, int64_t count,
                  int64_t element_bytes = sizeof(float));
  // An activation buffer (group activations) living `life`.
  size_t describe_activation(std::string role, Life life, int64_t count,
                             int64_t element_bytes = sizeof(float));
  // Memory held on the layer's behalf by others (an algorithm, an exchange), for the model only.
  void describe_held(std::string role, MemoryGroup group, int64_t bytes);
  // The described buffer `index`, allocated on first call (bind() only); an activation buffer
  // is its place in the arena.
  float* take_floats(size_t index);
  double* take_doubles(size_t index);
  int32_t* take_ints(size_t index);
  int64_t count(size_t index) const;

  void set_output(ActivationSpread spread, bool in_place) {
    output_ = std::move(spread);
    in_place_ = in_place;
  }

  TrafficCounter traffic_, edge_traffic_;

 private:
  std::string name_;
  std::string_view kind_;
  ActivationSpread output_;
  bool in_place_ = false;
  template <class T, class Vector, class Make>
  T* take(std::vector<Vector>& pool, size_t index, Make&& make);

  std::vector<BufferSpec> specs_;
  std::vector<int64_t> counts_;  // elements per described buffer (-1: held by others)
  std::vector<Buffer> floats_;
  std::vector<TrackedVector<double>> doubles_;
  std::vector<TrackedVector<int32_t>> ints_;
  std::vector<std::byte*> places_;  // by described buffer: in the arena, or null
  std::vector<void*> bound_;        // by described buffer, once taken
};

// What the other ranks want of this rank's slice, for the words it sends (exchange_figures):
// nothing to find when the wanted slices partition the tensor (an at-rest placement: it sends what
// it holds less what it keeps); else the sum of every rank's wanted slice (a pooling window's
// regions, halos included: SliceSum over the whole grid, O(1) per rank), or, without one, each
// rank's wanted slice in turn (O(P) per rank).
struct WantedByAll {
  bool partitions = true;
  std::optional<SliceSum> sum;

  static WantedByAll partition() { return {}; }
  static WantedByAll overlapping(std::optional<SliceSum> sum) { return {false, std::move(sum)}; }
};

// Words rank `rank` receives when an activation held as `held` is delivered as `wanted` (one
// all-to-all; elements it holds itself do not count), and the staging bytes its exchange keeps
// (train/box_exchange.hpp). `wanted` may be a flattened view of `held`'s tensor (then `all` may
// not have a sum). `moves` (whether any rank receives anything, the same for every rank) is taken
// from `known_moves` when given, else found over all ranks.
struct ExchangeFigures {
  int64_t recv_words = 0;  // forward (the gradient comes back: its send words)
  int64_t send_words = 0;
  bool moves = false;     // some rank receives something
  bool identity = false;  // this rank wants exactly what it holds and nothing moves anywhere
  int64_t staging_bytes = 0;
};
ExchangeFigures exchange_figures(const Placement& held, const Box4& wanted_tensor,
                                 const std::function<Slice(int64_t)>& wanted,
                                 const WantedByAll& all, int64_t procs, int64_t rank,
                                 std::optional<bool> known_moves = {});

}  // namespace convgrid
