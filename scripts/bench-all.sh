#!/usr/bin/env bash
# The benchmark matrix behind docs/benchmarks.md: ledger_load on every engine at 1, 8
# and 32 clients, all four workloads, raw and exactly-once side by side, plus pgbench -N
# against the same PostgreSQL server for the throughput comparison (set "single"); and
# issue 11's batch and group-commit cells (set "batch"): per engine, single submits and
# batches of 1,000 at 1 client, single submits and group commit at 32 clients, with
# pgbench -N at 1 and 32 clients right before the PostgreSQL cells.
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
#   BENCH_SETS        default "single batch"; "batch" runs only issue 11's cells (about
#                     10 minutes on 2 shared cores)
#   BENCH_ENGINES     default "sqlite postgres-advisory postgres-row mysql" (set single);
#                     sqlite-full and sqlite-normal pin SQLite's synchronous setting
#   BENCH_BATCH_ENGINES  default "sqlite-full sqlite-normal postgres-advisory postgres-row
#                     mysql" (set batch)
#   BENCH_BATCH_ITEMS default 1000: operations per SubmitBatch in the batch cells
#   BENCH_BATCH_DURATION  each measured phase of the batch cells, default 6s (a batch
#                     of 1,000 took about a second here: each mode gets several)
#   BENCH_GROUP_CLIENTS  default 32: clients of the group-commit and matching single cells
#   BENCH_CLIENTS     default "1 8 32"
#   BENCH_WORKLOADS   default "uniform,hot,retry,conflict"
#   BENCH_MODE        default "both" (raw floor, then exactly-once)
#   BENCH_DURATION    each measured phase, default 3s
#   BENCH_WARMUP      before each phase, default 1s
#   BENCH_ACCOUNTS    default 10000
#   BENCH_PGBENCH_SECONDS  each pgbench -N run, default 10 (0 skips pgbench)
# With the defaults the set "single" takes about 10 minutes on 2 cores, "batch" about 10.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
readonly repo
readonly load="${LEDGER_LOAD:-$repo/build/bench/ledger_load}"
readonly sets="${BENCH_SETS:-single batch}"
readonly engines="${BENCH_ENGINES:-sqlite postgres-advisory postgres-row mysql}"
readonly batch_engines="${BENCH_BATCH_ENGINES:-sqlite-full sqlite-normal postgres-advisory postgres-row mysql}"
readonly batch_items="${BENCH_BATCH_ITEMS:-1000}"
readonly batch_duration="${BENCH_BATCH_DURATION:-6s}"
readonly group_clients="${BENCH_GROUP_CLIENTS:-32}"
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

runs_set() { [[ " $sets " == *" $1 "* ]]; }

needs_servers() {
  local all=""
  runs_set single && all="$engines"
  runs_set batch && all="$all $batch_engines"
  [[ " $all " == *" postgres"* || " $all " == *" mysql "* ]]
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

# A cell's database (or SQLite file) name: engine and cell, e.g. postgres_row_group_commit_c32.
cell_name() { local name="ledger_bench_${1}_${2}"; echo "${name//-/_}"; }

# Prints the DSN of a fresh, empty database for one cell.
fresh_dsn_for() {
  local engine="$1" cell="$2" dsn name fresh
  name=$(cell_name "$engine" "$cell")
  if [[ "$engine" == sqlite* ]]; then
    echo "sqlite:$out/$name.db"
    return
  fi
  dsn=$(server_dsn_of "$engine")
  bench_drop_database "$dsn" "$name" >/dev/null 2>&1 || true
  fresh=$(bench_create_database "$dsn" "$name") || die "cannot create database $name"
  [[ "$engine" == postgres-row ]] && fresh="$fresh?claim=row"
  echo "$fresh"
}

drop_cell_database() {
  local engine="$1" cell="$2" name
  name=$(cell_name "$engine" "$cell")
  if [[ "$engine" == sqlite* ]]; then
    rm -f "$out/$name.db" "$out/$name.db-wal" "$out/$name.db-shm"
  else
    bench_drop_database "$(server_dsn_of "$engine")" "$name" || true
  fi
}

# sqlite-full and sqlite-normal pin PRAGMA synchronous; plain sqlite keeps the default.
sqlite_flags_of() {
  case "$1" in
    sqlite-full) echo "--sqlite-synchronous FULL" ;;
    sqlite-normal) echo "--sqlite-synchronous NORMAL" ;;
  esac
}

