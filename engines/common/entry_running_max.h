// Each entry's created_at_running_max, computed by the write path of every SQL engine
// (SQLite, PostgreSQL, MySQL) in one place: the latest created_at among the entry and
// every earlier entry of its account (by account_version, the account's commit order).
// It never decreases along an account's versions even when created_at does (a clock
// stepped back, two hosts' clocks), so "the balance as of T" (the entry with the greatest
// version whose running maximum is <= T) is a binary search over the primary key
// (account_id, account_version): each engine's kSelectEntryAsOf, one statement of at
// most log2(versions) + 1 primary-key lookups, no index of its own for a submit to keep.
//
// Each account's latest running maximum lives on its row (accounts.entries_running_max,
// NULL for an account without entries): the lock read that already reads the account
// (LockAccounts) notes it here, each written transaction continues it along its entries,
// and the UPDATE that already stores the account's final balance and version stores
// Latest() too. So a submit reads and writes nothing more for it than the account row
// it already locks and updates; no trigger, no lookup per entry.
//
//   EntryRunningMaxima maxima;
//   maxima.NoteLocked(account.id, running_max_read_with_the_lock);
//   ...
//   LEDGER_ASSIGN_OR_RETURN(std::vector<absl::Time> per_entry, maxima.Continue(transaction));
//   // insert entry i with per_entry[i]; update the account with maxima.Latest(account.id)
//
// The memory engine keeps its own structure (memory_engine.cc).
//
// Internal to engines/. Not thread-safe: owned by one storage transaction, which writes
// its transactions in commit order.
#ifndef LEDGER_ENGINES_COMMON_ENTRY_RUNNING_MAX_H_
#define LEDGER_ENGINES_COMMON_ENTRY_RUNNING_MAX_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/transaction.h"

namespace ledger::engine_common {

class EntryRunningMaxima {
 public:
  // What the storage transaction read of the account's row under its lock: its
  // entries_running_max (nullopt: no entry yet). A later note replaces an earlier one (a
  // unit of work locks again; the row then carries what was written since).
  void NoteLocked(const std::string& account_id, std::optional<absl::Time> running_max);

  // The accounts of `transaction`'s entries not noted, sorted and distinct: a write
  // that skipped LockAccounts. The engine reads (locks) them before Continue.
  std::vector<std::string> Unnoted(const Transaction& transaction) const;

  // Each entry's running maximum, in `transaction.entries` order, continuing every
  // account from its latest (noted or continued) one; the accounts move on to the
  // transaction's. Call it once per transaction, in commit order (the order the storage
  // contract writes them in, which is each account's version order). Internal, nothing
  // moved, when an entry's account is not noted.
  absl::StatusOr<std::vector<absl::Time>> Continue(const Transaction& transaction);

  // The account's latest running maximum, for its row: nullopt when it has no entry or
  // was never noted.
  std::optional<absl::Time> Latest(std::string_view account_id) const;

 private:
  // By account id: the latest running maximum, noted or continued.
  std::map<std::string, std::optional<absl::Time>, std::less<>> accounts_;
};

// What an engine answers when its as-of search stopped before its range closed: a probe
// found no entry at a version between 1 and the account's latest, which the posting
// invariants never write (versions run 1..N). DataLoss, naming the account.
absl::Status AsOfSearchStoppedShort(std::string_view account_id);

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_ENTRY_RUNNING_MAX_H_
