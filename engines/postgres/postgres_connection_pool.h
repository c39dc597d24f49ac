// The PostgreSQL engine's connection pool: the shared pool
// (engines/common/connection_pool.h) over PostgresSession, with PostgreSQL's hooks.
//
//   LEDGER_ASSIGN_OR_RETURN(auto pool, CreatePostgresConnectionPool(
//       "postgresql://app@db/ledger", 16, absl::Seconds(10), waits, SetUpSession));
//   LEDGER_ASSIGN_OR_RETURN(PooledConnection lease, pool->Acquire());
//   lease->connection().prepare(...);  // used by the holding thread only
//
// A connection attempt is bounded as a whole by the pool's connect_timeout (libpq's own
// counts per host, per address and per step). A lease discarded by the engine (its connection lost, or in an unknown state), or
// whose connection closed under it, is closed on return instead of being reused. An
// idle session the server terminated meanwhile is noticed (without a round trip)
// before it is lent again, and replaced. Every session runs with the pool's waits
// (lock_timeout, statement_timeout) and every round trip on it under a reply deadline
// (GuardRoundTrip).
//
// Internal to engines/postgres. Thread-safe; a lease belongs to one thread at a time.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/common/connection_pool.h"
#include "engines/common/standalone.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_reply_watchdog.h"
#include "pqxx/connection"
#include "pqxx/connection_base"

typedef struct pg_conn PGconn;  // libpq-fe.h

namespace ledger::postgres_internal {

// The waits every session of a pool is set up with (PostgresOptions).
struct PostgresSessionWaits {
  absl::Duration connect_timeout;    // a connection attempt, as a whole (BoundedConnection)
  absl::Duration account_lock_wait;  // the session's lock_timeout
  absl::Duration statement_timeout;  // the session's statement_timeout
  absl::Duration read_timeout;       // each round trip's reply deadline (ReplyWatchdog)
};

// A file descriptor this process owns; closed on destruction. Move-only.
class OwnedSocket {
 public:
  OwnedSocket() = default;
  explicit OwnedSocket(int descriptor) : descriptor_(descriptor) {}
  OwnedSocket(OwnedSocket&& other) noexcept : descriptor_(std::exchange(other.descriptor_, -1)) {}
  OwnedSocket& operator=(OwnedSocket&& other) noexcept;
  ~OwnedSocket();
  int get() const { return descriptor_; }

 private:
  int descriptor_ = -1;
};

// libpq's connection, opened under one deadline: libpq's connect_timeout applies per
// host and address (and restarts with each), so five silent hosts take five of it. This
// one drives libpq's non-blocking connect (PQconnectStart, PQconnectPoll) and gives up
// when `timeout` has passed since it started, whatever step it is in (TCP, TLS,
// authentication): pqxx::broken_connection ("timeout expired", for each host).
// Otherwise a pqxx::connection.
//
// A host list (`host=a,b`, postgresql://h1:p1,h2:p2/..., as after a failover) is tried
// host by host, in order, each with its share of what is left of `timeout` (left /
// hosts not yet tried): a frozen old primary costs each attempt at most that share and
// the next host (the new primary) is still reached, where libpq, driven without its
// own timer, would wait on the frozen host until the whole attempt ran out. A host
// refused at once (dead) or not read-write under target_session_attrs=read-write (a
// standby) leaves its share to the ones after it.
class BoundedConnection : public pqxx::connection_base {
 public:
  BoundedConnection(const std::string& options, absl::Duration timeout);
  ~BoundedConnection() noexcept { close(); }
  BoundedConnection(const BoundedConnection&) = delete;
  BoundedConnection& operator=(const BoundedConnection&) = delete;

  // libpq's connection beneath libpqxx, for what libpqxx 6.4 has no call for (pipeline
  // mode: postgres_pipeline.h); null once the connection is not open. Used by
  // the thread holding the session, between libpqxx's calls, leaving it idle again.
  PGconn* libpq();

 private:
  class Policy : public pqxx::connectionpolicy {
   public:
    Policy(const std::string& options, absl::Duration timeout)
        : pqxx::connectionpolicy(options), timeout_(timeout) {}
    handle do_startconnect(handle orig) override;
    handle started() const { return started_; }

