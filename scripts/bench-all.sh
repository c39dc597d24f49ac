#!/usr/bin/env bash
# The benchmark matrix behind docs/benchmarks.md: ledger_load on every engine at 1, 8
# and 32 clients, all four workloads, raw and exactly-once side by side, plus pgbench -N
# against the same PostgreSQL server for the throughput comparison.
#
#   scripts/bench-all.sh [OUT_DIR]        (default OUT_DIR: /tmp/ledger-bench-<time>)
#
# Uses LEDGER_TEST_POSTGRES_DSN / LEDGER_TEST_MYSQL_DSN when both are set; otherwise
# starts a throwaway pair with scripts/test-servers.sh and stops it at the end. Every
# engine x clients cell runs in a fresh database (or SQLite file), so setup and the
# verify audit cost the same in each cell.
#
# Knobs (environment):
#   LEDGER_LOAD       the ledger_load binary (default: build/bench/ledger_load)
#   BENCH_ENGINES     default "sqlite postgres-advisory postgres-row mysql"
#   BENCH_CLIENTS     default "1 8 32"
#   BENCH_WORKLOADS   default "uniform,hot,retry,conflict"
#   BENCH_MODE        default "both" (raw floor, then exactly-once)
#   BENCH_DURATION    each measured phase, default 3s
#   BENCH_WARMUP      before each phase, default 1s
#   BENCH_ACCOUNTS    default 10000
#   BENCH_PGBENCH_SECONDS  each pgbench -N run, default 10 (0 skips pgbench)
# With the defaults the whole matrix takes about 10 minutes on 2 cores.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
readonly repo
readonly load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
readonly engines="${BENCH_ENGINES:-sqlite postgres-advisory postgres-row mysql}"
readonly client_counts="${BENCH_CLIENTS:-1 8 32}"
readonly workloads="${BENCH_WORKLOADS:-uniform,hot,retry,conflict}"
readonly mode="${BENCH_MODE:-both}"
readonly duration="${BENCH_DURATION:-3s}"
readonly warmup="${BENCH_WARMUP:-1s}"
readonly accounts="${BENCH_ACCOUNTS:-10000}"
readonly pgbench_seconds="${BENCH_PGBENCH_SECONDS:-10}"
out="${1:-/tmp/ledger-bench-$(date +%Y%m%d-%H%M%S)}"

# shellcheck source=bench/fresh_database.sh disable=SC1091
. "$repo/bench/fresh_database.sh"

note() { echo "bench-all: $*" >&2; }
die() { note "error: $*"; exit 1; }

servers_dir=""
stop_servers() {
  if [[ -n "$servers_dir" ]]; then
    bash "$repo/scripts/test-servers.sh" stop "$servers_dir" || true
  fi
}

needs_servers() {
  [[ " $engines " == *" postgres"* || " $engines " == *" mysql "* ]]
}

start_servers_unless_given() {
  if [[ -n "${LEDGER_TEST_POSTGRES_DSN:-}" && -n "${LEDGER_TEST_MYSQL_DSN:-}" ]]; then
    note "using the servers from LEDGER_TEST_POSTGRES_DSN / LEDGER_TEST_MYSQL_DSN"
    return
  fi
  servers_dir=$(mktemp -d /tmp/ledger-bench-servers.XXXXXX)
  trap stop_servers EXIT
  bash "$repo/scripts/test-servers.sh" start "$servers_dir" >/dev/null
  # shellcheck disable=SC1091
  . "$servers_dir/env"
}

# The base DSN of an engine name, before the cell's fresh database replaces its path.
server_dsn_of() {
  case "$1" in
    postgres-advisory | postgres-row) echo "$LEDGER_TEST_POSTGRES_DSN" ;;
    mysql) echo "$LEDGER_TEST_MYSQL_DSN" ;;
  esac
}

# Prints the DSN of a fresh, empty database for one cell.
fresh_dsn_for() {
  local engine="$1" clients="$2" dsn name fresh
  if [[ "$engine" == sqlite ]]; then
    echo "sqlite:$out/sqlite-c$clients.db"
    return
  fi
  dsn=$(server_dsn_of "$engine")
  name="ledger_bench_${engine//-/_}_c${clients}"
  bench_drop_database "$dsn" "$name" >/dev/null 2>&1 || true
  fresh=$(bench_create_database "$dsn" "$name") || die "cannot create database $name"
  [[ "$engine" == postgres-row ]] && fresh="$fresh?claim=row"
  echo "$fresh"
}

drop_cell_database() {
  local engine="$1" clients="$2"
  if [[ "$engine" == sqlite ]]; then
    rm -f "$out/sqlite-c$clients.db" "$out/sqlite-c$clients.db-wal" "$out/sqlite-c$clients.db-shm"
  else
    bench_drop_database "$(server_dsn_of "$engine")" "ledger_bench_${engine//-/_}_c${clients}" || true
  fi
}

run_cell() {
  local engine="$1" clients="$2" dsn status=0
  dsn=$(fresh_dsn_for "$engine" "$clients")
  note "$engine, $clients clients (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$load" --db "$dsn" --label "$engine" --clients "$clients" --duration "$duration" \
    --warmup "$warmup" --accounts "$accounts" --workload "$workloads" --mode "$mode" \
    --json "$out/$engine-c$clients.json" --markdown "$out/phases.md" \
    --markdown-targets "$out/targets.md" >"$out/$engine-c$clients.txt" || status=$?
  cat "$out/$engine-c$clients.txt"
  ((status == 0)) || note "$engine at $clients clients exited with $status (see its .txt)"
  drop_cell_database "$engine" "$clients"
}

