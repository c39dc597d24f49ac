// The reads programs make (issues 27 and 31), identically on every engine: the balance as
// of an instant (one index lookup: Engine::EntryAsOf), the transaction listing with its
// filters and keyset paging (Engine::FindTransactions), what a key did
// (Engine::GetKeyRecord, Ledger::LookUpKey) and history that tells the story.
#include <algorithm>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

// The answer the old BalanceAsOf gave by paging every entry: walk the account's history
// in commit order and stop at the first entry created after `as_of`.
Amount BalanceByWalkingTheHistory(Engine& engine, const std::string& account_id, absl::Time as_of) {
  Amount balance = 0;
  int64_t after_version = 0;
  while (true) {
    absl::StatusOr<std::vector<HistoryEntry>> page = engine.ListEntries(account_id, after_version, 50);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return -1;
    for (const HistoryEntry& line : *page) {
      if (line.created_at > as_of) return balance;
      balance = line.entry.balance_after;
    }
    if (page->size() < 50) return balance;
    after_version = page->back().entry.account_version;
  }
}

Amount BalanceAsOf(Ledger& ledger, const std::string& account_id, absl::Time as_of) {
  absl::StatusOr<Amount> balance = ledger.BalanceAsOf(account_id, as_of);
  EXPECT_TRUE(balance.ok()) << balance.status();
  return balance.ok() ? *balance : -1;
}

// Every page of `query` from the first, concatenated (asserting each page is ordered and
// full until the last).
std::vector<std::string> AllPages(Ledger& ledger, TransactionQuery query) {
  std::vector<std::string> ids;
  for (int pages = 0; pages < 1000; ++pages) {
    absl::StatusOr<TransactionPage> page = ledger.ListTransactions(query);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return ids;
    EXPECT_LE(static_cast<int64_t>(page->transactions.size()), query.limit);
    for (const Transaction& transaction : page->transactions) ids.push_back(transaction.id);
    if (page->next_cursor.empty()) return ids;
    query.cursor = page->next_cursor;
  }
  ADD_FAILURE() << "the listing never ended";
  return ids;
}

const absl::Time kStart = absl::FromUnixSeconds(1'767'225'600);  // the fixture clock's start

// ---- balance as of an instant -------------------------------------------------------

TEST_P(ConformanceTest, ReadsBalanceAsOfAnswersEveryInstantOfALongHistory) {
  clock().Set(kStart);
  constexpr int kEntries = 240;
  for (int i = 0; i < kEntries; ++i) {
    clock().Advance(absl::Seconds(10));
    Fund("alice", i + 1);
  }
  // Before the first entry, exactly on each entry, between entries, after the last.
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart), 0);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(10) - absl::Microseconds(1)), 0);
  Amount expected = 0;
  for (int i = 0; i < kEntries; ++i) {
    const absl::Time at = kStart + absl::Seconds(10) * (i + 1);
    expected += i + 1;
    ASSERT_EQ(BalanceAsOf(ledger(), "alice", at), expected) << "exactly on entry " << i + 1;
    ASSERT_EQ(BalanceAsOf(ledger(), "alice", at + absl::Seconds(5)), expected) << "after entry " << i + 1;
  }
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", absl::InfiniteFuture()), expected);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", absl::InfinitePast()), 0);
  // The other side of every entry: issuance went down by as much.
  EXPECT_EQ(BalanceAsOf(ledger(), "issuance", kStart + absl::Seconds(10) * kEntries), -expected);
  // An account without entries, and one that does not exist, read 0.
  EXPECT_EQ(BalanceAsOf(ledger(), "carol", absl::InfiniteFuture()), 0);
  EXPECT_EQ(BalanceAsOf(ledger(), "nobody", absl::InfiniteFuture()), 0);
}

