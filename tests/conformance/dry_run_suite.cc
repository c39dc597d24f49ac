// Dry runs (Ledger::DryRun, Ledger::DryRunBatch), checked identically on every engine:
// each returns what Submit or SubmitBatch would return for the same request now (would
// commit with the entries and balances after, rejected for the same reason, duplicate
// with the recorded transaction, conflict), and writes nothing: no key record, no
// transaction, no entry, no hold, no event, no balance, no sweep state. A later real
// submit with the same key runs for real.
#include <atomic>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/unit_of_work.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

// A bound for every wait between the threads of these tests.
constexpr absl::Duration kStepWaitMax = absl::Seconds(60);

SubmitRequest Request(const std::string& key, Operation operation) {
  return SubmitRequest{.key = key, .operation = std::move(operation)};
}

Operation Transfer(const std::string& from, const std::string& to, Amount amount) {
  return Operation::Transfer(from, to, "CREDITS", amount);
}

std::string Describe(const SubmitResult& result) {
  return result.ok() ? OutcomeToJson(*result).dump() : result.status().ToString();
}

const Entry* EntryFor(const Transaction& transaction, const std::string& account_id) {
  for (const Entry& entry : transaction.entries) {
    if (entry.account_id == account_id) return &entry;
  }
  return nullptr;
}

// Every hold, as stored: the fixture's Snapshot has no holds.
std::vector<Hold> StoredHolds(Engine& engine) {
  absl::StatusOr<std::vector<Hold>> holds = engine.ListHolds("", "", 10'000);
  EXPECT_TRUE(holds.ok()) << holds.status();
  return holds.ok() ? *std::move(holds) : std::vector<Hold>{};
}

bool SameHolds(const std::vector<Hold>& a, const std::vector<Hold>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].status != b[i].status) return false;
  }
  return true;
}

