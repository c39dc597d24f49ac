// The SQLite engine's schema migrations: schema/sqlite/*.sql, embedded at build time
// by ledger_embed_migrations (cmake/EmbedMigrations.cmake), and the runner's steps.
//
// Internal to engines/sqlite. Not thread-safe: functions use the caller's connection;
// the engine runs each step inside its own BEGIN IMMEDIATE transaction, which is what
// makes two processes migrating one file at once safe.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_MIGRATIONS_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_MIGRATIONS_H_

#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/sqlite/sqlite_connection.h"
#include "engines/common/migration.h"

namespace ledger {

// Generated from schema/sqlite/ (SqliteMigrations.cc in the build tree).
std::vector<Migration> SqliteMigrations();

namespace sqlite_internal {

// CREATE TABLE IF NOT EXISTS schema_migrations (version PK, name, applied_at).
absl::Status CreateMigrationTable(Connection& connection);
absl::StatusOr<std::set<int>> SelectAppliedVersions(Connection& connection);
// Runs the migration's statements and records it, unless it is recorded already (a
// concurrent process may have applied it since the caller read the versions).
absl::Status ApplyMigrationOnce(Connection& connection, const Migration& migration);

}  // namespace sqlite_internal
}  // namespace ledger

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_MIGRATIONS_H_
