// Per-rank communication volume of the grid algorithm, pass by pass.
#include "model/grid_volume.hpp"

#include "model/collective_rounds.hpp"

namespace convgrid {
namespace {

constexpr int64_t kBytesPerWord = sizeof(float);

// In over the k-fibre (read pixels of the other slices) and the halo from spatial neighbours.
void gather_input(const LayerLayout& L, GridCoord g, PassVolume& v) {
  if (L.dims().Pk > 1) {
    int64_t total = 0;
    for (int64_t j = 0; j < L.dims().Pk; ++j) {
      GridCoord o = g;
      o.k = j;
      const int64_t words = L.read_count(L.in_slice(o));
      total += words;
      if (j != g.k) v.all_gather += words;
    }
    v.messages += 1;
    v.latency_steps += all_gather_rounds(L.dims().Pk, total * kBytesPerWord);
  }
  for (const HaloPiece& p : L.halo_recv(g)) {
    v.point_to_point += p.words;
    v.messages += 1;
    v.latency_steps += 1;
  }
}

// Ker block over the nhw-fibre.
void gather_weights(const LayerLayout& L, GridCoord g, PassVolume& v) {
  if (L.dims().nhw_size() > 1) {
    v.all_gather += L.ker_block(g).volume() - L.ker_slice(g).size();
    v.messages += 1;
    v.latency_steps += all_gather_rounds(L.dims().nhw_size(), L.ker_block(g).volume() * kBytesPerWord);
  }
}

// dOut block over the c-fibre.
void gather_grad_output(const LayerLayout& L, GridCoord g, PassVolume& v) {
  if (L.dims().Pc > 1) {
    v.all_gather += L.out_block(g).volume() - L.out_slice(g).size();
    v.messages += 1;
    v.latency_steps += all_gather_rounds(L.dims().Pc, L.out_block(g).volume() * kBytesPerWord);
  }
}

void reduce_scatter(int64_t fibre, int64_t own_slice_words, PassVolume& v) {
  if (fibre > 1) {
    v.reduce_scatter += (fibre - 1) * own_slice_words;
    v.messages += 1;
    v.latency_steps += reduce_scatter_rounds(fibre);
  }
}

}  // namespace

PassVolume grid_pass_volume(const LayerLayout& L, GridCoord g, Pass pass, Held held) {
  PassVolume v;
  const GridDims& d = L.dims();
  switch (pass) {
    case Pass::forward:
      if (!held.in_needed) gather_input(L, g, v);
      if (!held.ker_block) gather_weights(L, g, v);
      reduce_scatter(d.Pc, L.out_slice(g).size(), v);
      break;
    case Pass::backward_data:
      if (!held.dout_block) gather_grad_output(L, g, v);
      if (!held.ker_block) gather_weights(L, g, v);
      // Reverse halo: contributions to the rank's own input pixels from the ranks that read them.
      for (const HaloPiece& p : L.halo_send(g)) {
        v.point_to_point += p.words;
        v.messages += 1;
        v.latency_steps += 1;
      }
      reduce_scatter(d.Pk, L.read_count(L.in_slice(g)), v);
      break;
    case Pass::backward_weights:
      if (!held.in_needed) gather_input(L, g, v);
      if (!held.dout_block) gather_grad_output(L, g, v);
      reduce_scatter(d.nhw_size(), L.ker_slice(g).size(), v);
      break;
  }
  return v;
}

Held held_after(Pass pass, Held before) {
  Held h = before;
  switch (pass) {
    case Pass::forward:
      h.in_needed = true;
      h.ker_block = true;
      break;
    case Pass::backward_data:
      h.ker_block = true;
      h.dout_block = true;
      break;
    case Pass::backward_weights:
      h.in_needed = true;
      h.dout_block = true;
      break;
  }
  return h;
}

}  // namespace convgrid
