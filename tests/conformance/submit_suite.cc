// The submit contract (design.md), checked identically on every engine.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

Operation Transfer(const std::string& from, const std::string& to, Amount amount) {
  return Operation::Transfer(from, to, "CREDITS", amount);
}

// Evaluates `expression` once (it is often a Submit call).
#define ASSERT_OUTCOME(expression, expected_kind)                                          \
  do {                                                                                     \
    const absl::StatusOr<Outcome>& outcome_ = (expression);                                \
    ASSERT_TRUE(outcome_.ok()) << outcome_.status();                                       \
    ASSERT_EQ(outcome_->kind, (expected_kind)) << OutcomeToJson(*outcome_).dump();         \
  } while (0)

// ---- commit, duplicate, conflict ----------------------------------------------------

TEST_P(ConformanceTest, FreshSubmitCommitsBalancedEntriesWithRunningBalances) {
  Fund("alice", 1000);
  absl::StatusOr<Outcome> outcome = Submit("t-1", Transfer("alice", "bob", 300));
  ASSERT_OUTCOME(outcome, OutcomeKind::kCommitted);
  const Transaction& transaction = outcome->transaction;
  ASSERT_EQ(transaction.entries.size(), 2u);
  EXPECT_EQ(transaction.entries[0], (Entry{"alice", "CREDITS", -300, 700, 2}));
  EXPECT_EQ(transaction.entries[1], (Entry{"bob", "CREDITS", 300, 300, 1}));
  EXPECT_EQ(transaction.created_at, clock().Now());
  EXPECT_EQ(BalanceOf("alice"), 700);
  EXPECT_EQ(BalanceOf("bob"), 300);
  absl::StatusOr<Transaction> stored = ledger().GetTransaction(transaction.id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, transaction);
}

TEST_P(ConformanceTest, RetryWithSameKeyReplaysIdenticalTransactionAndWritesNothing) {
  Fund("alice", 1000);
  Operation op = Transfer("alice", "bob", 300);
  op.metadata = {{"order", "A-1"}, {"note", "é ✓"}};
  absl::StatusOr<Outcome> first = Submit("t-1", op);
  ASSERT_OUTCOME(first, OutcomeKind::kCommitted);
  Snapshot before = TakeSnapshot();
  clock().Advance(absl::Minutes(5));

  absl::StatusOr<Outcome> retry = Submit("t-1", op);
  ASSERT_OUTCOME(retry, OutcomeKind::kDuplicate);
  EXPECT_EQ(retry->transaction, first->transaction);  // same id, entries, timestamps
  EXPECT_EQ(TransactionToJson(retry->transaction).dump(), TransactionToJson(first->transaction).dump());
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, SameKeyWithDifferentPayloadIsConflictAndWritesNothing) {
  Fund("alice", 1000);
  ASSERT_OUTCOME(Submit("t-1", Transfer("alice", "bob", 300)), OutcomeKind::kCommitted);
  Snapshot before = TakeSnapshot();
  absl::StatusOr<Outcome> other = Submit("t-1", Transfer("alice", "bob", 301));
  EXPECT_TRUE(IsConflict(other.status())) << other.status();
  Operation with_metadata = Transfer("alice", "bob", 300);
  with_metadata.metadata = {{"changed", true}};
  EXPECT_TRUE(IsConflict(Submit("t-1", with_metadata).status()));
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, ReplayPolicyErrorReportsDuplicateAsError) {
  Fund("alice", 100);
  ClaimOptions claim;
  claim.replay = ReplayPolicy::kError;
  ASSERT_OUTCOME(Submit("t-1", Transfer("alice", "bob", 10), claim), OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> again = Submit("t-1", Transfer("alice", "bob", 10), claim);
  EXPECT_TRUE(IsDuplicate(again.status())) << again.status();
  EXPECT_EQ(BalanceOf("bob"), 10);
}

// ---- rejections and faults leave the key unused -------------------------------------

TEST_P(ConformanceTest, RejectionLeavesKeyUnusedAndLaterRetryCommits) {
  Snapshot before = TakeSnapshot();
  absl::StatusOr<Outcome> declined = Submit("pay-1", Transfer("alice", "bob", 50));
  ASSERT_OUTCOME(declined, OutcomeKind::kRejected);
  EXPECT_EQ(declined->reason, RejectionReason::kInsufficientFunds);
  EXPECT_EQ(TakeSnapshot(), before);

  Fund("alice", 50);
  absl::StatusOr<Outcome> retried = Submit("pay-1", Transfer("alice", "bob", 50));
  ASSERT_OUTCOME(retried, OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 50);
}

TEST_P(ConformanceTest, FaultAtAnyPointRollsBackAndKeyStaysUnused) {
  Fund("alice", 1000);
  for (FaultPoint point : {FaultPoint::kBegin, FaultPoint::kClaim, FaultPoint::kLockAccounts,
                           FaultPoint::kWrite, FaultPoint::kAfterWrite, FaultPoint::kCommit}) {
    SCOPED_TRACE(static_cast<int>(point));
    std::string key = absl::StrCat("fault-", static_cast<int>(point));
    Snapshot before = TakeSnapshot();
    faults().FailAt(point, absl::UnavailableError("connection lost"));
    absl::StatusOr<Outcome> faulted = Submit(key, Transfer("alice", "bob", 10));
    ASSERT_OUTCOME(faulted, OutcomeKind::kFaulted);
    EXPECT_FALSE(faulted->in_doubt);
    EXPECT_EQ(faulted->fault.code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(TakeSnapshot(), before);

    absl::StatusOr<Outcome> retried = Submit(key, Transfer("alice", "bob", 10));
    ASSERT_OUTCOME(retried, OutcomeKind::kCommitted);
    ASSERT_OUTCOME(Submit(key, Transfer("alice", "bob", 10)), OutcomeKind::kDuplicate);
  }
  EXPECT_EQ(BalanceOf("bob"), 60);
}

TEST_P(ConformanceTest, LostCommitReplyIsInDoubtAndResendReplaysTheCommit) {
  Fund("alice", 100);
  faults().FailAt(FaultPoint::kCommitReplyLost, absl::UnavailableError("reply lost"));
  absl::StatusOr<Outcome> unknown = Submit("t-1", Transfer("alice", "bob", 40));
  ASSERT_OUTCOME(unknown, OutcomeKind::kFaulted);
  EXPECT_TRUE(unknown->in_doubt);

  absl::StatusOr<Outcome> resent = Submit("t-1", Transfer("alice", "bob", 40));
  ASSERT_OUTCOME(resent, OutcomeKind::kDuplicate);
  EXPECT_EQ(BalanceOf("bob"), 40);  // posted exactly once
}

TEST_P(ConformanceTest, RetryableErrorIsRetriedInsideSubmit) {
  Fund("alice", 100);
  faults().FailAt(FaultPoint::kLockAccounts, RetryableError("deadlock detected"), 2);
  ASSERT_OUTCOME(Submit("t-1", Transfer("alice", "bob", 40)), OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 40);
}

TEST_P(ConformanceTest, RetryableErrorsBeyondTheBoundFaultAndLeaveKeyUnused) {
  Fund("alice", 100);
  faults().FailAt(FaultPoint::kWrite, RetryableError("serialization failure"), 1000);
  absl::StatusOr<Outcome> outcome = Submit("t-1", Transfer("alice", "bob", 40));
  ASSERT_OUTCOME(outcome, OutcomeKind::kFaulted);
  faults().Clear();
  ASSERT_OUTCOME(Submit("t-1", Transfer("alice", "bob", 40)), OutcomeKind::kCommitted);
}

// ---- identity: scope, namespace, TTL ------------------------------------------------

TEST_P(ConformanceTest, SameKeyInTwoScopesIsTwoOperations) {
  Fund("alice", 100);
  Scope acme{"acme", "user-1"};
  Scope globex{"globex", "user-1"};
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), {}, acme), OutcomeKind::kCommitted);
  // Another scope never sees acme's result: no replay, no conflict.
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "carol", 20), {}, globex), OutcomeKind::kCommitted);
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), {}, Scope{"acme", "user-2"}),
                 OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 20);
  EXPECT_EQ(BalanceOf("carol"), 20);
}

