// LocalConv: passes prepared once (oneDNN primitives or the loop-nest reference), tensors kept
// resident between calls, and the plain-layout calls built on them.
#include "convgrid/local_conv.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "kernel/kept_primitive.hpp"
#include "kernel/onednn_descriptors.hpp"
#include "kernel/pass_tensors.hpp"
#include "kernel/resident_tensor.hpp"
#include "sim/compute.hpp"

namespace convgrid {
namespace {

using kernel::index_of;
using kernel::KeptPrimitive;
using kernel::ResidentTensor;
using kernel::TensorArrays;

// One argument of a prepared pass: which tensor, in which of its resident layouts.
struct BoundArgument {
  Tensor tensor;
  int layout;
  bool written;
};

struct PreparedPass {
  std::vector<BoundArgument> args;
  std::optional<KeptPrimitive> primitive;  // oneDNN backend only
};

// Points the plain-layout tensors of one plain call at the caller's arrays, and back at the
// engine's buffers when the call ends, also when it throws.
class CallerBinding {
 public:
  CallerBinding() = default;
  CallerBinding(const CallerBinding&) = delete;
  CallerBinding& operator=(const CallerBinding&) = delete;
  ~CallerBinding() {
    for (size_t i = 0; i < count_; ++i) bound_[i].first->unbind(bound_[i].second);
  }
  void bind(ResidentTensor& tensor, int layout, float* caller) {
    tensor.bind(layout, caller);
    bound_.at(count_++) = {&tensor, layout};
  }

 private:
  std::array<std::pair<ResidentTensor*, int>, kernel::kMaxPassArguments> bound_{};
  size_t count_ = 0;
};

void run_reference(Pass p, const ConvShape& g, const TensorArrays& a) {
  auto at = [&a](Tensor t) { return a[index_of(t)]; };
  switch (p) {
    case Pass::forward:
      reference::forward(g, at(Tensor::input), at(Tensor::weights), at(Tensor::bias),
                         at(Tensor::output));
      return;
    case Pass::backward_data:
      reference::backward_data(g, at(Tensor::grad_output), at(Tensor::weights),
                               at(Tensor::grad_input));
      return;
    case Pass::backward_weights:
      reference::backward_weights(g, at(Tensor::grad_output), at(Tensor::input),
                                  at(Tensor::grad_weights), at(Tensor::grad_bias));
      return;
  }
}

void require(const float* p, Pass pass, std::string_view what) {
  if (p == nullptr) throw InputError(fmt::format("{}: {} is null", pass_name(pass), what));
}

}  // namespace

struct LocalConv::Impl {
  ConvShape shape;
  bool with_bias;
  Backend backend;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::vector<ResidentTensor> tensors;  // indexed by Tensor
  std::array<std::optional<PreparedPass>, kernel::kPassCount> passes;
  std::optional<dnnl::convolution_forward::primitive_desc> forward_desc;  // the backward hint
  // --compute model (sim/compute.hpp): passes inject their flops instead of running, and tensors
  // are neither loaded nor stored.
  bool modelled = sim::kernels_skipped();
  bool reuse_inputs = false;  // reuse_reordered_inputs

  Impl(const ConvShape& s, bool bias, Backend b, const PlainStrides& strides)
      : shape(s), with_bias(bias), backend(b) {
    shape.validate();
    if (backend == Backend::reference && !strides.dense()) {
      throw Error("the reference convolution takes dense arrays only (strided views need oneDNN)");
    }
    for (size_t t = 0; t < kernel::kTensorCount; ++t) {
      tensors.emplace_back(kernel::plain_desc(shape, static_cast<Tensor>(t), strides), engine);
    }
  }

  ResidentTensor& tensor(Tensor t) { return tensors[index_of(t)]; }

  const dnnl::convolution_forward::primitive_desc& forward_pd() {
    if (!forward_desc) forward_desc = kernel::forward_desc(shape, with_bias, engine);
    return *forward_desc;
  }

  dnnl::primitive_desc pass_pd(Pass p) {
    if (p == Pass::forward) return forward_pd();
    return kernel::backward_desc(p, shape, with_bias, forward_pd());
  }

  // Creates pass p unless it exists: the oneDNN primitive and the layouts it prefers, or, for
  // the reference, plain layouts.
  PreparedPass& prepare(Pass p) {
    std::optional<PreparedPass>& slot = passes[index_of(p)];
    if (slot) return *slot;
    try {
      slot = create(p);
    } catch (const dnnl::error& e) {
      throw Error(fmt::format("oneDNN cannot create {} for {}: {}", pass_name(p), shape.to_string(),
                              e.what()));
    }
    return *slot;
  }

