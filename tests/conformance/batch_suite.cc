// Batch submits (Ledger::SubmitBatch), checked identically on every engine: each item
// gets exactly what Submit would have returned for it alone, applied in order inside
// one database transaction.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/verify.h"
#include "tests/support/claims.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

// The identity a submit of `key` in the default scope is claimed under.
KeyIdentity SubmitKey(const std::string& key) { return KeyIdentityOf(SubmitRequest{.key = key}); }

Operation Transfer(const std::string& from, const std::string& to, Amount amount) {
  return Operation::Transfer(from, to, "CREDITS", amount);
}

SubmitRequest Item(const std::string& key, Operation operation) {
  return SubmitRequest{.key = key, .operation = std::move(operation)};
}

bool IsOutcome(const SubmitResult& result, OutcomeKind kind) {
  return result.ok() && result->kind == kind;
}

std::string Describe(const std::vector<SubmitResult>& results) {
  std::string text;
  for (size_t i = 0; i < results.size(); ++i) {
    absl::StrAppend(&text, "\n  [", i, "] ",
                    results[i].ok() ? OutcomeToJson(*results[i]).dump()
                                    : results[i].status().ToString());
  }
  return text;
}

bool IsRejected(const SubmitResult& result, RejectionReason reason) {
  return IsOutcome(result, OutcomeKind::kRejected) && result->reason == reason;
}

// The results of a batch that must be accepted as a whole (within the limits).
std::vector<SubmitResult> RunBatch(Ledger& ledger, std::vector<SubmitRequest> items,
                                   bool atomic = false) {
  absl::StatusOr<std::vector<SubmitResult>> results =
      ledger.SubmitBatch({.items = std::move(items), .atomic = atomic});
  EXPECT_TRUE(results.ok()) << results.status();
  if (!results.ok()) return {};
  return *std::move(results);
}

// Ledger::SubmitBatchAsync, waited for: what its `done` got (DeadlineExceeded if it never
// came), and whether it came before SubmitBatchAsync returned.
struct AsyncBatchAnswer {
  absl::StatusOr<std::vector<SubmitResult>> results = absl::DeadlineExceededError("no done");
  bool answered_before_return = false;
};
AsyncBatchAnswer SubmitBatchAsyncAndWait(Ledger& ledger, SubmitBatchRequest batch) {
  struct Wait {
    absl::Notification done;
    std::optional<absl::StatusOr<std::vector<SubmitResult>>> results;
  };
  auto wait = std::make_shared<Wait>();
  ledger.SubmitBatchAsync(std::move(batch), [wait](absl::StatusOr<std::vector<SubmitResult>> results) {
    wait->results = std::move(results);
    wait->done.Notify();
  });
  AsyncBatchAnswer answer;
  answer.answered_before_return = wait->done.HasBeenNotified();
  if (wait->done.WaitForNotificationWithTimeout(absl::Seconds(60))) answer.results = *wait->results;
  return answer;
}

