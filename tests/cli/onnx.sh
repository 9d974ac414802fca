# convgrid on ONNX models (--network X.onnx; tests/data/onnx, made by make_models.py):
#  - plan: tiny_resnet.onnx plans at batch 256 on P = 1024 exactly as its JSON twin
#    (tiny_resnet.json): the same per-layer JSON; --input-shape equal to the file's is accepted,
#    one that contradicts it is a one-line error, and so is --input-shape with a JSON network;
#  - a truncated model is a one-line error naming the file;
#  - train: from the model's initializers (PyTorch's weights), the first 4 losses on the first 64
#    Fashion-MNIST images (one batch per epoch) equal PyTorch's (tiny_resnet.losses.json) within
#    1e-4 relative, on 1 and 2 ranks; and so do tiny_mobilenet's (depthwise convolutions, ReLU6,
#    add layers), the 2 ranks splitting every layer's rows where it fits (redistributions, halos),
#    tiny_densenet's (DenseNet's concats, a Pad of zeros) and tiny_googlenet's (Inception's
#    concats, ceil-mode max pooling) and tiny_inception's (nn.ZeroPad2d before a strided
#    convolution and InceptionA's avg_pool2d with padding: Pads of zeros, the first with its pads
#    computed from constants; x.mean([2, 3]); x.view(x.size(0), -1): a Reshape by a computed
#    shape), the 2 ranks splitting channels (Pk = 2: the concats' joined placements are channel
#    blocks) or rows (the padded layers' halos); and tiny_activations' (SiLU and Hardswish as torch
#    exports them, a product with a Sigmoid or HardSigmoid, Tanh, Sigmoid, Hardsigmoid) and
#    tiny_mobilenet_v3's (squeeze-and-excitation: scale layers, whose gates every block of rows
#    wants), the 2 ranks splitting rows; each at the learning rate its losses file gives;
#  - and in each of those runs every parameter's first update is the learning rate times PyTorch's
#    gradient (<model>.grads.json), which sees gradients too small to move the losses;
#  - step refuses a network with concats (tiny_googlenet) in one line;
#  - export --onnx: the checkpoint of step 2 (tiny_resnet, one rank) written into a copy of the
#    model. Read with a small protobuf decoder (Python's standard library): every parameter
#    initializer holds raw_data equal byte for byte to the array of `export --out` for its
#    parameter (no float_data), everything else (graph, nodes, other fields of the initializers,
#    opset) is as in the original; trained from the copy, the first loss is the original run's
#    third (it continues where step 2 stood); bad flags, another network and an unwritable path
#    are one-line errors that write nothing.
set -euo pipefail
readonly DATA=$(cd "$(dirname "$0")/../data/onnx" && pwd) HERE=$(cd "$(dirname "$0")" && pwd)
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

train=(train --train-samples 64 --test-samples 64 --batch 64 --epochs 4 --momentum 0.9
       --weight-decay 0 --threads 1 --progress none --log-steps)
for run in "tiny_resnet 1" "tiny_resnet 2" "tiny_mobilenet 1" "tiny_mobilenet 2 --grid 1,1,1,2,1" \
  "tiny_densenet 1" "tiny_densenet 2 --grid 1,2,1,1,1" "tiny_googlenet 1" "tiny_googlenet 2 --grid 1,1,1,2,1" \
  "tiny_inception 1" "tiny_inception 2 --grid 1,1,1,2,1" "tiny_activations 1" \
  "tiny_activations 2 --grid 1,1,1,2,1" "tiny_mobilenet_v3 1" "tiny_mobilenet_v3 2 --grid 1,1,1,2,1"; do
  read -r model np grid <<< "$run"
  lr=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["lr"])' "$DATA/$model.losses.json")
  # shellcheck disable=SC2086
  run_mpi "$np" "${train[@]}" --lr "$lr" --network "$DATA/$model.onnx" $grid --checkpoint-dir "ck.$model.$np" \
    --json "$model.$np.json" > /dev/null
  "$PYTHON" - "$model.$np.json" "$DATA/$model.losses.json" <<'PY' || fail "$model np $np: losses differ from PyTorch's"
import json, sys
got = [s["loss"] for s in json.load(open(sys.argv[1]))["steps"]]
want = json.load(open(sys.argv[2]))["losses"]
assert len(got) == len(want), (got, want)
worst = max(abs(g - w) / abs(w) for g, w in zip(got, want))
print(f"{sys.argv[1]}: {got} vs PyTorch {want}: largest relative difference {worst:.2e}")
sys.exit(0 if worst <= 1e-4 else 1)
PY
  # The first step's gradients: every parameter's first update (SGD with momentum starts with the
  # gradient itself) is the learning rate times PyTorch's gradient, with a margin of 1e-2 of the
  # tensor's largest update. The losses cannot tell a gradient that moves them little, as a
  # squeeze-and-excitation gate's does (a gate gradient of zero moves tiny_mobilenet_v3's by 2e-5).
  run_one export --checkpoint "ck.$model.$np/step-00000001.ckpt" --network "$DATA/$model.onnx" \
    --onnx "$model.$np.step1.onnx" > /dev/null || fail "$model np $np: export failed"
  "$PYTHON" - "$HERE" "$DATA/$model.onnx" "$model.$np.step1.onnx" "$DATA/$model.grads.json" "$lr" <<'PY' ||
