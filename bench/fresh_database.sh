# shellcheck shell=bash
# Sourced by run_load_smoke.sh and scripts/bench-all.sh: throwaway databases on a
# PostgreSQL or MariaDB/MySQL server given by a ledger DSN, so each load run starts
# empty and its verify audit sees no other test's rows.
#
#   fresh=$(bench_create_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_x)  # prints the new DSN
#   bench_drop_database "$LEDGER_TEST_POSTGRES_DSN" ledger_bench_x
#
# DSNs: postgresql://user[:password]@host:port/db[?params] (params are dropped for
# psql) and mysql://user[:password]@host[:port]/db. Needs psql or mariadb/mysql.

bench_mysql_client() {
  local client
  for client in mariadb mysql; do
    if command -v "$client" >/dev/null 2>&1; then
      echo "$client"
      return 0
    fi
  done
  return 1
}

# Runs one SQL statement on the server of a mysql:// DSN.
bench_mysql_exec() {
  local dsn="$1" sql="$2" client
  local re='^mysql://([^:@/]+)(:([^@]*))?@([^:/?]+)(:([0-9]+))?/([^?]+)'
  [[ "$dsn" =~ $re ]] || { echo "not a mysql:// DSN: $dsn" >&2; return 1; }
  local user="${BASH_REMATCH[1]}" password="${BASH_REMATCH[3]}" host="${BASH_REMATCH[4]}"
  local port="${BASH_REMATCH[6]:-3306}"
  client=$(bench_mysql_client) || { echo "no mariadb/mysql client" >&2; return 1; }
  MYSQL_PWD="$password" "$client" --no-defaults --protocol=TCP -h "$host" -P "$port" -u "$user" \
    -e "$sql"
}

bench_postgres_exec() {
  local dsn="$1" sql="$2"
  command -v psql >/dev/null 2>&1 || { echo "no psql client" >&2; return 1; }
  psql -X -q -v ON_ERROR_STOP=1 "${dsn%%\?*}" -c "$sql" >/dev/null
}

# The DSN with its database replaced by `name`, query parameters kept.
bench_dsn_with_database() {
  local dsn="$1" name="$2"
  local base="${dsn%%\?*}"
  local query="${dsn#"$base"}"
  echo "${base%/*}/$name$query"
}

bench_create_database() {
  local dsn="$1" name="$2"
  case "$dsn" in
    postgres://* | postgresql://*) bench_postgres_exec "$dsn" "CREATE DATABASE $name" ;;
    mysql://*) bench_mysql_exec "$dsn" "CREATE DATABASE $name" ;;
    *) echo "cannot create a database for $dsn" >&2; return 1 ;;
  esac || return 1
  bench_dsn_with_database "$dsn" "$name"
}

bench_drop_database() {
  local dsn="$1" name="$2"
  case "$dsn" in
    postgres://* | postgresql://*) bench_postgres_exec "$dsn" "DROP DATABASE IF EXISTS $name" ;;
    mysql://*) bench_mysql_exec "$dsn" "DROP DATABASE IF EXISTS $name" ;;
  esac
}
