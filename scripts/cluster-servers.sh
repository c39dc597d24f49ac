#!/usr/bin/env bash
# Throwaway replicated database setups on loopback, for the cluster tests (ctest label
# `cluster`), the benchmarks of docs/scaling.md, and trying the ledger on them by hand:
#
#   cluster-servers.sh start DIR                 both setups below, side by side
#   cluster-servers.sh start-patroni DIR         PostgreSQL under Patroni only
#   cluster-servers.sh start-galera DIR          MariaDB Galera only
#   cluster-servers.sh start-node DIR NODE       start one node again after a test killed
#                                                it (pg1, pg2, galera1, galera2, galera3)
#   cluster-servers.sh stop DIR                  stop everything started there, remove DIR
#   cluster-servers.sh patroni-leader DIR        print the Patroni leader once Patroni counts
#                                                the other node as its synchronous standby
#   cluster-servers.sh patroni-maintenance DIR on|off
#                                                Patroni's maintenance mode (pause): while on,
#                                                no failover, and a paused replay stays paused
#
# Patroni: two PostgreSQL nodes (pg1, pg2) managed by Patroni with its Raft DCS, plus a
# third Raft voter holding no database (patroni_raft_controller), so that either node
# dying leaves a Raft quorum that can promote the other. synchronous_mode is on:
# Patroni names the standby in synchronous_standby_names, synchronous_commit is on,
# and it only ever promotes that synchronous standby. Either node may come up as the
# leader; start waits until there is one leader and one synchronous standby.
# Galera: three MariaDB nodes with the galera-4 provider, all accepting writes.
#
# DIR/env exports (each a URL the ledger takes; database ledger_test):
#   LEDGER_TEST_PATRONI_DSN        postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/ledger_test
#                                  ?target_session_attrs=read-write&connect_timeout=2
#   LEDGER_TEST_PATRONI_PG1_DSN, LEDGER_TEST_PATRONI_PG2_DSN   one node each
#   LEDGER_TEST_GALERA1_DSN .. LEDGER_TEST_GALERA3_DSN         mysql://root@127.0.0.1:P/ledger_test
#   LEDGER_TEST_CLUSTER_DIR        DIR
# and DIR/<node>/ holds each node's pid file (pg: patroni.pid and data/postmaster.pid;
# galera: mysqld.pid), log and data, for tests that kill or freeze one.
#
# Every wait is bounded by LEDGER_CLUSTER_SERVERS_TIMEOUT (seconds, default 120); stop
# thaws (SIGCONT) and stops every process start left, SIGKILL as the last resort.
set -euo pipefail

readonly prog="cluster-servers"
readonly timeout="${LEDGER_CLUSTER_SERVERS_TIMEOUT:-120}"
readonly database="ledger_test"
readonly marker_name=".ledger-cluster-servers"
readonly galera_provider="${LEDGER_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"

die() {
  echo "$prog: error: $*" >&2
  exit 1
}

note() {
  echo "$prog: $*" >&2
}

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

is_root() {
  [[ $(id -u) -eq 0 ]]
}

# PostgreSQL (and so Patroni, which runs initdb and the postmaster) refuses root.
as_pg() {
  if is_root; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

find_pg_bin() {
  local candidate newest=""
  while IFS= read -r candidate; do
    [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]] && newest="$candidate"
  done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -V)
  [[ -n "$newest" ]] || die "PostgreSQL server binaries not found; install 'postgresql' (scripts/install-deps.sh does)"
  echo "$newest"
}

need_command() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found; install the '$2' package (scripts/install-deps.sh does)"
}

# Free loopback ports: the kernel hands out port 0. All asked for at once, so the ports
# of one start are distinct; another process may still take one before a node binds.
free_ports() {
  /usr/bin/python3 - "$1" <<'EOF'
import socket, sys
sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
}

pid_alive() {
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true)
  [[ "$state" != "Z" ]]
}

