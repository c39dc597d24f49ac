// Picking migrations out of an engine's list (MysqlMigrations(), PostgresMigrations(),
// SqliteMigrations()), for the tests that build the older schema a release before a
// migration left behind and then run that migration on it.
#ifndef LEDGER_TESTS_SUPPORT_OLDER_MIGRATIONS_H_
#define LEDGER_TESTS_SUPPORT_OLDER_MIGRATIONS_H_

#include <optional>
#include <vector>

#include "engines/common/migration.h"

namespace ledger::testing {

// The migrations of `all` numbered below `version`, in their order.
inline std::vector<Migration> MigrationsBefore(const std::vector<Migration>& all, int version) {
  std::vector<Migration> older;
  for (const Migration& migration : all) {
    if (migration.version < version) older.push_back(migration);
  }
  return older;
}

// The migration of `all` numbered `version`, if there is one.
inline std::optional<Migration> MigrationNumbered(const std::vector<Migration>& all,
                                                  int version) {
  for (const Migration& migration : all) {
    if (migration.version == version) return migration;
  }
  return std::nullopt;
}

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_OLDER_MIGRATIONS_H_
