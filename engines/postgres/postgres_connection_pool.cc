#include "engines/postgres/postgres_connection_pool.h"

#include <poll.h>

#include <utility>

#include "engines/postgres/postgres_errors.h"
#include "base/status.h"
#include "pqxx/nontransaction"

namespace ledger::postgres_internal {
namespace {

// libpqxx 6 silently reconnects a broken connection on its next use. A new session
// has none of the old one's transaction, so a COMMIT sent there would "succeed" on
// nothing: the engine must see the break, never a quiet reconnect.
void ForbidSilentReconnect(pqxx::connection& connection) {
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
  pqxx::connection& connection = session.connection();
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

absl::StatusOr<std::unique_ptr<PostgresSession>> OpenSession(const std::string& connection_string,
                                                             const SessionSetup& setup) {
  auto session = std::make_unique<PostgresSession>();
  LEDGER_RETURN_IF_ERROR(GuardPostgres({.operation = "connect"}, [&]() -> absl::Status {
    session->handle = std::make_unique<pqxx::connection>(connection_string);
    ForbidSilentReconnect(session->connection());
    pqxx::nontransaction work(session->connection());
    session->lock_timeout_default = work.exec("SHOW lock_timeout")[0][0].as<std::string>();
    return absl::OkStatus();
  }));
  if (setup) LEDGER_RETURN_IF_ERROR(setup(*session));
  return session;
}

}  // namespace

absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> CreatePostgresConnectionPool(
    std::string connection_string, int size, absl::Duration acquire_wait, SessionSetup setup) {
  engine_common::PoolHooks<PostgresSession> hooks;
  hooks.open = [connection_string = std::move(connection_string), setup = std::move(setup)] {
    return OpenSession(connection_string, setup);
  };
  hooks.still_alive = SessionLooksAlive;
  // A session whose connection closed under us (server restart, kill) is broken too.
  hooks.reusable = [](PostgresSession& session) { return session.connection().is_open(); };
  return PostgresConnectionPool::Create(
      {.engine = "postgres", .size = size, .acquire_wait = acquire_wait}, std::move(hooks));
}

}  // namespace ledger::postgres_internal
