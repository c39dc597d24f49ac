// CheckPostingInvariants on hand-made plans: a valid plan passes; each broken one is
// InternalError tagged invariant_violated, naming the invariant it breaks.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/status.h"
#include "gtest/gtest.h"
#include "ledger/invariants.h"

namespace ledger {
namespace {

Account MakeAccount(std::string id, std::string asset, Amount balance, int64_t version) {
  Account account;
  account.id = std::move(id);
  account.asset = std::move(asset);
  account.balance = balance;
  account.version = version;
  return account;
}

// alice (100 at version 3) pays bob (0 at version 0) 40.
struct Plan {
  std::vector<Account> locked = {MakeAccount("alice", "USD", 100, 3),
                                 MakeAccount("bob", "USD", 0, 0)};
  std::vector<Entry> entries = {{"alice", "USD", -40, 60, 4}, {"bob", "USD", 40, 40, 1}};
  std::vector<Account> updated = {MakeAccount("alice", "USD", 60, 4),
                                  MakeAccount("bob", "USD", 40, 1)};

  absl::Status Check() const { return CheckPostingInvariants(locked, entries, updated); }
};

void ExpectViolation(const absl::Status& status, const std::string& invariant) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_TRUE(IsInvariantViolation(status)) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), invariant)) << status;
}

TEST(PostingInvariants, AValidPlanPasses) {
  Plan plan;
  EXPECT_TRUE(plan.Check().ok()) << plan.Check();
}

TEST(PostingInvariants, EntriesThatDoNotSumToZeroAreAViolation) {
  Plan plan;
  plan.entries[1] = {"bob", "USD", 41, 41, 1};
  plan.updated[1].balance = 41;
  ExpectViolation(plan.Check(), "zero_sum");
}

TEST(PostingInvariants, TheSumIsTakenPerAsset) {
  Plan plan;
  plan.locked.push_back(MakeAccount("carol", "EUR", 0, 0));
  plan.entries[1] = {"bob", "USD", 35, 35, 1};  // USD sums to -5 ...
  plan.entries.push_back({"carol", "EUR", 5, 5, 1});  // ... EUR to +5: 0 in total
  plan.updated[1].balance = 35;
  plan.updated.push_back(MakeAccount("carol", "EUR", 5, 1));
  ExpectViolation(plan.Check(), "zero_sum");
}

TEST(PostingInvariants, AVersionGapIsAViolation) {
  Plan plan;
  plan.entries[1].account_version = 2;
  plan.updated[1].version = 2;
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, AnEntryRepeatingTheLockedVersionIsAViolation) {
  Plan plan;
  plan.entries[0].account_version = 3;
  plan.updated[0].version = 3;
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, TwoEntriesOfOneAccountContinueEachOther) {
  Plan plan;  // alice pays bob 40 in two legs of 20
  plan.entries = {{"alice", "USD", -20, 80, 4},
                  {"alice", "USD", -20, 60, 5},
                  {"bob", "USD", 40, 40, 1}};
  plan.updated[0].version = 5;
  EXPECT_TRUE(plan.Check().ok()) << plan.Check();
  plan.entries[1].account_version = 4;  // both legs claim version 4
  plan.updated[0].version = 4;
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, ABalanceThatDoesNotFollowTheAmountIsAViolation) {
  Plan plan;
  plan.entries[0].balance_after = 61;
  plan.updated[0].balance = 61;
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, AnAccountWrittenAwayFromItsLastEntryIsAViolation) {
  Plan plan;
  plan.updated[0].balance = 100;  // as if the debit were not applied
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, AnEntryForAnAccountNotLockedIsAViolation) {
  Plan plan;
  plan.entries[1].account_id = "mallory";
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, AnEntryInAnotherAssetThanItsAccountIsAViolation) {
  Plan plan;
  plan.locked[1].asset = "EUR";
  plan.updated[1].asset = "EUR";
  ExpectViolation(plan.Check(), "versions_contiguous");
}

TEST(PostingInvariants, ABalanceBelowTheFloorIsAViolation) {
  Plan plan;  // alice pays 140 of her 100
  plan.entries = {{"alice", "USD", -140, -40, 4}, {"bob", "USD", 140, 140, 1}};
  plan.updated = {MakeAccount("alice", "USD", -40, 4), MakeAccount("bob", "USD", 140, 1)};
  ExpectViolation(plan.Check(), "balance_floor");

  plan.locked[0].overdraft_limit = 40;  // exactly at the floor: allowed
  EXPECT_TRUE(plan.Check().ok()) << plan.Check();
  plan.locked[0].overdraft_limit = 0;
  plan.locked[0].allow_negative = true;  // no floor at all
  EXPECT_TRUE(plan.Check().ok()) << plan.Check();
}

}  // namespace
// Account::Available() is what every solvency check reads: exact in range, saturating
// at either end instead of overflowing, even for a pending amount no engine should store.
TEST(AvailableBalance, IsBalanceMinusPendingDebitsAndSaturates) {
  constexpr Amount kMax = std::numeric_limits<Amount>::max();
  constexpr Amount kMin = std::numeric_limits<Amount>::min();
  Account account = MakeAccount("alice", "USD", 100, 1);
  account.pending_debits = 30;
  account.pending_credits = 500;  // not spendable
  EXPECT_EQ(account.Available(), 70);
  account.balance = kMin + 10;
  EXPECT_EQ(account.Available(), kMin);
  account.balance = kMax;
  account.pending_debits = -1;
  EXPECT_EQ(account.Available(), kMax);
  account.balance = kMin;
  EXPECT_EQ(account.Available(), kMin + 1);
}

}  // namespace ledger
