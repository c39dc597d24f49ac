#!/usr/bin/env bash
# Proves scripts/check-layering.sh passes on the tree and fails on planted violations:
# an upward include, a sibling-engine include, a driver header outside its engine and a
# test hook header (ledger/internal/) included by production code, server/ including
# cli/, and two folders of one layer that include each other.
set -euo pipefail
source_dir=$1
check="$source_dir/scripts/check-layering.sh"
bash "$check" "$source_dir"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
expect_violation() {  # <file to plant in> <include line> <expected message part> [<second file> <line>]
  rm -rf "$scratch/tree" && mkdir -p "$scratch/tree"
  cp -r "$source_dir"/{base,idempotency,ledger,engines,cli,server,bench} "$scratch/tree/"
  echo "$2" >>"$scratch/tree/$1"
  if (($# > 3)); then echo "$5" >>"$scratch/tree/$4"; fi
  if output=$(bash "$check" "$scratch/tree" 2>&1); then
    echo "FAIL: planting '$2' in $1 was not caught" >&2
    exit 1
  fi
  grep -qF "$3" <<<"$output" || { echo "FAIL: expected '$3' in: $output" >&2; exit 1; }
  echo "caught: $output" | head -1
}
expect_violation ledger/ledger.cc '#include "engines/open_engine.h"' "from the higher layer engines"
expect_violation base/status.cc '#include "idempotency/key.h"' "from the higher layer idempotency"
expect_violation idempotency/key.cc '#include "ledger/engine.h"' "from the higher layer ledger"
expect_violation engines/memory/memory_engine.cc '#include "cli/commands.h"' "from the higher layer cli"
expect_violation engines/sqlite/sqlite_engine.cc '#include "engines/mysql/mysql_engine.h"' "sibling engine mysql"
expect_violation cli/main.cc '#include <pqxx/pqxx>' "postgres driver header"
expect_violation ledger/ledger.cc '#include <sqlite3.h>' "sqlite driver header"
expect_violation engines/postgres/postgres_engine.cc '#include <cppconn/driver.h>' "mysql driver header"
# bench/key_shapes/ may talk to a driver (it measures statement shapes); the rest of bench/ may not.
expect_violation bench/load/ledger_load_main.cc '#include <cppconn/driver.h>' "mysql driver header"
expect_violation cli/main.cc '#include "ledger/internal/testing_hooks.h"' "test hook header"
expect_violation ledger/ledger.cc '#include "ledger/internal/testing_hooks.h"' "test hook header"
expect_violation server/server.cc '#include "cli/output.h"' "from the higher layer cli"
expect_violation server/server.cc '#include "bench/load/load_setup.h"' "include each other" \
  bench/load/load_setup.cc '#include "server/server.h"'
echo "layering test: OK"
