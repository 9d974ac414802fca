// What `convgrid train` prints and writes about a job (rank 0): the plan of every layer before
// the first step, and at the end the words of the last step against the model for every layer,
// the memory against the model, and the --json log.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "train/training_job.hpp"

namespace convgrid::cli {

// The job's header line and one line per compute layer: grid, algorithm, words moved into it.
void print_job_start(const TrainJobReport& report, bool reproducible);

// Words of the last training step (busiest rank) by layer kind, and whether every node's
// measured words equal the model on every rank (with the planner's redistribution words when
// `planner_words`: the plans run are the planner's); the tracked memory against the model.
void print_job_end(const TrainJobReport& report, const std::string& mem_per_rank,
                   bool planner_words);

// The run's log as JSON (options echoed by the caller in `options`).
void write_job_json(const std::string& path, const TrainJobReport& report, nlohmann::json options,
                    bool log_steps);

}  // namespace convgrid::cli
