#!/usr/bin/env bash
# The sanitizer stage of .ci/run (issue 20 §5-6): builds Saltus with
# -fsanitize=address,undefined (SALTUS_SANITIZE) in build-sanitize/, with clang (Debian's) at
# -O1 and line tables only: compiling contact/impact_problem.cc takes 38 s of CPU that way
# against 88 s with GCC -O1 -g and 20 s for the Release build (GCC); then it runs
#   1. the test programs that exercise the public entry points, the event loop, the impact
#      problems, the writers and the CLI (SANITIZE_TESTS below: a chosen subset, since the whole
#      suite under ASan would double the CI time; the numeric unit suites of engine/,
#      integrators/ and the rest of contact/ run in the normal stage),
#   2. every example scene through `saltus run` over a short horizon,
#   3. the scene fuzzer (tests/fuzz/scene_fuzzer.cc) for SALTUS_FUZZ_SECONDS (default 120),
# with every report fatal: any AddressSanitizer/UndefinedBehaviorSanitizer message fails the stage.
# Usage: scripts/sanitize.sh [build directory]. Safe to run twice (incremental).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build-sanitize"}
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
compiler=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only")
command -v clang++ >/dev/null 2>&1 || compiler=(-DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1")
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug "${compiler[@]}" \
  -DSALTUS_SANITIZE=ON -DSALTUS_BUILD_TESTS=ON -DSALTUS_BUILD_PYTHON=OFF -DSALTUS_WERROR=ON \
  "${launcher[@]}" >/dev/null

# Test programs run under the sanitizers: the facade and its re-entrancy, the randomized
# properties, joint reactions, the event loop, the impact and contact problems and LCP wrapper,
# the scene loader, writers and CLI (signals, full disk), and the examples.
SANITIZE_TESTS=(saltus/saltus_facade_test saltus/saltus_reentrancy_test
  saltus/saltus_properties_test saltus/saltus_reactions_test events/events_simulation_test
  events/events_units_test
  contact/impact_problem_test contact/complementarity_test tools/scene_test tools/writers_test
  tools/json_writer_test tools/cli_test tools/cli_reliability_test tools/examples_test
  tools/spatial_scene_test)
targets=(saltus scene_fuzzer)
for t in "${SANITIZE_TESTS[@]}"; do targets+=("$(basename "$t")"); done
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1
export LSAN_OPTIONS=suppressions="$root/scripts/lsan-siconos.supp"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export SALTUS_SOURCE_DIR="$root"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
run_test() {  # one test program; its output kept only on failure
  local log="$out/$(basename "$1").log"
  if ! "$build/tests/$1" --gtest_brief=1 >"$log" 2>&1; then
    echo "sanitize: $1 failed"; cat "$log"; return 1
  fi
}
export -f run_test
export build out
printf '%s\n' "${SANITIZE_TESTS[@]}" | xargs -P "$jobs" -I{} bash -c 'run_test {}' || status=1
[ "$status" -eq 0 ] || exit "$status"

# Every example scene, 0.05 s of simulated time (the set-up and first events: where the scene
# loader, assembly, initial impacts and the writers run).
while IFS= read -r scene; do
  grep -q '^simulation:' "$scene" || continue  # scene sets (examples/sets/*.yaml) are not scenes
  code=0
  "$build/tools/saltus" run "$scene" --t-end 0.05 --out "$out/run" >"$out/log" 2>&1 || code=$?
  if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
    echo "sanitize: $scene exited $code"; cat "$out/log"; status=1
  fi
  if grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$out/log"; then
    echo "sanitize: report on $scene"; cat "$out/log"; status=1
  fi
done < <(find "$root/examples" -name '*.yaml' | sort)
[ "$status" -eq 0 ] || exit "$status"

"$build/tests/fuzz/scene_fuzzer" --work "$build/fuzz" --seconds "${SALTUS_FUZZ_SECONDS:-120}" \
  --seed "${SALTUS_FUZZ_SEED:-1}" --case-timeout 5 "$root/examples"
