// Reverse halo and input-fibre reduce-scatter of the input gradient (see input_gradient.hpp).
#include "algo/input_gradient.hpp"

#include <algorithm>
#include <numeric>
#include <span>

#include "comm/collectives.hpp"
#include "layout/fibre_slices.hpp"
#include "layout/pack.hpp"

namespace convgrid {

void reduce_input_gradient(const LayerLayout& L, const ProcessGrid& grid, const Communicator& in_fibre,
                           float* needed, float* din, const InputGradientBuffers& b, TrafficCounter& traffic) {
  const GridCoord g = grid.coord();
  const int64_t me = g.k % L.in_fibre_size();
  const ReadPixels* read = &L.read();
  const Box4 block_box = L.in_block(g), needed_box = L.in_needed(g);
  const std::vector<HaloPiece> halo_recv = L.halo_recv(g), halo_send = L.halo_send(g);
  const FibreSlices f(L, g);
  const std::vector<Slice>& slices = f.in;
  const std::vector<int64_t>& counts = f.in_read;
  int64_t halo_in = 0, halo_out = 0;
  for (const HaloPiece& p : halo_recv) halo_in += p.words;
  for (const HaloPiece& p : halo_send) halo_out += p.words;
  const int64_t all = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  const auto grow = [](Buffer& buf, int64_t n) {  // the old buffer is freed first (see grid_conv.cpp)
    if (buf.size() < n) {
      buf = Buffer();
      buf = Buffer(n);
    }
    return buf.data();
  };
  float* send = grow(b.send, std::max(halo_in, all));
  float* recv = grow(b.recv, std::max(halo_out, counts[me]));
  // Without halo either way the needed input is the owned block: reduce it where it lies.
  const bool same = needed_box == block_box;
  float* dblock = same ? needed : grow(b.block, block_box.volume());
  if (!same) {
    std::fill(dblock, dblock + block_box.volume(), 0.0f);
    copy_box(Slice::whole(needed_box.intersect(block_box)), read, needed_box, needed, block_box, dblock);
  }
  // The reverse halo sends what the forward halo received, and receives what it sent.
  b.sends.clear();
  b.recvs.clear();
  int64_t offset = 0;
  for (const HaloPiece& p : halo_recv) {
    pack_box(Slice::whole(p.box), read, needed_box, needed, send + offset);
    b.sends.push_back({static_cast<int>(p.peer), send + offset, p.words});
    offset += p.words;
  }
  offset = 0;
  for (const HaloPiece& p : halo_send) {
    b.recvs.push_back({static_cast<int>(p.peer), recv + offset, p.words});
    offset += p.words;
  }
  exchange(grid.spatial(), b.sends, b.recvs, traffic);
  offset = 0;
  for (const HaloPiece& p : halo_send) {
    offset += unpack_box(Slice::whole(p.box), read, recv + offset, block_box, dblock, true);
  }
  offset = 0;
  for (size_t j = 0; j < slices.size(); ++j) {
    pack_box(slices[j], read, block_box, dblock, send + offset);
    offset += counts[j];
  }
  reduce_scatter(in_fibre, std::span<const float>(send, static_cast<size_t>(all)),
                 std::span<float>(recv, static_cast<size_t>(counts[me])), counts, traffic);
  if (!read->all_read()) std::fill(din, din + slices[me].size(), 0.0f);
  unpack_slice(slices[me], read, recv, din);
}

}  // namespace convgrid