// created_at need not grow with the version: a clock that steps back (NTP, a second host)
// commits a later version with an earlier time. The answer keeps commit order: the
// history up to the first entry created after the instant, exactly what walking it gives.
TEST_P(ConformanceTest, ReadsBalanceAsOfKeepsCommitOrderWhenTheClockStepsBack) {
  const absl::Time t100 = kStart + absl::Seconds(100);
  clock().Set(t100);
  Fund("alice", 1);  // version 1 at 100
  clock().Set(kStart + absl::Seconds(50));
  Fund("alice", 10);  // version 2 at 50
  clock().Set(kStart + absl::Seconds(200));
  Fund("alice", 100);  // version 3 at 200
  clock().Set(kStart + absl::Seconds(150));
  Fund("alice", 1000);  // version 4 at 150
  for (int seconds : {0, 49, 50, 75, 99, 100, 101, 149, 150, 199, 200, 201}) {
    const absl::Time at = kStart + absl::Seconds(seconds);
    EXPECT_EQ(BalanceAsOf(ledger(), "alice", at), BalanceByWalkingTheHistory(engine(), "alice", at))
        << "as of +" << seconds << " s";
  }
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(75)), 0);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", t100), 11);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(199)), 11);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(200)), 1111);

  absl::StatusOr<std::optional<HistoryEntry>> entry =
      engine().EntryAsOf("alice", kStart + absl::Seconds(199));
  ASSERT_TRUE(entry.ok()) << entry.status();
  ASSERT_TRUE(entry->has_value());
  EXPECT_EQ((*entry)->entry.account_version, 2);
  EXPECT_EQ((*entry)->created_at, kStart + absl::Seconds(50));
}

// A batch commits its items with one created_at: the instant of the batch answers its last
// entry of the account, and one microsecond before, the balance before the batch.
TEST_P(ConformanceTest, ReadsBalanceAsOfSeesABatchAsOneInstant) {
  clock().Set(kStart + absl::Seconds(1));
  Fund("alice", 5);
  clock().Set(kStart + absl::Seconds(2));
  SubmitBatchRequest batch;
  for (int i = 0; i < 3; ++i) {
    batch.items.push_back(SubmitRequest{.key = absl::StrCat("batch-", i),
                                        .operation = Operation::TopUp("issuance", "alice",
                                                                      "CREDITS", 10)});
  }
  absl::StatusOr<std::vector<SubmitResult>> results = ledger().SubmitBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status();
  for (const SubmitResult& result : *results) ASSERT_TRUE(result.ok() && result->ok());
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(2) - absl::Microseconds(1)), 5);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(2)), 35);
}

// The running maximum is carried from one write to the next on the account's row
// (engines/common/entry_running_max.h): a batch committed after the clock stepped back,
// posting to alice in several items (top-ups, a transfer out, a hold captured), keeps the
// greater time of the entry before it, so an instant before that entry still answers the
// history before it, exactly what walking the history gives.
TEST_P(ConformanceTest, ReadsBalanceAsOfContinuesTheRunningMaxThroughABatchAfterTheClockStepsBack) {
  clock().Set(kStart + absl::Seconds(10));
  Fund("alice", 1000);  // version 1 at 10
  absl::StatusOr<Outcome> hold =
      Submit("hold-1", Operation::Hold("alice", "bob", "CREDITS", 7, kStart + absl::Hours(1)));
  ASSERT_TRUE(hold.ok() && hold->kind == OutcomeKind::kCommitted);
  clock().Set(kStart + absl::Seconds(100));
  Fund("alice", 1);  // version 2 at 100
  clock().Set(kStart + absl::Seconds(50));  // stepped back
  SubmitBatchRequest batch;
  batch.items.push_back({.key = "batch-top-up-1",
                         .operation = Operation::TopUp("issuance", "alice", "CREDITS", 10)});
  batch.items.push_back({.key = "batch-transfer",
                         .operation = Operation::Transfer("alice", "bob", "CREDITS", 100)});
  batch.items.push_back({.key = "batch-top-up-2",
                         .operation = Operation::TopUp("issuance", "alice", "CREDITS", 20)});
  batch.items.push_back({.key = "batch-capture", .operation = Operation::Capture(hold->transaction.id)});
  absl::StatusOr<std::vector<SubmitResult>> results = ledger().SubmitBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status();
  for (const SubmitResult& result : *results) {
    ASSERT_TRUE(result.ok() && result->ok()) << (result.ok() ? result->detail : result.status().ToString());
  }
  for (int seconds : {0, 10, 49, 50, 51, 99, 100, 101}) {
    const absl::Time at = kStart + absl::Seconds(seconds);
    EXPECT_EQ(BalanceAsOf(ledger(), "alice", at), BalanceByWalkingTheHistory(engine(), "alice", at))
        << "alice as of +" << seconds << " s";
    EXPECT_EQ(BalanceAsOf(ledger(), "bob", at), BalanceByWalkingTheHistory(engine(), "bob", at))
        << "bob as of +" << seconds << " s";
  }
  // Before version 2 (at 100) only version 1 counts, though the batch is stamped 50.
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(99)), 1000);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(100)), 1000 + 1 + 10 - 100 + 20 - 7);
  // bob's first entry is the batch's (at 50): his own history starts there.
  EXPECT_EQ(BalanceAsOf(ledger(), "bob", kStart + absl::Seconds(49)), 0);
  EXPECT_EQ(BalanceAsOf(ledger(), "bob", kStart + absl::Seconds(50)), 107);

  // And the next write after the batch continues from it too (the clock steps back again).
  clock().Set(kStart + absl::Seconds(30));
  Fund("alice", 10000);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(99)), 1000);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(100)), 10924);
}

