// The MySQL engine (Connector/C++ 1.1) for MySQL 8.0 and MariaDB 10.11.
//
//   ledger::MysqlOptions options{.connection = "mysql://app:secret@127.0.0.1:3306/ledger"};
//   absl::StatusOr<std::unique_ptr<ledger::Engine>> engine = ledger::OpenMysqlEngine(options);
//
// The claim is a placeholder row: the submit transaction INSERTs its key row (state
// pending) first; a concurrent INSERT of the same key blocks until the first commits
// (duplicate key: replay) or rolls back (it proceeds). The row is filled in before
// COMMIT. Only SQL that both MySQL 8.0 and MariaDB 10.11 run. Thread-safe.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/engine.h"

namespace sql {
class Connection;  // MySQL Connector/C++ (cppconn/connection.h)
}  // namespace sql

namespace ledger {

class UnitOfWork;  // ledger/unit_of_work.h

// Every wait is bounded; docs/engines/timeouts.md explains each one and what a submit
// answers when it runs out. A URL query parameter of the same name overrides the field,
// written as a duration with a unit ("500ms", "2s").
struct MysqlOptions {
  // mysql://user[:password]@host[:port]/database[?parameters] ; host "localhost" is not
  // special: always TCP. The database must exist, unless the URL says
  // "create_database=true" (then it is created if missing: `ledger serve` does so for
  // each tenant's database). Parameters: the waits below, and TLS:
  // ssl_mode (disabled, required, verify_ca, verify_identity), ssl_ca, ssl_capath,
  // ssl_cert, ssl_key (docs/engines/mysql.md). Required. Default: empty.
  std::string connection;
  // Connections kept open, 1..1024; callers beyond it wait for one. Default: 16.
  int pool_size = 16;
  // How long a call waits for a pooled connection when all pool_size are on loan
  // (then Unavailable). A submit waits its own claim wait bound instead, unless it
  // fails fast. Default: 10 s (engines/common/connection_pool.h).
  absl::Duration pool_acquire_wait = absl::Seconds(10);
  // Opening a session, TLS and authentication included (OPT_CONNECT_TIMEOUT, whole
  // seconds rounded up). Then Unavailable. Default: 10 s.
  absl::Duration connect_timeout = absl::Seconds(10);
  // How long a submit waits for an account's row lock held by another transaction (the
  // session's innodb_lock_wait_timeout outside the claim, which waits the caller's own
  // bound; whole seconds rounded up). Then RetryableError: the pipeline reruns the
  // attempt. Must be shorter than statement_timeout. Default: 10 s.
  absl::Duration account_lock_wait = absl::Seconds(10);
  // The server's bound on one statement: MariaDB's max_statement_time (every statement,
  // lock waits included, so it also caps a longer claim wait), MySQL's
  // max_execution_time (read-only SELECTs only). Then DeadlineExceeded, nothing
  // written. Migrations run without it. Default: 30 s.
  absl::Duration statement_timeout = absl::Seconds(30);
  // The client's bound on waiting for the server's reply, and on sending to a server
  // that does not read (OPT_READ_TIMEOUT, OPT_WRITE_TIMEOUT; whole seconds rounded
  // up): a frozen server or a partition. The connection is dropped and the call fails
  // with Unavailable, or in doubt during COMMIT. read_timeout must exceed
  // statement_timeout. Defaults: 40 s each.
  absl::Duration read_timeout = absl::Seconds(40);
  absl::Duration write_timeout = absl::Seconds(40);
  // How long an open waits for another process's migrations to finish (the migration
  // lock, tried once per round trip), then Unavailable: retry later. Default: 120 s.
  absl::Duration migration_lock_wait = absl::Seconds(120);
  // Apply pending migrations on open. Default: true.
  bool migrate = true;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenMysqlEngine(const MysqlOptions& options);

// The Connector/C++ connection a unit of work runs on (ledger/unit_of_work.h), inside its
// transaction with the ledger's writes sent, for the caller's own driver code: valid only
// during the `work` call; never commit, roll back, close it or change autocommit. A unit
// on another engine: FailedPrecondition.
absl::StatusOr<sql::Connection*> MysqlHandleOf(UnitOfWork& unit);

}  // namespace ledger

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_H_
