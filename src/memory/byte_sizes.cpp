// Byte sizes as people write them (see byte_sizes.hpp).
#include "memory/byte_sizes.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "convgrid/error.hpp"

namespace convgrid {

int64_t parse_bytes(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string unit(end, text.data() + text.size());
  int64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KiB" || unit == "K") scale = int64_t{1} << 10;
  else if (unit == "MiB" || unit == "M") scale = int64_t{1} << 20;
  else if (unit == "GiB" || unit == "G") scale = int64_t{1} << 30;
  if (ec != std::errc() || scale == 0 || !(value > 0) || value * scale > 9.0e18) {
    throw InputError(fmt::format("memory size '{}' is not a positive number of bytes, KiB, MiB or GiB", text));
  }
  return static_cast<int64_t>(std::floor(value * static_cast<double>(scale)));
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace convgrid
