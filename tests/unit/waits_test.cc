// The shared reading and checking of the server engines' waits (engines/common/waits.h),
// the bounded wait for the migration lock and the split of a migration's statements
// (engines/common/migration.h).
#include "engines/common/waits.h"

#include "absl/time/clock.h"
#include "engines/common/migration.h"
#include "gtest/gtest.h"

namespace ledger::engine_common {
namespace {

TEST(WaitParameterTest, TakesADurationWithItsUnit) {
  EXPECT_EQ(*ParseWaitParameter("mysql", "read_timeout", "250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseWaitParameter("mysql", "read_timeout", "1.5s"), absl::Milliseconds(1500));
  EXPECT_EQ(*ParseWaitParameter("mysql", "read_timeout", "2m"), absl::Minutes(2));
}

TEST(WaitParameterTest, RefusesWhatIsNotABoundNamingTheParameter) {
  for (const char* value : {"5", "", "0", "0s", "-1s", "inf", "soon", "5 s"}) {
    SCOPED_TRACE(value);
    absl::StatusOr<absl::Duration> wait = ParseWaitParameter("postgres", "statement_timeout", value);
    EXPECT_EQ(wait.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(wait.status().message().find("statement_timeout"), absl::string_view::npos)
        << wait.status();
  }
}

TEST(WaitCheckTest, EveryWaitIsPositiveAndFinite) {
  EXPECT_TRUE(CheckWait("mysql", "connect_timeout", absl::Seconds(1)).ok());
  EXPECT_FALSE(CheckWait("mysql", "connect_timeout", absl::ZeroDuration()).ok());
  EXPECT_FALSE(CheckWait("mysql", "connect_timeout", absl::InfiniteDuration()).ok());
  EXPECT_FALSE(CheckWait("mysql", "connect_timeout", -absl::Seconds(1)).ok());
}

TEST(WaitCheckTest, TheClientsBoundMustExceedTheServers) {
  EXPECT_TRUE(CheckWaitExceeds("mysql", "read_timeout", absl::Seconds(2), "statement_timeout",
                               absl::Seconds(1))
                  .ok());
  absl::Status equal = CheckWaitExceeds("mysql", "read_timeout", absl::Seconds(1),
                                        "statement_timeout", absl::Seconds(1));
  EXPECT_EQ(equal.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(equal.message().find("read_timeout (1s) must exceed statement_timeout (1s)"),
            absl::string_view::npos)
      << equal;
}

TEST(WaitUnitsTest, RoundUpAndStayInTheServersRange) {
  EXPECT_EQ(WholeSecondsRoundedUp(absl::Milliseconds(1001), 1), 2);
  EXPECT_EQ(WholeSecondsRoundedUp(absl::Milliseconds(10), 1), 1);
  EXPECT_EQ(WholeSecondsRoundedUp(absl::Seconds(1), 2), 2);
  EXPECT_EQ(WholeSecondsRoundedUp(absl::Hours(1'000'000), 1), 2'147'483'647);
  EXPECT_EQ(WholeMillisecondsRoundedUp(absl::Microseconds(1)), 1);
  EXPECT_EQ(WholeMillisecondsRoundedUp(absl::Microseconds(1500)), 2);
  EXPECT_EQ(WholeMillisecondsRoundedUp(absl::Hours(1'000)), 2'147'483'647);
}

TEST(WaitDefaultsTest, TheClientGivesUpAfterTheServerWould) {
  EXPECT_GT(kReadTimeoutDefault, kStatementTimeoutDefault);
  EXPECT_GT(kReadTimeoutDefault, kAccountLockWaitDefault);
}

TEST(MigrationLockTest, TriesAgainUntilGranted) {
  int tries = 0;
  EXPECT_TRUE(TakeMigrationLock("postgres", absl::Seconds(10), [&]() -> absl::StatusOr<bool> {
    return ++tries == 3;
  }).ok());
  EXPECT_EQ(tries, 3);
}

TEST(MigrationLockTest, GivesUpAfterTheWaitRetryablyNamingIt) {
  int tries = 0;
  const absl::Time start = absl::Now();
  absl::Status taken = TakeMigrationLock("mysql", absl::Milliseconds(300),
                                         [&]() -> absl::StatusOr<bool> {
    ++tries;
    return false;
  });
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_TRUE(absl::IsUnavailable(taken)) << taken;
  EXPECT_NE(taken.message().find("migration_lock_wait"), absl::string_view::npos) << taken;
  EXPECT_GE(tries, 2);  // tried again, and once more at the end of the wait
  EXPECT_GE(elapsed, absl::Milliseconds(300));
  EXPECT_LT(elapsed, absl::Seconds(3));  // a bound, generous for a loaded machine
}

TEST(MigrationLockTest, ATryThatFailsEndsTheWaitWithItsError) {
  absl::Status taken = TakeMigrationLock("postgres", absl::Seconds(10), []() -> absl::StatusOr<bool> {
    return absl::UnavailableError("no reply from the server within read_timeout (2s)");
  });
  EXPECT_NE(taken.message().find("read_timeout"), absl::string_view::npos) << taken;
}

TEST(SplitSqlStatementsTest, SplitsAtSemicolonsEndingALineAndDropsComments) {
  EXPECT_EQ(SplitSqlStatements("-- a comment\nCREATE TABLE a (x INT);\n\nINSERT INTO a\n"
                               "  VALUES (1);\nDO 0"),
            (std::vector<std::string>{"CREATE TABLE a (x INT)", "INSERT INTO a\n  VALUES (1)",
                                      "DO 0\n"}));
}

TEST(SplitSqlStatementsTest, ADelimiterLineChangesTheTerminatorUntilTheNextOne) {
  const std::vector<std::string> statements = SplitSqlStatements(
      "DROP PROCEDURE IF EXISTS p;\n"
      "DELIMITER //\n"
      "CREATE PROCEDURE p()\nBEGIN\n  -- inside\n  DO 1;\n  DO 2;\nEND//\n"
      "delimiter ;\n"
      "DO 3;\n");
  EXPECT_EQ(statements, (std::vector<std::string>{
                            "DROP PROCEDURE IF EXISTS p",
                            "CREATE PROCEDURE p()\nBEGIN\n  DO 1;\n  DO 2;\nEND", "DO 3"}));
}

}  // namespace
}  // namespace ledger::engine_common
