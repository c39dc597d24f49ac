// Reads off the primary on one PostgreSQL server: the read URL names another schema of
// the test database (on a real deployment, a standby: tests/cluster covers that), reached
// only by reads that allow it.
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/common/read_engine_urls.h"
#include "tests/engines/postgres/postgres_test_database.h"

namespace ledger::testing {
namespace {

TEST(PostgresReadEngineTest, ReadsAllowingAReplicaReachTheReadUrlAndWritesThePrimary) {
  if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
    if (RunningInCi()) GTEST_FAIL() << reason;
    GTEST_SKIP() << reason;
  }
  ASSERT_TRUE(ResetPostgresTestDatabase().ok());
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  ASSERT_TRUE(QueryPostgresValue("DROP SCHEMA IF EXISTS read_primary CASCADE; "
                                 "DROP SCHEMA IF EXISTS read_replica CASCADE")
                  .ok());
  const std::string separator = dsn->find('?') == std::string::npos ? "?" : "&";
  ExpectReadsRoutedByUrl(absl::StrCat(*dsn, separator, "schema=read_primary"),
                         absl::StrCat(*dsn, separator, "schema=read_replica"));
}

}  // namespace
}  // namespace ledger::testing
