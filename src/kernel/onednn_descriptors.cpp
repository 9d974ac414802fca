// oneDNN descriptors of the three passes. Geometry: padding_l = {pad_top, pad_left},
// padding_r = {pad_bottom, pad_right}, dilation d-1 (oneDNN counts the gaps). oneDNN checks
// (H + pad_l + pad_r - ((R-1)*dil + 1)) / stride + 1 == Ho with floor division, the formula of
// ConvShape::Ho(), so asymmetric and strided shapes whose last input rows are never read are
// described exactly as given. Groups: the weights are oneDNN's grouped 5-D ones (plain_dims),
// from which it infers the groups; without groups the descriptors are the ungrouped 4-D ones.
#include "kernel/onednn_descriptors.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "kernel/pass_tensors.hpp"

namespace convgrid::kernel {
namespace {

using dnnl::memory;

// A fully connected layer (a 1x1 filter on a 1x1 image, N > 1) is described to oneDNN as one
// image of N rows: the NCHW array of (N, C, 1, 1) is the NHWC array of (1, C, N, 1), and oneDNN's
// 1x1 kernels then block over the N rows as the rows of their matrix product (as N images of one
// pixel they run several times slower).
bool batch_as_rows(const ConvShape& s) {
  return s.N > 1 && s.H == 1 && s.W == 1 && s.R == 1 && s.S == 1 && s.stride_h == 1 && s.stride_w == 1 &&
         s.pad_top == 0 && s.pad_left == 0 && s.pad_bottom == 0 && s.pad_right == 0;
}

ConvShape described(const ConvShape& s) {
  if (!batch_as_rows(s)) return s;
  ConvShape d = s;
  d.N = 1;
  d.H = s.N;
  return d;
}

memory::desc any_desc(const ConvShape& shape, Tensor t) {
  return {plain_dims(described(shape), t), memory::data_type::f32, memory::format_tag::any};
}

memory::desc bias_desc(const ConvShape& shape, bool with_bias) {
  return with_bias ? any_desc(shape, Tensor::bias) : memory::desc();
}

struct Geometry {
  memory::dims strides, dilates, padding_l, padding_r;
};

Geometry geometry(const ConvShape& g) {
  return {{g.stride_h, g.stride_w},
          {g.dil_h - 1, g.dil_w - 1},
          {g.pad_top, g.pad_left},
          {g.pad_bottom, g.pad_right}};
}

}  // namespace

memory::desc plain_desc(const ConvShape& shape, Tensor t, const PlainStrides& strides) {
  const memory::dims dims = plain_dims(described(shape), t);
  const int64_t lead = strides.of(t);
  if (lead != 0) {
    // The dense strides of the plain layout, but for dimension 0 of the tensor (samples of an
    // activation: the rows of a fully connected layer's one image; filters of the weights,
    // which grouped weights split into group and filter within it).
    if (t != Tensor::weights && batch_as_rows(shape)) return {dims, memory::data_type::f32, {lead * dims[2], 1, lead, 1}};
    if (t == Tensor::weights && shape.groups > 1) {
      return {dims, memory::data_type::f32, {dims[1] * lead, lead, dims[3] * dims[4], dims[4], 1}};
    }
    return {dims, memory::data_type::f32, {lead, dims[2] * dims[3], dims[3], 1}};
  }
  memory::format_tag tag = batch_as_rows(shape) ? memory::format_tag::nhwc : memory::format_tag::nchw;
  if (t == Tensor::weights || t == Tensor::grad_weights) {
    tag = shape.groups > 1 ? memory::format_tag::goihw : memory::format_tag::oihw;
  }
  if (t == Tensor::bias || t == Tensor::grad_bias) tag = memory::format_tag::x;
  return {dims, memory::data_type::f32, tag};
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::convolution_forward::primitive_desc forward_desc(const ConvShape& shape, bool with_bias,
                                                       const dnnl::engine& engine) {
  const Geometry geo = geometry(shape);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      any_desc(shape, Tensor::input), any_desc(shape, Tensor::weights), bias_desc(shape, with_bias),
      any_desc(shape, Tensor::output), geo.strides, geo.dilates, geo.padding_l, geo.padding_r);
  return {desc, user_scratchpad_attr(), engine};
}

dnnl::primitive_desc backward_desc(Pass p, const ConvShape& shape, bool with_bias,
                                   const dnnl::convolution_forward::primitive_desc& hint) {
  const Geometry geo = geometry(shape);
  const dnnl::engine engine = hint.get_engine();
  if (p == Pass::backward_data) {
    dnnl::convolution_backward_data::desc desc(
        dnnl::algorithm::convolution_direct, any_desc(shape, Tensor::grad_input),
        any_desc(shape, Tensor::weights), any_desc(shape, Tensor::grad_output), geo.strides,
        geo.dilates, geo.padding_l, geo.padding_r);
    return dnnl::convolution_backward_data::primitive_desc(desc, user_scratchpad_attr(), engine,
                                                           hint);
  }
  if (p == Pass::backward_weights) {
    dnnl::convolution_backward_weights::desc desc(
        dnnl::algorithm::convolution_direct, any_desc(shape, Tensor::input),
        any_desc(shape, Tensor::grad_weights), bias_desc(shape, with_bias),
        any_desc(shape, Tensor::grad_output), geo.strides, geo.dilates, geo.padding_l,
        geo.padding_r);
    return dnnl::convolution_backward_weights::primitive_desc(desc, user_scratchpad_attr(), engine,
                                                              hint);
  }
  throw Error(fmt::format("backward_desc: {} is not a backward pass", pass_name(p)));
}

}  // namespace convgrid::kernel
