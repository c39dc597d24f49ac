#!/usr/bin/env bash
# The shapes of the exactly-once rows on PostgreSQL, measured on the server alone
# (docs/benchmarks.md, "The exactly-once cost, remeasured"): one pgbench transaction is
# one ledger batch of N uniform transfers sent as the engine sends it (BEGIN, the
# advisory claim and the key read, lock_accounts, one data-modifying WITH statement
# shaped as write_batch, COMMIT), on the real schema in four databases:
#   raw  no claim, no key row (the raw floor still locks the accounts)
#   a    today: the key row in idempotency_keys (heap, primary key, expiry index)
#   b    the key in the transaction's row: key columns on transactions and a unique
#        index (key_namespace, key_scope, key, key_generation); the claim reads the
#        newest generation
#   c    today's key row without idempotency_keys_by_expiry
# Each is run in ROUNDS rounds (default 3, the shape order rotated) at N = 1000 with 1
# client and N = 10 with 8 clients; per run it prints the rate, the server's CPU per
# operation (the server must run on this machine: its process tree is read from /proc)
# and pg_stat_wal's records and bytes per operation (CHECKPOINT first, so full-page
# images are included).
#
#   LEDGER_TEST_POSTGRES_DSN=postgresql://... bench/key_shapes/postgres_shapes.sh [ROUNDS]
#
# LEDGER_LOAD (default build/bench/ledger_load) makes the data set: 10,000 accounts
# (a stride of 7919, prime to the account count, gives each batch distinct accounts).
# The databases key_shape_<pid>_* are created and dropped on the DSN's server. Needs psql,
# pgbench and python3. KEY_SHAPES_SMOKE=1 runs one round of a few transactions per shape
# (ctest's bench.key_shapes_postgres_smoke: the statements still run on the schema); any
# failed statement fails the script. Without the DSN it skips (exit 77), except under
# CI=true, where that is a failure.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
rounds="${1:-3}"
cells=("1000 1 20" "10 8 250")  # items per transaction, clients, transactions per client
accounts=10000
if [[ "${KEY_SHAPES_SMOKE:-}" == 1 ]]; then
  rounds=1
  cells=("100 1 2" "10 8 5")
  accounts=1000
fi
# shellcheck source=bench/key_shapes/common.sh disable=SC1091
. "$repo/bench/key_shapes/common.sh"
dsn=$(key_shapes_dsn LEDGER_TEST_POSTGRES_DSN) || exit $?
work=$(mktemp -d /tmp/key-shapes.XXXXXX)
prefix="key_shape_$$_"
trap 'rm -rf "$work"' EXIT  # until the databases exist (cleanup, below)

items="SELECT g,
    'bench-user-' || lpad(((:o + (2*g)*7919) % :accounts)::text, 6, '0') AS from_id,
    'bench-user-' || lpad(((:o + (2*g+1)*7919) % :accounts)::text, 6, '0') AS to_id,
    1 + (g * 37 + :o) % 100 AS amount,
    'pgb-c' || :client_id || '-' || :seq || '-' || g AS key
  FROM generate_series(0, :n - 1) AS g"
keys="SELECT 'operations' AS namespace, 'load' AS scope,
    'pgb-c' || :client_id || '-' || :seq || '-' || g AS key, g FROM generate_series(0, :n - 1) AS g"
head='\set o random(0, :accounts - 1)
\set seq random(1, 1000000000000)
BEGIN ISOLATION LEVEL READ COMMITTED;'
claim="SET LOCAL lock_timeout = 10000;
SELECT pg_advisory_xact_lock(hashtextextended(namespace || '|' || scope || '|' || key, 7))
  FROM ($keys) c ORDER BY g;
