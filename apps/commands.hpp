// The subcommands of the convgrid tool: each add_*_command registers its flags on the root app
// and the function that runs it.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace convgrid::cli {

using Registry = std::vector<std::pair<CLI::App*, std::function<int()>>>;

void add_conv_command(CLI::App& app, Registry& registry);
void add_bench_command(CLI::App& app, Registry& registry);
void add_calibrate_command(CLI::App& app, Registry& registry);
void add_plan_command(CLI::App& app, Registry& registry);
void add_simulate_command(CLI::App& app, Registry& registry);
void add_train_command(CLI::App& app, Registry& registry);
void add_step_command(CLI::App& app, Registry& registry);
void add_export_command(CLI::App& app, Registry& registry);

}  // namespace convgrid::cli