// Issue 28: SubmitBatchAsync (the HTTP batch route's, through the group committer) gives
// exactly what SubmitBatch gives: order, per-item outcomes, atomicity, replays, and a
// batch refused as a whole answered at once; batches and single submits queued together
// each commit once.
TEST_P(ConformanceTest, SubmitBatchAsyncGivesWhatSubmitBatchWould) {
  std::unique_ptr<Ledger> grouped = LedgerWith({.group_commit = {.enabled = true}});
  Fund("alice", 100);
  SubmitBatchRequest batch{.items = {Item("ab-1", Transfer("alice", "bob", 60)),
                                     Item("ab-2", Transfer("alice", "carol", 60)),  // 40 left
                                     Item("ab-3", Transfer("bob", "carol", 30))}};
  AsyncBatchAnswer first = SubmitBatchAsyncAndWait(*grouped, batch);
  ASSERT_TRUE(first.results.ok()) << first.results.status();
  ASSERT_EQ(first.results->size(), 3u);
  EXPECT_TRUE(IsOutcome((*first.results)[0], OutcomeKind::kCommitted)) << Describe(*first.results);
  EXPECT_TRUE(IsRejected((*first.results)[1], RejectionReason::kInsufficientFunds)) << Describe(*first.results);
  EXPECT_TRUE(IsOutcome((*first.results)[2], OutcomeKind::kCommitted)) << Describe(*first.results);
  // The same batch again replays what committed; the rejected key stayed unused.
  AsyncBatchAnswer again = SubmitBatchAsyncAndWait(*grouped, batch);
  ASSERT_TRUE(again.results.ok()) << again.results.status();
  EXPECT_TRUE(IsOutcome((*again.results)[0], OutcomeKind::kDuplicate)) << Describe(*again.results);
  EXPECT_EQ((*again.results)[0]->transaction, (*first.results)[0]->transaction);
  EXPECT_TRUE(IsRejected((*again.results)[1], RejectionReason::kInsufficientFunds)) << Describe(*again.results);
  EXPECT_TRUE(IsOutcome((*again.results)[2], OutcomeKind::kDuplicate)) << Describe(*again.results);
  // Atomic: one item fails, so none commits.
  AsyncBatchAnswer atomic = SubmitBatchAsyncAndWait(
      *grouped, {.items = {Item("ab-4", Transfer("alice", "bob", 10)), Item("ab-5", Transfer("alice", "bob", 1000))},
                 .atomic = true});
  ASSERT_TRUE(atomic.results.ok()) << atomic.results.status();
  EXPECT_TRUE(IsRejected((*atomic.results)[0], RejectionReason::kBatchItemFailed)) << Describe(*atomic.results);
  EXPECT_TRUE(IsRejected((*atomic.results)[1], RejectionReason::kInsufficientFunds)) << Describe(*atomic.results);
  EXPECT_EQ(BalanceOf("alice"), 40);
  EXPECT_EQ(BalanceOf("bob"), 30);
  EXPECT_EQ(BalanceOf("carol"), 30);
  // Refused as a whole: answered on this thread, before SubmitBatchAsync returns.
  AsyncBatchAnswer empty = SubmitBatchAsyncAndWait(*grouped, {});
  EXPECT_TRUE(empty.answered_before_return);
  EXPECT_EQ(empty.results.status().code(), absl::StatusCode::kInvalidArgument);

  // Batches and single submits queued together: each item commits once.
  constexpr int kBatches = 8;
  constexpr int kItems = 3;
  absl::Mutex mutex;
  int done = 0;
  std::vector<absl::StatusOr<std::vector<SubmitResult>>> batch_results(kBatches, absl::UnknownError("none"));
  std::vector<std::optional<SubmitResult>> single_results(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    SubmitBatchRequest many;
    for (int i = 0; i < kItems; ++i) {
      many.items.push_back(Item(absl::StrCat("many-", b, "-", i), Operation::TopUp("issuance", "platform", "CREDITS", 1)));
    }
    grouped->SubmitBatchAsync(std::move(many), [&, b](absl::StatusOr<std::vector<SubmitResult>> results) {
      absl::MutexLock lock(&mutex);
      batch_results[b] = std::move(results);
      done += 1;
    });
    grouped->SubmitAsync(Item(absl::StrCat("one-", b), Operation::TopUp("issuance", "platform", "CREDITS", 1)),
                         [&, b](SubmitResult result) {
                           absl::MutexLock lock(&mutex);
                           single_results[b] = std::move(result);
                           done += 1;
                         });
  }
  {
    absl::MutexLock lock(&mutex);
    ASSERT_TRUE(mutex.AwaitWithTimeout(
        absl::Condition(+[](int* count) { return *count == 2 * kBatches; }, &done), absl::Seconds(60)))
        << done << " of " << 2 * kBatches << " done";
  }
  for (int b = 0; b < kBatches; ++b) {
    ASSERT_TRUE(batch_results[b].ok()) << batch_results[b].status();
    ASSERT_EQ(batch_results[b]->size(), static_cast<size_t>(kItems));
    for (const SubmitResult& result : *batch_results[b]) {
      EXPECT_TRUE(IsOutcome(result, OutcomeKind::kCommitted)) << Describe(*batch_results[b]);
    }
    EXPECT_TRUE(IsOutcome(*single_results[b], OutcomeKind::kCommitted));
  }
  EXPECT_EQ(BalanceOf("platform"), kBatches * (kItems + 1));
}

// ---- order and per-item outcomes ------------------------------------------------------

TEST_P(ConformanceTest, BatchItemsApplyInOrderAndEachSeesTheOnesBefore) {
  Fund("alice", 100);
  std::vector<SubmitResult> results = RunBatch(ledger(), {
      Item("b-1", Transfer("alice", "bob", 60)),
      Item("b-2", Transfer("alice", "carol", 60)),  // 40 left: rejected
      Item("b-3", Transfer("bob", "carol", 30)),    // bob has 60 from b-1
      Item("b-4", Transfer("alice", "carol", 40)),  // exactly what is left
  });
  ASSERT_EQ(results.size(), 4u);
  ASSERT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  ASSERT_TRUE(IsRejected(results[1], RejectionReason::kInsufficientFunds)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[2], OutcomeKind::kCommitted)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[3], OutcomeKind::kCommitted)) << Describe(results);
  // Running balances and versions continue from item to item.
  EXPECT_EQ(results[0]->transaction.entries[0], (Entry{"alice", "CREDITS", -60, 40, 2}));
  EXPECT_EQ(results[2]->transaction.entries[0], (Entry{"bob", "CREDITS", -30, 30, 2}));
  EXPECT_EQ(results[3]->transaction.entries[0], (Entry{"alice", "CREDITS", -40, 0, 3}));
  EXPECT_EQ(results[3]->transaction.entries[1], (Entry{"carol", "CREDITS", 40, 70, 2}));
  EXPECT_EQ(BalanceOf("alice"), 0);
  EXPECT_EQ(BalanceOf("bob"), 30);
  EXPECT_EQ(BalanceOf("carol"), 70);
  for (size_t i : {0u, 2u, 3u}) {
    absl::StatusOr<Transaction> stored = ledger().GetTransaction(results[i]->transaction.id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(*stored, results[i]->transaction);
  }
  // The rejected item's key is unused: the same key commits once alice has the money.
  Fund("alice", 60);
  EXPECT_TRUE(IsOutcome(Submit("b-2", Transfer("alice", "carol", 60)), OutcomeKind::kCommitted));
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

TEST_P(ConformanceTest, BatchBadInputInOneItemLeavesTheOthersAlone) {
  Fund("alice", 100);
  std::vector<SubmitResult> results = RunBatch(ledger(), {
      Item("x-1", Transfer("alice", "bob", 10)),
      Item("x-2", Transfer("alice", "bob", -5)),  // bad amount
      Item("", Transfer("alice", "bob", 10)),     // bad key
      Item("x-4", Transfer("alice", "nobody", 10)),
      Item("x-5", Transfer("alice", "bob", 20)),
  });
  ASSERT_EQ(results.size(), 5u);
  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(absl::IsInvalidArgument(results[1].status())) << Describe(results);
  EXPECT_TRUE(absl::IsInvalidArgument(results[2].status())) << Describe(results);
  EXPECT_TRUE(IsRejected(results[3], RejectionReason::kAccountNotFound)) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[4], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 70);
}

