#!/usr/bin/env bash
# Builds convgrid against SimGrid's SMPI in build-smpi/ (cmake -DCONVGRID_SMPI=ON): the programs
# then run only under smpirun (scripts/smpirun.sh). Extra arguments are build targets, for example
# `mpi_tests` (the MPI test programs) or `convgrid_cli`. CONVGRID_SMPI_BUILD_DIR names another
# directory (a second build, for changing the code while a long simulation runs from the first).
set -euo pipefail
cd "$(dirname "$0")/.."
CONVGRID_BUILD_DIR=${CONVGRID_SMPI_BUILD_DIR:-build-smpi} \
  CONVGRID_CMAKE_ARGS="-DCONVGRID_SMPI=ON -DCONVGRID_WITH_BENCH=OFF ${CONVGRID_CMAKE_ARGS:-}" \
  bash scripts/build.sh "$@"
