// Two processes may migrate at once (several app instances starting): a session
// advisory lock serializes them, and each migration commits with its version row.
// Every round trip runs under the session's reply deadline (read_timeout) and its
// server waits (statement_timeout, lock_timeout): a frozen server fails the open in
// bound, as it fails a submit.
#include "engines/postgres/postgres_migrations.h"

#include <set>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_errors.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/result"

namespace ledger::postgres_internal {
namespace {

// One statement on the session, autocommit, under its reply deadline.
absl::Status RoundTrip(PostgresSession& session, std::string_view operation,
                       const std::string& sql) {
  return GuardRoundTrip(session, {.operation = operation}, [&]() -> absl::Status {
    pqxx::nontransaction work(session.connection());
    work.exec(sql);
    return absl::OkStatus();
  });
}

// One migration, a transaction of its own (PostgreSQL DDL is transactional): BEGIN
// with the first statement, one round trip per statement (so statement_timeout and
// read_timeout each bound one), COMMIT with the version row.
// A migration may rewrite whole tables, so it plans with sequential scans, which the
// session's own statements price out (SessionSettingsSql); SET LOCAL ends with it.
absl::Status ApplyMigration(PostgresSession& session, const Migration& migration) {
  std::string begin = "BEGIN;\nSET LOCAL enable_seqscan = on;\n";
  for (const std::string& statement : SplitSqlStatements(migration.sql)) {
    LEDGER_RETURN_IF_ERROR(
        RoundTrip(session, "apply migration", absl::StrCat(begin, statement)));
    begin.clear();
  }
  return GuardRoundTrip(session, {.operation = "record migration"}, [&]() -> absl::Status {
    pqxx::nontransaction work(session.connection());
    work.exec(RecordMigrationSql(begin, migration.version,
                                 work.quote(std::string(migration.name))));
    return absl::OkStatus();
  });
}

}  // namespace

absl::Status MigrateDatabase(PostgresSession& session, const std::vector<Migration>& migrations,
                             absl::Duration lock_wait) {
  // Each try is a round trip of its own, so the wait for another migrator is
  // migration_lock_wait, never the reply deadline.
  LEDGER_RETURN_IF_ERROR(TakeMigrationLock("postgres", lock_wait, [&]() -> absl::StatusOr<bool> {
    return GuardRoundTrip(session, {.operation = "take the migration lock"},
                          [&]() -> absl::StatusOr<bool> {
      pqxx::nontransaction work(session.connection());
      return work.exec(TryMigrationLockSql(session.schema))
          .at(0).at(0).as<bool>();
    });
  }));
  if (!session.schema.empty()) {
    // The session's search_path already names it (SetUpSession); the name is validated.
    LEDGER_RETURN_IF_ERROR(RoundTrip(session, "create the schema", CreateSchemaSql(session.schema)));
  }
  LEDGER_RETURN_IF_ERROR(
      RoundTrip(session, "create schema_migrations", kCreateSchemaMigrations));
  LEDGER_ASSIGN_OR_RETURN(
      std::set<int> applied,
      GuardRoundTrip(session, {.operation = "read applied migrations"},
                     [&]() -> absl::StatusOr<std::set<int>> {
        pqxx::nontransaction work(session.connection());
        std::set<int> versions;
        for (const pqxx::row& row : work.exec(kSelectAppliedMigrations)) {
          versions.insert(row[0].as<int>());
        }
        return versions;
      }));
  LEDGER_RETURN_IF_ERROR(ApplyPendingMigrations(
      migrations, applied,
      [&](const Migration& migration) { return ApplyMigration(session, migration); }));
  return RoundTrip(session, "release the migration lock", ReleaseMigrationLockSql(session.schema));
}

}  // namespace ledger::postgres_internal
