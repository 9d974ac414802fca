#!/usr/bin/env bash
# Installs the Release build into a temporary prefix, builds examples/plan_and_run against the
# installed package alone (find_package(convgrid), no source tree on its include path) and runs
# it on 4 ranks: the plan, the forward pass against the reference, the words against the model.
# Usage: scripts/example_install.sh [BUILD_DIR]   (default build/, as scripts/build.sh makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/convgrid-example.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S examples/plan_and_run -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" -j "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"

flags=(--oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
if [[ $(id -u) -eq 0 ]]; then flags+=(--allow-run-as-root); fi
mpirun -np 4 "${flags[@]}" "$work/build/plan_and_run"
