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

namespace ledger {

struct MysqlOptions {
  // mysql://user[:password]@host[:port]/database ; host "localhost" is not special:
  // always TCP. The database must exist. Required. Default: empty.
  std::string connection;
  // Connections kept open, 1..1024; callers beyond it wait for one. Default: 16.
  int pool_size = 16;
  // How long a call waits for a pooled connection when all pool_size are on loan
  // (then Unavailable). A submit waits its own claim wait bound instead, unless it
  // fails fast. Default: 10 s (engines/common/connection_pool.h).
  absl::Duration pool_acquire_wait = absl::Seconds(10);
  // Apply pending migrations on open. Default: true.
  bool migrate = true;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenMysqlEngine(const MysqlOptions& options);

}  // namespace ledger

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_H_