// The old per-kind spaces, now asked for by name: each named space is its own.
TEST_P(ConformanceTest, SameKeyInTwoNamedNamespacesIsTwoOperations) {
  auto in = [](const char* key_namespace, Operation operation) {
    return SubmitRequest{.key = "k", .operation = std::move(operation), .key_namespace = key_namespace};
  };
  ASSERT_OUTCOME(ledger().Submit(in("top_up", Operation::TopUp("issuance", "alice", "CREDITS", 100))),
                 OutcomeKind::kCommitted);
  ASSERT_OUTCOME(ledger().Submit(in("transfer", Transfer("alice", "bob", 30))),
                 OutcomeKind::kCommitted);
  ASSERT_OUTCOME(ledger().Submit(in("payout", Operation::Payout("alice", "payouts", "CREDITS", 30))),
                 OutcomeKind::kCommitted);
  // The default space is apart from every named one.
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 5)), OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("alice"), 35);
  ASSERT_OUTCOME(ledger().Submit(in("transfer", Transfer("alice", "bob", 30))),
                 OutcomeKind::kDuplicate);
  EXPECT_TRUE(IsConflict(ledger().Submit(in("transfer", Transfer("alice", "bob", 31))).status()));
}

TEST_P(ConformanceTest, OneKeyNamespaceForEveryKindMakesAnotherKindAConflict) {
  Fund("alice", 100);
  SubmitRequest top_up{.key = "shared", .operation = Operation::TopUp("issuance", "alice", "CREDITS", 5)};
  SubmitRequest transfer{.key = "shared", .operation = Transfer("alice", "bob", 5)};
  ASSERT_OUTCOME(ledger().Submit(top_up), OutcomeKind::kCommitted);
  // By default every kind shares one key space: another kind is another payload.
  EXPECT_TRUE(IsConflict(ledger().Submit(transfer).status()));
  SubmitRequest hold{.key = "shared",
                     .operation = Operation::Hold("alice", "bob", "CREDITS", 5, std::nullopt)};
  EXPECT_TRUE(IsConflict(ledger().Submit(hold).status()));
  ASSERT_OUTCOME(ledger().Submit(top_up), OutcomeKind::kDuplicate);
  // Naming the default space is the default space.
  top_up.key_namespace = std::string(kDefaultKeyNamespace);
  ASSERT_OUTCOME(ledger().Submit(top_up), OutcomeKind::kDuplicate);
  // A space of its own, asked for by name, does not see the shared one.
  transfer.key_namespace = "transfer";
  ASSERT_OUTCOME(ledger().Submit(transfer), OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("alice"), 100);
  Snapshot before = TakeSnapshot();
  for (const char* bad : {"bad namespace\n", "a|b", "a/b"}) {
    top_up.key_namespace = bad;
    EXPECT_EQ(ledger().Submit(top_up).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  top_up.key_namespace = std::string(kNamespaceBytesMax + 1, 'n');
  EXPECT_EQ(ledger().Submit(top_up).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TakeSnapshot(), before);
}

// Ledger::SubmitAsync, waited for: what its `done` got (DeadlineExceeded if it never came).
SubmitResult SubmitAsyncAndWait(Ledger& ledger, const SubmitRequest& request) {
  struct Wait {
    absl::Notification done;
    std::optional<SubmitResult> result;
  };
  auto wait = std::make_shared<Wait>();
  ledger.SubmitAsync(request, [wait](SubmitResult result) {
    wait->result = std::move(result);
    wait->done.Notify();
  });
  if (!wait->done.WaitForNotificationWithTimeout(absl::Seconds(60))) {
    return absl::DeadlineExceededError("SubmitAsync's done was not called");
  }
  return *wait->result;
}

// Issue 28: SubmitAsync with group commit returns before the commit, and each `done`
// gets exactly what Submit would have returned: submits queued while others commit
// share transactions, each committed once; bad input is answered at once, on the
// calling thread.
TEST_P(ConformanceTest, SubmitAsyncGivesEachCallerWhatSubmitWould) {
  std::unique_ptr<Ledger> grouped = LedgerWith({.group_commit = {.enabled = true}});
  constexpr int kSubmits = 40;
  absl::Mutex mutex;
  std::vector<std::optional<SubmitResult>> results(kSubmits);
  int done = 0;
  for (int i = 0; i < kSubmits; ++i) {
    grouped->SubmitAsync(
        {.key = absl::StrCat("async-", i), .operation = Operation::TopUp("issuance", "alice", "CREDITS", 1)},
        [&, i](SubmitResult result) {
          absl::MutexLock lock(&mutex);
          results[i] = std::move(result);
          done += 1;
        });
  }
  std::optional<SubmitResult> bad;
  std::thread::id bad_answered_on;
  grouped->SubmitAsync({.key = "", .operation = Operation::TopUp("issuance", "alice", "CREDITS", 1)},
                       [&](SubmitResult result) {
                         bad = std::move(result);
                         bad_answered_on = std::this_thread::get_id();
                       });
  ASSERT_TRUE(bad.has_value()) << "bad input is answered before SubmitAsync returns";
  EXPECT_EQ(bad->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_answered_on, std::this_thread::get_id());
  {
    absl::MutexLock lock(&mutex);
    ASSERT_TRUE(mutex.AwaitWithTimeout(absl::Condition(+[](int* count) { return *count == kSubmits; }, &done),
                                       absl::Seconds(60)))
        << done << " of " << kSubmits << " done";
  }
  for (int i = 0; i < kSubmits; ++i) ASSERT_OUTCOME(*results[i], OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> again = SubmitAsyncAndWait(
      *grouped, {.key = "async-0", .operation = Operation::TopUp("issuance", "alice", "CREDITS", 1)});
  ASSERT_OUTCOME(again, OutcomeKind::kDuplicate);
  EXPECT_EQ(again->transaction, (*results[0])->transaction);
  EXPECT_EQ(BalanceOf("alice"), kSubmits);
}

// Issue 30: one key is one operation whichever library door it comes through (Submit,
// SubmitBatch, atomic or not, group commit, the default space named explicitly as the
// HTTP service's requests used to): the first commits, every other replays it.
TEST_P(ConformanceTest, TheSameKeyThroughEveryEntryPointCommitsOnce) {
  std::unique_ptr<Ledger> grouped = LedgerWith({.group_commit = {.enabled = true}});
  using Door = std::function<absl::StatusOr<Outcome>(const SubmitRequest&)>;
  auto through_batch = [this](bool atomic) -> Door {
    return [this, atomic](const SubmitRequest& request) -> absl::StatusOr<Outcome> {
      absl::StatusOr<std::vector<SubmitResult>> results =
          ledger().SubmitBatch({.items = {request}, .atomic = atomic});
      if (!results.ok()) return results.status();
      return results->at(0);
    };
  };
  // SubmitAsync, waited for here: with group commit on its committer's thread, without
  // on the calling thread.
  auto through_async = [](Ledger& ledger) -> Door {
    return [&ledger](const SubmitRequest& request) -> absl::StatusOr<Outcome> {
      return SubmitAsyncAndWait(ledger, request);
    };
  };
  const std::vector<std::pair<std::string, Door>> doors = {
      {"Submit", [this](const SubmitRequest& r) { return ledger().Submit(r); }},
      {"SubmitBatch", through_batch(false)},
      {"atomic SubmitBatch", through_batch(true)},
      {"group commit", [&grouped](const SubmitRequest& r) { return grouped->Submit(r); }},
      {"SubmitAsync, group commit", through_async(*grouped)},
      {"SubmitAsync", through_async(ledger())},
      {"named default space", [this](const SubmitRequest& r) {
         SubmitRequest named = r;
         named.key_namespace = std::string(kDefaultKeyNamespace);
         return ledger().Submit(named);
       }}};
  Amount expected = 0;
  for (size_t first = 0; first < doors.size(); ++first) {
    const std::string key = absl::StrCat("pay-", first);
    const Amount amount = 100 + static_cast<Amount>(first);
    const SubmitRequest request{.key = key,
                                .operation = Operation::TopUp("issuance", "alice", "CREDITS", amount)};
    absl::StatusOr<Outcome> committed = doors[first].second(request);
    ASSERT_OUTCOME(committed, OutcomeKind::kCommitted);
    expected += amount;
    for (const auto& [name, door] : doors) {
      SCOPED_TRACE(absl::StrCat(key, " first through ", doors[first].first, ", then ", name));
      absl::StatusOr<Outcome> again = door(request);
      ASSERT_OUTCOME(again, OutcomeKind::kDuplicate);
      EXPECT_EQ(again->transaction, committed->transaction);
      // Another kind under the key is another payload, whichever door.
      SubmitRequest other_kind = request;
      other_kind.operation = Transfer("alice", "bob", amount);
      EXPECT_TRUE(IsConflict(door(other_kind).status()));
    }
  }
  EXPECT_EQ(BalanceOf("alice"), expected);
  absl::StatusOr<std::vector<KeyRecord>> keys = engine().ListKeyRecords(std::nullopt, 100);
  ASSERT_TRUE(keys.ok()) << keys.status();
  for (const KeyRecord& record : *keys) {
    EXPECT_EQ(record.identity.key_namespace, kDefaultKeyNamespace) << record.identity.Encoded();
  }
  EXPECT_EQ(KeyIdentityOf({.key = "k"}).key_namespace, kDefaultKeyNamespace);
  EXPECT_EQ(KeyIdentityOf({.key = "k", .key_namespace = "mine"}).key_namespace, "mine");
}

TEST_P(ConformanceTest, KeyReplaysWithinItsTtlAndIsReusableAfterIt) {
  Fund("alice", 100);
  ClaimOptions claim;
  claim.ttl = absl::Hours(1);
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), claim), OutcomeKind::kCommitted);
  clock().Advance(absl::Minutes(59));
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), claim), OutcomeKind::kDuplicate);
  EXPECT_TRUE(IsConflict(Submit("k", Transfer("alice", "bob", 11), claim).status()));
  clock().Advance(absl::Minutes(1));
  absl::StatusOr<Outcome> reused = Submit("k", Transfer("alice", "bob", 11), claim);
  ASSERT_OUTCOME(reused, OutcomeKind::kCommitted);
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 11), claim), OutcomeKind::kDuplicate);
  EXPECT_EQ(BalanceOf("bob"), 21);
  EXPECT_TRUE(VerifyLedger(engine())->ok());
}

