# convgrid train under the faults an operator meets on a cluster (docs/reliability.md):
#  - stop signals: SIGTERM on one rank stops every rank after the same step with a checkpoint, a
#    line from each rank and exit status 75, and the resumed run ends with the same final
#    checkpoint, byte for byte, as an uninterrupted one; the same for SIGUSR1 sent to mpiexec
#    from outside, and for SIGTERM sent to mpiexec (which kills the ranks a second later: whatever
#    it cuts short, no checkpoint is half-written and the resumed run ends the same); without a
#    checkpoint directory SIGINT ends the job with status 130 and a line from each rank;
#  - a stopped rank (SIGSTOP): every live rank reports the stall, the job exits with 124 well
#    within the time limit, and the last checkpoint resumes to the same end;
#  - a full file system (a tmpfs that holds one checkpoint): one error line naming the path, the
#    previous checkpoint intact, no temporary left, and the run resumes from it to the same end;
#  - a read-only or missing checkpoint directory and unwritable --json paths are refused before
#    the first step.
# The tmpfs mounts need a mount namespace of the test's own: the script runs itself under
# `unshare` (as root, or with a user namespace mapping the user to root).
if [[ -z ${CONVGRID_FAULTS_NAMESPACE:-} ]]; then
  export CONVGRID_FAULTS_NAMESPACE=1
  if [[ $(id -u) -eq 0 ]]; then
    exec unshare --mount --propagation private bash "$0" "$@"
  fi
  exec unshare --user --map-root-user --mount --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/lib.bash"
cli_init "$@"
[[ " ${MPI_FLAGS[*]} " == *" --allow-run-as-root "* ]] || MPI_FLAGS+=(--allow-run-as-root)
trap 'cd / && umount -l "$WORK/small" "$WORK/ro" 2> /dev/null; rm -rf "$WORK"' EXIT

# 16 steps of 32 samples over 2 epochs, a checkpoint every 3 steps (fmnist's is 13 MiB).
short=(train --train-samples 256 --test-samples 64 --batch 32 --epochs 2 --threads 1
  --progress none --seed 5 --checkpoint-every 3)
# 64 steps, long enough to be signalled from outside while it runs.
long=(train --train-samples 1024 --test-samples 64 --batch 32 --epochs 2 --threads 1
  --progress none --seed 5 --checkpoint-every 10)

# expect_each_rank FILE NP TEXT: every rank 0..NP-1 printed a line holding TEXT.
expect_each_rank() {
  local r
  for ((r = 0; r < $2; ++r)); do
    grep -q "convgrid: .*rank $r: .*$3" "$1" || fail "rank $r did not print '$3': $(cat "$1")"
  done
}

# resumed_ends_like FULL_DIR DIR NP ARGS...: resuming from DIR ends with FULL_DIR's final
# checkpoint, byte for byte.
resumed_ends_like() {
  local full=$1 dir=$2 np=$3
  shift 3
  run_mpi "$np" "$@" --checkpoint-dir "$dir" --resume > "$dir.resumed.txt" 2>&1 ||
    fail "resuming from $dir failed: $(cat "$dir.resumed.txt")"
  local final
  final=$(ls "$full" | tail -n 1)
  cmp "$full/$final" "$dir/$final" || fail "$dir: the resumed run's $final differs from $full's"
}

run_mpi 2 "${short[@]}" --checkpoint-dir full > full.txt || fail "uninterrupted run failed: $(cat full.txt)"
[[ $(ls full | tail -n 1) == step-00000016.ckpt ]] || fail "the uninterrupted run ended at $(ls full | tail -n 1)"

# SIGTERM reaching rank 1 before step 5: both ranks stop after step 5, with its checkpoint.
status=0
run_mpi 2 "${short[@]}" --checkpoint-dir term --raise-at 1:5:TERM > term.txt 2>&1 || status=$?
[[ $status -eq 75 ]] || fail "stopped by SIGTERM: exit status $status, expected 75: $(cat term.txt)"
expect_each_rank term.txt 2 "stopped by SIGTERM after step 5; checkpoint term/step-00000005.ckpt written"
resumed_ends_like full term 2 "${short[@]}"
grep -q "resumed from term/step-00000005.ckpt" term.resumed.txt || fail "not resumed from step 5"

# SIGINT without a checkpoint directory: a line from each rank and status 128 + 2.
status=0
run_mpi 2 "${short[@]}" --raise-at 0:3:INT > int.txt 2>&1 || status=$?
[[ $status -eq 130 ]] || fail "stopped by SIGINT: exit status $status, expected 130: $(cat int.txt)"
expect_each_rank int.txt 2 "stopped by SIGINT after step 3; nothing saved"

