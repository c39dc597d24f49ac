// The base of the PostgreSQL tests that drive a Ledger over the engine, in both claim
// modes (postgres_engine_test.cc, postgres_pipelined_commit_test.cc,
// postgres_write_parts_test.cc): the skip (or, under CI=true, the failure) without a
// server, the clock and ledger, the usual funded ledger, and the reads a test checks
// its outcome with. Each test opens its ledger and names the engine it reads through
// (engine()).
//
// Not thread-safe beyond what the Ledger is; one per test.
#ifndef LEDGER_TESTS_ENGINES_POSTGRES_POSTGRES_LEDGER_TEST_H_
#define LEDGER_TESTS_ENGINES_POSTGRES_POSTGRES_LEDGER_TEST_H_

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "engines/postgres/postgres_engine.h"
#include "gtest/gtest.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {

// Everything a submit could write, to prove a path wrote nothing.
struct Written {
  std::vector<Account> accounts;
  std::vector<Transaction> transactions;
  std::vector<KeyRecord> keys;
  std::vector<OutboxEvent> events;
  friend bool operator==(const Written&, const Written&) = default;
};

class PostgresLedgerTest : public ::testing::TestWithParam<PostgresClaimMode> {
 protected:
  void SetUp() override {
    if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
      if (RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
      GTEST_SKIP() << "postgres skipped: " << reason;
    }
  }

  // The engine the ledger runs on (or a wrapper of it), for the reads below.
  virtual Engine& engine() = 0;

  // The usual ledger over `engine`: asset kAsset, the accounts issuance (negative
  // allowed), alice (funded with 1000 by the key "fund-alice") and bob.
  void OpenFundedLedger(std::shared_ptr<Engine> engine) {
    ledger_ = std::make_unique<Ledger>(OpenTestLedger(std::move(engine), {.clock = &clock_}));
    ASSERT_TRUE(ledger_->DefineAsset({kAsset, 0}).ok());
    ASSERT_TRUE(
        ledger_->OpenAccount({.id = "issuance", .asset = kAsset, .allow_negative = true}).ok());
    for (const char* id : {"alice", "bob"}) {
      ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = kAsset}).ok());
    }
    ExpectCommitted(Submit("fund-alice", Operation::TopUp("issuance", "alice", kAsset, 1000)));
  }

  absl::StatusOr<Outcome> Submit(const std::string& key, const Operation& operation) {
    return ledger_->Submit(SubmitRequest{key, {}, operation, {}});
  }

  static void ExpectCommitted(const absl::StatusOr<Outcome>& outcome) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  }

  Amount BalanceOf(const std::string& id) {
    absl::StatusOr<Account> account = ledger_->GetAccount(id);
    EXPECT_TRUE(account.ok()) << account.status();
    return account.ok() ? account->balance : 0;
  }

  Written TakeWritten() {
    return Written{engine().ListAccounts("", 10'000).value(),
                   engine().ListTransactions("", 10'000).value(),
                   engine().ListKeyRecords(std::nullopt, 10'000).value(),
                   engine().ListEvents(0, 10'000).value()};
  }

  void ExpectVerifiedClean() {
    absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << report->ToText();
  }

  static constexpr char kAsset[] = "CREDITS";

  ManualClock clock_;
  std::unique_ptr<Ledger> ledger_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_POSTGRES_POSTGRES_LEDGER_TEST_H_
