#!/usr/bin/env bash
# Two ledger_load binaries side by side on one MariaDB (issue 29's before/after on the
# MySQL engine), as bench/floor/postgres_floor.sh does on PostgreSQL: each round runs
# every cell with both binaries, the order alternating between rounds (on a shared VM
# the first run of a pair tends to win), each run on a fresh database with 10,000
# accounts created before the measured phase. Per run it prints the rate, p50/p99, the
# submits per database transaction, and the CPU per operation of the server (mariadbd's
# utime + stime, read from /proc: the server must be local) and of the client (the load
# driver's user + system time), both over the warm-up and the measured phase.
#
#   LEDGER_TEST_MYSQL_DSN=mysql://root@127.0.0.1:PORT/db LEDGER_LOAD=before/ledger_load \
#     LEDGER_LOAD_AFTER=after/ledger_load bench/floor/mysql_ab.sh [ROUNDS] ["CELLS"]
#
# CELLS (default "c1 c8 gc32 b100"): c1, c8 single submits at 1 and 8 clients; gc8, gc32
# group commit at 8 and 32 clients; b100 SubmitBatch of 100 at one client. AB_SECONDS:
# the measured phase (default 8; the warm-up is a quarter of it). AB_SMOKE=1 (ctest
# bench.mysql_ab_smoke): one round of c1 for a second, both sides the same binary.
# Exit 77 (skip) without LEDGER_TEST_MYSQL_DSN, unless CI=true.
set -euo pipefail

rounds=${1:-3}
cells=${2:-"c1 c8 gc32 b100"}
seconds=${AB_SECONDS:-8}
if [[ ${AB_SMOKE:-0} == 1 ]]; then
  rounds=1 cells=c1 seconds=1
fi
before=${LEDGER_LOAD:?LEDGER_LOAD: the ledger_load binary measured first in odd rounds}
after=${LEDGER_LOAD_AFTER:-$before}
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/key_shapes/common.sh
. "$repo/bench/key_shapes/common.sh"  # key_shapes_dsn, process_cpu_seconds, ...
dsn=$(key_shapes_dsn LEDGER_TEST_MYSQL_DSN)
key_shapes_mysql_server "$dsn"  # mysql_user, mysql_host, mysql_port, mysql_sql
pid=$("${mysql_sql[@]}" -N -e "SELECT @@pid_file" | xargs cat)
[[ -r /proc/$pid/stat ]] || { echo "mysql_ab: the server's /proc/$pid is not readable" >&2; exit 1; }
warmup=$(awk -v s="$seconds" 'BEGIN { printf "%gs", s / 4 }')
report=$(mktemp)
trap 'rm -f "$report"' EXIT

run() {  # side binary cell round
  local side=$1 binary=$2 cell=$3 round=$4
  local database="ledger_ab_${cell}_${side}_${round}"
  local url="mysql://${mysql_user}${MYSQL_PWD:+:$MYSQL_PWD}@${mysql_host}:${mysql_port}/${database}"
  local shape
  case $cell in
    c1) shape=(--clients 1) ;;
    c8) shape=(--clients 8) ;;
    gc8) shape=(--clients 8 --group-commit) ;;
    gc32) shape=(--clients 32 --group-commit) ;;
    b100) shape=(--clients 1 --batch 100) ;;
    *) echo "mysql_ab: unknown cell $cell" >&2; exit 2 ;;
  esac
  "${mysql_sql[@]}" -e "DROP DATABASE IF EXISTS $database; CREATE DATABASE $database"
  # The schema and the accounts, outside the measured CPU.
  "$binary" --db "$url" --mode exactly-once --clients 1 --operations 20 --warmup 0s \
    --accounts 10000 --workload uniform --replay-operations 0 --no-verify >/dev/null 2>&1 ||
    { echo "mysql_ab: setting up $database failed" >&2; exit 1; }
  local cpu_before cpu_after times
  cpu_before=$(process_cpu_seconds "$pid")
  times=$( { /usr/bin/time -f "%U %S" "$binary" --db "$url" --reuse --mode exactly-once \
    "${shape[@]}" --duration "${seconds}s" --warmup "$warmup" --accounts 10000 \
    --workload uniform --replay-operations 0 --no-verify --json "$report" >/dev/null; } 2>&1 |
    tail -1)
  cpu_after=$(process_cpu_seconds "$pid")
  python3 - "$report" "$side" "$cell" "$round" "$times" "$cpu_before" "$cpu_after" <<'EOF'
import json, sys
report, side, cell, round_, times, cpu_before, cpu_after = sys.argv[1:]
phase = json.load(open(report))["phases"][0]
user, system = (float(x) for x in times.split())
# The CPU covers the warm-up (a quarter of the phase) too: per operation of both.
operations = phase["submits"] * 1.25
latency = phase["latency"]
print(f"{cell} round {round_} {side}: {phase['submits_per_second']:,.0f} ops/s, "
      f"{phase['submits_per_transaction']:.1f} per transaction, "
      f"p50 {latency['p50_us'] / 1000:.2f} ms, p99 {latency['p99_us'] / 1000:.2f} ms, "
      f"server {(float(cpu_after) - float(cpu_before)) / operations * 1e6:,.0f} us/op, "
      f"client {(user + system) / operations * 1e6:,.0f} us/op", flush=True)
EOF
  "${mysql_sql[@]}" -e "DROP DATABASE $database"
}

for round in $(seq 1 "$rounds"); do
  for cell in $cells; do
    if (( round % 2 )); then
      run before "$before" "$cell" "$round"
      run after "$after" "$cell" "$round"
    else
      run after "$after" "$cell" "$round"
      run before "$before" "$cell" "$round"
    fi
  done
done
