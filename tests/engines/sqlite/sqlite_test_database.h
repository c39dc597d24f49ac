// A fresh SQLite database for a test: a migrated engine on a new file of `databases`
// (tests/support/temporary_databases.h), the previous file removed. Shared by the
// conformance and the property contexts.
//
//   static TemporaryDatabases databases("ledger-sqlite-conformance");
//   absl::StatusOr<std::unique_ptr<Engine>> engine = OpenFreshSqliteEngine(databases);
#ifndef LEDGER_TESTS_ENGINES_SQLITE_SQLITE_TEST_DATABASE_H_
#define LEDGER_TESTS_ENGINES_SQLITE_SQLITE_TEST_DATABASE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engines/sqlite/sqlite_engine.h"
#include "tests/support/temporary_databases.h"

namespace ledger::testing {

inline absl::StatusOr<std::unique_ptr<Engine>> OpenFreshSqliteEngine(
    TemporaryDatabases& databases) {
  SqliteOptions options;
  options.path = databases.NextPath();
  options.migrate = true;
  return OpenSqliteEngine(options);
}

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_SQLITE_SQLITE_TEST_DATABASE_H_
