// Counter-based generation of reproducible tensor data (splitmix64 of seed, stream and index).
#include "io/seeded_tensor.hpp"

namespace convgrid {
uint64_t splitmix64(uint64_t x) {
  x += kSplitmixGamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

float seeded_value(uint64_t seed, TensorStream stream, uint64_t index) {
  uint64_t h = splitmix64(splitmix64(seed ^ (static_cast<uint64_t>(stream) << 56)) + index);
  // 24 random bits -> [0, 1) -> [-1, 1)
  return static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

void fill_seeded(const Slice& slice, const Box4& global, uint64_t seed, TensorStream stream,
                 float* out) {
  for_each_run(slice, [&](int64_t a, int64_t b, int64_t c, int64_t x0, int64_t x1, int64_t off) {
    const int64_t base = global.offset(a, b, c, x0);
    for (int64_t x = 0; x < x1 - x0; ++x) {
      out[off + x] = seeded_value(seed, stream, static_cast<uint64_t>(base + x));
    }
  });
}

}  // namespace convgrid
