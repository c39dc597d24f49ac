#include "ledger/group_commit.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace ledger::internal {

GroupCommitter::~GroupCommitter() {
  std::vector<std::thread> committers;
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    committer_wake_.SignalAll();
    mutex_.Await(absl::Condition(this, &GroupCommitter::Drained));
    // Idle committers see stopping_ and an empty queue, and end; busy ones end after
    // their batch's `done`s.
    committer_wake_.SignalAll();
    committers.swap(committers_);
  }
  for (std::thread& committer : committers) committer.join();
}

void GroupCommitter::SubmitAsync(BatchItem& item, BatchRunner run, Done done) {
  LEDGER_CHECK(done != nullptr) << "an asynchronous submit needs its done";
  absl::MutexLock lock(&mutex_);
  LEDGER_CHECK(!stopping_) << "a submit after the committer began to stop";
  queue_.push_back(Waiter{&item, std::move(run), std::move(done), nullptr});
  WakeLeader();
}

void GroupCommitter::SubmitBatchAsync(std::vector<BatchItem*> items, BatchRunner run, Done done) {
  LEDGER_CHECK(done != nullptr) << "an asynchronous submit needs its done";
  LEDGER_CHECK(!items.empty()) << "a caller's batch holds at least one item";
  absl::MutexLock lock(&mutex_);
  LEDGER_CHECK(!stopping_) << "a submit after the committer began to stop";
  BatchItem* head = items.front();
  queue_.push_back(Waiter{head, std::move(run), std::move(done), nullptr, std::move(items)});
  WakeLeader();
}

void GroupCommitter::Submit(BatchItem& item, BatchRunner run) {
  absl::MutexLock lock(&mutex_);
  LEDGER_CHECK(!stopping_) << "a submit after the committer began to stop";
  if (queue_.empty() && MayStartBatchOf(1)) {
    RunAlone(item, run);
    return;
  }
  Caller self;
  // No WakeLeader: this thread leads at once if a batch may start, and waits otherwise.
  queue_.push_back(Waiter{&item, std::move(run), nullptr, &self});
  while (!self.done) {
    if (self.taken || !MayStartBatchOf(queue_.size())) {
      self.wake.Wait(&mutex_);
      continue;
    }
    LeadOneBatch();  // this thread leads the next batch, which holds its item or is ahead of it
  }
}

size_t GroupCommitter::queued() const {
  absl::MutexLock lock(&mutex_);
  return queue_.size();
}

void GroupCommitter::LeadOneBatch() {
  LEDGER_CHECK(in_flight_ < in_flight_max_ && !queue_.empty()) << "a leader needs a slot and items";
  std::vector<Waiter> batch = TakeBatch();
  in_flight_ += 1;
  waiters_in_flight_ += batch.size();
  // Items the batch left behind (another claim wait, past a bound) get a leader at once
  // while a slot is free.
  WakeLeader();
  std::vector<BatchItem*> items;
  if (!batch.front().caller_batch.empty()) {
    items = batch.front().caller_batch;  // TakeBatch took it alone
  } else {
    items.reserve(batch.size());
    for (Waiter& waiter : batch) items.push_back(waiter.item);
  }
  mutex_.Unlock();
  batch.front().run(items);  // sets every item's result; nobody reads one before it is done
  mutex_.Lock();
  in_flight_ -= 1;
  waiters_in_flight_ -= batch.size();
  for (const BatchItem* item : items) {
    LEDGER_CHECK(item->result.has_value()) << "a batch left an item undecided";
  }
  for (Waiter& waiter : batch) {
    if (waiter.caller != nullptr) {
      waiter.caller->done = true;  // the caller may return (and free it) once we unlock
      waiter.caller->wake.Signal();
    }
  }
  // A slot is free: the next batch gets its leader.
  WakeLeader();
  mutex_.Unlock();
  for (Waiter& waiter : batch) {
    if (waiter.done != nullptr) waiter.done();
  }
  mutex_.Lock();
}

void GroupCommitter::RunAlone(BatchItem& item, const BatchRunner& run) {
  LEDGER_CHECK(queue_.empty() && in_flight_ < in_flight_max_)
      << "a submit runs alone only with nothing queued and a slot free";
  in_flight_ += 1;
  waiters_in_flight_ += 1;
  mutex_.Unlock();
  run({&item});  // what LeadOneBatch would run: a batch of this item alone
  mutex_.Lock();
  in_flight_ -= 1;
  waiters_in_flight_ -= 1;
  LEDGER_CHECK(item.result.has_value()) << "a batch left an item undecided";
  // Submits that queued meanwhile (every slot was taken) get a leader for the slot.
  WakeLeader();
}

std::vector<GroupCommitter::Waiter> GroupCommitter::TakeBatch() {
  std::vector<Waiter> batch;
  size_t entries = 0;
  LEDGER_CHECK(!queue_.empty()) << "a leader takes a batch from an empty queue";
  if (!queue_.front().caller_batch.empty()) {  // a caller's batch runs alone, as given
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
    return batch;
  }
  const absl::Duration wait = queue_.front().item->request->claim.wait.wait_max;
  const size_t take_max = std::min(batch_items_max_, ShareOfWaiters());
  for (auto it = queue_.begin(); it != queue_.end() && batch.size() < take_max;) {
    const size_t item_entries = EntriesBoundOf(*it->item);
    if (!it->caller_batch.empty() || it->item->request->claim.wait.wait_max != wait ||
        (!batch.empty() && entries + item_entries > batch_entries_max_)) {
      ++it;
      continue;
    }
    entries += item_entries;
    if (it->caller != nullptr) it->caller->taken = true;
    batch.push_back(std::move(*it));
    it = queue_.erase(it);
  }
  return batch;
}

size_t GroupCommitter::ShareOfWaiters() const {
  const size_t waiters = queue_.size() + waiters_in_flight_;
  const size_t slots = static_cast<size_t>(in_flight_max_);
  return (waiters + slots - 1) / slots;
}

bool GroupCommitter::MayStartBatchOf(size_t queued) const {
  if (in_flight_ >= in_flight_max_ || queued == 0) return false;
  if (in_flight_ == 0) return true;
  // Another batch runs: this one starts once it would be about as large as a fair share
  // of the waiters, not with the first caller back (who would take a slot for a batch of
  // one or two while the rest queue behind it).
  return queued >= (queued + waiters_in_flight_) / static_cast<size_t>(in_flight_max_);
}

void GroupCommitter::WakeLeader() {
  if (!MayStartBatchOf(queue_.size())) return;
  // A caller at the head leads its own batch: no hand-off.
  if (Caller* caller = queue_.front().caller; caller != nullptr) {
    caller->wake.Signal();
    return;
  }
  if (committers_idle_ > 0) {
    committer_wake_.Signal();
    return;
  }
  // Every committer is busy (or none was needed yet): one more, up to one per slot. A
  // busy one looks at the queue again before it waits, so none is needed past that.
  if (committers_.size() < static_cast<size_t>(in_flight_max_)) {
    committers_.emplace_back([this] { CommitterThread(); });
  }
}

void GroupCommitter::CommitterThread() {
  absl::MutexLock lock(&mutex_);
  while (true) {
    if (MayStartBatchOf(queue_.size())) {
      LeadOneBatch();
      continue;
    }
    if (stopping_ && queue_.empty()) return;
    committers_idle_ += 1;
    committer_wake_.Wait(&mutex_);
    committers_idle_ -= 1;
  }
}

bool GroupCommitter::Drained() const { return queue_.empty() && in_flight_ == 0; }

}  // namespace ledger::internal