// The key's TTL starts at its claim (StorageTransaction::ClaimKey is told the record to
// be, so an engine can write it with the claim), not under the account locks, which the
// transaction's created_at waits for: here the account-lock wait is a minute long.
TEST_P(ConformanceTest, KeyTtlCountsFromTheClaimAndTheRecordNamesTheTransaction) {
  Fund("alice", 100);
  const absl::Time claimed_at = clock().Now();
  faults().SetHook(FaultPoint::kAfterClaim, [this] { clock().Advance(absl::Minutes(1)); });
  ClaimOptions claim;
  claim.ttl = absl::Hours(1);
  absl::StatusOr<Outcome> committed = Submit("k", Transfer("alice", "bob", 10), claim);
  faults().Clear();
  ASSERT_OUTCOME(committed, OutcomeKind::kCommitted);
  EXPECT_EQ(committed->transaction.created_at, claimed_at + absl::Minutes(1));
  absl::StatusOr<std::optional<KeyRecord>> record =
      engine().GetKeyRecord(KeyIdentityOf(SubmitRequest{.key = "k"}));
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_TRUE(record->has_value());
  EXPECT_EQ((*record)->transaction_id, committed->transaction.id);
  EXPECT_EQ((*record)->fingerprint, committed->transaction.fingerprint);
  EXPECT_EQ((*record)->created_at, claimed_at);
  EXPECT_EQ((*record)->expires_at, claimed_at + absl::Hours(1));
  clock().Set(claimed_at + absl::Hours(1) - absl::Microseconds(1));
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), claim), OutcomeKind::kDuplicate);
  clock().Set(claimed_at + absl::Hours(1));
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), claim), OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 20);
}