TEST_P(ConformanceTest, BatchEachCommittedItemGetsOneEventInItemOrder) {
  Fund("alice", 100);
  absl::StatusOr<std::vector<OutboxEvent>> before = engine().ListEvents(0, 100);
  ASSERT_TRUE(before.ok()) << before.status();
  std::vector<SubmitResult> results = RunBatch(ledger(), {
      Item("e-1", Transfer("alice", "bob", 10)),
      Item("e-2", Transfer("alice", "bob", 1000)),  // rejected: no event
      Item("e-3", Transfer("alice", "carol", 10)),
  });
  absl::StatusOr<std::vector<OutboxEvent>> events =
      engine().ListEvents(before->empty() ? 0 : before->back().sequence, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].transaction_id, results[0]->transaction.id);
  EXPECT_EQ((*events)[1].transaction_id, results[2]->transaction.id);
}

// ---- keys ---------------------------------------------------------------------------

TEST_P(ConformanceTest, BatchResentBatchReplaysEveryItemAndWritesNothing) {
  Fund("alice", 100);
  std::vector<SubmitRequest> items = {Item("r-1", Transfer("alice", "bob", 10)),
                                      Item("r-2", Transfer("alice", "carol", 20))};
  std::vector<SubmitResult> first = RunBatch(ledger(), items);
  ASSERT_TRUE(IsOutcome(first[0], OutcomeKind::kCommitted)) << Describe(first);
  ASSERT_TRUE(IsOutcome(first[1], OutcomeKind::kCommitted)) << Describe(first);
  Snapshot before = TakeSnapshot();
  clock().Advance(absl::Minutes(1));
  std::vector<SubmitResult> again = RunBatch(ledger(), items);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(IsOutcome(again[i], OutcomeKind::kDuplicate)) << Describe(again);
    EXPECT_EQ(TransactionToJson(again[i]->transaction).dump(),
              TransactionToJson(first[i]->transaction).dump());
  }
  EXPECT_EQ(TakeSnapshot(), before);
  // Single submits see the batch's keys too.
  EXPECT_TRUE(IsOutcome(Submit("r-2", Transfer("alice", "carol", 20)), OutcomeKind::kDuplicate));
  EXPECT_TRUE(IsConflict(Submit("r-2", Transfer("alice", "carol", 21)).status()));
}

// Engines carry a batch's keys as arrays (PostgreSQL array literals, MariaDB multi-row
// statements): every printable character a key or scope may hold must reach the same
// row the single-submit path reads and writes.
TEST_P(ConformanceTest, BatchKeysWithQuotesBracesAndSeparatorsReplayAcrossBothPaths) {
  Fund("alice", 100);
  const std::vector<std::string> keys = {
      "it's", "say \"hi\"", "back\\slash", "{braces}", "a,b", "NULL", " padded ", "p|i/p%e_",
      "\\\"{,}'"};
  const Scope scope{.tenant = "t'e\"n\\a{n}t", .actor = "a,c t%o_r"};
  std::vector<SubmitRequest> items;
  for (size_t i = 0; i < keys.size(); ++i) {
    items.push_back(SubmitRequest{.key = keys[i],
                                  .scope = scope,
                                  .operation = Transfer("alice", "bob", static_cast<Amount>(i + 1))});
  }
  // The last key is committed by a single submit first: the batch must find its row.
  SubmitRequest single = items.back();
  ASSERT_TRUE(IsOutcome(ledger().Submit(single), OutcomeKind::kCommitted));
  std::vector<SubmitResult> first = RunBatch(ledger(), items);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    ASSERT_TRUE(IsOutcome(first[i], OutcomeKind::kCommitted)) << keys[i] << Describe(first);
  }
  ASSERT_TRUE(IsOutcome(first.back(), OutcomeKind::kDuplicate)) << Describe(first);
  Snapshot before = TakeSnapshot();
  std::vector<SubmitResult> again = RunBatch(ledger(), items);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(IsOutcome(again[i], OutcomeKind::kDuplicate)) << keys[i] << Describe(again);
    EXPECT_EQ(again[i]->transaction.id, first[i]->transaction.id);
    SubmitRequest alone = items[i];
    EXPECT_TRUE(IsOutcome(ledger().Submit(alone), OutcomeKind::kDuplicate)) << keys[i];
    alone.operation = Transfer("alice", "bob", 50);
    EXPECT_TRUE(IsConflict(ledger().Submit(alone).status())) << keys[i];
  }
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_EQ(BalanceOf("bob"), 45);  // 1 + 2 + ... + 9, once each
}

TEST_P(ConformanceTest, BatchSameKeyTwiceInOneBatchIsADuplicateOrAConflictOfTheFirst) {
  Fund("alice", 100);
  std::vector<SubmitResult> results = RunBatch(ledger(), {
      Item("k", Transfer("alice", "bob", 10)),
      Item("k", Transfer("alice", "bob", 10)),
      Item("k", Transfer("alice", "bob", 11)),
  });
  ASSERT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[1], OutcomeKind::kDuplicate)) << Describe(results);
  EXPECT_EQ(results[1]->transaction, results[0]->transaction);
  EXPECT_TRUE(IsConflict(results[2].status())) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 90);  // posted once
}