TEST_P(ConformanceTest, DryRunOfATransferReportsTheEntriesAndWritesNothing) {
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();

  absl::StatusOr<Outcome> dry = ledger().DryRun(Request("order-1", Transfer("alice", "bob", 30)));
  ASSERT_TRUE(dry.ok()) << dry.status();
  ASSERT_EQ(dry->kind, OutcomeKind::kCommitted) << Describe(dry);
  const Entry* alice = EntryFor(dry->transaction, "alice");
  const Entry* bob = EntryFor(dry->transaction, "bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(alice->amount, -30);
  EXPECT_EQ(alice->balance_after, 70);
  EXPECT_EQ(bob->balance_after, 30);

  // Nothing of it stays: no key, transaction, event or balance.
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_TRUE(absl::IsNotFound(ledger().GetTransaction(dry->transaction.id).status()));

  // The same request for real commits (the key was never recorded) with the same entries.
  absl::StatusOr<Outcome> real = Submit("order-1", Transfer("alice", "bob", 30));
  ASSERT_TRUE(real.ok()) << real.status();
  ASSERT_EQ(real->kind, OutcomeKind::kCommitted) << Describe(real);
  EXPECT_EQ(real->transaction.fingerprint, dry->transaction.fingerprint);
  ASSERT_NE(EntryFor(real->transaction, "alice"), nullptr);
  EXPECT_EQ(EntryFor(real->transaction, "alice")->balance_after, 70);
  EXPECT_EQ(BalanceOf("alice"), 70);
  EXPECT_EQ(BalanceOf("bob"), 30);
}

TEST_P(ConformanceTest, DryRunRejectsForTheSameReasonAsSubmit) {
  Fund("alice", 10);
  const Snapshot before = TakeSnapshot();
  const SubmitRequest too_much = Request("order-2", Transfer("alice", "bob", 11));
  const SubmitRequest nobody = Request("order-3", Transfer("alice", "nobody", 1));

  absl::StatusOr<Outcome> dry_funds = ledger().DryRun(too_much);
  absl::StatusOr<Outcome> dry_account = ledger().DryRun(nobody);
  EXPECT_EQ(TakeSnapshot(), before);
  absl::StatusOr<Outcome> real_funds = ledger().Submit(too_much);
  absl::StatusOr<Outcome> real_account = ledger().Submit(nobody);

  for (const auto& [dry, real, reason] :
       {std::tuple{&dry_funds, &real_funds, RejectionReason::kInsufficientFunds},
        std::tuple{&dry_account, &real_account, RejectionReason::kAccountNotFound}}) {
    ASSERT_TRUE(dry->ok()) << dry->status();
    ASSERT_TRUE(real->ok()) << real->status();
    EXPECT_EQ((*dry)->kind, OutcomeKind::kRejected) << Describe(*dry);
    EXPECT_EQ((*dry)->reason, reason) << Describe(*dry);
    EXPECT_EQ((*dry)->reason, (*real)->reason);
    EXPECT_EQ((*dry)->detail, (*real)->detail);
  }
}

TEST_P(ConformanceTest, DryRunOfACommittedKeyReportsItsTransactionOrAConflict) {
  Fund("alice", 100);
  absl::StatusOr<Outcome> first = Submit("order-4", Transfer("alice", "bob", 5));
  ASSERT_TRUE(first.ok() && first->kind == OutcomeKind::kCommitted) << Describe(first);
  const Snapshot before = TakeSnapshot();

  absl::StatusOr<Outcome> again = ledger().DryRun(Request("order-4", Transfer("alice", "bob", 5)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->kind, OutcomeKind::kDuplicate) << Describe(again);
  EXPECT_EQ(again->transaction.id, first->transaction.id);
  EXPECT_EQ(TransactionToJson(again->transaction), TransactionToJson(first->transaction));

  absl::StatusOr<Outcome> other = ledger().DryRun(Request("order-4", Transfer("alice", "bob", 6)));
  EXPECT_TRUE(IsConflict(other.status())) << Describe(other);
  std::optional<nlohmann::json> conflict = DryRunToJson(other);
  ASSERT_TRUE(conflict.has_value());
  EXPECT_EQ((*conflict)["outcome"], "conflict");
  EXPECT_EQ((*conflict)["dry_run"], true);

  // Under ReplayPolicy::kError a dry run refuses the key as Submit does.
  SubmitRequest refused = Request("order-4", Transfer("alice", "bob", 5));
  refused.claim.replay = ReplayPolicy::kError;
  EXPECT_TRUE(IsDuplicate(ledger().DryRun(refused).status()));
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, DryRunTakesTheSameRequestAsSubmitKeyIncluded) {
  const Snapshot before = TakeSnapshot();
  const SubmitRequest no_key = Request("", Transfer("alice", "bob", 1));
  absl::StatusOr<Outcome> dry = ledger().DryRun(no_key);
  absl::StatusOr<Outcome> real = ledger().Submit(no_key);
  EXPECT_TRUE(absl::IsInvalidArgument(dry.status())) << Describe(dry);
  EXPECT_EQ(dry.status(), real.status());
  absl::StatusOr<std::vector<SubmitResult>> empty = ledger().DryRunBatch({});
  EXPECT_TRUE(absl::IsInvalidArgument(empty.status())) << empty.status();
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, DryRunBatchAppliesItemsInOrderAndWritesNothing) {
  const Snapshot before = TakeSnapshot();
  const std::vector<SubmitRequest> items = {
      Request("b-1", Operation::TopUp("issuance", "alice", "CREDITS", 50)),
      Request("b-2", Transfer("alice", "bob", 50)),  // sees b-1's credit
      Request("b-3", Transfer("alice", "bob", 1)),   // alice is empty by then
  };
  absl::StatusOr<std::vector<SubmitResult>> dry = ledger().DryRunBatch({.items = items});
  ASSERT_TRUE(dry.ok()) << dry.status();
  ASSERT_EQ(dry->size(), 3u);
  ASSERT_TRUE((*dry)[0].ok() && (*dry)[0]->kind == OutcomeKind::kCommitted) << Describe((*dry)[0]);
  ASSERT_TRUE((*dry)[1].ok() && (*dry)[1]->kind == OutcomeKind::kCommitted) << Describe((*dry)[1]);
  ASSERT_TRUE((*dry)[2].ok()) << (*dry)[2].status();
  EXPECT_EQ((*dry)[2]->reason, RejectionReason::kInsufficientFunds) << Describe((*dry)[2]);
  ASSERT_NE(EntryFor((*dry)[1]->transaction, "alice"), nullptr);
  EXPECT_EQ(EntryFor((*dry)[1]->transaction, "alice")->balance_after, 0);
  EXPECT_EQ(TakeSnapshot(), before);

  absl::StatusOr<std::vector<SubmitResult>> atomic =
      ledger().DryRunBatch({.items = items, .atomic = true});
  ASSERT_TRUE(atomic.ok()) << atomic.status();
  ASSERT_TRUE((*atomic)[0].ok()) << (*atomic)[0].status();
  EXPECT_EQ((*atomic)[0]->reason, RejectionReason::kBatchItemFailed) << Describe((*atomic)[0]);
  EXPECT_EQ(TakeSnapshot(), before);

  // The real batch decides exactly as the dry run did.
  absl::StatusOr<std::vector<SubmitResult>> real = ledger().SubmitBatch({.items = items});
  ASSERT_TRUE(real.ok()) << real.status();
  for (size_t i = 0; i < items.size(); ++i) {
    ASSERT_TRUE((*real)[i].ok()) << (*real)[i].status();
    EXPECT_EQ((*real)[i]->kind, (*dry)[i]->kind) << i << ": " << Describe((*real)[i]);
  }
}

TEST_P(ConformanceTest, DryRunOfHoldsLeavesNoHoldAndNoSweepState) {
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();
  const std::vector<Hold> holds_before = StoredHolds(engine());
  absl::StatusOr<Outcome> dry_hold = ledger().DryRun(
      Request("hold-dry", Operation::Hold("alice", "bob", "CREDITS", 40, clock().Now() + absl::Seconds(60))));
  ASSERT_TRUE(dry_hold.ok() && dry_hold->kind == OutcomeKind::kCommitted) << Describe(dry_hold);
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_TRUE(SameHolds(StoredHolds(engine()), holds_before));
  EXPECT_EQ(ledger().GetAccount("alice")->pending_debits, 0);

  // A real hold; a dry-run void would release it, yet it stays pending.
  absl::StatusOr<Outcome> hold =
      Submit("hold-1", Operation::Hold("alice", "bob", "CREDITS", 40, clock().Now() + absl::Seconds(60)));
  ASSERT_TRUE(hold.ok() && hold->kind == OutcomeKind::kCommitted) << Describe(hold);
  const std::string hold_id = hold->transaction.id;
  const Snapshot held = TakeSnapshot();
  absl::StatusOr<Outcome> dry_void = ledger().DryRun(Request("void-1", Operation::Void(hold_id)));
  ASSERT_TRUE(dry_void.ok() && dry_void->kind == OutcomeKind::kCommitted) << Describe(dry_void);
  EXPECT_EQ(TakeSnapshot(), held);
  EXPECT_EQ(ledger().GetHold(hold_id)->status, HoldStatus::kPending);

  // Past its expiry a dry-run capture is rejected and records no expiry: the sweep
  // still has the hold to expire.
  clock().Advance(absl::Seconds(61));
  absl::StatusOr<Outcome> dry_capture =
      ledger().DryRun(Request("capture-1", Operation::Capture(hold_id)));
  ASSERT_TRUE(dry_capture.ok()) << dry_capture.status();
  EXPECT_EQ(dry_capture->reason, RejectionReason::kHoldExpired) << Describe(dry_capture);
  EXPECT_EQ(TakeSnapshot(), held);
  absl::StatusOr<int64_t> expired = ledger().ExpireHolds();
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(*expired, 1);
}

TEST_P(ConformanceTest, DryRunStopsABrokenPlanAsSubmitDoes) {
  Fund("alice", 100);
  std::unique_ptr<Ledger> broken =
      LedgerTamperingWithPlans([](Transaction& transaction, std::vector<Account>&) {
        transaction.entries.front().amount += 1;  // no longer sums to zero
      });
  ASSERT_NE(broken, nullptr);
  const Snapshot before = TakeSnapshot();
  absl::StatusOr<Outcome> dry = broken->DryRun(Request("order-5", Transfer("alice", "bob", 5)));
  EXPECT_TRUE(IsInvariantViolation(dry.status())) << Describe(dry);
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, DryRunOfAKeyAnotherTransactionHoldsIsInProgress) {
  if (context().one_open_submit_at_a_time && !context().writers_serialized) {
    GTEST_SKIP() << context().engine_name
                 << " holds one transaction at a time: a second cannot meet the first's key";
  }
  Fund("alice", 100);
  const SubmitRequest request = Request("busy", Transfer("alice", "bob", 1));
  // A unit of work claims the key and keeps its transaction open until told.
  absl::Notification claimed;
  absl::Notification release;
  absl::Status holder_status;
  std::thread holder([&] {
    holder_status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
      absl::StatusOr<Outcome> outcome = unit.Submit(request);
      claimed.Notify();
      release.WaitForNotificationWithTimeout(kStepWaitMax);
      if (!outcome.ok()) return outcome.status();
      return absl::CancelledError("the holder rolls back");
    });
  });
  if (!claimed.WaitForNotificationWithTimeout(kStepWaitMax)) {
    release.Notify();
    holder.join();
    FAIL() << "the holder never claimed the key: " << holder_status;
  }
  SubmitRequest fail_fast = request;
  fail_fast.claim.wait = WaitPolicy::FailFast();
  const Snapshot before = TakeSnapshot();
  absl::StatusOr<Outcome> busy = ledger().DryRun(fail_fast);
  release.Notify();
  holder.join();
  EXPECT_TRUE(IsInProgress(busy.status())) << Describe(busy);
  EXPECT_TRUE(absl::IsCancelled(holder_status)) << holder_status;
  EXPECT_EQ(TakeSnapshot(), before);
  // Once the holder rolled back, the dry run decides.
  absl::StatusOr<Outcome> free = ledger().DryRun(request);
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_EQ(free->kind, OutcomeKind::kCommitted) << Describe(free);
}

