#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in a build directory of their own and
# runs each for a fixed time budget over its corpus and regression inputs.
#
#   scripts/run-fuzzers.sh                      every target, LEDGER_FUZZ_SECONDS each
#   scripts/run-fuzzers.sh operation_json       one target
#
# Environment: LEDGER_FUZZ_SECONDS (default 20), LEDGER_FUZZ_BUILD_DIR (default
# build-fuzz in the source tree), LEDGER_FUZZ_CXX (default clang++-14), LEDGER_FUZZ_JOBS
# (default 2). New inputs go to a scratch corpus, never into the source tree. A crash
# leaves its input in the build directory; the script says how to keep it as a
# regression input (fuzz/regressions/<target>/) once the bug is fixed, and exits 1.
set -euo pipefail

readonly prog="run-fuzzers"
root=$(cd "$(dirname "$0")/.." && pwd)
seconds="${LEDGER_FUZZ_SECONDS:-20}"
build="${LEDGER_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cxx="${LEDGER_FUZZ_CXX:-clang++-14}"
jobs="${LEDGER_FUZZ_JOBS:-2}"
all_targets=(operation_json canonical_json)
targets=("$@")
if ((${#targets[@]} == 0)); then targets=("${all_targets[@]}"); fi

die() {
  echo "$prog: error: $*" >&2
  exit 1
}

command -v "$cxx" >/dev/null 2>&1 || die "$cxx not found; install clang-14 and libclang-rt-14-dev (scripts/install-deps.sh does)"
[[ "$seconds" =~ ^[0-9]+$ ]] || die "LEDGER_FUZZ_SECONDS must be a whole number of seconds"
for target in "${targets[@]}"; do
  [[ -d "$root/fuzz/corpus/$target" ]] || die "unknown target '$target' (known: ${all_targets[*]})"
done

echo "$prog: building ${targets[*]} with $cxx in $build" >&2
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLEDGER_BUILD_FUZZERS=ON -DLEDGER_BUILD_TESTS=OFF -DLEDGER_BUILD_BENCHMARKS=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; die "configure failed"; }
cmake --build "$build" -j "$jobs" --target "${targets[@]/%/_fuzzer}" >&2

failed=()
for target in "${targets[@]}"; do
  scratch="$build/scratch-corpus/$target"
  artifacts="$build/artifacts/$target"
  mkdir -p "$scratch" "$artifacts"
  echo "$prog: $target for ${seconds}s" >&2
  if ! "$build/fuzz/${target}_fuzzer" -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$scratch" "$root/fuzz/corpus/$target" "$root/fuzz/regressions/$target" \
    >"$build/$target.log" 2>&1; then
    tail -n 40 "$build/$target.log" >&2
    failed+=("$target")
    echo "$prog: $target FOUND A BUG; inputs: $(ls "$artifacts" | tr '\n' ' ')" >&2
    echo "$prog: reproduce:  $build/fuzz/${target}_fuzzer $artifacts/<crash file>" >&2
    echo "$prog: after the fix keep it:  cp $artifacts/<crash file> $root/fuzz/regressions/$target/" >&2
  else
    grep -E '^stat::number_of_executed_units|^Done ' "$build/$target.log" >&2 || true
  fi
done

if ((${#failed[@]} > 0)); then
  die "broken invariants in: ${failed[*]}"
fi
echo "$prog: every target ran ${seconds}s without a finding" >&2
