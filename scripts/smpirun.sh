#!/usr/bin/env bash
# Runs a program of the SMPI build (cmake -DCONVGRID_SMPI=ON, scripts/build_smpi.sh) on a simulated
# cluster: smpirun with one of platforms/*.xml, a hostfile for NP ranks, and the SMPI
# configuration that goes with the platform (platforms/run_flags.sh, platforms/README.md).
#
# Usage: scripts/smpirun.sh --platform ib100-cpu|nvlink-gpu --np N [--host-speed FLOPS]
#                           [--cfg KEY:VALUE]... PROGRAM [ARGS...]
#   --host-speed  the flop/s of one core of THIS machine, with which SMPI turns the measured CPU
#                 time of real kernels (--compute run) into flops before running them at the
#                 platform's speed. Default: flop_rate of profiles/local.json when `convgrid
#                 calibrate` wrote one, else the platform's own speed (simulated time = time here).
#   --cfg         more SMPI configuration, passed on as --cfg=KEY:VALUE.
# Each rank runs one kernel thread (SMPI times one thread per rank; OMP_NUM_THREADS=1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../platforms/run_flags.sh
source "$root/platforms/run_flags.sh"

platform="" np="" host_speed="" extra=() prev=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --platform) platform=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --host-speed) host_speed=$2; shift 2 ;;
    --cfg) extra+=("--cfg=$2"); shift 2 ;;
    --) shift; break ;;
    -*) echo "smpirun.sh: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ -n $platform && -n $np && $# -ge 1 ]] ||
  { echo "usage: scripts/smpirun.sh --platform NAME --np N [--host-speed FLOPS] [--cfg K:V]... PROGRAM [ARGS...]" >&2; exit 2; }
[[ -f $root/platforms/$platform.xml ]] ||
  { echo "smpirun.sh: no platform '$platform' (platforms/*.xml: $(cd "$root/platforms" && ls ./*.xml | xargs -n1 basename | sed 's/\.xml$//' | tr '\n' ' '))" >&2; exit 2; }
[[ $np =~ ^[1-9][0-9]*$ ]] || { echo "smpirun.sh: --np '$np' is not a positive number of ranks" >&2; exit 2; }

if [[ -z $host_speed ]]; then
  if [[ -f profiles/local.json ]]; then
    host_speed=$(sed -nE 's/.*"flop_rate": *([0-9.eE+-]+).*/\1/p' profiles/local.json)
  else
    host_speed=$(grep -m1 -oE 'speed="[^"]+"' "$root/platforms/$platform.xml" | cut -d'"' -f2)
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smpi_hostfile "$platform" "$np" "$work/hosts"
# platforms/nvlink-gpu.xml holds 1024 ranks: its fabric has a link per pair of nodes, and the
# 4096-rank file would be 31 MB. A run on more ranks gets a file of its own, written here by the
# same script (the same numbers, more nodes).
platform_xml=$root/platforms/$platform.xml
if [[ $platform == nvlink-gpu && $np -gt $(grep -c '<host ' "$platform_xml") ]]; then
  platform_xml=$work/$platform.xml
  /usr/bin/python3 "$root/platforms/make_platforms.py" --gpu-nodes $(((np + 7) / 8)) "$platform_xml" > /dev/null
fi
# Reduce-scatters take the algorithm Open MPI 4.1's selector picks (the butterfly for most sizes,
# recursive halving for small vectors, the ring only on fibres under 64 ranks with large ones), as
# the cost model counts them (src/model/collective_rounds.hpp). SimGrid 3.32's recursive halving
# sums wrong where a count is zero; convgrid's SMPI build reduces and scatters those itself
# (src/sim/simulation.hpp, point 10).
# SMPI charges every MPI_Test that finds its request pending 100 us of simulated time, growing
# with each such call on any rank, and a test of a non-blocking collective tests each of its
# point-to-point requests: 126 of them for an all-gather over 64 ranks. It guards against
# busy-wait loops, which convgrid has none of (the streamed passes test their next panel's
# requests once per piece of compute). A real MPI_Test is a poll; it is charged nothing here.
# With the default a streamed forward pass on 16 simulated GPUs took 9.4 ms instead of 0.09 ms.
fixes=(--cfg=smpi/test:0 --cfg=smpi/grow-injected-times:no)
# --compute model injects each kernel's modelled flops (comm: none): no other CPU time may count, or SMPI's
# own work between MPI calls is charged as compute (platforms/README.md).
folding=no
for arg in "$@"; do
  if [[ $arg =~ ^--compute=(model|comm)$ || $prev == --compute && $arg =~ ^(model|comm)$ ]]; then
    fixes+=(--cfg=smpi/simulate-computation:no)
    folding=yes
  fi
  prev=$arg
