# The help of convgrid: `convgrid --help` and `convgrid conv --help` exit 0 and list the subcommand
# and the conv flags; `convgrid` without a subcommand exits non-zero (not by a signal) and says why.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cli_init "$@"

run_one --help > top.txt || fail "convgrid --help exited with status $?"
grep -q "conv" top.txt || fail "convgrid --help does not list the conv subcommand: $(< top.txt)"

run_one conv --help > conv.txt || fail "convgrid conv --help exited with status $?"
for flag in --shape --grid --input --weight --grad-output --output --grad-input --grad-weight \
            --pass --backend --seed --repeat --check --json; do
  grep -q -- "$flag" conv.txt || fail "convgrid conv --help does not list $flag"
done

status=0
run_one > /dev/null 2> none.txt || status=$?
[[ $status -ge 1 && $status -lt 124 ]] || fail "convgrid without a subcommand: exit status $status, expected 1..123"
grep -q "subcommand" none.txt || fail "convgrid without a subcommand does not say a subcommand is needed: $(< none.txt)"
echo "PASS"
