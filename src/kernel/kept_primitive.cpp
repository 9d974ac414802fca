// KeptPrimitive: creation with a kept scratchpad, and execution.
#include "kernel/kept_primitive.hpp"

#include <utility>

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid::kernel {

KeptPrimitive::KeptPrimitive(const dnnl::primitive_desc_base& pd, Args args)
    : primitive_(pd.get()), args_(std::move(args)) {
  const dnnl::memory::desc scratch = pd.scratchpad_desc();
  const auto bytes = static_cast<int64_t>(scratch.get_size());
  if (bytes == 0) return;
  scratchpad_ = Buffer((bytes + static_cast<int64_t>(sizeof(float)) - 1) /
                       static_cast<int64_t>(sizeof(float)));
  args_.insert_or_assign(DNNL_ARG_SCRATCHPAD,
                         dnnl::memory(scratch, pd.get_engine(), scratchpad_.data()));
}

void KeptPrimitive::execute(dnnl::stream& stream) const {
  try {
    primitive_.execute(stream, args_);
    stream.wait();
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN execution failed: {}", e.what()));
  }
}

}  // namespace convgrid::kernel
