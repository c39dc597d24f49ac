// The account rows a PostgreSQL engine wrote last, so that a submit or a batch whose
// accounts are all remembered is decided on them and sent in ONE round trip (issue 29):
// BEGIN, the check of what was remembered (RememberedRowsCheckSql), the write and
// COMMIT. The check takes every key's advisory lock without waiting, finds no row under
// any key, and locks the accounts in id order, finding each as remembered (version,
// balance, pending amounts, closed, entries_running_max); otherwise it raises and
// nothing is written, the rows are forgotten and the ledger reruns the submit (or
// batch) on two round trips (StaleReadError). What the database holds always decides:
// these rows only save the read.
//
// Bounded: at most kRememberedRowsMax accounts (an arbitrary one goes to make room).
// A gate stops guessing for a while when guesses keep failing (another process writes
// the same accounts): each failed guess costs a round trip.
//
// Thread-safe: shared by every transaction of the engine.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_REMEMBERED_ROWS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_REMEMBERED_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ledger/account.h"

namespace ledger::postgres_internal {

// An account row with its entries_running_max, as a lock read returns it.
using AccountRow = std::pair<Account, std::optional<absl::Time>>;

inline constexpr size_t kRememberedRowsMax = 100'000;

class RememberedRows {
 public:
  // Every one of `sorted_ids`, in that order, or nothing (some is not remembered, or
  // the gate is shut).
  std::optional<std::vector<AccountRow>> Find(const std::vector<std::string>& sorted_ids);
  // The rows a committed transaction wrote (their final state).
  void Remember(const std::vector<AccountRow>& rows);
  // A guess on these accounts failed: they are forgotten, and the gate counts it.
  void Refused(const std::vector<std::string>& ids);
  // A guess was confirmed (the gate counts it).
  void Confirmed();

 private:
  // The gate: out of each kGateWindow guesses, more than kGateRefusedMax refused shuts
  // it for the next kGateClosedFor lookups.
  static constexpr int kGateWindow = 256;
  static constexpr int kGateRefusedMax = 32;
  static constexpr int kGateClosedFor = 4096;
  void CountGuess(bool refused) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  absl::Mutex mutex_;
  std::unordered_map<std::string, AccountRow> rows_ ABSL_GUARDED_BY(mutex_);
  int guesses_ ABSL_GUARDED_BY(mutex_) = 0;
  int refused_ ABSL_GUARDED_BY(mutex_) = 0;
  int closed_for_ ABSL_GUARDED_BY(mutex_) = 0;  // lookups left before the gate opens
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_REMEMBERED_ROWS_H_
