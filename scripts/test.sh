#!/usr/bin/env bash
# The README's test command: installs what is missing (install-deps.sh test: servers,
# test frameworks, clang included), builds everything, starts a
# throwaway PostgreSQL and MariaDB on loopback, runs every test (all four engines, the
# property and fault runs, the fuzzers briefly, the benchmarks' smoke runs) and stops
# the servers, also when a test fails. Under CI=true a server that cannot start fails
# the run instead of letting the server tests skip. The cluster tests (label cluster:
# PostgreSQL failover under Patroni, MariaDB Galera) start their own replicated setups
# with scripts/cluster-servers.sh; under CI=true a cluster that cannot start fails them.
#
# Every engine is built and tested whatever an earlier configure of the build directory
# cached (the quickstart's, say): the configure requires each engine and fails, naming
# it and what is missing, when its client library is not there. Before the build,
# check-engine-tests.sh proves that over a quickstart's build directory; after it, that
# each engine's label holds its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/configure.sh
source scripts/lib/configure.sh

build_dir=${LEDGER_BUILD_DIR:-build}
jobs=$(nproc)

bash scripts/install-deps.sh test
ledger_configure_tests "$build_dir"
bash scripts/check-engine-tests.sh configure
bash scripts/check-layering.sh
cmake --build "$build_dir" -j "$jobs"
bash scripts/check-engine-tests.sh labels "$build_dir"

servers_dir=$(mktemp -d /tmp/ledger-servers.XXXXXX)
stop_servers() { bash scripts/test-servers.sh stop "$servers_dir" || true; }
trap stop_servers EXIT
if bash scripts/test-servers.sh start "$servers_dir" >/dev/null; then
  # shellcheck source=/dev/null
  source "$servers_dir/env"
elif [[ "${CI:-}" == "true" ]]; then
  echo "test: the throwaway PostgreSQL/MariaDB did not start; CI requires them" >&2
  exit 1
else
  echo "test: no throwaway servers; the postgres and mysql tests will skip and say why" >&2
fi

# Everything runs under ctest, the fuzzers' fixed budget included (label fuzz).
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 1200
