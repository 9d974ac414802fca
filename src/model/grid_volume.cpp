// Per-rank communication volume of the grid algorithm, pass by pass.
#include "model/grid_volume.hpp"

#include <algorithm>

#include "model/node_links.hpp"

namespace convgrid {
namespace {

// One rank's pass, collective by collective: words, messages, rounds, and the links they use.
class Charges {
 public:
  Charges(const LayerLayout& L, GridCoord g, int64_t ranks_per_node) : L_(L), g_(g), node_(ranks_per_node) {}

  // In over the input fibre (read pixels of the other slices) and the halo from spatial neighbours.
  void gather_input() {
    if (L_.in_fibre_of(g_.k).size() > 1) {
      const InSlices in = in_slices();
      add_all_gather(v, L_.dims(), g_, Fibre::k, node_, in.total - in.own, in.total, in_fibre(Fibre::k));
    }
    halo(L_.halo_recv(g_));
  }

  // Ker block over the nhw-fibre.
  void gather_weights() {
    if (L_.dims().nhw_size() > 1) {
      const int64_t total = L_.ker_block(g_).volume();
      add_all_gather(v, L_.dims(), g_, Fibre::nhw, node_, total - L_.ker_slice(g_).size(), total);
    }
  }

  // dOut block over the c-fibre.
  void gather_grad_output() {
    if (L_.dims().Pc > 1) {
      const int64_t total = L_.out_block(g_).volume();
      add_all_gather(v, L_.dims(), g_, Fibre::c, node_, total - L_.out_slice(g_).size(), total);
    }
  }

  // Out over the c-fibre, dIn's read pixels over the input fibre, dKer over the nhw-fibre.
  void reduce_scatter(Fibre f) {
    int64_t own = 0, total = 0;
    switch (f) {
      case Fibre::c:
        own = L_.out_slice(g_).size(), total = L_.out_block(g_).volume();
        break;
      case Fibre::nhw:
        own = L_.ker_slice(g_).size(), total = L_.ker_block(g_).volume();
        break;
      case Fibre::k: {
        const InSlices in = in_slices();
        own = in.own, total = in.total;
        break;
      }
    }
    add_reduce_scatter(v, L_.dims(), g_, f, node_, own, total, in_fibre(f));
  }

  // One message from each neighbour that sends words, in one round (HaloExchange).
  void halo(const std::vector<HaloPiece>& pieces) {
    HaloExchange exchange;
    for (const HaloPiece& p : pieces) {
      exchange.add(v, p.words, same_node(L_.dims().rank_of(g_), spatial_peer_rank(L_.dims(), g_, p.peer), node_));
    }
    exchange.finish(v);
  }

  PassVolume v;

 private:
  // The k-fibre's collectives run over the input fibre.
  int64_t in_fibre(Fibre f) const { return f == Fibre::k ? L_.in_fibre_size() : 0; }

  // The read pixels of the input fibre's slices: this rank's and all of them. The fibre's
  // members share one In block (it does not depend on pk), which their slices partition.
  struct InSlices {
    int64_t own = 0, total = 0;
  };
  InSlices in_slices() const { return {L_.read_count(L_.in_slice(g_)), L_.read_count(L_.in_block(g_))}; }

  const LayerLayout& L_;
  GridCoord g_;
  int64_t node_;
};

}  // namespace

CommLoad CommLoad::of(const PassVolume& v) {
  return {v.messages, static_cast<double>(v.latency_steps) - v.node_steps, v.node_steps,
          v.words() - v.node_words + v.surplus_words - v.surplus_node_words, v.node_words + v.surplus_node_words};
}

CommLoad CommLoad::max_with(const CommLoad& o) const {
  return {std::max(messages, o.messages), std::max(network_steps, o.network_steps), std::max(node_steps, o.node_steps),
          std::max(network_words, o.network_words), std::max(node_words, o.node_words)};
}

PassVolume grid_pass_volume(const LayerLayout& L, GridCoord g, Pass pass, Held held, int64_t ranks_per_node) {
  Charges c(L, g, ranks_per_node);
  switch (pass) {
    case Pass::forward:
      if (!held.in_needed) c.gather_input();
      if (!held.ker_block) c.gather_weights();
      c.reduce_scatter(Fibre::c);
      break;
    case Pass::backward_data:
      if (!held.dout_block) c.gather_grad_output();
      if (!held.ker_block) c.gather_weights();
      // Reverse halo: contributions to the rank's own input pixels from the ranks that read them.
      c.halo(L.halo_send(g));
      c.reduce_scatter(Fibre::k);
      break;
    case Pass::backward_weights:
      if (!held.in_needed) c.gather_input();
      if (!held.dout_block) c.gather_grad_output();
      c.reduce_scatter(Fibre::nhw);
      break;
  }
  return c.v;
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