// Two submits in one unit of work (one storage transaction, Ledger::Transact), the clock
// stepped back between them: the second continues the first's running maximum.
TEST_P(ConformanceTest, ReadsBalanceAsOfContinuesTheRunningMaxWithinAUnitOfWork) {
  clock().Set(kStart + absl::Seconds(10));
  Fund("alice", 1);
  absl::Status done = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    clock().Set(kStart + absl::Seconds(100));
    LEDGER_ASSIGN_OR_RETURN(Outcome first, unit.Submit({.key = "unit-1",
        .operation = Operation::TopUp("issuance", "alice", "CREDITS", 10)}));
    if (first.kind != OutcomeKind::kCommitted) return absl::InternalError(first.detail);
    clock().Set(kStart + absl::Seconds(50));
    LEDGER_ASSIGN_OR_RETURN(Outcome second, unit.Submit({.key = "unit-2",
        .operation = Operation::TopUp("issuance", "alice", "CREDITS", 100)}));
    if (second.kind != OutcomeKind::kCommitted) return absl::InternalError(second.detail);
    return absl::OkStatus();
  });
  ASSERT_TRUE(done.ok()) << done;
  for (int seconds : {9, 10, 49, 50, 99, 100}) {
    const absl::Time at = kStart + absl::Seconds(seconds);
    EXPECT_EQ(BalanceAsOf(ledger(), "alice", at), BalanceByWalkingTheHistory(engine(), "alice", at))
        << "as of +" << seconds << " s";
  }
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(99)), 1);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(100)), 111);
}

// Holds keep no history: placing one posts no entry, so the balance as of any instant is
// the posted balance alone (the pending amounts are answered as of now only).
TEST_P(ConformanceTest, ReadsBalanceAsOfIsThePostedBalanceWhateverHoldsArePending) {
  clock().Set(kStart + absl::Seconds(1));
  Fund("alice", 100);
  clock().Set(kStart + absl::Seconds(2));
  absl::StatusOr<Outcome> hold =
      Submit("hold-1", Operation::Hold("alice", "bob", "CREDITS", 30, kStart + absl::Hours(1)));
  ASSERT_TRUE(hold.ok() && hold->kind == OutcomeKind::kCommitted);
  clock().Set(kStart + absl::Seconds(3));
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(3)), 100);
  EXPECT_EQ(BalanceAsOf(ledger(), "bob", kStart + absl::Seconds(3)), 0);
  ASSERT_TRUE(Submit("capture-1", Operation::Capture(hold->transaction.id)).ok());
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(2)), 100);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(3)), 70);
  EXPECT_EQ(BalanceAsOf(ledger(), "bob", kStart + absl::Seconds(3)), 30);
}

// ---- the as-of search's edges (a binary search over the account's versions) ---------