# run_load ENGINE CELL CLIENTS WORKLOADS MODE DURATION TABLES [ledger_load flags...]: one
# ledger_load run in a fresh database; its rows go to TABLES-phases.md and -targets.md.
run_load() {
  local engine="$1" cell="$2" clients="$3" cell_workloads="$4" cell_mode="$5"
  local cell_duration="$6" tables="$7" dsn status=0
  shift 7
  dsn=$(fresh_dsn_for "$engine" "$cell")
  note "$engine $cell $* (load $(cut -d' ' -f1-3 /proc/loadavg))"
  # shellcheck disable=SC2046 # the sqlite flags are two words
  "$load" --db "$dsn" --label "$engine" --clients "$clients" --duration "$cell_duration" \
    --warmup "$warmup" --accounts "$accounts" --workload "$cell_workloads" --mode "$cell_mode" \
    $(sqlite_flags_of "$engine") "$@" --json "$out/$engine-$cell.json" \
    --markdown "$out/$tables-phases.md" --markdown-targets "$out/$tables-targets.md" \
    >"$out/$engine-$cell.txt" || status=$?
  cat "$out/$engine-$cell.txt"
  ((status == 0)) || note "$engine $cell exited with $status (see its .txt)"
  drop_cell_database "$engine" "$cell"
}

run_cell() {
  run_load "$1" "c$2" "$2" "$workloads" "$mode" "$duration" single
}

# Issue 11's cells for one engine: the explicit batch beside single submits at one
# client (raw floor and batched replay included), group commit beside single submits at
# BENCH_GROUP_CLIENTS on the uniform and hot workloads.
run_batch_cells() {
  local engine="$1" c="$group_clients"
  run_load "$engine" single-c1 1 uniform exactly-once "$duration" batch
  run_load "$engine" "batch$batch_items-c1" 1 uniform both "$batch_duration" batch \
    --batch "$batch_items" --replay-operations $((batch_items * 3))
  run_load "$engine" "single-c$c" "$c" uniform,hot exactly-once "$duration" batch
  run_load "$engine" "group-commit-c$c" "$c" uniform,hot both "$duration" batch --group-commit
}

# pgbench -N (no branch/teller updates: 5 statements per transaction) against the same
# server, in its own database; the reference the 8-client PostgreSQL number is judged by.
# run_pgbench TABLE CLIENTS...: one row per client count into TABLE.
run_pgbench() {
  local table="$1" dsn clients jobs tps
  shift
  ((pgbench_seconds > 0)) || return 0
  command -v pgbench >/dev/null 2>&1 || { note "pgbench not found; skipping it"; return 0; }
  bench_drop_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_pgbench >/dev/null 2>&1 || true
  dsn=$(bench_create_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_pgbench) ||
    die "cannot create the pgbench database"
  dsn="${dsn%%\?*}"
  pgbench -i -q "$dsn" >"$out/pgbench-init.txt" 2>&1 || die "pgbench -i failed (see $out/pgbench-init.txt)"
  {
    echo "| clients | pgbench -N tps |"
    echo "|---:|---:|"
  } >"$table"
  for clients in "$@"; do
    jobs=$((clients < 2 ? 1 : 2))
    note "pgbench -N -c $clients -j $jobs -T $pgbench_seconds (load $(cut -d' ' -f1-3 /proc/loadavg))"
    pgbench -N -c "$clients" -j "$jobs" -T "$pgbench_seconds" "$dsn" >"$out/pgbench-c$clients.txt" 2>&1 ||
      die "pgbench failed (see $out/pgbench-c$clients.txt)"
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/pgbench-c$clients.txt" | head -n 1)
    echo "| $clients | ${tps%.*} |" >>"$table"
  done
  bench_drop_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_pgbench || true
}

