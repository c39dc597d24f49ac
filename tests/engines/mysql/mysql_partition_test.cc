// Every wait of the MySQL engine is bounded, on a MariaDB server of this test's own
// (ThrowawayServer), frozen with SIGSTOP at each point of a submit: its kernel still
// accepts the client's bytes, so only the engine's own bounds (the driver's connect,
// read and write timeouts) can end the wait. Before COMMIT a frozen submit faults
// (Unavailable: nothing written; that includes the buffered writes the engine sends
// with Commit's call, ahead of COMMIT); during COMMIT it is in doubt; either way it returns
// within its bound, and resending the same key after the server thaws commits exactly
// once. The waits are small here (a second or two) so the test stays quick. ctest
// label: partition.
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/forwarding_engine.h"
#include "tests/support/freezing_proxy.h"
#include "tests/support/open_ledger.h"
#include "tests/support/throwaway_server.h"
#include "tests/support/timed_submit.h"

namespace ledger::testing {
namespace {

constexpr char kAsset[] = "CREDITS";
constexpr char kDatabase[] = "ledger_partition";
// The driver and InnoDB count whole seconds; each bound is shorter than the one
// around it (lock wait < statement < read).
constexpr absl::Duration kConnectTimeout = absl::Seconds(1);
constexpr absl::Duration kAccountLockWait = absl::Seconds(1);
constexpr absl::Duration kStatementTimeout = absl::Milliseconds(1500);
constexpr absl::Duration kReadTimeout = absl::Seconds(3);
// How much later than its bound a call may come back on a busy test machine and still
// count as bounded; a wait that is not bounded hangs until the server thaws.
constexpr absl::Duration kSlack = absl::Seconds(4);
constexpr int kResendsMax = 10;

class MysqlPartitionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ThrowawayServer>> started =
        ThrowawayServer::Start(ThrowawayServer::Kind::kMysql);
    if (!started.ok()) {
      *start_failure_ = started.status();
      return;
    }
    server_ = started->release();
    absl::StatusOr<std::unique_ptr<MysqlTestServer>> admin = MysqlTestServer::Connect(server_->url());
    if (!admin.ok()) {
      *start_failure_ = admin.status();
      return;
    }
    admin_ = admin->release();
  }
  static void TearDownTestSuite() {
    delete admin_;
    admin_ = nullptr;
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    if (admin_ == nullptr) {
      if (RunningInCi()) GTEST_FAIL() << "no MariaDB server of the test's own: " << *start_failure_;
      GTEST_SKIP() << "no MariaDB server of the test's own: " << *start_failure_;
    }
    absl::StatusOr<std::string> url = admin_->RecreateDatabase(kDatabase);
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(Options());
    ASSERT_TRUE(engine.ok()) << engine.status();
    faults_ = std::make_shared<FaultInjectingEngine>(std::shared_ptr<Engine>(std::move(*engine)));
    // Two attempts: a retryable lock wait is retried once, so its bound stays small.
    ledger_ = std::make_unique<Ledger>(OpenTestLedger(faults_, {.attempts_max = 2}));
    ASSERT_TRUE(ledger_->DefineAsset({kAsset, 0}).ok());
    ASSERT_TRUE(
        ledger_->OpenAccount({.id = "issuance", .asset = kAsset, .allow_negative = true}).ok());
    ASSERT_TRUE(ledger_->OpenAccount({.id = "alice", .asset = kAsset}).ok());
  }

  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_TRUE(server_->Thaw().ok());  // whatever the test did
    }
    if (faults_ != nullptr) faults_->Clear();
  }

  MysqlOptions Options() const {
    MysqlOptions options;
    options.connection = url_;
    options.pool_size = 4;
    options.connect_timeout = kConnectTimeout;
    options.account_lock_wait = kAccountLockWait;
    options.statement_timeout = kStatementTimeout;
    options.read_timeout = kReadTimeout;
    options.write_timeout = kReadTimeout;
    return options;
  }

  static std::string AdminValue(const std::string& sql) {
    return admin_->QueryText(sql).value_or("the query failed");
  }

  static SubmitRequest TopUp(const std::string& key, Amount amount) {
    return SubmitRequest{key, {}, Operation::TopUp("issuance", "alice", kAsset, amount), {}};
  }

  // Exactly one transaction was ever committed under `key`, and alice holds it once.
  void ExpectCommittedOnce(const std::string& key, Amount amount) {
    EXPECT_EQ(AdminValue(absl::StrCat("SELECT COUNT(*) FROM ", kDatabase,
                                      ".idempotency_keys WHERE `key` = '", key,
                                      "' AND state = 'committed'")),
              "1");
    EXPECT_EQ(AdminValue(absl::StrCat("SELECT COUNT(*) FROM ", kDatabase, ".transactions")), "1");
    absl::StatusOr<Account> alice = ledger_->GetAccount("alice");
    ASSERT_TRUE(alice.ok()) << alice.status();
    EXPECT_EQ(alice->balance, amount);
  }

  // A submit the frozen server answered with nothing: faulted within `bound`; then the
  // server thaws and resends of the key commit exactly once.
  void ExpectBoundedFaultThenOneCommit(const TimedOutcome& first, bool in_doubt,
                                       absl::Duration bound, const SubmitRequest& request) {
    ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
    EXPECT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
    EXPECT_EQ(first.outcome->in_doubt, in_doubt) << first.outcome->fault;
    if (!in_doubt) {
      EXPECT_TRUE(absl::IsUnavailable(first.outcome->fault)) << first.outcome->fault;
    }
    EXPECT_LT(first.elapsed, bound + kSlack) << "the submit waited on the frozen server";
    // The driver's read (or connect) timeout cut it off: "Lost connection", not some other failure.
    EXPECT_NE(first.outcome->fault.message().find("error 2013"), absl::string_view::npos)
        << first.outcome->fault;
    RecordProperty("frozen_submit_ms", absl::ToInt64Milliseconds(first.elapsed));
    ASSERT_TRUE(server_->Thaw().ok());
    faults_->Clear();
    absl::StatusOr<Outcome> resent = ResendUntilDefinite(*ledger_, request, kResendsMax);
    ASSERT_TRUE(resent.ok()) << resent.status();
    EXPECT_TRUE(resent->ok()) << OutcomeToJson(*resent).dump();
    absl::StatusOr<Outcome> again = ledger_->Submit(request);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->kind, OutcomeKind::kDuplicate);
    ExpectCommittedOnce(request.key, 100);
  }

  // An engine opened through a proxy that freezes the connection at one point
  // (`freeze`): the open returns within `bound`, Unavailable unless `may_succeed`, and
  // the point was reached. A fresh database when `fresh`, so the open applies the
  // migrations.
  void ExpectOpenEndsWithin(const std::function<void(FreezingProxy&)>& freeze,
                            absl::Duration bound, bool fresh = false, bool may_succeed = false) {
    if (fresh) {
      ASSERT_TRUE(admin_->RecreateDatabase(kDatabase).ok());
    }
    absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(server_->port());
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    freeze(**proxy);
    MysqlOptions options = Options();
    options.connection = absl::StrReplaceAll(
        url_, {{absl::StrCat(":", server_->port(), "/"), absl::StrCat(":", (*proxy)->port(), "/")}});
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
    const absl::Duration elapsed = absl::Now() - start;
    EXPECT_EQ((*proxy)->frozen(), 1) << "the open never reached the freeze point";
    if (!may_succeed || !engine.ok()) {
      EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
    }
    EXPECT_LT(elapsed, bound + kSlack) << "the open waited on the frozen connection";
    RecordProperty("frozen_open_ms", absl::ToInt64Milliseconds(elapsed));
  }

  void FreezeAt(FaultPoint point) {
    faults_->SetHook(point, [] { ASSERT_TRUE(server_->Freeze().ok()); });
  }

  static ThrowawayServer* server_;
  static MysqlTestServer* admin_;
  static absl::Status* start_failure_;
  std::string url_;
  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;
};

