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
  pqxx::connection& connection = *session.connection;
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

}  // namespace

PooledConnection::PooledConnection(std::shared_ptr<PostgresConnectionPool> pool,
                                   std::unique_ptr<PostgresSession> session)
    : pool_(std::move(pool)), session_(std::move(session)) {}

PooledConnection& PooledConnection::operator=(PooledConnection&& other) noexcept {
  if (this != &other) {
    ReturnToPool();
    pool_ = std::move(other.pool_);
    session_ = std::move(other.session_);
    broken_ = other.broken_;
  }
  return *this;
}

PooledConnection::~PooledConnection() { ReturnToPool(); }

void PooledConnection::ReturnToPool() {
  if (pool_ == nullptr) return;  // moved from
  std::shared_ptr<PostgresConnectionPool> pool = std::move(pool_);
  // A session whose connection closed under us (server restart, kill) is broken too.
  const bool broken = broken_ || session_ == nullptr || !session_->connection->is_open();
  pool->Release(std::move(session_), broken);
}

absl::Status PooledConnection::Reconnect() {
  session_.reset();  // close the old server session before opening its replacement
  absl::StatusOr<std::unique_ptr<PostgresSession>> fresh = pool_->OpenSession();
  if (!fresh.ok()) {
    broken_ = true;  // the slot is freed on release
    return fresh.status();
  }
  session_ = *std::move(fresh);
  broken_ = false;
  return absl::OkStatus();
}

PostgresConnectionPool::PostgresConnectionPool(std::string connection_string, int size,
                                               SessionSetup setup)
    : connection_string_(std::move(connection_string)), size_(size), setup_(std::move(setup)) {}

absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> PostgresConnectionPool::Create(
    std::string connection_string, int size, SessionSetup setup) {
  if (size < 1 || size > kPoolSizeMax) {
    return absl::InvalidArgumentError("postgres: pool_size must be between 1 and 1024");
  }
  std::shared_ptr<PostgresConnectionPool> pool(
      new PostgresConnectionPool(std::move(connection_string), size, std::move(setup)));
  // The first connection proves the connection string and the server.
  LEDGER_ASSIGN_OR_RETURN(PooledConnection first, pool->Acquire());
  (void)first;
  return pool;
}

absl::StatusOr<std::unique_ptr<PostgresSession>> PostgresConnectionPool::OpenSession() {
  auto session = std::make_unique<PostgresSession>();
  LEDGER_RETURN_IF_ERROR(GuardPostgres({.operation = "connect"}, [&]() -> absl::Status {
    session->connection = std::make_unique<pqxx::connection>(connection_string_);
    ForbidSilentReconnect(*session->connection);
    pqxx::nontransaction work(*session->connection);
    session->lock_timeout_default = work.exec("SHOW lock_timeout")[0][0].as<std::string>();
    return absl::OkStatus();
  }));
  if (setup_) LEDGER_RETURN_IF_ERROR(setup_(*session));
  return session;
}

absl::StatusOr<PooledConnection> PostgresConnectionPool::Acquire() {
  while (true) {
    std::unique_ptr<PostgresSession> idle;
    {
      absl::MutexLock lock(&mutex_);
      auto can_proceed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
        return !idle_.empty() || open_count_ < size_;
      };
      mutex_.Await(absl::Condition(&can_proceed));
      if (idle_.empty()) {
        ++open_count_;  // reserve the slot; connect outside the lock
      } else {
        idle = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (idle == nullptr) break;
    if (SessionLooksAlive(*idle)) return PooledConnection(shared_from_this(), std::move(idle));
    Release(std::move(idle), /*broken=*/true);  // killed or restarted server: replace it
  }
  absl::StatusOr<std::unique_ptr<PostgresSession>> session = OpenSession();
  if (!session.ok()) {
    absl::MutexLock lock(&mutex_);
    --open_count_;
    return session.status();
  }
  return PooledConnection(shared_from_this(), *std::move(session));
}

void PostgresConnectionPool::Release(std::unique_ptr<PostgresSession> session, bool broken) {
  // Closing a connection talks to the server: do it outside the lock.
  std::unique_ptr<PostgresSession> discarded;
  {
    absl::MutexLock lock(&mutex_);
    if (broken || session == nullptr) {
      discarded = std::move(session);
      --open_count_;
    } else {
      idle_.push_back(std::move(session));
    }
  }
}

}  // namespace ledger::postgres_internal