TEST_P(ConformanceTest, BatchSameKeyAfterARejectedFirstIsJudgedAfresh) {
  Fund("alice", 100);
  std::vector<SubmitResult> results = RunBatch(ledger(), {
      Item("k", Transfer("alice", "bob", 150)),  // rejected: 100 available
      Item("fund", Operation::TopUp("issuance", "alice", "CREDITS", 100)),
      Item("k", Transfer("alice", "bob", 150)),  // the same request: now it fits
  });
  ASSERT_TRUE(IsRejected(results[0], RejectionReason::kInsufficientFunds)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[1], OutcomeKind::kCommitted)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[2], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 50);
  EXPECT_TRUE(IsOutcome(Submit("k", Transfer("alice", "bob", 150)), OutcomeKind::kDuplicate));
}

// The key is claimed with its first item's record (that item's fingerprint and TTL); a
// later item of the key with another payload and TTL commits instead, and the record is
// that item's.
TEST_P(ConformanceTest, BatchSameKeyAfterARejectedFirstRecordsTheItemThatCommits) {
  Fund("alice", 100);
  SubmitRequest first = Item("k", Transfer("alice", "bob", 150));  // rejected
  first.claim.ttl = absl::Hours(1);
  SubmitRequest second = Item("k", Transfer("alice", "bob", 60));  // another payload: commits
  second.claim.ttl = absl::Hours(2);
  std::vector<SubmitResult> results =
      RunBatch(ledger(), {first, Item("other", Transfer("alice", "bob", 1)), second});
  ASSERT_TRUE(IsRejected(results[0], RejectionReason::kInsufficientFunds)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[1], OutcomeKind::kCommitted)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[2], OutcomeKind::kCommitted)) << Describe(results);
  absl::StatusOr<std::optional<KeyRecord>> record = engine().GetKeyRecord(SubmitKey("k"));
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_TRUE(record->has_value());
  EXPECT_EQ((*record)->transaction_id, results[2]->transaction.id);
  EXPECT_EQ((*record)->fingerprint, results[2]->transaction.fingerprint);
  EXPECT_EQ((*record)->expires_at - (*record)->created_at, absl::Hours(2));
  EXPECT_TRUE(IsOutcome(Submit("k", Transfer("alice", "bob", 60)), OutcomeKind::kDuplicate));
  EXPECT_TRUE(IsConflict(Submit("k", Transfer("alice", "bob", 150)).status()));
  EXPECT_EQ(BalanceOf("alice"), 39);
  EXPECT_TRUE(VerifyLedger(engine())->ok());
}

TEST_P(ConformanceTest, BatchErrorReplayPolicyAndScopesApplyPerItem) {
  Fund("alice", 100);
  ASSERT_TRUE(IsOutcome(Submit("p", Transfer("alice", "bob", 1)), OutcomeKind::kCommitted));
  SubmitRequest strict = Item("p", Transfer("alice", "bob", 1));
  strict.claim.replay = ReplayPolicy::kError;
  SubmitRequest other_tenant = Item("p", Transfer("alice", "bob", 1));
  other_tenant.scope.tenant = "t2";
  std::vector<SubmitResult> results =
      RunBatch(ledger(), {Item("p", Transfer("alice", "bob", 1)), strict, other_tenant});
  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kDuplicate)) << Describe(results);
  EXPECT_TRUE(IsDuplicate(results[1].status())) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[2], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 98);
}

// ---- reversals and velocity across items ------------------------------------------------

TEST_P(ConformanceTest, BatchAReversalInTheBatchSeesTheReversalsBeforeIt) {
  Fund("alice", 100);
  absl::StatusOr<Outcome> transfer = Submit("t", Transfer("alice", "bob", 30));
  ASSERT_TRUE(IsOutcome(transfer, OutcomeKind::kCommitted));
  const std::string id = transfer->transaction.id;
  std::vector<SubmitResult> results = RunBatch(ledger(), {
      Item("rev-1", Operation::Reverse(id)),
      Item("rev-2", Operation::Reverse(id)),
      Item("rev-3", Operation::Reverse("no-such-transaction")),
  });
  ASSERT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsRejected(results[1], RejectionReason::kAlreadyReversed)) << Describe(results);
  EXPECT_TRUE(IsRejected(results[2], RejectionReason::kTransactionNotFound)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 100);
  std::vector<SubmitResult> again = RunBatch(ledger(), {Item("rev-4", Operation::Reverse(id)),
                                                 Item("rev-5", Operation::Reverse(
                                                     results[0]->transaction.id))});
  EXPECT_TRUE(IsRejected(again[0], RejectionReason::kAlreadyReversed)) << Describe(again);
  EXPECT_TRUE(IsRejected(again[1], RejectionReason::kNotReversible)) << Describe(again);
}

TEST_P(ConformanceTest, BatchVelocityLimitsCountTheDebitsOfEarlierItems) {
  std::unique_ptr<Ledger> limited =
      LedgerWith({.velocity_limits = {{.window = absl::Hours(1), .debit_count_max = 2}}});
  Fund("alice", 100);
  ASSERT_TRUE(IsOutcome(limited->Submit({.key = "v-0", .operation = Transfer("alice", "bob", 1)}),
                        OutcomeKind::kCommitted));
  absl::StatusOr<std::vector<SubmitResult>> results = limited->SubmitBatch(
      {.items = {Item("v-1", Transfer("alice", "bob", 1)), Item("v-2", Transfer("alice", "bob", 1)),
                 Item("v-3", Transfer("bob", "carol", 1))}});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(IsOutcome((*results)[0], OutcomeKind::kCommitted)) << Describe(*results);
  EXPECT_TRUE(IsRejected((*results)[1], RejectionReason::kVelocityCountExceeded))
      << Describe(*results);
  EXPECT_TRUE(IsOutcome((*results)[2], OutcomeKind::kCommitted)) << Describe(*results);
}

