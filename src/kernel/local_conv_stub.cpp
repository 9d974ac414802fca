// TEMPORARY stub so that the skeleton links; the kernel work replaces this file.
#include "convgrid/local_conv.hpp"
namespace convgrid {
std::string_view pass_name(Pass p) {
  switch (p) {
    case Pass::forward: return "forward";
    case Pass::backward_data: return "backward_data";
    case Pass::backward_weights: return "backward_weights";
  }
  return "?";
}
}  // namespace convgrid
