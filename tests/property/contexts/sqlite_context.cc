// The property suite on the SQLite engine: every run gets a new database file in a
// per-process folder under the temporary directory; the previous file (and its -wal
// and -shm) goes at the next open, the folder at exit (tests/support/temporary_databases.h).
#include <memory>

#include "engines/sqlite/sqlite_engine.h"
#include "tests/property/property_suite.h"
#include "tests/support/temporary_databases.h"

namespace ledger::property {
namespace {

testing::TemporaryDatabases& Databases() {
  static testing::TemporaryDatabases databases("ledger-sqlite-property");  // removed at exit
  return databases;
}

PropertyContext SqliteContext() {
  PropertyContext context;
  context.engine_name = "sqlite";
  context.default_seed_count = 4;
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> {
    SqliteOptions options;
    options.path = Databases().NextPath();
    options.migrate = true;
    return OpenSqliteEngine(options);
  };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(sqlite, PropertyTest, ::testing::Values(&SqliteContext),
                         PropertyContextName);

}  // namespace ledger::property
