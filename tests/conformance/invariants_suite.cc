// The always-on invariant checks (ledger/invariants.h) inside the real pipeline, on
// every engine: a ledger whose posting plans are broken on purpose just before the
// checks (LedgerTestingHooks::OpenTamperingWithPlans) gets InternalError tagged
// invariant_violated, and the database is left exactly as it was, key unused. The hold
// sweep's expiries go through the same pipeline, so the same checks stop a broken
// expiry: one tampered with, and one over an account read with a corrupt pending amount.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/json.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/support/forwarding_engine.h"

namespace ledger::testing {
namespace {

Entry& EntryOf(Transaction& transaction, const std::string& account_id) {
  for (Entry& entry : transaction.entries) {
    if (entry.account_id == account_id) return entry;
  }
  ADD_FAILURE() << "no entry for " << account_id;
  return transaction.entries.front();
}

Account& WrittenAccount(std::vector<Account>& accounts, const std::string& id) {
  for (Account& account : accounts) {
    if (account.id == id) return account;
  }
  ADD_FAILURE() << "no written account " << id;
  return accounts.front();
}

// The request every case sends: alice (funded with 1000 first) pays bob 100.
SubmitRequest Payment() {
  return SubmitRequest{.key = "pay-1",
                       .operation = Operation::Transfer("alice", "bob", "CREDITS", 100)};
}

void ExpectViolation(const absl::StatusOr<Outcome>& outcome, const std::string& invariant) {
  ASSERT_FALSE(outcome.ok()) << OutcomeToJson(*outcome).dump();
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInternal) << outcome.status();
  EXPECT_TRUE(IsInvariantViolation(outcome.status())) << outcome.status();
  EXPECT_TRUE(absl::StrContains(outcome.status().message(), invariant)) << outcome.status();
}

// The stopped submit left its key unused: the same request through an honest ledger
// commits, and moves exactly its 100.
void ExpectHonestRetryCommits(Ledger& honest) {
  absl::StatusOr<Outcome> outcome = honest.Submit(Payment());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  EXPECT_EQ(honest.GetAccount("alice")->balance, 900);
  EXPECT_EQ(honest.GetAccount("bob")->balance, 100);
}

TEST_P(ConformanceTest, InvariantZeroSumStopsAnUnbalancedPlanBeforeWriting) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> broken =
      LedgerTamperingWithPlans([](Transaction& transaction, std::vector<Account>& written) {
        Entry& credit = EntryOf(transaction, "bob");  // bob gets 101 for alice's 100
        credit.amount += 1;
        credit.balance_after += 1;
        WrittenAccount(written, "bob").balance += 1;
      });
  ASSERT_NE(broken, nullptr);
  Snapshot before = TakeSnapshot();
  ExpectViolation(broken->Submit(Payment()), "zero_sum");
  EXPECT_EQ(TakeSnapshot(), before);
  ExpectHonestRetryCommits(ledger());
}

TEST_P(ConformanceTest, InvariantVersionsStopAVersionGapBeforeWriting) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> broken =
      LedgerTamperingWithPlans([](Transaction& transaction, std::vector<Account>& written) {
        EntryOf(transaction, "alice").account_version += 1;  // skips a version
        WrittenAccount(written, "alice").version += 1;
      });
  ASSERT_NE(broken, nullptr);
  Snapshot before = TakeSnapshot();
  ExpectViolation(broken->Submit(Payment()), "versions_contiguous");
  EXPECT_EQ(TakeSnapshot(), before);
  ExpectHonestRetryCommits(ledger());
}

TEST_P(ConformanceTest, InvariantVersionsStopAnAccountWrittenAwayFromItsEntries) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> broken =
      LedgerTamperingWithPlans([](Transaction&, std::vector<Account>& written) {
        WrittenAccount(written, "alice").balance += 50;  // its entry says 900
      });
  ASSERT_NE(broken, nullptr);
  Snapshot before = TakeSnapshot();
  ExpectViolation(broken->Submit(Payment()), "versions_contiguous");
  EXPECT_EQ(TakeSnapshot(), before);
  ExpectHonestRetryCommits(ledger());
}

TEST_P(ConformanceTest, InvariantFloorStopsAPlanBelowTheFloorBeforeWriting) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> broken =
      LedgerTamperingWithPlans([](Transaction& transaction, std::vector<Account>& written) {
        // Balanced and contiguous, but alice pays 2000 of her 1000.
        for (Entry& entry : transaction.entries) {
          Amount before = entry.balance_after - entry.amount;
          entry.amount *= 20;
          entry.balance_after = before + entry.amount;
          WrittenAccount(written, entry.account_id).balance = entry.balance_after;
        }
      });
  ASSERT_NE(broken, nullptr);
  Snapshot before = TakeSnapshot();
  ExpectViolation(broken->Submit(Payment()), "balance_floor");
  EXPECT_EQ(TakeSnapshot(), before);
  ExpectHonestRetryCommits(ledger());
}

