#include "tests/conformance/conformance_fixture.h"

#include "absl/strings/str_cat.h"
#include "ledger/json.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {

void ConformanceTest::SetUp() {
  context_ = GetParam()();
  if (!context_.unavailable_reason.empty()) {
    if (RunningInCi()) {
      FAIL() << context_.engine_name << " is required under CI=true: " << context_.unavailable_reason;
    }
    GTEST_SKIP() << context_.engine_name << " skipped: " << context_.unavailable_reason;
  }
  absl::StatusOr<std::unique_ptr<Engine>> opened = context_.open_fresh();
  ASSERT_TRUE(opened.ok()) << opened.status();
  faults_ = std::make_shared<FaultInjectingEngine>(std::shared_ptr<Engine>(std::move(*opened)));
  ledger_ = LedgerWith(LedgerOptions());

  ASSERT_TRUE(ledger_->DefineAsset({"USD", 2}).ok());
  ASSERT_TRUE(ledger_->DefineAsset({"CREDITS", 0}).ok());
  std::vector<AccountSpec> specs = {
      {.id = "issuance", .asset = "CREDITS", .allow_negative = true},
      {.id = "alice", .asset = "CREDITS"},
      {.id = "bob", .asset = "CREDITS"},
      {.id = "carol", .asset = "CREDITS"},
      {.id = "platform", .asset = "CREDITS"},
      {.id = "payouts", .asset = "CREDITS", .allow_negative = true},
      {.id = "usd_wallet", .asset = "USD"},
  };
  for (const AccountSpec& spec : specs) {
    absl::StatusOr<Account> account = ledger_->OpenAccount(spec);
    ASSERT_TRUE(account.ok()) << account.status();
  }
}

void ConformanceTest::TearDown() {
  ledger_.reset();
  faults_.reset();
}

std::unique_ptr<Ledger> ConformanceTest::LedgerWith(LedgerOptions options) {
  options.clock = &clock_;
  return std::make_unique<Ledger>(OpenTestLedger(faults_, std::move(options)));
}

std::unique_ptr<Ledger> ConformanceTest::LedgerTamperingWithPlans(
    internal::LedgerTestingHooks::PlanTamperer tamper) {
  absl::StatusOr<Ledger> ledger = internal::LedgerTestingHooks::OpenTamperingWithPlans(
      faults_, std::move(tamper), LedgerOptions{.clock = &clock_});
  EXPECT_TRUE(ledger.ok()) << ledger.status();
  return ledger.ok() ? std::make_unique<Ledger>(*std::move(ledger)) : nullptr;
}

std::unique_ptr<Ledger> ConformanceTest::LedgerOverWrapped(const EngineWrapper& wrap) {
  return std::make_unique<Ledger>(OpenTestLedger(wrap(faults_), LedgerOptions{.clock = &clock_}));
}

Snapshot ConformanceTest::TakeSnapshot() {
  Snapshot snapshot;
  snapshot.accounts = engine().ListAccounts("", 10'000).value();
  std::vector<Transaction> transactions = engine().ListTransactions("", 10'000).value();
  for (const Transaction& transaction : transactions) {
    snapshot.transaction_ids.push_back(transaction.id);
  }
  snapshot.keys = engine().ListKeyRecords(std::nullopt, 10'000).value();
  snapshot.events = engine().ListEvents(0, 10'000).value();
  return snapshot;
}

Amount ConformanceTest::BalanceOf(const std::string& account_id) {
  absl::StatusOr<Account> account = ledger_->GetAccount(account_id);
  EXPECT_TRUE(account.ok()) << account.status();
  return account.ok() ? account->balance : 0;
}

void ConformanceTest::Fund(const std::string& account_id, Amount amount) {
  absl::StatusOr<Outcome> outcome =
      Submit(absl::StrCat("fund-", ++fund_counter_),
             Operation::TopUp("issuance", account_id, "CREDITS", amount));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
}

absl::StatusOr<Outcome> ConformanceTest::Submit(const std::string& key, const Operation& operation,
                                                ClaimOptions claim, Scope scope) {
  return ledger_->Submit(SubmitRequest{key, std::move(scope), operation, claim});
}

}  // namespace ledger::testing
