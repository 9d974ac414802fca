#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything (Release) and runs every
# CTest test (unit, MPI under mpiexec with 1-8 ranks, command line); runs the tests whose figures
# depend on oneDNN's layouts once more with oneDNN held to AVX2 (so an AVX-512 machine checks the
# AVX2 path too); builds the unit tests with -fsanitize=address,undefined and runs them once more;
# builds the MPI test programs against SimGrid's SMPI and runs them on a simulated cluster;
# installs the Release build and builds and runs examples/plan_and_run against the installed
# package (scripts/example_install.sh); builds the parsers' libFuzzer harnesses with clang and
# fuzzes each for 10 s (scripts/fuzz.sh).
# Every stage runs even when an earlier one failed; the script lists the failed stages at the end
# and exits non-zero if there was any. The single-process tests (unit tests, and SMPI's, which
# simulate every rank in one thread) run one per core; the MPI and command-line tests, whose ranks
# already take the cores, one at a time.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "== setup failed" >&2; exit 1; }
export OMP_NUM_THREADS=1

failed=()
stage() {  # stage NAME COMMAND...: runs one stage, remembers its failure, says how long it took
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  if ! "$@"; then
    echo "== FAILED: $name" >&2
    failed+=("$name")
  fi
  echo "== $((SECONDS - start)) s: $name"
}

# The benchmark programs (bench/) run in no stage: left out of CI's build.
build_release() { CONVGRID_CMAKE_ARGS="-DCONVGRID_WITH_BENCH=OFF ${CONVGRID_CMAKE_ARGS:-}" bash scripts/build.sh; }
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
# -L unit: the labels unit and unit-memory.
ctest_all() {
  local status=0
  ctest --test-dir build -L unit -j "$cores" --output-on-failure --timeout 900 || status=1
  ctest --test-dir build -LE unit --output-on-failure --timeout 900 || status=1
  return "$status"
}
# ONEDNN_MAX_CPU_ISA caps the instruction set oneDNN dispatches to (oneDNN 2.6 reads it at load);
# the memory-labelled tests compare oneDNN's buffers with the model, never with a constant.
# cli_train (a minute of whole training runs) is left out here: the same comparison on networks is
# mpi_training_memory_test's, which runs.
ctest_memory_avx2() {
  ONEDNN_MAX_CPU_ISA=AVX2 ctest --test-dir build -L memory -E '^cli_train$' --output-on-failure --timeout 900
}
example_installed() { bash scripts/example_install.sh build; }
# The sanitizer and SMPI builds compile the library in batches (CONVGRID_UNITY_BUILD): about a
# third quicker from clean. The Release build, whose programs the MPI and command-line tests run,
# compiles every file alone, as a user's build does.
build_sanitize() {
  # -O1: quicker to build, and the sanitizers still see everything.
  CONVGRID_BUILD_DIR=build-sanitize \
    CONVGRID_CMAKE_ARGS="-DCONVGRID_SANITIZE=ON -DCONVGRID_WITH_BENCH=OFF -DCONVGRID_UNITY_BUILD=ON -DCMAKE_CXX_FLAGS_RELEASE=-O1" \
    bash scripts/build.sh unit_tests
}
ctest_sanitize() {
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize -L unit -j "$cores" --output-on-failure --timeout 900
}
fuzz_parsers() { bash scripts/fuzz.sh 10; }
build_smpi() { CONVGRID_CMAKE_ARGS=-DCONVGRID_UNITY_BUILD=ON bash scripts/build_smpi.sh mpi_tests convgrid_cli; }
ctest_smpi() { ctest --test-dir build-smpi -L '^smpi$' -j "$cores" --output-on-failure --timeout 900; }

stage "build (Release)" build_release
stage "ctest" ctest_all
stage "memory-sensitive tests with oneDNN held to AVX2" ctest_memory_avx2
stage "install, then build and run examples/plan_and_run against the installed package" example_installed
stage "unit tests: build with address and undefined-behaviour sanitizers" build_sanitize
stage "unit tests under address and undefined-behaviour sanitizers" ctest_sanitize
stage "fuzz every parser for 10 s (libFuzzer, address and undefined-behaviour sanitizers)" fuzz_parsers
if [[ -f scripts/build_smpi.sh ]]; then
  stage "MPI tests: build against SimGrid SMPI" build_smpi
  stage "MPI tests on a simulated cluster (smpirun, 16-64 ranks)" ctest_smpi
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "== test.sh: ${#failed[@]} stage(s) failed:" >&2
  printf '   %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== test.sh: every stage passed"