// ---- atomic batches ------------------------------------------------------------------

TEST_P(ConformanceTest, BatchAtomicBatchCommitsAllOrNothing) {
  Fund("alice", 100);
  Snapshot before = TakeSnapshot();
  std::vector<SubmitResult> failed = RunBatch(ledger(), 
      {Item("a-1", Transfer("alice", "bob", 60)), Item("a-2", Transfer("alice", "carol", 60)),
       Item("a-3", Transfer("bob", "carol", 10))},
      /*atomic=*/true);
  ASSERT_EQ(failed.size(), 3u);
  EXPECT_TRUE(IsRejected(failed[0], RejectionReason::kBatchItemFailed)) << Describe(failed);
  EXPECT_TRUE(IsRejected(failed[1], RejectionReason::kInsufficientFunds)) << Describe(failed);
  EXPECT_TRUE(IsRejected(failed[2], RejectionReason::kBatchItemFailed)) << Describe(failed);
  EXPECT_NE(failed[0]->detail.find("item 1"), std::string::npos) << failed[0]->detail;
  EXPECT_EQ(TakeSnapshot(), before);  // nothing written, every key unused

  std::vector<SubmitResult> committed = RunBatch(ledger(), 
      {Item("a-1", Transfer("alice", "bob", 60)), Item("a-2", Transfer("alice", "carol", 40)),
       Item("a-3", Transfer("bob", "carol", 10))},
      /*atomic=*/true);
  for (const SubmitResult& result : committed) {
    EXPECT_TRUE(IsOutcome(result, OutcomeKind::kCommitted)) << Describe(committed);
  }
  EXPECT_EQ(BalanceOf("carol"), 50);
}

TEST_P(ConformanceTest, BatchAtomicBatchWithBadInputOrConflictRunsNothing) {
  Fund("alice", 100);
  ASSERT_TRUE(IsOutcome(Submit("used", Transfer("alice", "bob", 1)), OutcomeKind::kCommitted));
  Snapshot before = TakeSnapshot();
  std::vector<SubmitResult> bad = RunBatch(ledger(), 
      {Item("a-1", Transfer("alice", "bob", 5)), Item("a-2", Transfer("alice", "bob", 0))},
      /*atomic=*/true);
  EXPECT_TRUE(IsRejected(bad[0], RejectionReason::kBatchItemFailed)) << Describe(bad);
  EXPECT_TRUE(absl::IsInvalidArgument(bad[1].status())) << Describe(bad);
  std::vector<SubmitResult> conflict = RunBatch(ledger(), 
      {Item("a-1", Transfer("alice", "bob", 5)), Item("used", Transfer("alice", "bob", 2))},
      /*atomic=*/true);
  EXPECT_TRUE(IsRejected(conflict[0], RejectionReason::kBatchItemFailed)) << Describe(conflict);
  EXPECT_TRUE(IsConflict(conflict[1].status())) << Describe(conflict);
  EXPECT_EQ(TakeSnapshot(), before);
  // A replay does not break an atomic batch: that item is committed already.
  std::vector<SubmitResult> replayed = RunBatch(ledger(), 
      {Item("a-1", Transfer("alice", "bob", 5)), Item("used", Transfer("alice", "bob", 1))},
      /*atomic=*/true);
  EXPECT_TRUE(IsOutcome(replayed[0], OutcomeKind::kCommitted)) << Describe(replayed);
  EXPECT_TRUE(IsOutcome(replayed[1], OutcomeKind::kDuplicate)) << Describe(replayed);
}

// ---- limits ----------------------------------------------------------------------------

TEST_P(ConformanceTest, BatchBatchesOutsideTheLimitsAreRefusedWhole) {
  Snapshot before = TakeSnapshot();
  absl::StatusOr<std::vector<SubmitResult>> empty = ledger().SubmitBatch({});
  EXPECT_TRUE(absl::IsInvalidArgument(empty.status())) << empty.status();
  SubmitBatchRequest too_many;
  for (size_t i = 0; i <= kBatchItemsMax; ++i) {
    too_many.items.push_back(Item(absl::StrCat("m-", i), Transfer("alice", "bob", 1)));
  }
  absl::StatusOr<std::vector<SubmitResult>> refused = ledger().SubmitBatch(too_many);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("8190"), std::string_view::npos);
  SubmitBatchRequest too_many_entries;
  for (size_t i = 0; i * kPostingsPerTransactionMax <= kBatchEntriesMax; ++i) {
    too_many_entries.items.push_back(Item(absl::StrCat("n-", i), Operation::Reverse("x")));
  }
  absl::StatusOr<std::vector<SubmitResult>> entries = ledger().SubmitBatch(too_many_entries);
  EXPECT_TRUE(absl::IsInvalidArgument(entries.status())) << entries.status();
  EXPECT_NE(entries.status().message().find("entries"), std::string_view::npos);
  EXPECT_EQ(TakeSnapshot(), before);
}

// ---- faults ----------------------------------------------------------------------------

