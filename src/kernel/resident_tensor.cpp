// ResidentTensor: its layouts, and plain data in and out of them.
#include "kernel/resident_tensor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "kernel/onednn_descriptors.hpp"

namespace convgrid::kernel {
namespace {

int64_t float_count(const dnnl::memory::desc& desc) {
  return static_cast<int64_t>(desc.get_size() / sizeof(float));
}

KeptPrimitive make_reorder(const dnnl::memory& from, const dnnl::memory& to) {
  const dnnl::engine engine = from.get_engine();
  dnnl::reorder::primitive_desc pd(engine, from.get_desc(), engine, to.get_desc(),
                                   user_scratchpad_attr());
  return KeptPrimitive(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

}  // namespace

ResidentTensor::ResidentTensor(const dnnl::memory::desc& plain, const dnnl::engine& engine)
    : plain_(plain), engine_(engine), caller_(plain, engine, nullptr) {}

int ResidentTensor::layout(const dnnl::memory::desc& desc) {
  for (size_t i = 0; i < layouts_.size(); ++i) {
    if (layouts_[i].desc == desc) return static_cast<int>(i);
  }
  Layout& l = layouts_.emplace_back();
  l.desc = desc;
  l.buffer = Buffer(float_count(desc));
  l.memory = dnnl::memory(desc, engine_, l.buffer.data());
  if (desc != plain_) {
    l.from_plain.emplace(make_reorder(caller_, l.memory));
    l.to_plain.emplace(make_reorder(l.memory, caller_));
  }
  return static_cast<int>(layouts_.size() - 1);
}

ResidentTensor::Layout& ResidentTensor::at(int layout) {
  if (layout < 0 || static_cast<size_t>(layout) >= layouts_.size()) {
    throw Error(fmt::format("resident tensor: no layout {} (it has {})", layout, layouts_.size()));
  }
  return layouts_[static_cast<size_t>(layout)];
}

const ResidentTensor::Layout& ResidentTensor::at(int layout) const {
  return const_cast<ResidentTensor*>(this)->at(layout);
}

bool ResidentTensor::is_plain(int layout) const { return !at(layout).from_plain.has_value(); }
const dnnl::memory& ResidentTensor::memory(int layout) const { return at(layout).memory; }
float* ResidentTensor::data(int layout) { return at(layout).buffer.data(); }

void ResidentTensor::load(const float* plain, dnnl::stream& stream) {
  for (size_t i = 0; i < layouts_.size(); ++i) load(static_cast<int>(i), plain, stream);
}

// The reorders only read the caller's array: the const_cast gives it to oneDNN's handle type.
void ResidentTensor::load(int layout, const float* plain, dnnl::stream& stream) {
  Layout& l = at(layout);
  if (!l.from_plain) {
    std::copy_n(plain, l.buffer.size(), l.buffer.data());
    return;
  }
  caller_.set_data_handle(const_cast<float*>(plain));
  l.from_plain->execute(stream);
  l.loaded_from = nullptr;
}

void ResidentTensor::load_unless_held(int layout, const float* plain, dnnl::stream& stream) {
  if (plain != nullptr && at(layout).loaded_from == plain) return;
  load(layout, plain, stream);
  at(layout).loaded_from = plain;
}

void ResidentTensor::forget_loads() {
  for (Layout& l : layouts_) l.loaded_from = nullptr;
}

void ResidentTensor::store(int layout, float* plain, dnnl::stream& stream) {
  Layout& l = at(layout);
  if (!l.to_plain) {
    std::copy_n(l.buffer.data(), l.buffer.size(), plain);
    return;
  }
  caller_.set_data_handle(plain);
  l.to_plain->execute(stream);
}

void ResidentTensor::bind(int layout, float* caller) {
  if (!is_plain(layout)) throw Error("resident tensor: only a plain layout can be bound");
  at(layout).memory.set_data_handle(caller);
}

void ResidentTensor::unbind(int layout) {
  Layout& l = at(layout);
  l.memory.set_data_handle(l.buffer.data());
}

}  // namespace convgrid::kernel