# "| 8 | 4312 | 3800 | 88% |": the PostgreSQL target compares like with like, same clients.
pgbench_comparison_rows() {
  command -v jq >/dev/null 2>&1 || { echo "(jq not installed: compare pgbench.md with single-targets.md by hand)"; return; }
  local clients tps engine json ledger
  for clients in $client_counts; do
    tps=$(pgbench_tps "$out/pgbench.md" "$clients")
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

# The value of a jq filter on a cell's JSON, or "" when the cell or the value is missing.
cell_value() {
  local json="$out/$1-$2.json"
  [[ -f "$json" ]] || return 0
  jq -r "($3) // empty" "$json"
}

# Exactly-once (or raw) submits per second of one workload in a cell.
cell_rate() {
  cell_value "$1" "$2" "[.phases[] | select(.workload == \"$3\" and .mode == \"${4:-exactly-once}\")
                         | .submits_per_second][0]"
}

# One workload's comparison field (exactly_once_overhead, duplicate_speedup) in a cell.
cell_comparison() {
  cell_value "$1" "$2" "[.comparisons[] | select(.workload == \"$3\") | .$4][0]"
}

# format FORMAT VALUE [DIVISOR]: VALUE (or VALUE / DIVISOR) printed with FORMAT, blank
# when a number is missing.
format() {
  [[ -n "$2" && ("${3-1}" != "" && "${3-1}" != 0) ]] || return 0
  awk -v f="$1" -v a="$2" -v b="${3-1}" 'BEGIN { printf f, a / b }'
}

# The pgbench -N tps of a client count in a pgbench table, or "".
pgbench_tps() {
  [[ -f "$1" ]] || return 0
  sed -n "s/^| $2 | \([0-9]*\) |$/\1/p" "$1"
}

# Issue 11's ratios, each from cells of this run: "| engine | 10x | cost | ... |".
batch_target_rows() {
  local engine c="$group_clients" batch="batch$batch_items-c1" gc single tps
  gc="group-commit-c$c"
  single="single-c$c"
  for engine in $batch_engines; do
    tps=""
    [[ "$engine" == postgres* ]] && tps=$(pgbench_tps "$out/batch-pgbench.md" "$c")
    echo "| $engine | $(format '%.2fx' "$(cell_rate "$engine" "$batch" uniform)" \
      "$(cell_rate "$engine" single-c1 uniform)") | $(format '%+.1f%%' \
      "$(cell_comparison "$engine" "$batch" uniform exactly_once_overhead)" 0.01) | $(format '%.1fx' \
      "$(cell_comparison "$engine" "$batch" uniform duplicate_speedup)") | $(format '%.2fx' \
      "$(cell_value "$engine" "$gc" .hot_to_uniform)") | $(format '%+.1f%%' \
      "$(cell_comparison "$engine" "$gc" uniform exactly_once_overhead)" 0.01) | $(format '%.2fx' \
      "$(cell_rate "$engine" "$gc" uniform)" "$tps") |"
  done
}

