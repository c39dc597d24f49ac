#include "tests/support/ledger_before_holds.h"

#include <optional>
#include <utility>

#include "gtest/gtest.h"
#include "ledger/hold.h"
#include "ledger/json.h"
#include "ledger/operation.h"
#include "ledger/verify.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

std::string Show(const absl::StatusOr<Outcome>& outcome) {
  return outcome.ok() ? OutcomeToJson(*outcome).dump() : outcome.status().ToString();
}

void Commit(Ledger& ledger, const std::string& key, const Operation& operation,
            std::string* transaction_id = nullptr) {
  absl::StatusOr<Outcome> outcome = ledger.Submit(SubmitRequest{key, {}, operation, {}});
  ASSERT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted) << Show(outcome);
  if (transaction_id != nullptr) *transaction_id = outcome->transaction.id;
}

VerifyReport VerifiedReport(Engine& engine) {
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return {};
  EXPECT_TRUE(report->ok()) << report->ToText();
  return *std::move(report);
}

}  // namespace

void WriteLedgerBeforeHolds(Ledger& ledger) {
  ASSERT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  for (const AccountSpec& spec :
       {AccountSpec{.id = "issuance", .asset = "CREDITS", .allow_negative = true},
        AccountSpec{.id = "platform", .asset = "CREDITS"},
        AccountSpec{.id = "alice", .asset = "CREDITS"},
        AccountSpec{.id = "bob", .asset = "CREDITS"},
        AccountSpec{.id = "carol", .asset = "CREDITS", .overdraft_limit = 50}}) {
    ASSERT_TRUE(ledger.OpenAccount(spec).ok()) << spec.id;
  }
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "fund", Operation::TopUp("issuance", "alice", "CREDITS", 500)));
  std::string transfer;
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "pay", Operation::Transfer("alice", "bob", "CREDITS", 120), &transfer));
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "undo", Operation::Reverse(transfer)));
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "pay-again", Operation::Transfer("alice", "bob", "CREDITS", 150)));
  ASSERT_NO_FATAL_FAILURE(Commit(
      ledger, "shop", Operation::Spend("bob", "carol", "CREDITS", 40, Fee{"platform", 4})));
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "split",
                                 Operation::Post({{"alice", "CREDITS", -30},
                                                  {"bob", "CREDITS", 10},
                                                  {"carol", "CREDITS", 20}})));
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "cash-out", Operation::Payout("carol", "issuance", "CREDITS", 25)));
}

LedgerRows ReadLedgerRows(Engine& engine) {
  LedgerRows rows;
  absl::StatusOr<std::vector<Account>> accounts = engine.ListAccounts("", 1000);
  absl::StatusOr<std::vector<Transaction>> transactions = engine.ListTransactions("", 1000);
  absl::StatusOr<std::vector<KeyRecord>> keys = engine.ListKeyRecords(std::nullopt, 1000);
  absl::StatusOr<std::vector<OutboxEvent>> events = engine.ListEvents(0, 1000);
  EXPECT_TRUE(accounts.ok()) << accounts.status();
  EXPECT_TRUE(transactions.ok()) << transactions.status();
  EXPECT_TRUE(keys.ok()) << keys.status();
  EXPECT_TRUE(events.ok()) << events.status();
  if (accounts.ok()) rows.accounts = *std::move(accounts);
  if (transactions.ok()) rows.transactions = *std::move(transactions);
  if (keys.ok()) rows.keys = *std::move(keys);
  if (events.ok()) rows.events = *std::move(events);
  rows.verify_report = VerifiedReport(engine).ToJson().dump();
  return rows;
}

void ExpectRowsSurviveTheHoldsMigration(Engine& migrated, const LedgerRows& before) {
  const VerifyReport report = VerifiedReport(migrated);
  EXPECT_EQ(report.accounts, kAccountsBeforeHolds);
  EXPECT_EQ(report.transactions, kTransactionsBeforeHolds);
  EXPECT_EQ(report.key_records, kTransactionsBeforeHolds);

  const LedgerRows after = ReadLedgerRows(migrated);
  EXPECT_EQ(after.verify_report, before.verify_report);
  EXPECT_EQ(after.accounts, before.accounts);
  EXPECT_EQ(after.transactions, before.transactions);
  EXPECT_EQ(after.keys, before.keys);
  EXPECT_EQ(after.events, before.events);
  for (const Account& account : after.accounts) {
    EXPECT_EQ(account.pending_debits, 0) << account.id;
    EXPECT_EQ(account.pending_credits, 0) << account.id;
  }
  for (const Transaction& transaction : after.transactions) {
    EXPECT_FALSE(transaction.hold.has_value()) << transaction.id;
    EXPECT_FALSE(transaction.hold_id.has_value()) << transaction.id;
    absl::StatusOr<std::optional<Transaction>> read = migrated.GetTransaction(transaction.id);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, transaction);
  }
  absl::StatusOr<std::vector<Hold>> holds = migrated.ListHolds("", "", 100);
  ASSERT_TRUE(holds.ok()) << holds.status();
  EXPECT_TRUE(holds->empty());
}

void ExpectMigratedLedgerTakesHolds(std::shared_ptr<Engine> migrated, Clock* clock) {
  Ledger ledger = OpenTestLedger(migrated, {.clock = clock});
  std::string captured;
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "reserve", Operation::Hold("alice", "bob", "CREDITS", 70), &captured));
  absl::StatusOr<Account> alice = ledger.GetAccount("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->pending_debits, 70);
  EXPECT_EQ(alice->Available(), alice->balance - 70);
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "settle", Operation::Capture(captured, 50)));
  std::string voided;
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "reserve-2", Operation::Hold("alice", "bob", "CREDITS", 20), &voided));
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "release", Operation::Void(voided)));
  for (const auto& [hold_id, status] :
       {std::pair{captured, HoldStatus::kCaptured}, std::pair{voided, HoldStatus::kVoided}}) {
    absl::StatusOr<std::optional<Hold>> hold = migrated->GetHold(hold_id);
    ASSERT_TRUE(hold.ok() && hold->has_value()) << hold_id << ": " << hold.status();
    EXPECT_EQ((*hold)->status, status) << hold_id;
  }
  alice = ledger.GetAccount("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->pending_debits, 0);
  EXPECT_EQ(VerifiedReport(*migrated).transactions, kTransactionsBeforeHolds + 4);
}

}  // namespace ledger::testing
