#include "engines/sqlite/sqlite_migrations.h"

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {

absl::Status CreateMigrationTable(Connection& connection) {
  return connection.Execute(
      statement::kCreateSchemaMigrations,
      "create schema_migrations", ErrorContext::kStandalone);
}

absl::StatusOr<std::set<int>> SelectAppliedVersions(Connection& connection) {
  LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare(statement::kSelectAppliedMigrations,
                                                          "select applied migrations"));
  std::set<int> versions;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
    if (!has_row) return versions;
    versions.insert(static_cast<int>(query.Int(0)));
  }
}

absl::Status ApplyMigrationOnce(Connection& connection, const Migration& migration) {
  LEDGER_ASSIGN_OR_RETURN(std::set<int> applied, SelectAppliedVersions(connection));
  if (applied.count(migration.version) > 0) return absl::OkStatus();
  // DDL is transactional in SQLite: the statements and their record commit together.
  LEDGER_RETURN_IF_ERROR(
      connection.Execute(std::string(migration.sql), "apply migration", ErrorContext::kStandalone));
  LEDGER_ASSIGN_OR_RETURN(
      Query record,
      connection.Prepare(statement::kRecordMigration,
                         "record migration"));
  record.BindInt(migration.version)
      .BindText(migration.name)
      .BindTime(SystemClock::Default()->Now());
  return record.Run();
}

}  // namespace ledger::sqlite_internal
