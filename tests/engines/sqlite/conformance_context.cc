// The conformance suite's context for the SQLite engine: every open_fresh gets a new
// database file in a per-process temporary folder under /tmp. The previous file (and
// its -wal and -shm) is removed at the next open, the folder at process exit
// (tests/support/temporary_databases.h, shared with the property suite).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "engines/sqlite/sqlite_engine.h"
#include "sqlite3.h"
#include "tests/conformance/conformance_context.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/engines/sqlite/sqlite_test_database.h"
#include "tests/support/temporary_databases.h"

namespace ledger::testing {
namespace {

TemporaryDatabases& Databases() {
  static TemporaryDatabases databases("ledger-sqlite-conformance");  // removed at exit
  return databases;
}

// Runs `sql` on a connection of the test's own to the database file, as a second
// process would.
absl::Status RunOnFile(const std::string& path, const char* sql) {
  sqlite3* connection = nullptr;
  int result = sqlite3_open_v2(path.c_str(), &connection, SQLITE_OPEN_READWRITE, nullptr);
  if (result == SQLITE_OK) result = sqlite3_busy_timeout(connection, 10'000);
  char* error = nullptr;
  if (result == SQLITE_OK) result = sqlite3_exec(connection, sql, nullptr, nullptr, &error);
  absl::Status status = result == SQLITE_OK
                            ? absl::OkStatus()
                            : absl::InternalError(absl::StrCat(
                                  "sqlite test connection: ",
                                  error != nullptr ? error : sqlite3_errstr(result)));
  sqlite3_free(error);
  sqlite3_close(connection);
  return status;
}

ConformanceContext SqliteContext() {
  ConformanceContext context;
  context.engine_name = "sqlite";
  context.writers_serialized = true;
  context.one_open_submit_at_a_time = true;
  context.open_fresh = [] { return OpenFreshSqliteEngine(Databases()); };
  context.open_again = [] {
    SqliteOptions options;
    options.path = Databases().CurrentPath();
    options.migrate = false;
    return OpenSqliteEngine(options);
  };
  // kill_sessions and await_lock_waiters stay empty: the database is in process (no
  // connection to lose) and its writers are serialized (no deadlock can form).
  // SQLite cannot add a constraint to a table, so a trigger copies each new transaction
  // id into a table whose foreign key, checked at COMMIT, nothing satisfies.
  context.fail_commits = [] {
    return RunOnFile(Databases().CurrentPath(),
                     "CREATE TABLE commit_checks (transaction_id TEXT PRIMARY KEY);"
                     "CREATE TABLE commit_checked (transaction_id TEXT REFERENCES"
                     " commit_checks (transaction_id) DEFERRABLE INITIALLY DEFERRED);"
                     "CREATE TRIGGER commit_check AFTER INSERT ON transactions"
                     " BEGIN INSERT INTO commit_checked VALUES (NEW.id); END;");
  };
  context.stop_failing_commits = [] {
    return RunOnFile(Databases().CurrentPath(),
                     "DROP TRIGGER commit_check; DROP TABLE commit_checked;"
                     " DROP TABLE commit_checks;");
  };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(sqlite, ConformanceTest, ::testing::Values(&SqliteContext));

}  // namespace ledger::testing
