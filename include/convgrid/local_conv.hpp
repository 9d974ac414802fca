// Local (one-rank) convolution of the three passes (SPEC section 1), the engine every
// distributed algorithm calls for its local work.
//
//   forward:          Out[n,k,h,w]  = sum_{c,r,s} In[n,c,y,x] * Ker[k,c,r,s] (+ bias[k])
//   backward-data:    dIn[n,c,y,x]  = sum_{k,r,s} dOut[n,k,h,w] * Ker[k,c,r,s]
//   backward-weights: dKer[k,c,r,s] = sum_{n,h,w} dOut[n,k,h,w] * In[n,c,y,x]  (dBias[k] = sum dOut)
// with y = h*sh + r*dh - pad_top, x = w*sw + s*dw - pad_left; out-of-range y,x read 0.
// Activations NCHW, weights KCRS, float32. Every call overwrites its output.
//
// With groups (shape.groups = G > 1, Cg = C/G, Kg = K/G), filter k belongs to group
// g = k / Kg and sees only that group's channels c in [g*Cg, (g+1)*Cg): the sums over c above
// run over those channels, the sum over k over the filters [g*Kg, (g+1)*Kg) of c's group
// g = c / Cg, and Ker[k,c,r,s] reads Ker[k, c - g*Cg, r, s] of the K x Cg x R x S weights
// (dKer likewise). G = 1 is the formula as written; G = C = K the depthwise convolution.
//
// Two backends: oneDNN (the fast one) and a plain loop nest (the test oracle and fallback).
//
// Two ways to call it:
//  - plain-layout calls (forward, backward_data, backward_weights) take and return NCHW / KCRS
//    arrays (weights K x Cg x R x S); with oneDNN they reorder into and out of its preferred
//    (often blocked) layouts on every call, except for tensors whose preferred layout is the
//    plain one;
//  - the resident API (prepare, load, run, store) keeps every tensor in the engine between
//    calls, in the layout each pass prefers, so that run() is the bare primitive: no reorder,
//    no allocation. A layer loads its input once for forward and backward-weights, its
//    weights once for forward and backward-data.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "convgrid/conv_shape.hpp"

namespace convgrid {

enum class Pass { forward, backward_data, backward_weights };
std::string_view pass_name(Pass p);  // "forward", "backward_data", "backward_weights"

enum class Backend { onednn, reference };

// The tensors of the three passes, by role. Read by forward: input, weights, bias; by
// backward-data: grad_output, weights; by backward-weights: grad_output, input. Written by
// forward: output; by backward-data: grad_input; by backward-weights: grad_weights, grad_bias.
enum class Tensor {
  input,
  weights,
  bias,
  output,
  grad_output,
  grad_input,
  grad_weights,
  grad_bias
};
std::string_view tensor_name(Tensor t);  // "input", "weights", ..., "grad_bias"

// Threads of the local kernels (oneDNN runs on OpenMP, which reads OMP_NUM_THREADS when it
// loads): set_kernel_threads(n) asks for n before the next primitive runs; both return the
// count in effect.
int set_kernel_threads(int n);
int kernel_threads();

// The caller's plain arrays of the tensors the passes read, when they are not dense: the
// distance in floats between consecutive entries of dimension 0 (samples of input and
// grad_output, filters of weights, also with groups: rows of the K x Cg x R x S array), 0 for
// dense. A panel of channels read where it lies inside a larger block, say. oneDNN reorders
// such views into its layouts as it does dense arrays; the reference backend takes dense
// arrays only.
struct PlainStrides {
  int64_t input = 0, grad_output = 0, weights = 0;
  int64_t of(Tensor t) const {
    return t == Tensor::input ? input : t == Tensor::grad_output ? grad_output : t == Tensor::weights ? weights : 0;
  }
  bool dense() const { return input == 0 && grad_output == 0 && weights == 0; }
  auto operator<=>(const PlainStrides&) const = default;
};

namespace reference {
// The loop-nest reference. bias / dbias may be null.
void forward(const ConvShape& s, const float* in, const float* ker, const float* bias, float* out);
void backward_data(const ConvShape& s, const float* dout, const float* ker, float* din);
void backward_weights(const ConvShape& s, const float* dout, const float* in, float* dker,
                      float* dbias);
}  // namespace reference

// The bytes a LocalConv of `shape` keeps after running `passes` through its plain-layout calls
// (every tensor in each layout a pass prefers, the reorders' and primitives' scratchpads), as
// the memory tracker counts them; 0 for the reference backend. It creates oneDNN's descriptors
// (no tensors, nothing executed) and remembers the answer per shape and passes.
int64_t engine_bytes(const ConvShape& shape, bool with_bias, Backend backend, const std::vector<Pass>& passes,
                     const PlainStrides& strides = {});

// One layer's local convolution: oneDNN primitives are created once per shape and pass (on first
// use) and every scratch buffer is kept, so steady-state calls allocate nothing.
class LocalConv {
 public:
  // Throws Error for strides that are not dense with the reference backend.
  LocalConv(const ConvShape& shape, bool with_bias, Backend backend = Backend::onednn,
            const PlainStrides& strides = {});
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

  // Plain-layout calls reorder every array they read, by default. With reuse on, a read array
  // that the same tensor's layout was last reordered from (same pointer) since the last
  // inputs_changed() is not reordered again: forward and backward-weights reorder the input
  // once, backward-data and backward-weights the output gradient once. The caller vouches that
  // such an array does not change until it calls inputs_changed() (a distributed layer: every
  // step).
  void reuse_reordered_inputs(bool on);
  void inputs_changed();

  // Resident API. The engine keeps each tensor a prepared pass uses, in the layout that pass
  // prefers (one buffer per distinct layout; passes that agree share it), counted by
  // MemoryTracker. Typical use, one training step of a layer:
  //   conv.prepare(Pass::forward); conv.prepare(Pass::backward_data);
  //   conv.prepare(Pass::backward_weights);                  // once
  //   conv.load(Tensor::input, x); conv.load(Tensor::weights, w);
  //   conv.run(Pass::forward); conv.store(Tensor::output, y);
  //   conv.load(Tensor::grad_output, dy);
  //   conv.run(Pass::backward_data); conv.run(Pass::backward_weights);
  //   conv.store(Tensor::grad_input, dx); conv.store(Tensor::grad_weights, dw);
  // The plain-layout calls stage their data through the same buffers: after one, the resident
  // content of the tensors it used is unspecified.

  // Creates pass p (its primitive and the resident buffers it needs) unless it exists. Prepare
  // every pass before loading the tensors it reads: load fills only the layouts that exist.
  void prepare(Pass p);
  // Copies plain NCHW / KCRS / K data into t, in every layout a prepared pass reads it in (a
  // reorder per blocked layout, a copy for a plain one). Throws Error unless a prepared pass
  // reads t.
  void load(Tensor t, const float* plain);
  // Runs prepared pass p on the resident tensors, overwriting the ones it writes. Throws Error
  // if p is not prepared.
  void run(Pass p);
  // Copies t, which a prepared pass reads or writes, out to plain layout. Throws Error
  // otherwise.
  void store(Tensor t, float* plain);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convgrid
