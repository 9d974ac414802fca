// Exact largest and mean received words over the ranks of a grid (see volume_stats.hpp).
#include "model/volume_stats.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace convgrid {
namespace {

// Per-dimension halo figures of one block index along h (or w): read rows received from the
// other blocks and own, and the number of blocks taking part, in each direction.
struct HaloLine {
  int64_t needed_read = 0;   // read rows in the needed range
  int64_t own_read = 0;      // read rows of the needed range that the block owns itself
  int64_t recv_blocks = 0;   // blocks (own included) whose owned rows it reads
  int64_t send_read = 0;     // read rows of its owned range needed by all blocks (own included)
  int64_t send_blocks = 0;   // blocks (own included) that read its owned rows
  // Which blocks: (offset from this block, read rows) of each block it reads from and of each
  // that reads from it, in order. Words need only the sums above; which neighbours share a rank's
  // node depends on the offsets.
  std::vector<int64_t> recv_from, send_to;
};

template <class Owned, class Needed, class CountRead>
std::vector<HaloLine> halo_lines(int64_t parts, Owned owned, Needed needed, CountRead count, bool with_peers) {
  std::vector<HaloLine> lines(parts);
  for (int64_t j = 0; j < parts; ++j) {
    HaloLine& l = lines[j];
    l.needed_read = count(needed(j));
    l.own_read = count(needed(j).intersect(owned(j)));
  }
  // Pairs (reader j, owner i) with read rows in needed(j) ∩ owned(i): both ranges move forward
  // with j and i, so a two-pointer sweep visits only the pairs that meet.
  int64_t first = 0;
  for (int64_t j = 0; j < parts; ++j) {
    const Range need = needed(j);
    while (first < parts && owned(first).end <= need.begin) ++first;
    for (int64_t i = first; i < parts && owned(i).begin < need.end; ++i) {
      const int64_t n = count(need.intersect(owned(i)));
      if (n > 0) {
        lines[j].recv_blocks += 1;
        lines[i].send_read += n;
        lines[i].send_blocks += 1;
        if (with_peers) {
          lines[j].recv_from.insert(lines[j].recv_from.end(), {i - j, n});
          lines[i].send_to.insert(lines[i].send_to.end(), {j - i, n});
        }
      }
    }
  }
  return lines;
}

struct Halos {
  std::vector<HaloLine> h, w;
};

// `with_peers`: also list each line's neighbours (HaloLine::recv_from, send_to), which only the
// node level needs.
Halos make_halos(const LayerLayout& L, bool with_peers) {
  const ReadPixels& read = L.read();
  return {halo_lines(
              L.dims().Ph, [&](int64_t j) { return L.rows_owned(j); },
              [&](int64_t j) { return L.rows_needed(j); }, [&](Range r) { return read.rows_in(r); }, with_peers),
          halo_lines(
              L.dims().Pw, [&](int64_t j) { return L.cols_owned(j); },
              [&](int64_t j) { return L.cols_needed(j); }, [&](Range r) { return read.cols_in(r); }, with_peers)};
}

// Totals over all ranks of the halo words and messages (either direction: the reverse halo moves
// the same pieces back).
std::pair<double, double> halo_totals(const LayerLayout& L, const Halos& halos) {
  double nr = 0, orr = 0, mr = 0, own_r = 0, nc = 0, oc = 0, mc = 0, own_c = 0;
  for (const HaloLine& l : halos.h) {
    nr += l.needed_read, orr += l.own_read, mr += l.recv_blocks, own_r += l.own_read > 0;
  }
  for (const HaloLine& l : halos.w) {
    nc += l.needed_read, oc += l.own_read, mc += l.recv_blocks, own_c += l.own_read > 0;
  }
  const ConvShape& s = L.shape();
  const GridDims& d = L.dims();
  // Every input channel's halo goes to each rank of its input fibre.
  const double words = static_cast<double>(L.in_fibre_size()) * s.N * s.C * (nr * nc - orr * oc);
  const double messages = static_cast<double>(d.Pn) * d.Pk * d.Pc * (mr * mc - own_r * own_c);
  return {words, messages};
}

}  // namespace