// ---- the hold sweep's expiries ------------------------------------------------------

// Reads every locked account with its stored pending debits lost (zero), as a corrupt
// row would say: a hold released from it leaves them below zero.
class PendingDebitsLostTransaction final : public ForwardingTransaction {
 public:
  using ForwardingTransaction::ForwardingTransaction;
  absl::StatusOr<std::vector<Account>> LockAccounts(const std::vector<std::string>& ids) override {
    absl::StatusOr<std::vector<Account>> locked = inner().LockAccounts(ids);
    if (locked.ok()) {
      for (Account& account : *locked) account.pending_debits = 0;
    }
    return locked;
  }
};

class PendingDebitsLostEngine final : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> tx = ForwardingEngine::Begin(options);
    if (!tx.ok()) return tx.status();
    return std::make_unique<PendingDebitsLostTransaction>(*std::move(tx));
  }
};

// alice (funded with 100 first) holds 70 for bob for 60 s, and the 60 s pass: a lapsed
// hold for the sweep. Its id, or "" when it was not placed.
std::string PlaceLapsedHold(Ledger& ledger, ManualClock& clock) {
  Operation hold = Operation::Hold("alice", "bob", "CREDITS", 70);
  hold.timeout = absl::Seconds(60);
  absl::StatusOr<Outcome> placed = ledger.Submit(SubmitRequest{.key = "h-1", .operation = hold});
  EXPECT_TRUE(placed.ok() && placed->kind == OutcomeKind::kCommitted) << placed.status();
  clock.Advance(absl::Seconds(60));
  return placed.ok() ? placed->transaction.id : "";
}

void ExpectSweepViolation(const absl::StatusOr<int64_t>& expired, const std::string& invariant) {
  ASSERT_FALSE(expired.ok()) << "expired " << *expired << " holds";
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kInternal) << expired.status();
  EXPECT_TRUE(IsInvariantViolation(expired.status())) << expired.status();
  EXPECT_TRUE(absl::StrContains(expired.status().message(), invariant)) << expired.status();
}

// The stopped expiry left the hold pending as stored; an honest sweep expires it and
// releases exactly its 70.
void ExpectHonestSweepExpires(Ledger& honest, Engine& engine, const std::string& hold_id) {
  absl::StatusOr<std::optional<Hold>> stored = engine.GetHold(hold_id);
  ASSERT_TRUE(stored.ok() && stored->has_value()) << stored.status();
  EXPECT_EQ((*stored)->status, HoldStatus::kPending) << "the broken expiry wrote nothing";
  absl::StatusOr<int64_t> expired = honest.ExpireHolds();
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(*expired, 1);
  EXPECT_EQ(engine.GetAccount("alice").value()->pending_debits, 0);
  EXPECT_EQ(engine.GetAccount("bob").value()->pending_credits, 0);
}

TEST_P(ConformanceTest, InvariantPendingStopsAnExpiryOverACorruptPendingAmount) {
  Fund("alice", 100);
  std::string hold_id = PlaceLapsedHold(ledger(), clock());
  ASSERT_FALSE(hold_id.empty());
  std::unique_ptr<Ledger> misreading = LedgerOverWrapped([](std::shared_ptr<Engine> inner) {
    return std::make_shared<PendingDebitsLostEngine>(std::move(inner));
  });
  Snapshot before = TakeSnapshot();
  // alice's stored pending debits read as 0: releasing the hold's 70 would store -70.
  ExpectSweepViolation(misreading->ExpireHolds(), "pending_non_negative");
  EXPECT_EQ(TakeSnapshot(), before);
  ExpectHonestSweepExpires(ledger(), engine(), hold_id);
}

TEST_P(ConformanceTest, InvariantVersionsStopATamperedExpiryBeforeWriting) {
  Fund("alice", 100);
  std::string hold_id = PlaceLapsedHold(ledger(), clock());
  ASSERT_FALSE(hold_id.empty());
  std::unique_ptr<Ledger> broken =
      LedgerTamperingWithPlans([](Transaction& transaction, std::vector<Account>& written) {
        EXPECT_EQ(transaction.kind, OperationKind::kExpire);
        WrittenAccount(written, "bob").balance += 70;  // an expiry posts nothing
      });
  ASSERT_NE(broken, nullptr);
  Snapshot before = TakeSnapshot();
  ExpectSweepViolation(broken->ExpireHolds(), "versions_contiguous");
  EXPECT_EQ(TakeSnapshot(), before);
  ExpectHonestSweepExpires(ledger(), engine(), hold_id);
}

}  // namespace
}  // namespace ledger::testing
