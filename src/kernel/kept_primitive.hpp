// A oneDNN primitive bound once to its arguments and to a scratchpad kept in a Buffer, so that
// executing it allocates nothing. Its descriptor must be created with user_scratchpad_attr().
#pragma once

#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "convgrid/memory.hpp"

namespace convgrid::kernel {

class KeptPrimitive {
 public:
  using Args = std::unordered_map<int, dnnl::memory>;

  // Creates the primitive (oneDNN's JIT compilation happens here) and its scratchpad.
  KeptPrimitive(const dnnl::primitive_desc_base& pd, Args args);

  // Runs it on the bound arguments and waits for it to finish.
  void execute(dnnl::stream& stream) const;

 private:
  dnnl::primitive primitive_;
  Buffer scratchpad_;
  Args args_;
};

}  // namespace convgrid::kernel
