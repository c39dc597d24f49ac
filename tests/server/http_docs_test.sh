#!/usr/bin/env bash
# Runs every ```sh example of docs/http.md, in order, against a fresh `ledger serve` on
# SQLite, and checks each answers with the status its "# status: N" line shows and, when
# a ```json block follows the example (blank lines between at most), with the body that
# block shows (tests/docs/json_shown_matches.py says how a shown body matches).
#
# Usage: http_docs_test.sh LEDGER_BINARY DOCS_HTTP_MD
#        (HTTP_DOCS_SHOW_BODIES=1 prints every example's status and body: for writing docs)
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

json_matches="$(dirname "${BASH_SOURCE[0]}")/../docs/json_shown_matches.py"

# The examples' own curl, with the status code as the only output; the body goes to a
# file, where a shown body is compared.
curl() { command curl -sS -o "$work/body" -w '%{http_code}' "$@"; }

examples=0 bodies=0 failures=0 block="" in_block=0
# 1 while the lines read since the last example are blank: a ```json block there is its body.
after_example=0
while IFS= read -r line; do
  if [[ $in_block -eq 0 && "$line" == '```sh' ]]; then in_block=1; block=""; continue; fi
  if [[ $in_block -eq 0 && "$line" == '```json' && $after_example -eq 1 ]]; then
    in_block=2; block=""; continue
  fi
  if [[ $in_block -eq 2 && "$line" == '```' ]]; then
    in_block=0 after_example=0
    printf '%s' "$block" >"$work/shown"
    bodies=$((bodies + 1))
    if ! why=$(python3 "$json_matches" "$work/shown" "$work/body"); then
      echo "FAILED (the body does not match what the doc shows: $why):"; echo "$example"
      failures=$((failures + 1))
    fi
    continue
  fi
  if [[ $in_block -eq 1 && "$line" == '```' ]]; then
    in_block=0 after_example=1 example=$block
    rm -f "$work/body"
    expected=$(grep -o '^# status: [0-9]*' <<<"$block" | cut -d' ' -f3)
    [[ -n "$expected" ]] || { echo "an example has no '# status:' line:"; echo "$block"; exit 1; }
    got=$(eval "$block")
    examples=$((examples + 1))
    if [[ -n "${HTTP_DOCS_SHOW_BODIES:-}" ]]; then
      printf '%s--> %s ' "$block" "$got"; cat "$work/body" 2>/dev/null; echo
    fi
    if [[ "$got" != "$expected" ]]; then
      echo "FAILED (got $got, want $expected):"; echo "$block"; failures=$((failures + 1))
    fi
    continue
  fi
  if [[ $in_block -ne 0 ]]; then block+="$line"$'\n'; continue; fi
  [[ -z "$line" ]] || after_example=0
done <"$document"

echo "http docs: $examples examples ($bodies with a shown body), $failures failed"
[[ $examples -gt 0 && $failures -eq 0 ]]
