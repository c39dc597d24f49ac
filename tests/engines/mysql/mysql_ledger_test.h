// The fixtures of the MariaDB engine tests. MysqlServerTest: the server named by
// LEDGER_TEST_MYSQL_DSN (none: a failure under CI=true, else a skip). MysqlLedgerTest:
// that, a scratch database of the test's own, the engine under a FaultInjectingEngine,
// and a Ledger on a ManualClock with CREDITS and the accounts issuance (allow_negative),
// alice, bob, carol, dave and erin.
#ifndef LEDGER_TESTS_ENGINES_MYSQL_MYSQL_LEDGER_TEST_H_
#define LEDGER_TESTS_ENGINES_MYSQL_MYSQL_LEDGER_TEST_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "engines/mysql/mysql_engine.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {

class MysqlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string reason = MysqlUnavailableReason(); !reason.empty()) {
      if (RunningInCi()) FAIL() << "mysql is required under CI=true: " << reason;
      GTEST_SKIP() << "mysql skipped: " << reason;
    }
    absl::StatusOr<std::unique_ptr<MysqlTestServer>> server =
        MysqlTestServer::Connect(MysqlTestDsn());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  std::unique_ptr<MysqlTestServer> server_;
};

class MysqlLedgerTest : public MysqlServerTest {
 protected:
  // `purpose` names the scratch database ("engine", "batch").
  explicit MysqlLedgerTest(std::string purpose) : purpose_(std::move(purpose)) {}

  void SetUp() override {
    MysqlServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    database_ = ScratchDatabaseName(server_->base_database(), purpose_);
    absl::StatusOr<std::string> dsn = server_->RecreateDatabase(database_);
    ASSERT_TRUE(dsn.ok()) << dsn.status();
    dsn_ = *dsn;
  }

  void TearDown() override {
    ledger_.reset();
    faults_.reset();
    engine_.reset();
    if (server_ != nullptr) {
      EXPECT_TRUE(server_->DropDatabase(database_).ok());
    }
  }

  absl::StatusOr<std::unique_ptr<Engine>> Open(int pool_size, bool migrate = true) {
    MysqlOptions options;
    options.connection = dsn_;
    options.pool_size = pool_size;
    options.migrate = migrate;
    return OpenMysqlEngine(options);
  }

  // Opens the engine, its FaultInjectingEngine and the Ledger, and the accounts.
  void OpenLedger(int pool_size, LedgerOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Engine>> engine = Open(pool_size);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::shared_ptr<Engine>(*std::move(engine));
    faults_ = std::make_shared<FaultInjectingEngine>(engine_);
    ReopenLedger(std::move(options));
    ASSERT_TRUE(ledger_->DefineAsset({"CREDITS", 0}).ok());
    ASSERT_TRUE(ledger_->OpenAccount({.id = "issuance", .asset = "CREDITS",
                                      .allow_negative = true}).ok());
    for (const char* id : {"alice", "bob", "carol", "dave", "erin"}) {
      ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = "CREDITS"}).ok());
    }
  }

  // A new Ledger with these options over the same engine (the clock stays the test's).
  void ReopenLedger(LedgerOptions options) {
    options.clock = &clock_;
    ledger_ = std::make_unique<Ledger>(OpenTestLedger(faults_, std::move(options)));
  }

  absl::StatusOr<Outcome> Submit(const std::string& key, const Operation& operation,
                                 ClaimOptions claim = {}) {
    return ledger_->Submit(SubmitRequest{key, {}, operation, claim});
  }

  void Fund(const std::string& account_id, Amount amount) {
    absl::StatusOr<Outcome> outcome =
        Submit(absl::StrCat("fund-", account_id), Operation::TopUp("issuance", account_id,
                                                                   "CREDITS", amount));
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    ASSERT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  }

  Amount BalanceOf(const std::string& account_id) {
    absl::StatusOr<Account> account = ledger_->GetAccount(account_id);
    EXPECT_TRUE(account.ok()) << account.status();
    return account.ok() ? account->balance : 0;
  }

  void ExpectVerifiedLedger() {
    absl::StatusOr<VerifyReport> report = VerifyLedger(*engine_);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << report->ToText();
  }

  const std::string purpose_;
  std::string database_;
  std::string dsn_;
  ManualClock clock_;
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_MYSQL_MYSQL_LEDGER_TEST_H_
