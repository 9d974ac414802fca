// convgrid export: a training checkpoint's parameters as a .npz archive that PyTorch loads into
// the same network with load_state_dict (bench/check_export.py does). Each array is named and
// shaped as in PyTorch's state_dict:
//   conv            <layer>.weight [K, C/groups, R, S], <layer>.bias [K] (when it has one)
//   fc              <layer>.weight [K, F] (F = C*H*W of its input; stored K x F x 1 x 1), .bias [K]
//   batch_norm      <layer>.weight (gamma), .bias (beta), .running_mean, .running_var: each [C];
//                   <layer>.num_batches_tracked: int64, 0-d, the checkpoint's step
// Momentum is left out. With --onnx M.onnx instead of --out, the --network ONNX model is
// written to M.onnx with the checkpoint's parameters in the initializers they came from
// (nn/onnx_export.hpp). A file, no MPI: start it on one rank.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "convgrid/error.hpp"
#include "io/npz.hpp"
#include "network_flags.hpp"
#include "nn/load_network.hpp"
#include "nn/onnx_export.hpp"
#include "nn/onnx_import.hpp"
#include "train/checkpoint.hpp"

namespace convgrid::cli {
namespace {

struct ExportCliOptions {
  std::string checkpoint;
  std::string network;
  std::optional<Activation> input_shape;  // --input-shape
  std::string out;                        // the .npz
  std::string onnx;                       // or the ONNX model
  bool json = false;
};

// A file as given, or the newest checkpoint of a directory.
std::string checkpoint_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  const std::vector<std::string> found = list_checkpoints(path);
  if (found.empty()) {
    throw InputError(fmt::format("--checkpoint {}: the directory holds no step-*.ckpt file", path));
  }
  return found.front();
}

// Finds the checkpoint's tensors by name and turns them into PyTorch-shaped arrays.
class TorchNaming {
 public:
  TorchNaming(const CheckpointFile& file, std::string path, const Network& net)
      : file_(file), path_(std::move(path)), net_(net) {
    for (const CheckpointTensor& t : file.tensors) by_name_.emplace(t.name, &t);
  }

  // The arrays of every layer, in network order; then checks that none of the checkpoint's
  // parameters was left over.
  std::vector<NpzArray> arrays() {
    std::vector<NpzArray> out;
    for (const Layer& layer : net_.layers()) add_layer(layer, out);
    for (const CheckpointTensor& t : file_.tensors) {
      if (!t.name.ends_with(".momentum") && !used_.contains(t.name)) {
        throw InputError(fmt::format("checkpoint {} holds {}, which network '{}' has no place for",
                                     path_, t.name, net_.name()));
      }
    }
    return out;
  }

 private:
  void add_layer(const Layer& layer, std::vector<NpzArray>& out) {
    const int64_t K = layer.conv.K, C = layer.in.C;
    switch (layer.kind) {
      case LayerKind::conv: {
        const int64_t Cg = C / layer.conv.groups;
        out.push_back(take(layer, ".weight", {K, Cg, layer.conv.R, layer.conv.S},
                           {K, Cg, layer.conv.R, layer.conv.S}));
        if (layer.conv.bias) out.push_back(take(layer, ".bias", {K, 1, 1, 1}, {K}));
        break;
      }
      case LayerKind::fully_connected: {
        const int64_t F = C * layer.in.H * layer.in.W;
        out.push_back(take(layer, ".weight", {K, F, 1, 1}, {K, F}));
        if (layer.conv.bias) out.push_back(take(layer, ".bias", {K, 1, 1, 1}, {K}));
        break;
      }
      case LayerKind::batch_norm:
        for (const char* suffix : {".weight", ".bias", ".running_mean", ".running_var"}) {
          out.push_back(take(layer, suffix, {C, 1, 1, 1}, {C}));
        }
        out.push_back(NpzArray::int64(layer.name + ".num_batches_tracked", {}, {file_.state.step}));
        break;
      default:
        break;  // no parameters
    }
  }

  // The checkpoint tensor <layer><suffix>, checked to have the extents `stored`, as an array of
  // shape `torch` (the same values in the same order).
  NpzArray take(const Layer& layer, const char* suffix, const std::vector<int64_t>& stored,
                std::vector<int64_t> torch) {
    const std::string name = layer.name + suffix;
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      throw InputError(fmt::format("checkpoint {} has no tensor {} ({} layer '{}' of network '{}')",
                                   path_, name, to_string(layer.kind), layer.name, net_.name()));
    }
    if (it->second->shape != stored) {
      throw InputError(
          fmt::format("checkpoint {}: {} has extents [{}], layer '{}' of network '{}' "
                      "needs [{}]",
                      path_, name, fmt::join(it->second->shape, ", "), layer.name, net_.name(),
                      fmt::join(stored, ", ")));
    }
    used_.insert(name);
    return NpzArray::float32(name, std::move(torch), it->second->values);
  }

  const CheckpointFile& file_;
  std::string path_;
  const Network& net_;
  std::map<std::string, const CheckpointTensor*> by_name_;
  std::set<std::string> used_;
};

// One tensor written: an array of the .npz, or a tensor of the ONNX model and the parameter it
// now holds.
struct WrittenTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string parameter;  // ONNX only
};

