#include "tests/support/history_before_reads_indexes.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ledger::testing {
namespace {

// The old BalanceAsOf: walk the account's history in commit order, stop at the first
// entry created after `as_of`.
Amount BalanceByWalking(Engine& engine, const std::string& account_id, absl::Time as_of) {
  absl::StatusOr<std::vector<HistoryEntry>> history = engine.ListEntries(account_id, 0, 1000);
  EXPECT_TRUE(history.ok()) << history.status();
  Amount balance = 0;
  if (!history.ok()) return -1;
  for (const HistoryEntry& line : *history) {
    if (line.created_at > as_of) break;
    balance = line.entry.balance_after;
  }
  return balance;
}

std::string TopUp(Ledger& ledger, const std::string& key, Amount amount, bool order_a) {
  Operation operation = Operation::TopUp("issuance", "alice", "CREDITS", amount);
  if (order_a) operation.metadata = {{"order", "A"}};
  absl::StatusOr<Outcome> outcome = ledger.Submit({.key = key, .operation = operation});
  EXPECT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted)
      << key << ": " << (outcome.ok() ? outcome->detail : outcome.status().ToString());
  return outcome.ok() ? outcome->transaction.id : "";
}

void ExpectEveryInstantMatchesTheWalk(Ledger& ledger, Engine& engine, absl::Time start) {
  for (int seconds = 0; seconds <= 400; seconds += 25) {
    for (absl::Duration nudge : {-absl::Microseconds(1), absl::ZeroDuration()}) {
      const absl::Time at = start + absl::Seconds(seconds) + nudge;
      absl::StatusOr<Amount> balance = ledger.BalanceAsOf("alice", at);
      ASSERT_TRUE(balance.ok()) << balance.status();
      EXPECT_EQ(*balance, BalanceByWalking(engine, "alice", at)) << "as of +" << seconds << " s";
    }
  }
}

}  // namespace

HistoryBeforeReadsIndexes WriteHistoryBeforeReadsIndexes(Ledger& ledger, ManualClock& clock) {
  const absl::Time start = clock.Now();
  EXPECT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  EXPECT_TRUE(ledger.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
  EXPECT_TRUE(ledger.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
  HistoryBeforeReadsIndexes before;
  const int seconds[] = {100, 50, 200, 150, 300};
  for (int i = 0; i < 5; ++i) {
    clock.Set(start + absl::Seconds(seconds[i]));
    std::string id = TopUp(ledger, absl::StrCat("before-", i), Amount{1} << (2 * i), i % 2 == 0 && i < 4);
    if (i % 2 == 0 && i < 4) before.order_a.push_back(id);
  }
  clock.Set(start);
  return before;
}

void ExpectReadsIndexesAfterMigration(Ledger& ledger, Engine& engine, ManualClock& clock,
                                      const HistoryBeforeReadsIndexes& before) {
  const absl::Time start = clock.Now();
  ExpectEveryInstantMatchesTheWalk(ledger, engine, start);
  absl::StatusOr<Amount> at_199 = ledger.BalanceAsOf("alice", start + absl::Seconds(199));
  ASSERT_TRUE(at_199.ok());
  EXPECT_EQ(*at_199, 1 + 4);  // versions 1 (at 100) and 2 (at 50); version 3 is at 200
  absl::StatusOr<TransactionPage> listed = ledger.ListTransactions(
      {.filter = {.metadata_key = "order", .metadata_value = "A"}});
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> ids;
  for (const Transaction& transaction : listed->transactions) ids.push_back(transaction.id);
  // (created_at, id) order: the one at 100 s before the one at 200 s.
  EXPECT_EQ(ids, before.order_a);

  // After the migration both are kept by the write path: a commit at 250 s (before the
  // last at 300) continues alice's running maximum from her account row.
  clock.Set(start + absl::Seconds(250));
  std::string after = TopUp(ledger, "after-migration", 1024, /*order_a=*/true);
  ExpectEveryInstantMatchesTheWalk(ledger, engine, start);
  absl::StatusOr<Amount> at_299 = ledger.BalanceAsOf("alice", start + absl::Seconds(299));
  ASSERT_TRUE(at_299.ok());
  EXPECT_EQ(*at_299, 1 + 4 + 16 + 64);  // version 5 (at 300) and later are not yet
  absl::StatusOr<Amount> at_300 = ledger.BalanceAsOf("alice", start + absl::Seconds(300));
  ASSERT_TRUE(at_300.ok());
  EXPECT_EQ(*at_300, 1 + 4 + 16 + 64 + 256 + 1024);
  listed = ledger.ListTransactions({.filter = {.metadata_key = "order", .metadata_value = "A"}});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->transactions.size(), 3u);
  EXPECT_EQ(listed->transactions[2].id, after);
}

std::vector<absl::Time> InstantsAroundHistory(absl::Time start) {
  std::vector<absl::Time> instants = {start - absl::Hours(1), start + absl::Hours(1)};
  for (int seconds = 0; seconds <= 400; seconds += 25) {
    instants.push_back(start + absl::Seconds(seconds) - absl::Microseconds(1));
    instants.push_back(start + absl::Seconds(seconds));
  }
  return instants;
}

std::string VersionAsOfByTheDroppedIndexSql(std::string_view entries_table, absl::Time at) {
  return absl::StrCat("SELECT coalesce((SELECT account_version FROM ", std::string(entries_table),
                      " WHERE account_id = 'alice' AND created_at_running_max <= ",
                      absl::ToUnixMicros(at),
                      " ORDER BY created_at_running_max DESC, account_version DESC LIMIT 1), 0)");
}

std::vector<std::string> ListedWithoutAFilter(Ledger& ledger) {
  std::vector<std::string> ids;
  TransactionQuery query{.limit = 2};
  for (int pages = 0; pages < 100; ++pages) {
    absl::StatusOr<TransactionPage> page = ledger.ListTransactions(query);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) return ids;
    for (const Transaction& transaction : page->transactions) ids.push_back(transaction.id);
    if (page->next_cursor.empty()) return ids;
    query.cursor = page->next_cursor;
  }
  ADD_FAILURE() << "the listing never ended";
  return ids;
}

std::vector<int64_t> VersionsAsOf(Engine& engine, const std::string& account_id,
                                  const std::vector<absl::Time>& instants) {
  std::vector<int64_t> versions;
  for (absl::Time at : instants) {
    absl::StatusOr<std::optional<HistoryEntry>> found = engine.EntryAsOf(account_id, at);
    EXPECT_TRUE(found.ok()) << found.status();
    versions.push_back(found.ok() && found->has_value() ? (*found)->entry.account_version : 0);
  }
  return versions;
}

}  // namespace ledger::testing
