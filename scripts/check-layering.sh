#!/usr/bin/env bash
# Fails when an #include points up the layer list, two top-level folders include each
# other (directly or round a longer cycle), or a driver header leaves its engine.
#
#   base <- idempotency <- ledger <- engines <- server, bench <- cli
#
# A file may include its own layer and the layers below it: the `ledger` tool (cli/) runs
# `ledger serve` from server/, and server/ never includes cli/. Inside engines/, a folder
# (memory, sqlite, postgres, mysql) may include engines/common/ and itself, never a
# sibling; engines/common/ includes no engine folder. Driver headers (libpqxx, libpq,
# Connector/C++, sqlite3.h) appear only in their engine's folder, in tests/, which may
# open a database directly to plant corruption, and in bench/key_shapes/, whose drivers
# measure statement shapes on the server without the engine in front. ledger/internal/ (test and benchmark
# hooks such as the unsafe ledger without idempotency) is included only from tests/,
# bench/ and fuzz/, so production code cannot reach it. tests/ and fuzz/ may include
# anything else.
#
# Usage: scripts/check-layering.sh [ROOT]   (ROOT defaults to the repository)
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"

files=$(find base idempotency ledger engines cli server bench tests fuzz \
          \( -name '*.h' -o -name '*.cc' \) -type f 2>/dev/null | sort || true)
[[ -n "$files" ]] || { echo "layering: no sources under $PWD" >&2; exit 1; }

# One pass over every include line: "FILE:#include <header>".
# shellcheck disable=SC2086
grep -HE '^[[:space:]]*#[[:space:]]*include' $files | awk '
  function rank(layer) {
    if (layer == "base") return 0
    if (layer == "idempotency") return 1
    if (layer == "ledger") return 2
    if (layer == "engines") return 3
    if (layer == "server" || layer == "bench") return 4
    if (layer == "cli") return 5
    return -1
  }
  function driver_owner(header) {
    if (header ~ /^pqxx\// || header == "libpq-fe.h" || header ~ /^postgresql\//) return "postgres"
    if (header ~ /^cppconn\// || header == "mysql_driver.h" || header == "mysql_connection.h" || header == "mysql.h") return "mysql"
    if (header == "sqlite3.h") return "sqlite"
    return ""
  }
  {
    colon = index($0, ":")
    file = substr($0, 1, colon - 1)
    line = substr($0, colon + 1)
    if (!match(line, /[<"][^">]+[">]/)) next
    header = substr(line, RSTART + 1, RLENGTH - 2)
    split(file, parts, "/")
    layer = parts[1]
    engine_folder = (layer == "engines" && length(parts) > 2) ? parts[2] : ""
    owner = driver_owner(header)
    if (owner != "" && layer != "tests" && file !~ /^bench\/key_shapes\// && engine_folder != owner) {
      printf "layering: %s includes the %s driver header <%s> outside engines/%s/\n", file, owner, header, owner
      bad++
    }
    if (header ~ /^ledger\/internal\// && layer != "tests" && layer != "bench" && layer != "fuzz" &&
        file !~ /^ledger\/internal\//) {
      printf "layering: %s includes the test hook header \"%s\" (only tests/, bench/, fuzz/ may)\n", file, header
      bad++
    }
    own = rank(layer)
    if (own < 0 || index(header, "/") == 0) next  # tests/, fuzz/; or not a project header
    split(header, target, "/")
    theirs = rank(target[1])
    if (theirs < 0) next
    if (target[1] != layer) includes[layer, target[1]] = file
    if (theirs > own) {
      printf "layering: %s (%s) includes \"%s\" from the higher layer %s\n", file, layer, header, target[1]
      bad++
    } else if (target[1] == "engines" && length(target) > 2 && engine_folder != "" &&
               target[2] != "common" && target[2] != engine_folder) {
      printf "layering: %s includes \"%s\" from the sibling engine %s\n", file, header, target[2]
      bad++
    }
  }
  # Depth-first search for a cycle of folder includes through `folder`.
  function cycle_from(folder, path,    next_folder, pair, parts) {
    if (on_path[folder]) {  # the cycle is the part of the path from folder on
      cycle = path " -> " folder
      cycle = substr(cycle, index(" -> " cycle " -> ", " -> " folder " -> "))
      return 1
    }
    if (done[folder]) return 0
    on_path[folder] = 1
    for (pair in includes) {
      split(pair, parts, SUBSEP)
      if (parts[1] != folder) continue
      if (cycle_from(parts[2], path == "" ? folder : path " -> " folder)) return 1
    }
    on_path[folder] = 0
    done[folder] = 1
    return 0
  }
  END {
    for (pair in includes) {
      split(pair, parts, SUBSEP)
      if (cycle_from(parts[1], "")) {
        printf "layering: the folders include each other: %s\n", cycle
        bad++
        break
      }
    }
    if (bad > 0) { printf "layering: %d violation(s)\n", bad; exit 1 }
    print "layering: OK"
  }'