SET LOCAL lock_timeout = 30000;"
read_key_rows="SELECT k.* FROM ($keys) c CROSS JOIN LATERAL (SELECT namespace, scope, key,
    fingerprint, state, transaction_id, created_at, expires_at FROM idempotency_keys k
  WHERE k.namespace = c.namespace AND k.scope = c.scope AND k.key = c.key LIMIT 1) AS k;"
read_key_transactions="SELECT t.* FROM ($keys) c CROSS JOIN LATERAL (SELECT key_namespace, key_scope,
    key, fingerprint, key_generation, id, created_at, key_expires_at FROM transactions t
  WHERE t.key_namespace = c.namespace AND t.key_scope = c.scope AND t.key = c.key
  ORDER BY key_generation DESC LIMIT 1) AS t;"
lock="SELECT id, balance, version, entries_running_max FROM accounts WHERE id IN
  (SELECT from_id FROM ($items) i UNION ALL SELECT to_id FROM ($items) i) ORDER BY id FOR UPDATE;"

# write EXTRA_COLUMNS EXTRA_VALUES KEY_CTE KEY_COUNT: the write_batch-shaped statement.
write() {
  cat <<SQL
WITH items AS ($items),
stamped AS (SELECT i.*, lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
    || '-' || md5(i.key) AS txid, (extract(epoch FROM now()) * 1000000)::bigint AS now_us FROM items i),
legs AS (SELECT s.txid, s.now_us, s.from_id AS account_id, -s.amount AS amount, 0 AS entry_index
    FROM stamped s
  UNION ALL SELECT s.txid, s.now_us, s.to_id, s.amount, 1 FROM stamped s),
new_transactions AS (INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint$1)
  SELECT s.txid, 'transfer', s.now_us, '{}', NULL, md5(s.key || 'a') || md5(s.key || 'b')$2
  FROM stamped s RETURNING 1),
new_entries AS (INSERT INTO entries (account_id, account_version, transaction_id, entry_index,
    asset, amount, balance_after, created_at, created_at_running_max)
  SELECT l.account_id, a.version + 1, l.txid, l.entry_index, 'BENCH', l.amount, a.balance + l.amount,
    l.now_us, l.now_us FROM legs l JOIN accounts a ON a.id = l.account_id RETURNING 1),
updated_accounts AS (UPDATE accounts SET balance = accounts.balance + l.amount,
    version = accounts.version + 1, entries_running_max = l.now_us
  FROM legs l WHERE accounts.id = l.account_id RETURNING 1),$3
new_events AS (INSERT INTO outbox_events (transaction_id, type, payload, created_at)
  SELECT s.txid, 'transaction.posted', '{"id":"' || s.txid || '","kind":"transfer","entries":[{"account":"'
    || s.from_id || '","amount":"-' || s.amount || '"},{"account":"' || s.to_id || '","amount":"'
    || s.amount || '"}],"metadata":{}}', s.now_us
  FROM stamped s ORDER BY s.g RETURNING 1)
SELECT (SELECT count(*) FROM new_transactions), (SELECT count(*) FROM new_entries),
  (SELECT count(*) FROM updated_accounts), (SELECT count(*) FROM new_events)$4;
SQL
}
key_row="
new_keys AS (INSERT INTO idempotency_keys (namespace, scope, key, fingerprint, state, transaction_id,
    created_at, expires_at)
  SELECT 'operations', 'load', s.key, md5(s.key || 'a') || md5(s.key || 'b'), 'committed', s.txid,
    s.now_us, s.now_us + 86400000000 FROM stamped s RETURNING 1),"
{ echo "$head"; echo "$lock"; write "" "" "" ""; echo "COMMIT;"; } >"$work/raw.sql"
{
  echo "$head"; echo "$claim"; echo "$read_key_rows"; echo "$lock"
  write "" "" "$key_row" ", (SELECT count(*) FROM new_keys)"; echo "COMMIT;"
} >"$work/a.sql"
cp "$work/a.sql" "$work/c.sql"
{
  echo "$head"; echo "$claim"; echo "$read_key_transactions"; echo "$lock"
  write ", key_namespace, key_scope, key, key_generation, key_expires_at" \
    ", 'operations', 'load', s.key, 0, s.now_us + 86400000000" "" ""
  echo "COMMIT;"
} >"$work/b.sql"

