#!/usr/bin/env bash
# The README's first command: installs what the build needs and is missing
# (install-deps.sh build: no database server, no test framework, no clang), builds the
# `ledger` tool and
# runs its demo on a fresh SQLite database (the embedded default): an economy of
# wallets, creators, a platform fee account and payouts, a few thousand operations with
# client retries, duplicate deliveries and declined requests, then the verify audit.
#
# The engines are left AUTO: the PostgreSQL and MySQL ones are built when their client
# libraries are there (not installed here); scripts/test.sh, run after this in the same
# clone, installs them and builds every engine in the same build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/configure.sh
source scripts/lib/configure.sh

build_dir=${LEDGER_BUILD_DIR:-build}
bash scripts/install-deps.sh build
ledger_configure_quickstart "$build_dir"
cmake --build "$build_dir" -j "$(nproc)" --target ledger

database=$(mktemp -d /tmp/ledger-demo.XXXXXX)/ledger.db
"$build_dir/cli/ledger" demo --db "sqlite:$database"
echo "The demo's database is $database; try: $build_dir/cli/ledger --db sqlite:$database verify"
