// The tensor roles of the three passes, their plain extents, and the names of passes and
// tensors.
#include "kernel/pass_tensors.hpp"

namespace convgrid {

std::string_view pass_name(Pass p) {
  switch (p) {
    case Pass::forward:
      return "forward";
    case Pass::backward_data:
      return "backward_data";
    case Pass::backward_weights:
      return "backward_weights";
  }
  return "?";
}

std::string_view tensor_name(Tensor t) {
  switch (t) {
    case Tensor::input:
      return "input";
    case Tensor::weights:
      return "weights";
    case Tensor::bias:
      return "bias";
    case Tensor::output:
      return "output";
    case Tensor::grad_output:
      return "grad_output";
    case Tensor::grad_input:
      return "grad_input";
    case Tensor::grad_weights:
      return "grad_weights";
    case Tensor::grad_bias:
      return "grad_bias";
  }
  return "?";
}

namespace kernel {

std::vector<PassArgument> pass_arguments(Pass p, bool with_bias) {
  std::vector<PassArgument> args;
  switch (p) {
    case Pass::forward:
      args = {{Tensor::input, DNNL_ARG_SRC, false},
              {Tensor::weights, DNNL_ARG_WEIGHTS, false},
              {Tensor::output, DNNL_ARG_DST, true}};
      if (with_bias) args.push_back({Tensor::bias, DNNL_ARG_BIAS, false});
      break;
    case Pass::backward_data:
      args = {{Tensor::grad_output, DNNL_ARG_DIFF_DST, false},
              {Tensor::weights, DNNL_ARG_WEIGHTS, false},
              {Tensor::grad_input, DNNL_ARG_DIFF_SRC, true}};
      break;
    case Pass::backward_weights:
      args = {{Tensor::grad_output, DNNL_ARG_DIFF_DST, false},
              {Tensor::input, DNNL_ARG_SRC, false},
              {Tensor::grad_weights, DNNL_ARG_DIFF_WEIGHTS, true}};
      if (with_bias) args.push_back({Tensor::grad_bias, DNNL_ARG_DIFF_BIAS, true});
      break;
  }
  return args;
}

dnnl::memory::dims plain_dims(const ConvShape& g, Tensor t) {
  switch (t) {
    case Tensor::input:
    case Tensor::grad_input:
      return {g.N, g.C, g.H, g.W};
    case Tensor::weights:
    case Tensor::grad_weights:
      if (g.groups > 1) return {g.groups, g.Kg(), g.Cg(), g.R, g.S};
      return {g.K, g.C, g.R, g.S};
    case Tensor::output:
    case Tensor::grad_output:
      return {g.N, g.K, g.Ho(), g.Wo()};
    case Tensor::bias:
    case Tensor::grad_bias:
      return {g.K};
  }
  return {};
}

}  // namespace kernel
}  // namespace convgrid
