#!/usr/bin/env bash
# The main job on a default example: installs what is missing, builds the tool, and trains the
# built-in fmnist network on Fashion-MNIST for one epoch on two MPI ranks (one thread each), with
# the grids the planner picks; then checks one ResNet-50 layer's three passes against the
# loop-nest reference on two ranks. CONVGRID_DEMO_EPOCHS changes the number of epochs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh convgrid_cli >/dev/null
export OMP_NUM_THREADS=1
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
echo "== training fmnist on Fashion-MNIST, 2 ranks"
bash scripts/mpirun.sh 2 -x GLIBC_TUNABLES ./build/convgrid train --network fmnist \
  --epochs "${CONVGRID_DEMO_EPOCHS:-1}" --threads 1 --progress-every 200
echo
echo "== a ResNet-50 layer (res2 3x3, batch 8), all passes, checked, 2 ranks"
shape=${CONVGRID_DEMO_SHAPE:-N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1}
bash scripts/mpirun.sh 2 ./build/convgrid conv --shape "$shape" --check --repeat 3