  PreparedPass create(Pass p) {
    std::optional<dnnl::primitive_desc> pd;
    if (backend == Backend::onednn && !modelled) pd = pass_pd(p);
    PreparedPass pass;
    KeptPrimitive::Args args;
    for (const kernel::PassArgument& a : kernel::pass_arguments(p, with_bias)) {
      const dnnl::memory::desc desc = pd ? pd->query_md(dnnl::query::exec_arg_md, a.dnnl_arg)
                                         : kernel::plain_desc(shape, a.tensor);
      const int layout = tensor(a.tensor).layout(desc);
      pass.args.push_back({a.tensor, layout, a.written});
      args.emplace(a.dnnl_arg, tensor(a.tensor).memory(layout));
    }
    if (pd) pass.primitive.emplace(*pd, std::move(args));
    return pass;
  }

  bool read_by_a_prepared_pass(Tensor t) const {
    for (const std::optional<PreparedPass>& pass : passes) {
      if (!pass) continue;
      for (const BoundArgument& a : pass->args) {
        if (a.tensor == t && !a.written) return true;
      }
    }
    return false;
  }

  PreparedPass& prepared(Pass p) {
    std::optional<PreparedPass>& slot = passes[index_of(p)];
    if (!slot) throw Error(fmt::format("run({}): the pass is not prepared", pass_name(p)));
    return *slot;
  }

  void run(Pass p) {
    PreparedPass& pass = prepared(p);
    if (modelled) {
      sim::inject_flops(shape.flops());
      return;
    }
    if (pass.primitive) {
      pass.primitive->execute(stream);
      return;
    }
    TensorArrays arrays{};
    for (const BoundArgument& a : pass.args)
      arrays[index_of(a.tensor)] = tensor(a.tensor).data(a.layout);
    run_reference(p, shape, arrays);
  }