# pgbench -N (no branch/teller updates: 5 statements per transaction) against the same
# server, in its own database; the reference the 8-client PostgreSQL number is judged by.
run_pgbench() {
  ((pgbench_seconds > 0)) || return 0
  command -v pgbench >/dev/null 2>&1 || { note "pgbench not found; skipping it"; return 0; }
  local dsn clients jobs tps
  bench_drop_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_pgbench >/dev/null 2>&1 || true
  dsn=$(bench_create_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_pgbench) ||
    die "cannot create the pgbench database"
  dsn="${dsn%%\?*}"
  pgbench -i -q "$dsn" >"$out/pgbench-init.txt" 2>&1 || die "pgbench -i failed (see $out/pgbench-init.txt)"
  {
    echo "| clients | pgbench -N tps |"
    echo "|---:|---:|"
  } >"$out/pgbench.md"
  for clients in $client_counts; do
    jobs=$((clients < 2 ? 1 : 2))
    note "pgbench -N -c $clients -j $jobs -T $pgbench_seconds (load $(cut -d' ' -f1-3 /proc/loadavg))"
    pgbench -N -c "$clients" -j "$jobs" -T "$pgbench_seconds" "$dsn" >"$out/pgbench-c$clients.txt" 2>&1 ||
      die "pgbench failed (see $out/pgbench-c$clients.txt)"
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/pgbench-c$clients.txt" | head -n 1)
    echo "| $clients | ${tps%.*} |" >>"$out/pgbench.md"
  done
  bench_drop_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_pgbench || true
}

# "| 8 | 4312 | 3800 | 88% |": the PostgreSQL target compares like with like, same clients.
pgbench_comparison_rows() {
  command -v jq >/dev/null 2>&1 || { echo "(jq not installed: compare pgbench.md with targets.md by hand)"; return; }
  local clients tps engine json ledger
  for clients in $client_counts; do
    tps=$(sed -n "s/^| $clients | \([0-9]*\) |$/\1/p" "$out/pgbench.md")
    [[ -n "$tps" && "$tps" != 0 ]] || continue
    for engine in postgres-advisory postgres-row; do
      json="$out/$engine-c$clients.json"
      [[ -f "$json" ]] || continue
      ledger=$(jq -r '[.phases[] | select(.workload == "uniform" and .mode == "exactly-once")
                       | .submits_per_second][0] // empty' "$json")
      [[ -n "$ledger" ]] || continue
      awk -v e="$engine" -v c="$clients" -v t="$tps" -v l="$ledger" \
        'BEGIN { printf "| %s | %d | %d | %.0f | %.0f%% |\n", e, c, t, l, 100 * l / t }'
    done
  done
}

# The disk's flush rate bounds every fsync-per-commit number: record it beside them.
probe_fsync() {
  local pg_test_fsync
  pg_test_fsync=$(compgen -G '/usr/lib/postgresql/*/bin/pg_test_fsync' | sort -V | tail -n 1 || true)
  [[ -n "$pg_test_fsync" ]] || { echo "(pg_test_fsync not found)" >"$out/fsync.txt"; return 0; }
  note "pg_test_fsync -s 1 (load $(cut -d' ' -f1-3 /proc/loadavg))"
  timeout 60 "$pg_test_fsync" -s 1 -f "$out/fsync-probe.tmp" >"$out/fsync.txt" 2>&1 || true
  rm -f "$out/fsync-probe.tmp"
}

write_summary() {
  {
    echo "# ledger benchmark matrix"
    echo
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, load before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "phases: $duration each after a $warmup warmup; $accounts accounts; workloads $workloads; mode $mode"
    echo
    echo "disk flush rate (pg_test_fsync, one 8 kB write):"
    echo
    grep -m 2 -E '^ +(fdatasync|fsync) ' "$out/fsync.txt" | sed 's/^ */    /' || true
    echo
    echo "## Targets per cell"
    echo
    cat "$out/targets.md"
    if [[ -f "$out/pgbench.md" ]]; then
      echo
      echo "## pgbench -N on the same PostgreSQL server"
      echo
      cat "$out/pgbench.md"
      echo
      echo "## PostgreSQL uniform exactly-once vs pgbench -N (target at 8 clients: >= 80%)"
      echo
      echo "| engine | clients | pgbench -N tps | ledger submits/s | ratio |"
      echo "|---|---:|---:|---:|---:|"
      pgbench_comparison_rows
    fi
    echo
    echo "## Every phase"
    echo
    cat "$out/phases.md"
  } >"$out/summary.md"
}

main() {
  [[ -x "$load" ]] || die "ledger_load not found at $load (build it, or set LEDGER_LOAD)"
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  rm -f "$out/phases.md" "$out/targets.md"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  if needs_servers; then start_servers_unless_given; fi
  local started=$SECONDS engine clients
  probe_fsync
  for engine in $engines; do
    [[ "$engine" == postgres-advisory ]] && run_pgbench
    for clients in $client_counts; do run_cell "$engine" "$clients"; done
  done
  write_summary
  note "done in $((SECONDS - started))s: $out/summary.md"
}

main
