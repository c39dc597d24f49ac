#!/usr/bin/env bash
# Runs every ```console example of the given Markdown files, in order, one shell session
# per file in a fresh folder (so the examples run against a fresh database), and checks
# each command's shown output. A doc that drifts from the program fails the test command.
#
# In a ```console block:
#   $ COMMAND            a command (a line ending in \ continues it; a line ending in
#                        <<'EOF' takes the lines up to EOF as its here-document)
#   output lines         what the command prints: its stdout, then its stderr; none
#                        shown: not checked. A line "..." stands for any number of lines, and
#                        "..." inside a line for any text. Ids (UUIDs) and RFC 3339 times
#                        match any id and time.
# Commands run with the tool first on PATH as `ledger`, LEDGER_DB unset, and variables
# kept from one command to the next, as a reader's shell would. The docs' example address
# 127.0.0.1:8080 is replaced by a free loopback port picked for the run, so a server
# already listening on 8080 does not fail the test.
#
# Usage: console_examples_test.sh LEDGER_BINARY FILE.md...
set -uo pipefail
ledger_binary=$(realpath "$1")
shift

normalise() {
  sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<id>/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<time>/g' \
    -e 's/[[:space:]]+$//'
}

# Whether the actual lines ($1, a file) match the expected ones ($2, a file).
matches() {
  local -a actual expected
  mapfile -t actual < <(normalise <"$1")
  mapfile -t expected < <(normalise <"$2")
  local a=0 e=0 pattern
  while ((e < ${#expected[@]})); do
    if [[ "${expected[e]}" == "..." ]]; then
      ((e++))
      ((e == ${#expected[@]})) && return 0
      pattern=$(glob_of "${expected[e]}")
      while ((a < ${#actual[@]})) && [[ "${actual[a]}" != $pattern ]]; do ((a++)); done
      ((a < ${#actual[@]})) || return 1
    else
      pattern=$(glob_of "${expected[e]}")
      ((a < ${#actual[@]})) && [[ "${actual[a]}" == $pattern ]] || return 1
    fi
    ((a++, e++))
  done
  ((a == ${#actual[@]}))
}

# The expected line as a bash glob: its own glob characters escaped, "..." any text.
glob_of() {
  local line=$1
  line=${line//\\/\\\\}
  line=${line//\*/\\*}
  line=${line//\?/\\?}
  line=${line//\[/\\[}
  printf '%s' "${line//.../*}"
}

examples=0 failures=0
last_status=0
free_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Runs one command in this shell (its variables persist) and checks its output.
check_example() {
  local command=$1 expected_file=$2 shown=$3 output_file error_file
  output_file=$(mktemp)
  error_file=$(mktemp)
  command=${command//127.0.0.1:8080/127.0.0.1:$free_port}
  ( exit "$last_status" )  # so the example's `echo $?` sees the previous command's status
  eval "$command" >"$output_file" 2>"$error_file" </dev/null
  last_status=$?
  cat "$error_file" >>"$output_file"
  rm -f "$error_file"
  examples=$((examples + 1))
  if [[ "$shown" -eq 1 ]] && ! matches "$output_file" "$expected_file"; then
    failures=$((failures + 1))
    echo "FAILED in $document: \$ $command"
    echo "--- shown in the doc"; cat "$expected_file"
    echo "--- printed"; cat "$output_file"
    echo "---"
  fi
  rm -f "$output_file"
}

run_document() {
  local document=$1 line in_block=0 command="" heredoc="" expected_file shown=0
  expected_file=$(mktemp)
  flush() {
    [[ -n "$command" ]] && check_example "$command" "$expected_file" "$shown"
    command="" shown=0
    : >"$expected_file"
  }
  while IFS= read -r line; do
    if [[ $in_block -eq 0 ]]; then
      [[ "$line" == '```console' ]] && in_block=1
      continue
    fi
    if [[ -n "$heredoc" ]]; then
      command+=$'\n'"$line"
      [[ "$line" == "$heredoc" ]] && heredoc=""
      continue
    fi
    if [[ "$line" == '```' ]]; then flush; in_block=0; continue; fi
    if [[ "$line" == '$ '* ]]; then
      flush
      command=${line#\$ }
      while [[ "$command" == *\\ ]] && IFS= read -r line; do command+=$'\n'"$line"; done
      if [[ "$command" =~ \<\<\'([A-Z]+)\'$ ]]; then heredoc=${BASH_REMATCH[1]}; fi
      continue
    fi
    printf '%s\n' "$line" >>"$expected_file"
    shown=1
  done <"$document"
  flush
  rm -f "$expected_file"
}

for document in "$@"; do
  document=$(realpath "$document")
  work=$(mktemp -d)
  mkdir "$work/bin"
  ln -s "$ledger_binary" "$work/bin/ledger"
  (
    cd "$work" || exit 1
    export PATH="$work/bin:$PATH"
    unset LEDGER_DB
    run_document "$document"
    echo "$(basename "$document"): $examples examples, $failures failed"
    [[ $examples -gt 0 && $failures -eq 0 ]]
  ) || failed_documents=1
  rm -rf "$work"
done
exit "${failed_documents:-0}"
