// The SQLite engine: the embedded default, durable in one file.
//
//   ledger::SqliteOptions options{.path = "ledger.db"};
//   absl::StatusOr<std::unique_ptr<ledger::Engine>> engine = ledger::OpenSqliteEngine(options);
//
// WAL mode; each submit is one BEGIN IMMEDIATE transaction, so writers are serialized
// by the database and the idempotency table's primary key is the guard. One connection
// per concurrent caller, taken from a pool. Thread-safe.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/engine.h"

namespace ledger {

struct SqliteOptions {
  std::string path = "ledger.db";  // created if missing
  // How long a writer waits for the database lock when the submit's own wait policy
  // does not say (reads, account administration). Default 10 s.
  absl::Duration busy_timeout = absl::Seconds(10);
  // "NORMAL" (default: durable across process crashes, WAL-safe) or "FULL" (also
  // across power loss: fsync on every commit).
  std::string synchronous = "NORMAL";
  bool migrate = true;  // apply pending migrations on open
};

absl::StatusOr<std::unique_ptr<Engine>> OpenSqliteEngine(const SqliteOptions& options);

}  // namespace ledger

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_H_
