// One PostgreSQL session's setup: the connection string (its "claim=" and wait
// parameters are the engine's, never libpq's; libpq's waits are added to it), the server
// version check, and the named prepared statements (postgres_statements.h) declared on
// every new connection (libpqxx registers each with the server on its first use). The
// session itself is a pqxx::connection held by the pool (postgres_connection_pool.h):
// libpqxx already is the connection wrapper that sqlite_connection.h and
// mysql_connection.h write by hand.
//
// Internal to engines/postgres. Thread-safe: constants and pure functions; SetUpSession
// touches only the session it is given.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_engine.h"

namespace ledger::postgres_internal {

struct ParsedPostgresConnection {
  // What libpq gets: the engine's own parameters removed, libpq's waits added where the
  // connection string does not give them (connect_timeout, keepalives, keepalives_idle,
  // keepalives_interval, keepalives_count, tcp_user_timeout).
  std::string connection;
  // The caller's options with the URI's parameters applied (claim, account_lock_wait,
  // statement_timeout, read_timeout, pool_acquire_wait, migration_lock_wait), every
  // wait checked; connect_timeout is the one libpq gets, whoever gave it (in whole
  // seconds, at least 2 as libpq counts).
  PostgresOptions options;
};

// The query parameters a postgres:// or postgresql:// URI may carry: the engine's own
// and the libpq ones the engine lets through. Anything else is refused by name.
const std::vector<std::string_view>& PostgresUrlParameters();

// Reads `options.connection`. In a URI, the engine's parameters override their fields
// and are removed; libpq's own pass through and win over the matching fields. A libpq
// key=value string carries only libpq keywords; the fields' values go in front of it, so
// a keyword it gives wins. InvalidArgument for an unknown parameter or claim mode, a
// wait that is not positive and finite (a connect_timeout that is not a whole number of
// seconds above 0 included: libpq reads 0 as "wait forever"), or waits out of order (account_lock_wait <
// statement_timeout < read_timeout).
absl::StatusOr<ParsedPostgresConnection> ParsePostgresConnection(const PostgresOptions& options);

// Run once on every new session: FailedPrecondition for a server older than
// PostgreSQL 11; with a `schema` (PostgresOptions::schema, already validated), records it
// in the session and sets the session's search_path to it alone; then declares the
// prepared statements.
absl::Status SetUpSession(PostgresSession& session, std::string_view schema = "");

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_H_
