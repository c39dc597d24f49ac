// A fixed-size pool of libpqxx connections: one connection per concurrent submitter.
//
//   auto pool = PostgresConnectionPool::Create("postgresql://app@db/ledger", 16);
//   absl::StatusOr<PooledConnection> lease = (*pool)->Acquire();  // waits when all are out
//   lease->connection().prepare(...);  // used by the holding thread only
//
// Connections open lazily up to `size`; a caller beyond it waits for one to come back.
// A lease marked broken (its connection lost, or in an unknown state) is closed on
// release instead of being reused, and its slot is freed for a fresh connection.
//
// Internal to engines/postgres. Thread-safe; a lease belongs to one thread at a time.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pqxx/connection"

namespace ledger::postgres_internal {

inline constexpr int kPoolSizeMax = 1024;

// One server session and what was learned about it when it opened.
struct PostgresSession {
  std::unique_ptr<pqxx::connection> connection;
  // The session's lock_timeout as configured (server, role, DSN options): the claim
  // shortens it with SET LOCAL and puts this value back right after.
  std::string lock_timeout_default;
};

// Called once on every new connection, e.g. to declare the prepared statements.
using SessionSetup = std::function<absl::Status(PostgresSession&)>;

class PostgresConnectionPool;

// A connection taken from the pool; returns it on destruction. Move-only.
class PooledConnection {
 public:
  PooledConnection(std::shared_ptr<PostgresConnectionPool> pool,
                   std::unique_ptr<PostgresSession> session);
  PooledConnection(PooledConnection&&) noexcept = default;
  PooledConnection& operator=(PooledConnection&&) noexcept;
  ~PooledConnection();

  PostgresSession& session() { return *session_; }
  pqxx::connection& connection() { return *session_->connection; }

  // The connection is lost or its state unknown: close it on release, never reuse it.
  void MarkBroken() { broken_ = true; }
  bool broken() const { return broken_; }

  // Closes this connection and opens a fresh one in its place (same pool slot).
  absl::Status Reconnect();

 private:
  void ReturnToPool();

  std::shared_ptr<PostgresConnectionPool> pool_;
  std::unique_ptr<PostgresSession> session_;
  bool broken_ = false;
};

class PostgresConnectionPool : public std::enable_shared_from_this<PostgresConnectionPool> {
 public:
  // Opens one connection right away, so a bad connection string or an unreachable
  // server fails here (Unavailable / InvalidArgument) rather than at the first submit.
  static absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> Create(
      std::string connection_string, int size, SessionSetup setup);

  // Waits until a connection is free or a new one may be opened.
  absl::StatusOr<PooledConnection> Acquire();

  int size() const { return size_; }

 private:
  friend class PooledConnection;
  PostgresConnectionPool(std::string connection_string, int size, SessionSetup setup);

  absl::StatusOr<std::unique_ptr<PostgresSession>> OpenSession();
  void Release(std::unique_ptr<PostgresSession> session, bool broken);

  const std::string connection_string_;
  const int size_;
  const SessionSetup setup_;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<PostgresSession>> idle_ ABSL_GUARDED_BY(mutex_);
  int open_count_ ABSL_GUARDED_BY(mutex_) = 0;  // idle + leased + being opened
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_
