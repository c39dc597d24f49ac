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
