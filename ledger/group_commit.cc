#include "ledger/group_commit.h"

#include "base/check.h"

namespace ledger::internal {

void GroupCommitter::Submit(BatchItem& item, const BatchRunner& run) {
  Waiter self{&item};
  absl::MutexLock lock(&mutex_);
  queue_.push_back(&self);
  while (!self.done) {
    if (self.taken || in_flight_ >= in_flight_max_) {
      self.wake.Wait(&mutex_);
      continue;
    }
    in_flight_ += 1;  // this thread leads the next batch
    std::vector<Waiter*> batch = TakeBatch();
    // Callers the batch left behind (another claim wait, past a bound) lead at once while
    // a slot is free.
    if (in_flight_ < in_flight_max_ && !queue_.empty()) queue_.front()->wake.Signal();
    std::vector<BatchItem*> items;
    for (Waiter* waiter : batch) items.push_back(waiter->item);
    mutex_.Unlock();
    run(items);  // sets every item's result; waiters read them only once marked done
    mutex_.Lock();
    in_flight_ -= 1;
    for (Waiter* waiter : batch) {
      waiter->done = true;
      waiter->wake.Signal();
    }
    // The caller at the head leads next (a slot is free). If another leader takes it
    // first, that leader wakes the next head when its own batch ends.
    if (!queue_.empty()) queue_.front()->wake.Signal();
  }
}

std::vector<GroupCommitter::Waiter*> GroupCommitter::TakeBatch() {
  std::vector<Waiter*> batch;
  size_t entries = 0;
  LEDGER_CHECK(!queue_.empty()) << "a leader takes a batch while its own item is queued";
  const absl::Duration wait = queue_.front()->item->request->claim.wait.wait_max;
  for (auto it = queue_.begin(); it != queue_.end() && batch.size() < batch_items_max_;) {
    const size_t item_entries = EntriesBoundOf(*(*it)->item);
    if ((*it)->item->request->claim.wait.wait_max != wait ||
        (!batch.empty() && entries + item_entries > batch_entries_max_)) {
      ++it;
      continue;
    }
    entries += item_entries;
    (*it)->taken = true;
    batch.push_back(*it);
    it = queue_.erase(it);
  }
  return batch;
}

}  // namespace ledger::internal
