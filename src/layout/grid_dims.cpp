// Parsing, validation and enumeration of processor-grid extents.
#include "convgrid/grid_dims.hpp"

#include <charconv>

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid {

GridDims GridDims::parse(std::string_view text) {
  std::array<int64_t, 5> e{};
  std::string_view rest = text;
  for (int i = 0; i < 5; ++i) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    if ((i < 4) == (comma == std::string_view::npos)) {
      throw InputError(fmt::format("grid '{}' must have five extents Pn,Pk,Pc,Ph,Pw", text));
    }
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), e[i]);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || e[i] < 1 ||
        e[i] > (int64_t{1} << 31)) {
      throw InputError(fmt::format("grid '{}': extent '{}' is not a positive integer", text, item));
    }
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  int64_t product = 1;
  for (int64_t x : e) {
    if (__builtin_mul_overflow(product, x, &product) || product > (int64_t{1} << 31)) {
      throw InputError(fmt::format("grid '{}' has more than 2^31 ranks", text));
    }
  }
  return {e[0], e[1], e[2], e[3], e[4]};
}

std::string GridDims::to_string() const { return fmt::format("{},{},{},{},{}", Pn, Pk, Pc, Ph, Pw); }

void GridDims::validate_for(const ConvShape& s) const {
  const struct {
    const char* name;
    int64_t extent;
    const char* dim;
    int64_t size;
  } checks[] = {{"Pn", Pn, "N", s.N},     {"Pk", Pk, "K", s.K},     {"Pc", Pc, "C", s.C},
                {"Ph", Ph, "Ho", s.Ho()}, {"Pw", Pw, "Wo", s.Wo()}};
  for (auto& c : checks) {
    if (c.extent < 1) throw InputError(fmt::format("grid {}: {}={} must be at least 1", to_string(), c.name, c.extent));
    if (c.extent > c.size) {
      throw InputError(fmt::format("grid {}: {}={} is larger than {}={} (blocks would be empty)",
                                   to_string(), c.name, c.extent, c.dim, c.size));
    }
  }
  const int64_t G = s.groups;
  if (G == 1) return;
  if (Pk < G && Pc != 1) {
    throw InputError(fmt::format("grid {}: Pc={} with Pk={} < groups={}: a rank holding several whole groups "
                                 "cannot split their input channels (Pc must be 1, or Pk a multiple of {})",
                                 to_string(), Pc, Pk, G, G));
  }
  if (Pk > G && Pk % G != 0) {
    throw InputError(fmt::format("grid {}: Pk={} with groups={}: Pk must be at most {} or a multiple of it",
                                 to_string(), Pk, G, G));
  }
  if (Pk >= G && Pc > s.Cg()) {
    throw InputError(fmt::format("grid {}: Pc={} is larger than C/groups={} (blocks would be empty)", to_string(),
                                 Pc, s.Cg()));
  }
}

void GridDims::validate_size(int64_t ranks) const {
  if (size() != ranks) {
    throw InputError(fmt::format("grid {} has {} ranks but the job has {}", to_string(), size(), ranks));
  }
}

GridCoord GridDims::coord_of(int64_t rank) const {
  GridCoord c;
  c.w = rank % Pw;
  rank /= Pw;
  c.h = rank % Ph;
  rank /= Ph;
  c.c = rank % Pc;
  rank /= Pc;
  c.k = rank % Pk;
  c.n = rank / Pk;
  return c;
}

std::vector<GridDims> all_grids(int64_t P) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= P; ++d) {
    if (P % d == 0) divisors.push_back(d);
  }
  std::vector<GridDims> out;
  for (int64_t a : divisors)
    for (int64_t b : divisors) {
      if ((P / a) % b) continue;
      for (int64_t c : divisors) {
        if ((P / a / b) % c) continue;
        for (int64_t d : divisors) {
          if ((P / a / b / c) % d) continue;
          out.push_back({a, b, c, d, P / a / b / c / d});
        }
      }
    }
  return out;
}

}  // namespace convgrid