// The whole history of an account, in commit order (pages of ListEntries).
std::vector<HistoryEntry> WholeHistory(Engine& engine, const std::string& account_id) {
  std::vector<HistoryEntry> history;
  while (true) {
    const int64_t after = history.empty() ? 0 : history.back().entry.account_version;
    absl::StatusOr<std::vector<HistoryEntry>> page = engine.ListEntries(account_id, after, 100);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return history;
    history.insert(history.end(), page->begin(), page->end());
    if (page->size() < 100) return history;
  }
}

// The version Engine::EntryAsOf must answer, from the history in commit order: the one
// before the first entry created after `as_of` (0: none).
int64_t VersionByWalking(const std::vector<HistoryEntry>& history, absl::Time as_of) {
  int64_t version = 0;
  for (const HistoryEntry& line : history) {
    if (line.created_at > as_of) break;
    version = line.entry.account_version;
  }
  return version;
}

// Engine::EntryAsOf at every entry's instant, a microsecond either side, before the first
// and after the last, against the walk: the version, its balance and its time.
void ExpectEveryEdgeMatchesTheWalk(Engine& engine, const std::string& account_id) {
  const std::vector<HistoryEntry> history = WholeHistory(engine, account_id);
  ASSERT_FALSE(history.empty());
  std::vector<absl::Time> instants = {absl::InfinitePast(), absl::InfiniteFuture()};
  for (const HistoryEntry& line : history) {
    for (absl::Duration nudge :
         {-absl::Microseconds(1), absl::ZeroDuration(), absl::Microseconds(1)}) {
      instants.push_back(line.created_at + nudge);
    }
  }
  std::sort(instants.begin(), instants.end());
  instants.erase(std::unique(instants.begin(), instants.end()), instants.end());
  for (absl::Time at : instants) {
    const int64_t expected = VersionByWalking(history, at);
    absl::StatusOr<std::optional<HistoryEntry>> found = engine.EntryAsOf(account_id, at);
    ASSERT_TRUE(found.ok()) << found.status();
    if (expected == 0) {
      ASSERT_FALSE(found->has_value()) << "as of " << at << ": version "
                                       << (*found)->entry.account_version << ", expected none";
      continue;
    }
    ASSERT_TRUE(found->has_value()) << "as of " << at << ": none, expected version " << expected;
    ASSERT_EQ((*found)->entry.account_version, expected) << "as of " << at;
    EXPECT_EQ((*found)->entry, history[expected - 1].entry) << "as of " << at;
    EXPECT_EQ((*found)->created_at, history[expected - 1].created_at) << "as of " << at;
    EXPECT_EQ((*found)->transaction_id, history[expected - 1].transaction_id) << "as of " << at;
  }
}

// One entry, then two, three, ... nine: every length whose search ends on either side of
// a power of two, each asked before, on and after every entry.
TEST_P(ConformanceTest, ReadsEntryAsOfFindsEveryVersionOfShortHistories) {
  constexpr int kLongest = 9;
  for (int length = 1; length <= kLongest; ++length) {
    const std::string account_id = absl::StrCat("short-", length);
    ASSERT_TRUE(ledger().OpenAccount({.id = account_id, .asset = "CREDITS"}).ok());
    for (int version = 1; version <= length; ++version) {
      clock().Set(kStart + absl::Seconds(10 * version));
      ASSERT_NO_FATAL_FAILURE(Fund(account_id, version));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectEveryEdgeMatchesTheWalk(engine(), account_id)) << account_id;
  }
}