shapes=(raw a b c)
cleanup() {
  local shape
  for shape in "${shapes[@]}"; do bench_drop_database "$dsn" "${prefix}$shape" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
psql_of() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$(bench_dsn_with_database "${dsn%%\?*}" "${prefix}$1")" "${@:2}"; }
for shape in "${shapes[@]}"; do
  bench_drop_database "$dsn" "${prefix}$shape" >/dev/null 2>&1 || true
  shape_dsn=$(bench_create_database "$dsn" "${prefix}$shape")
  "$load" --db "$shape_dsn" --mode raw --operations 100 --warmup 0s --accounts "$accounts" \
    --workload uniform --replay-operations 0 >"$work/setup-$shape.txt" 2>&1
done
psql_of c -c "DROP INDEX idempotency_keys_by_expiry"
psql_of b -c 'ALTER TABLE transactions ADD COLUMN key_namespace TEXT COLLATE "C",
  ADD COLUMN key_scope TEXT COLLATE "C", ADD COLUMN key TEXT COLLATE "C",
  ADD COLUMN key_generation INTEGER, ADD COLUMN key_expires_at BIGINT' \
  -c "CREATE UNIQUE INDEX transactions_by_key ON transactions
        (key_namespace, key_scope, key, key_generation) WHERE key IS NOT NULL"
# The server's CPU only when it runs here and its data folder is readable.
postmaster=$(head -n 1 "$(psql_of raw -c "SHOW data_directory" 2>/dev/null)/postmaster.pid" 2>/dev/null) ||
  postmaster=""
cpu_seconds() { if [[ -n "$postmaster" ]]; then postgres_cpu_seconds "$postmaster"; else echo nan; fi; }

for ((round = 1; round <= rounds; round++)); do
  order=("${shapes[@]:round % 4}" "${shapes[@]:0:round % 4}")
  for cell in "${cells[@]}"; do
    read -r items_per_transaction clients transactions <<<"$cell"
    jobs=$((clients < 2 ? 1 : 2))
    operations=$((items_per_transaction * clients * transactions))
    for shape in "${order[@]}"; do
      psql_of "$shape" -c "CHECKPOINT" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
      load_average=$(cut -d' ' -f1-3 /proc/loadavg)
      cpu_before=$(cpu_seconds)
      if ! pgbench -n -f "$work/$shape.sql" -D n="$items_per_transaction" -D accounts="$accounts" \
        -t "$transactions" -c "$clients" -j "$jobs" \
        "$(bench_dsn_with_database "${dsn%%\?*}" "${prefix}$shape")" >"$work/pgbench.txt" 2>&1; then
        cat "$work/pgbench.txt" >&2
        echo "pgbench failed on shape $shape" >&2
        exit 1
      fi
      tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/pgbench.txt")
      cpu_after=$(cpu_seconds)
      read -r wal_records wal_bytes wal_fpi <<<"$(psql_of "$shape" -F' ' \
        -c "SELECT wal_records, wal_bytes, wal_fpi FROM pg_stat_wal")"
      [[ -n "$tps" ]] || { echo "pgbench ran no transaction of shape $shape" >&2; exit 1; }
      python3 -c "
nan = float('nan')
ops = $operations
print('round $round items $items_per_transaction clients $clients shape $shape: '
      f'{$tps * $items_per_transaction:.0f} ops/s, server CPU {($cpu_after - $cpu_before) / ops * 1e6:.1f} us/op, '
      f'WAL {$wal_records / ops:.2f} records and {$wal_bytes / ops:.0f} bytes/op ($wal_fpi full-page images), '
      'load $load_average')"
    done
  done
done
