#!/usr/bin/env bash
# The ledger against its own floor on PostgreSQL (docs/benchmarks.md, "The ledger against
# its own floor"): how fast can the rows a uniform transfer writes go, in the same two
# round trips, when no library sits in front of them? Per round, on one database that
# ledger_load populated (10,000 accounts, 20,000 submits):
#   pgbench -N           pgbench's own simple update transaction (the targets' yardstick)
#   raw.sql              a transfer's rows as the engine writes them (the transaction,
#                        two entries, two accounts, the outbox event) after locking the
#                        accounts: BEGIN + the lock in one pipeline, the write + COMMIT in
#                        the other, by pgbench -M prepared (floor_script, below)
#   exactly_once.sql     the same plus the advisory claim, the key read and the key row
#   one_trip.sql         exactly_once.sql in ONE pipeline, without the lock read (the
#                        write's UPDATE locks the accounts): what a submit in one round
#                        trip would cost, a design the engine does not have (sizing)
#   ledger_load          the ledger's own exactly-once single submit
#   after                with LEDGER_LOAD_AFTER set: the same with that second binary, to
#                        time a change side by side (before = LEDGER_LOAD)
# and prints each rate with its ratio to pgbench -N, and for the last three the server's
# and the client's CPU per operation (from /proc, over the run: the server must run on
# this machine).
#
#   LEDGER_TEST_POSTGRES_DSN=postgresql://... bench/floor/postgres_floor.sh [ROUNDS] [CLIENTS]
#
# LEDGER_LOAD (default build/bench/ledger_load). The cells of a round rotate, round by
# round: the first run of a round tends to win on a shared machine. Compare two binaries
# by their CPU per operation as much as by their rates: the server's runs the same
# statements for both, so the client's over the server's cancels the machine's speed that
# minute (a hypervisor stealing 10% of the cores moves both). FLOOR_SECONDS per run (default 10, at least 7).
# FLOOR_SMOKE=1 runs each script for a few transactions on a small data set (ctest's
# bench.floor_postgres_smoke: the scripts still run on the schema; a failed statement
# fails the script). Without the DSN it skips (exit 77), except under CI=true.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
rounds="${1:-3}"
clients="${2:-8}"
seconds="${FLOOR_SECONDS:-10}"
accounts=10000
populate=20000
if [[ "${FLOOR_SMOKE:-}" == 1 ]]; then
  rounds=1 clients=2 populate=200
fi
# shellcheck source=bench/key_shapes/common.sh disable=SC1091
. "$repo/bench/key_shapes/common.sh"
dsn=$(key_shapes_dsn LEDGER_TEST_POSTGRES_DSN) || exit $?
work=$(mktemp -d /tmp/ledger-floor.XXXXXX)
database="floor_$$"
pgbench_database="floor_pgbench_$$"
cleanup() {
  bench_drop_database "$dsn" "$database" >/dev/null 2>&1 || true
  bench_drop_database "$dsn" "$pgbench_database" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
jobs=$((clients < 2 ? 1 : 2))

# pgbench exits non-zero when a client aborted on an error: the scripts' statements
# must stay valid on the engine's schema.
pgbench_rate() {  # pgbench arguments... -> transactions per second
  local out
  out=$(pgbench -n "$@" 2>&1) || { echo "$out" >&2; return 1; }
  sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -n 1
}
postmaster=""
# reading PID -> "time transactions server_cpu client_cpu" (server CPU empty when the
# server is not local).
reading() {
  local server=""
  [[ -n "$postmaster" ]] && server=$(postgres_cpu_seconds "$postmaster")
  echo "$(date +%s.%N) $(psql -X -t -A "$ledger_dsn" -c "SELECT count(*) FROM transactions")" \
    "${server:-x} $(process_cpu_seconds "$1")"
}
# measure OUTPUT COMMAND...: runs it in the background, its output to OUTPUT, and reads the rate and the CPU per
# operation over its middle (from 1.5 s in to about 3 s before its end: setup, verify and
# the connection's start stay out).
measure() {
  local output=$1
  shift
  "$@" >"$output" 2>&1 &
  local pid=$! first second
  if [[ "${FLOOR_SMOKE:-}" == 1 ]]; then
    wait "$pid" || return 1
    echo "ran"
    return
  fi
  sleep 1.5
  first=$(reading "$pid")
  sleep "$((seconds - 5))"
  second=$(reading "$pid")
  wait "$pid" || return 1
  python3 - "$first" "$second" <<'PY'
import sys
a, b = (s.split() for s in sys.argv[1:3])
ops = int(b[1]) - int(a[1])
if ops <= 0: sys.exit("nothing committed in the window")
per_op = lambda i: "?" if "x" in (a[i], b[i]) else f"{(float(b[i]) - float(a[i])) * 1e6 / ops:.0f}"
print(f"{ops / (float(b[0]) - float(a[0])):.0f} {per_op(2)} {per_op(3)}")
PY
}

# floor_script raw|exactly_once|one_trip: a uniform transfer's rows as the engine writes
# them, in its two pipelines: BEGIN [, the advisory claim and the key read], the accounts'
# lock; then one data-modifying statement (both accounts, the transaction, its two entries
# [, the key's final record], the outbox event) and COMMIT. one_trip: exactly_once's
# statements but the lock, in one pipeline. For pgbench -M prepared, on the BENCH accounts
# bench-user-000000 to bench-user-009999.
floor_script() {
  local claim="" key_row="" lock=""
  if [[ $1 == exactly_once || $1 == one_trip ]]; then
    claim="SELECT pg_advisory_xact_lock(hashtextextended('k' || :t, 7));
SELECT fingerprint FROM idempotency_keys WHERE namespace = 'operations' AND scope = 'bench/floor' AND key = 'k' || :t;"
    key_row=" k AS (INSERT INTO idempotency_keys (namespace, scope, key, fingerprint, state, transaction_id, created_at, expires_at) VALUES ('operations', 'bench/floor', 'k' || :t, '$fingerprint', 'committed', 'f' || :t, $now, $((now + 86400000000))) RETURNING 1),"
  fi
  local pair="('bench-user-' || lpad(:lo::text, 6, '0'), 'bench-user-' || lpad(:hi::text, 6, '0'))"
  local debited="id = 'bench-user-' || lpad(:x::text, 6, '0')"
  # one_trip: no lock read and no pipeline break; the write's UPDATE locks the accounts.
  if [[ $1 != one_trip ]]; then lock="SELECT id, balance, version FROM accounts WHERE id IN $pair ORDER BY id FOR UPDATE;"; fi
  cat <<SQL
\set x random(0, $((accounts - 1)))
\set d random(1, $((accounts - 1)))
\set y (:x + :d) % $accounts
\set t random(1, 9000000000000000000)
\set lo least(:x, :y)
\set hi greatest(:x, :y)
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
${claim:+$claim
}${lock:+$lock
\endpipeline
\startpipeline
}WITH a AS (UPDATE accounts SET balance = balance + CASE WHEN $debited THEN -1 ELSE 1 END, version = version + 1 WHERE id IN $pair RETURNING id, balance, version), t AS (INSERT INTO transactions (id, kind, created_at, metadata, fingerprint) VALUES ('f' || :t, 'post', $now, '{}', '$fingerprint') RETURNING 1), e AS (INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount, balance_after, created_at, created_at_running_max) SELECT id, version, 'f' || :t, CASE WHEN $debited THEN 0 ELSE 1 END, 'BENCH', CASE WHEN $debited THEN -1 ELSE 1 END, balance, $now, $now FROM a RETURNING 1),$key_row ev AS (INSERT INTO outbox_events (transaction_id, type, payload, created_at) VALUES ('f' || :t, 'transaction.committed', '', $now) RETURNING 1) SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM e), (SELECT count(*) FROM ev);
COMMIT;
\endpipeline
SQL
}
now=$(($(date +%s) * 1000000))
fingerprint=e46a0ad63bfd5823e7b9e6929e6560b00663cdf9e819e324ad35cded1c968125
floor_script raw >"$work/raw.sql"
floor_script exactly_once >"$work/exactly_once.sql"
floor_script one_trip >"$work/one_trip.sql"