// The clock jumps ahead, then steps back for a long run: every entry of the run has the
// running maximum of the jump, so no instant before the jump answers any of them, and the
// jump's instant answers the whole run. Three runs of 60, the middle one ending on the
// account's last version.
TEST_P(ConformanceTest, ReadsEntryAsOfAnswersLongRunsOfEqualRunningMaxAsOneInstant) {
  int64_t version = 0;
  for (int run = 1; run <= 3; ++run) {
    clock().Set(kStart + absl::Seconds(1000 * run));
    ASSERT_NO_FATAL_FAILURE(Fund("alice", 1));  // the jump
    ++version;
    for (int i = 1; i < 60; ++i) {  // back to just after the run before's jump
      clock().Set(kStart + absl::Seconds(1000 * (run - 1) + i));
      ASSERT_NO_FATAL_FAILURE(Fund("alice", 1));
      ++version;
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectEveryEdgeMatchesTheWalk(engine(), "alice"));
  for (int run = 1; run <= 3; ++run) {
    absl::StatusOr<std::optional<HistoryEntry>> before =
        engine().EntryAsOf("alice", kStart + absl::Seconds(1000 * run) - absl::Microseconds(1));
    ASSERT_TRUE(before.ok()) << before.status();
    EXPECT_EQ(before->has_value() ? (*before)->entry.account_version : 0, 60 * (run - 1));
    absl::StatusOr<std::optional<HistoryEntry>> on =
        engine().EntryAsOf("alice", kStart + absl::Seconds(1000 * run));
    ASSERT_TRUE(on.ok()) << on.status();
    ASSERT_TRUE(on->has_value());
    EXPECT_EQ((*on)->entry.account_version, 60 * run);
  }
  EXPECT_EQ(version, 180);
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", kStart + absl::Seconds(2500)), 120);
}

// Hundreds of versions with a clock that wanders back and forth (a fixed pseudo-random
// walk, steps of -40 s to +59 s): every edge of every entry answers what the walk gives.
TEST_P(ConformanceTest, ReadsEntryAsOfMatchesTheWalkOverHundredsOfWanderingVersions) {
  constexpr int kVersions = 300;
  uint32_t state = 12345;
  absl::Time at = kStart + absl::Hours(1);
  for (int i = 0; i < kVersions; ++i) {
    state = state * 1103515245u + 12345u;
    at += absl::Seconds(static_cast<int>((state >> 16) % 100) - 40);
    clock().Set(at);
    ASSERT_NO_FATAL_FAILURE(Fund("alice", i + 1));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectEveryEdgeMatchesTheWalk(engine(), "alice"));
  EXPECT_EQ(BalanceAsOf(ledger(), "alice", absl::InfiniteFuture()),
            kVersions * (kVersions + 1) / 2);
}

// ---- listing transactions -------------------------------------------------------------


Operation WithMetadata(Operation operation, nlohmann::json metadata) {
  operation.metadata = std::move(metadata);
  return operation;
}

TEST_P(ConformanceTest, ReadsListTransactionsFiltersAndPagesByTime) {
  std::vector<std::string> all;           // in (created_at, id) order
  std::vector<std::string> of_bob;
  std::vector<std::string> transfers;
  std::vector<std::string> order_a;
  std::vector<std::string> order_a_of_bob;
  auto commit = [&](const std::string& key, const Operation& operation) -> std::string {
    absl::StatusOr<Outcome> outcome = Submit(key, operation);
    EXPECT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted)
        << key << ": " << (outcome.ok() ? OutcomeToJson(*outcome).dump() : outcome.status().ToString());
    return outcome.ok() ? outcome->transaction.id : "";
  };
  for (int i = 0; i < 12; ++i) {
    clock().Set(kStart + absl::Seconds(i));
    const std::string order = i % 3 == 0 ? "A" : "B";
    std::string id = commit(absl::StrCat("top-up-", i),
                            WithMetadata(Operation::TopUp("issuance", "alice", "CREDITS", 100),
                                         {{"order", order}, {"n", i}}));
    all.push_back(id);
    if (order == "A") order_a.push_back(id);
    // A post with two legs out of alice (two entries of hers, listed once) to bob.
    id = commit(absl::StrCat("spend-", i),
                WithMetadata(Operation::Post({{"alice", "CREDITS", -6},
                                              {"alice", "CREDITS", -4},
                                              {"bob", "CREDITS", 10}}),
                             {{"order", order}}));
    all.push_back(id);
    of_bob.push_back(id);
    if (order == "A") {
      order_a.push_back(id);
      order_a_of_bob.push_back(id);
    }
    if (i % 4 == 0) {
      id = commit(absl::StrCat("transfer-", i), Operation::Transfer("alice", "carol", "CREDITS", 1));
      all.push_back(id);
      transfers.push_back(id);
    }
  }
  // Within one instant, ids order the page: sort each second's transactions by id.
  auto in_listing_order = [&](std::vector<std::string> ids) {
    std::vector<std::pair<absl::Time, std::string>> keyed;
    for (const std::string& id : ids) {
      absl::StatusOr<Transaction> transaction = ledger().GetTransaction(id);
      EXPECT_TRUE(transaction.ok());
      keyed.push_back({transaction.ok() ? transaction->created_at : absl::InfinitePast(), id});
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::string> sorted;
    for (auto& [time, id] : keyed) sorted.push_back(id);
    return sorted;
  };

  for (int64_t limit : {1, 2, 7, 1000}) {
    EXPECT_EQ(AllPages(ledger(), {.limit = limit}), in_listing_order(all)) << "limit " << limit;
  }
  EXPECT_EQ(AllPages(ledger(), {.filter = {.account_id = "bob"}, .limit = 5}), in_listing_order(of_bob));
  std::vector<std::string> of_alice = AllPages(ledger(), {.filter = {.account_id = "alice"}, .limit = 3});
  EXPECT_EQ(of_alice, in_listing_order(all)) << "alice is in every transaction, each once";
  EXPECT_EQ(AllPages(ledger(), {.filter = {.kind = OperationKind::kTransfer}, .limit = 2}),
            in_listing_order(transfers));
  EXPECT_EQ(AllPages(ledger(), {.filter = {.account_id = "carol", .kind = OperationKind::kTransfer},
                                .limit = 2}),
            in_listing_order(transfers));
  EXPECT_TRUE(AllPages(ledger(), {.filter = {.account_id = "bob", .kind = OperationKind::kTransfer}})
                  .empty());
  EXPECT_EQ(AllPages(ledger(), {.filter = {.metadata_key = "order", .metadata_value = "A"},
                                .limit = 3}),
            in_listing_order(order_a));
  EXPECT_EQ(AllPages(ledger(), {.filter = {.account_id = "bob", .metadata_key = "order",
                                           .metadata_value = "A"},
                                .limit = 2}),
            in_listing_order(order_a_of_bob));
  EXPECT_EQ(AllPages(ledger(), {.filter = {.kind = OperationKind::kPost, .metadata_key = "order",
                                           .metadata_value = "A"}}),
            in_listing_order(order_a_of_bob));
  // Only string members are indexed: {"n": 3} is a number.
  EXPECT_TRUE(AllPages(ledger(), {.filter = {.metadata_key = "n", .metadata_value = "3"}}).empty());
  EXPECT_TRUE(AllPages(ledger(), {.filter = {.metadata_key = "order", .metadata_value = "a"}}).empty());

  // A time range: [from, before), exactly on the boundaries.
  std::vector<std::string> seconds_3_to_5;
  for (const std::string& id : in_listing_order(all)) {
    absl::StatusOr<Transaction> transaction = ledger().GetTransaction(id);
    ASSERT_TRUE(transaction.ok());
    if (transaction->created_at >= kStart + absl::Seconds(3) &&
        transaction->created_at < kStart + absl::Seconds(6)) {
      seconds_3_to_5.push_back(id);
    }
  }
  EXPECT_EQ(seconds_3_to_5.size(), 7u);  // 3 x (top-up, spend) + the transfer at 4
  EXPECT_EQ(AllPages(ledger(), {.filter = {.created_from = kStart + absl::Seconds(3),
                                           .created_before = kStart + absl::Seconds(6)},
                                .limit = 2}),
            seconds_3_to_5);
  EXPECT_EQ(AllPages(ledger(), {.filter = {.account_id = "alice",
                                           .created_from = kStart + absl::Seconds(3),
                                           .created_before = kStart + absl::Seconds(6)},
                                .limit = 4}),
            seconds_3_to_5);

  // The transactions come whole: entries, metadata.
  absl::StatusOr<TransactionPage> first = ledger().ListTransactions({.limit = 1});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->transactions.size(), 1u);
  absl::StatusOr<Transaction> stored = ledger().GetTransaction(first->transactions[0].id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(first->transactions[0], *stored);
  EXPECT_FALSE(first->next_cursor.empty());
}

// Without a filter, a page merges every kind's range of the kind index (no index on
// (created_at, id) alone): nine kinds committed twice over in two instants, listed in
// (created_at, id) order across kinds by pages of 1, 2, 5 and 100, from a cursor and
// within a time range, exactly what sorting them gives.
TEST_P(ConformanceTest, ReadsListTransactionsWithoutAFilterMergesEveryKindInOrder) {
  std::vector<std::pair<absl::Time, std::string>> committed;
  int key = 0;
  auto commit = [&](const Operation& operation) -> std::string {
    absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("kinds-", ++key), operation);
    EXPECT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted)
        << key << ": " << (outcome.ok() ? OutcomeToJson(*outcome).dump() : outcome.status().ToString());
    if (!outcome.ok()) return "";
    committed.push_back({outcome->transaction.created_at, outcome->transaction.id});
    return outcome->transaction.id;
  };
  for (int second : {2, 1}) {  // the second instant before the first: ids do not follow time
    clock().Set(kStart + absl::Seconds(second));
    commit(Operation::TopUp("issuance", "alice", "CREDITS", 1000));
    commit(Operation::Spend("alice", "bob", "CREDITS", 10));
    const std::string transfer = commit(Operation::Transfer("alice", "carol", "CREDITS", 10));
    commit(Operation::Payout("alice", "issuance", "CREDITS", 10));
    commit(Operation::Post({{"alice", "CREDITS", -5}, {"bob", "CREDITS", 5}}));
    commit(Operation::Reverse(transfer));
    const std::string hold = commit(Operation::Hold("bob", "carol", "CREDITS", 3,
                                                    kStart + absl::Hours(1)));
    commit(Operation::Capture(hold));
    commit(Operation::Void(commit(Operation::Hold("bob", "carol", "CREDITS", 2,
                                                  kStart + absl::Hours(1)))));
  }
  ASSERT_EQ(committed.size(), 20u);
  std::sort(committed.begin(), committed.end());
  std::vector<std::string> all;
  for (const auto& [time, id] : committed) all.push_back(id);
  for (int64_t limit : {1, 2, 5, 100}) {
    EXPECT_EQ(AllPages(ledger(), {.limit = limit}), all) << "limit " << limit;
  }
  std::vector<std::string> second_instant(all.begin() + 10, all.end());
  EXPECT_EQ(AllPages(ledger(), {.filter = {.created_from = kStart + absl::Seconds(2)}, .limit = 3}),
            second_instant);
  EXPECT_EQ(AllPages(ledger(), {.filter = {.created_before = kStart + absl::Seconds(2)},
                                .limit = 4}),
            std::vector<std::string>(all.begin(), all.begin() + 10));
}

