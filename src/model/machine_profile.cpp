// Machine profiles: strict JSON validation, files, and the built-in named profiles (the same
// text as profiles/*.json, which a test keeps equal; sources in docs/profiles.md).
#include "model/machine_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "convgrid/error.hpp"
#include "io/strict_json.hpp"

namespace convgrid {
namespace {

struct Builtin {
  const char* name;
  const char* json;
};

const Builtin kBuiltinProfiles[] = {
    {"ib100-cpu", R"json({
  "name": "ib100-cpu",
  "description": "CPU nodes on 100 Gb/s InfiniBand (HDR100), one rank per AVX-512 core; beta is the link of one rank that has the adapter to itself",
  "source": "alpha: typical MPI one-way latency of small messages over HDR100 (OSU osu_latency, about 1.0-1.5 us through one switch), rounded up; beta: 1/(12.5 GB/s), the 100 Gb/s line rate of an NVIDIA ConnectX-6 HDR100 adapter (product brief); flop_rate: oneDNN forward convolution of ResNet-50 3x3 layers on one Zen 5 AVX-512 core, 180-197 GFLOP/s (MACHINE.md); no overlap: MPI collectives on CPUs progress only inside MPI calls; node: the 32 hosts of one leaf switch of a non-blocking fat tree, 0.75 us between them (two of the four 375 ns hops that make alpha, platforms/README.md) at the same 100 Gb/s",
  "alpha_s": 1.5e-6,
  "beta_s_per_byte": 8e-11,
  "flop_rate": 1.8e11,
  "overlap": false,
  "latency": "per_step",
  "node": {"ranks": 32, "alpha_s": 7.5e-7, "beta_s_per_byte": 8e-11}
})json"},
    {"nvlink-gpu", R"json({
  "name": "nvlink-gpu",
  "description": "A100 GPU nodes (8 per node, NVLink 3 within a node, one 200 Gb/s HDR InfiniBand adapter per GPU between nodes), one rank per GPU; alpha and beta are the links between nodes, node the NVLink inside one",
  "source": "alpha: GPU-to-GPU MPI/NCCL latency between nodes with GPUDirect RDMA, a few microseconds (5 us taken); beta: 1/(25 GB/s), the 200 Gb/s HDR line rate of the ConnectX-6 adapter each GPU has in a DGX A100 (NVIDIA DGX A100 system architecture); node: 8 GPUs, NVLink 3 at 300 GB/s per direction per GPU (NVIDIA A100 Tensor Core GPU architecture whitepaper), 12x faster, and 2 us of CUDA-aware MPI latency inside a node (an estimate: a few us is typical); flop_rate: half of the A100's 156 TFLOP/s dense TF32 tensor-core peak (same whitepaper); overlap: NCCL transfers run on their own stream next to the convolution kernels",
  "alpha_s": 5e-6,
  "beta_s_per_byte": 4e-11,
  "flop_rate": 7.8e13,
  "overlap": true,
  "latency": "per_step",
  "node": {"ranks": 8, "alpha_s": 2e-6, "beta_s_per_byte": 3.3333333333e-12}
})json"},
    {"local-default", R"json({
  "name": "local-default",
  "description": "The development machine of MACHINE.md: ranks on cores of one AMD EPYC Zen 5 node, Open MPI over shared memory (vader)",
  "source": "MACHINE.md: Open MPI 4.1.4 shared-memory transport about 0.6 us latency and 7.9 GB/s; oneDNN forward convolution of ResNet-50 3x3 layers 180-197 GFLOP/s on one core; no overlap: shared-memory copies are done by the ranks' own cores. Measure it with convgrid calibrate (profile local)",
  "alpha_s": 6e-7,
  "beta_s_per_byte": 1.2658e-10,
  "flop_rate": 1.8e11,
  "overlap": false
})json"},
};

const char* const kKeys[] = {"name",      "description", "source",  "alpha_s", "beta_s_per_byte",
                             "flop_rate", "overlap",     "latency", "node"};
const char* const kNodeKeys[] = {"ranks", "alpha_s", "beta_s_per_byte"};

const nlohmann::json& field(const nlohmann::json& j, const char* key, std::string_view origin) {
  auto it = j.find(key);
  if (it == j.end()) throw InputError(fmt::format("profile {}: missing key \"{}\"", origin, key));
  return *it;
}

std::string text_field(const nlohmann::json& j, const char* key, std::string_view origin) {
  const nlohmann::json& v = field(j, key, origin);
  if (!v.is_string()) {
    throw InputError(
        fmt::format("profile {}: key \"{}\" must be a string, not {}", origin, key, v.dump()));
  }
  return v.get<std::string>();
}

double positive_field(const nlohmann::json& j, const char* key, std::string_view origin) {
  const nlohmann::json& v = field(j, key, origin);
  if (!v.is_number()) {
    throw InputError(
        fmt::format("profile {}: key \"{}\" must be a number, not {}", origin, key, v.dump()));
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0) {
    throw InputError(
        fmt::format("profile {}: key \"{}\" must be positive, not {}", origin, key, v.dump()));
  }
  return d;
}

