// The PostgreSQL engine (libpqxx 6.4), the production engine.
//
//   ledger::PostgresOptions options{.connection = "postgresql://app@db/ledger"};
//   absl::StatusOr<std::unique_ptr<ledger::Engine>> engine = ledger::OpenPostgresEngine(options);
//
// Claim modes:
// - kAdvisoryLock (default): pg_advisory_xact_lock(hashtextextended(identity, 0)) inside
//   the submit transaction, then read the key row. The lock dies with the transaction.
// - kRow: INSERT the key row ON CONFLICT DO NOTHING, then read it FOR UPDATE; relies
//   only on the unique key, for poolers in transaction mode and distributed
//   PostgreSQL-compatible databases whose advisory locks are node-local or no-ops.
// One pooled connection per concurrent submitter. Thread-safe.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/engine.h"

namespace pqxx {
class nontransaction;
}  // namespace pqxx

namespace ledger {

class UnitOfWork;  // ledger/unit_of_work.h

enum class PostgresClaimMode { kAdvisoryLock, kRow };

// Every wait is bounded; docs/engines/timeouts.md explains each one and what a submit
// answers when it runs out. In a URI, a query parameter of the same name overrides the
// field: libpq's own ones (connect_timeout, keepalives_*, tcp_user_timeout) in libpq's
// units, the engine's (account_lock_wait, statement_timeout, read_timeout,
// pool_acquire_wait, migration_lock_wait) as a duration with a unit ("500ms", "2s").
struct PostgresOptions {
  // A libpq connection string or URI. A "claim=row" or "claim=advisory" query
  // parameter in a URI sets claim_mode, and the engine's wait parameters set their
  // fields; both are removed before libpq sees the URI. TLS: libpq's sslmode,
  // sslrootcert, sslcert, sslkey (docs/engines/postgres.md). Required. Default: empty.
  std::string connection;
  // The schema that holds the ledger: its tables, its migrations and every statement
  // (each session's search_path is this schema alone), created by the first migration
  // if missing. Its advisory locks (claims, the outbox sequencer, migrations) are keyed
  // with the schema too, so ledgers in two schemas of one database never wait on each
  // other. URL parameter "schema=NAME"; a name is 1 to 63 of [a-z0-9_], not beginning
  // with a digit or pg_ (ValidateSchemaName). Default: empty, the connection's own
  // search_path (normally public), exactly as before schemas.
  std::string schema;
  // How a submit claims its key (docs/engines/postgres.md). Default: kAdvisoryLock.
  PostgresClaimMode claim_mode = PostgresClaimMode::kAdvisoryLock;
  // Advisory mode: a submit or a batch (group commit's too) on accounts this engine
  // wrote last is decided on the rows it remembers and sent in ONE round trip, the
  // server checking them before the write (docs/engines/postgres.md, "One round trip
  // on remembered accounts"). The price: the first round trip carries COMMIT, so a
  // connection lost during it is in doubt when the server cannot be reached to read the
  // outcome back, and a guess the database refuses costs two round trips more. URL
  // parameter "one_round_trip=on|off". Ignored in row mode. Default: off.
  bool one_round_trip = false;
  // Connections kept open, 1..1024; callers beyond it wait for one. Default: 16.
  int pool_size = 16;
  // How long a call waits for a pooled connection when all pool_size are on loan
  // (then Unavailable). A submit waits its own claim wait bound instead, unless it
  // fails fast. Default: 10 s (engines/common/connection_pool.h).
  absl::Duration pool_acquire_wait = absl::Seconds(10);
  // Opening a connection, TLS and authentication included, the attempt as a whole (all
  // hosts and addresses of the connection string together): then Unavailable. Given
  // to libpq as connect_timeout, in whole seconds rounded up (at least 2 s, as libpq
  // counts); a connect_timeout in the connection string wins. Default: 10 s.
  absl::Duration connect_timeout = absl::Seconds(10);
  // How long a submit waits for an account's row lock held by another transaction (the
  // session's lock_timeout outside the claim, which waits the caller's own bound).
  // Then RetryableError: the pipeline reruns the attempt. Must be shorter than
  // statement_timeout. Default: 10 s.
  absl::Duration account_lock_wait = absl::Seconds(10);
  // The server's bound on one statement (statement_timeout), lock waits included, so it
  // also caps a claim wait longer than it. Then DeadlineExceeded, nothing written.
  // Migrations run with it too: raise it (and read_timeout) for a migration that
  // rewrites a large table. Default: 30 s.
  absl::Duration statement_timeout = absl::Seconds(30);
  // The client's bound on one round trip, for a server that does not answer at all
  // (frozen, or a partition the kernel has not noticed): the engine closes the
  // connection, and the call fails with Unavailable, or in doubt during COMMIT. Must
  // exceed statement_timeout. Default: 40 s.
  absl::Duration read_timeout = absl::Seconds(40);
  // TCP keepalive on every connection: the first probe after keepalives_idle of
  // silence, then one every keepalives_interval; keepalives_count unanswered probes
  // drop the connection. Notices a dead peer or a partition while a call waits.
  // Defaults: 30 s, 10 s, 3.
  absl::Duration keepalives_idle = absl::Seconds(30);
  absl::Duration keepalives_interval = absl::Seconds(10);
  int keepalives_count = 3;
  // How long sent data may stay unacknowledged before the kernel drops the connection
  // (TCP_USER_TIMEOUT; Linux). A partition while sending. Default: 30 s.
  absl::Duration tcp_user_timeout = absl::Seconds(30);
  // How long an open waits for another process's migrations to finish (the migration
  // lock), then Unavailable: retry later. Default: 120 s.
  absl::Duration migration_lock_wait = absl::Seconds(120);
  // Apply pending migrations on open. Default: true.
  bool migrate = true;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenPostgresEngine(const PostgresOptions& options);

// The libpqxx handle a unit of work runs on (ledger/unit_of_work.h), its transaction
// begun and the ledger's writes sent, for the caller's own driver code: valid only during
// the `work` call; never COMMIT or ROLLBACK on it. A failed statement aborts the
// transaction: Transact notices before COMMIT and rolls back. A unit on another engine:
// FailedPrecondition.
absl::StatusOr<pqxx::nontransaction*> PostgresHandleOf(UnitOfWork& unit);

}  // namespace ledger

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_H_
