// One attempt of a batch submit: one database transaction over the batch's undecided
// items. Every submit, single or batched, runs through it:
//
//   ClaimKeys            every distinct key, in (namespace, scope, key) byte order
//   LoadTargets          the transactions the reverse items name and those the replays
//                        return (in one read), the holds the capture and void items name
//   LockAccounts         the union of the items' accounts, in id order, once; then the
//                        targets' reversals and hold statuses, final under the locks
//   Decide               each item in batch order, in memory: replay against a live
//                        record, or check the rules against the running state (the
//                        balances, versions, debits and reversals of the items before it)
//   Finish               write what was decided to commit, record its keys and events,
//                        commit; or roll back when nothing is to be written
//
// A rejected item writes nothing, so its key stays unused (an engine whose claim writes
// a placeholder drops it at COMMIT). Internal to ledger/. Not thread-safe: one attempt
// belongs to the thread running the submit.
#ifndef LEDGER_LEDGER_BATCH_ATTEMPT_H_
#define LEDGER_LEDGER_BATCH_ATTEMPT_H_

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/check.h"
#include "ledger/ledger.h"
#include "ledger/posting_rules.h"

namespace ledger {

namespace internal {

struct BatchItem {
  size_t index = 0;  // position in the batch, for messages
  const SubmitRequest* request = nullptr;
  KeyIdentity identity;
  std::string encoded_identity;  // identity.Encoded(), computed once
  std::string fingerprint;
  // The entries the item may post, counted once it is valid, before the database is
  // read: a reverse as kPostingsPerTransactionMax (its target is not known yet).
  size_t entries_bound = 0;
  std::optional<SubmitResult> result;  // set once the item is decided for good
};

// The entries `item` may still post: its entries_bound, 0 once it has its result. A
// batch posts at most kBatchEntriesMax: SubmitBatch refuses more, group commit takes no
// more.
inline size_t EntriesBoundOf(const BatchItem& item) {
  return item.result.has_value() ? 0 : item.entries_bound;
}

}  // namespace internal

// The rejection of every other item of an atomic batch whose item `failed_index` was
// not committed.
Outcome LinkedItemFailed(size_t failed_index);

// The claim wait of a transaction over `items`: the least their requests allow.
WaitPolicy LeastClaimWait(const std::vector<internal::BatchItem*>& items);

class Ledger::BatchAttempt {
 public:
  // `items`: the batch's undecided items, in batch order; they outlive the attempt.
  // `claim_deadline`: set once a claim of many keys ran out of wait. Then each key is
  // claimed in its own call, so a busy key is named, and the claims wait only until
  // the deadline (fail fast past it): the batch waits one claim wait in all, not one
  // per attempt.
  BatchAttempt(Ledger& ledger, std::vector<internal::BatchItem*> items, bool atomic,
               std::optional<absl::Time> claim_deadline);

  // OK: every item has its decision, and what was to commit committed. Otherwise the
  // attempt rolled back, or (IsInDoubt) its COMMIT's result is unknown. A claim that ran
  // out of wait: busy_key() names the key when the claims went one by one, and
  // claims_timed_out() says so either way.
  absl::Status Run();
  // Runs on the unit of work's transaction (ledger/unit_of_work_internal.h) instead of
  // one of its own: Finish then neither commits nor rolls back, Transact does.
  void JoinUnitOfWork(internal::UnitOfWorkState& unit) { unit_of_work_ = &unit; }

  const std::optional<KeyIdentity>& busy_key() const { return busy_key_; }
  bool claims_timed_out() const { return claims_timed_out_; }
  // The item's result if the attempt's commit went through.
  const SubmitResult& decision(size_t i) const {
    LEDGER_CHECK(decisions_[i].has_value()) << "item " << i << " read before it was decided";
    return *decisions_[i];
  }
  // Whether the item's result depends on the COMMIT: it commits, or replays an item of
  // this batch that commits.
  bool rides_on_commit(size_t i) const { return rides_on_commit_[i]; }

 private:
  struct Plan {  // what one committing item writes
    Transaction transaction;
    std::vector<Account> updated;
    KeyRecord record;
  };