TEST_P(ConformanceTest, BatchAFaultFaultsEveryItemAndLeavesEveryKeyUnused) {
  Fund("alice", 100);
  Snapshot before = TakeSnapshot();
  faults().FailAt(FaultPoint::kCommit, absl::UnavailableError("connection lost"));
  std::vector<SubmitRequest> items = {Item("f-1", Transfer("alice", "bob", 10)),
                                      Item("f-2", Transfer("alice", "bob", 1000)),
                                      Item("f-3", Transfer("alice", "carol", 10))};
  std::vector<SubmitResult> results = RunBatch(ledger(), items);
  for (const SubmitResult& result : results) {
    ASSERT_TRUE(IsOutcome(result, OutcomeKind::kFaulted)) << Describe(results);
    EXPECT_FALSE(result->in_doubt);
  }
  EXPECT_EQ(TakeSnapshot(), before);
  std::vector<SubmitResult> retried = RunBatch(ledger(), items);
  EXPECT_TRUE(IsOutcome(retried[0], OutcomeKind::kCommitted)) << Describe(retried);
  EXPECT_TRUE(IsRejected(retried[1], RejectionReason::kInsufficientFunds)) << Describe(retried);
  EXPECT_TRUE(IsOutcome(retried[2], OutcomeKind::kCommitted)) << Describe(retried);
}

TEST_P(ConformanceTest, BatchRetryableErrorsRerunTheWholeBatch) {
  Fund("alice", 100);
  faults().FailAt(FaultPoint::kLockAccounts, RetryableError("deadlock detected"), 2);
  std::vector<SubmitResult> results = RunBatch(ledger(), 
      {Item("d-1", Transfer("alice", "bob", 10)), Item("d-2", Transfer("bob", "carol", 5))});
  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[1], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("carol"), 5);
}

// Past attempts_max the batch gives up: every item faulted, each key unused.
TEST_P(ConformanceTest, BatchRetryableErrorsBeyondTheBoundFaultEveryItemAndLeaveKeysUnused) {
  Fund("alice", 100);
  std::atomic<int> attempts{0};
  faults().SetHook(FaultPoint::kBegin, [&] { attempts.fetch_add(1); });
  faults().FailAt(FaultPoint::kWrite, RetryableError("serialization failure"), 1000);
  std::vector<SubmitResult> results = RunBatch(
      ledger(), {Item("x-1", Transfer("alice", "bob", 10)), Item("x-2", Transfer("alice", "carol", 5))});
  faults().Clear();
  for (const SubmitResult& result : results) {
    ASSERT_TRUE(IsOutcome(result, OutcomeKind::kFaulted)) << Describe(results);
    EXPECT_FALSE(result->in_doubt) << Describe(results);
  }
  EXPECT_EQ(attempts.load(), LedgerOptions{}.attempts_max);
  EXPECT_EQ(BalanceOf("alice"), 100);
  results = RunBatch(ledger(), {Item("x-1", Transfer("alice", "bob", 10)),
                                Item("x-2", Transfer("alice", "carol", 5))});
  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[1], OutcomeKind::kCommitted)) << Describe(results);
}

TEST_P(ConformanceTest, BatchAnInDoubtCommitLeavesEveryCommittingItemInDoubt) {
  Fund("alice", 100);
  faults().FailAt(FaultPoint::kCommitReplyLost, absl::UnavailableError("reply lost"));
  std::vector<SubmitRequest> items = {Item("i-1", Transfer("alice", "bob", 10)),
                                      Item("i-2", Transfer("alice", "bob", 1000)),
                                      Item("i-1", Transfer("alice", "bob", 10))};
  std::vector<SubmitResult> results = RunBatch(ledger(), items);
  ASSERT_TRUE(IsOutcome(results[0], OutcomeKind::kFaulted)) << Describe(results);
  EXPECT_TRUE(results[0]->in_doubt);
  EXPECT_TRUE(IsRejected(results[1], RejectionReason::kInsufficientFunds)) << Describe(results);
  ASSERT_TRUE(IsOutcome(results[2], OutcomeKind::kFaulted)) << Describe(results);
  EXPECT_TRUE(results[2]->in_doubt);
  // The same key is the safe resend: it committed, so it replays.
  EXPECT_TRUE(IsOutcome(Submit("i-1", Transfer("alice", "bob", 10)), OutcomeKind::kDuplicate));
  EXPECT_EQ(BalanceOf("alice"), 90);
}

// ---- concurrency -----------------------------------------------------------------------

TEST_P(ConformanceTest, BatchAKeyHeldElsewhereMakesOnlyItsItemsInProgress) {
  if (context().writers_serialized) {
    GTEST_SKIP() << "one writer at a time: any open submit holds every key";
  }
  Fund("alice", 100);
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine().Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(SubmitKey("busy"))).ok());
  SubmitRequest busy = Item("busy", Transfer("alice", "bob", 5));
  busy.claim.wait = WaitPolicy{absl::Milliseconds(200)};
  std::vector<SubmitResult> results =
      RunBatch(ledger(), {Item("free-1", Transfer("alice", "bob", 10)), busy,
                   Item("free-2", Transfer("alice", "carol", 10))});
  (*holder)->Rollback();
  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsInProgress(results[1].status())) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[2], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 80);
  EXPECT_TRUE(IsOutcome(Submit("busy", Transfer("alice", "bob", 5)), OutcomeKind::kCommitted));
}

