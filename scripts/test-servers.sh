#!/usr/bin/env bash
# Throwaway PostgreSQL + MariaDB pair for integration tests, benchmarks and fault tests.
#
#   test-servers.sh start DIR             start both servers under DIR, write DIR/env
#   test-servers.sh start-postgres DIR    start PostgreSQL only (a test's own server)
#   test-servers.sh start-mysql DIR       start MariaDB only
#   test-servers.sh stop DIR              stop what runs there and remove DIR (idempotent)
#   test-servers.sh restart-postgres DIR  stop + start PostgreSQL, same port and data
#   test-servers.sh restart-mysql DIR     stop + start MariaDB, same port and data
#
# Typical use:
#   dir=$(mktemp -d /tmp/ledger-servers.XXXXXX)
#   scripts/test-servers.sh start "$dir" && . "$dir/env"
#   ... run tests ...
#   scripts/test-servers.sh stop "$dir"
#
# Both servers listen on 127.0.0.1 only, on free ports picked at start, with their
# sockets, logs and data inside DIR, so several pairs can run side by side.
# Environment knobs: LEDGER_TEST_SERVERS_TIMEOUT (seconds, default 60) bounds every
# wait; LEDGER_PG_BIN overrides the PostgreSQL server bin directory;
# LEDGER_TEST_SERVERS_TLS_DIR names a folder holding ca.crt, server.crt and server.key:
# the servers then also accept TLS with that certificate (copied into DIR/tls at start,
# so restarts keep it). Plain TCP connections are still accepted.
# LEDGER_TEST_SERVERS_NO_TLS=1 (not with a TLS dir): MariaDB runs with --skip-ssl
# (have_ssl DISABLED, also where newer servers would make a certificate of their own);
# PostgreSQL runs with ssl = off, its default.
set -euo pipefail

readonly prog="test-servers"
readonly timeout="${LEDGER_TEST_SERVERS_TIMEOUT:-60}"
readonly database="ledger_test"
# Written first thing by start; stop only deletes a folder carrying it, so a typo in
# DIR can never rm -rf someone's real folder.
readonly marker_name=".ledger-test-servers"

die() {
  echo "$prog: error: $*" >&2
  exit 1
}

note() {
  echo "$prog: $*" >&2
}

usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

is_root() {
  [[ $(id -u) -eq 0 ]]
}

# initdb and pg_ctl refuse to run as root, so as root they run as user postgres.
as_pg() {
  if is_root; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# Debian installs server binaries per major version; take the newest one.
find_pg_bin() {
  if [[ -n "${LEDGER_PG_BIN:-}" ]]; then
    [[ -x "$LEDGER_PG_BIN/initdb" ]] || die "LEDGER_PG_BIN=$LEDGER_PG_BIN has no initdb"
    echo "$LEDGER_PG_BIN"
    return
  fi
  local candidate newest=""
  while IFS= read -r candidate; do
    [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]] && newest="$candidate"
  done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -V)
  [[ -n "$newest" ]] || die "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb);" \
    "install the 'postgresql' package (scripts/install-deps.sh does)"
  echo "$newest"
}

find_mariadbd() {
  local candidate
  for candidate in /usr/sbin/mariadbd /usr/sbin/mysqld "$(command -v mariadbd 2>/dev/null || true)"; do
    [[ -n "$candidate" && -x "$candidate" ]] && { echo "$candidate"; return; }
  done
  die "mariadbd not found; install the 'mariadb-server' package (scripts/install-deps.sh does)"
}

need_command() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found; install the '$2' package (scripts/install-deps.sh does)"
}

# A free loopback port: the kernel hands one out for port 0. Another process may take
# it before the server binds, so callers retry when the bind fails.
free_port() {
  local python
  # The system python first: a pyenv shim is slower and not runnable by other users.
  for python in /usr/bin/python3 "$(command -v python3 2>/dev/null || true)"; do
    [[ -n "$python" && -x "$python" ]] || continue
    if "$python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' 2>/dev/null; then
      return
    fi
  done
  # No python: probe random high ports with bash's /dev/tcp (refused = nobody listens).
  local port attempt
  for attempt in $(seq 1 100); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "could not find a free TCP port on 127.0.0.1 after $attempt tries"
}

# kill -0 also succeeds on a zombie; here PID 1 reaps orphans only about once a
# second, so a server that already exited would look alive for ~1 s more.
pid_alive() {
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true)
  [[ "$state" != "Z" ]]
}

