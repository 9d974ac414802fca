# convgrid export: a checkpoint's parameters as a .npz named like PyTorch's state_dict.
#  - fmnist trained for 4 steps: the archive read back with Python's zipfile (every CRC checked)
#    and a small .npy parser holds exactly conv1-3 and fc1-2 .weight/.bias with PyTorch's shapes
#    (conv [K, C, R, S], fc [K, F], bias [K]) and the checkpoint's values, no momentum; the same
#    archive from the directory (its newest checkpoint) and from the file, byte for byte; --json;
#    where PyTorch is installed, bench/check_export.py loads it into the PyTorch module and gets
#    the test accuracy convgrid printed;
#  - a checkpoint written here for a JSON network with batch norm and a depthwise conv: .weight,
#    .bias, .running_mean, .running_var as [C], .num_batches_tracked as an int64 0-d array equal to
#    the step, the depthwise weight as [K, C/groups, R, S];
#  - bad input: a missing file, a file that is not a checkpoint, a corrupt one, an empty
#    directory, another network, a network of the same name with other shapes, other layer names
#    or a parameter fewer, an unwritable --out: one-line errors, exit status 1, no archive written.
set -euo pipefail
readonly BENCH=$(cd "$(dirname "$0")/../../bench" && pwd)
source "$(dirname "$0")/lib.bash"
cli_init "$@"
[[ -n $PYTHON ]] || fail "python3 is needed to read the archives"
export OMP_NUM_THREADS=1

# The archive and checkpoint reader: `npz_check NPZ CKPT SPEC [STEP]` checks that NPZ holds
# exactly the arrays of SPEC ("name=dtype:d0,d1,...;...") with the values of the checkpoint's
# tensor of the same name (num_batches_tracked: STEP).
readonly CHECK_PY='
import ast, json, struct, sys, zipfile, zlib

def npy(raw, name):
    assert raw[:8] == b"\x93NUMPY\x01\x00", name + ": not a version 1.0 .npy member"
    length = struct.unpack("<H", raw[8:10])[0]
    assert (10 + length) % 64 == 0, name + ": data not 64-byte aligned"
    header = ast.literal_eval(raw[10:10 + length].decode("latin1"))
    assert not header["fortran_order"], name
    shape, descr = tuple(header["shape"]), header["descr"]
    count = 1
    for d in shape:
        count *= d
    code = {"<f4": "f", "<i8": "q"}[descr]
    data = raw[10 + length:]
    assert len(data) == struct.calcsize("<%d%s" % (count, code)), name + ": data size"
    return descr, shape, struct.unpack("<%d%s" % (count, code), data)

def checkpoint(path):
    raw = open(path, "rb").read()
    assert raw[:8] == b"CVGCKPT1", path
    assert struct.unpack("<I", raw[-4:])[0] == zlib.crc32(raw[:-4]), path + ": CRC"
    length = struct.unpack("<Q", raw[8:16])[0]
    header = json.loads(raw[16:16 + length])
    floats = raw[16 + length:-4]
    tensors = {}
    for t in header["tensors"]:
        at = 4 * t["offset"]
        tensors[t["name"]] = struct.unpack("<%df" % t["count"], floats[at:at + 4 * t["count"]])
    return header, tensors

def check(npz, ckpt, spec, step=None):
    want = {}
    for item in spec.split(";"):
        name, kind = item.split("=")
        descr, _, dims = kind.partition(":")
        want[name] = (descr, tuple(int(d) for d in dims.split(",") if d))
    with zipfile.ZipFile(npz) as z:
        assert z.testzip() is None, npz + ": a member fails its CRC"
        infos = z.infolist()
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos), "not STORED"
        got = {i.filename[:-4]: npy(z.read(i), i.filename) for i in infos}
    assert [i.filename[-4:] for i in infos] == [".npy"] * len(infos)
    assert set(got) == set(want), "members %s, expected %s" % (sorted(got), sorted(want))
    header, tensors = checkpoint(ckpt)
    for name, (descr, shape) in want.items():
        g_descr, g_shape, values = got[name]
        assert (g_descr, g_shape) == (descr, shape), "%s: %s %s, expected %s %s" % (name, g_descr, g_shape, descr, shape)
        if name.endswith(".num_batches_tracked"):
            assert values == (int(step),) == (header["step"],), "%s: %s, step %s" % (name, values, step)
        else:
            assert values == tensors[name], name + ": values differ from the checkpoint"
    print("%s: %d arrays, shapes and values as expected" % (npz, len(want)))

