// Group commit: concurrent single submits share one batch transaction.
//
// A submit joins the queue. If fewer shared transactions than the bound are in flight,
// its thread becomes a leader at once: it takes the queue's head (up to the batch bound,
// all with the same claim wait as the first), runs them as one batch, hands every item
// its result and wakes their callers and the caller now at the queue's head, which
// leads the next batch. So a lone submit waits for nobody, batches form only while
// commits are in flight, and a caller wakes only for its result or to lead.
//
// Internal to ledger/. Thread-safe.
#ifndef LEDGER_LEDGER_GROUP_COMMIT_H_
#define LEDGER_LEDGER_GROUP_COMMIT_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ledger/batch_attempt.h"

namespace ledger::internal {

class GroupCommitter {
 public:
  // Decides every item it is given, each with its own result.
  using BatchRunner = std::function<void(const std::vector<BatchItem*>&)>;

  // `batch_entries_max`: the entries a shared batch may post (EntriesBoundOf), as
  // SubmitBatch allows; an item over it alone still runs, alone.
  GroupCommitter(size_t batch_items_max, int in_flight_max,
                 size_t batch_entries_max = kBatchEntriesMax)
      : batch_items_max_(batch_items_max),
        in_flight_max_(in_flight_max),
        batch_entries_max_(batch_entries_max) {}

  // Returns once `item` has its result, run in some batch by `run` (on this thread or
  // another submitter's).
  void Submit(BatchItem& item, const BatchRunner& run);

 private:
  struct Waiter {
    BatchItem* item;
    bool taken = false;  // guarded by mutex_: in some leader's batch
    bool done = false;   // guarded by mutex_: the item's result is set and may be read
    // Signalled when the item is done, or when it heads the queue as a shared
    // transaction ends: one wake-up per caller and batch, not one per queued caller.
    absl::CondVar wake;
  };

  // Takes the next batch off the queue: its head, and the items after it with the same
  // claim wait, up to the bounds (items, entries).
  std::vector<Waiter*> TakeBatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const size_t batch_items_max_;
  const int in_flight_max_;
  const size_t batch_entries_max_;
  absl::Mutex mutex_;
  std::deque<Waiter*> queue_ ABSL_GUARDED_BY(mutex_);
  int in_flight_ ABSL_GUARDED_BY(mutex_) = 0;  // shared transactions running
};

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_GROUP_COMMIT_H_
