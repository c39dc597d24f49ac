// One attempt of a batch submit: one database transaction over the batch's undecided
// items. Every write of the ledger runs through it: a submit, single or batched, and the
// hold sweep's expiries (items without a key). The caller (Ledger::RunBatch) begins the
// StorageTransaction and commits or rolls it back; the attempt runs in it:
//
//   ClaimKeys            every distinct key, in (namespace, scope, key) byte order, with
//                        the record it is to hold (the transaction id minted for it, the
//                        TTL counted from now)
//   LoadTargets          what the item plans name (ledger/item_plans.h: the transactions
//                        reverse items name, the holds settlements name) and the
//                        transactions the replays return, each kind in one read
//   LockAccounts         the union of the items' accounts, in id order, once; then the
//                        targets' reversals and hold statuses, final under the locks
//   Decide               each item in batch order, in memory: replay against a live
//                        record, or run its family's plan against the running state
//                        (ledger/attempt_state.h), then the invariants (invariants.h)
//   Write                what was decided to commit, with its keys and events
//
// A rejected item writes nothing, so its key stays unused (an engine whose claim wrote
// the key's record drops it at COMMIT). Internal to ledger/. Not thread-safe: one attempt
// belongs to the thread running the submit.
#ifndef LEDGER_LEDGER_BATCH_ATTEMPT_H_
#define LEDGER_LEDGER_BATCH_ATTEMPT_H_

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/check.h"
#include "ledger/attempt_state.h"
#include "ledger/item_plans.h"
#include "ledger/ledger.h"

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
  // False only for the hold sweep's expiries: the ledger's own items, with no key to
  // claim, record or replay.
  bool has_key = true;
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

  // How to begin the attempt's transaction: the least claim wait the items allow, and
  // no further than the claim deadline.
  BeginOptions begin_options() const;

  // Runs the steps in `tx`, which the caller began and which the attempt neither commits
  // nor rolls back. OK: every item has its decision, and what is to commit is written
  // (commit when writes()). Otherwise roll back. A claim that ran out of wait:
  // busy_key() names the key when the claims went one by one, and claims_timed_out()
  // says so either way.
  absl::Status Run(StorageTransaction& tx);

  // Whether some item is to commit; otherwise there is nothing to write (replays and
  // rejections leave their keys as they were).
  bool writes() const { return !state_.writes.empty(); }
  const std::optional<KeyIdentity>& busy_key() const { return busy_key_; }
  bool claims_timed_out() const { return claims_timed_out_; }
  // The item's result if the attempt's commit went through.
  const SubmitResult& decision(size_t i) const {
    LEDGER_CHECK(i < decisions_.size() && decisions_[i].has_value())
        << "item " << i << " read before it was decided";
    return *decisions_[i];
  }
  // Whether the item's result depends on the COMMIT: it commits, or replays an item of
  // this batch that commits.
  bool rides_on_commit(size_t i) const { return rides_on_commit_[i]; }

 private:
  absl::Status ClaimKeys();
  // The accounts LockAccounts will lock if no item replays, when the operations alone
  // name them (StorageTransaction::ExpectAccountLocks); empty when an item learns its
  // accounts from a read (a reversal, a capture or void).
  std::vector<std::string> AccountsNamedUpFront() const;
  absl::Status LoadTargets();
  // Reads these holds into the state (again after the locks: the statuses are final then).
  absl::Status LoadHolds(const std::vector<std::string>& ids);
  absl::Status LockAccounts();
  absl::Status Decide(size_t i);
  // The live key record item i replays, or null (a new key, or an item without one).
  const KeyRecord* RecordOf(size_t i) const;
  // Every item has a live record to replay or refuse: the attempt writes nothing
  // (StorageTransaction::ExpectNoWrites).
  bool OnlyReplays() const;
  // The record item i's key was claimed with (its transaction id, its claim's time), or
  // null (an item without a key, or the ledger skips idempotency).
  const KeyRecord* IntendedOf(size_t i) const;
  // Whether a replay of `record` by `item` returns the original transaction (rather
  // than a conflict or a duplicate error).
  static bool ReturnsOriginal(const internal::BatchItem& item, const KeyRecord& record);
  void Replay(size_t i, const KeyRecord& record);
  // Item i's plan decided `transaction`, leaving its accounts as `updated`.
  void Accept(size_t i, const internal::ItemPlan& plan, Transaction transaction,
              std::vector<Account> updated);
  // Atomic batches: item `failed` was not committed, so no item is.
  void FailLinked(size_t failed);
  absl::Status Write();

  Ledger& ledger_;
  std::vector<internal::BatchItem*> items_;
  bool atomic_;
  std::optional<absl::Time> claim_deadline_;
  StorageTransaction* tx_ = nullptr;  // while Run runs
  bool claims_timed_out_ = false;
  std::optional<KeyIdentity> busy_key_;

  std::vector<std::optional<SubmitResult>> decisions_;
  // Each item's postings (or the rejection before them), worked out once by LockAccounts
  // for the items that were not replays then.
  std::vector<std::optional<internal::PlannedPostings>> postings_;
  std::vector<bool> rides_on_commit_;
  // Each claimed key's record-to-be, by KeyIdentity::Encoded() (ClaimKeys).
  std::map<std::string, KeyRecord> intended_;
  internal::AttemptState state_;
};

}  // namespace ledger

#endif  // LEDGER_LEDGER_BATCH_ATTEMPT_H_