# True when pid is alive and its command line or working directory names `path`, so a
# stale pid reused by an unrelated process is never signalled.
pid_is_ours() {
  local pid="$1" path="$2" cwd cmdline
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  pid_alive "$pid" || return 1
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null || true)
  [[ "$cwd" == "$path"* ]] && return 0
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)
  [[ "$cmdline" == *"$path"* ]]
}

# SIGCONT (a test may have frozen it), then `signal`, then a bounded wait; SIGKILL last.
stop_pid() {
  local pid="$1" path="$2" signal="$3" what="$4" deadline
  pid_is_ours "$pid" "$path" || return 0
  kill -CONT "$pid" 2>/dev/null || true
  kill "-$signal" "$pid" 2>/dev/null || true
  deadline=$((SECONDS + timeout))
  while pid_alive "$pid"; do
    if ((SECONDS >= deadline)); then
      note "$what (pid $pid) still running after ${timeout}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
      return 0
    fi
    sleep 0.1
  done
}

log_tail() {
  if [[ -f "$1" ]]; then
    echo "---- last lines of $1 ----" >&2
    tail -n 40 "$1" >&2 || true
    echo "----" >&2
  fi
}

set_paths() {
  [[ -n "${1:-}" ]] || usage
  dir=$(realpath -m -- "$1")
  [[ "$dir" != "/" ]] || die "refusing to use / as DIR"
  [[ "$dir" =~ ^[A-Za-z0-9._/+-]+$ ]] || die "DIR must only contain letters, digits and ._/+- (got '$dir')"
  ((${#dir} <= 70)) || die "DIR path too long for unix sockets: $dir"
  marker="$dir/$marker_name"
  env_file="$dir/env"
}

prepare_dir() {
  if [[ -e "$dir" ]]; then
    [[ -d "$dir" ]] || die "$dir exists and is not a directory"
    [[ -f "$marker" ]] && die "$dir already holds a cluster; run '$0 stop $dir' first"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir is not empty; give a new or empty directory"
  fi
  mkdir -p "$dir"
  touch "$marker"
  chmod 755 "$dir"  # user postgres must enter it
  : >"$env_file"
}

wait_until() {
  local what="$1" deadline=$((SECONDS + timeout))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || { note "gave up waiting for $what after ${timeout}s"; return 1; }
    sleep 0.2
  done
}

# ---------------------------------------------------------------- Patroni

pg_node_dir() { echo "$dir/$1"; }

# Writes DIR/<node>/patroni.yml. Arguments: node, its postgres/rest/raft ports, the raft
# ports of the two other voters.
patroni_write_config() {
  local node="$1" pg_port="$2" rest_port="$3" raft_port="$4" partner_a="$5" partner_b="$6"
  local node_dir
  node_dir=$(pg_node_dir "$node")
  mkdir -p "$node_dir/raft"
  # ttl 8 s, loop_wait 1 s, retry_timeout 3 s (Patroni wants loop_wait + 2 * retry_timeout
  # <= ttl): a dead leader's key expires after at most 8 s, and the standby looks every
  # second. Shorter would trade false failovers on a busy 2-core machine for speed.
  cat >"$node_dir/patroni.yml" <<EOF
scope: ledger
name: $node
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$rest_port
  connect_address: 127.0.0.1:$rest_port
raft:
  data_dir: $node_dir/raft
  self_addr: 127.0.0.1:$raft_port
  partner_addrs: ['127.0.0.1:$partner_a', '127.0.0.1:$partner_b']
bootstrap:
  dcs:
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        synchronous_commit: 'on'
        max_connections: 200
        wal_keep_size: 128MB
        fsync: 'on'
  initdb:
    - encoding: UTF8
    - auth: trust
    - no-locale
    - no-sync
  pg_hba:
    - local all all trust
    - host replication postgres 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  data_dir: $node_dir/data
  bin_dir: $pg_bin
  pgpass: $node_dir/pgpass
  # A node that was primary and holds WAL the new primary never had (a commit flushed
  # locally, never acknowledged: synchronous_mode) is rewound to the new timeline; when
  # that cannot be done, its data is taken anew from the primary. It never comes back
  # with its own history.
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    replication:
      username: postgres
    superuser:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: '$node_dir'
watchdog:
  mode: off
tags:
  nofailover: false
EOF
  echo "$pg_port" >"$node_dir/pg.port"
  echo "$rest_port" >"$node_dir/rest.port"
}

# Starts Patroni (or the Raft witness) for `node` in the background, as user postgres;
# setpriv execs, so $! is the Patroni process itself (the one a test kills).
patroni_launch() {
  local node="$1" program="$2" node_dir
  node_dir=$(pg_node_dir "$node")
  if is_root; then
    chown -R postgres:postgres "$node_dir"
    (cd "$node_dir" && exec setsid setpriv --reuid=postgres --regid=postgres --init-groups \
      env HOME="$node_dir" "$program" "$node_dir/patroni.yml" </dev/null >>"$node_dir/patroni.log" 2>&1) &
  else
    (cd "$node_dir" && exec setsid "$program" "$node_dir/patroni.yml" </dev/null >>"$node_dir/patroni.log" 2>&1) &
  fi
  echo "$!" >"$node_dir/patroni.pid"
}

pg_sql() {  # node, then psql arguments
  local port
  port=$(cat "$(pg_node_dir "$1")/pg.port")
  shift
  "$pg_bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "SET statement_timeout = '5s'" "$@" 2>/dev/null
}

# The leader, when Patroni itself counts the other node as its synchronous standby
# (GET /cluster: roles leader and sync_standby, both running). PostgreSQL reports the
# standby as sync a loop before Patroni writes it to the DCS; a leader lost in between
# is not failed over (Patroni cannot know the standby has every commit), so the pair is
# healthy only once Patroni says so.
patroni_leader_with_sync_standby() {
  local node port
  for node in pg1 pg2; do
    port=$(cat "$(pg_node_dir "$node")/rest.port" 2>/dev/null) || continue
    /usr/bin/python3 - "$port" 2>/dev/null <<'EOF' && return 0
import json, sys, urllib.request
members = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/cluster", timeout=2))["members"]
roles = {m["role"]: m for m in members if m.get("state") in ("running", "streaming")}
if "leader" in roles and "sync_standby" in roles:
    print(roles["leader"]["name"])
    sys.exit(0)
sys.exit(1)
EOF
  done
  return 1
}

# Patroni's maintenance mode ("pause" in its dynamic configuration), set through one
# member's REST API (PATCH /config); returns once both members' GET /patroni report it,
# i.e. each has run a loop that read it. While on, Patroni fails nothing over and leaves
# a standby's WAL replay as it is: otherwise Patroni 3 (PostgreSQL 14+) resumes a paused
# replay at its next loop (handle_parameter_change), within loop_wait (1 s).
patroni_maintenance() {
  local wanted="$1" node port patched=""
  [[ "$wanted" == on || "$wanted" == off ]] || die "patroni-maintenance: on or off, not '$wanted'"
  for node in pg1 pg2; do
    port=$(cat "$(pg_node_dir "$node")/rest.port" 2>/dev/null) || continue
    /usr/bin/python3 - "$port" "$wanted" 2>/dev/null <<'EOF' && { patched=$node; break; }
import json, sys, urllib.request
body = json.dumps({"pause": sys.argv[2] == "on"}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/config", data=body,
                                 method="PATCH", headers={"Content-Type": "application/json"})
urllib.request.urlopen(request, timeout=5).read()
EOF
  done
  [[ -n "$patched" ]] || die "patroni-maintenance: no member took PATCH /config"
  wait_until "both Patroni members to report maintenance mode $wanted" \
    patroni_reports_maintenance "$wanted"
}

patroni_reports_maintenance() {
  local wanted="$1" node port
  for node in pg1 pg2; do
    port=$(cat "$(pg_node_dir "$node")/rest.port") || return 1
    /usr/bin/python3 - "$port" "$wanted" 2>/dev/null <<'EOF' || return 1
import json, sys, urllib.request
state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/patroni", timeout=2))
sys.exit(0 if state.get("pause", False) == (sys.argv[2] == "on") else 1)
EOF
  done
}

patroni_ready() {
  local node
  for node in pg1 pg2 witness; do
    pid_alive "$(cat "$(pg_node_dir "$node")/patroni.pid")" || {
      note "patroni $node exited"
      log_tail "$(pg_node_dir "$node")/patroni.log"
      exit 1
    }
  done
  patroni_leader_with_sync_standby >/dev/null
}

patroni_start() {
  pg_bin=$(find_pg_bin)
  need_command patroni patroni
  need_command patroni_raft_controller patroni
  need_command setpriv util-linux
  /usr/bin/python3 -c 'import pysyncobj, psycopg2' 2>/dev/null ||
    die "python3-pysyncobj or python3-psycopg2 missing (scripts/install-deps.sh installs them)"
  if is_root; then id postgres >/dev/null 2>&1 || die "user 'postgres' missing; install 'postgresql'"; fi
  local ports
  read -r -a ports <<<"$(free_ports 8)"
  # pg1: 0 1 2, pg2: 3 4 5, witness raft 6 (7 spare)
  patroni_write_config pg1 "${ports[0]}" "${ports[1]}" "${ports[2]}" "${ports[5]}" "${ports[6]}"
  patroni_write_config pg2 "${ports[3]}" "${ports[4]}" "${ports[5]}" "${ports[2]}" "${ports[6]}"
  local witness_dir="$dir/witness"
  mkdir -p "$witness_dir/raft"
  cat >"$witness_dir/patroni.yml" <<EOF
raft:
  data_dir: $witness_dir/raft
  self_addr: 127.0.0.1:${ports[6]}
  partner_addrs: ['127.0.0.1:${ports[2]}', '127.0.0.1:${ports[5]}']
EOF
  patroni_launch witness patroni_raft_controller
  patroni_launch pg1 patroni
  patroni_launch pg2 patroni
  if ! wait_until "a Patroni leader with a synchronous standby" patroni_ready; then
    log_tail "$dir/pg1/patroni.log"
    log_tail "$dir/pg2/patroni.log"
    die "Patroni did not come up (waited at most ${timeout}s)"
  fi
  local leader
  leader=$(patroni_leader_with_sync_standby)
  pg_sql "$leader" -c "CREATE DATABASE $database" || die "could not create $database on $leader"
  local p1 p2
  p1=$(cat "$dir/pg1/pg.port")
  p2=$(cat "$dir/pg2/pg.port")
  {
    echo "export LEDGER_TEST_PATRONI_DSN='postgresql://postgres@127.0.0.1:$p1,127.0.0.1:$p2/$database?target_session_attrs=read-write&connect_timeout=2'"
    echo "export LEDGER_TEST_PATRONI_PG1_DSN=postgresql://postgres@127.0.0.1:$p1/$database"
    echo "export LEDGER_TEST_PATRONI_PG2_DSN=postgresql://postgres@127.0.0.1:$p2/$database"
  } >>"$env_file"
  note "patroni: $leader leads, the other node is its synchronous standby"
}

patroni_stop_node() {
  local node="$1" node_dir pid
  node_dir=$(pg_node_dir "$node")
  [[ -d "$node_dir" ]] || return 0
  # Patroni stops its PostgreSQL on SIGTERM; a killed Patroni leaves it to us.
  stop_pid "$(cat "$node_dir/patroni.pid" 2>/dev/null || true)" "$node_dir" TERM "patroni $node"
  if [[ -f "$node_dir/data/postmaster.pid" ]]; then
    pid=$(head -n 1 "$node_dir/data/postmaster.pid" 2>/dev/null || true)
    stop_pid "$pid" "$node_dir/data" INT "postgres $node"  # SIGINT: fast shutdown
  fi
  # What Patroni ran and left behind when it was killed: a pg_rewind, a pg_basebackup, an
  # initdb working on this node's folder (named on their command lines).
  for pid in $(pgrep -f -- "$node_dir/" || true); do
    [[ "$pid" != "$$" ]] && stop_pid "$pid" "$node_dir/" TERM "a helper of patroni $node"
  done
}

# ---------------------------------------------------------------- Galera

find_mariadbd() {
  local candidate
  for candidate in /usr/sbin/mariadbd /usr/sbin/mysqld; do
    [[ -x "$candidate" ]] && { echo "$candidate"; return; }
  done
  die "mariadbd not found; install 'mariadb-server' (scripts/install-deps.sh does)"
}

# As root, the nodes run as user mysql: the rsync daemon of a state transfer, started
# by a root mariadbd, would drop to user nobody and could not write the data directory.
galera_user_args() {
  if is_root; then echo "--user=mysql"; fi
}

# Ports of node n (1..3) as written at start: sql group ist sst.
galera_ports() {
  cat "$dir/galera$1/ports"
}

# Launches mariadbd for node n; extra arguments follow (--wsrep-new-cluster).
galera_launch() {
  local n="$1" node_dir="$dir/galera$1" sql group ist sst
  shift
  read -r sql group ist sst <<<"$(galera_ports "$n")"
  local members="" m m_group
  for m in 1 2 3; do
    read -r _ m_group _ _ <<<"$(galera_ports "$m")"
    members+="${members:+,}127.0.0.1:$m_group"
  done
  rm -f "$node_dir/mysqld.pid"
  mkdir -p "$node_dir/tmp"
  if is_root; then chown -R mysql:mysql "$node_dir"; fi
  # evs timeouts: a frozen or dead node leaves the primary component after about 3 to
  # 6 s instead of 5 to 15 (the defaults), so a test's quorum resumes sooner.
  # gcs.fc_limit 256 (default 16): with 16, losing a node under load (SIGKILL, SIGSTOP)
  # sometimes left the two remaining nodes flow-control paused for 30 to 45 s (no
  # seqno ordered, wsrep_flow_control_paused 0.55 to 0.68, a local commit 'Waiting
  # for certification'), until one of them desynced as the restarted node's donor.
  # shellcheck disable=SC2046
  setsid "$mariadbd" --no-defaults --datadir="$node_dir/data" --tmpdir="$node_dir/tmp" $(galera_user_args) \
    --socket="$node_dir/mysqld.sock" --pid-file="$node_dir/mysqld.pid" --log-error="$node_dir/error.log" \
    --port="$sql" --bind-address=127.0.0.1 --skip-name-resolve \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --max-connections=300 \
    --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
    --binlog-format=ROW --default-storage-engine=InnoDB --innodb-autoinc-lock-mode=2 \
    --wsrep-on=ON --wsrep-provider="$galera_provider" --wsrep-cluster-name=ledger \
    --wsrep-cluster-address="gcomm://$members" --wsrep-node-name="galera$n" \
    --wsrep-node-address="127.0.0.1:$group" --wsrep-node-incoming-address="127.0.0.1:$sql" \
    --wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$sst" \
    --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$group;ist.recv_addr=127.0.0.1:$ist;gcache.size=64M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;pc.wait_prim_timeout=PT30S;gcs.fc_limit=256" \
    --wsrep-slave-threads=2 --wsrep-sync-wait=1 "$@" </dev/null >/dev/null 2>&1 &
  echo "$!" >"$node_dir/launch.pid"
}

galera_sql() {  # node n, then client arguments
  local n="$1"
  shift
  mariadb --no-defaults --connect-timeout=2 --socket="$dir/galera$n/mysqld.sock" -uroot -N -B "$@" 2>/dev/null
}

galera_pid() {
  local n="$1" file pid
  for file in "$dir/galera$n/mysqld.pid" "$dir/galera$n/launch.pid"; do
    pid=$(cat "$file" 2>/dev/null || true)
    if pid_is_ours "$pid" "$dir/galera$n/data"; then
      echo "$pid"
      return 0
    fi
  done
  return 1
}

galera_synced() {
  local n="$1"
  galera_pid "$n" >/dev/null || {
    note "mariadbd galera$n exited"
    log_tail "$dir/galera$n/error.log"
    exit 1
  }
  [[ "$(galera_sql "$n" -e "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2)" == Synced ]]
}

galera_all_synced() {
  galera_synced 1 && galera_synced 2 && galera_synced 3 &&
    [[ "$(galera_sql 1 -e "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)" == 3 ]]
}

galera_stop_node() {
  local n="$1" pid
  pid=$(galera_pid "$n") || return 0
  stop_pid "$pid" "$dir/galera$n/data" TERM "mariadbd galera$n"
}

# Node 1 bootstraps a new cluster once, makes the database and stops cleanly; its data
# directory (now carrying the cluster's state UUID and seqno) is copied to nodes 2 and
# 3, so when all three start they join by IST with nothing to send, not by a full SST.
galera_start() {
  mariadbd=$(find_mariadbd)
  need_command mariadb-install-db mariadb-server
  need_command mariadb mariadb-client
  need_command rsync rsync
  if is_root; then id mysql >/dev/null 2>&1 || die "user 'mysql' missing; install 'mariadb-server'"; fi
  [[ -f "$galera_provider" ]] || die "$galera_provider missing; install 'galera-4' (scripts/install-deps.sh does)"
  local ports n
  read -r -a ports <<<"$(free_ports 12)"
  for n in 1 2 3; do
    mkdir -p "$dir/galera$n"
    echo "${ports[@]:$(((n - 1) * 4)):4}" >"$dir/galera$n/ports"
  done
  # Each node has a temporary directory of its own: servers bootstrapping at once in the
  # shared /tmp once failed with "Error on delete of '/tmp/#sql-temptable-...MAI'".
  for n in 1 2 3; do mkdir -p "$dir/galera$n/tmp"; done
  if is_root; then chown mysql:mysql "$dir/galera1/tmp"; fi
  # shellcheck disable=SC2046
  mariadb-install-db --no-defaults --datadir="$dir/galera1/data" --tmpdir="$dir/galera1/tmp" $(galera_user_args) \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/galera1/install.log" 2>&1 ||
    { log_tail "$dir/galera1/install.log"; die "mariadb-install-db failed"; }
  galera_launch 1 --wsrep-new-cluster
  wait_until "galera1 to bootstrap" galera_synced 1 || { log_tail "$dir/galera1/error.log"; die "galera1 did not bootstrap"; }
  galera_sql 1 -e "CREATE DATABASE $database" || die "could not create $database on galera1"
  galera_stop_node 1
  grep -q 'safe_to_bootstrap: 1' "$dir/galera1/data/grastate.dat" ||
    { log_tail "$dir/galera1/error.log"; die "galera1 did not stop cleanly"; }
  for n in 2 3; do
    cp -a "$dir/galera1/data" "$dir/galera$n/"
    rm -f "$dir/galera$n/data/galera.cache" "$dir/galera$n/data/gvwstate.dat"
    sed -i 's/^safe_to_bootstrap: 1/safe_to_bootstrap: 0/' "$dir/galera$n/data/grastate.dat"
  done
  galera_launch 1 --wsrep-new-cluster
  wait_until "galera1 to bootstrap again" galera_synced 1 || { log_tail "$dir/galera1/error.log"; die "galera1 did not restart"; }
  galera_launch 2
  galera_launch 3
  if ! wait_until "three synced Galera nodes" galera_all_synced; then
    for n in 1 2 3; do log_tail "$dir/galera$n/error.log"; done
    die "Galera did not come up (waited at most ${timeout}s)"
  fi
  for n in 1 2 3; do
    echo "export LEDGER_TEST_GALERA${n}_DSN=mysql://root@127.0.0.1:$(cut -d' ' -f1 "$dir/galera$n/ports")/$database" >>"$env_file"
  done
  note "galera: three nodes synced"
}

# ---------------------------------------------------------------- subcommands

# Every node stops at once (each stop is a bounded wait of its own).
stop_all() {
  local jobs=() node n
  for node in pg1 pg2 witness; do
    patroni_stop_node "$node" &
    jobs+=($!)
  done
  for n in 1 2 3; do
    galera_stop_node "$n" &
    jobs+=($!)
  done
  for node in "${jobs[@]}"; do wait "$node" || true; done
}

start_failed_cleanup() {
  local status=$?
  ((status == 0)) && return
  if [[ -n "${galera_job:-}" ]]; then wait "$galera_job" 2>/dev/null || true; fi
  stop_all || true
  note "start failed; logs are in $dir (remove it with: $0 stop $dir)"
}

cmd_start() {
  local which="$1"
  set_paths "$2"
  prepare_dir
  trap start_failed_cleanup EXIT
  local started=$SECONDS
  # The two setups start side by side: each mostly waits (Raft elections, joins).
  galera_job=""
  if [[ "$which" != patroni ]]; then
    if [[ "$which" == both ]]; then
      (galera_start) &
      galera_job=$!
    else
      galera_start
    fi
  fi
  if [[ "$which" != galera ]]; then patroni_start; fi
  if [[ -n "$galera_job" ]]; then wait "$galera_job" || die "Galera did not start"; fi
  echo "export LEDGER_TEST_CLUSTER_DIR=$dir" >>"$env_file"
  trap - EXIT
  cat "$env_file"
  note "started ($which) in $((SECONDS - started))s"
}

cmd_start_node() {
  set_paths "$1"
  [[ -f "$marker" ]] || die "$dir holds no cluster"
  local node="$2"
  case "$node" in
    pg1 | pg2)
      pg_bin=$(find_pg_bin)
      if pid_is_ours "$(cat "$dir/$node/patroni.pid" 2>/dev/null || true)" "$dir/$node"; then
        note "$node: Patroni still runs (it was frozen, not killed); it rejoins by itself"
        return 0
      fi
      patroni_stop_node "$node"  # whatever a kill left (a postmaster without its Patroni)
      patroni_launch "$node" patroni
      ;;
    galera1 | galera2 | galera3)
      mariadbd=$(find_mariadbd)
      local n=${node#galera}
      galera_stop_node "$n"
      galera_launch "$n"
      wait_until "$node to rejoin" galera_synced "$n" || { log_tail "$dir/$node/error.log"; die "$node did not rejoin"; }
      ;;
    *) die "unknown node '$node' (pg1, pg2, galera1, galera2, galera3)" ;;
  esac
  note "$node started"
}

cmd_stop() {
  set_paths "$1"
  if [[ ! -e "$dir" ]]; then
    note "$dir does not exist; nothing to stop"
    return 0
  fi
  [[ -f "$marker" ]] || die "$dir was not made by '$0 start' (no $marker_name); not touching it"
  stop_all
  rm -rf -- "$dir"
  note "stopped and removed $dir"
}

main() {
  (($# >= 2)) || usage
  local command="$1" target
  target=$(realpath -m -- "$2")
  cd /
  case "$command" in
    start) (($# == 2)) || usage; cmd_start both "$target" ;;
    start-patroni) (($# == 2)) || usage; cmd_start patroni "$target" ;;
    start-galera) (($# == 2)) || usage; cmd_start galera "$target" ;;
    start-node) (($# == 3)) || usage; cmd_start_node "$target" "$3" ;;
    stop) (($# == 2)) || usage; cmd_stop "$target" ;;
    patroni-leader)
      (($# == 2)) || usage
      set_paths "$target"
      patroni_leader_with_sync_standby
      ;;
    patroni-maintenance)
      (($# == 3)) || usage
      set_paths "$target"
      patroni_maintenance "$3"
      ;;
    *) usage ;;
  esac
}

main "$@"
