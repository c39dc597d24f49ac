#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the tests and the throwaway servers need.
# Idempotent: packages already present are skipped; needs root (or sudo) only when
# something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libssl-dev libabsl-dev libsqlite3-dev sqlite3
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpqxx-dev libpq-dev postgresql
  libmysqlcppconn-dev libboost-dev mariadb-server mariadb-client
  clang-14 libclang-rt-14-dev
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
