// One tensor held by LocalConv between calls, in every layout a prepared pass uses it in
// (usually one; two when, say, forward and backward-data prefer different weight blockings).
// Each layout lives in a Buffer, with the reorders between it and the plain layout created
// once; a plain layout needs no reorder, only a copy, and can be pointed at a caller's array.
#pragma once

#include <optional>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "convgrid/memory.hpp"
#include "kernel/kept_primitive.hpp"

namespace convgrid::kernel {

class ResidentTensor {
 public:
  ResidentTensor(const dnnl::memory::desc& plain, const dnnl::engine& engine);

  // The index of layout `desc`, added (zero-filled, with its reorders) if it is new.
  int layout(const dnnl::memory::desc& desc);
  bool has_layouts() const { return !layouts_.empty(); }
  bool is_plain(int layout) const;
  const dnnl::memory& memory(int layout) const;
  float* data(int layout);

  // Plain data in (into every layout, or one) and out (from one layout).
  void load(const float* plain, dnnl::stream& stream);
  void load(int layout, const float* plain, dnnl::stream& stream);
  // The same, skipping the reorder when `plain` is the array last reordered into that layout
  // since forget_loads(): the caller vouches that it has not changed in between.
  void load_unless_held(int layout, const float* plain, dnnl::stream& stream);
  void forget_loads();
  void store(int layout, float* plain, dnnl::stream& stream);

  // Points plain layout `layout` at a caller's array, and back at its own buffer.
  void bind(int layout, float* caller);
  void unbind(int layout);

 private:
  struct Layout {
    dnnl::memory::desc desc;
    Buffer buffer;
    dnnl::memory memory;
    std::optional<KeptPrimitive> from_plain, to_plain;  // absent for the plain layout
    const float* loaded_from = nullptr;  // the array last reordered in by load_unless_held
  };

  Layout& at(int layout);
  const Layout& at(int layout) const;

  dnnl::memory::desc plain_;
  dnnl::engine engine_;
  dnnl::memory caller_;  // the plain view of a caller's array that the reorders read or write
  std::vector<Layout> layouts_;
};

}  // namespace convgrid::kernel
