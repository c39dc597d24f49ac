// The running state of one batch attempt (ledger/batch_attempt.h): what the database
// said under the attempt's claims and locks, as the items decided before have left it.
// Each item is decided against it and, when it commits, changes it (Commit), so a later
// item sees the balances, versions, reversals, settled holds and debits of the earlier
// ones. The item plans (ledger/item_plans.h) read it and add their own changes.
//
//   AttemptState state;
//   state.now = clock.Now();
//   ... the attempt's loads fill records, targets, holds and accounts ...
//   LEDGER_RETURN_IF_ERROR(state.LoadLapsedDebits(tx, touched));
//   state.Commit(transaction, updated, record, encoded_identity);
//
// Internal to ledger/. Not thread-safe: one attempt owns it, on the thread running it.
#ifndef LEDGER_LEDGER_ATTEMPT_STATE_H_
#define LEDGER_LEDGER_ATTEMPT_STATE_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "idempotency/key.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/ledger.h"
#include "ledger/posting_rules.h"
#include "ledger/transaction.h"

namespace ledger::internal {

// What one committing item writes, in batch order.
struct PendingWrite {
  Transaction transaction;
  std::vector<Account> updated;
  std::optional<KeyRecord> record;  // none for an item without a key (a hold's expiry)
};

struct AttemptState {
  // The attempt's time: read when it starts and again under the locks (never earlier).
  absl::Time now;

  // Live key records by KeyIdentity::Encoded(): read by the claims, then those this
  // attempt commits.
  std::map<std::string, KeyRecord> records;
  // The committed transactions the claimed key records point at, for replays (none:
  // missing).
  std::map<std::string, std::optional<Transaction>> replayed;
  // The transactions the reverse items name (none: not found).
  std::map<std::string, std::optional<Transaction>> targets;
  // Targets reversed: before this attempt (read under the locks) or by an item of it.
  std::set<std::string> reversed;
  // The holds the settlement items name, as the items before have left them (none: not
  // found).
  std::map<std::string, std::optional<Hold>> holds;
  // Holds this attempt captures or voids, for the velocity usage the database still
  // counts.
  std::vector<Hold> settled;

  // The locked accounts, as the items before have left them.
  posting_rules::AccountsById accounts;
  // Accounts that had pending debits when locked: only they can have lapsed holds, or
  // holds the velocity usage counts.
  std::set<std::string> held_from;
  // Per account, the stored pending debits that no longer reserve; loaded once per
  // account (lapsed_loaded).
  posting_rules::LapsedDebits lapsed;
  std::set<std::string> lapsed_loaded;
  // Velocity usage as committed, per (account, window), and this attempt's own debits.
  std::map<std::pair<std::string, absl::Duration>, DebitUsage> stored_usage;
  std::map<std::string, DebitUsage> own_debits;

  // What the committing items write, and each committing transaction's index in it.
  std::vector<PendingWrite> writes;
  std::map<std::string, size_t> committing;

  // Loads into `lapsed` the lapsed holds of each account in `touched` that had pending
  // debits when locked, once per account.
  absl::Status LoadLapsedDebits(StorageTransaction& tx,
                                const posting_rules::AccountsById& touched);

  // The velocity rejection of `postings` over `accounts` (copies of the locked accounts
  // the item touches) under `limits`, if any: a count limit before an amount limit.
  absl::StatusOr<std::optional<Outcome>> CheckVelocity(StorageTransaction& tx,
                                                       const std::vector<VelocityLimit>& limits,
                                                       const std::vector<Posting>& postings,
                                                       const posting_rules::AccountsById& accounts);

  // An item commits `transaction`, leaving its accounts as `updated`, under `record`
  // (stored by `encoded_identity`; none for an item without a key): the accounts, debits,
  // key records and writes change for the items after it. What a family changes beyond
  // that (reversals, hold statuses) is its plan's ItemPlan::Commit.
  void Commit(Transaction transaction, std::vector<Account> updated,
              std::optional<KeyRecord> record, const std::string& encoded_identity);

 private:
  absl::StatusOr<DebitUsage> UsageSince(StorageTransaction& tx, const std::string& account_id,
                                        absl::Duration window);
};

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_ATTEMPT_STATE_H_
