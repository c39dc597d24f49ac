#!/usr/bin/env bash
# A single submit's client instructions, counted by callgrind rather than timed: the same
# binary gives the same count to five digits on a noisy shared machine, where a rate
# spreads by a fifth (docs/benchmarks.md, "Counted, not timed").
#
#   bench/instructions/client_per_submit.sh DB_URL [LEDGER_LOAD...]
#
# For each ledger_load binary given (default build/bench/ledger_load): one client,
# exactly-once uniform transfers over 10,000 accounts on DB_URL (a database of its own:
# the accounts are opened if missing, then 200 submits by the first binary), run twice
# under valgrind (300 and 900 submits, the same seed), counting only inside
# Ledger::Submit. Prints instructions per submit as the difference of the
# two runs over 600 submits: the connections' and the first calls' setup cancel out.
# Needs valgrind (exit 77 without it). User space only: the kernel's share (system
# calls, context switches) is not counted. The runs skip the audit (--no-verify, a
# ledger_load of 2026-11-28 or later): under valgrind it read the whole database, and
# on one that benchmarks had filled it outlasted the counting by far.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
url="${1:?usage: client_per_submit.sh DB_URL [LEDGER_LOAD...]}"
shift
binaries=("$@")
[[ ${#binaries[@]} -gt 0 ]] || binaries=("$repo/build/bench/ledger_load")
command -v valgrind >/dev/null || { echo "client_per_submit: valgrind not installed" >&2; exit 77; }
work=$(mktemp -d /tmp/ledger-instructions.XXXXXX)
trap 'rm -rf "$work"' EXIT
load_args=(--db "$url" --clients 1 --warmup 0s --accounts 10000 --workload uniform
           --mode exactly-once --replay-operations 0 --seed 7 --no-verify)
"${binaries[0]}" "${load_args[@]}" --reuse --operations 200 >"$work/populate.log" 2>&1 ||
  { cat "$work/populate.log" >&2; exit 1; }
counted() {  # binary operations -> instructions inside Ledger::Submit
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
    --toggle-collect='ledger::Ledger::Submit*' \
    "$1" "${load_args[@]}" --reuse --operations "$2" >"$work/run.log" 2>&1 ||
    { cat "$work/run.log" >&2; return 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/run.log"
}
for binary in "${binaries[@]}"; do
  short=$(counted "$binary" 300)
  long=$(counted "$binary" 900)
  echo "$binary: $(( (long - short) / 600 )) instructions per submit" \
       "(300 submits: $short, 900: $long)"
done