TEST_P(ConformanceTest, DryRunNeverRidesOnGroupCommit) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> grouped = LedgerWith(LedgerOptions{.group_commit = {.enabled = true}});
  constexpr int kThreads = 4;
  constexpr int kRoundsPerThread = 10;
  std::atomic<int> dry_committed = 0;
  std::atomic<int> real_committed = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRoundsPerThread; ++round) {
        const std::string suffix = absl::StrCat(t, "-", round);
        // Half the threads dry-run, half submit for real, all through one ledger.
        if (t % 2 == 0) {
          absl::StatusOr<Outcome> dry =
              grouped->DryRun(Request("dry-" + suffix, Transfer("alice", "bob", 1)));
          if (dry.ok() && dry->kind == OutcomeKind::kCommitted) ++dry_committed;
        } else {
          absl::StatusOr<Outcome> real =
              grouped->Submit(Request("real-" + suffix, Transfer("alice", "bob", 1)));
          if (real.ok() && real->kind == OutcomeKind::kCommitted) ++real_committed;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(dry_committed.load(), kThreads / 2 * kRoundsPerThread);
  EXPECT_EQ(real_committed.load(), kThreads / 2 * kRoundsPerThread);
  // Only the real submits are in the books.
  EXPECT_EQ(BalanceOf("bob"), real_committed.load());
  for (const KeyRecord& record : TakeSnapshot().keys) {
    EXPECT_NE(record.identity.key.rfind("dry-", 0), 0u) << record.identity.Encoded();
  }
}

}  // namespace
}  // namespace ledger::testing
