// Gathering, printing and JSON of the conv command's figures.
#include "conv_report.hpp"

#include <mpi.h>

#include <algorithm>

#include <fmt/format.h>

#include "model/lower_bound.hpp"

namespace convgrid::cli {
namespace {

constexpr int kFields = sizeof(RankPassStats) / sizeof(double);

RankPassStats max_over(const std::vector<RankPassStats>& v) {
  RankPassStats m;
  for (const RankPassStats& s : v) {
    m.recv_words_measured = std::max(m.recv_words_measured, s.recv_words_measured);
    m.recv_words_model = std::max(m.recv_words_model, s.recv_words_model);
    m.messages_measured = std::max(m.messages_measured, s.messages_measured);
    m.messages_model = std::max(m.messages_model, s.messages_model);
    m.peak_bytes = std::max(m.peak_bytes, s.peak_bytes);
    m.min_s = std::max(m.min_s, s.min_s);
    m.median_s = std::max(m.median_s, s.median_s);
    m.comm_s = std::max(m.comm_s, s.comm_s);
    m.compute_s = std::max(m.compute_s, s.compute_s);
    m.own_s = std::max(m.own_s, s.own_s);
  }
  return m;
}

nlohmann::json stats_json(const RankPassStats& s) {
  return {{"recv_words_measured", static_cast<int64_t>(s.recv_words_measured)},
          {"recv_words_model", static_cast<int64_t>(s.recv_words_model)},
          {"messages_measured", static_cast<int64_t>(s.messages_measured)},
          {"messages_model", static_cast<int64_t>(s.messages_model)},
          {"peak_bytes", static_cast<int64_t>(s.peak_bytes)},
          {"min_s", s.min_s},
          {"median_s", s.median_s},
          {"comm_s", s.comm_s},
          {"compute_s", s.compute_s},
          {"own_s", s.own_s}};
}

bool words_agree(const std::vector<RankPassStats>& ranks) {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankPassStats& s) {
    return s.recv_words_measured == s.recv_words_model && s.messages_measured == s.messages_model;
  });
}

// The lower bound of the report's pass i as the step's passes run (model/lower_bound.hpp).
double lower_bound(const ConvReport& r, size_t i) {
  std::vector<Pass> passes;
  for (const PassReport& p : r.passes) passes.push_back(p.pass);
  return words_lower_bound_in_step(r.shape, r.grid.size(), passes, i);
}

}  // namespace

std::vector<RankPassStats> gather_stats(const Communicator& comm, const RankPassStats& mine) {
  static_assert(sizeof(RankPassStats) == kFields * sizeof(double));
  std::vector<RankPassStats> all(comm.rank() == 0 ? comm.size() : 0);
  MPI_Gather(&mine, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, comm.raw());
  return all;
}

void print_report(const ConvReport& r) {
  fmt::print("convgrid conv  {}\n", r.shape.to_string());
  fmt::print("grid {} (Pn,Pk,Pc,Ph,Pw) on {} rank{}, {}; backend {}; {} timed repeat{} after a warm-up\n",
             r.grid.to_string(), r.grid.size(), r.grid.size() == 1 ? "" : "s", r.grid_choice,
             r.backend, r.repeat, r.repeat == 1 ? "" : "s");
  fmt::print("{:<17} {:>10} {:>10} {:>9} {:>7} {:>14} {:>14} {:>12} {:>12}\n", "pass", "min ms",
             "median ms", "GFLOP/s", "comm %", "recv words", "model words", "lower bound", "peak bytes");
  for (size_t i = 0; i < r.passes.size(); ++i) {
    const PassReport& p = r.passes[i];
    const RankPassStats m = max_over(p.ranks);
    const double total = m.comm_s + m.compute_s;
    fmt::print("{:<17} {:>10.3f} {:>10.3f} {:>9.1f} {:>7.1f} {:>14} {:>14} {:>12.0f} {:>12}{}\n",
               pass_name(p.pass), m.min_s * 1e3, m.median_s * 1e3,
               m.min_s > 0 ? r.shape.flops() / m.min_s * 1e-9 : 0.0,
               total > 0 ? 100.0 * m.comm_s / total : 0.0,
               static_cast<int64_t>(m.recv_words_measured), static_cast<int64_t>(m.recv_words_model),
               lower_bound(r, i), static_cast<int64_t>(m.peak_bytes),
               words_agree(p.ranks) ? "" : "  MISMATCH");
  }
  int64_t peak = 0;
  for (const PassReport& p : r.passes) peak = std::max(peak, static_cast<int64_t>(max_over(p.ranks).peak_bytes));
  fmt::print("memory: peak tracked {} bytes, modelled {} bytes (largest over ranks: the slices, the\n"
             " algorithm's buffers and the local engine's own copies)\n",
             peak, r.model_bytes);
  fmt::print("(recv words, peak bytes and times: the largest over ranks; words are float32; the lower\n"
             " bound is the average per rank any algorithm receives, the pass's share of the step's)\n");
  for (const PassReport& p : r.passes) {
    if (!p.check) continue;
    fmt::print("check {:<17} max error {:.3e}, largest reference {:.3e}, relative {:.3e}: {}\n",
               pass_name(p.pass), p.check->max_error, p.check->max_reference, p.check->relative(),
               p.check->ok() ? "OK" : "FAILED (over 1e-4)");
  }
}

nlohmann::json report_json(const ConvReport& r) {
  nlohmann::json j;
  j["shape"] = r.shape.to_string();
  j["grid"] = r.grid.extents();
  j["ranks"] = r.grid.size();
  j["grid_choice"] = r.grid_choice;
  j["backend"] = r.backend;
  j["repeat"] = r.repeat;
  j["flops_per_pass"] = r.shape.flops();
  j["model_bytes"] = r.model_bytes;
  for (const PassReport& p : r.passes) {
    nlohmann::json pj;
    nlohmann::json ranks = nlohmann::json::array();
    for (size_t i = 0; i < p.ranks.size(); ++i) {
      nlohmann::json rj = stats_json(p.ranks[i]);
      rj["rank"] = i;
      ranks.push_back(rj);
    }
    pj["ranks"] = ranks;
    const RankPassStats m = max_over(p.ranks);
    pj["max"] = stats_json(m);
    pj["gflops"] = m.min_s > 0 ? r.shape.flops() / m.min_s * 1e-9 : 0.0;
    pj["words_match_model"] = words_agree(p.ranks);
    pj["lower_bound_words"] = lower_bound(r, static_cast<size_t>(&p - r.passes.data()));
    if (p.check) {
      pj["check"] = {{"max_error", p.check->max_error},
                     {"max_reference", p.check->max_reference},
                     {"relative_error", p.check->relative()},
                     {"ok", p.check->ok()}};
    }
    j["passes"][std::string(pass_name(p.pass))] = pj;
  }
  return j;
}

}  // namespace convgrid::cli