bool bool_field(const nlohmann::json& j, const char* key, std::string_view origin) {
  const nlohmann::json& v = field(j, key, origin);
  if (!v.is_boolean()) {
    throw InputError(
        fmt::format("profile {}: key \"{}\" must be true or false, not {}", origin, key, v.dump()));
  }
  return v.get<bool>();
}

// {"ranks": R, "alpha_s": a, "beta_s_per_byte": b}: all three, R a whole number >= 1.
NodeLinks node_links(const nlohmann::json& j, std::string_view origin) {
  const std::string where = fmt::format("{}: key \"node\"", origin);
  if (!j.is_object()) throw InputError(fmt::format("profile {} must be an object, not {}", where, j.dump()));
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kNodeKeys), std::end(kNodeKeys), key) == std::end(kNodeKeys)) {
      throw InputError(fmt::format("profile {}: unknown key \"{}\" (keys: {})", where, key, fmt::join(kNodeKeys, ", ")));
    }
  }
  NodeLinks n;
  const nlohmann::json& ranks = field(j, "ranks", where);
  if (!ranks.is_number_integer() || ranks.get<int64_t>() < 1) {
    throw InputError(fmt::format("profile {}: key \"ranks\" must be a whole number of at least 1, not {}", where,
                                 ranks.dump()));
  }
  n.ranks = ranks.get<int64_t>();
  n.alpha_s = positive_field(j, "alpha_s", where);
  n.beta_s_per_byte = positive_field(j, "beta_s_per_byte", where);
  return n;
}

}  // namespace

MachineProfile profile_from_json(const nlohmann::json& j, std::string_view origin) {
  if (!j.is_object()) throw InputError(fmt::format("profile {}: not a JSON object", origin));
  const std::set<std::string_view> known(std::begin(kKeys), std::end(kKeys));
  for (const auto& [key, value] : j.items()) {
    if (!known.contains(key)) {
      throw InputError(fmt::format("profile {}: unknown key \"{}\" (keys: {})", origin, key,
                                   fmt::join(kKeys, ", ")));
    }
  }
  MachineProfile p;
  p.name = text_field(j, "name", origin);
  if (p.name.empty()) throw InputError(fmt::format("profile {}: key \"name\" is empty", origin));
  p.description = text_field(j, "description", origin);
  p.source = text_field(j, "source", origin);
  p.alpha_s = positive_field(j, "alpha_s", origin);
  p.beta_s_per_byte = positive_field(j, "beta_s_per_byte", origin);
  p.flop_rate = positive_field(j, "flop_rate", origin);
  p.overlap = bool_field(j, "overlap", origin);
  // Optional (profiles written before it have one alpha per message).
  if (j.contains("latency")) {
    const std::string latency = text_field(j, "latency", origin);
    if (latency != "per_message" && latency != "per_step") {
      throw InputError(fmt::format("profile {}: key \"latency\" must be \"per_message\" or \"per_step\", not \"{}\"",
                                   origin, latency));
    }
    p.latency_per_step = latency == "per_step";
  }
  if (j.contains("node")) p.node = node_links(j["node"], origin);
  return p;
}

nlohmann::ordered_json profile_to_json(const MachineProfile& p) {
  nlohmann::ordered_json j = {
      {"name", p.name},       {"description", p.description},         {"source", p.source},
      {"alpha_s", p.alpha_s}, {"beta_s_per_byte", p.beta_s_per_byte}, {"flop_rate", p.flop_rate},
      {"overlap", p.overlap}, {"latency", p.latency_per_step ? "per_step" : "per_message"}};
  if (p.node.ranks > 0) {
    j["node"] = {{"ranks", p.node.ranks}, {"alpha_s", p.node.alpha_s}, {"beta_s_per_byte", p.node.beta_s_per_byte}};
  }
  return j;
}

MachineProfile read_profile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(fmt::format("profile file {}: cannot be read", path));
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  if (f.bad()) throw InputError(fmt::format("profile file {}: cannot be read", path));
  return profile_from_json(parse_json(text, fmt::format("profile file {}", path)),
                           fmt::format("file {}", path));
}

void write_profile(const MachineProfile& p, const std::string& path) {
  std::ofstream f(path);
  f << profile_to_json(p).dump(2) << "\n";
  if (!f) throw Error(fmt::format("profile file {}: cannot be written", path));
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const Builtin& b : kBuiltinProfiles) names.emplace_back(b.name);
  return names;
}

MachineProfile load_profile(const std::string& name_or_path) {
  for (const Builtin& b : kBuiltinProfiles) {
    if (name_or_path == b.name) {
      return profile_from_json(nlohmann::json::parse(b.json), fmt::format("built-in {}", b.name));
    }
  }
  const bool is_path =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  if (is_path) return read_profile(name_or_path);
  const std::string file = fmt::format("profiles/{}.json", name_or_path);
  if (!std::filesystem::exists(file)) {
    throw InputError(fmt::format(
        "profile '{}': not a built-in profile ({}) and no file {} (convgrid calibrate writes "
        "profiles/local.json)",
        name_or_path, fmt::join(builtin_profile_names(), ", "), file));
  }
  return read_profile(file);
}

}  // namespace convgrid
