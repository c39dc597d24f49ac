// The PostgreSQL engine's error mapping and connection-string handling: no server needed.
#include "engines/postgres/postgres_errors.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

// libpq's own words for each failed connect (PostgreSQL 15): an unreachable, busy or
// starting server is Unavailable (try again), a refused session PermissionDenied.
TEST(PostgresErrors, AFailedConnectIsUnavailableUnlessTheServerRefusedTheSession) {
  const char* prefix = "connection to server at \"127.0.0.1\", port 5432 failed: ";
  for (const char* unreachable :
       {"Connection refused\n\tIs the server running on that host and accepting TCP/IP "
        "connections?\n",
        "timeout expired\n", "could not translate host name \"db\" to address: Name or service "
        "not known\n",
        "server closed the connection unexpectedly\n",
        "FATAL:  sorry, too many clients already\n",
        "FATAL:  remaining connection slots are reserved for non-replication superuser "
        "connections\n",
        "FATAL:  the database system is starting up\n",
        "FATAL:  the database system is shutting down\n"}) {
    absl::Status status = MapThrown(pqxx::broken_connection(absl::StrCat(prefix, unreachable)),
                                    {.operation = "connect"});
    EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  }
  for (const char* refused :
       {"FATAL:  database \"nodb\" does not exist\n",
        "FATAL:  password authentication failed for user \"app\"\n",
        "FATAL:  role \"nobody\" does not exist\n",
        "FATAL:  no pg_hba.conf entry for host \"127.0.0.1\", user \"app\", database \"db\", "
        "no encryption\n",
        "FATAL:  permission denied for database \"db\"\nDETAIL:  User does not have CONNECT "
        "privilege.\n",
        "fe_sendauth: no password supplied\n"}) {
    absl::Status status = MapThrown(pqxx::broken_connection(absl::StrCat(prefix, refused)),
                                    {.operation = "connect"});
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
    EXPECT_EQ(TagOf(status), ErrorTag::kNone) << status;
  }
  // Once connected, a broken connection is a lost one whatever it says.
  EXPECT_EQ(MapThrown(pqxx::broken_connection("FATAL:  database \"x\" does not exist"),
                      {.operation = "write"})
                .code(),
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

// Seen for real: four concurrent batches of 8,190 keys on a server with
// max_locks_per_transaction 64 and max_connections 200.
TEST(PostgresErrors, AFullLockTableInTheClaimIsUnavailableAndSaysWhatToDo) {
  absl::Status claim = MapThrown(
      SqlError("53200"), {.operation = "claim key", .phase = engine_common::ErrorPhase::kClaim});
  EXPECT_EQ(claim.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(claim.message(), "max_locks_per_transaction")) << claim;
  absl::Status elsewhere = MapThrown(SqlError("53200"), {.operation = "lock accounts"});
  EXPECT_EQ(elsewhere.code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(absl::StrContains(elsewhere.message(), "max_locks_per_transaction")) << elsewhere;
}

TEST(PostgresErrors, MessageNamesTheOperationOnOneLine) {
  absl::Status status = MapThrown(SqlError("40P01"), {.operation = "lock accounts"});
  EXPECT_NE(status.message().find("lock accounts"), absl::string_view::npos) << status;
  EXPECT_EQ(status.message().find('\n'), absl::string_view::npos) << status;
}

absl::StatusOr<ParsedPostgresConnection> Parse(const std::string& connection,
                                               PostgresClaimMode mode = PostgresClaimMode::kAdvisoryLock) {
  PostgresOptions options;
  options.connection = connection;
  options.claim_mode = mode;
  return ParsePostgresConnection(options);
}

// What the engine adds to every connection string with the default options.
constexpr char kDefaultLibpqWaits[] =
    "connect_timeout=10&keepalives=1&keepalives_idle=30&keepalives_interval=10&"
    "keepalives_count=3&tcp_user_timeout=30000";

TEST(PostgresConnectionString, ClaimParameterSelectsTheModeAndIsRemoved) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      Parse("postgresql://app@db:5432/ledger?claim=row&sslmode=disable");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.claim_mode, PostgresClaimMode::kRow);
  EXPECT_EQ(parsed->connection,
            absl::StrCat("postgresql://app@db:5432/ledger?sslmode=disable&", kDefaultLibpqWaits));

  parsed = Parse("postgres://db/ledger?claim=advisory", PostgresClaimMode::kRow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.claim_mode, PostgresClaimMode::kAdvisoryLock);
  EXPECT_EQ(parsed->connection, absl::StrCat("postgres://db/ledger?", kDefaultLibpqWaits));
}

TEST(PostgresConnectionString, OneRoundTripParameterIsOnOrOffAndIsRemoved) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      Parse("postgresql://db/ledger?one_round_trip=on&sslmode=disable");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->options.one_round_trip);
  EXPECT_EQ(parsed->connection,
            absl::StrCat("postgresql://db/ledger?sslmode=disable&", kDefaultLibpqWaits));
  parsed = Parse("postgresql://db/ledger?one_round_trip=off");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->options.one_round_trip);
  EXPECT_FALSE(Parse("postgresql://db/ledger").value().options.one_round_trip);  // the default
  parsed = Parse("postgresql://db/ledger?one_round_trip=yes");
  EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << parsed.status();
  EXPECT_NE(parsed.status().message().find("one_round_trip must be on or off"), std::string::npos)
      << parsed.status();
}