// Reuse after expiry by a submit that is rejected leaves the expired record as it was;
// the next one that fits replaces it.
TEST_P(ConformanceTest, ARejectedReuseOfAnExpiredKeyLeavesItsRecordAndTheNextOneCommits) {
  Fund("alice", 100);
  ClaimOptions claim;
  claim.ttl = absl::Minutes(10);
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 10), claim), OutcomeKind::kCommitted);
  clock().Advance(absl::Minutes(10));
  const KeyIdentity identity = KeyIdentityOf(SubmitRequest{.key = "k"});
  const std::optional<KeyRecord> expired = engine().GetKeyRecord(identity).value();
  ASSERT_TRUE(expired.has_value());
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 500), claim), OutcomeKind::kRejected);
  EXPECT_EQ(engine().GetKeyRecord(identity).value(), expired);
  absl::StatusOr<Outcome> reused = Submit("k", Transfer("alice", "bob", 20), claim);
  ASSERT_OUTCOME(reused, OutcomeKind::kCommitted);
  const std::optional<KeyRecord> replaced = engine().GetKeyRecord(identity).value();
  ASSERT_TRUE(replaced.has_value());
  EXPECT_EQ(replaced->transaction_id, reused->transaction.id);
  EXPECT_EQ(replaced->expires_at, clock().Now() + absl::Minutes(10));
  ASSERT_OUTCOME(Submit("k", Transfer("alice", "bob", 20), claim), OutcomeKind::kDuplicate);
  EXPECT_EQ(BalanceOf("bob"), 30);
}

TEST_P(ConformanceTest, PruneDeletesOnlyExpiredKeys) {
  Fund("alice", 100);
  ClaimOptions short_lived;
  short_lived.ttl = absl::Minutes(10);
  ASSERT_OUTCOME(Submit("short", Transfer("alice", "bob", 1), short_lived), OutcomeKind::kCommitted);
  ASSERT_OUTCOME(Submit("long", Transfer("alice", "bob", 2)), OutcomeKind::kCommitted);
  clock().Advance(absl::Minutes(11));
  absl::StatusOr<int64_t> pruned = ledger().PruneExpiredKeys();
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(*pruned, 1);
  ASSERT_OUTCOME(Submit("long", Transfer("alice", "bob", 2)), OutcomeKind::kDuplicate);
  EXPECT_EQ(engine().ListTransactions("", 100)->size(), 3u);  // transactions stay forever
}

// ---- concurrency ---------------------------------------------------------------------

TEST_P(ConformanceTest, FailFastSubmitWhileFirstAttemptRunsIsInProgress) {
  Fund("alice", 100);
  absl::Notification claimed, release;
  faults().SetHook(FaultPoint::kAfterClaim, [&] {
    if (!claimed.HasBeenNotified()) {
      claimed.Notify();
      release.WaitForNotification();
    }
  });
  absl::StatusOr<Outcome> first;
  std::thread runner([&] { first = Submit("k", Transfer("alice", "bob", 10)); });
  claimed.WaitForNotification();

  ClaimOptions fail_fast;
  fail_fast.wait = WaitPolicy::FailFast();
  absl::StatusOr<Outcome> second = Submit("k", Transfer("alice", "bob", 10), fail_fast);
  EXPECT_TRUE(IsInProgress(second.status())) << second.status();
  release.Notify();
  runner.join();
  ASSERT_OUTCOME(first, OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> after = Submit("k", Transfer("alice", "bob", 10), fail_fast);
  ASSERT_OUTCOME(after, OutcomeKind::kDuplicate);
  EXPECT_EQ(after->transaction, first->transaction);
}

TEST_P(ConformanceTest, WaitingSubmitParksUntilFirstCommitsThenReplays) {
  Fund("alice", 100);
  absl::Notification claimed, release;
  faults().SetHook(FaultPoint::kAfterClaim, [&] {
    if (!claimed.HasBeenNotified()) {
      claimed.Notify();
      release.WaitForNotification();
    }
  });
  absl::StatusOr<Outcome> first, second;
  std::thread runner([&] { first = Submit("k", Transfer("alice", "bob", 10)); });
  claimed.WaitForNotification();
  std::thread waiter([&] { second = Submit("k", Transfer("alice", "bob", 10)); });
  release.Notify();
  runner.join();
  waiter.join();
  ASSERT_OUTCOME(first, OutcomeKind::kCommitted);
  ASSERT_OUTCOME(second, OutcomeKind::kDuplicate);
  EXPECT_EQ(second->transaction, first->transaction);
  EXPECT_EQ(BalanceOf("bob"), 10);
}

TEST_P(ConformanceTest, ThirtyTwoThreadsWithOneKeyCommitOnceAndReplayToTheRest) {
  constexpr int kThreads = 32;
  Fund("alice", 1000);
  absl::Barrier* start = new absl::Barrier(kThreads);  // freed by the last thread through it
  std::vector<absl::StatusOr<Outcome>> outcomes(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      if (start->Block()) delete start;
      outcomes[i] = Submit("same-key", Transfer("alice", "bob", 7));
    });
  }
  for (std::thread& thread : threads) thread.join();

  int committed = 0, duplicates = 0;
  const Transaction* winner = nullptr;
  for (const absl::StatusOr<Outcome>& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (outcome->kind == OutcomeKind::kCommitted) {
      ++committed;
      winner = &outcome->transaction;
    }
    if (outcome->kind == OutcomeKind::kDuplicate) ++duplicates;
  }
  ASSERT_EQ(committed, 1);
  ASSERT_EQ(duplicates, kThreads - 1);
  for (const absl::StatusOr<Outcome>& outcome : outcomes) EXPECT_EQ(outcome->transaction, *winner);
  EXPECT_EQ(BalanceOf("bob"), 7);
}

