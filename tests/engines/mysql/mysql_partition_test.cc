// The partition suite (tests/engines/common/partition_suite.h) on the MySQL engine, on
// a MariaDB server of the test's own, and the cases only MySQL has: the open's session
// setup and migration steps (GET_LOCK), a migration lock held elsewhere, and the
// freezes at Commit's call (the engine sends its buffered writes with it, ahead of
// COMMIT). The bounds are the driver's connect, read and write timeouts. ctest labels:
// partition, mysql.
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_engine.h"
#include "ledger/ledger.h"
#include "tests/engines/common/partition_suite.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/forwarding_engine.h"
#include "tests/support/freezing_proxy.h"
#include "tests/support/open_ledger.h"
#include "tests/support/throwaway_server.h"
#include "tests/support/timed_submit.h"

namespace ledger::testing {
namespace {

constexpr char kDatabase[] = "ledger_partition";
// The driver and InnoDB count whole seconds; each bound is shorter than the one
// around it (lock wait < statement < read).
constexpr absl::Duration kConnectTimeout = absl::Seconds(1);
constexpr absl::Duration kAccountLockWait = absl::Seconds(1);
constexpr absl::Duration kStatementTimeout = absl::Milliseconds(1500);
constexpr absl::Duration kReadTimeout = absl::Seconds(3);

// The administrative session, while the server runs.
MysqlTestServer* admin = nullptr;

MysqlOptions Options(const std::string& url) {
  MysqlOptions options;
  options.connection = url;
  options.pool_size = 4;
  options.connect_timeout = kConnectTimeout;
  options.account_lock_wait = kAccountLockWait;
  options.statement_timeout = kStatementTimeout;
  options.read_timeout = kReadTimeout;
  options.write_timeout = kReadTimeout;
  return options;
}

PartitionContext MysqlPartitionContext() {
  PartitionContext context;
  context.server_name = "MariaDB";
  context.server_kind = ThrowawayServer::Kind::kMysql;
  context.connect_timeout = kConnectTimeout;
  context.account_lock_wait = kAccountLockWait;
  context.statement_timeout = kStatementTimeout;
  context.read_timeout = kReadTimeout;
  // The claim's statement waits the read timeout; its pooled session then counts as
  // stale and the engine tries once on a new one, which waits the connect timeout.
  context.frozen_claim_bound = kReadTimeout + kConnectTimeout;
  // The claim's CALL locks the accounts too (schema/mysql/0009_claim_lock_procedure.sql),
  // so the next round trip is the committing CALL of the write procedure. Its in-doubt
  // answer is read back on a new session first, which adds at most the connect timeout.
  context.commit_follows_claim = true;
  context.lost_commit_read_bound = kConnectTimeout;
  context.attach = [](const ThrowawayServer& server) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlTestServer> connected,
                            MysqlTestServer::Connect(server.url()));
    admin = connected.release();
    return absl::OkStatus();
  };
  context.detach = [] {
    delete admin;
    admin = nullptr;
  };
  context.recreate_database = [] { return admin->RecreateDatabase(kDatabase); };
  context.open = [](const std::string& url) { return OpenMysqlEngine(Options(url)); };
  context.admin_query = [](const std::string& sql) { return admin->QueryText(sql); };
  context.table_prefix = absl::StrCat(kDatabase, ".");
  context.key_column = "`key`";
  // The client's handshake response names the user.
  context.user_in_login = "root";
  // The driver's read (or connect) timeout cut it off: "Lost connection".
  context.frozen_reply_fault = "error 2013";
  context.hold_account_lock =
      [](const std::string& url) -> absl::StatusOr<std::function<void()>> {
    LEDGER_ASSIGN_OR_RETURN(mysql_internal::MysqlSettings settings,
                            mysql_internal::ParseMysqlUrl(url));
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<mysql_internal::MysqlConnection> opened,
                            mysql_internal::MysqlConnection::Open(settings));
    std::shared_ptr<mysql_internal::MysqlConnection> holder = std::move(opened);
    LEDGER_RETURN_IF_ERROR(holder->Query("SELECT id FROM accounts WHERE id = 'alice' FOR UPDATE",
                                         {}, [](const mysql_internal::SqlRow&) {}, "hold alice",
                                         mysql_internal::ErrorContext::kStandalone));
    return std::function<void()>([holder] { holder->Rollback(); });
  };
  // The claim procedure's own error for an account lock that ran out of wait (45003),
  // mapped as LockAccounts' (retryable), not the claim's (in progress).
  context.account_lock_fault = "an account's lock wait ran out";
  // Over MariaDB's max_statement_time.
  context.slow_down_outbox = [] {
    return admin->Execute(absl::StrCat("CREATE TRIGGER ", kDatabase,
                                       ".slow_outbox BEFORE INSERT ON ", kDatabase,
                                       ".outbox_events FOR EACH ROW DO SLEEP(30)"));
  };
  context.stop_slowing_outbox = [] {
    return admin->Execute(absl::StrCat("DROP TRIGGER ", kDatabase, ".slow_outbox"));
  };
  return context;
}

INSTANTIATE_TEST_SUITE_P(mysql, PartitionTest, ::testing::Values(&MysqlPartitionContext));

