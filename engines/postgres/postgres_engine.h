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

namespace ledger {

enum class PostgresClaimMode { kAdvisoryLock, kRow };

struct PostgresOptions {
  // A libpq connection string or URI. A "claim=row" or "claim=advisory" query
  // parameter in a URI sets claim_mode and is removed before connecting. Required.
  // Default: empty.
  std::string connection;
  // How a submit claims its key (docs/engines/postgres.md). Default: kAdvisoryLock.
  PostgresClaimMode claim_mode = PostgresClaimMode::kAdvisoryLock;
  // Connections kept open, 1..1024; callers beyond it wait for one. Default: 16.
  int pool_size = 16;
  // How long a call waits for a pooled connection when all pool_size are on loan
  // (then Unavailable). A submit waits its own claim wait bound instead, unless it
  // fails fast. Default: 10 s (engines/common/connection_pool.h).
  absl::Duration pool_acquire_wait = absl::Seconds(10);
  // Apply pending migrations on open. Default: true.
  bool migrate = true;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenPostgresEngine(const PostgresOptions& options);

}  // namespace ledger

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_H_