TEST_P(ConformanceTest, ReadsListTransactionsRefusesBadQueriesWithTheirReason) {
  Fund("alice", 10);
  struct Case {
    TransactionQuery query;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{.limit = 0}, "limit must be 1 to 1000"},
      {{.limit = kTransactionPageLimitMax + 1}, "limit must be 1 to 1000"},
      {{.cursor = "not-a-cursor"}, "is not one a transaction listing gave"},
      {{.cursor = "12_"}, "is not one a transaction listing gave"},
      {{.filter = {.created_from = kStart, .created_before = kStart}}, "the time range is empty"},
      {{.filter = {.metadata_key = ""}}, "names a member of 1 to 128 bytes"},
      {{.filter = {.metadata_key = std::string(129, 'k')}}, "names a member of 1 to 128 bytes"},
      {{.filter = {.metadata_key = "order", .metadata_value = std::string(513, 'v')}},
       "at most 512 bytes"},
      {{.filter = {.metadata_value = "A"}}, "needs the member name"},
      {{.filter = {.account_id = "bad id with spaces"}}, ""},
  };
  for (const Case& bad : cases) {
    absl::StatusOr<TransactionPage> page = ledger().ListTransactions(bad.query);
    ASSERT_FALSE(page.ok()) << bad.says;
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument) << page.status();
    EXPECT_NE(page.status().message().find(bad.says), std::string::npos) << page.status();
  }
  absl::StatusOr<TransactionPage> unknown = ledger().ListTransactions({.filter = {.account_id = "nobody"}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound) << unknown.status();
}

