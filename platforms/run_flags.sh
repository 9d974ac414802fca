# shellcheck shell=bash
# Shared smpirun settings for the simulated clusters of platforms/README.md. Source it:
#
#   source platforms/run_flags.sh
#   smpi_hostfile ib100-cpu 1024 hosts.txt
#   smpirun -np 1024 -platform "$(smpi_platform_xml ib100-cpu)" -hostfile hosts.txt \
#           $(smpi_platform_flags ib100-cpu) ./app args
#
# smpi_platform_flags NAME      the --cfg flags that go with platform NAME (one line)
# smpi_platform_xml NAME        the absolute path of platforms/NAME.xml
# smpi_hostfile NAME P FILE     write FILE, the hostfile of P ranks on NAME: its first P hosts,
#                               one rank per host (on nvlink-gpu, 8 consecutive ranks per node)
#
# SMPI_HOST_SPEED (default 180Gf) is smpi/host-speed: the flop rate of one core of the machine
# that runs the simulation, the rate at which its real CPU time between MPI calls is turned into
# flops. 180Gf is oneDNN's 3x3 convolution on one Zen 5 core (MACHINE.md).

_smpi_platforms_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

_smpi_check_platform() {
    case "$1" in
        ib100-cpu | nvlink-gpu) return 0 ;;
        *) echo "unknown SMPI platform '$1' (ib100-cpu or nvlink-gpu)" >&2; return 1 ;;
    esac
}

smpi_platform_xml() {
    _smpi_check_platform "$1" || return 1
    echo "$_smpi_platforms_dir/$1.xml"
}

smpi_platform_flags() {
    _smpi_check_platform "$1" || return 1
    # Both platforms take the same flags (README.md, "SMPI configuration"):
    #  coll-selector:ompi        Open MPI 4.1's choice of collective algorithms, not SMPI's naive default
    #  bcast:binomial_tree       except MPI_Bcast: ompi's "knomial" choice for >= 64 ranks runs an
    #                            O(P^2)-message setup on its first call on each communicator
    #  bw-factor:0:1, lat-factor:0:1
    #                            no SMPI correction factors: the platform's links give line rate and the
    #                            profile's latency ("1" alone crashes smpirun: it needs SIZE:VALUE)
    #  network/crosstraffic:no   no 5% reverse-traffic charge: bidirectional transfers at line rate
    echo "--cfg=smpi/host-speed:${SMPI_HOST_SPEED:-180Gf}" \
         "--cfg=smpi/coll-selector:ompi" \
         "--cfg=smpi/bcast:binomial_tree" \
         "--cfg=smpi/bw-factor:0:1" \
         "--cfg=smpi/lat-factor:0:1" \
         "--cfg=network/crosstraffic:no"
}

smpi_hostfile() {
    local name="$1" p="$2" file="$3" prefix
    _smpi_check_platform "$name" || return 1
    if [[ -z "$file" || ! "$p" =~ ^[1-9][0-9]*$ || "$p" -gt 4096 ]]; then
        echo "usage: smpi_hostfile NAME P FILE, with 1 <= P <= 4096" >&2
        return 1
    fi
    case "$name" in
        ib100-cpu) prefix=cpu- ;;
        nvlink-gpu) prefix=gpu- ;;
    esac
    local i
    for ((i = 0; i < p; i++)); do echo "$prefix$i"; done > "$file"
}
