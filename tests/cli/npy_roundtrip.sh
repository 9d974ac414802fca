# convgrid conv reads x, w, dy from .npy files and writes y, dx, dw as .npy, each rank through its
# own slice (MPI-IO), and the result does not depend on the grid: the same files are run on one
# rank and on grids of 2, 3 and 4 ranks that split each dimension. An output is compared byte for
# byte with the one-rank output where the grid keeps the order of its sums (y: Pc = 1; dx: Pk = Ph =
# Pw = 1; dw: Pn = Ph = Pw = 1), otherwise within 1e-5 relative. Every run must also pass --check
# (the loop-nest reference) and report, on every rank and pass, measured received words equal to
# the cost model's words (--json).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

# oneDNN's backward-weights sums in an order that depends on its thread count: fix it, so that the
# byte-for-byte comparisons see only the grid, whatever the binding of the ranks.
export OMP_NUM_THREADS=1

# Stride, padding and an asymmetric end padding that leave every split with uneven blocks and halos.
SHAPE=N=4,C=6,H=9,W=8,K=6,R=3,S=2,stride=2x1,pad=1x0,pad_end=0x1  # y is (4,6,4,8)
npy_write x.npy '<f4' 1 4 6 9 8
npy_write w.npy '<f4' 2 6 6 3 2
npy_write dy.npy '<f4' 3 4 6 4 8

# conv_files GRID: convgrid on these files ($SHAPE, weights $WEIGHT) and GRID (one rank without
# mpiexec), with --check, writing y_GRID.npy, dx_GRID.npy, dw_GRID.npy and GRID.json.
WEIGHT=w.npy
conv_files() {
  local grid=$1 pn pk pc ph pw
  IFS=, read -r pn pk pc ph pw <<< "$grid"
  local np=$((pn * pk * pc * ph * pw)) launch=(run_one)
  [[ $np -eq 1 ]] || launch=(run_mpi "$np")
  "${launch[@]}" conv --shape "$SHAPE" --grid "$grid" --repeat 1 --check \
    --input x.npy --weight "$WEIGHT" --grad-output dy.npy \
    --output "y_$grid.npy" --grad-input "dx_$grid.npy" --grad-weight "dw_$grid.npy" --json "$grid.json" \
    > /dev/null || fail "grid $grid: convgrid failed or --check is over its tolerance"
  expect_words_match_model "$grid.json"
}

# expect_same OUT GRID EXACT: OUT_GRID.npy equals the one-rank OUT byte for byte when EXACT is 1,
# else within 1e-5 relative.
expect_same() {
  local got=$1_$2.npy want=$1_1,1,1,1,1.npy
  if [[ $3 -eq 1 ]]; then
    cmp "$got" "$want" || fail "$1 on grid $2 is not bit-identical to one rank"
  else
    expect_npy_close "$got" "$want" 1e-5
  fi
}

conv_files 1,1,1,1,1
for grid in 2,1,1,1,1 1,2,1,1,1 1,1,2,1,1 1,1,1,2,1 1,1,1,1,3 1,3,1,1,1 2,1,1,1,2 1,2,2,1,1 1,1,1,2,2; do
  conv_files "$grid"
  IFS=, read -r pn pk pc ph pw <<< "$grid"
  expect_same y "$grid" $((pc == 1))
  expect_same dx "$grid" $((pk == 1 && ph == 1 && pw == 1))
  expect_same dw "$grid" $((pn == 1 && ph == 1 && pw == 1))
done

# The same layer in 3 groups of 2 channels (weights 6 x 2 x 3 x 2): grids whose k-fibre gives a
# rank whole groups (Pk=2 < 3: 2 and 1), one group a rank (Pk=3), with a spatial split, and data x
# spatial. y is exact where the rank's local convolution is the whole layer's (3 groups, Pk = Pc = 1);
# with fewer groups oneDNN may pick another kernel, which sums in another order.
SHAPE=$SHAPE,groups=3
WEIGHT=wg.npy
npy_write wg.npy '<f4' 4 6 2 3 2
rm -f ./*_1,1,1,1,1.npy
conv_files 1,1,1,1,1
for grid in 1,2,1,1,1 1,3,1,1,1 1,2,1,2,1 2,1,1,1,2; do
  conv_files "$grid"
  IFS=, read -r pn pk pc ph pw <<< "$grid"
  expect_same y "$grid" $((pk == 1 && pc == 1))
  expect_same dx "$grid" 0
  expect_same dw "$grid" 0
done
echo "PASS"