TEST_P(PartitionTest, AnOpenFrozenWhileSettingUpTheSessionIsUnavailableWithinTheReadTimeout) {
  for (const char* statement :
       {"SET SESSION TRANSACTION ISOLATION", "SELECT CONNECTION_ID", "SET SESSION autocommit"}) {
    SCOPED_TRACE(statement);
    ExpectOpenEndsWithin([&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends(statement); },
                         kReadTimeout);
  }
}

TEST_P(PartitionTest, AnOpenFrozenAtEachMigrationStepIsUnavailableWithinTheReadTimeout) {
  for (const char* statement : {"GET_LOCK", "CREATE TABLE IF NOT EXISTS schema_migrations",
                                "SELECT version FROM schema_migrations"}) {
    SCOPED_TRACE(statement);
    ExpectOpenEndsWithin([&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends(statement); },
                         kReadTimeout);
  }
  // Frozen after the server ran it: the lock granted, the answer held.
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) {
        proxy.FreezeWhenClientSends("GET_LOCK", FreezingProxy::Trigger::kDelivered);
      },
      kReadTimeout);
  // A migration's own statements, on a database that has none yet.
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("INSERT INTO schema_migrations"); },
      kReadTimeout, /*fresh=*/true);
  // Releasing the lock: closing the session releases it too, so the open may succeed.
  ExpectOpenEndsWithin([](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("RELEASE_LOCK"); },
                       kReadTimeout, /*fresh=*/false, /*may_succeed=*/true);
}

// Another migrator holding the lock past migration_lock_wait: a retryable Unavailable
// that says so, within that wait (the read timeout never cuts a live server off).
TEST_P(PartitionTest, AMigrationLockHeldElsewhereIsUnavailableWithinTheMigrationLockWait) {
  const std::string lock = absl::StrCat("CONCAT('ledger_migrate_', SHA1('", kDatabase, "'))");
  ASSERT_EQ(admin->QueryText(absl::StrCat("SELECT GET_LOCK(", lock, ", 0)")).value_or(""), "1");
  MysqlOptions options = Options(url());
  options.migration_lock_wait = absl::Seconds(5);  // longer than the read timeout
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_TRUE(admin->Execute(absl::StrCat("DO RELEASE_LOCK(", lock, ")")).ok());
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_NE(engine.status().message().find("migration_lock_wait"), absl::string_view::npos)
      << engine.status();
  EXPECT_LT(elapsed, options.migration_lock_wait + kPartitionSlack);
  EXPECT_TRUE(OpenMysqlEngine(Options(url())).ok());
}

// A migrator that holds the lock longer than read_timeout is waited for (up to
// migration_lock_wait), not cut off: each try is a round trip of its own. A GET_LOCK
// that waited on the server lost its connection to the read timeout instead.
TEST_P(PartitionTest, AMigrationLockHeldLongerThanTheReadTimeoutIsWaitedFor) {
  const std::string lock = absl::StrCat("CONCAT('ledger_migrate_', SHA1('", kDatabase, "'))");
  ASSERT_EQ(admin->QueryText(absl::StrCat("SELECT GET_LOCK(", lock, ", 0)")).value_or(""), "1");
  std::thread releaser([&] {
    absl::SleepFor(kReadTimeout + absl::Milliseconds(1500));
    EXPECT_TRUE(admin->Execute(absl::StrCat("DO RELEASE_LOCK(", lock, ")")).ok());
  });
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(Options(url()));
  releaser.join();
  EXPECT_TRUE(engine.ok()) << engine.status();
}

// The engine sends its buffered writes with Commit's call, as one CALL of the write
// procedure that commits at its end (schema/mysql/0008_write_procedure.sql): frozen
// there, the CALL goes unanswered and waits in the server's buffers, to run when it
// thaws. The engine's attempt to read the outcome from the key row cannot reach the
// frozen server either (connect_timeout): in doubt, within read_timeout and
// connect_timeout, and the resend finds the key committed or commits it once.
TEST_P(PartitionTest, FrozenBeforeTheBufferedWritesIsInDoubtInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kCommit);
  const SubmitRequest request = TopUp("frozen-before-writes", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/true,
                                  kReadTimeout + kConnectTimeout, request);
}

// Sends a transaction's buffered writes before its Commit (a read inside the
// transaction must see them, so it sends them), leaving COMMIT alone for the freeze.
class WritesSentBeforeCommitEngine final : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override {
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> inner,
                            ForwardingEngine::Begin(options));
    return std::unique_ptr<StorageTransaction>(new Transaction(std::move(inner)));
  }

 private:
  class Transaction final : public ForwardingTransaction {
   public:
    using ForwardingTransaction::ForwardingTransaction;
    absl::Status Commit() override {
      LEDGER_RETURN_IF_ERROR(inner().LoadTransaction("no-such-transaction").status());
      return inner().Commit();
    }
  };
};

TEST_P(PartitionTest, FrozenDuringCommitIsInDoubtInBoundAndTheResendCommitsOnce) {
  ledger_ = std::make_unique<Ledger>(OpenTestLedger(
      std::make_shared<WritesSentBeforeCommitEngine>(faults_), {.attempts_max = 2}));
  FreezeAt(FaultPoint::kCommit);  // reached after the writes went, right before COMMIT
  const SubmitRequest request = TopUp("frozen-during-commit", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/true,
                                  kReadTimeout, request);
}

}  // namespace
}  // namespace ledger::testing
