// The property suite on the SQLite engine: every run gets a new database file in a
// per-process folder under the temporary directory; the previous file (and its -wal
// and -shm) goes at the next open, the folder at exit (tests/support/temporary_databases.h).
#include <memory>

#include "tests/engines/sqlite/sqlite_test_database.h"
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
  context.open_fresh = [] { return testing::OpenFreshSqliteEngine(Databases()); };
  context.orders_table = "property_orders";  // the same file as the ledger's tables
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(sqlite, PropertyTest, ::testing::Values(&SqliteContext),
                         PropertyContextName);

}  // namespace ledger::property