// The batch waits one claim wait in all, however many of its keys are busy: once the
// claim of every key ran out of it, the reruns that name each busy key (and commit the
// free ones) are left no wait of their own.
TEST_P(ConformanceTest, BatchBusyKeysCostTheBatchOneClaimWaitInAll) {
  if (context().writers_serialized) {
    GTEST_SKIP() << "one writer at a time: any open submit holds every key";
  }
  Fund("alice", 100);
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine().Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(SubmitKey("busy-a"))).ok());
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(SubmitKey("busy-b"))).ok());
  constexpr absl::Duration kWait = absl::Milliseconds(200);
  std::vector<SubmitRequest> items = {
      Item("free-1", Transfer("alice", "bob", 10)), Item("busy-a", Transfer("alice", "bob", 5)),
      Item("busy-b", Transfer("alice", "carol", 5)), Item("free-2", Transfer("alice", "carol", 10))};
  for (SubmitRequest& item : items) item.claim.wait = WaitPolicy{kWait};
  const size_t begun_before = faults().claim_waits().size();
  std::vector<SubmitResult> results = RunBatch(ledger(), items);
  (*holder)->Rollback();
  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsInProgress(results[1].status())) << Describe(results);
  EXPECT_TRUE(IsInProgress(results[2].status())) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[3], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 80);

  std::vector<absl::Duration> waits = faults().claim_waits();
  waits.erase(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(begun_before));
  ASSERT_GE(waits.size(), 2u) << "the claim of every key, then reruns naming the busy ones";
  EXPECT_EQ(waits.front(), kWait);
  for (size_t i = 1; i < waits.size(); ++i) {
    EXPECT_EQ(waits[i], absl::ZeroDuration()) << "attempt " << i << " waited again";
  }
}

TEST_P(ConformanceTest, BatchConcurrentBatchesOverTheSameAccountsNeverDeadlock) {
  for (const char* id : {"alice", "bob", "carol"}) Fund(id, 10000);
  constexpr int kRounds = 15;
  auto run = [&](int thread) {
    for (int round = 0; round < kRounds; ++round) {
      // Opposite item orders and opposite key orders in the two threads.
      std::vector<SubmitRequest> items;
      for (int i = 0; i < 6; ++i) {
        int j = thread == 0 ? i : 5 - i;
        const char* from = (j % 3 == 0) ? "alice" : (j % 3 == 1) ? "bob" : "carol";
        const char* to = (j % 3 == 0) ? "carol" : (j % 3 == 1) ? "alice" : "bob";
        items.push_back(Item(absl::StrCat("c", thread, "-", round, "-", j), Transfer(from, to, 1)));
      }
      absl::StatusOr<std::vector<SubmitResult>> results =
          ledger().SubmitBatch({.items = std::move(items)});
      ASSERT_TRUE(results.ok()) << results.status();
      for (const SubmitResult& result : *results) {
        ASSERT_TRUE(IsOutcome(result, OutcomeKind::kCommitted)) << Describe(*results);
      }
    }
  };
  std::thread first(run, 0), second(run, 1);
  first.join();
  second.join();
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  EXPECT_EQ(report->transactions, 3 + 2 * kRounds * 6);
}

// ---- group commit ----------------------------------------------------------------------

