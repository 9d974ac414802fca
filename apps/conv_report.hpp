// What `convgrid conv` reports: per pass and per rank the words and messages received (measured
// by the communication layer and predicted by the cost model), peak bytes and times; gathered on
// rank 0, printed as a table and written as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.hpp"
#include "convgrid/conv_shape.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/grid_dims.hpp"

namespace convgrid::cli {

// One rank's figures for one pass.
struct RankPassStats {
  double recv_words_measured = 0, recv_words_model = 0;
  double messages_measured = 0, messages_model = 0;
  double peak_bytes = 0;
  double min_s = 0, median_s = 0;  // over the timed repeats, the slowest rank's (own_s's largest)
  double comm_s = 0, compute_s = 0;  // of the fastest repeat
  // From the common start (sim::start_together) to this rank's end of the pass, last repeat: the
  // largest over ranks is the figure convgrid step times (and the model's).
  double own_s = 0;
};

struct CheckResult {
  double max_error = 0, max_reference = 0;
  bool ok() const { return max_error <= 1e-4 * max_reference; }
  double relative() const { return max_reference > 0 ? max_error / max_reference : max_error; }
};

struct PassReport {
  Pass pass;
  std::vector<RankPassStats> ranks;  // on rank 0: every rank, in rank order
  std::optional<CheckResult> check;
};

struct ConvReport {
  ConvShape shape;
  GridDims grid;
  std::string backend;
  std::string grid_choice;  // "given" or how it was chosen
  int repeat = 0;
  std::vector<PassReport> passes;
  int64_t model_bytes = 0;  // the memory model of this rank (rank 0's report: the largest over ranks)
};

// Gathers one pass's stats of every rank to rank 0 of comm (collective).
std::vector<RankPassStats> gather_stats(const Communicator& comm, const RankPassStats& mine);

void print_report(const ConvReport& r);
nlohmann::json report_json(const ConvReport& r);

}  // namespace convgrid::cli
