#!/bin/bash
# Two ledger_load binaries side by side with group commit (exactly-once, uniform
# transfers over 10,000 warmed accounts), alternating the order each round; on
# PostgreSQL, pgbench -N at the same client count first in each round (after one run
# per client count, discarded). Prints ops/s,
# operations per shared transaction, p50 and p99 latency (ms) of each.
#
#   . /tmp/servers/env   # scripts/test-servers.sh start /tmp/servers
#   BEFORE=/path/to/main/build/bench/ledger_load AFTER=build/bench/ledger_load \
#     ENGINE=postgres|mysql|sqlite C="8 32" ROUNDS=3 [IN_FLIGHT=2] \
#     bench/floor/group_commit_ab.sh
set -euo pipefail
: "${BEFORE:?the before binary}" "${AFTER:?the after binary}"
ENGINE=${ENGINE:-postgres}; C=${C:-8 32}; ROUNDS=${ROUNDS:-3}
extra=(); [[ -n "${IN_FLIGHT:-}" ]] && extra=(--group-commit-in-flight "$IN_FLIGHT")
work=$(mktemp -d /tmp/group-commit-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
populate=(--clients 4 --operations 20000 --warmup 0s --accounts 10000 --workload uniform
          --mode exactly-once --replay-operations 0 --no-verify)
case "$ENGINE" in
  postgres)
    : "${LEDGER_TEST_POSTGRES_DSN:?source the env file of scripts/test-servers.sh first}"
    server=${LEDGER_TEST_POSTGRES_DSN%/*}
    psql -q "$server/postgres" -c "drop database if exists gc_ab" -c "create database gc_ab" >/dev/null
    psql -q "$server/postgres" -c "drop database if exists gc_ab_pgbench" \
      -c "create database gc_ab_pgbench" >/dev/null
    pgbench -i -q "$server/gc_ab_pgbench" >/dev/null 2>&1
    url="$server/gc_ab"
    "$BEFORE" --db "$url" "${populate[@]}" >/dev/null 2>&1
    psql -q "$url" -c "VACUUM ANALYZE" >/dev/null
    fresh() { echo "$url"; } ;;
  mysql)
    : "${LEDGER_TEST_MYSQL_DSN:?source the env file of scripts/test-servers.sh first}"
    hostport=${LEDGER_TEST_MYSQL_DSN#*@}; hostport=${hostport%%/*}
    mysql -uroot -h"${hostport%:*}" -P"${hostport#*:}" \
      -e "drop database if exists gc_ab; create database gc_ab"
    url="mysql://root@$hostport/gc_ab"
    "$BEFORE" --db "$url" "${populate[@]}" >/dev/null 2>&1
    fresh() { echo "$url"; } ;;
  sqlite)
    "$BEFORE" --db "sqlite:$work/warm.db" "${populate[@]}" >/dev/null 2>&1
    fresh() {  # each run on a copy of the warmed file
      rm -f "$work"/run.db*; cp "$work/warm.db" "$work/run.db"; echo "sqlite:$work/run.db"; } ;;
  *) echo "ENGINE is postgres, mysql or sqlite" >&2; exit 2 ;;
esac
run() {  # BINARY CLIENTS
  "$1" --db "$(fresh)" --reuse --clients "$2" --group-commit "${extra[@]}" \
    --duration "${D:-8s}" --warmup "${W:-2s}" --accounts 10000 --workload uniform \
    --mode exactly-once --replay-operations 0 --no-verify 2>&1 |
    awk '/ exactly-once /{printf "%s ops/s (%s per tx, p50 %s, p99 %s)", $6, $8, $9, $11}'
}
# One run discarded first: on MariaDB the first run on a fresh database ran at twice
# the rate of every later one (the server's background work after the first burst of
# writes), which would favour whichever binary went first.
for c in $C; do run "$BEFORE" "$c" >/dev/null; done
for r in $(seq 1 "$ROUNDS"); do
  for c in $C; do
    p=""
    if [[ $ENGINE == postgres ]]; then
      p=$(pgbench -n -N -c "$c" -j $((c < 2 ? 1 : 2)) -T 8 "$server/gc_ab_pgbench" 2>&1 |
          sed -n 's/^tps = \([0-9.]*\).*/\1/p')
      p=" | pgbench -N ${p%.*}"
    fi
    if ((r % 2)); then b=$(run "$BEFORE" "$c"); a=$(run "$AFTER" "$c")
    else a=$(run "$AFTER" "$c"); b=$(run "$BEFORE" "$c"); fi
    echo "$ENGINE C=$c round $r$p | before $b | after $a | load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
