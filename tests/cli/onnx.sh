# convgrid on ONNX models (--network X.onnx; tests/data/onnx, made by make_models.py):
#  - plan: tiny_resnet.onnx plans at batch 256 on P = 1024 exactly as its JSON twin
#    (tiny_resnet.json): the same per-layer JSON; --input-shape equal to the file's is accepted,
#    one that contradicts it is a one-line error, and so is --input-shape with a JSON network;
#  - a truncated model is a one-line error naming the file;
#  - train: from the model's initializers (PyTorch's weights), the first 4 losses on the first 64
#    Fashion-MNIST images (one batch per epoch) equal PyTorch's (tiny_resnet.losses.json) within
#    1e-4 relative, on 1 and 2 ranks; and so do tiny_mobilenet's (depthwise convolutions, ReLU6,
#    add layers), the 2 ranks splitting every layer's rows where it fits (redistributions, halos).
set -euo pipefail
readonly DATA=$(cd "$(dirname "$0")/../data/onnx" && pwd)
source "$(dirname "$0")/lib.bash"
cli_init "$@"
[[ -n $PYTHON ]] || fail "python3 is needed to read the JSON reports"
export OMP_NUM_THREADS=1

run_one plan --network "$DATA/tiny_resnet.onnx" --batch 256 --procs 1024 --json onnx.json > onnx.txt
run_one plan --network "$DATA/tiny_resnet.json" --batch 256 --procs 1024 --json json.json > /dev/null
"$PYTHON" - <<'PY' || fail "the ONNX model's plan differs from its JSON twin's"
import json
a, b = json.load(open("onnx.json")), json.load(open("json.json"))
assert a["layers"] == b["layers"] and a["totals"] == b["totals"], "plans differ"
assert [l["name"] for l in a["layers"]][0] == "conv1/Conv", a["layers"][0]["name"]
PY
grep -q "layer1/layer1.0/conv2/Conv" onnx.txt || fail "plan does not show the ONNX node names"
run_one plan --network "$DATA/tiny_resnet.onnx" --input-shape 1x28x28 --batch 8 --procs 4 > /dev/null
expect_fail_with "--input-shape 3x28x28 contradicts input 'input' of shape 1x28x28" \
  plan --network "$DATA/tiny_resnet.onnx" --input-shape 3x28x28 --procs 4
expect_fail_with "--input-shape 1x28x28 applies to .onnx networks" \
  plan --network fmnist --input-shape 1x28x28 --procs 4
head -c 5000 "$DATA/tiny_resnet.onnx" > cut.onnx
expect_fail_with "cut.onnx" plan --network cut.onnx --procs 4

train=(train --train-samples 64 --test-samples 64 --batch 64 --epochs 4 --lr 0.1 --momentum 0.9
       --weight-decay 0 --threads 1 --progress none --log-steps)
for run in "tiny_resnet 1" "tiny_resnet 2" "tiny_mobilenet 1" "tiny_mobilenet 2 --grid 1,1,1,2,1"; do
  read -r model np grid <<< "$run"
  # shellcheck disable=SC2086
  run_mpi "$np" "${train[@]}" --network "$DATA/$model.onnx" $grid --json "$model.$np.json" > /dev/null
  "$PYTHON" - "$model.$np.json" "$DATA/$model.losses.json" <<'PY' || fail "$model np $np: losses differ from PyTorch's"
import json, sys
got = [s["loss"] for s in json.load(open(sys.argv[1]))["steps"]]
want = json.load(open(sys.argv[2]))["losses"]
assert len(got) == len(want), (got, want)
worst = max(abs(g - w) / abs(w) for g, w in zip(got, want))
print(f"{sys.argv[1]}: {got} vs PyTorch {want}: largest relative difference {worst:.2e}")
sys.exit(0 if worst <= 1e-4 else 1)
PY
done
echo "onnx: ok"
