// Two processes may migrate at once (several app instances starting): a session
// advisory lock serializes them, and each migration commits with its version row.
#include "engines/postgres/postgres_migrations.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "engines/postgres/postgres_errors.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/transaction"

namespace ledger::postgres_internal {
namespace {

constexpr char kMigrationLock[] = "hashtextextended('ledger.schema_migrations', 0)";

}  // namespace

absl::Status MigrateDatabase(pqxx::connection& connection,
                             const std::vector<Migration>& migrations) {
  std::set<int> applied;
  {
    pqxx::nontransaction work(connection);
    work.exec(absl::StrCat("SET statement_timeout = 0; SET lock_timeout = '",
                           kMigrationLockWaitSeconds, "s'"));
    work.exec(absl::StrCat("SELECT pg_advisory_lock(", kMigrationLock, ")"));
    work.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    for (const pqxx::row& row : work.exec("SELECT version FROM schema_migrations")) {
      applied.insert(row[0].as<int>());
    }
  }
  LEDGER_RETURN_IF_ERROR(ApplyPendingMigrations(
      migrations, applied, [&](const Migration& migration) -> absl::Status {
        return GuardPostgres({.operation = "apply migration"}, [&]() -> absl::Status {
          pqxx::work work(connection);  // PostgreSQL DDL is transactional
          work.exec(std::string(migration.sql));
          work.exec_params(
              "INSERT INTO schema_migrations (version, name, applied_at) VALUES "
              "($1, $2, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)",
              migration.version, std::string(migration.name));
          work.commit();
          return absl::OkStatus();
        });
      }));
  pqxx::nontransaction work(connection);
  work.exec(absl::StrCat("SELECT pg_advisory_unlock(", kMigrationLock, ")"));
  return absl::OkStatus();
}

}  // namespace ledger::postgres_internal