// ---- what a key did -------------------------------------------------------------------

TEST_P(ConformanceTest, ReadsLookUpKeyAnswersWithinItsTtlAndOnlyInItsScope) {
  Fund("alice", 100);
  const Scope tenant_a{.tenant = "tenant-a", .actor = "default"};
  absl::StatusOr<Outcome> outcome =
      Submit("order-7", Operation::Transfer("alice", "bob", "CREDITS", 5),
             ClaimOptions{.ttl = absl::Hours(1)}, tenant_a);
  ASSERT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted);
  const KeyIdentity identity{std::string(kDefaultKeyNamespace), tenant_a, "order-7"};

  absl::StatusOr<KeyLookup> found = ledger().LookUpKey(identity);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->record.identity, identity);
  EXPECT_EQ(found->record.transaction_id, outcome->transaction.id);
  EXPECT_EQ(found->transaction, outcome->transaction);
  absl::StatusOr<std::optional<KeyRecord>> stored = engine().GetKeyRecord(identity);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(**stored, found->record);

  // Another tenant, another namespace, another key: nothing.
  for (const KeyIdentity& other :
       {KeyIdentity{std::string(kDefaultKeyNamespace), Scope{}, "order-7"},
        KeyIdentity{"transfer", tenant_a, "order-7"},
        KeyIdentity{std::string(kDefaultKeyNamespace), tenant_a, "order-8"}}) {
    EXPECT_EQ(ledger().LookUpKey(other).status().code(), absl::StatusCode::kNotFound)
        << other.Encoded();
  }
  // Past its TTL the key has done nothing a retry would replay.
  clock().Advance(absl::Hours(1));
  EXPECT_EQ(ledger().LookUpKey(identity).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger().LookUpKey(KeyIdentity{"", Scope{}, "k"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- history that tells the story -----------------------------------------------------

TEST_P(ConformanceTest, ReadsHistoryCarriesKindCounterpartiesAndMetadata) {
  Fund("alice", 100);
  ASSERT_TRUE(Submit("tip-1", WithMetadata(Operation::Spend("alice", "bob", "CREDITS", 10,
                                                            Fee{"platform", 2}),
                                           {{"order", "A-17"}}))
                  .ok());
  absl::StatusOr<std::vector<HistoryEntry>> history = ledger().ListHistory("alice", 0, 10);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 2u);  // the top-up, then the spend
  EXPECT_EQ((*history)[0].kind, OperationKind::kTopUp);
  EXPECT_EQ((*history)[0].counterparties, std::vector<std::string>{"issuance"});
  EXPECT_EQ((*history)[0].metadata, "{}");
  EXPECT_EQ((*history)[1].kind, OperationKind::kSpend);
  EXPECT_EQ((*history)[1].counterparties, (std::vector<std::string>{"bob", "platform"}));
  EXPECT_EQ((*history)[1].metadata, R"({"order":"A-17"})");
  nlohmann::json json = HistoryEntryToJson((*history)[1]);
  EXPECT_EQ(json["kind"], "spend");
  EXPECT_EQ(json["counterparties"], nlohmann::json::array({"bob", "platform"}));
  EXPECT_EQ(json["metadata"]["order"], "A-17");
  absl::StatusOr<std::vector<HistoryEntry>> of_bob = ledger().ListHistory("bob", 0, 10);
  ASSERT_TRUE(of_bob.ok() && of_bob->size() == 1u);
  // Every other account of the transaction: the payer and the fee's receiver.
  EXPECT_EQ((*of_bob)[0].counterparties, (std::vector<std::string>{"alice", "platform"}));
}

}  // namespace
}  // namespace ledger::testing
