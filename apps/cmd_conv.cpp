// convgrid conv: placeholder until the command is written.
#include "commands.hpp"
namespace convgrid::cli {
void add_conv_command(CLI::App& app, Registry& registry) {
  auto* sub = app.add_subcommand("conv", "Run one convolution layer");
  registry.emplace_back(sub, [] { return 0; });
}
}  // namespace convgrid::cli