# A stopped rank: the live ones report the stall within seconds and the job ends with 124.
status=0
start=$SECONDS
run_mpi 3 "${short[@]}" --checkpoint-dir stopped --raise-at 1:5:STOP --stall-timeout 3 \
  > stopped.txt 2>&1 || status=$?
[[ $status -eq 124 && $((SECONDS - start)) -lt $((RUN_LIMIT_S - 10)) ]] ||
  fail "a stopped rank: exit status $status after $((SECONDS - start)) s: $(cat stopped.txt)"
for r in 0 2; do
  grep -q "convgrid: error on rank $r: stalled: no progress for 3 s (--stall-timeout) in step 5" \
    stopped.txt || fail "rank $r did not report the stall: $(cat stopped.txt)"
done
run_mpi 3 "${short[@]}" --checkpoint-dir full3 > full3.txt 2>&1 || fail "uninterrupted 3-rank run failed"
resumed_ends_like full3 stopped 3 "${short[@]}"
grep -q "resumed from stopped/step-00000003.ckpt" stopped.resumed.txt || fail "not resumed from step 3"

# Signals from outside, to mpiexec, once the run has written its checkpoint of step 10.
run_mpi 2 "${long[@]}" --checkpoint-dir long > long.txt || fail "uninterrupted long run failed"
for sig in USR1 TERM; do
  run_mpi 2 "${long[@]}" --checkpoint-dir "out$sig" > "out$sig.txt" 2>&1 &
  job=$!
  for ((i = 0; i < 400; ++i)); do
    [[ -e out$sig/step-00000010.ckpt ]] && break
    sleep 0.1
  done
  [[ -e out$sig/step-00000010.ckpt ]] || { kill "$job"; fail "no checkpoint of step 10 to interrupt"; }
  pkill "-$sig" -f "^mpiexec -n 2 .*--checkpoint-dir out$sig" || fail "no mpiexec to signal"
  status=0
  wait "$job" || status=$?
  [[ $status -ne 0 && $status -ne 124 ]] || fail "SIG$sig to mpiexec: exit status $status"
  if [[ $sig == USR1 ]]; then
    [[ $status -eq 75 ]] || fail "SIGUSR1 to mpiexec: exit status $status, expected 75: $(cat outUSR1.txt)"
    expect_each_rank outUSR1.txt 2 "stopped by SIGUSR1 after step [0-9]*; checkpoint"
  fi
  ! ls -a "out$sig" | grep -q tmp || [[ $sig == TERM ]] || fail "a temporary was left in out$sig"
  resumed_ends_like long "out$sig" 2 "${long[@]}"
  ! ls -a "out$sig" | grep -q tmp || fail "the resumed run left a temporary in out$sig"
done

# A full file system: the checkpoint of step 3 fits in 20 MiB, the one of step 6 does not.
mkdir small && mount -t tmpfs -o size=20m tmpfs small || fail "cannot mount a tmpfs"
expect_mpi_fail_with 2 "checkpoint small/step-00000006.ckpt not written: small/.step-00000006.ckpt.tmp: write failed: No space left on device; the last good one, small/step-00000003.ckpt, is intact" \
  "${short[@]}" --checkpoint-dir small
[[ $(ls -a small | grep -c ckpt) -eq 1 ]] || fail "the full file system holds $(ls -a small)"
cp -r small small-copy
resumed_ends_like full small-copy 2 "${short[@]}"

# Read-only and missing places: refused before the first step (no epoch line), in one line.
mkdir ro && mount -t tmpfs -o ro,size=1m tmpfs ro || fail "cannot mount a read-only tmpfs"
expect_mpi_fail_with 2 "--checkpoint-dir ro: cannot write in it: Read-only file system" \
  "${short[@]}" --checkpoint-dir ro
expect_mpi_fail_with 2 "--checkpoint-dir ro/sub: cannot create the directory" \
  "${short[@]}" --checkpoint-dir ro/sub
expect_mpi_fail_with 2 "--json ro/log.json: cannot create a file in ro: Read-only file system" \
  "${short[@]}" --json ro/log.json
expect_mpi_fail_with 2 "--json gone/log.json: the directory gone does not exist" \
  "${short[@]}" --json gone/log.json
expect_fail_with "--json .: is a directory" "${short[@]}" --json .
expect_fail_with "--output ro/y.npy: cannot create a file in ro" conv --shape N=1,C=2,H=6,W=6,K=3,R=3,S=3 --output ro/y.npy
expect_fail_with "--stall-timeout soon: expected auto, 0 (off) or a number of seconds" \
  "${short[@]}" --stall-timeout soon
expect_fail_with "--raise-at 1:0:TERM: expected RANK:STEP:SIGNAL" "${short[@]}" --raise-at 1:0:TERM
echo "faults: all checks passed"