check(*sys.argv[1:])
'
npz_check() { "$PYTHON" -c "$CHECK_PY" "$@" || fail "$1 does not hold what $2 holds"; }

# ---- fmnist, trained by convgrid ---------------------------------------------------------------

run_one train --network fmnist --train-samples 128 --test-samples 200 --batch 32 --threads 1 \
  --progress none --seed 3 --checkpoint-dir ck > train.txt || fail "training failed: $(cat train.txt)"
ckpt=ck/step-00000004.ckpt
[[ -f $ckpt ]] || fail "no $ckpt: $(ls ck)"

run_one export --checkpoint ck --network fmnist --out w.npz > export.txt || fail "export failed: $(cat export.txt)"
fmnist="conv1.weight=<f4:32,1,3,3;conv1.bias=<f4:32;conv2.weight=<f4:64,32,3,3;conv2.bias=<f4:64"
fmnist+=";conv3.weight=<f4:128,64,3,3;conv3.bias=<f4:128;fc1.weight=<f4:256,6272;fc1.bias=<f4:256"
fmnist+=";fc2.weight=<f4:10,256;fc2.bias=<f4:10"
npz_check w.npz "$ckpt" "$fmnist"
grep -Eq '^conv1\.weight +float32 +\[32, 1, 3, 3\]$' export.txt || fail "no conv1.weight line: $(cat export.txt)"
grep -Eq '^fc1\.weight +float32 +\[256, 6272\]$' export.txt || fail "no fc1.weight line: $(cat export.txt)"
[[ $(grep -c float32 export.txt) -eq 10 ]] || fail "not one line per array: $(cat export.txt)"
grep -q "^wrote w.npz: 10 arrays of network fmnist from $ckpt (step 4)$" export.txt ||
  fail "no summary line: $(tail -1 export.txt)"

# The file itself gives the same bytes; --json lists the same arrays.
run_one export --checkpoint "$ckpt" --network fmnist --out same.npz --json > export.json ||
  fail "export --json failed: $(cat export.json)"
cmp w.npz same.npz || fail "exporting the file and its directory differ"
"$PYTHON" - export.json <<'PY' || fail "export --json is not what was written: $(cat export.json)"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["network"] == "fmnist" and j["step"] == 4 and j["out"] == "same.npz", j
assert [t["name"] for t in j["tensors"]][:2] == ["conv1.weight", "conv1.bias"], j["tensors"]
assert {"name": "fc1.weight", "dtype": "float32", "shape": [256, 6272]} in j["tensors"], j["tensors"]
assert len(j["tensors"]) == 10
PY

# PyTorch's module with the exported weights classifies the test samples as convgrid did.
if "$PYTHON" -c "import numpy, torch" 2> /dev/null; then
  accuracy=$(sed -nE 's/^epoch 1: .* test loss [0-9.]+ accuracy ([0-9.]+) .*/\1/p' train.txt)
  [[ -n $accuracy ]] || fail "no test accuracy in: $(cat train.txt)"
  "$PYTHON" "$BENCH/check_export.py" --npz w.npz --network fmnist --test-samples 200 --expect "$accuracy" ||
    fail "PyTorch's accuracy with the export differs from convgrid's $accuracy"
else
  echo "export: no PyTorch (python3-torch): the accuracy check is skipped"
fi

# ---- batch norm: a checkpoint written here for a small JSON network ----------------------------

cat > bn.json <<'JSON'
{"name": "bn-tiny", "input": {"C": 1, "H": 6, "W": 6}, "layers": [
  {"type": "conv", "name": "conv1", "K": 4, "R": 3, "S": 3, "pad": 1},
  {"type": "batch_norm", "name": "bn1"}, {"type": "relu"},
  {"type": "conv", "name": "dw", "K": 4, "R": 3, "S": 3, "pad": 1, "groups": 4},
  {"type": "global_avg_pool"}, {"type": "flatten"},
  {"type": "fc", "name": "fc", "K": 3, "bias": true}, {"type": "softmax_xent"}]}
JSON
"$PYTHON" - bn.ckpt <<'PY' || fail "cannot write the batch-norm checkpoint"
import json, struct, sys, zlib
tensors = [("conv1.weight", [4, 1, 3, 3])] + [("bn1." + n, [4, 1, 1, 1]) for n in
           ("weight", "bias", "running_mean", "running_var")] + [("dw.weight", [4, 1, 3, 3])] + \
          [("fc.weight", [3, 4, 1, 1]), ("fc.bias", [3, 1, 1, 1])]
