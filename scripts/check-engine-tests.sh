#!/usr/bin/env bash
# Checks that the test command runs every engine's whole set of tests, cheaply (configure
# and `ctest -N` only; scripts/test.sh runs both parts):
#
#   scripts/check-engine-tests.sh configure
#       A build directory configured as the quickstart leaves it on a machine without the
#       PostgreSQL and MySQL client libraries (both engines cached OFF), then configured
#       by the test command, registers exactly the tests a clean configure of the test
#       command registers, every engine's test executables among them.
#   scripts/check-engine-tests.sh labels BUILD_DIR
#       In a built test tree, each engine's ctest label (sqlite, postgres, mysql) holds at
#       least its floor of tests, and every test whose name says it runs on an engine
#       (a gtest instance or parameter named after it: postgres_advisory/..., .../mysql)
#       carries that engine's label, so `ctest -L postgres` runs all of PostgreSQL's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/configure.sh
source scripts/lib/configure.sh

engines=(sqlite postgres mysql)
# Below these counts a label has lost tests (in November 2026: sqlite 257, postgres 381,
# mysql 236; a build without the engine: 0 to 10); they catch a suite that vanished.
declare -A label_floor=([sqlite]=200 [postgres]=300 [mysql]=180)

fail() {
  echo "check-engine-tests: $*" >&2
  exit 1
}

# The names `ctest -N` lists in a build directory, one a line, sorted; extra arguments
# go to ctest (-L ...).
test_names() {
  local build_dir=$1
  shift
  ctest --test-dir "$build_dir" -N "$@" | sed -n 's/^ *Test *#[0-9]*: //p' | sort
}

check_configure() {
  local scratch
  scratch=$(mktemp -d /tmp/ledger-check-configure.XXXXXX)
  # shellcheck disable=SC2064
  trap "rm -rf '$scratch'" EXIT
  ledger_configure_quickstart "$scratch/stale" -DLEDGER_WITH_POSTGRES=OFF -DLEDGER_WITH_MYSQL=OFF
  ledger_configure_tests "$scratch/stale"
  ledger_configure_tests "$scratch/clean"
  # Unbuilt, each gtest executable is one <target>_NOT_BUILT entry (discovery runs it).
  local stale clean
  stale=$(test_names "$scratch/stale")
  clean=$(test_names "$scratch/clean")
  for engine in "${engines[@]}"; do
    for target in "conformance_$engine" "property_$engine"; do
      grep -qx "${target}_NOT_BUILT" <<<"$clean" ||
        fail "the test command's configure registers no $target ($engine engine missing?)"
    done
  done
  if [[ "$stale" != "$clean" ]]; then
    diff <(echo "$clean") <(echo "$stale") >&2 || true
    fail "over the quickstart's build directory the test command registers other tests than a clean configure (< clean, > over the quickstart's)"
  fi
  echo "check-engine-tests: over the quickstart's build directory the test command registers the $(wc -l <<<"$clean") test entries of a clean configure, every engine's included"
}

check_labels() {
  local build_dir=$1 all labelled named missing count
  all=$(test_names "$build_dir")
  grep -q '_NOT_BUILT$' <<<"$all" && fail "$build_dir is not built: $(grep '_NOT_BUILT$' <<<"$all" | head -3 | tr '\n' ' ')"
  for engine in "${engines[@]}"; do
    labelled=$(test_names "$build_dir" -L "^${engine}\$")
    count=$(grep -c . <<<"$labelled" || true)
    ((count >= label_floor[$engine])) ||
      fail "label $engine holds $count tests, fewer than its floor of ${label_floor[$engine]}"
    named=$(grep -E "(^|/)${engine}(_[a-z]+)?(/| |\$)" <<<"$all" || true)
    missing=$(comm -23 <(echo "$named") <(echo "$labelled") | grep . || true)
    [[ -z "$missing" ]] ||
      fail "tests running on $engine without its label: $(head -5 <<<"$missing" | tr '\n' ' ')"
    echo "check-engine-tests: label $engine: $count tests (floor ${label_floor[$engine]}), every test named after the engine among them"
  done
}

case "${1:-}" in
  configure) check_configure ;;
  labels) [[ $# -eq 2 ]] || fail "usage: $0 labels BUILD_DIR"; check_labels "$2" ;;
  *) fail "usage: $0 configure | labels BUILD_DIR" ;;
esac
