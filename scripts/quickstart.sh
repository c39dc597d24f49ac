#!/usr/bin/env bash
# The README's first command: installs what the build needs and is missing
# (install-deps.sh build: no database server, no test framework, no clang), builds the
# `ledger` tool and
# runs its demo on a fresh SQLite database (the embedded default): an economy of
# wallets, creators, a platform fee account and payouts, a few thousand operations with
# client retries, duplicate deliveries and declined requests, then the verify audit.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${LEDGER_BUILD_DIR:-build}
bash scripts/install-deps.sh build
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEDGER_BUILD_TESTS=OFF \
  -DLEDGER_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target ledger

database=$(mktemp -d /tmp/ledger-demo.XXXXXX)/ledger.db
"$build_dir/cli/ledger" demo --db "sqlite:$database"
echo "The demo's database is $database; try: $build_dir/cli/ledger --db sqlite:$database verify"