  // A plain-layout call: the caller's arrays in, pass p, results out. A null written array
  // (only grad_bias may be) leaves that result in the engine.
  void run_plain(Pass p, const TensorArrays& caller) {
    if (modelled) {
      sim::inject_flops(shape.flops());
      return;
    }
    if (backend == Backend::reference) {
      run_reference(p, shape, caller);
      return;
    }
    PreparedPass& pass = prepare(p);
    CallerBinding binding;
    for (const BoundArgument& a : pass.args) {
      float* array = caller[index_of(a.tensor)];
      ResidentTensor& t = tensor(a.tensor);
      if (array == nullptr) continue;
      if (t.is_plain(a.layout)) {
        binding.bind(t, a.layout, array);
      } else if (!a.written && reuse_inputs) {
        t.load_unless_held(a.layout, array, stream);
      } else if (!a.written) {
        t.load(a.layout, array, stream);
      }
    }
    pass.primitive->execute(stream);
    for (const BoundArgument& a : pass.args) {
      float* array = caller[index_of(a.tensor)];
      if (a.written && array != nullptr && !tensor(a.tensor).is_plain(a.layout)) {
        tensor(a.tensor).store(a.layout, array, stream);
      }
    }
  }
};

namespace {

int64_t floats_of(size_t bytes) {
  return (static_cast<int64_t>(bytes) + static_cast<int64_t>(sizeof(float)) - 1) /
         static_cast<int64_t>(sizeof(float));
}

// What ResidentTensor::layout and KeptPrimitive allocate, without allocating it.
int64_t count_engine_floats(const ConvShape& shape, bool with_bias, const std::vector<Pass>& passes,
                            const PlainStrides& strides) {
  const dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  const auto forward = kernel::forward_desc(shape, with_bias, engine);
  std::vector<std::pair<Tensor, dnnl::memory::desc>> layouts;
  int64_t floats = 0;
  std::vector<Pass> seen;
  for (Pass p : passes) {
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
    seen.push_back(p);
    const dnnl::primitive_desc pd =
        p == Pass::forward ? dnnl::primitive_desc(forward) : kernel::backward_desc(p, shape, with_bias, forward);
    floats += floats_of(pd.scratchpad_desc().get_size());
    for (const kernel::PassArgument& a : kernel::pass_arguments(p, with_bias)) {
      const dnnl::memory::desc desc = pd.query_md(dnnl::query::exec_arg_md, a.dnnl_arg);
      const bool known = std::any_of(layouts.begin(), layouts.end(), [&](const auto& l) {
        return l.first == a.tensor && l.second == desc;
      });
      if (known) continue;
      layouts.emplace_back(a.tensor, desc);
      floats += static_cast<int64_t>(desc.get_size() / sizeof(float));
      const dnnl::memory::desc plain = kernel::plain_desc(shape, a.tensor, strides);
      if (desc != plain) {  // the two reorders' scratchpads
        for (const auto& [from, to] : {std::pair{plain, desc}, std::pair{desc, plain}}) {
          const dnnl::reorder::primitive_desc r(engine, from, engine, to, kernel::user_scratchpad_attr());
          floats += floats_of(r.scratchpad_desc().get_size());
        }
      }
    }
  }
  return floats;
}

}  // namespace

int64_t engine_bytes(const ConvShape& shape, bool with_bias, Backend backend, const std::vector<Pass>& passes,
                     const PlainStrides& strides) {
  if (backend == Backend::reference || passes.empty()) return 0;
  static std::map<std::string, int64_t> known;  // by shape, bias, strides and passes
  std::string key = fmt::format("{}|{}|{},{},{}", shape.to_string(), with_bias, strides.input,
                                strides.grad_output, strides.weights);
  for (Pass p : passes) key += fmt::format("|{}", pass_name(p));
  auto it = known.find(key);
  if (it != known.end()) return it->second;
  int64_t bytes = 0;
  try {
    bytes = 4 * count_engine_floats(shape, with_bias, passes, strides);
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN cannot describe {}: {}", shape.to_string(), e.what()));
  }
  return known.emplace(key, bytes).first->second;
}

LocalConv::LocalConv(const ConvShape& shape, bool with_bias, Backend backend, const PlainStrides& strides)
    : impl_(std::make_unique<Impl>(shape, with_bias, backend, strides)) {}
LocalConv::~LocalConv() = default;
LocalConv::LocalConv(LocalConv&&) noexcept = default;
LocalConv& LocalConv::operator=(LocalConv&&) noexcept = default;

const ConvShape& LocalConv::shape() const { return impl_->shape; }
Backend LocalConv::backend() const { return impl_->backend; }
bool LocalConv::with_bias() const { return impl_->with_bias; }

// The passes never write their inputs: the const_casts only give them to oneDNN's handle type.
void LocalConv::forward(const float* in, const float* ker, const float* bias, float* out) {
  require(in, Pass::forward, "input");
  require(ker, Pass::forward, "weights");
  require(out, Pass::forward, "output");
  if (with_bias() != (bias != nullptr)) {
    throw InputError(with_bias() ? "forward: the layer has a bias but none was given"
                                 : "forward: a bias was given but the layer has none");
  }
  TensorArrays a{};
  a[index_of(Tensor::input)] = const_cast<float*>(in);
  a[index_of(Tensor::weights)] = const_cast<float*>(ker);
  a[index_of(Tensor::bias)] = const_cast<float*>(bias);
  a[index_of(Tensor::output)] = out;
  impl_->run_plain(Pass::forward, a);
}

void LocalConv::backward_data(const float* dout, const float* ker, float* din) {
  require(dout, Pass::backward_data, "grad_output");
  require(ker, Pass::backward_data, "weights");
  require(din, Pass::backward_data, "grad_input");
  TensorArrays a{};
  a[index_of(Tensor::grad_output)] = const_cast<float*>(dout);
  a[index_of(Tensor::weights)] = const_cast<float*>(ker);
  a[index_of(Tensor::grad_input)] = din;
  impl_->run_plain(Pass::backward_data, a);
}

void LocalConv::backward_weights(const float* dout, const float* in, float* dker, float* dbias) {
  require(dout, Pass::backward_weights, "grad_output");
  require(in, Pass::backward_weights, "input");
  require(dker, Pass::backward_weights, "grad_weights");
  if (!with_bias() && dbias != nullptr) {
    throw InputError("backward_weights: a bias gradient was asked for but the layer has no bias");
  }
  TensorArrays a{};
  a[index_of(Tensor::grad_output)] = const_cast<float*>(dout);
  a[index_of(Tensor::input)] = const_cast<float*>(in);
  a[index_of(Tensor::grad_weights)] = dker;
  a[index_of(Tensor::grad_bias)] = dbias;
  impl_->run_plain(Pass::backward_weights, a);
}

void LocalConv::reuse_reordered_inputs(bool on) {
  impl_->reuse_inputs = on;
  inputs_changed();
}

void LocalConv::inputs_changed() {
  for (ResidentTensor& t : impl_->tensors) t.forget_loads();
}

void LocalConv::prepare(Pass p) { impl_->prepare(p); }

void LocalConv::run(Pass p) { impl_->run(p); }

void LocalConv::load(Tensor t, const float* plain) {
  if (!impl_->read_by_a_prepared_pass(t)) {
    throw Error(fmt::format("load({}): no prepared pass reads it", tensor_name(t)));
  }
  if (impl_->modelled) return;
  impl_->tensor(t).load(plain, impl_->stream);
}

void LocalConv::store(Tensor t, float* plain) {
  ResidentTensor& resident = impl_->tensor(t);
  if (!resident.has_layouts()) {
    throw Error(fmt::format("store({}): no prepared pass uses it", tensor_name(t)));
  }
  if (impl_->modelled) return;
  resident.store(0, plain, impl_->stream);
}

}  // namespace convgrid
