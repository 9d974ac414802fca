// A machine profile (SPEC section 6): the numbers the cost model turns words, messages and flops
// into seconds with, for one rank. Profiles are data: JSON files (profiles/*.json, written by
// `convgrid calibrate` for this machine) and the same built-in named profiles compiled in, so
// that a plan can be modelled for a cluster this machine is not. Format and sources:
// docs/profiles.md. Pure; no MPI.
//
//   {"name": "ib100-cpu", "description": "...", "source": "...",
//    "alpha_s": 1.5e-6, "beta_s_per_byte": 8e-11, "flop_rate": 1.8e11, "overlap": false,
//    "latency": "per_step", "node": {"ranks": 32, "alpha_s": 7.5e-7, "beta_s_per_byte": 8e-11}}
//
// Every key but "latency" and "node" is required and no other is allowed; the numbers must be finite and
// positive. "latency": "per_message" (the default) charges alpha once per message (a collective
// call counts one); "per_step" once per round of messages of the algorithm Open MPI runs
// (model/collective_rounds.hpp): see docs/profiles.md. "node" gives a second, faster level of
// links: `ranks` consecutive ranks share a node (or a leaf switch) and talk to each other at its
// alpha and beta; alpha_s and beta_s_per_byte above are then the links between nodes
// (model/node_links.hpp says which collective runs over which).
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convgrid {

// The links inside a node: ranks r and s share one when r / ranks == s / ranks (mpirun and the
// simulated clusters' hostfiles fill nodes in rank order). ranks == 0: no such level.
struct NodeLinks {
  int64_t ranks = 0;
  double alpha_s = 0;
  double beta_s_per_byte = 0;

  bool operator==(const NodeLinks&) const = default;
};

struct MachineProfile {
  std::string name, description, source;
  double alpha_s = 0;          // seconds per message (latency)
  double beta_s_per_byte = 0;  // seconds per byte received (inverse bandwidth)
  double flop_rate = 0;        // flop/s of one rank's local kernel
  bool overlap = false;        // communication and computation proceed at once (streamed panels)
  bool latency_per_step = false;  // alpha per round of MPI's algorithm, not per message
  NodeLinks node;                 // the faster links inside a node, if any

  bool operator==(const MachineProfile&) const = default;
};

// Validates and converts; `origin` (a file path, "built-in profile <name>") names the profile in
// errors. Throws InputError naming the origin and the bad key.
MachineProfile profile_from_json(const nlohmann::json& j, std::string_view origin);
// The same keys, in the order of the format above.
nlohmann::ordered_json profile_to_json(const MachineProfile& p);

// Reads a profile file (InputError naming the path when it cannot be read or is not valid; the
// JSON is read by io/strict_json.hpp: no repeated keys, numbers within a double, depth <= 64).
MachineProfile read_profile(const std::string& path);
// Writes a profile file; throws Error naming the path when it cannot be written.
void write_profile(const MachineProfile& p, const std::string& path);

// The built-in names: "ib100-cpu", "nvlink-gpu", "local-default".
std::vector<std::string> builtin_profile_names();

// A built-in profile by name; else, for a name without '/' that does not end in ".json",
// profiles/<name>.json in the current directory (where `convgrid calibrate` writes "local");
// else the file at that path. Throws InputError listing the built-in names when none exists.
MachineProfile load_profile(const std::string& name_or_path);

}  // namespace convgrid
