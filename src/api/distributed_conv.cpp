// The public distributed convolution (convgrid/distributed_conv.hpp) on the internal one: a
// ProcessGrid over a duplicate of the user's communicator, the DistConv that make_dist_conv
// builds for the plan's algorithm, and one TrafficCounter reset before each pass.
#include "convgrid/distributed_conv.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "algo/dist_conv.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

ConvAlgorithm algorithm_named(const std::string& name) {
  if (name == "grid") return ConvAlgorithm::grid;
  if (name == "streamed") return ConvAlgorithm::streamed;
  throw InputError(fmt::format("DistributedConv: algorithm '{}' is not 'grid' or 'streamed'", name));
}

TensorSlice public_slice(const Slice& s) {
  TensorSlice t;
  for (int d = 0; d < 4; ++d) {
    t.begin[d] = s.box.r[d].begin;
    t.end[d] = s.box.r[d].end;
  }
  t.flat_begin = s.flat.begin;
  t.flat_end = s.flat.end;
  return t;
}

}  // namespace

struct DistributedConv::Impl {
  LayerPlan plan;
  LayerLayout layout;  // checks that the grid fits the layer, before any MPI call
  ProcessGrid grid;
  std::unique_ptr<DistConv> conv;
  TrafficCounter traffic;

  Impl(const LayerPlan& p, MPI_Comm comm)
      : plan(p),
        layout(p.shape, p.grid),
        grid(p.grid, Communicator::duplicate(comm)),
        conv(make_dist_conv(plan, grid)) {}
};

DistributedConv::DistributedConv(const LayerPlanSummary& s, MPI_Comm comm) {
  LayerPlan plan{s.shape, s.grid, algorithm_named(s.algorithm), s.panels, {}, 0};
  impl_ = std::make_unique<Impl>(plan, comm);
}

DistributedConv::DistributedConv(const ConvShape& shape, const GridDims& grid, MPI_Comm comm)
    : impl_(std::make_unique<Impl>(LayerPlan{shape, grid, ConvAlgorithm::grid, 0, {}, 0}, comm)) {}

DistributedConv::~DistributedConv() = default;
DistributedConv::DistributedConv(DistributedConv&&) noexcept = default;
DistributedConv& DistributedConv::operator=(DistributedConv&&) noexcept = default;

const ConvShape& DistributedConv::shape() const { return impl_->plan.shape; }
const GridDims& DistributedConv::grid() const { return impl_->plan.grid; }
GridCoord DistributedConv::coord() const { return impl_->grid.coord(); }

TensorSlice DistributedConv::input_slice() const { return public_slice(impl_->layout.in_slice(coord())); }
TensorSlice DistributedConv::weight_slice() const { return public_slice(impl_->layout.ker_slice(coord())); }
TensorSlice DistributedConv::output_slice() const { return public_slice(impl_->layout.out_slice(coord())); }

void DistributedConv::forward(const float* in, const float* ker, float* out) {
  impl_->traffic.reset();
  impl_->conv->forward(in, ker, out, impl_->traffic);
}

void DistributedConv::backward_data(const float* grad_out, const float* ker, float* grad_in) {
  impl_->traffic.reset();
  impl_->conv->backward_data(grad_out, ker, grad_in, impl_->traffic);
}

void DistributedConv::backward_weights(const float* grad_out, const float* in, float* grad_ker) {
  impl_->traffic.reset();
  impl_->conv->backward_weights(grad_out, in, grad_ker, impl_->traffic);
}

void DistributedConv::new_step() { impl_->conv->new_step(); }

int64_t DistributedConv::last_words() const { return impl_->traffic.traffic().words(); }

int64_t DistributedConv::modelled_words(Pass pass, const std::vector<Pass>& step) const {
  if (std::find(step.begin(), step.end(), pass) == step.end()) {
    throw InputError(fmt::format("DistributedConv::modelled_words: pass {} is not in the step", pass_name(pass)));
  }
  return ::convgrid::modelled_words(impl_->plan, impl_->layout, coord(), pass, step);
}

}  // namespace convgrid
