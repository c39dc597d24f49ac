# Sourced by the row-shape drivers (postgres_shapes.sh, mysql_shapes.sh): the helpers
# they share, and the DSN each needs (a skip, exit 77, without it; a failure under CI=true).
# shellcheck source=bench/fresh_database.sh disable=SC1091
. "$repo/bench/fresh_database.sh"
# shellcheck source=bench/key_shapes/server_cpu.sh disable=SC1091
. "$repo/bench/key_shapes/server_cpu.sh"

# key_shapes_dsn VARIABLE: prints the DSN held by VARIABLE, or ends the script.
key_shapes_dsn() {
  local name=$1
  if [[ -z "${!name:-}" ]]; then
    [[ "${CI:-}" == "true" ]] && { echo "$name is not set (CI=true)" >&2; exit 1; }
    echo "$name is not set: skipping" >&2
    exit 77
  fi
  printf '%s\n' "${!name}"
}

# key_shapes_mysql_server DSN: sets mysql_user, mysql_host, mysql_port and mysql_sql (the
# mariadb/mysql client on that server, no database chosen), and exports MYSQL_PWD, so the
# password is never on a command line.
key_shapes_mysql_server() {
  local re='^mysql://([^:@/]+)(:([^@]*))?@([^:/?]+)(:([0-9]+))?/'
  [[ "$1" =~ $re ]] || { echo "not a mysql:// DSN" >&2; exit 2; }
  export MYSQL_PWD="${BASH_REMATCH[3]}"
  mysql_user="${BASH_REMATCH[1]}" mysql_host="${BASH_REMATCH[4]}" mysql_port="${BASH_REMATCH[6]:-3306}"
  mysql_sql=("$(bench_mysql_client)" --no-defaults --protocol=TCP -h "$mysql_host"
             -P "$mysql_port" -u "$mysql_user")
}
