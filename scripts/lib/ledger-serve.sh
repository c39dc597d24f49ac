# shellcheck shell=bash
# Sourced by the scripts that start `ledger serve` on a free port (bench/http_load.sh,
# bench/hold_sweep.sh, tests/server/http_docs_test.sh):
#
#   "$ledger" serve --db "$url" --listen 127.0.0.1:0 2>"$work/server.log" &
#   server_pid=$!
#   port=$(ledger_serve_port "$work/server.log") || exit 1
#
# Waits up to 15 s for the server's "listening" log line and prints the port it names;
# when none comes, prints the log to stderr and fails.
ledger_serve_port() {
  local log="$1" port=""
  for _ in $(seq 300); do
    grep -qs '"event":"listening"' "$log" && break
    sleep 0.05
  done
  port=$(grep -o '"port":[0-9]*' "$log" | head -1 | cut -d: -f2) || true
  if [[ -z "$port" ]]; then
    echo "ledger serve did not start:" >&2
    cat "$log" >&2
    return 1
  fi
  echo "$port"
}
