# Kernel threads fitted to the launch (#16): by default a rank runs the cores of its affinity mask
# shared with the ranks of its node that overlap it; --threads overrides; a node with more ranks
# than cores is reported once, by rank 0; a negative count is one line of error. The launches are
# pinned with taskset (the ranks inherit its mask under --bind-to none), so the expected counts
# are the same on any machine with 2 CPUs or more.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

unset OMP_NUM_THREADS  # it would choose the threads (checked at the end)
(( $(nproc) >= 2 )) || fail "this test needs 2 CPUs (it pins ranks to CPUs 0 and 1)"
train=(train --network fmnist --data synthetic --train-samples 18 --test-samples 9 --epochs 1)

# pinned CPUS NP ARGS...: convgrid ARGS... under mpiexec -n NP, every rank on CPUs CPUS.
pinned() {
  local cpus=$1 np=$2
  shift 2
  timeout "$RUN_LIMIT_S" taskset -c "$cpus" mpiexec -n "$np" "${MPI_FLAGS[@]}" "$CONVGRID" "$@"
}
threads_of() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernel_threads"])' "$1"; }

pinned 0-1 1 "${train[@]}" --batch 8 --json one.json > one.txt 2> one.err || fail "1 rank: $(cat one.txt one.err)"
[[ $(threads_of one.json) -eq 2 ]] || fail "1 rank on 2 CPUs: $(threads_of one.json) threads, expected 2"
grep -q "2 kernel threads per rank (2 cores shared by 1 rank)" one.txt || fail "header: $(head -1 one.txt)"

pinned 0-1 2 "${train[@]}" --batch 8 --json two.json > two.txt 2> two.err || fail "2 ranks: $(cat two.txt two.err)"
[[ $(threads_of two.json) -eq 1 ]] || fail "2 ranks on 2 CPUs: $(threads_of two.json) threads, expected 1"
! grep -q "oversubscribed" two.err || fail "2 ranks on 2 CPUs reported as oversubscribed: $(cat two.err)"

pinned 0-1 2 "${train[@]}" --batch 8 --threads 3 --json three.json > three.txt 2>&1 || fail "--threads 3: $(cat three.txt)"
[[ $(threads_of three.json) -eq 3 ]] || fail "--threads 3 gave $(threads_of three.json)"

pinned 0 3 "${train[@]}" --batch 9 --json over.json > over.txt 2> over.err || fail "3 ranks on 1 CPU: $(cat over.txt over.err)"
[[ $(grep -c "warning: oversubscribed: 3 ranks share 1 core " over.err) -eq 1 ]] ||
  fail "3 ranks on 1 CPU: warning not printed once: $(cat over.err)"
[[ $(threads_of over.json) -eq 1 ]] || fail "oversubscribed ranks run $(threads_of over.json) threads"

OMP_NUM_THREADS=1 pinned 0-1 1 "${train[@]}" --batch 8 --json env.json > env.txt 2>&1 || fail "OMP_NUM_THREADS=1: $(cat env.txt)"
[[ $(threads_of env.json) -eq 1 ]] || fail "OMP_NUM_THREADS=1 gave $(threads_of env.json) threads"
grep -q "1 kernel thread per rank (OMP_NUM_THREADS)" env.txt || fail "header: $(head -1 env.txt)"

expect_fail_with "--threads -1" "${train[@]}" --batch 8 --threads -1
echo "threads: ok"
