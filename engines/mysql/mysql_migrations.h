// The MySQL engine's schema migrations: schema/mysql/*.sql, embedded at build time by
// ledger_embed_migrations (cmake/EmbedMigrations.cmake), and the runner.
//
// MySQL commits DDL implicitly, so a migration is not atomic. Two guards make running
// it safe anyway: a server-wide named lock (GET_LOCK, per database) serializes
// processes that migrate at once, and every statement of a migration is written to be
// re-runnable (CREATE TABLE IF NOT EXISTS, indexes inside the CREATE), so a migration
// cut short half-way is completed by the next run.
//
// Internal to engines/mysql. Not thread-safe: uses the caller's connection.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_MIGRATIONS_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_MIGRATIONS_H_

#include <vector>

#include "absl/status/status.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/common/migration.h"
#include "engines/common/waits.h"
#include "absl/time/time.h"

namespace ledger {

// Generated from schema/mysql/ (MysqlMigrations.cc in the build tree).
std::vector<Migration> MysqlMigrations();

namespace mysql_internal {

// Takes the database's migration lock (waiting at most `lock_wait` for another
// migrator, one GET_LOCK try per round trip, then Unavailable), creates schema_migrations if missing, applies
// those of `migrations` it does not record, and releases the lock. Tests pass the first
// few of MysqlMigrations() to build an older schema.
// Every round trip is bounded by the session's read and write timeouts.
absl::Status MigrateDatabase(
    MysqlConnection& connection, const std::vector<Migration>& migrations = MysqlMigrations(),
    absl::Duration lock_wait = engine_common::kMigrationLockWaitDefault);

}  // namespace mysql_internal
}  // namespace ledger

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_MIGRATIONS_H_
