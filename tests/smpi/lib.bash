# The start every command-line test under smpirun shares (source it first; the test's first
# argument is the convgrid of the SMPI build): strict mode, that convgrid as $convgrid, the
# repository as $root, a scratch directory (removed at exit) to work in, and fail MESSAGE.
set -euo pipefail
convgrid=$(realpath "$1")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
