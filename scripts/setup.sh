#!/usr/bin/env bash
# Installs exactly the Debian packages convgrid needs. Idempotent: does nothing when they are present.
# Works as root (CI) or as a user with sudo.
# Usage: scripts/setup.sh [--with-torch]
#   --with-torch  also install Debian's PyTorch (python3-torch), which bench/race.sh and
#                 bench/compare_torch.py run against, with python3-onnx and python3-torchvision
#                 (ONNX export: tests/data/onnx/make_models.py, bench/onnx_models.sh); the default
#                 install leaves them out.
set -euo pipefail

with_torch=0
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    *) echo "setup: unknown argument '$arg' (expected --with-torch)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin
  libdnnl-dev ocl-icd-opencl-dev opencl-headers
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  zlib1g-dev dataset-fashion-mnist
  libonnx-dev libprotobuf-dev  # --network model.onnx: ONNX's protobuf classes (src/nn/onnx_model.hpp)
  python3  # the command-line tests check .npy and JSON files with its standard library
  gnuplot-nox  # convgrid simulate draws its plots with it
  libsimgrid-dev  # SimGrid's SMPI: the simulated-cluster build (scripts/build_smpi.sh, docs/scale.md)
  clang libclang-rt-dev  # the fuzz build (scripts/fuzz.sh): clang++, libFuzzer, sanitizers
)
if [ "$with_torch" -eq 1 ]; then
  # The PyTorch peer for bench/race.sh (run with /usr/bin/python3), and the BLAS libtorch recommends:
  # without it torch falls back to the reference BLAS (fully connected layers ~50x slower).
  packages+=(python3-torch python3-numpy libopenblas0)
  # torch.onnx.export (tests/data/onnx/make_models.py, bench/onnx_models.sh) and the torchvision
  # models bench/onnx_models.sh exports.
  packages+=(python3-onnx python3-torchvision)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
