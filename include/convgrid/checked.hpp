// 64-bit checked arithmetic for element, byte and flop counts: every product or sum that could
// overflow goes through these, and an overflow becomes an InputError naming what was computed.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid {

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw InputError(fmt::format("{} overflows 64 bits ({} * {})", what, a, b));
  }
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    throw InputError(fmt::format("{} overflows 64 bits ({} + {})", what, a, b));
  }
  return r;
}

inline int64_t checked_product(std::initializer_list<int64_t> factors, std::string_view what) {
  int64_t r = 1;
  for (int64_t f : factors) r = checked_mul(r, f, what);
  return r;
}

}  // namespace convgrid
