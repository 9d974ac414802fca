// The buffers GridConv allocates, pass by pass, mirrored from algo/grid_conv.cpp.
#include "model/grid_memory.hpp"

#include <algorithm>

#include "model/grid_volume.hpp"

namespace convgrid {

int64_t grid_memory_bytes(const LayerLayout& L, GridCoord g, const std::vector<Pass>& passes,
                          Backend engine) {
  const GridDims& d = L.dims();
  const Box4 in_block = L.in_block(g), needed = L.in_needed(g), out_block = L.out_block(g);
  const int64_t ker_block = L.ker_block(g).volume();
  int64_t halo_recv = 0, halo_send = 0;
  for (const HaloPiece& p : L.halo_recv(g)) halo_recv += p.words;
  for (const HaloPiece& p : L.halo_send(g)) halo_send += p.words;
  const bool in_place = L.input_inside_block(g);
  int64_t in_read_total = 0;
  int64_t in_read_own = 0;
  const Range fibre = L.in_fibre_of(g.k);
  for (int64_t j = fibre.begin; j < fibre.end; ++j) {
    GridCoord o = g;
    o.k = j;
    const int64_t n = L.read_count(L.in_slice(o));
    in_read_total += n;
    if (j == g.k) in_read_own = n;
  }

  int64_t words = 0;      // slices and blocks
  int64_t send = 0, recv = 0;  // staging, grown to the largest use
  bool in_gathered = false, ker_gathered = false, dout_gathered = false;
  auto gather_input = [&] {
    if (in_gathered || in_place) return;
    in_gathered = true;
    words += in_block.volume() + needed.volume();
    send = std::max({send, in_read_own, halo_send});
    recv = std::max({recv, in_read_total, halo_recv});
  };
  auto gather_weights = [&] {
    if (ker_gathered || d.nhw_size() == 1) return;
    ker_gathered = true;
    words += ker_block;
  };
  auto gather_grad_output = [&] {
    if (dout_gathered || d.Pc == 1) return;
    dout_gathered = true;
    words += out_block.volume();
    recv = std::max(recv, out_block.volume());
  };
  const int64_t in_slice = L.in_slice(g).size(), ker_slice = L.ker_slice(g).size();
  const int64_t out_slice = L.out_slice(g).size();
  bool has_in = false, has_ker = false, has_dout = false;
  for (Pass p : passes) {
    switch (p) {
      case Pass::forward:
        has_in = has_ker = true;
        words += out_slice;  // Out
        gather_input();
        gather_weights();
        if (d.Pc > 1) {
          words += out_block.volume();  // partial Out
          send = std::max(send, out_block.volume());
        }
        break;
      case Pass::backward_data:
        has_ker = has_dout = true;
        words += in_slice;  // dIn
        gather_grad_output();
        gather_weights();
        if (!in_place) {
          // Partial dIn on the needed input, then algo/input_gradient's owned block (unless it is
          // the needed box) and staging.
          words += needed.volume() + (needed == in_block ? 0 : in_block.volume());
          words += std::max(halo_recv, in_read_total) + std::max(halo_send, in_read_own);
        }
        break;
      case Pass::backward_weights:
        has_in = has_dout = true;
        words += ker_slice;  // dKer
        gather_input();
        gather_grad_output();
        if (d.nhw_size() > 1) words += ker_block;  // partial dKer
        break;
    }
  }
  words += (has_in ? in_slice : 0) + (has_ker ? ker_slice : 0) + (has_dout ? out_slice : 0);
  return 4 * (words + send + recv) + engine_bytes(in_place ? L.block_shape(g) : L.local_shape(g), false, engine, passes);
}

}  // namespace convgrid