header = {"network": "bn-tiny", "batch": 8, "seed": 1, "epoch": 1, "batch_in_epoch": 0, "step": 7,
          "epoch_loss_sum": 0.0, "epoch_correct": 0, "epoch_samples": 0, "tensors": []}
data, offset = b"", 0
for name, shape in tensors:
    for suffix in ("", ".momentum"):
        count = shape[0] * shape[1] * shape[2] * shape[3]
        header["tensors"].append({"name": name + suffix, "shape": shape, "offset": offset, "count": count})
        data += struct.pack("<%df" % count, *(0.25 * (offset + i) - 1 for i in range(count)))
        offset += count
text = json.dumps(header).encode()
raw = b"CVGCKPT1" + struct.pack("<Q", len(text)) + text + data
open(sys.argv[1], "wb").write(raw + struct.pack("<I", zlib.crc32(raw)))
PY
run_one export --checkpoint bn.ckpt --network bn.json --out bn.npz > bn.txt || fail "batch-norm export failed: $(cat bn.txt)"
bn="conv1.weight=<f4:4,1,3,3;bn1.weight=<f4:4;bn1.bias=<f4:4;bn1.running_mean=<f4:4;bn1.running_var=<f4:4"
bn+=";bn1.num_batches_tracked=<i8:;dw.weight=<f4:4,1,3,3;fc.weight=<f4:3,4;fc.bias=<f4:3"
npz_check bn.npz bn.ckpt "$bn" 7
grep -Eq '^bn1\.num_batches_tracked +int64 +\[\]$' bn.txt || fail "no num_batches_tracked line: $(cat bn.txt)"

# ---- Bad input -------------------------------------------------------------------------------

expect_fail_with "nowhere.ckpt: cannot open for reading" export --checkpoint nowhere.ckpt --network fmnist --out x.npz
printf 'not a checkpoint' > junk.ckpt
expect_fail_with "checkpoint junk.ckpt is corrupt: it does not start with CVGCKPT1" \
  export --checkpoint junk.ckpt --network fmnist --out x.npz
"$PYTHON" -c "
import sys
b = bytearray(open('$ckpt', 'rb').read()); b[len(b) // 2] ^= 0xFF; open('bad.ckpt', 'wb').write(b)"
expect_fail_with "checkpoint bad.ckpt is corrupt: CRC-32" export --checkpoint bad.ckpt --network fmnist --out x.npz
mkdir empty
expect_fail_with "--checkpoint empty: the directory holds no step-*.ckpt file" \
  export --checkpoint empty --network fmnist --out x.npz
expect_fail_with "checkpoint $ckpt is of network 'fmnist', --network vgg16 is 'vgg16'" \
  export --checkpoint "$ckpt" --network vgg16 --out x.npz
expect_fail_with "checkpoint bn.ckpt is of network 'bn-tiny', --network fmnist is 'fmnist'" \
  export --checkpoint bn.ckpt --network fmnist --out x.npz
sed 's/"K": 4, "R": 3, "S": 3, "pad": 1, "groups": 4/"K": 8, "R": 3, "S": 3, "pad": 1, "groups": 4/' bn.json > wide_dw.json
expect_fail_with "checkpoint bn.ckpt: dw.weight has extents [4, 1, 3, 3], layer 'dw' of network 'bn-tiny' needs [8, 1, 3, 3]" \
  export --checkpoint bn.ckpt --network wide_dw.json --out x.npz
sed 's/"name": "bn1"/"name": "norm1"/' bn.json > renamed.json
expect_fail_with "checkpoint bn.ckpt has no tensor norm1.weight (batch_norm layer 'norm1' of network 'bn-tiny')" \
  export --checkpoint bn.ckpt --network renamed.json --out x.npz
sed 's/"bias": true/"bias": false/' bn.json > nobias.json
expect_fail_with "checkpoint bn.ckpt holds fc.bias, which network 'bn-tiny' has no place for" \
  export --checkpoint bn.ckpt --network nobias.json --out x.npz
expect_fail_with "nodir/w.npz: cannot write" export --checkpoint ck --network fmnist --out nodir/w.npz
expect_fail_with "export writes one file: give --out W.npz or --onnx M.onnx" export --checkpoint ck --network fmnist
[[ ! -e x.npz ]] || fail "a refused export wrote x.npz"
[[ -z $(find . -name '*.tmp') ]] || fail "a temporary file was left: $(find . -name '*.tmp')"
run_one export --help > help.txt || fail "export --help failed"
for flag in --checkpoint --out --onnx; do
  grep -q -- "$flag" help.txt || fail "export --help lacks $flag: $(cat help.txt)"
done
echo "export: ok"
