#include "engines/postgres/postgres_connection_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engines/common/waits.h"
#include "engines/postgres/postgres_errors.h"
#include "base/status.h"
#include "libpq-fe.h"
#include "pqxx/except"
#include "pqxx/nontransaction"

namespace ledger::postgres_internal {
namespace {

// libpqxx 6 silently reconnects a broken connection on its next use. A new session
// has none of the old one's transaction, so a COMMIT sent there would "succeed" on
// nothing: the engine must see the break, never a quiet reconnect.
void ForbidSilentReconnect(pqxx::connection_base& connection) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  connection.inhibit_reactivation(true);
#pragma GCC diagnostic pop
}

// An idle session has nothing to read. If its socket is readable, the server sent a
// termination notice and/or closed the connection (pg_terminate_backend, a restart):
// let libpq read it. libpq takes the notice as a warning and only the following
// end-of-file marks the connection bad, hence the loop. No round trip is spent on
// healthy sessions.
bool SessionLooksAlive(PostgresSession& session) {
  constexpr int kReadsMax = 4;
  pqxx::connection_base& connection = session.connection();
  for (int read = 0; read < kReadsMax; ++read) {
    if (!connection.is_open()) return false;
    pollfd readable{connection.sock(), POLLIN, 0};
    int ready = poll(&readable, 1, /*timeout=*/0);
    if (ready == 0) return true;
    if (ready < 0) return false;
    try {
      connection.get_notifs();
    } catch (...) {
      return false;
    }
  }
  return false;  // still readable after several reads: not an idle session we understand
}

// A server setting in milliseconds: "1500ms".
std::string Milliseconds(absl::Duration wait) {
  return absl::StrCat(engine_common::WholeMillisecondsRoundedUp(wait), "ms");
}

// Connects (bounded as a whole by `timeout`) and keeps a duplicate of the socket for
// the reply watchdog: libpq may close its own descriptor when the server goes away.
absl::Status Connect(const std::string& connection_string, absl::Duration timeout,
                     PostgresSession& session) {
  return GuardPostgres({.operation = "connect"}, [&]() -> absl::Status {
    session.handle = std::make_unique<BoundedConnection>(connection_string, timeout);
    ForbidSilentReconnect(session.connection());
    session.reply_socket = OwnedSocket(fcntl(session.connection().sock(), F_DUPFD_CLOEXEC, 0));
    if (session.reply_socket.get() < 0) {
      return absl::InternalError(absl::StrCat("postgres: connect: cannot duplicate the socket: ",
                                              std::strerror(errno)));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::unique_ptr<PostgresSession>> OpenSession(
    const std::string& connection_string, const PostgresSessionWaits& waits,
    const std::shared_ptr<ReplyWatchdog>& watchdog, const SessionSetup& setup) {
  auto session = std::make_unique<PostgresSession>();
  session->watchdog = watchdog;
  session->read_timeout = waits.read_timeout;
  LEDGER_RETURN_IF_ERROR(Connect(connection_string, waits.connect_timeout, *session));
  // The session's own waits; the claim's SET LOCAL lock_timeout returns to this value.
  session->lock_timeout_default = Milliseconds(waits.account_lock_wait);
  LEDGER_RETURN_IF_ERROR(
      GuardRoundTrip(*session, {.operation = "set the session's waits"}, [&]() -> absl::Status {
        pqxx::nontransaction work(session->connection());
        work.exec(absl::StrCat("SET lock_timeout = '", session->lock_timeout_default,
                               "'; SET statement_timeout = '",
                               Milliseconds(waits.statement_timeout), "'"));
        return absl::OkStatus();
      }));
  if (setup) LEDGER_RETURN_IF_ERROR(setup(*session));
  return session;
}

}  // namespace

BoundedConnection::BoundedConnection(const std::string& options, absl::Duration timeout)
    : pqxx::connection_base(policy_), policy_(options, timeout) {
  init();
}

pqxx::connectionpolicy::handle BoundedConnection::Policy::do_startconnect(handle orig) {
  if (orig != nullptr) return orig;
  const absl::Time deadline = absl::Now() + timeout_;
  PGconn* connection = PQconnectStart(options().c_str());
  if (connection == nullptr) throw std::bad_alloc();
  auto fail = [&](const std::string& message) {
    PQfinish(connection);
    throw pqxx::broken_connection(message);
  };
  // libpq's documented loop: wait until the socket is writable, then poll, and wait for
  // whatever each poll asks for. The socket changes when libpq moves to the next host.
  PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
  if (PQstatus(connection) == CONNECTION_BAD) fail(PQerrorMessage(connection));
  while (polling != PGRES_POLLING_OK) {
    if (polling == PGRES_POLLING_FAILED) fail(PQerrorMessage(connection));
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      fail(absl::StrCat("timeout expired: the connection attempt did not complete within "
                        "connect_timeout (", absl::FormatDuration(timeout_), ")"));
    }
    pollfd ready{PQsocket(connection),
                 static_cast<short>(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
    const int waited = ::poll(&ready, 1,
                              static_cast<int>(std::min<int64_t>(
                                  engine_common::WholeMillisecondsRoundedUp(left), 60'000)));
    if (waited < 0 && errno != EINTR) {
      fail(absl::StrCat("connect: poll: ", std::strerror(errno)));
    }
    if (waited <= 0) continue;  // the deadline is checked above
    polling = PQconnectPoll(connection);
  }
  return connection;
}

OwnedSocket& OwnedSocket::operator=(OwnedSocket&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
  }
  return *this;
}

OwnedSocket::~OwnedSocket() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> CreatePostgresConnectionPool(
    std::string connection_string, int size, absl::Duration acquire_wait,
    PostgresSessionWaits waits, SessionSetup setup) {
  engine_common::PoolHooks<PostgresSession> hooks;
  hooks.open = [connection_string = std::move(connection_string), waits,
                watchdog = std::make_shared<ReplyWatchdog>(), setup = std::move(setup)] {
    return OpenSession(connection_string, waits, watchdog, setup);
  };
  hooks.still_alive = SessionLooksAlive;
  // A session whose connection closed under us (server restart, kill) is broken too.
  hooks.reusable = [](PostgresSession& session) { return session.connection().is_open(); };
  return PostgresConnectionPool::Create(
      {.engine = "postgres", .size = size, .acquire_wait = acquire_wait}, std::move(hooks));
}

}  // namespace ledger::postgres_internal
