#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything (Release) and runs every
# CTest test (unit, MPI under mpiexec with 1-8 ranks, command line), then builds the unit tests
# with -fsanitize=address,undefined and runs them once more.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OMP_NUM_THREADS=1

echo "== build (Release)"
bash scripts/build.sh
echo "== ctest"
ctest --test-dir build --output-on-failure --timeout 900

echo "== unit tests under address and undefined-behaviour sanitizers"
# -O1: quicker to build, and the sanitizers still see everything.
CONVGRID_BUILD_DIR=build-sanitize \
  CONVGRID_CMAKE_ARGS="-DCONVGRID_SANITIZE=ON -DCONVGRID_WITH_BENCH=OFF -DCMAKE_CXX_FLAGS_RELEASE=-O1" \
  bash scripts/build.sh $(cd tests && ls *_test.cpp | sed 's/\.cpp$//')
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -L unit --output-on-failure --timeout 900
