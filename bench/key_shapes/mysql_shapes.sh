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
# The databases key_shape_* are created and dropped on the DSN's server.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
rounds="${1:-3}"
dsn="${LEDGER_TEST_MYSQL_DSN:?set LEDGER_TEST_MYSQL_DSN}"
# shellcheck source=bench/fresh_database.sh disable=SC1091
. "$repo/bench/fresh_database.sh"
# shellcheck source=bench/key_shapes/server_cpu.sh disable=SC1091
. "$repo/bench/key_shapes/server_cpu.sh"
re='^mysql://([^:@/]+)(:([^@]*))?@([^:/?]+)(:([0-9]+))?/'
[[ "$dsn" =~ $re ]] || { echo "not a mysql:// DSN" >&2; exit 2; }
export MYSQL_PWD="${BASH_REMATCH[3]}"
client=$(bench_mysql_client)
sql=("$client" --no-defaults --protocol=TCP -h "${BASH_REMATCH[4]}" -P "${BASH_REMATCH[6]:-3306}"
  -u "${BASH_REMATCH[1]}")
work=$(mktemp -d /tmp/key-shapes.XXXXXX)
shapes=(raw a c d b)
cleanup() {
  local shape
  for shape in "${shapes[@]}"; do bench_drop_database "$dsn" "key_shape_$shape" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for shape in "${shapes[@]}"; do
  bench_drop_database "$dsn" "key_shape_$shape" >/dev/null 2>&1 || true
  shape_dsn=$(bench_create_database "$dsn" "key_shape_$shape")
  "$load" --db "$shape_dsn" --mode raw --operations 100 --warmup 0s --accounts 10000 \
    --workload uniform --replay-operations 0 >"$work/setup-$shape.txt" 2>&1
done
"${sql[@]}" key_shape_c -e "ALTER TABLE idempotency_keys DROP INDEX idempotency_keys_by_expiry"
"${sql[@]}" key_shape_b -e "ALTER TABLE transactions ADD COLUMN key_namespace VARBINARY(64) NULL,
  ADD COLUMN key_scope VARBINARY(201) NULL, ADD COLUMN \`key\` VARBINARY(255) NULL,
  ADD COLUMN key_generation INT NULL, ADD COLUMN key_expires_at BIGINT NULL,
  ADD UNIQUE KEY transactions_by_key (key_namespace, key_scope, \`key\`, key_generation)"
server_pid=$(cat "$("${sql[@]}" -N -e "SELECT @@pid_file")")
lsn() { "${sql[@]}" -N -e "SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'" | cut -f2; }

run=0
for ((round = 1; round <= rounds; round++)); do
  order=("${shapes[@]:round % 5}" "${shapes[@]:0:round % 5}")
  for cell in "500 20 1" "10 150 8"; do
    read -r items_per_transaction transactions clients <<<"$cell"
    operations=$((items_per_transaction * transactions * clients))
    for shape in "${order[@]}"; do
      run=$((run + 1))
      for ((k = 0; k < clients; k++)); do
        python3 "$repo/bench/key_shapes/mysql_shapes.py" "$shape" "$items_per_transaction" \
          "$transactions" "$k" "$((round * 100 + run))" >"$work/stream-$k.sql"
      done
      load_average=$(cut -d' ' -f1-3 /proc/loadavg)
      lsn_before=$(lsn)
      cpu_before=$(process_cpu_seconds "$server_pid")
      start=$(date +%s.%N)
      pids=()
      for ((k = 0; k < clients; k++)); do
        "${sql[@]}" "key_shape_$shape" <"$work/stream-$k.sql" >"$work/stream-$k.out" 2>&1 &
        pids+=($!)
      done
      failed=0
      for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
      end=$(date +%s.%N)
      cpu_after=$(process_cpu_seconds "$server_pid")
      lsn_after=$(lsn)
      python3 -c "
ops = $operations
print('round $round items $items_per_transaction clients $clients shape $shape: '
      f'{ops / ($end - $start):.0f} ops/s, server CPU {($cpu_after - $cpu_before) / ops * 1e6:.1f} us/op, '
      f'redo {($lsn_after - $lsn_before) / ops:.0f} bytes/op, failed streams $failed, load $load_average')"
    done
  done
done