VolumeStats pass_volume_mean(const LayerLayout& L, Pass pass, Held held) {
  const ConvShape& s = L.shape();
  const GridDims& d = L.dims();
  const double P = static_cast<double>(d.size());
  const double q = static_cast<double>(d.nhw_size());
  const double m = static_cast<double>(L.in_fibre_size());  // each In block is gathered by m ranks
  const double in_read = static_cast<double>(s.N) * s.C * L.read().rows_in({0, s.H}) *
                         L.read().cols_in({0, s.W});
  const double ker = static_cast<double>(s.weight_elems());
  const double out = static_cast<double>(s.output_elems());
  double words = 0, messages = 0;
  auto collective = [&](bool present, double extent, double total_words) {
    if (present && extent > 1) {
      words += total_words;
      messages += P;
    }
  };
  auto halo = [&] {
    auto [w, m] = halo_totals(L, make_halos(L, false));
    words += w;
    messages += m;
  };
  switch (pass) {
    case Pass::forward:
      collective(!held.in_needed, m, (m - 1) * in_read);
      if (!held.in_needed) halo();
      collective(!held.ker_block, q, (q - 1) * ker);
      collective(true, d.Pc, (d.Pc - 1) * out);
      break;
    case Pass::backward_data:
      collective(!held.dout_block, d.Pc, (d.Pc - 1) * out);
      collective(!held.ker_block, q, (q - 1) * ker);
      halo();
      collective(true, m, (m - 1) * in_read);
      break;
    case Pass::backward_weights:
      collective(!held.in_needed, m, (m - 1) * in_read);
      if (!held.in_needed) halo();
      collective(!held.dout_block, d.Pc, (d.Pc - 1) * out);
      collective(true, q, (q - 1) * ker);
      break;
  }
  VolumeStats v;
  v.mean_words = words / P;
  v.mean_messages = messages / P;
  return v;
}

namespace {

// Coordinates of one grid dimension grouped by what the words of a rank depend on.
struct CoordClass {
  int64_t first = 0, last = 0;  // smallest and largest member
};

template <class Signature>
std::vector<CoordClass> classes(int64_t parts, Signature signature) {
  std::map<std::vector<int64_t>, CoordClass> by_sig;
  for (int64_t j = 0; j < parts; ++j) {
    auto [it, fresh] = by_sig.try_emplace(signature(j), CoordClass{j, j});
    if (!fresh) it->second.last = j;
  }
  std::vector<CoordClass> out;
  for (auto& [sig, c] : by_sig) out.push_back(c);
  return out;
}

std::vector<int64_t> read_pattern(const std::vector<int64_t>& base, const ReadPixels& read,
                                  Range r, bool rows) {
  std::vector<int64_t> sig = base;
  if (read.all_read()) return sig;
  for (int64_t i = r.begin; i < r.end; ++i) sig.push_back(rows ? read.row(i) : read.col(i));
  return sig;
}

// Where a node boundary falls for rank g depends on g's rank and on the first rank of each of its
// fibres, modulo the node size (same_node compares ranks that differ by fixed offsets; a fibre's
// members are its first plus offsets that depend only on the grid). Each is a sum over the grid
// dimensions of coordinate times stride: a dimension's terms below, modulo the node, keep all
// of them the same inside a combination of classes.
void append_node_residues(std::vector<int64_t>& sig, const GridDims& d, int64_t ranks_per_node, int64_t dim,
                          int64_t j, int64_t in_fibre) {
  if (ranks_per_node <= 0) return;
  const int64_t stride[] = {d.Pk * d.Pc * d.Ph * d.Pw, d.Pc * d.Ph * d.Pw, d.Ph * d.Pw, d.Pw, 1};
  sig.push_back(j * stride[dim] % ranks_per_node);
  if (dim == 1) sig.push_back(j % in_fibre * stride[dim] % ranks_per_node);  // g.k within its input fibre
}

template <class Signature>
std::vector<CoordClass> classes_at_nodes(const GridDims& d, int64_t ranks_per_node, int64_t dim, int64_t parts,
                                         int64_t in_fibre, Signature signature) {
  return classes(parts, [&](int64_t j) {
    std::vector<int64_t> sig = signature(j);
    append_node_residues(sig, d, ranks_per_node, dim, j, in_fibre);
    return sig;
  });
}

}  // namespace

