#!/usr/bin/env bash
# The claim procedure's server cost (issue 29, migration 0009), measured inside the
# server: a scratch database migrated with schema/mysql/*.sql, two accounts, then for
# each shape of bench/key_shapes/mysql_claim_call.sql a loop of N claims (each rolled
# back) run by one CALL, and the server's CPU per claim (mariadbd's utime + stime from
# /proc: the server must be local). The loops leave out the protocol: a CALL saves one
# command's dispatch on the server and one round trip on the client, which
# bench/floor/mysql_ab.sh measures end to end.
#
#   LEDGER_TEST_MYSQL_DSN=mysql://root@127.0.0.1:PORT/db bench/key_shapes/mysql_claim_call.sh [ROUNDS] [N]
#
# Exit 77 (skip) without LEDGER_TEST_MYSQL_DSN, unless CI=true.
set -euo pipefail

rounds=${1:-3}
claims=${2:-5000}
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/key_shapes/common.sh
. "$repo/bench/key_shapes/common.sh"
dsn=$(key_shapes_dsn LEDGER_TEST_MYSQL_DSN)
key_shapes_mysql_server "$dsn"  # mysql_user, mysql_host, mysql_port, mysql_sql
pid=$("${mysql_sql[@]}" -N -e "SELECT @@pid_file" | xargs cat)
[[ -r /proc/$pid/stat ]] || { echo "mysql_claim_call: the server's /proc/$pid is not readable" >&2; exit 1; }
database=ledger_claim_call_$$
"${mysql_sql[@]}" -e "CREATE DATABASE $database"
trap '"${mysql_sql[@]}" -e "DROP DATABASE IF EXISTS $database"' EXIT
for migration in "$repo"/schema/mysql/[0-9]*.sql; do
  "${mysql_sql[@]}" "$database" < "$migration"
done
"${mysql_sql[@]}" "$database" <<'SQL'
INSERT INTO assets (code, scale) VALUES ('BENCH', 0);
INSERT INTO accounts (id, asset, allow_negative, overdraft_limit, created_at)
  VALUES ('a', 'BENCH', 1, 0, 0), ('c', 'BENCH', 1, 0, 0);
SQL
"${mysql_sql[@]}" "$database" < "$repo/bench/key_shapes/mysql_claim_call.sql"

for ((round = 1; round <= rounds; round++)); do
  line="round $round:"
  for shape in statements call json_key; do
    before=$(process_cpu_seconds "$pid")
    "${mysql_sql[@]}" "$database" -e "SET autocommit = 0; CALL claim_loop_$shape($claims)" > /dev/null
    after=$(process_cpu_seconds "$pid")
    line+=$(awk -v s="$shape" -v a="$after" -v b="$before" -v n="$claims" \
      'BEGIN { printf "  %s %.0f us/claim", s, (a - b) * 1e6 / n }')
  done
  echo "$line"
done
