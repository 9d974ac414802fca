// The loop-nest reference of the three passes (SPEC section 1): the test oracle and the
// Backend::reference of LocalConv. Every output element is one sum accumulated in double, in
// plain loop order, over the taps whose input pixel y = h*sh + r*dh - pad_top,
// x = w*sw + s*dw - pad_left lies inside the image (padding reads zero), and over the channels
// of one group: output channel k reads input channels [g*Cg, (g+1)*Cg) of its group g = k / Kg,
// through weights Ker[k, c - g*Cg, r, s] (K x Cg x R x S).
#include "convgrid/local_conv.hpp"

namespace convgrid::reference {
namespace {

// Index of element (a, b, i, j) of a dense 4-D array of extents (*, B, I, J).
inline int64_t at(int64_t a, int64_t b, int64_t i, int64_t j, int64_t B, int64_t I, int64_t J) {
  return ((a * B + b) * I + i) * J + j;
}

}  // namespace

void forward(const ConvShape& g, const float* in, const float* ker, const float* bias, float* out) {
  const int64_t Ho = g.Ho(), Wo = g.Wo(), Cg = g.Cg(), Kg = g.Kg();
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t k = 0; k < g.K; ++k) {
      const int64_t c0 = k / Kg * Cg;  // the first input channel of k's group
      for (int64_t h = 0; h < Ho; ++h) {
        for (int64_t w = 0; w < Wo; ++w) {
          double acc = bias != nullptr ? bias[k] : 0.0;
          for (int64_t c = 0; c < Cg; ++c) {
            for (int64_t r = 0; r < g.R; ++r) {
              for (int64_t s = 0; s < g.S; ++s) {
                const int64_t y = h * g.stride_h + r * g.dil_h - g.pad_top;
                const int64_t x = w * g.stride_w + s * g.dil_w - g.pad_left;
                if (y < 0 || y >= g.H || x < 0 || x >= g.W) continue;
                acc += double{in[at(n, c0 + c, y, x, g.C, g.H, g.W)]} *
                       double{ker[at(k, c, r, s, Cg, g.R, g.S)]};
              }
            }
          }
          out[at(n, k, h, w, g.K, Ho, Wo)] = static_cast<float>(acc);
        }
      }
    }
  }
}

// Gathered per input pixel: output (h, w) reads (y, x) through tap (r, s) exactly when
// h*sh = y + pad_top - r*dh and w*sw = x + pad_left - s*dw.
void backward_data(const ConvShape& g, const float* dout, const float* ker, float* din) {
  const int64_t Ho = g.Ho(), Wo = g.Wo(), Cg = g.Cg(), Kg = g.Kg();
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t c = 0; c < g.C; ++c) {
      const int64_t k0 = c / Cg * Kg, cg = c % Cg;  // c's group's first filter, c within it
      for (int64_t y = 0; y < g.H; ++y) {
        for (int64_t x = 0; x < g.W; ++x) {
          double acc = 0.0;
          for (int64_t k = k0; k < k0 + Kg; ++k) {
            for (int64_t r = 0; r < g.R; ++r) {
              for (int64_t s = 0; s < g.S; ++s) {
                const int64_t hs = y + g.pad_top - r * g.dil_h;
                const int64_t ws = x + g.pad_left - s * g.dil_w;
                if (hs < 0 || ws < 0 || hs % g.stride_h != 0 || ws % g.stride_w != 0) continue;
                const int64_t h = hs / g.stride_h, w = ws / g.stride_w;
                if (h >= Ho || w >= Wo) continue;
                acc += double{dout[at(n, k, h, w, g.K, Ho, Wo)]} *
                       double{ker[at(k, cg, r, s, Cg, g.R, g.S)]};
              }
            }
          }
          din[at(n, c, y, x, g.C, g.H, g.W)] = static_cast<float>(acc);
        }
      }
    }
  }
}

void backward_weights(const ConvShape& g, const float* dout, const float* in, float* dker,
                      float* dbias) {
  const int64_t Ho = g.Ho(), Wo = g.Wo(), Cg = g.Cg(), Kg = g.Kg();
  for (int64_t k = 0; k < g.K; ++k) {
    const int64_t c0 = k / Kg * Cg;  // the first input channel of k's group
    for (int64_t c = 0; c < Cg; ++c) {
      for (int64_t r = 0; r < g.R; ++r) {
        for (int64_t s = 0; s < g.S; ++s) {
          double acc = 0.0;
          for (int64_t n = 0; n < g.N; ++n) {
            for (int64_t h = 0; h < Ho; ++h) {
              for (int64_t w = 0; w < Wo; ++w) {
                const int64_t y = h * g.stride_h + r * g.dil_h - g.pad_top;
                const int64_t x = w * g.stride_w + s * g.dil_w - g.pad_left;
                if (y < 0 || y >= g.H || x < 0 || x >= g.W) continue;
                acc += double{dout[at(n, k, h, w, g.K, Ho, Wo)]} *
                       double{in[at(n, c0 + c, y, x, g.C, g.H, g.W)]};
              }
            }
          }
          dker[at(k, c, r, s, Cg, g.R, g.S)] = static_cast<float>(acc);
        }
      }
    }
  }
  if (dbias == nullptr) return;
  for (int64_t k = 0; k < g.K; ++k) {
    double acc = 0.0;
    for (int64_t n = 0; n < g.N; ++n) {
      for (int64_t i = 0; i < Ho * Wo; ++i) acc += dout[(n * g.K + k) * Ho * Wo + i];
    }
    dbias[k] = static_cast<float>(acc);
  }
}

}  // namespace convgrid::reference
