#!/usr/bin/env bash
# mpirun with the flags these machines need: as root --allow-run-as-root, more ranks than cores
# --oversubscribe, and no binding (idle ranks yield) so that oversubscribed ranks share the cores.
# Usage: scripts/mpirun.sh NP COMMAND [ARGS...]
set -euo pipefail
np=$1
shift
flags=(--oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
exec mpirun -np "$np" "${flags[@]}" "$@"
