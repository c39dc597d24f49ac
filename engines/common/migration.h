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
#include "absl/status/statusor.h"
#include "absl/time/time.h"

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

// Takes the migration lock that serializes processes migrating one database: calls
// `try_lock` (one round trip, bounded by the engine's read timeout; true when granted)
// until it is granted, pausing between tries, for at most `wait`
// (migration_lock_wait). Then Unavailable, retryable, naming the wait: another process
// is still migrating. A try's own error is returned as it is.
absl::Status TakeMigrationLock(std::string_view engine, absl::Duration wait,
                               const std::function<absl::StatusOr<bool>()>& try_lock);

// Splits a migration's text into statements at ';' that end a line; drops comments
// ("-- ..." lines) and blank statements. For drivers that run one statement per call.
// As the mysql client does, a line "DELIMITER <terminator>" makes <terminator> end a
// statement instead until the next such line: a stored procedure's body holds ';'.
std::vector<std::string> SplitSqlStatements(std::string_view sql);

}  // namespace ledger

#endif  // LEDGER_ENGINES_COMMON_MIGRATION_H_
