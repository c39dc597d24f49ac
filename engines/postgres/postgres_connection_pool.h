// The PostgreSQL engine's connection pool: the shared pool
// (engines/common/connection_pool.h) over PostgresSession, with PostgreSQL's hooks.
//
//   LEDGER_ASSIGN_OR_RETURN(auto pool, CreatePostgresConnectionPool(
//       "postgresql://app@db/ledger", 16, absl::Seconds(10), SetUpSession));
//   LEDGER_ASSIGN_OR_RETURN(PooledConnection lease, pool->Acquire());
//   lease->connection().prepare(...);  // used by the holding thread only
//
// A lease discarded by the engine (its connection lost, or in an unknown state), or
// whose connection closed under it, is closed on return instead of being reused. An
// idle session the server terminated meanwhile is noticed (without a round trip)
// before it is lent again, and replaced.
//
// Internal to engines/postgres. Thread-safe; a lease belongs to one thread at a time.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/common/connection_pool.h"
#include "pqxx/connection"

namespace ledger::postgres_internal {

// One server session and what was learned about it when it opened.
struct PostgresSession {
  pqxx::connection& connection() { return *handle; }

  std::unique_ptr<pqxx::connection> handle;
  // The session's lock_timeout as configured (server, role, DSN options): the claim
  // shortens it with SET LOCAL and puts this value back right after.
  std::string lock_timeout_default;
};

// Called once on every new connection, e.g. to declare the prepared statements.
using SessionSetup = std::function<absl::Status(PostgresSession&)>;

using PostgresConnectionPool = engine_common::ConnectionPool<PostgresSession>;
using PooledConnection = PostgresConnectionPool::Lease;

// InvalidArgument for a bad size or wait. Opens no connection yet.
absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> CreatePostgresConnectionPool(
    std::string connection_string, int size, absl::Duration acquire_wait, SessionSetup setup);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_POOL_H_
