// A fresh, empty database of one engine for one test, named by a URL so that separate
// `ledger` processes and fork()ed children can open it:
//   "sqlite"    a file in the test's own folder;
//   "mysql"     a database of this process on the server of LEDGER_TEST_MYSQL_DSN;
//   "postgres"  this process's private database on the server of LEDGER_TEST_POSTGRES_DSN;
// the server engines only when the build has them. Used by the CLI holds tests and the
// payout saga test (docs/payout_saga_test.cc).
//
//   RequireFreshDatabaseEngine(GetParam());            // skips, or fails under CI=true
//   if (IsSkipped() || HasFatalFailure()) return;
//   absl::StatusOr<std::string> url = FreshDatabaseUrl(GetParam(), folder);
//
// Not thread-safe: one test at a time per process, as ctest runs them.
#ifndef LEDGER_TESTS_CLI_FRESH_DATABASE_H_
#define LEDGER_TESTS_CLI_FRESH_DATABASE_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ledger::testing {

// Skips the current test when `engine` is not built here, or when its server is not
// named; a failure instead under CI=true, or when the server is named but the build
// lacks the engine. Call from SetUp, then check IsSkipped() and HasFatalFailure().
void RequireFreshDatabaseEngine(std::string_view engine);

// Creates or empties the engine's database for this test and returns its URL.
absl::StatusOr<std::string> FreshDatabaseUrl(std::string_view engine,
                                             const std::filesystem::path& folder);

// Drops what FreshDatabaseUrl made on a server (SQLite: nothing, the folder goes).
void DropFreshDatabase(std::string_view engine);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_CLI_FRESH_DATABASE_H_