done
quiet=(--log=root.thres:warning --log=smpi_colls.thres:error --log=smpi_coll.thres:warning --log=xbt_cfg.thres:warning)
# Folded buffers (SMPI_SHARED_MALLOC) map one file again and again, one mapping per block: a
# 1024-rank ResNet-50 step can need more than Linux's default of 65530 mappings (simgrid issue
# #375, ../shared/SMPI.md). Raised when this runs as root; otherwise said.
maps=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)
if [[ $np -ge 512 && $maps -lt 1048576 ]]; then
  if [[ -w /proc/sys/vm/max_map_count ]]; then
    echo 1048576 > /proc/sys/vm/max_map_count
  else
    echo "smpirun.sh: vm.max_map_count is $maps; $np ranks may need more (sysctl -w vm.max_map_count=1048576)" >&2
  fi
fi
# SimGrid 3.32 backs every folded buffer with one file that it makes in /tmp (the path is fixed in
# its source). Where /tmp is on a disk, writes into folded memory fault again after every writeback:
# 30-40% of a 1024-rank run's host time. The SMPI build's libconvgrid_folded_file.so, preloaded,
# makes that file in /dev/shm (platforms/folded_file_on_tmpfs.cpp); it is found in the build
# directory the program belongs to. Simulated results do not change.
# In model and comm modes the same directory's libconvgrid_folded_temporaries.so is preloaded too
# (platforms/folded_collective_temporaries.cpp): SimGrid's own temporaries of convgrid's tensor
# all-gathers and reduce-scatters are folded like convgrid's buffers, whose contents those modes
# never read (a butterfly reduce-scatter holds two of the whole vector on every rank). Simulated
# results do not change; CONVGRID_FOLD_TEMPORARIES=0 leaves them unfolded.
preload=()
build_dir=$(cd "$(dirname "$1")" 2>/dev/null && pwd || echo /)
while [[ $build_dir != / && ! -f $build_dir/CMakeCache.txt ]]; do build_dir=$(dirname "$build_dir"); done
libraries=()
if [[ -f $build_dir/libconvgrid_folded_file.so ]]; then
  libraries+=("$build_dir/libconvgrid_folded_file.so")
elif [[ $folding == yes && $(stat -f -c %T /tmp 2>/dev/null) != tmpfs ]]; then
  echo "smpirun.sh: no libconvgrid_folded_file.so in the program's build directory: writes into folded buffers will be slow" >&2
fi
if [[ $folding == yes && ${CONVGRID_FOLD_TEMPORARIES:-1} == 0 ]]; then
  :  # asked not to
elif [[ $folding == yes && -f $build_dir/libconvgrid_folded_temporaries.so ]]; then
  libraries+=("$build_dir/libconvgrid_folded_temporaries.so")
elif [[ $folding == yes && -f $build_dir/CMakeCache.txt ]]; then
  echo "smpirun.sh: no libconvgrid_folded_temporaries.so in the program's build directory: SimGrid's collective buffers are not folded" >&2
fi
if [[ ${#libraries[@]} -gt 0 ]]; then
  preload=(env "LD_PRELOAD=$(IFS=:; echo "${libraries[*]}")${LD_PRELOAD:+:$LD_PRELOAD}")
fi
exec_status=0
# shellcheck disable=SC2046
SMPI_HOST_SPEED=$host_speed OMP_NUM_THREADS=1 ${preload[@]+"${preload[@]}"} smpirun -np "$np" \
  -platform "$platform_xml" -hostfile "$work/hosts" \
  $(smpi_platform_flags "$platform") "${fixes[@]}" "${quiet[@]}" ${extra[@]+"${extra[@]}"} "$@" ||
  exec_status=$?
exit "$exec_status"
