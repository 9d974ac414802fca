// Local (one-rank) convolution of the three passes (SPEC section 1), the engine every
// distributed algorithm calls for its local work.
//
//   forward:          Out[n,k,h,w]  = sum_{c,r,s} In[n,c,y,x] * Ker[k,c,r,s] (+ bias[k])
//   backward-data:    dIn[n,c,y,x]  = sum_{k,r,s} dOut[n,k,h,w] * Ker[k,c,r,s]
//   backward-weights: dKer[k,c,r,s] = sum_{n,h,w} dOut[n,k,h,w] * In[n,c,y,x]  (dBias[k] = sum dOut)
// with y = h*sh + r*dh - pad_top, x = w*sw + s*dw - pad_left; out-of-range y,x read 0.
// Activations NCHW, weights KCRS, float32. Every call overwrites its output.
//
// Two backends: oneDNN (the fast one) and a plain loop nest (the test oracle and fallback).
#pragma once

#include <memory>
#include <string_view>

#include "convgrid/conv_shape.hpp"

namespace convgrid {

enum class Pass { forward, backward_data, backward_weights };
std::string_view pass_name(Pass p);  // "forward", "backward_data", "backward_weights"

enum class Backend { onednn, reference };

namespace reference {
// The loop-nest reference. bias / dbias may be null.
void forward(const ConvShape& s, const float* in, const float* ker, const float* bias, float* out);
void backward_data(const ConvShape& s, const float* dout, const float* ker, float* din);
void backward_weights(const ConvShape& s, const float* dout, const float* in, float* dker,
                      float* dbias);
}  // namespace reference

// One layer's local convolution: oneDNN primitives are created once per shape and pass (on first
// use) and every scratch buffer is kept, so steady-state calls allocate nothing.
class LocalConv {
 public:
  LocalConv(const ConvShape& shape, bool with_bias, Backend backend = Backend::onednn);
  ~LocalConv();
  LocalConv(LocalConv&&) noexcept;
  LocalConv& operator=(LocalConv&&) noexcept;

  const ConvShape& shape() const;
  Backend backend() const;
  bool with_bias() const;

  // Plain-layout calls (NCHW / KCRS pointers). bias is required iff with_bias; dbias may be null.
  void forward(const float* in, const float* ker, const float* bias, float* out);
  void backward_data(const float* dout, const float* ker, float* din);
  void backward_weights(const float* dout, const float* in, float* dker, float* dbias);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convgrid
