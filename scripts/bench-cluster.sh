#!/usr/bin/env bash
# The measurements of docs/scaling.md, in one run on one machine:
#   1. ledger_load --group-commit (uniform transfers, exactly once) at 1, 8 and 32 clients
#      on a single PostgreSQL, on the Patroni pair (synchronous standby, through the
#      multi-host URL), on a single MariaDB and on the three-node Galera cluster (all
#      clients on node 1);
#   2. failover time over BENCH_FAILOVER_RUNS runs (default 5): SIGKILL of the Patroni
#      leader (Patroni and its postmaster), then `ledger submit` through the multi-host
#      URL every 100 ms until one commits: kill -> first commit on the new primary. The
#      old node is started again and the pair made healthy before the next run.
#
#   scripts/bench-cluster.sh [OUT_DIR]      (default /tmp/ledger-bench-cluster-<time>)
#
# Knobs: LEDGER_LOAD (build/bench/ledger_load), LEDGER_CLI (build/cli/ledger),
# BENCH_CLIENTS ("1 8 32"; empty: failover only), BENCH_DURATION (5s), BENCH_WARMUP (1s), BENCH_ACCOUNTS (1000),
# BENCH_FAILOVER_RUNS (5). Starts its own servers and clusters and stops them at the end.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
readonly repo
readonly load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
readonly cli="${LEDGER_CLI:-$repo/build/cli/ledger}"
readonly clients_list="${BENCH_CLIENTS-1 8 32}"
readonly duration="${BENCH_DURATION:-5s}"
readonly warmup="${BENCH_WARMUP:-1s}"
readonly accounts="${BENCH_ACCOUNTS:-1000}"
readonly failover_runs="${BENCH_FAILOVER_RUNS:-5}"
out="${1:-/tmp/ledger-bench-cluster-$(date +%Y%m%d-%H%M%S)}"

note() { echo "bench-cluster: $*" >&2; }
die() { note "error: $*"; exit 1; }

[[ -x "$load" ]] || die "ledger_load not found at $load (cmake --build build --target ledger_load)"
[[ -x "$cli" ]] || die "ledger not found at $cli (cmake --build build --target ledger)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
servers=$(mktemp -d /tmp/ledger-servers.XXXXXX)
cluster=$(mktemp -d /tmp/ledger-cluster.XXXXXX)
cleanup() {
  bash "$repo/scripts/test-servers.sh" stop "$servers" >/dev/null 2>&1 || true
  bash "$repo/scripts/cluster-servers.sh" stop "$cluster" >/dev/null 2>&1 || true
}
trap cleanup EXIT
bash "$repo/scripts/test-servers.sh" start "$servers" >/dev/null
bash "$repo/scripts/cluster-servers.sh" start "$cluster" >/dev/null
# shellcheck source=/dev/null
source "$servers/env"
# shellcheck source=/dev/null
source "$cluster/env"
pg_bin=$(compgen -G '/usr/lib/postgresql/*/bin' | sort -V | tail -n 1)
readonly pg_bin

port_of() { sed -E 's|.*@127\.0\.0\.1:([0-9]+)/.*|\1|' <<<"$1"; }

leader() { bash "$repo/scripts/cluster-servers.sh" patroni-leader "$cluster" 2>/dev/null; }

wait_healthy() {
  local deadline=$((SECONDS + 180))
  until leader >/dev/null; do
    ((SECONDS < deadline)) || die "the Patroni pair did not become healthy"
    sleep 0.5
  done
}

# A fresh database for one cell: URL with its database swapped for `name`.
fresh_postgres() {  # url name -> url
  local url=$1 name=$2 port
  port=$(port_of "$(sed -E 's|,127\.0\.0\.1:[0-9]+||' <<<"$url")")
  if [[ "$url" == *,* ]]; then port=$(cat "$cluster/$(leader)/pg.port"); fi
  "$pg_bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE $name" >/dev/null
  sed -E "s|/ledger_test|/$name|" <<<"$url"
}

fresh_mysql() {  # url name -> url
  local url=$1 name=$2
  mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P "$(port_of "$url")" -uroot -e "CREATE DATABASE $name"
  sed -E "s|/ledger_test|/$name|" <<<"$url"
}

results="$out/throughput.md"
echo "| setup | clients | commits/s (group commit, exactly once) | p50 ms |" >"$results"
echo "|---|---:|---:|---:|" >>"$results"
run_cell() {  # label url clients
  local label=$1 url=$2 clients=$3 rate
  "$load" --db "$url" --label "$label" --clients "$clients" --duration "$duration" --warmup "$warmup" \
    --accounts "$accounts" --workload uniform --mode exactly-once --group-commit --replay-operations 0 \
    --json "$out/$label-$clients.json" >"$out/$label-$clients.txt" 2>&1 ||
    note "$label at $clients clients exited with $? (see $out/$label-$clients.txt)"
  rate=$(python3 - "$out/$label-$clients.json" 2>/dev/null <<'PY' || echo "? | ?"
import json, sys
phase = json.load(open(sys.argv[1]))["phases"][0]
print(f"{phase['commits_per_second']:.0f} | {phase['latency']['p50_us'] / 1000:.1f}")
PY
)
  echo "| $label | $clients | $rate |" | tee -a "$results"
}

cell=0
for clients in $clients_list; do
  cell=$((cell + 1))
  run_cell postgres-single "$(fresh_postgres "$LEDGER_TEST_POSTGRES_DSN" "bench_single_$cell")" "$clients"
  run_cell postgres-sync-standby "$(fresh_postgres "$LEDGER_TEST_PATRONI_DSN" "bench_patroni_$cell")" "$clients"
  run_cell mariadb-single "$(fresh_mysql "$LEDGER_TEST_MYSQL_DSN" "bench_single_$cell")" "$clients"
  run_cell galera-3-nodes "$(fresh_mysql "$LEDGER_TEST_GALERA1_DSN" "bench_galera_$cell")" "$clients"
done

# ---------------------------------------------------------------- failover time
failover="$out/failover.md"
echo "| run | killed | kill -> first commit on the new primary |" >"$failover"
echo "|---:|---|---:|" >>"$failover"
export LEDGER_DB="$LEDGER_TEST_PATRONI_DSN"
"$cli" migrate >/dev/null
"$cli" asset define FAIL --scale 0 >/dev/null 2>&1 || true
"$cli" account open failover-issuance --asset FAIL --allow-negative >/dev/null 2>&1 || true
"$cli" account open failover-user --asset FAIL >/dev/null 2>&1 || true
for run in $(seq 1 "$failover_runs"); do
  wait_healthy
  old=$(leader)
  body='{"kind":"top_up","asset":"FAIL","from":"failover-issuance","to":"failover-user","amount":"1"}'
  "$cli" submit --key "failover-warm-$run" --json "$body" >/dev/null
  pids="$(cat "$cluster/$old/patroni.pid") $(head -n 1 "$cluster/$old/data/postmaster.pid")"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  kill -KILL $pids
  attempt=0
  until "$cli" submit --key "failover-$run-$attempt" --json "$body" >/dev/null 2>&1; do
    attempt=$((attempt + 1))
    (($(date +%s) - ${start%.*} < 120)) || die "no commit within 120 s of the kill"
    sleep 0.1
  done
  seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$start" "$(date +%s.%N)")
  echo "| $run | $old | $seconds |" | tee -a "$failover"
  bash "$repo/scripts/cluster-servers.sh" start-node "$cluster" "$old" >/dev/null 2>&1
done
"$cli" verify
note "tables in $out (throughput.md, failover.md)"
