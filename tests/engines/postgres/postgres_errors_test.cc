// The PostgreSQL engine's error mapping and connection-string handling: no server needed.
#include "engines/postgres/postgres_errors.h"

#include "engines/postgres/postgres_connection.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "pqxx/except"

namespace ledger::postgres_internal {
namespace {

template <typename Exception>
absl::Status MapThrown(const Exception& exception, PostgresErrorContext context) {
  return GuardPostgres(context, [&]() -> absl::Status { throw exception; });
}

pqxx::sql_error SqlError(const char* sqlstate) {
  return pqxx::sql_error("ERROR:  simulated\n", "SELECT 1", sqlstate);
}

TEST(PostgresErrors, DeadlockAndSerializationFailureAreRetryable) {
  EXPECT_TRUE(IsRetryable(MapThrown(pqxx::deadlock_detected("deadlock"), {.operation = "x"})));
  EXPECT_TRUE(
      IsRetryable(MapThrown(pqxx::serialization_failure("serialization"), {.operation = "x"})));
  EXPECT_TRUE(IsRetryable(MapThrown(SqlError("40P01"), {.operation = "x"})));
  EXPECT_TRUE(IsRetryable(MapThrown(SqlError("40001"), {.operation = "x"})));
}

TEST(PostgresErrors, LockTimeoutIsInProgressOnlyInTheClaim) {
  EXPECT_TRUE(IsInProgress(
      MapThrown(SqlError("55P03"), {.operation = "claim", .phase = engine_common::ErrorPhase::kClaim})));
  // A session lock_timeout hit on an account lock is not "another submit of this key".
  absl::Status on_accounts = MapThrown(SqlError("55P03"), {.operation = "lock accounts"});
  EXPECT_FALSE(IsInProgress(on_accounts));
  EXPECT_TRUE(IsRetryable(on_accounts));
}

TEST(PostgresErrors, LostConnectionIsUnavailableBeforeCommitAndInDoubtDuringIt) {
  absl::Status before = MapThrown(pqxx::broken_connection("gone"), {.operation = "write"});
  EXPECT_EQ(before.code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(IsInDoubt(before));
  EXPECT_TRUE(ConnectionLost(before));

  absl::Status during = MapThrown(pqxx::broken_connection("gone"),
                                  {.operation = "commit", .phase = engine_common::ErrorPhase::kCommit});
  EXPECT_TRUE(IsInDoubt(during)) << during;
  EXPECT_TRUE(ConnectionLost(during));
  EXPECT_TRUE(IsInDoubt(MapThrown(pqxx::in_doubt_error("unknown"), {.operation = "commit"})));
  EXPECT_TRUE(IsInDoubt(
      MapThrown(SqlError("57P01"), {.operation = "commit", .phase = engine_common::ErrorPhase::kCommit})));
  EXPECT_EQ(MapThrown(SqlError("08006"), {.operation = "x"}).code(),
            absl::StatusCode::kUnavailable);
}

TEST(PostgresErrors, UniqueViolationFollowsThePhase) {
  EXPECT_EQ(MapThrown(SqlError("23505"), {.operation = "insert account"}).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(IsRetryable(MapThrown(
      SqlError("23505"), {.operation = "write", .phase = engine_common::ErrorPhase::kWrite})));
}

TEST(PostgresErrors, UnclassifiedErrorDuringCommitIsInDoubt) {
  EXPECT_TRUE(IsInDoubt(MapThrown(SqlError("XX000"), {.operation = "commit",
                                                      .phase = engine_common::ErrorPhase::kCommit})));
  EXPECT_EQ(MapThrown(SqlError("XX000"), {.operation = "x"}).code(), absl::StatusCode::kInternal);
}

TEST(PostgresErrors, OtherStatesMapBySqlstateClass) {
  EXPECT_EQ(MapThrown(SqlError("23503"), {.operation = "x"}).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MapThrown(SqlError("22021"), {.operation = "x"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MapThrown(SqlError("57014"), {.operation = "x"}).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(MapThrown(SqlError("42P01"), {.operation = "x"}).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(MapThrown(SqlError("XX000"), {.operation = "x"}).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(MapThrown(std::runtime_error("boom"), {.operation = "x"}).code(),
            absl::StatusCode::kInternal);
}

TEST(PostgresErrors, MessageNamesTheOperationOnOneLine) {
  absl::Status status = MapThrown(SqlError("40P01"), {.operation = "lock accounts"});
  EXPECT_NE(status.message().find("lock accounts"), absl::string_view::npos) << status;
  EXPECT_EQ(status.message().find('\n'), absl::string_view::npos) << status;
}

TEST(PostgresConnectionString, ClaimParameterSelectsTheModeAndIsRemoved) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      ParsePostgresConnection("postgresql://app@db:5432/ledger?claim=row&sslmode=disable",
                              PostgresClaimMode::kAdvisoryLock);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->claim_mode, PostgresClaimMode::kRow);
  EXPECT_EQ(parsed->connection, "postgresql://app@db:5432/ledger?sslmode=disable");

  parsed = ParsePostgresConnection("postgres://db/ledger?claim=advisory", PostgresClaimMode::kRow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->claim_mode, PostgresClaimMode::kAdvisoryLock);
  EXPECT_EQ(parsed->connection, "postgres://db/ledger");
}

TEST(PostgresConnectionString, AQuestionMarkInThePasswordDoesNotStartTheQuery) {
  absl::StatusOr<ParsedPostgresConnection> parsed = ParsePostgresConnection(
      "postgresql://app:pa?ss@db/ledger?claim=row", PostgresClaimMode::kAdvisoryLock);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->claim_mode, PostgresClaimMode::kRow);
  EXPECT_EQ(parsed->connection, "postgresql://app:pa?ss@db/ledger");
}

TEST(PostgresConnectionString, WithoutClaimParameterTheOptionDecides) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      ParsePostgresConnection("postgresql://db/ledger?sslmode=require", PostgresClaimMode::kRow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->claim_mode, PostgresClaimMode::kRow);
  EXPECT_EQ(parsed->connection, "postgresql://db/ledger?sslmode=require");

  parsed = ParsePostgresConnection("host=db dbname=ledger", PostgresClaimMode::kAdvisoryLock);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->connection, "host=db dbname=ledger");
}

TEST(PostgresConnectionString, UnknownClaimModeIsInvalidArgument) {
  EXPECT_EQ(ParsePostgresConnection("postgresql://db/ledger?claim=mutex",
                                    PostgresClaimMode::kAdvisoryLock)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PostgresConnectionString, OpeningWithBadPoolSizeIsInvalidArgument) {
  PostgresOptions options;
  options.connection = "postgresql://127.0.0.1:1/none";
  options.pool_size = 0;
  EXPECT_EQ(OpenPostgresEngine(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PostgresConnectionString, UnreachableServerIsUnavailable) {
  PostgresOptions options;
  options.connection = "postgresql://127.0.0.1:1/none?connect_timeout=2";
  EXPECT_EQ(OpenPostgresEngine(options).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ledger::postgres_internal