bench_drop_database "$dsn" "$pgbench_database" >/dev/null 2>&1 || true
pgbench_dsn=$(bench_create_database "$dsn" "$pgbench_database")
pgbench -i -q "$pgbench_dsn" >"$work/pgbench-init.txt" 2>&1

for round in $(seq 1 "$rounds"); do
  bench_drop_database "$dsn" "$database" >/dev/null 2>&1 || true
  ledger_dsn=$(bench_create_database "$dsn" "$database")
  "$load" --db "$ledger_dsn" --clients 4 --operations "$populate" --warmup 0s \
    --accounts "$accounts" --workload uniform --mode exactly-once --replay-operations 0 \
    >"$work/populate.txt" 2>&1
  psql -X -q -v ON_ERROR_STOP=1 "$ledger_dsn" -c "VACUUM ANALYZE" >/dev/null
  if [[ -z "$postmaster" ]]; then
    postmaster=$(head -n 1 "$(psql -X -t -A "$ledger_dsn" -c "SHOW data_directory" 2>/dev/null)/postmaster.pid" 2>/dev/null) ||
      postmaster=""
  fi
  run_length=(-T "$seconds")
  [[ "${FLOOR_SMOKE:-}" == 1 ]] && run_length=(-t 5)
  yardstick=$(pgbench_rate -N -c "$clients" -j "$jobs" "${run_length[@]}" "$pgbench_dsn")
  line="round $round, $clients clients | pgbench -N $(printf '%.0f' "$yardstick")"
  cells=(raw ledger exactly_once one_trip)
  [[ -n "${LEDGER_LOAD_AFTER:-}" ]] && cells+=(after)
  shift_by=$(((round - 1) % ${#cells[@]}))
  order=("${cells[@]:shift_by}" "${cells[@]:0:shift_by}")
  for which in "${order[@]}"; do
    if [[ $which == ledger || $which == after ]]; then
      duration="${seconds}s"
      [[ "${FLOOR_SMOKE:-}" == 1 ]] && duration=1s
      binary=$load
      [[ $which == after ]] && binary=$LEDGER_LOAD_AFTER
      result=$(measure "$work/ledger.txt" "$binary" --db "$ledger_dsn" --reuse --clients "$clients" \
        --duration "$duration" --warmup 0s --accounts "$accounts" --workload uniform \
        --mode exactly-once --replay-operations 0 --strict) ||
        { cat "$work/ledger.txt" >&2; exit 1; }
    else
      result=$(measure "$work/$which.txt" pgbench -n -M prepared -f "$work/$which.sql" \
        -c "$clients" -j "$jobs" "${run_length[@]}" "$ledger_dsn") ||
        { cat "$work/$which.txt" >&2; exit 1; }
    fi
    if [[ "${FLOOR_SMOKE:-}" == 1 ]]; then
      line+=" | $which ran"
      continue
    fi
    read -r rate server client <<<"$result"
    line+=" | $which $rate ($(python3 -c "print(f'{$rate / $yardstick:.2f}')")x,"
    line+=" server $server us/op, client $client us/op)"
  done
  echo "$line | load $(cut -d' ' -f1 /proc/loadavg)"
done
