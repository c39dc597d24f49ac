# shellcheck shell=bash
# Sourced by scripts/quickstart.sh and scripts/test.sh: how each of the README's two
# commands configures a build directory, in one place so that the test command can
# check its configure over the quickstart's (scripts/check-engine-tests.sh).
# Run from the repository's root; extra arguments go to cmake.

# The quickstart: the `ledger` tool alone. Its engines are AUTO (CMakeLists.txt): built
# when their client library is found, looked for again at every configure.
ledger_configure_quickstart() {
  local build_dir=$1
  shift
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEDGER_BUILD_TESTS=OFF \
    -DLEDGER_BUILD_BENCHMARKS=OFF "$@" >/dev/null
}

# The test command: everything, every engine required, whatever an earlier configure of
# the same directory cached. An engine whose client library is missing fails the
# configure, naming it and what is missing.
ledger_configure_tests() {
  local build_dir=$1
  shift
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEDGER_BUILD_TESTS=ON \
    -DLEDGER_BUILD_BENCHMARKS=ON -DLEDGER_WITH_SQLITE=ON -DLEDGER_WITH_POSTGRES=ON \
    -DLEDGER_WITH_MYSQL=ON "$@" >/dev/null
}
