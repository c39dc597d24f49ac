// The PostgreSQL engine's schema migrations: schema/postgres/*.sql, embedded at build
// time by ledger_embed_migrations (cmake/EmbedMigrations.cmake), and the runner.
//
// PostgreSQL DDL is transactional: each migration commits together with its row in
// schema_migrations. A session advisory lock serializes processes that migrate at once.
//
// Internal to engines/postgres. Not thread-safe: uses the caller's connection.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_MIGRATIONS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_MIGRATIONS_H_

#include <vector>

#include "absl/status/status.h"
#include "engines/common/migration.h"
#include "pqxx/connection"

namespace ledger {

// Generated from schema/postgres/ (PostgresMigrations.cc in the build tree).
std::vector<Migration> PostgresMigrations();

namespace postgres_internal {

// How long a migrator waits for another one to finish (then RetryableError), as on MySQL.
inline constexpr int kMigrationLockWaitSeconds = 120;

// Lifts the session's statement timeout (DDL may take long), takes the migration lock,
// creates schema_migrations if missing, applies those of `migrations` it does not
// record, and releases the lock. The session keeps the migration's settings: close it
// afterwards. Statements outside a migration may throw: call it inside GuardPostgres.
// Tests pass the first few of PostgresMigrations() to build an older schema.
absl::Status MigrateDatabase(pqxx::connection& connection,
                             const std::vector<Migration>& migrations = PostgresMigrations());

}  // namespace postgres_internal
}  // namespace ledger

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_MIGRATIONS_H_
