#!/usr/bin/env bash
# A few-second smoke run of ledger_load on SQLite or a server engine, for ctest (label
# bench); the flags pick the workloads and the batching (--batch N, --group-commit):
#
#   run_load_smoke.sh sqlite|postgres_advisory|postgres_row|mysql path/to/ledger_load [flags...]
#
# sqlite runs on a new file in a temporary folder, removed afterwards. A server comes
# from LEDGER_TEST_POSTGRES_DSN or LEDGER_TEST_MYSQL_DSN (see scripts/test-servers.sh).
# Unset: skip (exit 77), except under CI=true, where a missing server is a failure. The
# run gets a fresh database, dropped afterwards.
set -euo pipefail

readonly skip_exit_code=77
server="${1:?usage: run_load_smoke.sh SERVER LEDGER_LOAD [flags...]}"
load="${2:?usage: run_load_smoke.sh SERVER LEDGER_LOAD [flags...]}"
shift 2

case "$server" in
  sqlite)
    folder=$(mktemp -d /tmp/ledger-load-smoke.XXXXXX)
    trap 'rm -rf "$folder"' EXIT
    "$load" --db "sqlite:$folder/smoke.db" "$@"
    exit
    ;;
  postgres_advisory | postgres_row) dsn_variable=LEDGER_TEST_POSTGRES_DSN ;;
  mysql) dsn_variable=LEDGER_TEST_MYSQL_DSN ;;
  *) echo "unknown server '$server'" >&2; exit 2 ;;
esac
dsn="${!dsn_variable:-}"
if [[ -z "$dsn" ]]; then
  if [[ "${CI:-}" == "true" ]]; then
    echo "$dsn_variable is not set; under CI=true the $server smoke run must not be skipped" >&2
    exit 1
  fi
  echo "$dsn_variable is not set: skipping the $server smoke run" >&2
  exit "$skip_exit_code"
fi

# shellcheck source=bench/fresh_database.sh disable=SC1091
. "$(dirname "$0")/fresh_database.sh"

database="ledger_bench_smoke_${server}_$$_${RANDOM}"
reuse=()
if fresh_dsn=$(bench_create_database "$dsn" "$database"); then
  trap 'bench_drop_database "$dsn" "$database" || true' EXIT
else
  # No client tool or no CREATE DATABASE right: run in the given database instead,
  # keeping accounts an earlier smoke run left there.
  echo "could not create a fresh database; running in $dsn itself" >&2
  fresh_dsn="$dsn"
  reuse=(--reuse)
fi
if [[ "$server" == "postgres_row" ]]; then
  if [[ "$fresh_dsn" == *\?* ]]; then fresh_dsn="$fresh_dsn&claim=row"; else fresh_dsn="$fresh_dsn?claim=row"; fi
fi
"$load" --db "$fresh_dsn" "${reuse[@]}" "$@"
