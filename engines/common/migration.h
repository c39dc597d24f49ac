// Versioned schema migrations. Each SQL engine embeds its files from schema/<engine>/
// at build time (cmake/EmbedMigrations.cmake) and applies the ones not yet recorded in
// its schema_migrations table, each in its own transaction where the engine allows.
#ifndef LEDGER_ENGINES_COMMON_MIGRATION_H_
#define LEDGER_ENGINES_COMMON_MIGRATION_H_

#include <functional>
#include <set>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace ledger {

struct Migration {
  int version;            // from the file name: 0001_initial.sql -> 1
  std::string_view name;  // "0001_initial"
  std::string_view sql;   // the file's text: statements separated by ';' at line ends
};

// Calls `apply` for every migration whose version is not in `applied`, in ascending
// version order, stopping at the first error.
absl::Status ApplyPendingMigrations(const std::vector<Migration>& migrations,
                                    const std::set<int>& applied,
                                    const std::function<absl::Status(const Migration&)>& apply);

// Splits a migration's text into statements at ';' that end a line; drops comments
// ("-- ..." lines) and blank statements. For drivers that run one statement per call.
std::vector<std::string> SplitSqlStatements(std::string_view sql);

}  // namespace ledger

#endif  // LEDGER_ENGINES_COMMON_MIGRATION_H_