TEST(PostgresConnectionString, AQuestionMarkInThePasswordDoesNotStartTheQuery) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      Parse("postgresql://app:pa?ss@db/ledger?claim=row");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.claim_mode, PostgresClaimMode::kRow);
  EXPECT_EQ(parsed->connection, absl::StrCat("postgresql://app:pa?ss@db/ledger?", kDefaultLibpqWaits));
}

TEST(PostgresConnectionString, WithoutClaimParameterTheOptionDecides) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      Parse("postgresql://db/ledger?sslmode=require", PostgresClaimMode::kRow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.claim_mode, PostgresClaimMode::kRow);
  EXPECT_EQ(parsed->connection,
            absl::StrCat("postgresql://db/ledger?sslmode=require&", kDefaultLibpqWaits));
}

TEST(PostgresConnectionString, TheOptionsWaitsGoToLibpqInItsUnits) {
  PostgresOptions options;
  options.connection = "postgresql://db/ledger";
  options.connect_timeout = absl::Milliseconds(2500);  // whole seconds, rounded up
  options.keepalives_idle = absl::Seconds(5);
  options.keepalives_interval = absl::Seconds(2);
  options.keepalives_count = 6;
  options.tcp_user_timeout = absl::Milliseconds(1500);
  absl::StatusOr<ParsedPostgresConnection> parsed = ParsePostgresConnection(options);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->connection,
            "postgresql://db/ledger?connect_timeout=3&keepalives=1&keepalives_idle=5&"
            "keepalives_interval=2&keepalives_count=6&tcp_user_timeout=1500");
}

TEST(PostgresConnectionString, ALibpqWaitInTheUriWinsOverTheOption) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      Parse("postgresql://db/ledger?connect_timeout=4&tcp_user_timeout=900");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->connection,
            "postgresql://db/ledger?connect_timeout=4&tcp_user_timeout=900&keepalives=1&"
            "keepalives_idle=30&keepalives_interval=10&keepalives_count=3");
}

TEST(PostgresConnectionString, AKeywordStringGetsTheWaitsInFrontSoItsOwnWin) {
  absl::StatusOr<ParsedPostgresConnection> parsed = Parse("host=db dbname=ledger connect_timeout=4");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->connection,
            "connect_timeout=10 keepalives=1 keepalives_idle=30 keepalives_interval=10 "
            "keepalives_count=3 tcp_user_timeout=30000 host=db dbname=ledger connect_timeout=4");
}

TEST(PostgresConnectionString, TheEnginesWaitParametersSetTheirFieldsAndAreRemoved) {
  absl::StatusOr<ParsedPostgresConnection> parsed =
      Parse("postgresql://db/ledger?account_lock_wait=1500ms&statement_timeout=5s&"
            "read_timeout=1m&pool_acquire_wait=250ms&sslmode=require");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.account_lock_wait, absl::Milliseconds(1500));
  EXPECT_EQ(parsed->options.statement_timeout, absl::Seconds(5));
  EXPECT_EQ(parsed->options.read_timeout, absl::Minutes(1));
  EXPECT_EQ(parsed->options.pool_acquire_wait, absl::Milliseconds(250));
  EXPECT_EQ(parsed->connection,
            absl::StrCat("postgresql://db/ledger?sslmode=require&", kDefaultLibpqWaits));
}

TEST(PostgresConnectionString, BadWaitsAreInvalidArgumentNamingTheWait) {
  for (const char* url :
       {"postgresql://db/ledger?read_timeout=5",           // no unit
        "postgresql://db/ledger?read_timeout=0s",          // not positive
        "postgresql://db/ledger?read_timeout=inf",         // not finite
        "postgresql://db/ledger?statement_timeout=-1s",
        "postgresql://db/ledger?read_timeout=20s",         // not above statement_timeout (30 s)
        "postgresql://db/ledger?statement_timeout=10s"}) {  // not above account_lock_wait
    SCOPED_TRACE(url);
    absl::StatusOr<ParsedPostgresConnection> parsed = Parse(url);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), "read_timeout") ||
                absl::StrContains(parsed.status().message(), "statement_timeout"))
        << parsed.status();
  }
  PostgresOptions options;
  options.connection = "postgresql://db/ledger";
  options.account_lock_wait = absl::ZeroDuration();  // would mean "forever" to the server
  EXPECT_EQ(ParsePostgresConnection(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.account_lock_wait = absl::Seconds(1);
  options.keepalives_count = 0;
  EXPECT_EQ(ParsePostgresConnection(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PostgresConnectionString, AnUnknownParameterIsRefusedByName) {
  absl::Status refused = Parse("postgresql://db/ledger?sslmod=require").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("sslmod"), absl::string_view::npos) << refused;
}

TEST(PostgresConnectionString, UnknownClaimModeIsInvalidArgument) {
  EXPECT_EQ(Parse("postgresql://db/ledger?claim=mutex").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PostgresErrors, ARoundTripCutOffByTheReplyDeadlineIsALostConnection) {
  absl::Status before = NoReplyStatus({.operation = "lock accounts"}, absl::Seconds(2));
  EXPECT_TRUE(absl::IsUnavailable(before)) << before;
  EXPECT_NE(before.message().find("read_timeout (2s)"), absl::string_view::npos) << before;
  EXPECT_TRUE(IsInDoubt(
      NoReplyStatus({.operation = "commit", .phase = engine_common::ErrorPhase::kCommit},
                    absl::Seconds(2))));
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
