# convgrid conv rejects bad input with one clear error line and exit status 1, never a crash or a
# hang: malformed --shape strings, impossible --grid values, --repeat 0, file flags for a pass that
# does not use them, and .npy files that are missing, not .npy, of the wrong dtype, truncated or of
# the wrong shape. Grid and file errors also run under mpiexec -n 2 and -n 3, where every rank
# meets the error: the job must fail without hanging and print the message once, not once per rank.
# The one-rank and the multi-rank checks run side by side (each run mostly waits on MPI start-up
# and teardown), which keeps the script near 20 s.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

readonly SHAPE=N=2,C=3,H=5,W=5,K=4,R=3,S=3
# A grid of 2 and of 3 ranks that splits the input tensor between the ranks.
declare -A SPLIT=([2]="2,1,1,1,1" [3]="1,1,1,3,1")

# Files for the layer's x, which is (2,3,5,5) float32.
npy_write x.npy '<f4' 1 2 3 5 5
npy_write x_f8.npy '<f8' 1 2 3 5 5
npy_write x_wide.npy '<f4' 1 2 3 5 6
echo "not an array" > x_text.npy
# One float short: on a grid, only the rank owning the last element would miss data of its slice.
head -c $(( $(stat -c %s x.npy) - 4 )) x.npy > x_short.npy

one_rank_checks() {
  # Shapes
  expect_fail_with "missing key S" conv --shape N=2,C=3,H=5,W=5,K=4,R=3
  expect_fail_with "unknown key 'Q'" conv --shape "$SHAPE,Q=1"
  expect_fail_with "N=a is not an integer" conv --shape N=a,C=3,H=5,W=5,K=4,R=3,S=3
  expect_fail_with "N=0" conv --shape N=0,C=3,H=5,W=5,K=4,R=3,S=3
  expect_fail_with "K=-4" conv --shape N=2,C=3,H=5,W=5,K=-4,R=3,S=3
  expect_fail_with "stride=2x" conv --shape "$SHAPE,stride=2x"
  expect_fail_with "overflows" conv --shape N=1099511627776,C=1099511627776,H=1099511627776,W=1,K=1,R=1,S=1
  expect_fail_with "filter R=3" conv --shape N=1,C=1,H=2,W=2,K=1,R=3,S=3
  # Grids
  expect_fail_with "five extents" conv --shape "$SHAPE" --grid 1,1,1,1
  expect_fail_with "extent '0'" conv --shape "$SHAPE" --grid 0,1,1,1,1
  expect_fail_with "has 2 ranks but the job has 1" conv --shape "$SHAPE" --grid 2,1,1,1,1
  # Other flags
  expect_fail_with "--repeat 0" conv --shape "$SHAPE" --repeat 0
  expect_fail_with "--grad-input" conv --shape "$SHAPE" --pass fwd --grad-input dx.npy
  expect_fail_with "--input" conv --shape "$SHAPE" --pass bwd-data --input x.npy
  expect_fail_with "--output" conv --shape "$SHAPE" --pass bwd-weights --output y.npy
  expect_fail_with "--weight" conv --shape "$SHAPE" --pass bwd-weights --weight w.npy
  # Files
  run_one conv --shape "$SHAPE" --repeat 1 --input x.npy > /dev/null || fail "the valid x.npy was rejected"
  expect_fail_with "missing.npy" conv --shape "$SHAPE" --input missing.npy
  expect_fail_with "not a .npy file" conv --shape "$SHAPE" --input x_text.npy
  expect_fail_with "'<f8'" conv --shape "$SHAPE" --input x_f8.npy
  expect_fail_with "truncated" conv --shape "$SHAPE" --input x_short.npy
  expect_fail_with "(2, 3, 5, 6)" conv --shape "$SHAPE" --input x_wide.npy
  expect_fail_with "(2, 3, 5, 5)" conv --shape "$SHAPE" --weight x.npy
}

# Each failing mpiexec takes 1-3 s to tear the job down, so the file errors alternate between the
# two rank counts; the truncated file, the one error that only some ranks could see in their own
# slice, runs on both.
multi_rank_checks() {
  for np in 2 3; do
    expect_mpi_fail_with "$np" "has 1 ranks but the job has $np" conv --shape "$SHAPE" --grid 1,1,1,1,1
    expect_mpi_fail_with "$np" "Pk=$np is larger than K=1" conv --shape N=2,C=3,H=5,W=5,K=1,R=3,S=3 --grid 1,$np,1,1,1
    expect_mpi_fail_with "$np" "truncated" conv --shape "$SHAPE" --grid "${SPLIT[$np]}" --input x_short.npy
  done
  expect_mpi_fail_with 2 "missing.npy" conv --shape "$SHAPE" --grid "${SPLIT[2]}" --input missing.npy
  expect_mpi_fail_with 3 "not a .npy file" conv --shape "$SHAPE" --grid "${SPLIT[3]}" --weight x_text.npy
  expect_mpi_fail_with 2 "'<f8'" conv --shape "$SHAPE" --grid "${SPLIT[2]}" --input x_f8.npy
  expect_mpi_fail_with 3 "(2, 3, 5, 6)" conv --shape "$SHAPE" --grid "${SPLIT[3]}" --input x_wide.npy
}

one_rank_checks &
one_rank=$!
multi_rank_checks &
multi_rank=$!
status=0
wait $one_rank || status=1
wait $multi_rank || status=1
[[ $status -eq 0 ]] || fail "see the failures above"
echo "PASS"
