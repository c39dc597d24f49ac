#!/usr/bin/env bash
# Runs every ```sh example of docs/http.md, in order, against a fresh `ledger serve` on
# SQLite, and checks each answers with the status its "# status: N" line shows.
#
# Usage: http_docs_test.sh LEDGER_BINARY DOCS_HTTP_MD
set -euo pipefail
# shellcheck source=scripts/lib/ledger-serve.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/ledger-serve.sh"
ledger=$1
document=$2
work=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" || true
  rm -rf "$work"
}
trap cleanup EXIT

"$ledger" serve --db "sqlite:$work/ledger.db" --listen 127.0.0.1:0 2>"$work/server.log" &
server_pid=$!
port=$(ledger_serve_port "$work/server.log") || exit 1
export L="http://127.0.0.1:$port"

# The examples' own curl, with the status code as the only output.
curl() { command curl -sS -o /dev/null -w '%{http_code}' "$@"; }

examples=0 failures=0 block="" in_block=0
while IFS= read -r line; do
  if [[ $in_block -eq 0 && "$line" == '```sh' ]]; then in_block=1; block=""; continue; fi
  if [[ $in_block -eq 1 && "$line" == '```' ]]; then
    in_block=0
    expected=$(grep -o '^# status: [0-9]*' <<<"$block" | cut -d' ' -f3)
    [[ -n "$expected" ]] || { echo "an example has no '# status:' line:"; echo "$block"; exit 1; }
    got=$(eval "$block")
    examples=$((examples + 1))
    if [[ "$got" != "$expected" ]]; then
      echo "FAILED (got $got, want $expected):"; echo "$block"; failures=$((failures + 1))
    fi
    continue
  fi
  [[ $in_block -eq 1 ]] && block+="$line"$'\n'
done <"$document"

echo "http docs: $examples examples, $failures failed"
[[ $examples -gt 0 && $failures -eq 0 ]]