ThrowawayServer* MysqlPartitionTest::server_ = nullptr;
MysqlTestServer* MysqlPartitionTest::admin_ = nullptr;
absl::Status* MysqlPartitionTest::start_failure_ = new absl::Status();

TEST_F(MysqlPartitionTest, ConnectingToAFrozenServerIsUnavailableWithinTheConnectTimeout) {
  ASSERT_TRUE(server_->Freeze().ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(Options());
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_TRUE(server_->Thaw().ok());
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_LT(elapsed, kConnectTimeout + kSlack);
}

// The claim's statement waits the read timeout; its pooled session then counts as stale
// and the engine tries once on a new one, which waits the connect timeout.
// Every round trip of an open is bounded: the connection itself (connect_timeout, as a
// whole), the session's setup and each step of the migrations (read_timeout).
TEST_F(MysqlPartitionTest, AnOpenFrozenBeforeTheGreetingIsUnavailableWithinTheConnectTimeout) {
  ExpectOpenEndsWithin([](FreezingProxy& proxy) { proxy.FreezeOnConnect(); }, kConnectTimeout);
}

TEST_F(MysqlPartitionTest, AnOpenFrozenDuringAuthenticationIsUnavailableWithinTheConnectTimeout) {
  // The client's handshake response names the user.
  ExpectOpenEndsWithin([](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("root"); },
                       kConnectTimeout);
}

TEST_F(MysqlPartitionTest, AnOpenFrozenWhileSettingUpTheSessionIsUnavailableWithinTheReadTimeout) {
  for (const char* statement :
       {"SET SESSION TRANSACTION ISOLATION", "SELECT CONNECTION_ID", "SET SESSION autocommit"}) {
    SCOPED_TRACE(statement);
    ExpectOpenEndsWithin([&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends(statement); },
                         kReadTimeout);
  }
}

TEST_F(MysqlPartitionTest, AnOpenFrozenAtEachMigrationStepIsUnavailableWithinTheReadTimeout) {
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
TEST_F(MysqlPartitionTest, AMigrationLockHeldElsewhereIsUnavailableWithinTheMigrationLockWait) {
  const std::string lock = absl::StrCat("CONCAT('ledger_migrate_', SHA1('", kDatabase, "'))");
  ASSERT_EQ(admin_->QueryText(absl::StrCat("SELECT GET_LOCK(", lock, ", 0)")).value_or(""), "1");
  MysqlOptions options = Options();
  options.migration_lock_wait = absl::Seconds(5);  // longer than the read timeout
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_TRUE(admin_->Execute(absl::StrCat("DO RELEASE_LOCK(", lock, ")")).ok());
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_NE(engine.status().message().find("migration_lock_wait"), absl::string_view::npos)
      << engine.status();
  EXPECT_LT(elapsed, options.migration_lock_wait + kSlack);
  EXPECT_TRUE(OpenMysqlEngine(Options()).ok());
}

// A migrator that holds the lock longer than read_timeout is waited for (up to
// migration_lock_wait), not cut off: each try is a round trip of its own. A GET_LOCK
// that waited on the server lost its connection to the read timeout instead.
TEST_F(MysqlPartitionTest, AMigrationLockHeldLongerThanTheReadTimeoutIsWaitedFor) {
  const std::string lock = absl::StrCat("CONCAT('ledger_migrate_', SHA1('", kDatabase, "'))");
  ASSERT_EQ(admin_->QueryText(absl::StrCat("SELECT GET_LOCK(", lock, ", 0)")).value_or(""), "1");
  std::thread releaser([&] {
    absl::SleepFor(kReadTimeout + absl::Milliseconds(1500));
    EXPECT_TRUE(admin_->Execute(absl::StrCat("DO RELEASE_LOCK(", lock, ")")).ok());
  });
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(Options());
  releaser.join();
  EXPECT_TRUE(engine.ok()) << engine.status();
}

TEST_F(MysqlPartitionTest, FrozenBeforeTheClaimFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kClaim);
  const SubmitRequest request = TopUp("frozen-before-claim", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/false,
                                  kReadTimeout + kConnectTimeout, request);
}

TEST_F(MysqlPartitionTest, FrozenWhileHoldingTheClaimFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kAfterClaim);
  const SubmitRequest request = TopUp("frozen-holding-claim", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/false,
                                  kReadTimeout, request);
}