   private:
    absl::Duration timeout_;
    handle started_ = nullptr;  // the connection do_startconnect made
  };
  Policy policy_;  // the base keeps a reference to it, made before it is built
};

// `connection_string` (key=value or URI) as one key=value string per host of its host
// list, each naming that host (and its hostaddr and port) with every other option kept.
// The string itself when it names one host, or lists libpq refuses (2 ports for 3
// hosts: libpq's connect says so). With target_session_attrs=prefer-standby, every host
// with target_session_attrs=standby, then every host with =any, as libpq orders it.
std::vector<std::string> ConnectionStringPerHost(const std::string& connection_string);

// The server process behind a session: its pid and start (microseconds since the
// epoch, as pg_stat_activity's backend_start), which together name it even after the pid
// is reused, and its server's start (pg_postmaster_start_time): another server (a
// replica promoted by a failover) never shows it, which proves nothing.
struct ServerBackend {
  int pid = 0;
  int64_t started_micros = 0;
  int64_t server_started_micros = 0;
};

// One server session and what was learned about it when it opened.
struct PostgresSession {
  pqxx::connection_base& connection() { return *handle; }

  // The reply deadline of one round trip on this session (inert without a watchdog).
  ReplyWatchdog::Armed ArmReplyDeadline() {
    if (watchdog == nullptr || reply_socket.get() < 0 ||
        read_timeout == absl::InfiniteDuration()) {
      return ReplyWatchdog::Armed();
    }
    return watchdog->Arm(reply_socket.get(), read_timeout);
  }

  std::unique_ptr<BoundedConnection> handle;
  // The session's lock_timeout (PostgresOptions::account_lock_wait): the claim
  // shortens it with SET LOCAL and puts this value back right after.
  std::string lock_timeout_default;
  // PostgresOptions::schema, set by the engine's session setup; empty: none.
  std::string schema;
  // The checked write statements libpq prepared on this session (past libpqxx, which
  // never sees them): postgres_pipeline.h.
  std::set<std::string, std::less<>> pipelined_statements;
  // How many of them are inline write shapes (WriteShape), each holding its row counts:
  // bounded by kInlineWriteShapesPerSessionMax.
  int inline_write_shapes = 0;
  // The server process this session talks to, when the connection reaches it directly:
  // known only when libpq's pid (from the server's BackendKeyData) is pg_backend_pid(),
  // which a pooler in between does not pass on. For EndServerBackend.
  std::optional<ServerBackend> backend;
  std::shared_ptr<ReplyWatchdog> watchdog;  // shared by the pool's sessions
  OwnedSocket reply_socket;  // a duplicate of libpq's socket, for the watchdog
  absl::Duration read_timeout = absl::InfiniteDuration();
};

// Runs one round trip on `session` (GuardPostgres) under the session's reply deadline.
// A call the deadline cut off fails as a lost connection that says so: Unavailable, or
// in doubt in the commit phase.
template <typename Body>
auto GuardRoundTrip(PostgresSession& session, const PostgresErrorContext& context, Body&& body)
    -> std::invoke_result_t<Body&> {
  ReplyWatchdog::Armed armed = session.ArmReplyDeadline();
  auto result = GuardPostgres(context, body);
  const bool cut_off = armed.Disarm();
  if (cut_off && !engine_common::StatusOf(result).ok()) {
    return NoReplyStatus(context, session.read_timeout);
  }
  return result;
}

// Ends `backend` (pg_terminate_backend), waiting at most `wait` for it to exit, from
// another session. True once it is gone: whatever its client sent it that it had not run
// will never run. False when it is still there, the server refuses (another role's
// process without pg_signal_backend), or `session` is on another server.
bool EndServerBackend(PostgresSession& session, const ServerBackend& backend,
                      absl::Duration wait);

// Whether an idle session still looks alive, read without a round trip: a termination
// notice the server sent meanwhile, or its end of the connection, is read now (and the
// connection then is not open).
bool SessionLooksAlive(PostgresSession& session);

// Called once on every new connection, e.g. to declare the prepared statements.
using SessionSetup = std::function<absl::Status(PostgresSession&)>;

using PostgresConnectionPool = engine_common::ConnectionPool<PostgresSession>;
using PooledConnection = PostgresConnectionPool::Lease;

// InvalidArgument for a bad size or wait. Opens no connection yet; starts the pool's
// reply watchdog.
absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> CreatePostgresConnectionPool(
    std::string connection_string, int size, absl::Duration acquire_wait,
    PostgresSessionWaits waits, SessionSetup setup);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_
