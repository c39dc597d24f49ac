#!/usr/bin/env bash
# Installs the Debian 12 packages one purpose needs:
#
#   scripts/install-deps.sh build   the compiler, CMake and the libraries the build links,
#                                   SQLite included: enough to build the `ledger` tool and
#                                   run its demo (what scripts/quickstart.sh uses)
#   scripts/install-deps.sh test    everything scripts/test.sh needs (the default): the
#                                   above, plus GoogleTest, Google Benchmark, the
#                                   PostgreSQL and MySQL client libraries (test.sh
#                                   requires their engines: LEDGER_WITH_<ENGINE>=ON) and
#                                   servers, the replicated setups of the cluster tests
#                                   (scripts/cluster-servers.sh: Patroni with its Raft
#                                   DCS, MariaDB Galera with rsync state transfers),
#                                   and clang for the fuzzers
#
# Idempotent: packages already present are skipped; needs root (or sudo) only when
# something is missing.
set -euo pipefail

mode=${1:-test}

build_packages=(
  build-essential cmake pkg-config
  libssl-dev libabsl-dev nlohmann-json3-dev libcli11-dev
  libsqlite3-dev libboost-dev
)
test_packages=(
  "${build_packages[@]}"
  git curl python3 sqlite3 libspdlog-dev libfmt-dev wrk libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpqxx-dev libpq-dev postgresql
  libmysqlcppconn-dev mariadb-server mariadb-client
  patroni python3-pysyncobj python3-psycopg2 galera-4 rsync util-linux
  clang-14 libclang-rt-14-dev
)

case "$mode" in
  build) packages=("${build_packages[@]}") ;;
  test) packages=("${test_packages[@]}") ;;
  *)
    echo "usage: $0 [build|test]   (build: the tool and its demo; test, the default: everything)" >&2
    exit 2
    ;;
esac

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps ($mode): all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps ($mode): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps ($mode): done"
