#!/usr/bin/env bash
# Configures and builds convgrid in build/ (Release). Extra arguments are build targets, built one
# after another (make runs the targets of one command line in order): to build many in parallel,
# name a target that depends on them all, such as unit_tests or mpi_tests.
# Used by demo.sh and test.sh; CONVGRID_BUILD_DIR and CONVGRID_CMAKE_ARGS override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${CONVGRID_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release ${CONVGRID_CMAKE_ARGS:-} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
# nproc honours OMP_NUM_THREADS (test.sh sets it to 1 for the kernels): count the cores without it.
cmake --build "$dir" -j "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" "${targets[@]}"
