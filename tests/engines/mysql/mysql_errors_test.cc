// The MySQL engine's error mapping (mysql_errors.h) and URL parsing: pure functions,
// no server needed.
#include "engines/mysql/mysql_errors.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_engine_internal.h"
#include "gtest/gtest.h"
#include "base/status.h"

namespace ledger::mysql_internal {
namespace {

MysqlError ServerError(int code, std::string sql_state = "HY000") {
  return MysqlError{code, std::move(sql_state), "server says no", false};
}

absl::Status Mapped(int code, ErrorContext context, std::string sql_state = "HY000") {
  return MysqlErrorStatus(ServerError(code, std::move(sql_state)), "a statement", context);
}

TEST(MysqlErrorsTest, DeadlockIsRetryableEverywhere) {
  for (ErrorContext context : {ErrorContext::kClaim, ErrorContext::kTransaction,
                               ErrorContext::kWrite, ErrorContext::kCommit,
                               ErrorContext::kStandalone}) {
    EXPECT_TRUE(IsRetryable(Mapped(kErrorDeadlock, context)));
  }
}

TEST(MysqlErrorsTest, LockWaitTimeoutIsInProgressOnlyInTheClaim) {
  EXPECT_TRUE(IsInProgress(Mapped(kErrorLockWaitTimeout, ErrorContext::kClaim)));
  EXPECT_TRUE(IsInProgress(Mapped(kErrorLockNowait, ErrorContext::kClaim)));
  absl::Status on_account = Mapped(kErrorLockWaitTimeout, ErrorContext::kTransaction);
  EXPECT_FALSE(IsInProgress(on_account));
  // The error table: a lock wait outside the claim is retryable on every engine.
  EXPECT_TRUE(IsRetryable(on_account));
  EXPECT_TRUE(IsRetryable(Mapped(kErrorLockWaitTimeout, ErrorContext::kStandalone)));
}

TEST(MysqlErrorsTest, LostConnectionIsUnavailableBeforeCommitAndInDoubtDuringIt) {
  // 2026: a TLS stream that broke (a read timeout under TLS reports this one).
  for (int code : {2002, 2003, 2006, 2013, 2026, 2055, 1927, 1053, 1317, 4031}) {
    SCOPED_TRACE(code);
    EXPECT_TRUE(IsConnectionLost(ServerError(code)));
    EXPECT_TRUE(BreaksConnection(ServerError(code)));
    EXPECT_EQ(Mapped(code, ErrorContext::kTransaction).code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(Mapped(code, ErrorContext::kClaim).code(), absl::StatusCode::kUnavailable);
    EXPECT_TRUE(IsInDoubt(Mapped(code, ErrorContext::kCommit)));
  }
  // SQLSTATE class 08 is a connection failure whatever the number.
  EXPECT_TRUE(IsConnectionLost(ServerError(9999, "08S01")));
}

TEST(MysqlErrorsTest, AnyClientErrorWhileConnectingIsUnavailable) {
  EXPECT_EQ(Mapped(2005, ErrorContext::kConnect).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Mapped(2005, ErrorContext::kStandalone).code(), absl::StatusCode::kInternal);
}

TEST(MysqlErrorsTest, AnyOtherCommitFailureIsInDoubt) {
  EXPECT_TRUE(IsInDoubt(Mapped(1180, ErrorContext::kCommit)));
  MysqlError driver{0, "HY000", "Connection has been closed", true};
  EXPECT_TRUE(IsInDoubt(MysqlErrorStatus(driver, "commit", ErrorContext::kCommit)));
  EXPECT_TRUE(BreaksConnection(driver));
}

TEST(MysqlErrorsTest, DuplicateKeyInASubmitsWritesIsRetryableElsewhereAlreadyExists) {
  EXPECT_TRUE(IsRetryable(Mapped(kErrorDuplicateKey, ErrorContext::kWrite)));
  EXPECT_EQ(Mapped(kErrorDuplicateKey, ErrorContext::kClaim).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Mapped(kErrorDuplicateKey, ErrorContext::kStandalone).code(),
            absl::StatusCode::kAlreadyExists);
  // The rest of a write maps as any other statement does.
  EXPECT_EQ(Mapped(2013, ErrorContext::kWrite).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(IsRetryable(Mapped(kErrorLockWaitTimeout, ErrorContext::kWrite)));
}

TEST(MysqlErrorsTest, StatementErrorsMapByMeaning) {
  EXPECT_EQ(Mapped(kErrorForeignKeyMissingParent, ErrorContext::kStandalone).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Mapped(1406, ErrorContext::kStandalone).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Mapped(4025, ErrorContext::kStandalone).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Mapped(1045, ErrorContext::kConnect).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Mapped(1146, ErrorContext::kStandalone).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Mapped(1040, ErrorContext::kConnect).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Mapped(1064, ErrorContext::kStandalone).code(), absl::StatusCode::kInternal);
  // The server's statement timeout: MariaDB's max_statement_time, MySQL's max_execution_time.
  EXPECT_EQ(Mapped(1969, ErrorContext::kWrite).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Mapped(3024, ErrorContext::kStandalone).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(BreaksConnection(ServerError(kErrorDuplicateKey)));
}

// A refused session is one answer whatever refused it; an unreachable server another.
TEST(MysqlErrorsTest, UnknownDatabaseAndBadCredentialsAreRefusedUnreachableIsUnavailable) {
  for (int refused : {1049, 1045, 1044}) {
    absl::Status status = Mapped(refused, ErrorContext::kConnect);
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << refused << ": " << status;
    EXPECT_EQ(TagOf(status), ErrorTag::kNone) << status;
  }
  for (int unreachable : {2002, 2003, 2005, 2013, 2026}) {
    EXPECT_EQ(Mapped(unreachable, ErrorContext::kConnect).code(), absl::StatusCode::kUnavailable)
        << unreachable;
  }
}

// The TLS the URL asks for cannot be had: refused (exit 10), not worth another try. A TLS
// read cut off while connecting (the same code) stays unavailable.
TEST(MysqlErrorsTest, ATlsRefusalWhileConnectingIsRefusedATlsTimeoutIsUnavailable) {
  for (const char* refusal :
       {"TLS/SSL error: ssl_mode=required but the session is not encrypted",
        "SSL is required, but the server does not support it",
        "TLS/SSL error: Validation of SSL server certificate failed",
        "TLS/SSL error: certificate verify failed"}) {
    const MysqlError error{2026, "HY000", refusal, false};
    EXPECT_EQ(MysqlErrorStatus(error, "connect", ErrorContext::kConnect).code(),
              absl::StatusCode::kPermissionDenied)
        << refusal;
  }
  const MysqlError cut_off{2026, "HY000", "TLS/SSL error: Connection timed out", false};
  EXPECT_EQ(MysqlErrorStatus(cut_off, "connect", ErrorContext::kConnect).code(),
            absl::StatusCode::kUnavailable);
}

TEST(MysqlErrorsTest, MessagesNameTheStatementAndTheServerError) {
  absl::Status status = Mapped(kErrorDuplicateKey, ErrorContext::kStandalone);
  EXPECT_NE(status.message().find("a statement"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("1062"), absl::string_view::npos) << status;
}

TEST(MysqlClaimWaitTest, ClaimWaitIsWholeSecondsRoundedUpWithInnodbsMinimum) {
  EXPECT_EQ(ClaimLockWaitSeconds(WaitPolicy::FailFast()), 1);
  EXPECT_EQ(ClaimLockWaitSeconds(WaitPolicy{absl::Milliseconds(1)}), 1);
  EXPECT_EQ(ClaimLockWaitSeconds(WaitPolicy{absl::Milliseconds(1500)}), 2);
  EXPECT_EQ(ClaimLockWaitSeconds(WaitPolicy{absl::Seconds(10)}), 10);
  EXPECT_EQ(ClaimLockWaitSeconds(WaitPolicy{absl::InfiniteDuration()}), kLockWaitSecondsMax);
}

TEST(MysqlUrlTest, ParsesUserPasswordHostPortAndDatabase) {
  absl::StatusOr<MysqlSettings> settings =
      ParseMysqlUrl("mysql://app:s%40cret%3A1@db.example:3307/ledger");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->user, "app");
  EXPECT_EQ(settings->password, "s@cret:1");
  EXPECT_EQ(settings->host, "db.example");
  EXPECT_EQ(settings->port, 3307);
  EXPECT_EQ(settings->database, "ledger");
  EXPECT_EQ(settings->Describe(), "app@db.example:3307/ledger");  // no password
}

TEST(MysqlUrlTest, DefaultsToPort3306AndKeepsLocalhostAsTcp) {
  absl::StatusOr<MysqlSettings> settings = ParseMysqlUrl("mysql://root@localhost/ledger_test");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->host, "localhost");
  EXPECT_EQ(settings->port, 3306);
  EXPECT_EQ(settings->password, "");
}

TEST(MysqlUrlTest, WaitParametersOverrideTheCallersWaits) {
  MysqlWaits waits;
  waits.read_timeout = absl::Seconds(50);
  absl::StatusOr<MysqlSettings> settings = ParseMysqlUrl(
      "mysql://app@db/ledger?connect_timeout=2s&account_lock_wait=1500ms&statement_timeout=3s"
      "&write_timeout=4s&pool_acquire_wait=250ms",
      waits);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->waits.connect_timeout, absl::Seconds(2));
  EXPECT_EQ(settings->waits.account_lock_wait, absl::Milliseconds(1500));
  EXPECT_EQ(settings->waits.AccountLockWaitSeconds(), 2);  // InnoDB counts whole seconds
  EXPECT_EQ(settings->waits.statement_timeout, absl::Seconds(3));
  EXPECT_EQ(settings->waits.read_timeout, absl::Seconds(50));  // the caller's, untouched
  EXPECT_EQ(settings->waits.write_timeout, absl::Seconds(4));
  EXPECT_EQ(settings->waits.pool_acquire_wait, absl::Milliseconds(250));
  EXPECT_EQ(settings->database, "ledger");
}

TEST(MysqlUrlTest, TlsParametersAreReadAndDecoded) {
  absl::StatusOr<MysqlSettings> settings = ParseMysqlUrl(
      "mysql://app:pa?ss@db/ledger?ssl_mode=VERIFY_IDENTITY&ssl_ca=/etc/ca%20dir/ca.pem"
      "&ssl_cert=/c.pem&ssl_key=/k.pem");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->password, "pa?ss");  // the query starts after the credentials
  EXPECT_EQ(settings->tls.mode, MysqlTlsMode::kVerifyIdentity);
  EXPECT_EQ(settings->tls.ca, "/etc/ca dir/ca.pem");
  EXPECT_EQ(settings->tls.cert, "/c.pem");
  EXPECT_EQ(settings->tls.key, "/k.pem");
  settings = ParseMysqlUrl("mysql://app@db/ledger?ssl_mode=required");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->tls.mode, MysqlTlsMode::kRequired);
  EXPECT_EQ(ParseMysqlUrl("mysql://app@db/ledger")->tls.mode, MysqlTlsMode::kDisabled);
}

TEST(MysqlUrlTest, BadParametersAreInvalidArgumentNamingWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"mysql://app@db/ledger?read_timeout=5", "read_timeout"},  // no unit
      {"mysql://app@db/ledger?read_timeout=0s", "read_timeout"},
      {"mysql://app@db/ledger?read_timeout=20s", "statement_timeout"},  // not above it
      {"mysql://app@db/ledger?statement_timeout=10s", "account_lock_wait"},
      // InnoDB waits 2 s for 1.2 s: longer than the statement may run.
      {"mysql://app@db/ledger?statement_timeout=1500ms&account_lock_wait=1200ms",
       "account_lock_wait"},
      {"mysql://app@db/ledger?ssl_mode=verify_ca", "ssl_ca"},
      {"mysql://app@db/ledger?ssl_mode=strict", "ssl_mode"},
      {"mysql://app@db/ledger?ssl_ca=/ca.pem", "ssl_mode"},
      {"mysql://app@db/ledger?ssl_mode=required&ssl_cert=/c.pem", "ssl_key"},
      {"mysql://app@db/ledger?sslmode=required", "sslmode"},
      {"mysql://app@db/ledger?ssl_mode=required&ssl_mode=disabled", "twice"}};
  for (const auto& [url, named] : cases) {
    SCOPED_TRACE(url);
    absl::Status refused = ParseMysqlUrl(url).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(refused.message().find(named), absl::string_view::npos) << refused;
  }
}

TEST(MysqlUrlTest, MalformedUrlsAreInvalidArgument) {
  for (const char* url : {"postgres://root@h/db", "mysql://h/db", "mysql://root@h",
                          "mysql://root@h/", "mysql://root@h:0/db", "mysql://root@h:70000/db",
                          "mysql://root@h:x/db", "mysql://root@/db", "mysql://@h/db",
                          "mysql://root@h/db?ssl=1", "mysql://ro%2@h/db"}) {
    SCOPED_TRACE(url);
    EXPECT_EQ(ParseMysqlUrl(url).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace ledger::mysql_internal
