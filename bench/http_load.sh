#!/usr/bin/env bash
# POST /v1/operations over HTTP (wrk, bench/http_submit.lua) beside the same workload
# through the library (ledger_load, exactly-once, uniform), on one database, at each
# client count, with group commit on and/or off on BOTH sides: "on" runs the server with
# --group-commit-max M and ledger_load with --group-commit --group-commit-max M, "off"
# runs both without, so each row compares like with like (the ratio is the HTTP cost).
# Prints one table row per (engine, clients, group commit). The HTTP rate counts first
# commits (201) only; the last column is how many answers were anything else.
#
#   bench/http_load.sh ENGINE_LABEL DATABASE_URL [CLIENTS...]     (default clients: 1 8 32)
#
# The database must be empty (a fresh SQLite path or a fresh server database, see
# bench/fresh_database.sh): ledger_load creates its data set (--accounts) in it first and
# every later run reuses it. Knobs: LEDGER (build/cli/ledger), LEDGER_LOAD
# (build/bench/ledger_load), BENCH_DURATION (10s: shorter cells swing too much on a
# shared machine), BENCH_ACCOUNTS (1000), BENCH_GROUP_COMMIT ("on off": the settings
# to run, each library then HTTP), BENCH_GROUP_COMMIT_MAX (256, `ledger serve`'s
# default --group-commit-max), BENCH_SERVER_THREADS (unset: the server's default
# --threads, its worker pool, whatever the client count; "per-client": max(clients, 8),
# what a thread-per-connection server such as the one before issue 28 needs; or a number).
set -euo pipefail
label=$1
url=$2
shift 2
clients_list=("${@:-1 8 32}")
[[ $# -eq 0 ]] && clients_list=(1 8 32)
ledger=${LEDGER:-build/cli/ledger}
ledger_load=${LEDGER_LOAD:-build/bench/ledger_load}
duration=${BENCH_DURATION:-10s}
accounts=${BENCH_ACCOUNTS:-1000}
group_commit_max=${BENCH_GROUP_COMMIT_MAX:-256}
read -r -a group_commit_settings <<<"${BENCH_GROUP_COMMIT:-on off}"
for setting in "${group_commit_settings[@]}"; do
  [[ "$setting" == on || "$setting" == off ]] || { echo "BENCH_GROUP_COMMIT: on and/or off, not $setting" >&2; exit 2; }
done
script_dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib/ledger-serve.sh
. "$script_dir/../scripts/lib/ledger-serve.sh"
work=$(mktemp -d)
server_pid=""
cleanup() {
  # A server that already exited (it failed to start) must not stop the clean-up.
  if [[ -n "$server_pid" ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# One wrk run against a fresh server with group commit $1 (on/off); sets `http` and
# `failures`.
run_http() {
  local group_commit=$1 wrk_threads=$((clients < 2 ? clients : 2))
  local flags=(--group-commit=true --group-commit-max "$group_commit_max")
  [[ "$group_commit" == on ]] || flags=(--group-commit=false)
  case "${BENCH_SERVER_THREADS:-}" in
    "") ;;
    per-client) flags+=(--threads "$((clients > 8 ? clients : 8))") ;;
    *) flags+=(--threads "$BENCH_SERVER_THREADS") ;;
  esac
  "$ledger" serve --db "$url" --listen 127.0.0.1:0 "${flags[@]}" 2>"$work/server.log" &
  server_pid=$!
  port=$(ledger_serve_port "$work/server.log") || exit 1
  wrk -t"$wrk_threads" -c"$clients" -d1s -s "$script_dir/http_submit.lua" "http://127.0.0.1:$port" \
    -- "$accounts" "warm-$clients-$group_commit-$RANDOM" >"$work/wrk.out" ||
    { echo "wrk (warmup) failed:" >&2; cat "$work/wrk.out" "$work/server.log" >&2; exit 1; }
  sleep 1  # the warmup's last requests finish before the run's connections arrive
  wrk -t"$wrk_threads" -c"$clients" -d"$duration" -s "$script_dir/http_submit.lua" \
    "http://127.0.0.1:$port" -- "$accounts" "run-$clients-$group_commit-$RANDOM" >"$work/wrk.out" ||
    { echo "wrk failed:" >&2; cat "$work/wrk.out" "$work/server.log" >&2; exit 1; }
  kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=""
  failures=$(awk '/^non_201/ {print $2}' "$work/wrk.out")
  # First commits (201) per second: a 429 or a 503 is answered fast, and counting it
  # would inflate the rate.
  http=$(awk -v failures="$failures" '/ requests in / {sub(/s,$/, "", $4); printf "%d", ($1 - failures) / $4}' \
    "$work/wrk.out")
}

# One ledger_load run with group commit $1 (on/off); sets `library`. The first run
# creates the data set, later ones reuse it.
first=1
run_library() {
  local group_commit=$1 flags=()
  if [[ "$group_commit" == on ]]; then flags=(--group-commit --group-commit-max "$group_commit_max"); fi
  [[ $first -eq 1 ]] || flags+=(--reuse)
  first=0
  "$ledger_load" --db "$url" --clients "$clients" --duration "$duration" --warmup 1s \
    --accounts "$accounts" --workload uniform --mode exactly-once --replay-operations 0 \
    --no-progress --json "$work/load.json" "${flags[@]}" >"$work/load.out" 2>&1 ||
    { cat "$work/load.out"; exit 1; }
  library=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
ph=[p for p in d["phases"] if p.get("mode")=="exactly-once"]
print(round(ph[0]["submits_per_second"]))' "$work/load.json")
}

echo "| engine | clients | group commit | library submits/s | HTTP 201/s | HTTP / library | HTTP non-201 |"
echo "|---|---|---|---|---|---|---|"
for clients in "${clients_list[@]}"; do
  for group_commit in "${group_commit_settings[@]}"; do
    run_library "$group_commit"
    run_http "$group_commit"
    ratio=$(python3 -c "print(f'{$http / $library:.2f}')")
    echo "| $label | $clients | $group_commit | $library | $http | $ratio | $failures |"
  done
done
