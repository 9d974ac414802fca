// The distributed convolution for users of the library: one layer on a processor grid over an
// MPI communicator, run pass by pass on this rank's at-rest slices (SPEC sections 3-5).
//
// Every rank of the communicator builds one (collective) and calls the same passes in the same
// order. Each tensor is split once over the ranks; a rank passes in and gets back only its own
// slice, a dense float32 array laid out as the TensorSlice describes (convgrid/tensor_slice.hpp):
//   input, grad_input    : input_slice()  of In   (N, C, H, W)
//   weights, grad_weights: weight_slice() of Ker  (K, C/groups, R, S)
//   output, grad_output  : output_slice() of Out  (N, K, Ho, Wo)
// What moves over which fibre is the algorithm's (SPEC section 4); the words this rank received
// in the last pass are counted and equal the model's figure (modelled_words).
//
//   convgrid::DistributedConv conv(plan, MPI_COMM_WORLD);
//   std::vector<float> in(conv.input_slice().size()), ker(conv.weight_slice().size()),
//                      out(conv.output_slice().size());
//   ... fill in and ker ...
//   conv.forward(in.data(), ker.data(), out.data());
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "convgrid/grid_dims.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/planner.hpp"
#include "convgrid/tensor_slice.hpp"

namespace convgrid {

class DistributedConv {
 public:
  // Collective over `comm` (duplicated; the caller keeps its own). Throws InputError when the
  // grid's size differs from the communicator's or the grid does not fit the layer.
  DistributedConv(const LayerPlanSummary& plan, MPI_Comm comm);
  // The grid algorithm on `grid`.
  DistributedConv(const ConvShape& shape, const GridDims& grid, MPI_Comm comm);
  ~DistributedConv();
  DistributedConv(DistributedConv&&) noexcept;
  DistributedConv& operator=(DistributedConv&&) noexcept;

  const ConvShape& shape() const;
  const GridDims& grid() const;
  GridCoord coord() const;  // this rank's place on the grid

  TensorSlice input_slice() const;
  TensorSlice weight_slice() const;
  TensorSlice output_slice() const;

  // The passes; each overwrites its output slice.
  void forward(const float* in, const float* ker, float* out);
  void backward_data(const float* grad_out, const float* ker, float* grad_in);
  void backward_weights(const float* grad_out, const float* in, float* grad_ker);
  // Forgets operands kept from earlier passes: call when the data change (every step).
  void new_step();

  // The words this rank received in the last pass.
  int64_t last_words() const;
  // The words the model says this rank receives in `pass` of a step that runs `step` in order
  // from new_step() (pass must be in it).
  int64_t modelled_words(Pass pass, const std::vector<Pass>& step) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convgrid