TEST_P(ConformanceTest, ConcurrentTransfersOverSharedAccountsLoseNoUpdateAndConserve) {
  constexpr int kThreads = 8;
  constexpr int kTransfersPerThread = 40;
  const std::vector<std::string> accounts = {"alice", "bob", "carol", "platform"};
  for (const std::string& account : accounts) Fund(account, 500);
  std::atomic<int> committed{0}, rejected{0};
  absl::Barrier* start = new absl::Barrier(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(1234 + t);
      if (start->Block()) delete start;
      for (int i = 0; i < kTransfersPerThread; ++i) {
        size_t from = random() % accounts.size();
        size_t to = (from + 1 + random() % (accounts.size() - 1)) % accounts.size();
        absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("c-", t, "-", i),
                                                 Transfer(accounts[from], accounts[to], 1 + random() % 90));
        ASSERT_TRUE(outcome.ok()) << outcome.status();
        ASSERT_TRUE(outcome->kind == OutcomeKind::kCommitted || outcome->kind == OutcomeKind::kRejected)
            << OutcomeToJson(*outcome).dump();
        (outcome->kind == OutcomeKind::kCommitted ? committed : rejected)++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  Amount total = 0;
  for (const std::string& account : accounts) {
    EXPECT_GE(BalanceOf(account), 0);
    total += BalanceOf(account);
  }
  EXPECT_EQ(total, 2000);
  EXPECT_EQ(committed + rejected, kThreads * kTransfersPerThread);
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  EXPECT_EQ(report->transactions, committed + static_cast<int>(accounts.size()));
}

// ---- operation kinds -------------------------------------------------------------------

TEST_P(ConformanceTest, SpendCarvesThePlatformFeeOutOfTheAmount) {
  Fund("alice", 100);
  absl::StatusOr<Outcome> outcome =
      Submit("s-1", Operation::Spend("alice", "bob", "CREDITS", 100, Fee{"platform", 15}));
  ASSERT_OUTCOME(outcome, OutcomeKind::kCommitted);
  EXPECT_EQ(outcome->transaction.entries.size(), 3u);
  EXPECT_EQ(BalanceOf("alice"), 0);
  EXPECT_EQ(BalanceOf("bob"), 85);
  EXPECT_EQ(BalanceOf("platform"), 15);
}

TEST_P(ConformanceTest, PayoutMovesCreatorBalanceToPayoutAccount) {
  Fund("bob", 70);
  ASSERT_OUTCOME(Submit("p-1", Operation::Payout("bob", "payouts", "CREDITS", 70)),
                 OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 0);
  EXPECT_EQ(BalanceOf("payouts"), 70);
}

TEST_P(ConformanceTest, PostAppliesBalancedMultiAssetLegs) {
  ASSERT_TRUE(ledger().OpenAccount({.id = "usd_treasury", .asset = "USD", .allow_negative = true}).ok());
  Fund("alice", 10);
  Operation exchange = Operation::Post({{"alice", "CREDITS", -10},
                                        {"issuance", "CREDITS", 10},
                                        {"usd_treasury", "USD", -250},
                                        {"usd_wallet", "USD", 250}});
  ASSERT_OUTCOME(Submit("fx-1", exchange), OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("usd_wallet"), 250);
  EXPECT_EQ(BalanceOf("alice"), 0);
}

TEST_P(ConformanceTest, ReversalNegatesEveryEntryOnceOnly) {
  Fund("alice", 100);
  absl::StatusOr<Outcome> spend =
      Submit("s-1", Operation::Spend("alice", "bob", "CREDITS", 100, Fee{"platform", 10}));
  ASSERT_OUTCOME(spend, OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> reversal = Submit("r-1", Operation::Reverse(spend->transaction.id));
  ASSERT_OUTCOME(reversal, OutcomeKind::kCommitted);
  EXPECT_EQ(reversal->transaction.reversal_of, spend->transaction.id);
  EXPECT_EQ(BalanceOf("alice"), 100);
  EXPECT_EQ(BalanceOf("bob"), 0);
  EXPECT_EQ(BalanceOf("platform"), 0);

  ASSERT_OUTCOME(Submit("r-1", Operation::Reverse(spend->transaction.id)), OutcomeKind::kDuplicate);
  absl::StatusOr<Outcome> again = Submit("r-2", Operation::Reverse(spend->transaction.id));
  ASSERT_OUTCOME(again, OutcomeKind::kRejected);
  EXPECT_EQ(again->reason, RejectionReason::kAlreadyReversed);
  absl::StatusOr<Outcome> of_reversal = Submit("r-3", Operation::Reverse(reversal->transaction.id));
  ASSERT_OUTCOME(of_reversal, OutcomeKind::kRejected);
  EXPECT_EQ(of_reversal->reason, RejectionReason::kNotReversible);
  absl::StatusOr<Outcome> unknown = Submit("r-4", Operation::Reverse("no-such-transaction"));
  ASSERT_OUTCOME(unknown, OutcomeKind::kRejected);
  EXPECT_EQ(unknown->reason, RejectionReason::kTransactionNotFound);
}

TEST_P(ConformanceTest, ConcurrentReversalsOfOneTransactionCommitOnce) {
  constexpr int kThreads = 8;
  Fund("alice", 100);
  absl::StatusOr<Outcome> transfer = Submit("t-1", Transfer("alice", "bob", 60));
  ASSERT_OUTCOME(transfer, OutcomeKind::kCommitted);
  absl::Barrier* start = new absl::Barrier(kThreads);
  std::vector<absl::StatusOr<Outcome>> outcomes(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      if (start->Block()) delete start;
      outcomes[i] = Submit(absl::StrCat("rev-", i), Operation::Reverse(transfer->transaction.id));
    });
  }
  for (std::thread& thread : threads) thread.join();
  int committed = 0;
  for (const auto& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (outcome->kind == OutcomeKind::kCommitted) ++committed;
    else EXPECT_EQ(outcome->reason, RejectionReason::kAlreadyReversed) << OutcomeToJson(*outcome).dump();
  }
  EXPECT_EQ(committed, 1);
  EXPECT_EQ(BalanceOf("bob"), 0);
}

// ---- business rules -------------------------------------------------------------------

