// The geometry of one convolution layer (SPEC section 1), parsed from one line such as
//   N=32,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1
// Optional keys: stride=2 or 2x1 (h x w), pad=1 or 1x2 (top/left), pad_end=0x1 (bottom/right,
// defaults to pad), dilation=2 or 2x1, groups=G. Layout: NCHW activations, KCRS weights, float32.
//
// Groups: the C input and K output channels fall into G groups of C/G and K/G consecutive ones
// (G divides both); output channel k reads only the input channels of its group, k / (K/G).
// The weights are then K x C/G x R x S (ONNX's and PyTorch's layout). G = C = K is the depthwise
// convolution.
//
// A ConvShape is always valid: the constructor path (parse or validate()) checks every value and
// computes every element, byte and flop count with 64-bit checked arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace convgrid {

struct ConvShape {
  int64_t N = 1, C = 1, H = 1, W = 1, K = 1, R = 1, S = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dil_h = 1, dil_w = 1;
  int64_t groups = 1;

  // Parses the one-line form; throws InputError naming the bad key and value.
  static ConvShape parse(std::string_view text);
  // Checks ranges and that every derived count fits in 64 bits; throws InputError.
  void validate() const;
  // The canonical one-line form (parse(to_string()) == *this).
  std::string to_string() const;

  int64_t Ho() const { return (H + pad_top + pad_bottom - dil_h * (R - 1) - 1) / stride_h + 1; }
  int64_t Wo() const { return (W + pad_left + pad_right - dil_w * (S - 1) - 1) / stride_w + 1; }

  // Channels of one group.
  int64_t Cg() const { return C / groups; }
  int64_t Kg() const { return K / groups; }

  int64_t input_elems() const { return N * C * H * W; }
  int64_t weight_elems() const { return K * Cg() * R * S; }
  int64_t output_elems() const { return N * K * Ho() * Wo(); }
  // Multiply-adds of one pass, N*K*(C/G)*Ho*Wo*R*S (padding taps included); flops = 2x that.
  int64_t macs() const { return N * K * Cg() * Ho() * Wo() * R * S; }
  double flops() const { return 2.0 * static_cast<double>(macs()); }

  bool operator==(const ConvShape&) const = default;
};

}  // namespace convgrid
