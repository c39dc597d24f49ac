#include "engines/mysql/mysql_migrations.h"

#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "base/status.h"
#include "engines/mysql/mysql_rows.h"
#include "engines/mysql/mysql_statements.h"

namespace ledger::mysql_internal {
namespace {

// GET_LOCK without waiting, tried again until `lock_wait` has passed: a GET_LOCK that
// waited on the server would outlive the client's read timeout, which then cuts a live
// server off.
absl::Status TakeMigrationLock(MysqlConnection& connection, absl::Duration lock_wait) {
  return ledger::TakeMigrationLock("mysql", lock_wait, [&]() -> absl::StatusOr<bool> {
    std::optional<int64_t> granted;
    LEDGER_RETURN_IF_ERROR(connection.Query(
        TakeMigrationLockSql(), {},
        [&](const SqlRow& row) { if (!row.IsNull(0)) granted = row.Int64(0); },
        "take the migration lock", ErrorContext::kStandalone));
    return granted == 1;
  });
}

void ReleaseMigrationLock(MysqlConnection& connection) {
  // Closing the session releases it too: a failure here leaves nothing behind.
  absl::Status released =
      connection.ExecuteText(ReleaseMigrationLockSql(),
                             "release the migration lock", ErrorContext::kStandalone);
  if (released.ok()) released = connection.Commit(ErrorContext::kStandalone);
  (void)released;
}

absl::StatusOr<std::set<int>> AppliedVersions(MysqlConnection& connection) {
  LEDGER_RETURN_IF_ERROR(connection.ExecuteText(
      statement::kCreateSchemaMigrations,
      "create schema_migrations", ErrorContext::kStandalone));
  std::set<int> applied;
  LEDGER_RETURN_IF_ERROR(connection.Query(
      statement::kSelectAppliedMigrations, {},
      [&](const SqlRow& row) { applied.insert(static_cast<int>(row.Int64(0))); },
      "read applied migrations", ErrorContext::kStandalone));
  LEDGER_RETURN_IF_ERROR(connection.Commit(ErrorContext::kStandalone));
  return applied;
}

absl::Status ApplyMigration(MysqlConnection& connection, const Migration& migration) {
  for (const std::string& statement : SplitSqlStatements(migration.sql)) {
    LEDGER_RETURN_IF_ERROR(
        connection.ExecuteText(statement, "apply a migration", ErrorContext::kStandalone));
  }
  LEDGER_RETURN_IF_ERROR(connection
                             .Execute(statement::kRecordMigration,
                                      {int64_t{migration.version}, std::string(migration.name),
                                       ToMicros(SystemClock::Default()->Now())},
                                      "record a migration", ErrorContext::kStandalone)
                             .status());
  return connection.Commit(ErrorContext::kStandalone);
}

}  // namespace

absl::Status MigrateDatabase(MysqlConnection& connection,
                             const std::vector<Migration>& migrations, absl::Duration lock_wait) {
  LEDGER_RETURN_IF_ERROR(TakeMigrationLock(connection, lock_wait));
  absl::StatusOr<std::set<int>> applied = AppliedVersions(connection);
  absl::Status status = applied.status();
  if (status.ok()) {
    status = ApplyPendingMigrations(migrations, *applied, [&](const Migration& migration) {
      return ApplyMigration(connection, migration);
    });
  }
  if (!status.ok()) connection.Rollback();
  ReleaseMigrationLock(connection);
  return status;
}

}  // namespace ledger::mysql_internal
