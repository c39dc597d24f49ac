#!/usr/bin/env bash
# Measures the server's hold sweeper: places HOLDS holds (default 1,000) of 1 minor unit
# with timeout_seconds 1 in one POST /v1/operations/batch, lets them lapse, and reports
# the duration of the ONE sweep that records all their expiries (the sweeper's own
# "holds_expired" log line, timed around Ledger::ExpireHolds). RUNS rounds on one server.
# Not a test (no timing asserts): a measurement, quoted in docs/http.md.
#
# Usage: hold_sweep.sh LEDGER_BINARY DATABASE_URL [HOLDS] [RUNS]
#   use a fresh database: lapsed holds left there by others would join the first sweep.
set -euo pipefail
# shellcheck source=scripts/lib/ledger-serve.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/ledger-serve.sh"
ledger=$1 url=$2 holds=${3:-1000} runs=${4:-3}
work=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" || true
  rm -rf "$work"
}
trap cleanup EXIT

"$ledger" serve --db "$url" --listen 127.0.0.1:0 --hold-sweep-interval 2 2>"$work/server.log" &
server_pid=$!
port=$(ledger_serve_port "$work/server.log") || exit 1
L="http://127.0.0.1:$port"
post() { curl -sS -o "$work/answer" -w '%{http_code}' -X POST "$L$1" -H 'Content-Type: application/json' "${@:2}"; }

prefix="sweep$RANDOM$RANDOM"
post /v1/assets -d '{"code":"USD","scale":2}' >/dev/null
post /v1/accounts -d "{\"id\":\"$prefix-issuance\",\"asset\":\"USD\",\"allow_negative\":true}" >/dev/null
post /v1/accounts -d "{\"id\":\"$prefix-alice\",\"asset\":\"USD\"}" >/dev/null
post /v1/accounts -d "{\"id\":\"$prefix-bob\",\"asset\":\"USD\"}" >/dev/null
status=$(post /v1/operations -H "Idempotency-Key: \"$prefix-fund\"" \
  -d "{\"kind\":\"top_up\",\"asset\":\"USD\",\"from\":\"$prefix-issuance\",\"to\":\"$prefix-alice\",\"amount\":\"$((holds * runs))\"}")
[[ $status == 201 ]] || { echo "top-up: $status $(cat "$work/answer")"; exit 1; }

for run in $(seq "$runs"); do
  items=""
  for i in $(seq "$holds"); do
    items+="${items:+,}{\"idempotency_key\":\"$prefix-r$run-h$i\",\"operation\":{\"kind\":\"hold\",\"asset\":\"USD\",\"from\":\"$prefix-alice\",\"to\":\"$prefix-bob\",\"amount\":\"1\",\"timeout_seconds\":1}}"
  done
  lines_before=$(grep -c '"event":"holds_expired"' "$work/server.log" || true)
  echo "{\"items\":[$items]}" >"$work/batch.json"
  status=$(post /v1/operations/batch --data-binary "@$work/batch.json")
  placed=$(grep -o '"status":201' "$work/answer" | wc -l)
  [[ $status == 200 && $placed == "$holds" ]] || { echo "batch: $status, $placed of $holds placed"; exit 1; }
  for _ in $(seq 300); do
    [[ $(grep -c '"event":"holds_expired"' "$work/server.log" || true) -gt $lines_before ]] && break
    sleep 0.1
  done
  line=$(grep '"event":"holds_expired"' "$work/server.log" | tail -1)
  echo "run $run: $line"
done
grep -E "^(ledger_holds_expired_total|ledger_hold_sweeps_total)" \
  <(curl -sS "$L/metrics")