import json, sys
sys.path.insert(0, sys.argv[1])
from onnx_protobuf import raw_floats, split  # noqa: E402
before, after = split(sys.argv[2])[1], split(sys.argv[3])[1]
grads, lr = json.load(open(sys.argv[4])), float(sys.argv[5])
worst = 0.0
for name, g in grads.items():
    w0, w1 = raw_floats(before[name]), raw_floats(after[name])
    want = [lr * x for x in g]
    err = max(abs((a - b) - c) for a, b, c in zip(w0, w1, want))
    allowed = 1e-2 * max(abs(x) for x in want) + 2e-7 * max(abs(x) for x in w0) + 1e-8
    worst = max(worst, err / allowed)
    assert err <= allowed, f"{name}: update off by {err:.3g} (allowed {allowed:.3g})"
print(f"{sys.argv[3]}: {len(grads)} parameters' first updates are PyTorch's (worst at {worst:.2f} of the margin)")
PY
    fail "$model np $np: the first step's gradients differ from PyTorch's"
done
expect_fail_with "step moves layers' inputs and residual shortcuts; network 'tiny_googlenet' has the concat layer" \
  step --network "$DATA/tiny_googlenet.onnx" --batch 4

# ---- export --onnx --------------------------------------------------------------------------

ckpt=ck.tiny_resnet.1/step-00000002.ckpt
run_one export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx" --onnx trained.onnx --json \
  > export.json || fail "export --onnx failed: $(cat export.json)"
run_one export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx" --out w.npz > /dev/null
"$PYTHON" - "$DATA/tiny_resnet.onnx" trained.onnx export.json w.npz "$HERE" <<'PY' ||
import json, struct, sys, zipfile

sys.path.insert(0, sys.argv[5])
from onnx_protobuf import split  # noqa: E402

original, trained = split(sys.argv[1]), split(sys.argv[2])
assert original[0] == trained[0], "the graph, its nodes or the model's other fields changed"
assert original[1].keys() == trained[1].keys(), "other initializers"
report = {t["name"]: t for t in json.load(open(sys.argv[3]))["tensors"]}
with zipfile.ZipFile(sys.argv[4]) as z:
    arrays = {}
    for info in z.infolist():
        raw = z.read(info)
        arrays[info.filename[:-4]] = raw[10 + struct.unpack("<H", raw[8:10])[0]:]
TensorData = {4, 9}  # float_data, raw_data
for name, before in original[1].items():
    after = trained[1][name]
    if name not in report:
        assert before == after, name + " changed"
        continue
    keep = lambda t: [f for f in t if f[0] not in TensorData]
    assert keep(before) == keep(after), name + ": more than its data changed"
    assert [f[0] for f in after if f[0] in TensorData] == [9], name + ": not raw_data alone"
    assert [v for n, _, v in after if n == 2] == [1], name + ": not FLOAT"
    assert [v for n, _, v in after if n == 1] == report[name]["shape"], name + ": dims"
    raw = [v for n, _, v in after if n == 9][0]
    assert raw == arrays[report[name]["parameter"]], name + ": not the checkpoint's values"
print("%s: %d of %d initializers hold the checkpoint's values, the rest is unchanged"
      % (sys.argv[2], len(report), len(original[1])))
assert len(report) == 32
PY
  fail "trained.onnx is not the model with the checkpoint's values"

# Training from the copy continues where step 2 stood: its first loss is the original's third.
run_one train --network trained.onnx --train-samples 64 --test-samples 64 --batch 64 --epochs 1 \
  --lr 0.1 --momentum 0.9 --weight-decay 0 --threads 1 --progress none --log-steps \
  --json continued.json > /dev/null
"$PYTHON" - continued.json tiny_resnet.1.json <<'PY' || fail "training from trained.onnx did not continue from step 2"
import json, sys
got = json.load(open(sys.argv[1]))["steps"][0]["loss"]
want = json.load(open(sys.argv[2]))["steps"][2]["loss"]
print(f"first loss from trained.onnx {got}, the original run's third {want}")
sys.exit(0 if abs(got - want) <= 1e-6 * abs(want) else 1)
PY

expect_fail_with "--onnx writes the trained weights into the --network model, which must be an ONNX file (.onnx), not fmnist" \
  export --checkpoint "$ckpt" --network fmnist --onnx x.onnx
expect_fail_with "--out x.onnx writes a .npz archive; --onnx x.onnx writes the trained ONNX model" \
  export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx" --out x.onnx
expect_fail_with "--onnx x.bin: the model's file name must end in .onnx" \
  export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx" --onnx x.bin
expect_fail_with "export writes one file: give --out W.npz or --onnx M.onnx" \
  export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx"
expect_fail_with "--out excludes --onnx" \
  export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx" --out x.npz --onnx x.onnx
expect_fail_with "checkpoint $ckpt is of network 'tiny_resnet', --network trained.onnx is 'trained'" \
  export --checkpoint "$ckpt" --network trained.onnx --onnx x.onnx
expect_fail_with "nodir/x.onnx: cannot write" \
  export --checkpoint "$ckpt" --network "$DATA/tiny_resnet.onnx" --onnx nodir/x.onnx
[[ ! -e x.onnx && ! -e x.npz && ! -e x.bin ]] || fail "a refused export wrote a file"
[[ -z $(find . -name '*.tmp') ]] || fail "a temporary file was left: $(find . -name '*.tmp')"
echo "onnx: ok"
