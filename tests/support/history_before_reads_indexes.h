// The engine-generic half of each engine's reads-indexes migration test (sqlite 0004,
// postgres 0005, mysql 0005): a history written before the migration, with a clock that
// steps back between commits and metadata on some transactions, then what the migrated
// database must answer: every balance as of an instant exactly what walking the history
// in commit order gives, the old transactions listed by their metadata, and both kept for
// writes after the migration by the write path (from the running maximum on the account
// row, which sqlite 0005, postgres 0006 and mysql 0006 fill). How the older schema is made stays in
// tests/engines/<engine>/*_holds_test.cc.
#ifndef LEDGER_TESTS_SUPPORT_HISTORY_BEFORE_READS_INDEXES_H_
#define LEDGER_TESTS_SUPPORT_HISTORY_BEFORE_READS_INDEXES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"

namespace ledger::testing {

struct HistoryBeforeReadsIndexes {
  std::vector<std::string> order_a;  // ids of the transactions with metadata order=A, in order
};

// Through `ledger` (on the older schema): asset CREDITS, accounts issuance and alice, and
// top-ups of alice at 100, 50 (the clock stepped back), 200, 150 and 300 seconds after
// `clock`'s start; two of them carry {"order": "A"}. Asserts each committed.
HistoryBeforeReadsIndexes WriteHistoryBeforeReadsIndexes(Ledger& ledger, ManualClock& clock);

// After the migration: BalanceAsOf of alice equals the walk of her history at every
// second around the entries, FindTransactions by metadata lists `before.order_a`, and a
// commit after the migration (clock stepped back again) keeps both right.
void ExpectReadsIndexesAfterMigration(Ledger& ledger, Engine& engine, ManualClock& clock,
                                      const HistoryBeforeReadsIndexes& before);

// For the migration test of sqlite 0006, postgres 0007, mysql 0007 (the as-of lookup by
// binary search, entries_by_account_as_of and transactions_by_time dropped): the instants around that history at
// which alice's answers are compared, from an hour before it to an hour after, each
// 25 s mark and a microsecond before it (every entry's instant among them).
std::vector<absl::Time> InstantsAroundHistory(absl::Time start);

// The statement the engines sent before that migration (one backward step of
// entries_by_account_as_of), as plain SQL that all three engines accept: alice's version
// as of `at` (0: none) from `entries_table` ("entries", or "`db`.entries").
std::string VersionAsOfByTheDroppedIndexSql(std::string_view entries_table, absl::Time at);

// The ids of every transaction, listed without a filter by pages of 2 (Ledger::
// ListTransactions).
std::vector<std::string> ListedWithoutAFilter(Ledger& ledger);

// Engine::EntryAsOf's version of `account_id` at each instant (0: none).
std::vector<int64_t> VersionsAsOf(Engine& engine, const std::string& account_id,
                                  const std::vector<absl::Time>& instants);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_HISTORY_BEFORE_READS_INDEXES_H_
