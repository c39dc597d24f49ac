#!/bin/bash
# Two ledger_load binaries side by side on PostgreSQL, single submits (exactly-once,
# transfers over 10,000 warmed accounts, WORKLOAD uniform or hot): BEFORE as it is, AFTER with
# one_round_trip off and on, alternating the order each round, pgbench -N first in each
# round (loopback only). LAT: the relay's added latency per round trip (e.g. 500us, a
# database on another host; round trips per operation are then reported too). ARGS:
# more ledger_load arguments for every run (e.g. "--group-commit", "--batch 100");
# BEFORE_SUFFIX: the URL suffix of BEFORE's runs (e.g. "?one_round_trip=on", to time
# a change to the option itself; default none).
#
#   . /tmp/servers/env   # scripts/test-servers.sh start /tmp/servers
#   BEFORE=/path/to/main/build/bench/ledger_load AFTER=build/bench/ledger_load \
#     C=8 ROUNDS=4 [LAT=500us] bench/floor/postgres_one_trip_ab.sh
set -euo pipefail
: "${LEDGER_TEST_POSTGRES_DSN:?source the env file of scripts/test-servers.sh first}"
: "${BEFORE:?the before binary}" "${AFTER:?the after binary}"
B=${LEDGER_TEST_POSTGRES_DSN%/*}
C=${C:-8}; ROUNDS=${ROUNDS:-4}; LAT=${LAT:-}
extra=(); [[ -n "$LAT" ]] && extra=(--round-trip-latency "$LAT")
read -r -a args <<<"${ARGS:-}"
extra+=("${args[@]}")
before_suffix=${BEFORE_SUFFIX:-}
psql -q "$B/postgres" -c "drop database if exists ab" -c "create database ab" >/dev/null
"$BEFORE" --db "$B/ab" --clients 4 --operations 20000 --warmup 0s --accounts 10000 \
  --workload uniform --mode exactly-once --replay-operations 0 >/dev/null 2>&1
psql -q "$B/ab" -c "VACUUM ANALYZE" >/dev/null
psql -q "$B/postgres" -c "drop database if exists pgb" -c "create database pgb" >/dev/null
pgbench -i -q "$B/pgb" >/dev/null 2>&1
run() {  # BINARY URL-SUFFIX
  "$1" --db "$B/ab$2" --reuse --clients "$C" --duration "${D:-10s}" --warmup "${W:-6s}" \
    --accounts 10000 --workload "${WORKLOAD:-uniform}" --mode exactly-once --replay-operations 0 --no-verify \
    "${extra[@]}" 2>&1 |
    awk '/ exactly-once /{printf "%s ops/s p50 %s p99 %s", $6, $9, $11} /round trips/{printf " %s RT/op", $(NF-2)}'
}
for r in $(seq 1 "$ROUNDS"); do
  p=""
  [[ -z "$LAT" ]] && p=$(pgbench -n -N -c "$C" -j $((C < 2 ? 1 : 2)) -T 8 "$B/pgb" 2>&1 |
                         sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  if ((r % 2)); then
    b=$(run "$BEFORE" "$before_suffix"); o=$(run "$AFTER" "?one_round_trip=off"); a=$(run "$AFTER" "?one_round_trip=on")
  else
    a=$(run "$AFTER" "?one_round_trip=on"); o=$(run "$AFTER" "?one_round_trip=off"); b=$(run "$BEFORE" "$before_suffix")
  fi
  echo "C=$C LAT=${LAT:-0} ${WORKLOAD:-uniform} ${ARGS:-} round $r | pgbench -N ${p%.*} | before $b | off $o | on $a"
done
