# Helpers shared by the command-line tests, sourced by tests/cli/*.sh (this file is not a test:
# CTest runs only *.sh). Each test is run as
#     bash script.sh <path-to-convgrid> "<mpiexec flags>"
# and calls cli_init "$@" first. Every convgrid or mpiexec run is wrapped in `timeout`, so a hang
# fails the test instead of blocking CI. The .npy and JSON helpers use Python's standard library
# only: CI machines need not have numpy.

readonly RUN_LIMIT_S=60
# The system's Python where there is one: a python3 found first on PATH may be a wrapper (pyenv)
# that takes half a second to start.
PYTHON=$(command -v /usr/bin/python3 || command -v python3) || true
readonly PYTHON

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Sets CONVGRID, MPI_FLAGS (an array) and WORK (a temp dir, removed on exit, made the current dir).
cli_init() {
  [[ $# -ge 1 && -x $1 ]] || fail "usage: bash $0 <path-to-convgrid> [\"<mpiexec flags>\"]"
  CONVGRID=$(realpath "$1")
  # The flags come as one argument, separated by spaces (or by ';', as CMake joins a list).
  IFS=' ;' read -r -a MPI_FLAGS <<< "${2:-}"
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  cd "$WORK" || fail "cannot enter $WORK"
}

# convgrid ARGS... as a one-rank job (started without mpiexec).
run_one() { timeout "$RUN_LIMIT_S" "$CONVGRID" "$@"; }

# convgrid ARGS... under mpiexec with NP ranks.
run_mpi() {
  local np=$1
  shift
  timeout "$RUN_LIMIT_S" mpiexec -n "$np" "${MPI_FLAGS[@]}" "$CONVGRID" "$@"
}

# expect_fail_with PART ARGS...: `convgrid ARGS...` on one rank exits with status exactly 1 (not a
# signal, not an abort) and prints to stderr ONE line, starting "convgrid: error:" and holding PART.
expect_fail_with() {
  local part=$1
  shift
  local status=0 stderr err
  stderr=$(mktemp -p "$WORK")
  run_one "$@" > /dev/null 2> "$stderr" || status=$?
  err=$(< "$stderr")
  [[ $status -eq 1 ]] || fail "convgrid $*: exit status $status, expected 1; stderr: $err"
  [[ $(wc -l < "$stderr") -eq 1 ]] || fail "convgrid $*: stderr is not one line: $err"
  [[ $err == "convgrid: error: "* ]] || fail "convgrid $*: stderr does not start 'convgrid: error: ': $err"
  [[ $err == *"$part"* ]] || fail "convgrid $*: stderr lacks '$part': $err"
}

# expect_mpi_fail_with NP PART ARGS...: under mpiexec -n NP, `convgrid ARGS...` fails without a hang
# or a signal, and the error is printed once (by one rank, not by each), holding PART.
expect_mpi_fail_with() {
  local np=$1 part=$2
  shift 2
  local status=0 stderr lines what="mpiexec -n $np convgrid $*"
  stderr=$(mktemp -p "$WORK")
  run_mpi "$np" "$@" > /dev/null 2> "$stderr" || status=$?
  [[ $status -ne 124 ]] || fail "$what: did not finish within ${RUN_LIMIT_S}s"
  [[ $status -ge 1 && $status -lt 124 ]] || fail "$what: exit status $status, expected 1..123"
  lines=$(grep "convgrid: error" "$stderr" || true)
  [[ $(grep -c "convgrid: error" "$stderr") -eq 1 ]] || fail "$what: error not printed exactly once: $lines"
  [[ $lines == "convgrid: error: "* ]] || fail "$what: error line does not start 'convgrid: error: ': $lines"
  [[ $lines == *"$part"* ]] || fail "$what: error lacks '$part': $lines"
}

# The .npy and JSON tool, run by py COMMAND ARGS...:
#   write FILE DTYPE SEED D0 D1 ...  a C-order .npy ('<f4' or '<f8') of uniform numbers in [-1, 1)
#   close GOT WANT TOL               same shape, and max|GOT-WANT| / max|WANT| <= TOL
#   words JSON                       every rank of every pass received the model's words
readonly CLI_PY='
import ast, json, random, struct, sys

FORMATS = {"<f4": "f", "<f8": "d"}

def volume(shape):
    count = 1
    for d in shape:
        count *= d
    return count

def write(path, dtype, seed, *dims):
    shape = tuple(int(d) for d in dims)
    count = volume(shape)
    rng = random.Random(int(seed))
    header = "{%r: %r, %r: False, %r: %r, }" % ("descr", dtype, "fortran_order", "shape", shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (count, FORMATS[dtype]), *(rng.uniform(-1, 1) for _ in range(count))))

def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:8] == b"\x93NUMPY\x01\x00", path + ": not a version 1.0 .npy file"
    length = struct.unpack("<H", raw[8:10])[0]
    header = ast.literal_eval(raw[10:10 + length].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], path + ": not C-order <f4"
    count = volume(header["shape"])
    assert len(raw) == 10 + length + 4 * count, path + ": data size does not match the shape"
    return header["shape"], struct.unpack("<%df" % count, raw[10 + length:])

def close(got_path, want_path, tol):
    got_shape, got = read(got_path)
    want_shape, want = read(want_path)
    assert got_shape == want_shape, "shape %s, expected %s" % (got_shape, want_shape)
    error = max(abs(g - w) for g, w in zip(got, want)) / max(abs(w) for w in want)
    print("%s vs %s: relative error %.3g" % (got_path, want_path, error))
    assert error <= float(tol), "relative error %.3g is over %s" % (error, tol)

def words(path):
    report = json.load(open(path))
    assert report["passes"], path + ": no passes"
    for name, p in report["passes"].items():
        ranks = p["ranks"]
        assert len(ranks) == report["ranks"], "%s: %d rank entries" % (name, len(ranks))
        for r in ranks:
            assert r["recv_words_measured"] == r["recv_words_model"], "%s rank %d: %s" % (name, r["rank"], r)

{"write": write, "close": close, "words": words}[sys.argv[1]](*sys.argv[2:])
'

py() {
  [[ -n $PYTHON ]] || fail "python3 is needed for the .npy and JSON checks"
  "$PYTHON" -c "$CLI_PY" "$@"
}
npy_write() { py write "$@"; }
expect_npy_close() { py close "$@" || fail "$1 is not within $3 of $2"; }
expect_words_match_model() { py words "$1" || fail "$1: measured words differ from the model"; }