// Every write of a MySQL submit has been sent when Commit is called: the freeze there
// meets COMMIT alone.
// The engine sends its buffered writes with Commit's call, ahead of COMMIT: frozen
// there, the first write goes unanswered and nothing was committed (Unavailable).
TEST_F(MysqlPartitionTest, FrozenBeforeTheBufferedWritesFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kCommit);
  const SubmitRequest request = TopUp("frozen-before-writes", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/false,
                                  kReadTimeout, request);
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

TEST_F(MysqlPartitionTest, FrozenDuringCommitIsInDoubtInBoundAndTheResendCommitsOnce) {
  ledger_ = std::make_unique<Ledger>(OpenTestLedger(
      std::make_shared<WritesSentBeforeCommitEngine>(faults_), {.attempts_max = 2}));
  FreezeAt(FaultPoint::kCommit);  // reached after the writes went, right before COMMIT
  const SubmitRequest request = TopUp("frozen-during-commit", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/true,
                                  kReadTimeout, request);
}

TEST_F(MysqlPartitionTest, AnAccountLockHeldElsewhereIsRetryableWithinTheAccountLockWait) {
  absl::StatusOr<mysql_internal::MysqlSettings> settings = mysql_internal::ParseMysqlUrl(url_);
  ASSERT_TRUE(settings.ok()) << settings.status();
  absl::StatusOr<std::unique_ptr<mysql_internal::MysqlConnection>> holder =
      mysql_internal::MysqlConnection::Open(*settings);
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)
                  ->Query("SELECT id FROM accounts WHERE id = 'alice' FOR UPDATE", {},
                          [](const mysql_internal::SqlRow&) {}, "hold alice",
                          mysql_internal::ErrorContext::kStandalone)
                  .ok());
  const SubmitRequest request = TopUp("account-locked", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  (*holder)->Rollback();
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  ASSERT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_TRUE(IsRetryable(first.outcome->fault)) << first.outcome->fault;
  EXPECT_LT(first.elapsed, 2 * kAccountLockWait + kSlack);  // two attempts
  absl::StatusOr<Outcome> resent = ledger_->Submit(request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_EQ(resent->kind, OutcomeKind::kCommitted);
}

// The server's own bound (MariaDB's max_statement_time), not the client's:
// DeadlineExceeded, and the session survives.
TEST_F(MysqlPartitionTest, AStatementLongerThanTheStatementTimeoutIsCutByTheServer) {
  ASSERT_TRUE(admin_
                  ->Execute(absl::StrCat("CREATE TRIGGER ", kDatabase,
                                         ".slow_outbox BEFORE INSERT ON ", kDatabase,
                                         ".outbox_events FOR EACH ROW DO SLEEP(30)"))
                  .ok());
  const SubmitRequest request = TopUp("slow-statement", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  ASSERT_TRUE(admin_->Execute(absl::StrCat("DROP TRIGGER ", kDatabase, ".slow_outbox")).ok());
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  ASSERT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_TRUE(absl::IsDeadlineExceeded(first.outcome->fault)) << first.outcome->fault;
  EXPECT_FALSE(first.outcome->in_doubt);
  EXPECT_LT(first.elapsed, kStatementTimeout + kSlack);
  absl::StatusOr<Outcome> resent = ledger_->Submit(request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_EQ(resent->kind, OutcomeKind::kCommitted);
  ExpectCommittedOnce(request.key, 100);
}

}  // namespace
}  // namespace ledger::testing