// Pauses the first COMMIT until every caller has entered Submit (and a moment more), so
// the others queue behind it and share the next transaction.
class CommitGate {
 public:
  explicit CommitGate(int callers) : callers_(callers) {}
  void Entering() { entered_.fetch_add(1); }
  void AtCommit() {
    if (commits_.fetch_add(1) != 0) return;
    while (entered_.load() < callers_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

 private:
  const int callers_;
  std::atomic<int> entered_{0};
  std::atomic<int> commits_{0};
};

// Each request submitted from a thread of its own, the first commit held until every
// caller has entered (CommitGate) so the others queue behind it: the results in request
// order, and the database transactions they began.
struct ConcurrentSubmits {
  std::vector<SubmitResult> results;
  int transactions = 0;
};
ConcurrentSubmits SubmitConcurrently(Ledger& ledger, FaultInjectingEngine& faults,
                                     const std::vector<SubmitRequest>& requests) {
  CommitGate gate(static_cast<int>(requests.size()));
  std::atomic<int> transactions{0};
  faults.SetHook(FaultPoint::kBegin, [&] { transactions.fetch_add(1); });
  faults.SetHook(FaultPoint::kCommit, [&] { gate.AtCommit(); });
  std::vector<SubmitResult> results(requests.size(), absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < requests.size(); ++i) {
    threads.emplace_back([&, i] {
      gate.Entering();
      results[i] = ledger.Submit(requests[i]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  faults.Clear();
  return {std::move(results), transactions.load()};
}

TEST_P(ConformanceTest, GroupCommitGivesEachConcurrentCallerExactlyItsOwnOutcome) {
  // One shared transaction at a time, so the gate makes every later caller queue.
  std::unique_ptr<Ledger> grouped =
      LedgerWith({.group_commit = {.enabled = true, .transactions_in_flight_max = 1}});
  Fund("alice", 100);
  ASSERT_TRUE(IsOutcome(Submit("taken", Transfer("alice", "carol", 1)), OutcomeKind::kCommitted));
  std::vector<SubmitRequest> requests = {
      Item("g-0", Transfer("alice", "bob", 10)),
      Item("g-1", Transfer("alice", "bob", 500)),   // rejected: insufficient funds
      Item("g-2", Transfer("alice", "bob", -1)),    // bad input
      Item("taken", Transfer("alice", "carol", 2)), // conflict
      Item("taken", Transfer("alice", "carol", 1)), // duplicate
      Item("g-5", Transfer("alice", "nobody", 1)),  // rejected: no account
      Item("g-6", Transfer("alice", "carol", 20)),
      Item("g-7", Transfer("alice", "bob", 30)),
  };
  const int callers = static_cast<int>(requests.size());
  auto [results, transactions] = SubmitConcurrently(*grouped, faults(), requests);

  EXPECT_TRUE(IsOutcome(results[0], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsRejected(results[1], RejectionReason::kInsufficientFunds)) << Describe(results);
  EXPECT_TRUE(absl::IsInvalidArgument(results[2].status())) << Describe(results);
  EXPECT_TRUE(IsConflict(results[3].status())) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[4], OutcomeKind::kDuplicate)) << Describe(results);
  EXPECT_TRUE(IsRejected(results[5], RejectionReason::kAccountNotFound)) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[6], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_TRUE(IsOutcome(results[7], OutcomeKind::kCommitted)) << Describe(results);
  EXPECT_EQ(BalanceOf("alice"), 100 - 1 - 10 - 20 - 30);
  // The callers shared transactions: the first alone, the others behind its commit.
  EXPECT_LT(transactions, callers - 1) << "no submits were grouped";
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

// A caller whose key another transaction holds gets "in progress" after its wait; the
// callers that shared its transaction commit all the same.
TEST_P(ConformanceTest, GroupCommitABusyKeyMakesOnlyItsCallerInProgress) {
  if (context().writers_serialized) {
    GTEST_SKIP() << "one writer at a time: any open submit holds every key";
  }
  std::unique_ptr<Ledger> grouped =
      LedgerWith({.group_commit = {.enabled = true, .transactions_in_flight_max = 1}});
  Fund("alice", 100);
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine().Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(SubmitKey("busy"))).ok());
  std::vector<SubmitRequest> requests;
  for (int i = 0; i < 8; ++i) {
    requests.push_back(Item(i == 3 ? "busy" : absl::StrCat("g-", i), Transfer("alice", "bob", 1)));
    requests.back().claim.wait = WaitPolicy{absl::Milliseconds(300)};  // one wait: they group
  }
  const int callers = static_cast<int>(requests.size());
  auto [results, transactions] = SubmitConcurrently(*grouped, faults(), requests);
  (*holder)->Rollback();

  for (int i = 0; i < callers; ++i) {
    if (i == 3) {
      EXPECT_TRUE(IsInProgress(results[i].status())) << Describe(results);
    } else {
      EXPECT_TRUE(IsOutcome(results[i], OutcomeKind::kCommitted)) << i << Describe(results);
    }
  }
  EXPECT_EQ(BalanceOf("alice"), 100 - (callers - 1));
  // Behind the first commit the others shared transactions: the claim of all their keys,
  // the rerun that named the busy one, the commit of the rest.
  EXPECT_LT(transactions, callers - 1) << "no submits were grouped";
  // The busy key is unused: its submit commits once the holder is gone.
  EXPECT_TRUE(IsOutcome(Submit("busy", Transfer("alice", "bob", 1)), OutcomeKind::kCommitted));
}

TEST_P(ConformanceTest, GroupCommitFaultFailsOnlyTheCallersOfTheFailedTransaction) {
  std::unique_ptr<Ledger> grouped =
      LedgerWith({.group_commit = {.enabled = true, .transactions_in_flight_max = 1}});
  Fund("alice", 100);
  constexpr int kCallers = 5;
  CommitGate gate(kCallers);
  faults().SetHook(FaultPoint::kCommit, [&] { gate.AtCommit(); });
  faults().FailAt(FaultPoint::kCommit, absl::UnavailableError("connection lost"));
  std::vector<SubmitResult> results(kCallers, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      gate.Entering();
      results[i] = grouped->Submit(Item(absl::StrCat("f-", i), Transfer("alice", "bob", 1)));
    });
  }
  for (std::thread& thread : threads) thread.join();
  faults().Clear();
  int faulted = 0, committed = 0;
  for (const SubmitResult& result : results) {
    faulted += IsOutcome(result, OutcomeKind::kFaulted);
    committed += IsOutcome(result, OutcomeKind::kCommitted);
  }
  // The first transaction failed; every caller in it, and only those, faulted.
  EXPECT_GE(faulted, 1) << Describe(results);
  EXPECT_EQ(faulted + committed, kCallers) << Describe(results);
  EXPECT_EQ(BalanceOf("bob"), committed);
  for (int i = 0; i < kCallers; ++i) {  // a faulted key is unused: resending commits it
    if (!IsOutcome(results[i], OutcomeKind::kFaulted)) continue;
    EXPECT_TRUE(IsOutcome(grouped->Submit(Item(absl::StrCat("f-", i), Transfer("alice", "bob", 1))),
                          OutcomeKind::kCommitted));
  }
  EXPECT_EQ(BalanceOf("bob"), kCallers);
}

// With two shared transactions allowed in flight (the default), a second one begins while
// the first is still open: the first COMMIT waits for that (up to 5 s) before it goes.
TEST_P(ConformanceTest, GroupCommitRunsTwoSharedTransactionsAtOnce) {
  std::unique_ptr<Ledger> grouped = LedgerWith({.group_commit = {.enabled = true}});
  ASSERT_EQ(GroupCommitOptions{}.transactions_in_flight_max, 2);
  Fund("alice", 100);
  constexpr int kCallers = 6;
  std::atomic<int> begun{0};
  std::atomic<int> commits{0};
  std::atomic<bool> overlapped{false};
  faults().SetHook(FaultPoint::kBegin, [&] { begun.fetch_add(1); });
  faults().SetHook(FaultPoint::kCommit, [&] {
    if (commits.fetch_add(1) != 0) return;
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (begun.load() < 2 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
    overlapped = begun.load() >= 2;
  });
  std::vector<SubmitResult> results(kCallers, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      results[i] = grouped->Submit(Item(absl::StrCat("two-", i), Transfer("alice", "bob", 1)));
    });
  }
  for (std::thread& thread : threads) thread.join();
  faults().Clear();
  EXPECT_TRUE(overlapped.load()) << "the second shared transaction waited for the first";
  for (const SubmitResult& result : results) {
    EXPECT_TRUE(IsOutcome(result, OutcomeKind::kCommitted)) << Describe(results);
  }
  EXPECT_EQ(BalanceOf("bob"), kCallers);
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

}  // namespace
}  // namespace ledger::testing
