#!/usr/bin/env bash
# A transfer's writes on MariaDB/MySQL as the engine sends them (four prepared statements,
# then COMMIT: 7 round trips a submit) against one CALL of a stored procedure taking the
# rows as JSON (4 round trips; 3 when the CALL commits; 2 when the claim and the lock are
# a CALL too): the "writes as a stored
# procedure" design of docs/engines/mysql.md, measured before the engine takes it
# (docs/benchmarks.md, "MariaDB: the writes as one CALL, sized"). On one database of the
# engine's schema (10,000 accounts made by ledger_load), ROUNDS rounds (default 3, the
# modes' order rotated) at CLIENTS sessions (default 8); per run the rate, the client's
# CPU per transfer and the server's (mariadbd must run here: read from /proc). Ends by
# checking what the runs wrote: every committed transfer has its key, transaction, two
# entries summing to zero and its event, and the balances' total is unchanged.
#
#   LEDGER_TEST_MYSQL_DSN=mysql://root@127.0.0.1:PORT/db bench/key_shapes/mysql_write_call.sh [ROUNDS] [CLIENTS]
#
# LEDGER_LOAD (default build/bench/ledger_load), WRITE_CALL (default
# build/bench/ledger_mysql_write_call), WRITE_CALL_SECONDS per run (default 5).
# WRITE_CALL_SMOKE=1: one round of 1 s at 2 clients (ctest's bench.write_call_mysql_smoke).
# Without the DSN it skips (exit 77), except under CI=true, where that is a failure.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
write_call="${WRITE_CALL:-$repo/build/bench/ledger_mysql_write_call}"
rounds="${1:-3}"
clients="${2:-8}"
seconds="${WRITE_CALL_SECONDS:-5}"
if [[ "${WRITE_CALL_SMOKE:-}" == 1 ]]; then
  rounds=1 clients=2 seconds=1
fi
# shellcheck source=bench/key_shapes/common.sh disable=SC1091
. "$repo/bench/key_shapes/common.sh"
dsn=$(key_shapes_dsn LEDGER_TEST_MYSQL_DSN) || exit $?
key_shapes_mysql_server "$dsn"
database="write_call_$$"
sql=("${mysql_sql[@]}")
work=$(mktemp -d /tmp/write-call.XXXXXX)
cleanup() {
  bench_drop_database "$dsn" "$database" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

bench_drop_database "$dsn" "$database" >/dev/null 2>&1 || true
database_dsn=$(bench_create_database "$dsn" "$database")
"$load" --db "$database_dsn" --mode raw --operations 100 --warmup 0s --accounts 10000 \
  --workload uniform --replay-operations 0 >"$work/setup.txt" 2>&1 ||
  { cat "$work/setup.txt" >&2; exit 1; }
"${sql[@]}" "$database" <"$repo/bench/key_shapes/mysql_write_call.sql"
query() { "${sql[@]}" -N "$database" -e "$1"; }
balances_before=$(query "SELECT SUM(balance) FROM accounts")
server_pid=$(cat "$("${sql[@]}" -N -e "SELECT @@pid_file")" 2>/dev/null) || server_pid=""
cpu_seconds() { if [[ -n "$server_pid" ]]; then process_cpu_seconds "$server_pid"; else echo nan; fi; }

modes=(statements call call-commit two-calls)
committed_total=0
for ((round = 1; round <= rounds; round++)); do
  order=("${modes[@]:(round - 1) % 4}" "${modes[@]:0:(round - 1) % 4}")
  for mode in "${order[@]}"; do
    cpu_before=$(cpu_seconds)
    "$write_call" --host "$mysql_host" --port "$mysql_port" --user "$mysql_user" --database "$database" \
      --mode "$mode" --clients "$clients" --seconds "$seconds" >"$work/run.txt" 2>"$work/run.err" ||
      { cat "$work/run.txt" "$work/run.err" >&2; exit 1; }
    cpu_after=$(cpu_seconds)
    read -r _ _ committed rate _ client_us <"$work/run.txt"
    committed_total=$((committed_total + committed))
    server_us=$(python3 -c "print('?' if 'nan' in '$cpu_before$cpu_after' else f'{($cpu_after - $cpu_before) * 1e6 / $committed:.0f}')")
    echo "round $round, $clients clients | $mode: $rate transfers/s, client $client_us us, server $server_us us per transfer | load $(cut -d' ' -f1 /proc/loadavg)"
  done
done

# What the runs wrote, checked: each committed transfer whole, nothing else.
check() {  # description, query, expected
  local got
  got=$(query "$2")
  [[ "$got" == "$3" ]] || { echo "write_call: $1: $got, expected $3" >&2; exit 1; }
}
check "keys" "SELECT COUNT(*) FROM idempotency_keys WHERE scope = 'bench/write_call'" "$committed_total"
check "transactions" "SELECT COUNT(*) FROM transactions WHERE id LIKE 'wc-%'" "$committed_total"
check "entries" "SELECT COUNT(*) FROM entries WHERE transaction_id LIKE 'wc-%'" "$((2 * committed_total))"
check "events" "SELECT COUNT(*) FROM outbox_events WHERE transaction_id LIKE 'wc-%'" "$committed_total"
check "entries' sum" "SELECT COALESCE(SUM(amount), 0) FROM entries WHERE transaction_id LIKE 'wc-%'" 0
check "balances' total" "SELECT SUM(balance) FROM accounts" "$balances_before"
echo "checked: $committed_total transfers, each with its key, transaction, entries and event"
