// Group commit: concurrent single submits share one batch transaction.
//
// A submit joins one queue, whichever form it comes in. A batch is the queue's head (up
// to the batch bound, all with the same claim wait as the first), run as one
// transaction by a leader: any thread that holds one of the in_flight_max slots. When it
// ends, every item of it has its result and its `done` is called. So batches form only
// while commits are in flight, and a lone submit waits for nobody.
//
// A batch starts in a free slot at once when no other batch runs; while another runs,
// once the queue holds a share of the waiters (queued and running, divided among the
// slots), and it takes at most that share rounded up (MayStartBatchOf). Callers back
// from a finished batch then form one batch of about their number, not a batch of one
// for whoever came back first and a queue behind it (issue 29, docs/benchmarks.md). A
// queued item waits at most for the running batches: when none runs, it starts.
//
//   SubmitAsync(item, run, done)  queues the item and returns at once; its batch runs on
//                                 one of the committer's own threads (at most
//                                 in_flight_max, started as they are first needed), and
//                                 `done` is called there: a caller that must not block
//                                 (the HTTP service's event loop, issue 28) parks no
//                                 thread while the batch commits.
//   SubmitBatchAsync(items, ...)  the same for a caller's own batch (Ledger::SubmitBatchAsync):
//                                 it queues as one unit and runs as a transaction of its
//                                 own, as given (never merged with other items: its
//                                 order and atomicity are the caller's), in one slot.
//   Submit(item, run)             the same, then waits for `done`; while it waits with
//                                 its item still queued and a batch may start, it
//                                 leads the next batch itself, so a caller wakes only for its
//                                 result or to lead. A caller that finds nothing queued
//                                 and a batch may start runs its item at once as a batch of
//                                 one on its own thread, never queued: a lone submit
//                                 runs what a submit without group commit runs.
//
// Internal to ledger/. Thread-safe. The destructor waits for every queued item's batch
// and `done`.
#ifndef LEDGER_LEDGER_GROUP_COMMIT_H_
#define LEDGER_LEDGER_GROUP_COMMIT_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ledger/batch_attempt.h"

namespace ledger::internal {

class GroupCommitter {
 public:
  // Decides every item it is given, each with its own result.
  using BatchRunner = std::function<void(const std::vector<BatchItem*>&)>;
  // Called once the item has its result: on the thread that ran its batch, never under
  // the committer's lock (it may submit again). It should be quick: the committer's
  // thread leads no other batch meanwhile. A batch runs with its head's runner: the
  // single items' runners are all the same; a caller's batch runs alone with its own.
  using Done = std::function<void()>;

  // `batch_entries_max`: the entries a shared batch may post (EntriesBoundOf), as
  // SubmitBatch allows; an item over it alone still runs, alone.
  GroupCommitter(size_t batch_items_max, int in_flight_max,
                 size_t batch_entries_max = kBatchEntriesMax)
      : batch_items_max_(batch_items_max),
        in_flight_max_(in_flight_max),
        batch_entries_max_(batch_entries_max) {}
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `item` and returns at once. `run` decides its batch (the batch runs with its
  // head's runner: a committer serves one ledger, so every runner is the same) on a
  // committer thread; `done` is called there once `item` has its result. `item` must
  // live until then.
  void SubmitAsync(BatchItem& item, BatchRunner run, Done done) ABSL_LOCKS_EXCLUDED(mutex_);
  // Queues the caller's batch `items` (not empty; they live until `done`) as one unit and
  // returns at once: `run` decides all of them, alone in one batch, on a committer
  // thread, in its turn in the queue; then `done` is called there.
  void SubmitBatchAsync(std::vector<BatchItem*> items, BatchRunner run, Done done)
      ABSL_LOCKS_EXCLUDED(mutex_);

  // Returns once `item` has its result: queued as SubmitAsync queues it, marked done
  // where SubmitAsync's `done` is called, and waited for; this thread leads batches
  // while the item is queued and a batch may start.
  void Submit(BatchItem& item, BatchRunner run) ABSL_LOCKS_EXCLUDED(mutex_);

  // Submits waiting for a batch to take them (a caller's batch counts once).
  size_t queued() const ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  // What a blocking Submit waits on.
  struct Caller {
    bool taken = false;  // guarded by mutex_: its item is in some leader's batch
    bool done = false;   // guarded by mutex_: its item's result is set and may be read
    // Signalled when the item is done, or when the item heads the queue as a slot comes
    // free (the caller leads): one wake-up per caller and batch.
    absl::CondVar wake;
  };
  struct Waiter {
    BatchItem* item;  // a caller's batch: its first item
    BatchRunner run;
    Done done;
    Caller* caller;  // null for SubmitAsync: no thread waits on the item
    // Not empty for a caller's own batch (SubmitBatchAsync): run alone, exactly these.
    std::vector<BatchItem*> caller_batch = {};
  };

  void Enqueue(Waiter waiter) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes a slot and the next batch, runs it with the lock released, hands every item
  // its result and calls their `done`s (also with the lock released). Needs a free slot
  // and a non-empty queue.
  void LeadOneBatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A blocking Submit with nothing queued and a slot free: takes the slot and runs the
  // item as a batch of one on this thread, with the lock released, exactly as
  // LeadOneBatch would, minus the queue entry, the wake-up state and the batch's
  // vectors (issue 29: a lone submit pays nothing for group commit).
  void RunAlone(BatchItem& item, const BatchRunner& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes the next batch off the queue: its head, and the items after it with the same
  // claim wait, up to the bounds (items, entries, the share of the waiters rounded up);
  // a caller's batch goes alone, and no other batch takes it.
  std::vector<Waiter> TakeBatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // When a batch may start (MayStartBatchOf), wakes a thread to lead: the caller whose
  // item heads the queue, else the idle committer threads (or starts one).
  void WakeLeader() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A committer thread: leads batches while there are any, until stopping_ and the queue
  // is empty.
  void CommitterThread() ABSL_LOCKS_EXCLUDED(mutex_);
  // The waiters (queued and running) divided among the slots, rounded up: the most a
  // batch takes.
  size_t ShareOfWaiters() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Whether a batch of `queued` waiters may start now: a slot is free, and either no
  // batch runs or the queue holds a share of the waiters.
  bool MayStartBatchOf(size_t queued) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // No item queued and no batch running.
  bool Drained() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const size_t batch_items_max_;
  const int in_flight_max_;
  const size_t batch_entries_max_;
  mutable absl::Mutex mutex_;
  std::deque<Waiter> queue_ ABSL_GUARDED_BY(mutex_);
  int in_flight_ ABSL_GUARDED_BY(mutex_) = 0;  // shared transactions running
  size_t waiters_in_flight_ ABSL_GUARDED_BY(mutex_) = 0;  // queue entries they hold
  // Signalled when a batch may start and no caller heads the queue.
  absl::CondVar committer_wake_;
  int committers_idle_ ABSL_GUARDED_BY(mutex_) = 0;  // committer threads waiting for work
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> committers_ ABSL_GUARDED_BY(mutex_);  // at most in_flight_max_
};

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_GROUP_COMMIT_H_
