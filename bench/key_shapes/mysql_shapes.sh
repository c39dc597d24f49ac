#!/usr/bin/env bash
# The shapes of the exactly-once rows on MariaDB/MySQL, measured on the server alone
# (docs/benchmarks.md, "The exactly-once cost, remeasured"): streams of ledger batches
# written by mysql_shapes.py (raw, a = today, c = today without the expiry index, d = the
# final record at the claim, b = the key in the transaction's row), each shape in its own
# database on the real schema, fed to the mariadb client (one statement per round trip,
# as the engine sends them). ROUNDS rounds (default 3, the shape order rotated), 500 items
# per transaction with 1 client and 10 with 8 clients; per run the rate, the server's
# CPU per operation (mariadbd must run on this machine: read from /proc) and the redo
# bytes per operation (Innodb_lsn_current).
#
#   LEDGER_TEST_MYSQL_DSN=mysql://root@127.0.0.1:PORT/db bench/key_shapes/mysql_shapes.sh [ROUNDS]
#
# LEDGER_LOAD (default build/bench/ledger_load) makes the data set: 10,000 accounts.
# The databases key_shape_<pid>_* are created and dropped on the DSN's server.
# KEY_SHAPES_SMOKE=1 runs one round of a few transactions per shape (ctest's
# bench.key_shapes_mysql_smoke); a failed stream fails the script. Without the DSN it
# skips (exit 77), except under CI=true, where that is a failure.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
rounds="${1:-3}"
cells=("500 20 1" "10 150 8")  # items per transaction, transactions per client, clients
accounts=10000
if [[ "${KEY_SHAPES_SMOKE:-}" == 1 ]]; then
  rounds=1
  cells=("50 2 1" "10 5 8")
  accounts=1000
fi
# shellcheck source=bench/key_shapes/common.sh disable=SC1091
. "$repo/bench/key_shapes/common.sh"
dsn=$(key_shapes_dsn LEDGER_TEST_MYSQL_DSN) || exit $?
key_shapes_mysql_server "$dsn"
sql=("${mysql_sql[@]}")
work=$(mktemp -d /tmp/key-shapes.XXXXXX)
prefix="key_shape_$$_"
shapes=(raw a c d b)
cleanup() {
  local shape
  for shape in "${shapes[@]}"; do bench_drop_database "$dsn" "${prefix}$shape" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for shape in "${shapes[@]}"; do
  bench_drop_database "$dsn" "${prefix}$shape" >/dev/null 2>&1 || true
  shape_dsn=$(bench_create_database "$dsn" "${prefix}$shape")
  "$load" --db "$shape_dsn" --mode raw --operations 100 --warmup 0s --accounts "$accounts" \
    --workload uniform --replay-operations 0 >"$work/setup-$shape.txt" 2>&1
done
"${sql[@]}" "${prefix}c" -e "ALTER TABLE idempotency_keys DROP INDEX idempotency_keys_by_expiry"
"${sql[@]}" "${prefix}b" -e "ALTER TABLE transactions ADD COLUMN key_namespace VARBINARY(64) NULL,
  ADD COLUMN key_scope VARBINARY(201) NULL, ADD COLUMN \`key\` VARBINARY(255) NULL,
  ADD COLUMN key_generation INT NULL, ADD COLUMN key_expires_at BIGINT NULL,
  ADD UNIQUE KEY transactions_by_key (key_namespace, key_scope, \`key\`, key_generation)"
# The server's CPU only when it runs here and its pid file is readable.
server_pid=$(cat "$("${sql[@]}" -N -e "SELECT @@pid_file")" 2>/dev/null) || server_pid=""
cpu_seconds() { if [[ -n "$server_pid" ]]; then process_cpu_seconds "$server_pid"; else echo nan; fi; }
lsn() { "${sql[@]}" -N -e "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'" | cut -f2; }

run=0
for ((round = 1; round <= rounds; round++)); do
  order=("${shapes[@]:round % 5}" "${shapes[@]:0:round % 5}")
  for cell in "${cells[@]}"; do
    read -r items_per_transaction transactions clients <<<"$cell"
    operations=$((items_per_transaction * transactions * clients))
    for shape in "${order[@]}"; do
      run=$((run + 1))
      for ((k = 0; k < clients; k++)); do
        python3 "$repo/bench/key_shapes/mysql_shapes.py" "$shape" "$items_per_transaction" \
          "$transactions" "$k" "$((round * 100 + run))" "$accounts" >"$work/stream-$k.sql"
      done
      load_average=$(cut -d' ' -f1-3 /proc/loadavg)
      lsn_before=$(lsn)
      cpu_before=$(cpu_seconds)
      start=$(date +%s.%N)
      pids=()
      for ((k = 0; k < clients; k++)); do
        "${sql[@]}" "${prefix}$shape" <"$work/stream-$k.sql" >"$work/stream-$k.out" 2>&1 &
        pids+=($!)
      done
      failed=0
      for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
      end=$(date +%s.%N)
      cpu_after=$(cpu_seconds)
      lsn_after=$(lsn)
      if ((failed > 0)); then
        cat "$work"/stream-*.out >&2
        echo "$failed stream(s) of shape $shape failed" >&2
        exit 1
      fi
      python3 -c "
nan = float('nan')
ops = $operations
print('round $round items $items_per_transaction clients $clients shape $shape: '
      f'{ops / ($end - $start):.0f} ops/s, server CPU {($cpu_after - $cpu_before) / ops * 1e6:.1f} us/op, '
      f'redo {($lsn_after - $lsn_before) / ops:.0f} bytes/op, failed streams $failed, load $load_average')"
    done
  done
done
