# A job that one rank ends (convgrid::abort_job, what an error on some ranks only does) ends the
# simulation with exit status 1 and that rank's line, while the others wait in a barrier.
# Usage: bash job_abort.sh <path-to-the-job_abort_program of the SMPI build>
source "$(dirname "$0")/lib.bash"
program=$convgrid

status=0
timeout 120 bash "$root/scripts/smpirun.sh" --platform ib100-cpu --np 16 "$program" > out.txt 2>&1 ||
  status=$?
[[ $status -eq 1 ]] || fail "exit status $status, not 1: $(tail -5 out.txt)"
grep -q "^convgrid: rank 15 ends the job$" out.txt || fail "no line from rank 15: $(tail -5 out.txt)"
echo "a job ended by one of 16 simulated ranks exits with status 1"