  absl::Status RunSteps();
  absl::Status ClaimKeys();
  absl::Status LoadTargets();
  // Reads these holds into holds_ (again after the locks: the statuses are final then).
  absl::Status LoadHolds(const std::vector<std::string>& ids);
  absl::Status LockAccounts();
  absl::Status Decide(size_t i);
  // Whether a replay of `record` by `item` returns the original transaction (rather
  // than a conflict or a duplicate error).
  static bool ReturnsOriginal(const internal::BatchItem& item, const KeyRecord& record);
  absl::Status Replay(size_t i, const KeyRecord& record);
  // The item's postings (none for a hold or a void), or the rejection that stops it
  // before them: a reverse of a missing or reversal transaction, a settlement of a
  // missing hold.
  std::variant<Outcome, std::vector<Posting>> PostingsFor(size_t i) const;
  // Appends the accounts item i touches: those of `postings`, and those a hold or a void
  // touches without posting to them. Not distinct: the caller sorts once (SortDistinct).
  void AppendAccountsOf(size_t i, const std::vector<Posting>& postings,
                        std::vector<std::string>& ids) const;
  // The kind's own rules over `touched` (copies of the locked accounts the item touches),
  // once the accounts are known usable: the rejection, or the transaction's hold terms,
  // hold_id and entries (the rest of it is filled in by Decide).
  using Made = std::variant<Outcome, Transaction>;
  absl::StatusOr<Made> MakePosting(size_t i, const std::vector<Posting>& postings,
                                   posting_rules::AccountsById& touched);
  absl::StatusOr<Made> MakeHold(size_t i, posting_rules::AccountsById& touched);
  Made MakeSettlement(size_t i, const std::vector<Posting>& postings,
                      posting_rules::AccountsById& touched);
  // Loads into lapsed_ the lapsed holds of each account that had pending debits when
  // locked, once.
  absl::Status LoadLapsedDebits(const posting_rules::AccountsById& touched);
  absl::StatusOr<std::optional<Outcome>> CheckVelocity(const std::vector<Posting>& postings,
                                                       const posting_rules::AccountsById& accounts);
  absl::StatusOr<DebitUsage> UsageSince(const std::string& account_id, absl::Duration window);
  void Accept(size_t i, Transaction transaction, std::vector<Account> updated);
  // Atomic batches: item `failed` was not committed, so no item is.
  void FailLinked(size_t failed);
  absl::Status Finish();

  Ledger& ledger_;
  std::vector<internal::BatchItem*> items_;
  bool atomic_;
  std::optional<absl::Time> claim_deadline_;
  bool claims_timed_out_ = false;
  absl::Time now_;
  std::unique_ptr<StorageTransaction> tx_;
  internal::UnitOfWorkState* unit_of_work_ = nullptr;  // not owned; set by JoinUnitOfWork
  std::optional<KeyIdentity> busy_key_;

  std::vector<std::optional<SubmitResult>> decisions_;
  // Each item's postings (or the rejection before them), worked out once by LockAccounts
  // for the items that were not replays then.
  std::vector<std::optional<std::variant<Outcome, std::vector<Posting>>>> postings_;
  std::vector<bool> rides_on_commit_;
  std::vector<Plan> plans_;

  // The running state: live key records by KeyIdentity::Encoded() (read by the claims,
  // then those this attempt commits), reversal targets, locked accounts as the items
  // before have left them, transactions reversed, debits made by this attempt.
  std::map<std::string, KeyRecord> records_;
  std::map<std::string, size_t> committing_;  // transaction id -> its index in plans_
  std::map<std::string, std::optional<Transaction>> targets_;
  // The committed transactions the claimed key records point at, for replays.
  std::map<std::string, std::optional<Transaction>> replayed_;
  // Holds the capture and void items name, as the items before have left them.
  std::map<std::string, std::optional<Hold>> holds_;
  // Holds this attempt settles, for the velocity usage the database still counts.
  std::vector<Hold> settled_;
  posting_rules::AccountsById accounts_;
  // Accounts that had pending debits when locked: only they can have lapsed holds, or
  // holds the velocity usage counts.
  std::set<std::string> held_from_;
  posting_rules::LapsedDebits lapsed_;
  std::set<std::string> lapsed_loaded_;
  std::set<std::string> reversed_;
  std::map<std::pair<std::string, absl::Duration>, DebitUsage> stored_usage_;
  std::map<std::string, DebitUsage> own_debits_;
};

}  // namespace ledger

#endif  // LEDGER_LEDGER_BATCH_ATTEMPT_H_
