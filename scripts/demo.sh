#!/usr/bin/env bash
# The main job on a default example: installs what is missing, builds the tool, and runs a
# ResNet-50 layer (res2 3x3, batch 8) forward and both backward passes, checked against the
# loop-nest reference, on one rank and on two ranks with the grid the planner picks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh convgrid_cli >/dev/null
shape=${CONVGRID_DEMO_SHAPE:-N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1}
export OMP_NUM_THREADS=1
echo "== one rank"
./build/convgrid conv --shape "$shape" --check --repeat 5
echo
echo "== two ranks"
bash scripts/mpirun.sh 2 ./build/convgrid conv --shape "$shape" --check --repeat 5
