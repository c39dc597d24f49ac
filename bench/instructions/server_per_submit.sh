#!/usr/bin/env bash
# A single submit's PostgreSQL server instructions, counted by callgrind rather than
# timed, as client_per_submit.sh counts the client's (docs/benchmarks.md, "Counted, not
# timed").
#
#   bench/instructions/server_per_submit.sh [LEDGER_LOAD...] [-- LOAD_ARGS...]
#
# Starts a throwaway PostgreSQL (the newest /usr/lib/postgresql/*/bin) under valgrind on
# a free loopback port, in a directory of its own, with autovacuum off (its workers would
# add counts of their own) and synchronous_commit off (the WAL flush is a wait, not
# instructions). Every backend writes its own count when its session ends. For each
# ledger_load binary given (default build/bench/ledger_load), in a database of its own:
# 100 accounts opened, then one client's exactly-once uniform transfers, 30 and then 90
# submits (--no-verify: the audit would be most of the count). A run's count is the sum
# of the backends that ended during it; prints instructions per operation as the
# difference of the two runs over the operations between them, so the sessions' setup
# cancels out.
# LOAD_ARGS are passed on to each run: `-- --batch 3` counts per operation of batches of
# three, `-- --mode raw` without the exactly-once claim and record. SHORT and LONG
# (default 30 and 90) set the runs' operations: `SHORT=300 LONG=900 ... -- --batch 100`.
# Needs valgrind and the PostgreSQL server binaries (exit 77 without them). User space
# only, as client_per_submit.sh. Takes a few minutes per binary.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
binaries=()
while [[ $# -gt 0 && "$1" != "--" ]]; do binaries+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
load_args=("$@")
mode_args=(--mode exactly-once)
for arg in "$@"; do [[ "$arg" == --mode* ]] && mode_args=(); done
short_operations=${SHORT:-30}
long_operations=${LONG:-90}
[[ ${#binaries[@]} -gt 0 ]] || binaries=("$repo/build/bench/ledger_load")
command -v valgrind >/dev/null || { echo "server_per_submit: valgrind not installed" >&2; exit 77; }
pg_bin=$(compgen -G '/usr/lib/postgresql/*/bin' | sort -V | tail -1 || true)
[[ -x "$pg_bin/initdb" ]] || { echo "server_per_submit: no PostgreSQL server binaries" >&2; exit 77; }

work=$(mktemp -d /tmp/ledger-server-instructions.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/counts"
postmaster=""  # the valgrind (or runuser) process
cleanup() {
  if [[ -n "$postmaster" ]]; then
    # The server's own pid (runuser does not pass signals on): a fast shutdown.
    local server
    server=$(head -1 "$work/data/postmaster.pid" 2>/dev/null || true)
    # (|| true: under set -e a failed kill, of a server already gone, would end the trap)
    [[ -n "$server" ]] && { kill -INT "$server" 2>/dev/null || true; }
    for _ in $(seq 1 120); do kill -0 "$postmaster" 2>/dev/null || break; sleep 0.5; done
    [[ -n "$server" ]] && { kill -KILL "$server" 2>/dev/null || true; }
    wait "$postmaster" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# initdb and postgres refuse to run as root.
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[[ $(id -u) -eq 0 ]] && chown -R postgres "$work"
as_pg "$pg_bin/initdb" -D "$work/data" -U postgres -A trust -E UTF8 --no-locale --no-sync \
  >"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg valgrind --tool=callgrind --trace-children=yes \
  --callgrind-out-file="$work/counts/backend.%p" \
  "$pg_bin/postgres" -D "$work/data" -p "$port" -k "$work" -c listen_addresses=127.0.0.1 \
  -c autovacuum=off -c synchronous_commit=off >"$work/server.log" 2>&1 &
postmaster=$!
for _ in $(seq 1 240); do
  "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  kill -0 "$postmaster" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.5
done
"$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$port" || { echo "server_per_submit: the server did not start" >&2; exit 1; }

# The files of the backends that ended since `before` (a listing), once they stop
# changing: a backend writes its count as it exits, just after the client has gone.
ended_since() {
  local before=$1 last="" now
  for _ in $(seq 1 120); do
    sleep 1
    now=$(ls -l "$work/counts" | md5sum)
    [[ "$now" == "$last" ]] && break
    last=$now
  done
  comm -13 "$before" <(ls "$work/counts" | sort)
}
summed() {  # the count files named on stdin -> their instructions
  local total=0 file count
  while read -r file; do
    count=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$work/counts/$file")
    total=$((total + ${count:-0}))
  done
  echo "$total"
}
counted() {  # binary url operations -> the server's instructions for the run
  ls "$work/counts" | sort >"$work/before"
  "$1" --db "$2" --reuse --clients 1 --operations "$3" --warmup 0s --accounts 100 \
    --workload uniform "${mode_args[@]}" --replay-operations 0 --seed 7 --no-verify \
    ${load_args[@]+"${load_args[@]}"} >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; return 1; }
  ended_since "$work/before" | summed
}

index=0
for binary in "${binaries[@]}"; do
  index=$((index + 1))
  "$pg_bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE ledger_$index" >/dev/null
  url="postgresql://postgres@127.0.0.1:$port/ledger_$index"
  counted "$binary" "$url" 10 >/dev/null  # the schema and the accounts
  short=$(counted "$binary" "$url" "$short_operations")
  long=$(counted "$binary" "$url" "$long_operations")
  echo "$binary ${load_args[*]}: $(( (long - short) / (long_operations - short_operations) ))" \
       "server instructions per operation ($short_operations operations: $short," \
       "$long_operations: $long)"
done
