// Exact words of the all-to-all between two consecutive layers' distributions (see
// redistribution.hpp).
#include "model/redistribution.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

// Elements of `s` that also lie in `t` (two slices of the same tensor, global coordinates).
// Within one run of `s` (fixed a, b, y), the part inside t's box is one x-range whose indices in
// t's flattening are contiguous, so it meets t's flat range in one range too.
int64_t overlap(const Slice& s, const Slice& t) {
  const Box4& tb = t.box;
  int64_t common = 0;
  for_each_run(s, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    if (!tb.r[0].contains(a) || !tb.r[1].contains(b) || !tb.r[2].contains(y)) return;
    const Range xs = Range{x0, x1}.intersect(tb.r[3]);
    if (xs.empty()) return;
    const int64_t first = tb.offset(a, b, y, xs.begin);
    common += Range{first, first + xs.size()}.intersect(t.flat).size();
  });
  return common;
}

int64_t words_of(const LayerLayout& from, const LayerLayout& to, int64_t rank) {
  const Slice held = from.out_slice(from.dims().coord_of(rank));
  const Slice wanted = to.in_slice(to.dims().coord_of(rank));
  return wanted.size() - overlap(wanted, held);
}

bool data_parallel(const GridDims& d) { return d.Pk == 1 && d.Pc == 1 && d.Ph == 1 && d.Pw == 1; }

}  // namespace

void validate_redistribution(const LayerLayout& from, const LayerLayout& to) {
  const ConvShape& a = from.shape();
  const ConvShape& b = to.shape();
  const auto require = [](bool ok, const char* key, int64_t got, int64_t want) {
    if (!ok) {
      throw InputError(fmt::format(
          "redistribution: next layer's {}={} does not match the previous layer's output ({})", key,
          got, want));
    }
  };
  require(b.N == a.N, "N", b.N, a.N);
  require(b.C == a.K, "C", b.C, a.K);
  require(b.H == a.Ho(), "H", b.H, a.Ho());
  require(b.W == a.Wo(), "W", b.W, a.Wo());
  if (to.dims().size() != from.dims().size()) {
    throw InputError(fmt::format("redistribution: grid {} has {} ranks, grid {} has {}",
                                 from.dims().to_string(), from.dims().size(), to.dims().to_string(),
                                 to.dims().size()));
  }
}

int64_t redistribution_words(const LayerLayout& from, const LayerLayout& to, int64_t rank) {
  validate_redistribution(from, to);
  if (rank < 0 || rank >= from.dims().size()) {
    throw InputError(
        fmt::format("redistribution: rank={} is outside [0, {})", rank, from.dims().size()));
  }
  return words_of(from, to, rank);
}

int64_t redistribution_messages(const LayerLayout& from) { return from.dims().size() > 1 ? 1 : 0; }

RedistributionStats redistribution_stats(const LayerLayout& from, const LayerLayout& to) {
  validate_redistribution(from, to);
  if (from.dims() == to.dims() && data_parallel(from.dims())) return {};
  const int64_t ranks = from.dims().size();
  RedistributionStats stats;
  int64_t total = 0;
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t w = words_of(from, to, r);
    stats.max_words = std::max(stats.max_words, w);
    total += w;
  }
  stats.mean_words = static_cast<double>(total) / static_cast<double>(ranks);
  return stats;
}

}  // namespace convgrid