TEST_P(ConformanceTest, OverdraftLimitAndSystemAccountsSetTheFloor) {
  ASSERT_TRUE(ledger().OpenAccount({.id = "credit_line", .asset = "CREDITS", .overdraft_limit = 50}).ok());
  ASSERT_OUTCOME(Submit("o-1", Transfer("credit_line", "bob", 50)), OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> beyond = Submit("o-2", Transfer("credit_line", "bob", 1));
  ASSERT_OUTCOME(beyond, OutcomeKind::kRejected);
  EXPECT_EQ(beyond->reason, RejectionReason::kInsufficientFunds);
  EXPECT_EQ(BalanceOf("credit_line"), -50);
  ASSERT_OUTCOME(Submit("o-3", Operation::TopUp("issuance", "bob", "CREDITS", 1'000'000'000)),
                 OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("issuance"), -1'000'000'000);
}

TEST_P(ConformanceTest, RejectionReasonsFollowTheirPrecedence) {
  ASSERT_TRUE(ledger().CloseAccount("carol").ok());
  struct Case {
    Operation operation;
    RejectionReason reason;
  };
  std::vector<Case> cases = {
      {Transfer("alice", "nobody", 1), RejectionReason::kAccountNotFound},
      {Transfer("carol", "nobody", 1), RejectionReason::kAccountNotFound},
      {Transfer("carol", "bob", 1), RejectionReason::kAccountClosed},
      {Operation::Transfer("alice", "usd_wallet", "CREDITS", 1), RejectionReason::kAssetMismatch},
      {Operation::Transfer("usd_wallet", "carol", "USD", 1), RejectionReason::kAccountClosed},
      {Transfer("alice", "bob", 1), RejectionReason::kInsufficientFunds},
  };
  Snapshot before = TakeSnapshot();
  for (size_t i = 0; i < cases.size(); ++i) {
    absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("p-", i), cases[i].operation);
    ASSERT_OUTCOME(outcome, OutcomeKind::kRejected);
    EXPECT_EQ(outcome->reason, cases[i].reason) << i << ": " << outcome->detail;
    EXPECT_FALSE(outcome->detail.empty());
  }
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, BalanceOverflowIsRejected) {
  ASSERT_TRUE(ledger().OpenAccount({.id = "source2", .asset = "CREDITS", .allow_negative = true}).ok());
  ASSERT_OUTCOME(Submit("big-1", Operation::TopUp("issuance", "bob", "CREDITS",
                                                   std::numeric_limits<Amount>::max())),
                 OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> outcome = Submit("big-2", Operation::TopUp("source2", "bob", "CREDITS", 1));
  ASSERT_OUTCOME(outcome, OutcomeKind::kRejected);
  EXPECT_EQ(outcome->reason, RejectionReason::kBalanceOverflow);
}

TEST_P(ConformanceTest, VelocityLimitsRejectWithinTheWindowAndReleaseAfterIt) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> limited = LedgerWith(LedgerOptions{
      .velocity_limits = {{.window = absl::Hours(1), .debit_count_max = 3},
                          {.window = absl::Hours(24), .debit_amount_max = 500}}});
  auto submit = [&](const std::string& key, Amount amount) {
    return limited->Submit(SubmitRequest{key, {}, Transfer("alice", "bob", amount), {}});
  };
  for (int i = 0; i < 3; ++i) ASSERT_OUTCOME(submit(absl::StrCat("v-", i), 100), OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> fourth = submit("v-3", 100);
  ASSERT_OUTCOME(fourth, OutcomeKind::kRejected);
  EXPECT_EQ(fourth->reason, RejectionReason::kVelocityCountExceeded);

  clock().Advance(absl::Minutes(61));
  absl::StatusOr<Outcome> too_much = submit("v-3", 300);  // 300 + 300 > 500 in 24 h
  ASSERT_OUTCOME(too_much, OutcomeKind::kRejected);
  EXPECT_EQ(too_much->reason, RejectionReason::kVelocityAmountExceeded);
  ASSERT_OUTCOME(submit("v-3", 200), OutcomeKind::kCommitted);  // same key: unused until now
  // System accounts (allow_negative) are never limited.
  for (int i = 0; i < 5; ++i) {
    ASSERT_OUTCOME(limited->Submit(SubmitRequest{absl::StrCat("sys-", i), {},
                                                 Operation::TopUp("issuance", "carol", "CREDITS", 1000), {}}),
                   OutcomeKind::kCommitted);
  }
}

// Each submit reads the clock before it waits for its locks, so a later commit can carry
// an earlier time. The window must count by time, not by commit order.
TEST_P(ConformanceTest, VelocityWindowCountsDebitsCommittedOutOfTimeOrder) {
  Fund("alice", 1000);
  std::unique_ptr<Ledger> limited = LedgerWith(
      LedgerOptions{.velocity_limits = {{.window = absl::Minutes(5), .debit_count_max = 2}}});
  auto submit = [&](const std::string& key) {
    return limited->Submit(SubmitRequest{key, {}, Transfer("alice", "bob", 10), {}});
  };
  const absl::Time start = clock().Now();
  clock().Set(start + absl::Minutes(10));
  ASSERT_OUTCOME(submit("late-stamp"), OutcomeKind::kCommitted);
  clock().Set(start);  // committed after the one above, stamped before it
  ASSERT_OUTCOME(submit("early-stamp"), OutcomeKind::kCommitted);
  clock().Set(start + absl::Minutes(10) + absl::Seconds(1));
  ASSERT_OUTCOME(submit("second-in-window"), OutcomeKind::kCommitted);

  // The window holds "late-stamp" and "second-in-window": a third debit is one too many.
  absl::StatusOr<Outcome> over = submit("third-in-window");

  ASSERT_OUTCOME(over, OutcomeKind::kRejected);
  EXPECT_EQ(over->reason, RejectionReason::kVelocityCountExceeded);
}

// ---- bad input -------------------------------------------------------------------------

TEST_P(ConformanceTest, BadInputGetsSpecificErrorsAndWritesNothing) {
  Fund("alice", 100);
  Operation unbalanced = Operation::Post({{"alice", "CREDITS", -10}, {"bob", "CREDITS", 9}});
  Operation overflowing = Operation::Post({{"issuance", "CREDITS", std::numeric_limits<Amount>::max()},
                                           {"bob", "CREDITS", std::numeric_limits<Amount>::max()},
                                           {"alice", "CREDITS", -2}});
  Operation with_fee_too_big = Operation::Spend("alice", "bob", "CREDITS", 10, Fee{"platform", 10});
  Operation mixed = Transfer("alice", "bob", 10);
  mixed.transaction_id = "x";
  Operation big_metadata = Transfer("alice", "bob", 1);
  big_metadata.metadata = {{"blob", std::string(kMetadataBytesMax, 'x')}};
  struct Case {
    std::string name;
    std::string key;
    Operation operation;
    std::string message_part;
  };
  std::vector<Case> cases = {
      {"unbalanced", "k1", unbalanced, "do not balance"},
      {"zero", "k2", Transfer("alice", "bob", 0), "positive"},
      {"negative", "k3", Transfer("alice", "bob", -5), "positive"},
      {"overflow", "k4", overflowing, "overflow"},
      {"same account", "k5", Transfer("alice", "alice", 5), "same account"},
      {"fee", "k6", with_fee_too_big, "fee.amount"},
      {"field of another kind", "k7", mixed, "transaction_id"},
      {"metadata size", "k8", big_metadata, "metadata"},
      {"bad asset", "k9", Operation::Transfer("alice", "bob", "usd", 5), "asset code"},
      {"bad account id", "k10", Transfer("alice", "b o b", 5), "account id"},
      {"empty key", "", Transfer("alice", "bob", 5), "key is empty"},
      {"long key", std::string(kKeyBytesMax + 1, 'k'), Transfer("alice", "bob", 5), "limit is 255"},
      {"non-printable key", "bad\nkey", Transfer("alice", "bob", 5), "non-printable"},
  };
  Snapshot before = TakeSnapshot();
  for (const Case& c : cases) {
    absl::StatusOr<Outcome> outcome = Submit(c.key, c.operation);
    EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(outcome.status().message().find(c.message_part), std::string::npos)
        << c.name << ": " << outcome.status();
  }
  EXPECT_EQ(TakeSnapshot(), before);
  // The keys of rejected bad input stay unused.
  ASSERT_OUTCOME(Submit("k1", Transfer("alice", "bob", 10)), OutcomeKind::kCommitted);
}

TEST_P(ConformanceTest, AccountAndAssetAdministrationErrorsAreSpecific) {
  EXPECT_EQ(ledger().OpenAccount({.id = "alice", .asset = "CREDITS"}).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ledger().OpenAccount({.id = "dave", .asset = "EUR"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ledger().DefineAsset({"USD", 3}).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(ledger().DefineAsset({"USD", 2}).ok());
  EXPECT_EQ(ledger().GetAccount("nobody").status().code(), absl::StatusCode::kNotFound);
  Fund("alice", 5);
  EXPECT_EQ(ledger().CloseAccount("alice").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(ledger().CloseAccount("carol").ok());
  EXPECT_TRUE(ledger().GetAccount("carol")->closed);
}

TEST_P(ConformanceTest, CloseAccountWaitsForASubmitHoldingTheAccountAndSeesItsMoney) {
  // A top-up to carol (balance 0) pauses just before COMMIT, holding carol's lock; a
  // close arrives meanwhile. Whichever way the engine orders them, carol never ends up
  // closed with money in it.
  absl::Notification holding;
  faults().SetHook(FaultPoint::kCommit, [&] {
    holding.Notify();
    absl::SleepFor(absl::Milliseconds(300));  // room for the close to reach the lock
  });
  std::thread submitter([&] {
    ASSERT_OUTCOME(Submit("top-up-carol", Operation::TopUp("issuance", "carol", "CREDITS", 10)),
                   OutcomeKind::kCommitted);
  });
  holding.WaitForNotification();
  faults().Clear();

  absl::Status closed = ledger().CloseAccount("carol");
  submitter.join();

  EXPECT_EQ(closed.code(), absl::StatusCode::kFailedPrecondition) << closed;
  absl::StatusOr<Account> carol = ledger().GetAccount("carol");
  ASSERT_TRUE(carol.ok()) << carol.status();
  EXPECT_EQ(carol->balance, 10);
  EXPECT_FALSE(carol->closed);
  EXPECT_EQ(ledger().CloseAccount("nobody").code(), absl::StatusCode::kNotFound);
}

// ---- records: history, outbox, audit ----------------------------------------------------

TEST_P(ConformanceTest, HistoryPagesByAccountVersion) {
  std::vector<Transaction> funding;
  for (int i = 0; i < 7; ++i) {
    clock().Advance(absl::Seconds(1));
    absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("fund-", i),
                                             Operation::TopUp("issuance", "alice", "CREDITS", 10 + i));
    ASSERT_OUTCOME(outcome, OutcomeKind::kCommitted);
    funding.push_back(outcome->transaction);
  }
  std::vector<HistoryEntry> all;
  int64_t after = 0;
  while (true) {
    absl::StatusOr<std::vector<HistoryEntry>> page = engine().ListEntries("alice", after, 3);
    ASSERT_TRUE(page.ok()) << page.status();
    all.insert(all.end(), page->begin(), page->end());
    if (page->size() < 3) break;
    after = page->back().entry.account_version;
  }
  ASSERT_EQ(all.size(), 7u);
  Amount running = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    running += 10 + static_cast<Amount>(i);
    EXPECT_EQ(all[i].entry.account_version, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(all[i].entry.balance_after, running);
    EXPECT_EQ(all[i].entry, funding[i].entries[1]);
    EXPECT_EQ(all[i].transaction_id, funding[i].id);
    EXPECT_EQ(all[i].created_at, funding[i].created_at);
  }
}

// Two submits hold open transactions, their events written; the later one commits
// first. A reader paging "after the last sequence it saw" sees both, exactly once, in
// sequence order: no event is passed over while its transaction is in flight.
TEST_P(ConformanceTest, EventReaderNeverSkipsAnEventCommittedAfterALaterOne) {
  if (context().one_open_submit_at_a_time) {
    GTEST_SKIP() << "one open submit at a time: sequences follow commit order by construction";
  }
  Fund("alice", 10);
  Fund("carol", 10);
  absl::StatusOr<std::vector<OutboxEvent>> before = engine().ListEvents(0, 1000);
  ASSERT_TRUE(before.ok()) << before.status();
  int64_t cursor = before->empty() ? 0 : before->back().sequence;
  std::atomic<int> arrivals{0};
  absl::Notification ready[2], release[2];
  faults().SetHook(FaultPoint::kCommit, [&] {
    const int me = arrivals.fetch_add(1);
    if (me > 1) return;
    ready[me].Notify();
    release[me].WaitForNotification();
  });
  std::string first_id, second_id;
  auto submit = [&](const std::string& key, const Operation& operation, std::string* id) {
    absl::StatusOr<Outcome> outcome = Submit(key, operation);
    ASSERT_OUTCOME(outcome, OutcomeKind::kCommitted);
    *id = outcome->transaction.id;
  };
  std::thread first([&] { submit("held-first", Transfer("alice", "bob", 1), &first_id); });
  ready[0].WaitForNotification();
  std::thread second([&] { submit("held-second", Transfer("carol", "platform", 1), &second_id); });
  ready[1].WaitForNotification();
  faults().Clear();

  release[1].Notify();
  second.join();
  absl::StatusOr<std::vector<OutboxEvent>> after_second = engine().ListEvents(cursor, 100);
  release[0].Notify();
  first.join();
  ASSERT_TRUE(after_second.ok()) << after_second.status();
  ASSERT_EQ(after_second->size(), 1u);
  EXPECT_EQ(after_second->front().transaction_id, second_id);
  cursor = after_second->front().sequence;
  absl::StatusOr<std::vector<OutboxEvent>> after_first = engine().ListEvents(cursor, 100);

  ASSERT_TRUE(after_first.ok()) << after_first.status();
  ASSERT_EQ(after_first->size(), 1u) << "the event committed second was skipped";
  EXPECT_EQ(after_first->front().transaction_id, first_id);
  EXPECT_GT(after_first->front().sequence, cursor);
}

TEST_P(ConformanceTest, EveryCommitAppendsOneOutboxEventAndReplaysAppendNone) {
  Fund("alice", 100);
  absl::StatusOr<Outcome> outcome = Submit("t-1", Transfer("alice", "bob", 10));
  ASSERT_OUTCOME(outcome, OutcomeKind::kCommitted);
  ASSERT_OUTCOME(Submit("t-1", Transfer("alice", "bob", 10)), OutcomeKind::kDuplicate);
  absl::StatusOr<std::vector<OutboxEvent>> events = engine().ListEvents(0, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_LT((*events)[0].sequence, (*events)[1].sequence);
  EXPECT_EQ((*events)[1].transaction_id, outcome->transaction.id);
  EXPECT_EQ((*events)[1].type, "transaction.committed");
  EXPECT_EQ(nlohmann::json::parse((*events)[1].payload)["id"], outcome->transaction.id);
  // The payload is the transaction's JSON tree printed compact, to the byte.
  EXPECT_EQ((*events)[1].payload, TransactionToJson(outcome->transaction).dump());
  EXPECT_EQ(engine().ListEvents((*events)[0].sequence, 100)->size(), 1u);
}

// The outbox row keeps no copy of its transaction: ListEvents renders the payload from
// the stored transaction (above, to the byte). A payload stored with its event (events
// written before 2026-11-28) reads back as it is; an event whose transaction is not
// stored is DataLoss, never an event with an empty payload.
TEST_P(ConformanceTest, AnEventsPayloadIsItsStoredTransactionUnlessTheEventStoredOne) {
  const auto append_alone = [&](const OutboxEvent& event) {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
    ASSERT_TRUE(storage.ok()) << storage.status();
    ASSERT_TRUE((*storage)->AppendEvent(event).ok());
    ASSERT_TRUE((*storage)->Commit().ok());
  };
  const std::string stored = R"({"id":"written-before","kind":"top_up"})";
  append_alone({.transaction_id = "written-before",
                .type = "transaction.committed",
                .payload = stored,
                .created_at = clock().Now()});
  absl::StatusOr<Outcome> outcome = Submit("t-1", Operation::TopUp("issuance", "alice", "CREDITS", 10));
  ASSERT_OUTCOME(outcome, OutcomeKind::kCommitted);
  absl::StatusOr<std::vector<OutboxEvent>> events = engine().ListEvents(0, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].payload, stored);
  EXPECT_EQ((*events)[1].payload, TransactionToJson(outcome->transaction).dump());

  append_alone({.transaction_id = "never-stored",
                .type = "transaction.committed",
                .created_at = clock().Now()});
  absl::StatusOr<std::vector<OutboxEvent>> broken = engine().ListEvents(0, 100);
  ASSERT_EQ(broken.status().code(), absl::StatusCode::kDataLoss) << broken.status();
  EXPECT_TRUE(absl::StrContains(broken.status().message(), "never-stored")) << broken.status();
  EXPECT_EQ(engine().ListEvents(0, 2)->size(), 2u) << "the pages before it still read";
}

TEST_P(ConformanceTest, GetTransactionsReadsEveryIdThatExistsWithItsEntries) {
  Fund("alice", 1000);
  absl::StatusOr<Outcome> spend =
      Submit("a", Operation::Spend("alice", "bob", "CREDITS", 300, Fee{"platform", 30}));
  ASSERT_OUTCOME(spend, OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> transfer = Submit("b", Transfer("alice", "carol", 100));
  ASSERT_OUTCOME(transfer, OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> reversal = Submit("c", Operation::Reverse(transfer->transaction.id));
  ASSERT_OUTCOME(reversal, OutcomeKind::kCommitted);

  absl::StatusOr<std::vector<Transaction>> found = engine().GetTransactions(
      {reversal->transaction.id, "no-such-transaction", spend->transaction.id,
       transfer->transaction.id});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 3u);
  std::map<std::string, Transaction> by_id;
  for (const Transaction& transaction : *found) by_id[transaction.id] = transaction;
  for (const Outcome* outcome : {&*spend, &*transfer, &*reversal}) {
    ASSERT_EQ(by_id.count(outcome->transaction.id), 1u) << outcome->transaction.id;
    EXPECT_EQ(by_id[outcome->transaction.id], *engine().GetTransaction(outcome->transaction.id));
    EXPECT_EQ(by_id[outcome->transaction.id].entries, outcome->transaction.entries);
  }
  EXPECT_EQ(by_id[spend->transaction.id].entries.size(), 3u);  // with the fee
  EXPECT_EQ(by_id[reversal->transaction.id].reversal_of, transfer->transaction.id);
  absl::StatusOr<std::vector<Transaction>> none = engine().GetTransactions({});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST_P(ConformanceTest, VerifyIsCleanAfterEveryKindOfOperation) {
  Fund("alice", 1000);
  ASSERT_OUTCOME(Submit("a", Operation::Spend("alice", "bob", "CREDITS", 300, Fee{"platform", 30})),
                 OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> transfer = Submit("b", Transfer("alice", "carol", 100));
  ASSERT_OUTCOME(transfer, OutcomeKind::kCommitted);
  ASSERT_OUTCOME(Submit("c", Operation::Payout("bob", "payouts", "CREDITS", 200)), OutcomeKind::kCommitted);
  ASSERT_OUTCOME(Submit("d", Operation::Reverse(transfer->transaction.id)), OutcomeKind::kCommitted);
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  EXPECT_EQ(report->transactions, 5);
  EXPECT_EQ(report->key_records, 5);
  EXPECT_EQ(report->balance_totals.at("CREDITS"), 0);
}

}  // namespace
}  // namespace ledger::testing
