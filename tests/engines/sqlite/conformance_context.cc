// The conformance suite's context for the SQLite engine: every open_fresh gets a new
// database file in a per-process temporary folder under /tmp. The previous file (and
// its -wal and -shm) is removed at the next open, the folder at process exit
// (tests/support/temporary_databases.h, shared with the property suite).
#include <memory>
#include <string>

#include "engines/sqlite/sqlite_engine.h"
#include "tests/conformance/conformance_context.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/support/temporary_databases.h"

namespace ledger::testing {
namespace {

TemporaryDatabases& Databases() {
  static TemporaryDatabases databases("ledger-sqlite-conformance");  // removed at exit
  return databases;
}

ConformanceContext SqliteContext() {
  ConformanceContext context;
  context.engine_name = "sqlite";
  context.writers_serialized = true;
  context.one_open_submit_at_a_time = true;
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> {
    SqliteOptions options;
    options.path = Databases().NextPath();
    options.migrate = true;
    return OpenSqliteEngine(options);
  };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(sqlite, ConformanceTest, ::testing::Values(&SqliteContext));

}  // namespace ledger::testing
