// Opens an engine from a database URL, for the CLI, the tests and the load driver:
//
//   sqlite:PATH (or sqlite://PATH)     the embedded default; "?synchronous=normal"
//                                      trades power-loss durability for speed (default full)
//   memory:                            nothing persists
//   postgres://... or postgresql://... PostgreSQL; "?claim=row" picks the row claim, and
//                                      libpq's TLS, timeout and keepalive parameters pass on
//   mysql://user[:password]@host:port/database
//
// A parameter the engine does not know is InvalidArgument, never ignored. No error
// returned shows the URL's password (see engines/common/database_url.h to redact one
// yourself). Engines not built in give a clear Unimplemented error. Thread-safe.
#ifndef LEDGER_ENGINES_OPEN_ENGINE_H_
#define LEDGER_ENGINES_OPEN_ENGINE_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "ledger/engine.h"

namespace ledger {

struct OpenEngineOptions {
  // Apply pending migrations on open. Default: true.
  bool migrate = true;
  // SQLite: create the database file when it does not exist. The CLI turns it off for
  // every command but `migrate`, `demo` and `serve`, so a mistyped path is refused
  // instead of becoming a new empty ledger. Server engines never create a database.
  // Default: true.
  bool create_database = true;
  // SQL engines: connections kept open, as in their options. Default: 16.
  int pool_size = 16;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenEngine(std::string_view url,
                                                   const OpenEngineOptions& options = {});

// Opens the engine for LedgerOptions::read_engine (reads off the primary,
// docs/scaling.md): OpenEngine with migrate and create_database off, whatever `options`
// says, so opening it never writes (a standby would refuse). Which node it reaches is the
// URL's: PostgreSQL "postgres://...@standby:5432/db", or a host list with
// "target_session_attrs=prefer-standby" (libpq 14+: also standby, read-only, any);
// MySQL/MariaDB Galera "mysql://...@another-node/db".
absl::StatusOr<std::unique_ptr<Engine>> OpenReadEngine(std::string_view url,
                                                       const OpenEngineOptions& options = {});

}  // namespace ledger

#endif  // LEDGER_ENGINES_OPEN_ENGINE_H_
