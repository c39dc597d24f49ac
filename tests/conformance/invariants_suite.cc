// The always-on invariant checks (ledger/invariants.h) inside the real pipeline, on
// every engine: a ledger whose posting plans are broken on purpose just before the
// checks (LedgerTestingHooks::OpenTamperingWithPlans) gets InternalError tagged
// invariant_violated, and the database is left exactly as it was, key unused.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/json.h"
#include "tests/conformance/conformance_fixture.h"

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

}  // namespace
}  // namespace ledger::testing