std::vector<GridCoord> representative_ranks(const LayerLayout& L, int64_t ranks_per_node) {
  const ConvShape& s = L.shape();
  const GridDims& d = L.dims();
  const Halos halos = make_halos(L, ranks_per_node > 0);
  const int64_t m = L.in_fibre_size();
  auto by_class = [&](int64_t dim, int64_t parts, auto signature) {
    return classes_at_nodes(d, ranks_per_node, dim, parts, m, signature);
  };
  const int64_t k_small = s.K / d.Pk, c_small = s.C / d.Pc;
  // Slices are split along channels only when the block has enough of them; otherwise the split
  // is flat and every coordinate along the slicing fibre is its own class.
  const bool in_flat = c_small < d.Pk;
  const bool out_flat = k_small < d.Pc;

  auto n_classes = by_class(0, d.Pn, [&](int64_t j) { return std::vector<int64_t>{L.n_block(j).size()}; });
  auto k_classes = by_class(1, d.Pk, [&](int64_t j) {
    // Grouped: a rank's channels, slices and fibre follow from its groups' count (Pk < G) or its
    // place in its input fibre (Pk = m*G; every group alike).
    if (s.groups > 1) {
      return std::vector<int64_t>{d.Pk < s.groups ? L.group_block(j).size() : j % L.in_fibre_size()};
    }
    if (in_flat) return std::vector<int64_t>{j};
    return std::vector<int64_t>{L.k_block(j).size(), balanced_block(c_small, d.Pk, j).size(),
                                balanced_block(c_small + 1, d.Pk, j).size()};
  });
  auto c_classes = by_class(2, d.Pc, [&](int64_t j) {
    if (out_flat) return std::vector<int64_t>{j};
    return std::vector<int64_t>{L.c_block(0, j).size(), balanced_block(k_small, d.Pc, j).size(),
                                balanced_block(k_small + 1, d.Pc, j).size()};
  });
  auto line_sig = [&](const HaloLine& l, int64_t out_size, Range owned, Range needed) {
    std::vector<int64_t> sig{out_size,      owned.size(), needed.size(), needed.begin - owned.begin,
                             l.needed_read, l.own_read,   l.recv_blocks, l.send_read,
                             l.send_blocks};
    if (ranks_per_node > 0) {  // which neighbours, for which of them share the node
      sig.push_back(static_cast<int64_t>(l.recv_from.size()));
      sig.insert(sig.end(), l.recv_from.begin(), l.recv_from.end());
      sig.insert(sig.end(), l.send_to.begin(), l.send_to.end());
    }
    return sig;
  };
  auto h_classes = by_class(3, d.Ph, [&](int64_t j) {
    return read_pattern(line_sig(halos.h[j], L.h_block(j).size(), L.rows_owned(j), L.rows_needed(j)),
                        L.read(), L.rows_owned(j), true);
  });
  auto w_classes = by_class(4, d.Pw, [&](int64_t j) {
    return read_pattern(line_sig(halos.w[j], L.w_block(j).size(), L.cols_owned(j), L.cols_needed(j)),
                        L.read(), L.cols_owned(j), false);
  });

  std::vector<GridCoord> reps;
  const double combinations = static_cast<double>(n_classes.size()) * static_cast<double>(k_classes.size()) *
                              static_cast<double>(c_classes.size()) * static_cast<double>(h_classes.size()) *
                              static_cast<double>(w_classes.size());
  if (2 * combinations >= static_cast<double>(d.size())) {  // as many as there are ranks: visit them all
    for (int64_t r = 0; r < d.size(); ++r) reps.push_back(d.coord_of(r));
    return reps;
  }
  for (const CoordClass& n : n_classes)
    for (const CoordClass& k : k_classes)
      for (const CoordClass& c : c_classes)
        for (const CoordClass& h : h_classes)
          for (const CoordClass& w : w_classes) {
            // The weight slice, the one thing that varies inside a combination, depends on the
            // nhw index alone: its smallest and largest members cover both slice sizes.
            reps.push_back({n.first, k.first, c.first, h.first, w.first});
            if (n.last != n.first || h.last != h.first || w.last != w.first) {
              reps.push_back({n.last, k.first, c.first, h.last, w.last});
            }
          }
  return reps;
}

VolumeStats pass_volume_stats(const LayerLayout& L, Pass pass, Held held, int64_t ranks_per_node) {
  VolumeStats v = pass_volume_mean(L, pass, held);
  for (const GridCoord& g : representative_ranks(L, ranks_per_node)) {
    const PassVolume pv = grid_pass_volume(L, g, pass, held, ranks_per_node);
    v.max_words = std::max(v.max_words, pv.words());
    v.max_messages = std::max(v.max_messages, pv.messages);
    v.max_load = v.max_load.max_with(CommLoad::of(pv));
  }
  return v;
}

}  // namespace convgrid