// What an export wrote, for the table or --json.
struct ExportReport {
  std::string out, file;  // file: the out path, and for a model the model it copies
  std::string what;       // "arrays" or "initializers"
  std::vector<WrittenTensor> tensors;
};

void print_table(const ExportReport& r, const std::string& path, const CheckpointFile& file) {
  for (const WrittenTensor& t : r.tensors) {
    fmt::print("{:<40} {:<8} [{}]{}\n", t.name, t.dtype, fmt::join(t.shape, ", "),
               t.parameter.empty() ? "" : "  <- " + t.parameter);
  }
  fmt::print("wrote {}: {} {} of network {} from {} (step {})\n", r.file, r.tensors.size(), r.what,
             file.state.network, path, file.state.step);
}

void print_json(const ExportReport& r, const std::string& path, const CheckpointFile& file) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const WrittenTensor& t : r.tensors) {
    nlohmann::json j = {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}};
    if (!t.parameter.empty()) j["parameter"] = t.parameter;
    tensors.push_back(std::move(j));
  }
  const nlohmann::json j = {{"checkpoint", path},
                            {"network", file.state.network},
                            {"step", file.state.step},
                            {"out", r.out},
                            {"tensors", tensors}};
  fmt::print("{}\n", j.dump(2));
}

// One output, of the kind its flag says, before any file is read.
void check_output_flags(const ExportCliOptions& o) {
  if (o.out.empty() == o.onnx.empty()) {
    throw InputError("export writes one file: give --out W.npz or --onnx M.onnx");
  }
  if (!o.out.empty() && is_onnx_path(o.out)) {
    throw InputError(fmt::format(
        "--out {} writes a .npz archive; --onnx {} writes the trained ONNX model", o.out, o.out));
  }
  if (o.onnx.empty()) return;
  if (!is_onnx_path(o.network)) {
    throw InputError(
        fmt::format("--onnx writes the trained weights into the --network model, "
                    "which must be an ONNX file (.onnx), not {}",
                    o.network));
  }
  if (!is_onnx_path(o.onnx)) {
    throw InputError(fmt::format("--onnx {}: the model's file name must end in .onnx", o.onnx));
  }
}

ExportReport write_arrays(const ExportCliOptions& o, const std::vector<NpzArray>& arrays) {
  write_npz(o.out, arrays);
  ExportReport r{o.out, o.out, "arrays", {}};
  for (const NpzArray& a : arrays) {
    r.tensors.push_back({a.name, a.dtype == NpzDtype::float32 ? "float32" : "int64", a.shape, ""});
  }
  return r;
}

// The checkpoint's parameters and state by name, without momentum.
std::map<std::string, std::vector<float>> parameters_of(const CheckpointFile& file) {
  std::map<std::string, std::vector<float>> out;
  for (const CheckpointTensor& t : file.tensors) {
    if (!t.name.ends_with(".momentum")) out.emplace(t.name, t.values);
  }
  return out;
}

ExportReport write_onnx(const ExportCliOptions& o, const CheckpointFile& file) {
  ExportReport r{o.onnx, fmt::format("{} (a copy of {})", o.onnx, o.network), "initializers", {}};
  for (const OnnxExportedTensor& t :
       export_onnx(o.network, parameters_of(file), o.onnx, o.input_shape)) {
    r.tensors.push_back({t.tensor, "float32", t.dims, t.parameter});
  }
  return r;
}

int run_export(const ExportCliOptions& o) {
  check_output_flags(o);
  const Network net = load_network(o.network, o.input_shape);
  const std::string path = checkpoint_file(o.checkpoint);
  const CheckpointFile file = read_checkpoint_file(path);
  if (file.state.network != net.name()) {
    throw InputError(fmt::format("checkpoint {} is of network '{}', --network {} is '{}'", path,
                                 file.state.network, o.network, net.name()));
  }
  // Every parameter of the network present and shaped as the layer needs, none left over.
  const std::vector<NpzArray> arrays = TorchNaming(file, path, net).arrays();
  const ExportReport report = o.onnx.empty() ? write_arrays(o, arrays) : write_onnx(o, file);
  if (o.json) {
    print_json(report, path, file);
  } else {
    print_table(report, path, file);
  }
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<ExportCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "export",
      "write a checkpoint's parameters as a .npz named like PyTorch's state_dict (--out), or into "
      "a copy of the ONNX model they came from (--onnx)");
  sub->add_option("--checkpoint", o->checkpoint,
                  "a .ckpt file, or a directory (its newest checkpoint)")
      ->required();
  sub->add_option("--network", o->network,
                  "the checkpoint's network: built-in name, JSON file or ONNX model (.onnx)")
      ->required();
  add_input_shape_flag(sub, o->input_shape);
  CLI::Option* out =
      sub->add_option("--out", o->out, "the .npz file to write (PyTorch's state_dict names)");
  sub->add_option("--onnx", o->onnx,
                  "the .onnx file to write: the --network ONNX model with the checkpoint's "
                  "weights in its initializers (instead of --out)")
      ->excludes(out);
  sub->add_flag("--json", o->json, "print what was written as JSON instead of a table");
  registry.emplace_back(sub, [o] { return run_export(*o); });
}

}  // namespace convgrid::cli
