// The PostgreSQL engine's schema migrations: schema/postgres/*.sql, embedded at build
// time by ledger_embed_migrations (cmake/EmbedMigrations.cmake), and the runner.
//
// PostgreSQL DDL is transactional: each migration commits together with its row in
// schema_migrations. A session advisory lock serializes processes that migrate at once.
// Every round trip is bounded like a submit's: the session's reply deadline
// (read_timeout), statement_timeout and lock_timeout (docs/engines/timeouts.md).
//
// Internal to engines/postgres. Not thread-safe: uses the caller's session.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_MIGRATIONS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_MIGRATIONS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engines/common/migration.h"
#include "engines/common/waits.h"
#include "engines/postgres/postgres_connection_pool.h"

namespace ledger {

// Generated from schema/postgres/ (PostgresMigrations.cc in the build tree).
std::vector<Migration> PostgresMigrations();

namespace postgres_internal {

// Takes the migration lock (waiting at most `lock_wait` for another migrator, then
// Unavailable), creates schema_migrations if missing, applies those of `migrations` it
// does not record, and releases the lock. After an error the session may still hold
// the lock or a failed transaction: close it. Tests pass the first few of
// PostgresMigrations() to build an older schema.
absl::Status MigrateDatabase(
    PostgresSession& session, const std::vector<Migration>& migrations = PostgresMigrations(),
    absl::Duration lock_wait = engine_common::kMigrationLockWaitDefault);

}  // namespace postgres_internal
}  // namespace ledger

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_MIGRATIONS_H_