# Submits per second behind those ratios.
batch_rate_rows() {
  local engine c="$group_clients" batch="batch$batch_items-c1" gc single
  gc="group-commit-c$c"
  single="single-c$c"
  for engine in $batch_engines; do
    echo "| $engine | $(format %.0f "$(cell_rate "$engine" single-c1 uniform)") | $(format %.0f \
      "$(cell_rate "$engine" "$batch" uniform raw)") | $(format %.0f \
      "$(cell_rate "$engine" "$batch" uniform)") | $(format %.0f \
      "$(cell_rate "$engine" "$single" uniform)") | $(format %.0f \
      "$(cell_rate "$engine" "$gc" uniform raw)") | $(format %.0f \
      "$(cell_rate "$engine" "$gc" uniform)") | $(format '%.2fx' "$(cell_rate "$engine" "$gc" uniform)" \
      "$(cell_rate "$engine" "$single" uniform)") | $(format %.1f "$(cell_value "$engine" "$gc" \
      '[.phases[] | select(.workload == "uniform" and .mode == "exactly-once")
        | .submits_per_transaction][0]')") | $(format %.0f "$(cell_rate "$engine" "$single" hot)") | $(format \
      %.0f "$(cell_rate "$engine" "$gc" hot)") |"
  done
}

write_batch_summary() {
  local c="$group_clients" n="$batch_items"
  echo
  echo "## Batches and group commit (issue 11)"
  echo
  echo "Ratios of cells in this run (exactly-once unless raw is named; uniform unless hot is):"
  echo
  echo "| engine | batch $n ÷ single, 1 client (target >= 10x on PostgreSQL) | exactly-once cost, batch $n (<= 10%) | duplicate replay speedup, batch $n (>= 2x) | group commit hot ÷ uniform, $c clients (>= 0.8x) | exactly-once cost, group commit (<= 10%) | group commit ÷ pgbench -N, $c clients (>= 2.0x) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  if command -v jq >/dev/null 2>&1; then batch_target_rows; else echo "(jq not installed)"; fi
  echo
  echo "Submits (operations) per second:"
  echo
  echo "| engine | single, 1 client | batch $n raw, 1 client | batch $n, 1 client | single, $c clients | group commit raw, $c | group commit, $c | group commit ÷ single | operations per transaction, group commit | single hot, $c | group commit hot, $c |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  if command -v jq >/dev/null 2>&1; then batch_rate_rows; fi
  if [[ -f "$out/batch-pgbench.md" ]]; then
    echo
    echo "pgbench -N on the same PostgreSQL server, right before its cells:"
    echo
    cat "$out/batch-pgbench.md"
  fi
  echo
  echo "### Targets per cell"
  echo
  cat "$out/batch-targets.md"
  echo
  echo "### Every phase"
  echo
  cat "$out/batch-phases.md"
}

write_single_summary() {
  echo
  echo "## Targets per cell"
  echo
  cat "$out/single-targets.md"
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
  cat "$out/single-phases.md"
}

write_summary() {
  {
    echo "# ledger benchmark matrix"
    echo
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, load before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "sets: $sets; phases: $duration each after a $warmup warmup; $accounts accounts"
    echo
    echo "disk flush rate (pg_test_fsync, one 8 kB write):"
    echo
    grep -m 2 -E '^ +(fdatasync|fsync) ' "$out/fsync.txt" | sed 's/^ */    /' || true
    if runs_set single; then write_single_summary; fi
    if runs_set batch; then write_batch_summary; fi
  } >"$out/summary.md"
}

main() {
  [[ -x "$load" ]] || die "ledger_load not found at $load (build it, or set LEDGER_LOAD)"
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  rm -f "$out"/{single,batch}-{phases,targets}.md "$out"/{,batch-}pgbench.md
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  if needs_servers; then start_servers_unless_given; fi
  local started=$SECONDS engine clients
  probe_fsync
  if runs_set single; then
    for engine in $engines; do
      # shellcheck disable=SC2086 # one client count per word
      [[ "$engine" == postgres-advisory ]] && run_pgbench "$out/pgbench.md" $client_counts
      for clients in $client_counts; do run_cell "$engine" "$clients"; done
    done
  fi
  if runs_set batch; then
    for engine in $batch_engines; do
      [[ "$engine" == postgres-advisory ]] && run_pgbench "$out/batch-pgbench.md" 1 "$group_clients"
      run_batch_cells "$engine"
    done
  fi
  write_summary
  note "done in $((SECONDS - started))s: $out/summary.md"
}

main