# True when pid is alive and is one of our servers: its working directory (both
# servers chdir into their data dir) or its command line mentions the data dir. This
# guards against signalling an unrelated process that reused a stale pid.
pid_is_ours() {
  local pid="$1" datadir="$2" cwd cmdline
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  pid_alive "$pid" || return 1
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null || true)
  [[ "$cwd" == "$datadir" ]] && return 0
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)
  [[ "$cmdline" == *"$datadir"* ]]
}

# Bounded wait for a pid to exit; SIGKILL as a last resort so stop never hangs.
wait_pid_gone() {
  local pid="$1" what="$2" deadline=$((SECONDS + timeout))
  while pid_alive "$pid"; do
    if ((SECONDS >= deadline)); then
      note "$what (pid $pid) still running after ${timeout}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      return 0
    fi
    sleep 0.1
  done
}

log_tail() {
  local log="$1"
  if [[ -f "$log" ]]; then
    echo "---- last lines of $log ----" >&2
    tail -n 30 "$log" >&2 || true
    echo "----" >&2
  fi
}

# Resolves DIR and sets the paths every subcommand uses.
set_paths() {
  [[ -n "${1:-}" ]] || usage
  dir=$(realpath -m -- "$1")
  [[ "$dir" != "/" ]] || die "refusing to use / as DIR"
  # Postgres splits unix_socket_directories on commas/spaces and both servers need
  # the path inside a config line; plain path characters keep that simple.
  [[ "$dir" =~ ^[A-Za-z0-9._/+-]+$ ]] || die "DIR must only contain letters, digits and ._/+- (got '$dir')"
  marker="$dir/$marker_name"
  pg_dir="$dir/pg"
  pg_data="$pg_dir/data"
  pg_log="$pg_dir/server.log"
  pg_port_file="$dir/pg.port"
  my_dir="$dir/my"
  my_data="$my_dir/data"
  my_sock="$my_dir/mysqld.sock"
  my_pid_file="$my_dir/mysqld.pid"
  my_launch_pid_file="$my_dir/launch.pid"
  my_log="$my_dir/error.log"
  my_port_file="$dir/my.port"
  tls_dir="$dir/tls"
  no_tls_file="$dir/no-tls"
  env_file="$dir/env"
  # A unix socket path must fit in sun_path (108 bytes including the NUL).
  ((${#my_sock} <= 100 && ${#pg_dir} + 20 <= 100)) || die "DIR path too long for unix sockets: $dir"
}

# ---------------------------------------------------------------- PostgreSQL

pg_write_conf() {
  local port="$1"
  # Kept in its own file, included from postgresql.conf, so a retry on another port
  # just rewrites it. fsync stays on: benchmarks against this server must be honest.
  cat >"$pg_data/ledger-test.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$pg_dir'
max_connections = 200
fsync = on
EOF
  if [[ -d "$pg_dir/tls" ]]; then
    cat >>"$pg_data/ledger-test.conf" <<EOF
ssl = on
ssl_cert_file = '$pg_dir/tls/server.crt'
ssl_key_file = '$pg_dir/tls/server.key'
ssl_ca_file = '$pg_dir/tls/ca.crt'
EOF
  fi
  if is_root; then chown postgres:postgres "$pg_data/ledger-test.conf"; fi
  echo "$port" >"$pg_port_file"
}

# PostgreSQL refuses a key file others can read, or one it does not own (as root).
pg_install_tls() {
  [[ -d "$tls_dir" ]] || return 0
  mkdir -p "$pg_dir/tls"
  cp "$tls_dir/ca.crt" "$tls_dir/server.crt" "$tls_dir/server.key" "$pg_dir/tls/"
  chmod 600 "$pg_dir/tls/server.key"
  if is_root; then chown -R postgres:postgres "$pg_dir/tls"; fi
}

pg_start_server() {
  # pg_ctl's own messages only matter when it fails; callers then show the server log.
  if ! as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_log" -w -t "$timeout" start >"$dir/pg_ctl.out" 2>&1; then
    cat "$dir/pg_ctl.out" >&2
    return 1
  fi
}

pg_stop_server() {
  [[ -f "$pg_data/postmaster.pid" ]] || return 0
  local pid
  pid=$(head -n 1 "$pg_data/postmaster.pid" 2>/dev/null || true)
  as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w -t "$timeout" stop >/dev/null 2>&1 || true
  # pg_ctl can fail (half-written data dir, missing binaries); fall back to signals.
  if pid_is_ours "$pid" "$pg_data"; then
    kill -INT "$pid" 2>/dev/null || true # SIGINT = fast shutdown
    wait_pid_gone "$pid" "postgres"
  fi
}

pg_init_and_start() {
  mkdir -p "$pg_dir"
  if is_root; then chown postgres:postgres "$pg_dir"; fi
  # Catches a DIR below a folder user postgres cannot enter (e.g. /root/...).
  as_pg test -w "$pg_dir" -a -x "$pg_dir" ||
    die "the PostgreSQL server user cannot write $pg_dir; make every parent of DIR traversable (chmod o+x)"
  # --no-sync only skips flushing the fresh data dir to disk (a throwaway one); the
  # server itself still runs with fsync on.
  if ! as_pg "$pg_bin/initdb" -D "$pg_data" -U postgres -A trust -E UTF8 --no-locale --no-sync \
    >"$pg_dir/initdb.log" 2>&1; then
    log_tail "$pg_dir/initdb.log"
    die "initdb failed"
  fi
  echo "include_if_exists = 'ledger-test.conf'" >>"$pg_data/postgresql.conf"
  pg_install_tls
  local attempt port
  for attempt in 1 2 3; do
    port=$(free_port)
    pg_write_conf "$port"
    # Truncated so the 'already in use' check below sees this attempt only.
    if [[ -f "$pg_log" ]]; then : >"$pg_log"; fi
    pg_start_server 2>/dev/null && return 0
    # Lost the race for the port to another process: pick another one.
    if grep -q 'already in use' "$pg_log" 2>/dev/null && ((attempt < 3)); then
      note "postgres port $port taken meanwhile; retrying"
      continue
    fi
    break
  done
  log_tail "$dir/pg_ctl.out"
  log_tail "$pg_log"
  die "PostgreSQL failed to start (waited at most ${timeout}s)"
}

pg_psql() {
  "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(cat "$pg_port_file")" -U postgres "$@"
}

# ---------------------------------------------------------------- MariaDB

my_user_args() {
  # mariadbd refuses to run as root unless told to; as another user it runs as itself.
  if is_root; then echo "--user=root"; fi
}

# The TLS options of mariadbd: --skip-ssl for a server without TLS, the certificate when
# DIR has one, else nothing.
my_tls_args() {
  if [[ -f "$no_tls_file" ]]; then
    echo "--skip-ssl"
    return 0
  fi
  [[ -d "$tls_dir" ]] || return 0
  echo "--ssl-ca=$tls_dir/ca.crt --ssl-cert=$tls_dir/server.crt --ssl-key=$tls_dir/server.key"
}

my_launch() {
  local port
  port=$(cat "$my_port_file")
  rm -f "$my_pid_file"
  # mariadbd does not daemonize: setsid detaches it from our session and terminal so
  # it survives this script and Ctrl-C in the caller's shell. A 1 GiB buffer pool, not
  # the default 128 MiB: a benchmark of a few runs outgrew that and measured the disk's
  # reads, its rates halving from run to run (docs/benchmarks.md, "Group commit: a free
  # slot waits for a share of the callers").
  # shellcheck disable=SC2046 # my_user_args and my_tls_args print plain words
  setsid "$mariadbd" --no-defaults --datadir="$my_data" --tmpdir="$my_dir/tmp" $(my_user_args) \
    --socket="$my_sock" --pid-file="$my_pid_file" --log-error="$my_log" \
    --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
    --max-connections=300 --innodb-buffer-pool-size=1G $(my_tls_args) </dev/null >/dev/null 2>&1 &
  # Remembered so stop can find the server even if it died before writing its pid file.
  echo "$!" >"$my_launch_pid_file"
}

# Waits until mariadbd answers on its socket; fails early if the process died.
my_wait_ready() {
  local pid deadline=$((SECONDS + timeout))
  pid=$(cat "$my_launch_pid_file")
  until mariadb-admin --no-defaults --connect-timeout=2 --socket="$my_sock" -uroot ping >/dev/null 2>&1; do
    pid_alive "$pid" || return 1
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

my_server_pid() {
  local pid file
  for file in "$my_pid_file" "$my_launch_pid_file"; do
    pid=$(cat "$file" 2>/dev/null || true)
    if pid_is_ours "$pid" "$my_data"; then
      echo "$pid"
      return 0
    fi
  done
  return 1
}

my_stop_server() {
  local pid
  pid=$(my_server_pid) || return 0
  # SIGTERM makes mariadbd shut down cleanly (flushes InnoDB), like mariadb-admin shutdown.
  kill -TERM "$pid" 2>/dev/null || true
  wait_pid_gone "$pid" "mariadbd"
}

my_start_server() {
  my_launch
  if my_wait_ready; then return 0; fi
  return 1
}

# Runs in the background while initdb works: both are CPU bound, two cores here.
my_install() {
  # A temporary directory of its own: several servers bootstrapping at once in the
  # shared /tmp once failed with "Error on delete of '/tmp/#sql-temptable-...MAI'".
  mkdir -p "$my_dir/tmp"
  # shellcheck disable=SC2046 # my_user_args prints zero or one word
  mariadb-install-db --no-defaults --datadir="$my_data" --tmpdir="$my_dir/tmp" $(my_user_args) \
    --auth-root-authentication-method=normal --skip-test-db >"$my_dir/install.log" 2>&1
}

my_start_new() {
  local attempt port
  for attempt in 1 2 3; do
    port=$(free_port)
    echo "$port" >"$my_port_file"
    if [[ -f "$my_log" ]]; then : >"$my_log"; fi
    my_start_server && return 0
    my_stop_server
    if grep -q 'already in use' "$my_log" 2>/dev/null && ((attempt < 3)); then
      note "mariadb port $port taken meanwhile; retrying"
      continue
    fi
    break
  done
  log_tail "$my_log"
  die "MariaDB failed to start (waited at most ${timeout}s)"
}

my_client() {
  mariadb --no-defaults --protocol=TCP -h 127.0.0.1 -P "$(cat "$my_port_file")" -uroot "$@"
}

# ---------------------------------------------------------------- subcommands

# Checks the binaries of the servers to start: "both", "postgres" or "mysql".
check_binaries() {
  local which="$1"
  if [[ "$which" != mysql ]]; then
    pg_bin=$(find_pg_bin)
    [[ -x "$pg_bin/psql" ]] || die "psql not found in $pg_bin; install the 'postgresql-client' package"
    if is_root; then
      need_command runuser util-linux
      id postgres >/dev/null 2>&1 || die "user 'postgres' missing; install the 'postgresql' package"
    fi
  fi
  if [[ "$which" != postgres ]]; then
    mariadbd=$(find_mariadbd)
    need_command mariadb-install-db mariadb-server
    need_command mariadb-admin mariadb-client
    need_command mariadb mariadb-client
  fi
}

start_failed_cleanup() {
  # Leave no server running behind a failed start; keep DIR and its logs to read.
  local status=$?
  ((status == 0)) && return
  if [[ -n "${my_install_pid:-}" ]]; then wait "$my_install_pid" 2>/dev/null || true; fi
  pg_stop_server || true
  my_stop_server || true
  note "start failed; logs are in $dir (remove it with: $0 stop $dir)"
}

prepare_dir() {
  if [[ -e "$dir" ]]; then
    [[ -d "$dir" ]] || die "$dir exists and is not a directory"
    [[ -f "$marker" ]] && die "$dir already holds test servers; run '$0 stop $dir' first"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir is not empty; give a new or empty directory"
  fi
  mkdir -p "$dir"
  touch "$marker"
  # mktemp -d makes 0700 folders; postgres (another user) must be able to enter DIR.
  chmod 755 "$dir"
  if [[ -n "${LEDGER_TEST_SERVERS_TLS_DIR:-}" ]]; then
    local file
    for file in ca.crt server.crt server.key; do
      [[ -f "$LEDGER_TEST_SERVERS_TLS_DIR/$file" ]] ||
        die "LEDGER_TEST_SERVERS_TLS_DIR=$LEDGER_TEST_SERVERS_TLS_DIR has no $file"
    done
    mkdir -p "$tls_dir"
    cp "$LEDGER_TEST_SERVERS_TLS_DIR/ca.crt" "$LEDGER_TEST_SERVERS_TLS_DIR/server.crt" \
      "$LEDGER_TEST_SERVERS_TLS_DIR/server.key" "$tls_dir/"
    chmod 600 "$tls_dir/server.key"
  fi
  if [[ "${LEDGER_TEST_SERVERS_NO_TLS:-}" == 1 ]]; then
    [[ -z "${LEDGER_TEST_SERVERS_TLS_DIR:-}" ]] ||
      die "LEDGER_TEST_SERVERS_NO_TLS=1 and LEDGER_TEST_SERVERS_TLS_DIR exclude each other"
    touch "$no_tls_file"  # restarts keep it
  fi
}

pg_create_database() {
  # FILE_COPY (PostgreSQL 15+) is ~0.2 s faster than the default WAL_LOG copy.
  pg_psql -d postgres <<EOF || die "could not create database $database in PostgreSQL"
SELECT current_setting('server_version_num')::int >= 150000 AS has_strategy \gset
\if :has_strategy
CREATE DATABASE $database STRATEGY file_copy;
\else
CREATE DATABASE $database;
\endif
EOF
}

# Starts "both" servers, or "postgres" or "mysql" alone; DIR/env names those started.
cmd_start() {
  local which="$1"
  shift
  set_paths "$@"
  check_binaries "$which"
  prepare_dir
  trap start_failed_cleanup EXIT

  local started=$SECONDS
  if [[ "$which" != postgres ]]; then
    my_install &
    my_install_pid=$!
  fi
  if [[ "$which" != mysql ]]; then pg_init_and_start; fi
  if [[ "$which" != postgres ]]; then
    if ! wait "$my_install_pid"; then
      my_install_pid=""
      log_tail "$my_dir/install.log"
      die "mariadb-install-db failed"
    fi
    my_install_pid=""
    my_start_new
  fi

  : >"$env_file"
  if [[ "$which" != mysql ]]; then
    pg_create_database
    echo "export LEDGER_TEST_POSTGRES_DSN=postgresql://postgres@127.0.0.1:$(cat "$pg_port_file")/$database" >>"$env_file"
  fi
  if [[ "$which" != postgres ]]; then
    my_client -e "CREATE DATABASE $database" ||
      die "could not create database $database in MariaDB"
    echo "export LEDGER_TEST_MYSQL_DSN=mysql://root@127.0.0.1:$(cat "$my_port_file")/$database" >>"$env_file"
  fi
  echo "export LEDGER_TEST_SERVERS_DIR=$dir" >>"$env_file"
  trap - EXIT
  cat "$env_file"
  note "started ($which) in $((SECONDS - started))s: $(grep -o '127.0.0.1:[0-9]*' "$env_file" | tr '\n' ' ')"
}

cmd_stop() {
  set_paths "$@"
  if [[ ! -e "$dir" ]]; then
    note "$dir does not exist; nothing to stop"
    return 0
  fi
  [[ -f "$marker" ]] || die "$dir was not made by '$0 start' (no $marker_name); not touching it"
  # Binaries may be gone (package removed); stopping still works through signals.
  pg_bin=$(find_pg_bin 2>/dev/null || echo /nonexistent)
  pg_stop_server
  my_stop_server
  rm -rf -- "$dir"
  note "stopped and removed $dir"
}

require_started() {
  [[ -f "$marker" ]] || die "$dir holds no test servers; run '$0 start $dir' first"
}

cmd_restart_postgres() {
  set_paths "$@"
  require_started
  pg_bin=$(find_pg_bin)
  [[ -f "$pg_port_file" && -d "$pg_data" ]] || die "no PostgreSQL data in $dir"
  pg_stop_server
  if ! pg_start_server; then
    log_tail "$pg_log"
    die "PostgreSQL failed to restart on port $(cat "$pg_port_file") (waited at most ${timeout}s)"
  fi
  note "PostgreSQL restarted on 127.0.0.1:$(cat "$pg_port_file")"
}

cmd_restart_mysql() {
  set_paths "$@"
  require_started
  mariadbd=$(find_mariadbd)
  [[ -f "$my_port_file" && -d "$my_data" ]] || die "no MariaDB data in $dir"
  my_stop_server
  if ! my_start_server; then
    my_stop_server
    log_tail "$my_log"
    die "MariaDB failed to restart on port $(cat "$my_port_file") (waited at most ${timeout}s)"
  fi
  note "MariaDB restarted on 127.0.0.1:$(cat "$my_port_file")"
}

main() {
  (($# >= 1)) || usage
  local command="$1"
  shift
  (($# == 1)) || usage
  # Resolve DIR before leaving the caller's directory: commands run as postgres fail
  # when the current directory is one they cannot enter (e.g. /root).
  local target
  target=$(realpath -m -- "$1")
  cd /
  case "$command" in
    start) cmd_start both "$target" ;;
    start-postgres) cmd_start postgres "$target" ;;
    start-mysql) cmd_start mysql "$target" ;;
    stop) cmd_stop "$target" ;;
    restart-postgres) cmd_restart_postgres "$target" ;;
    restart-mysql) cmd_restart_mysql "$target" ;;
    *) usage ;;
  esac
}

main "$@"
