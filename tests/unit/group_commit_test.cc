// GroupCommitter alone: how concurrent submits become shared batches, with a runner that
// records the batches instead of running them against a database.
#include "ledger/group_commit.h"

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

// Heap allocations made on this thread while counting: what proves a lone group-committed
// submit allocates no more than a submit without group commit (every other allocation
// of the test binary passes straight through).
namespace {
thread_local bool counting_allocations = false;
thread_local int allocations_counted = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (counting_allocations) allocations_counted += 1;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
// GCC takes the replaced pair for a mismatch once inlined; they are each other's pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace ledger::internal {
namespace {

// The heap allocations `work` makes on this thread.
template <typename Work>
int AllocationsOf(Work work) {
  allocations_counted = 0;
  counting_allocations = true;
  work();
  counting_allocations = false;
  return allocations_counted;
}

// A submit's item as Ledger::Submit prepares it, for what the committer reads: the
// claim wait and the entries bound (a transfer posts 2, a reverse counts as 64).
struct PreparedSubmit {
  explicit PreparedSubmit(Operation operation, size_t index) {
    request.key = absl::StrCat("k-", index);
    request.operation = std::move(operation);
    item.index = index;
    item.request = &request;
    item.entries_bound = request.operation.kind == OperationKind::kReverse
                             ? kPostingsPerTransactionMax
                             : PostingsOf(request.operation).size();
  }
  SubmitRequest request;
  BatchItem item;
};

// Records each batch (its items' indexes) and gives every item a result.
class BatchRecorder {
 public:
  void Run(const std::vector<BatchItem*>& items) {
    std::vector<size_t> batch;
    for (BatchItem* item : items) {
      batch.push_back(item->index);
      item->result = absl::CancelledError("recorded, not run");
    }
    absl::MutexLock lock(&mutex_);
    batches_.push_back(std::move(batch));
  }
  std::vector<std::vector<size_t>> batches() {
    absl::MutexLock lock(&mutex_);
    return batches_;
  }

 private:
  absl::Mutex mutex_;
  std::vector<std::vector<size_t>> batches_;
};

TEST(GroupCommitter, ALoneSubmitRunsAtOnceOnItsOwnThread) {
  GroupCommitter committer(/*batch_items_max=*/256, /*in_flight_max=*/2);
  PreparedSubmit submit(Operation::Transfer("alice", "bob", "CREDITS", 1), 0);
  std::thread::id ran_on;
  size_t batch_size = 0;
  committer.Submit(submit.item, [&](const std::vector<BatchItem*>& items) {
    ran_on = std::this_thread::get_id();
    batch_size = items.size();
    for (BatchItem* item : items) item->result = absl::CancelledError("recorded");
  });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(batch_size, 1u);
  EXPECT_TRUE(submit.item.result.has_value());
}

// Issue 29: a lone submit pays nothing for group commit. With nothing queued and a slot
// free it runs as a batch of one on its own thread and allocates exactly what running
// that batch without the committer allocates: no queue entry, no batch of its own.
TEST(GroupCommitter, ALoneSubmitAllocatesNoMoreThanItsBatchOfOne) {
  GroupCommitter committer(/*batch_items_max=*/256, /*in_flight_max=*/2);
  PreparedSubmit warm(Operation::Transfer("alice", "bob", "CREDITS", 1), 0);
  PreparedSubmit lone(Operation::Transfer("alice", "bob", "CREDITS", 1), 1);
  PreparedSubmit plain(Operation::Transfer("alice", "bob", "CREDITS", 1), 2);
  int batches = 0;
  size_t largest = 0;
  // The same runner on both sides: whatever it allocates itself counts on both.
  auto run = [&batches, &largest](const std::vector<BatchItem*>& items) {
    batches += 1;
    largest = std::max(largest, items.size());
    for (BatchItem* item : items) item->result = absl::CancelledError();
  };
  const GroupCommitter::BatchRunner runner = run;
  committer.Submit(warm.item, runner);  // the committer's first use, not counted
  const int grouped = AllocationsOf([&] { committer.Submit(lone.item, runner); });
  const int without = AllocationsOf([&] { runner({&plain.item}); });
  EXPECT_EQ(grouped, without);
  EXPECT_EQ(batches, 3);
  EXPECT_EQ(largest, 1u);
  EXPECT_TRUE(lone.item.result.has_value());
}

// Submits that queue behind a running batch share the next ones, each within the item
// bound and the entries bound (a reverse counts as kPostingsPerTransactionMax, 64).
TEST(GroupCommitter, QueuedSubmitsShareBatchesWithinTheItemAndEntryBounds) {
  constexpr size_t kItemsMax = 3;
  constexpr size_t kEntriesMax = 2 * kPostingsPerTransactionMax;  // two reverses
  constexpr int kSubmits = 12;
  GroupCommitter committer(kItemsMax, /*in_flight_max=*/1, kEntriesMax);
  std::vector<std::unique_ptr<PreparedSubmit>> submits;
  for (int i = 0; i < kSubmits; ++i) {
    // Alternating reverses (64 entries each) and transfers (2): only the entries bound
    // stops a batch of three with two reverses in it.
    submits.push_back(std::make_unique<PreparedSubmit>(
        i % 3 == 1 ? Operation::Transfer("alice", "bob", "CREDITS", 1)
                   : Operation::Reverse(absl::StrCat("tx-", i)),
        static_cast<size_t>(i)));
  }
  BatchRecorder recorder;
  std::atomic<int> entered{0};
  std::atomic<bool> first{true};
  auto run = [&](const std::vector<BatchItem*>& items) {
    if (first.exchange(false)) {  // hold the first batch until every other submit queues
      while (entered.load() < kSubmits) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    recorder.Run(items);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kSubmits; ++i) {
    threads.emplace_back([&, i] {
      entered.fetch_add(1);
      committer.Submit(submits[i]->item, run);
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::set<size_t> ran;
  size_t largest = 0;
  for (const std::vector<size_t>& batch : recorder.batches()) {
    size_t entries = 0;
    for (size_t index : batch) {
      EXPECT_TRUE(ran.insert(index).second) << "item " << index << " ran twice";
      entries += submits[index]->item.entries_bound;
    }
    EXPECT_LE(batch.size(), kItemsMax);
    EXPECT_LE(entries, kEntriesMax) << "a batch of " << batch.size();
    largest = std::max(largest, batch.size());
  }
  EXPECT_EQ(ran.size(), static_cast<size_t>(kSubmits));
  EXPECT_GT(largest, 1u) << "no submits were grouped";
}

// SubmitAsync returns before its batch runs: the batch runs on a committer thread, and
// `done` is called there, once, after the item has its result. Submits queued while that
// batch is held go together, up to the item bound, and the committer's destructor waits
// for every `done`.
TEST(GroupCommitter, AsyncSubmitsRunOnTheCommittersThreadsAndCallDoneOnce) {
  constexpr size_t kItemsMax = 4;
  constexpr int kSubmits = 10;
  std::vector<std::unique_ptr<PreparedSubmit>> submits;
  for (int i = 0; i < kSubmits; ++i) {
    submits.push_back(std::make_unique<PreparedSubmit>(
        Operation::Transfer("alice", "bob", "CREDITS", 1), static_cast<size_t>(i)));
  }
  BatchRecorder recorder;
  absl::Mutex mutex;
  bool release_first = false;
  std::vector<int> done_calls(kSubmits, 0);
  std::set<std::thread::id> ran_on;
  {
    GroupCommitter committer(kItemsMax, /*in_flight_max=*/1);
    std::atomic<bool> first{true};
    auto run = [&](const std::vector<BatchItem*>& items) {
      {
        absl::MutexLock lock(&mutex);
        ran_on.insert(std::this_thread::get_id());
        // The first batch is held until every submit has queued: SubmitAsync returned
        // while it was running, so none of them waited for it.
        if (first.exchange(false)) mutex.Await(absl::Condition(&release_first));
      }
      recorder.Run(items);
    };
    for (int i = 0; i < kSubmits; ++i) {
      committer.SubmitAsync(submits[i]->item, run, [&, i] {
        EXPECT_TRUE(submits[i]->item.result.has_value()) << "done before the result";
        absl::MutexLock lock(&mutex);
        done_calls[i] += 1;
      });
    }
    absl::MutexLock lock(&mutex);
    release_first = true;
  }  // the destructor returns once every batch ran and every done was called

  EXPECT_EQ(ran_on.count(std::this_thread::get_id()), 0u) << "a batch ran on the submitting thread";
  for (int i = 0; i < kSubmits; ++i) EXPECT_EQ(done_calls[i], 1) << "submit " << i;
  std::set<size_t> ran;
  size_t largest = 0;
  for (const std::vector<size_t>& batch : recorder.batches()) {
    for (size_t index : batch) EXPECT_TRUE(ran.insert(index).second) << "item " << index << " ran twice";
    EXPECT_LE(batch.size(), kItemsMax);
    largest = std::max(largest, batch.size());
  }
  EXPECT_EQ(ran.size(), static_cast<size_t>(kSubmits));
  EXPECT_EQ(largest, kItemsMax) << "the queued submits were not grouped";
}

// Both forms share one queue: a blocking Submit that arrives while async batches run
// gets its result, whoever leads its batch.
TEST(GroupCommitter, BlockingAndAsyncSubmitsShareOneQueue) {
  constexpr int kSubmits = 40;
  std::vector<std::unique_ptr<PreparedSubmit>> submits;
  for (int i = 0; i < kSubmits; ++i) {
    submits.push_back(std::make_unique<PreparedSubmit>(
        Operation::Transfer("alice", "bob", "CREDITS", 1), static_cast<size_t>(i)));
  }
  BatchRecorder recorder;
  std::atomic<int> done_calls{0};
  {
    GroupCommitter committer(/*batch_items_max=*/8, /*in_flight_max=*/2);
    auto run = [&](const std::vector<BatchItem*>& items) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      recorder.Run(items);
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < kSubmits; ++i) {
      if (i % 2 == 0) {
        committer.SubmitAsync(submits[i]->item, run, [&] { done_calls.fetch_add(1); });
      } else {
        threads.emplace_back([&, i] {
          committer.Submit(submits[i]->item, run);
          EXPECT_TRUE(submits[i]->item.result.has_value());
        });
      }
    }
    for (std::thread& thread : threads) thread.join();
  }
  EXPECT_EQ(done_calls.load(), kSubmits / 2);
  std::set<size_t> ran;
  for (const std::vector<size_t>& batch : recorder.batches()) {
    for (size_t index : batch) EXPECT_TRUE(ran.insert(index).second) << "item " << index << " ran twice";
  }
  EXPECT_EQ(ran.size(), static_cast<size_t>(kSubmits));
}

// A caller's own batch (SubmitBatchAsync, the HTTP batch route) queues as one unit: it
// runs alone, exactly its items in its order, with its own runner; the single submits
// queued around it are grouped without it (those behind it may go first, as items of
// another claim wait do), and every `done` is called once. Before SubmitBatchAsync, a batch ran only on the caller's thread (SubmitBatch).
TEST(GroupCommitter, ACallersBatchRunsAloneAsGiven) {
  constexpr int kSingles = 6;
  constexpr size_t kBatchItems = 5;
  std::vector<std::unique_ptr<PreparedSubmit>> singles;
  for (int i = 0; i < kSingles; ++i) {
    singles.push_back(std::make_unique<PreparedSubmit>(
        Operation::Transfer("alice", "bob", "CREDITS", 1), static_cast<size_t>(i)));
  }
  std::vector<std::unique_ptr<PreparedSubmit>> batch_items;
  std::vector<BatchItem*> caller_batch;
  for (size_t i = 0; i < kBatchItems; ++i) {
    batch_items.push_back(std::make_unique<PreparedSubmit>(
        Operation::Transfer("alice", "bob", "CREDITS", 1), 100 + i));
    caller_batch.push_back(&batch_items.back()->item);
  }
  BatchRecorder singles_recorder;
  BatchRecorder batch_recorder;
  absl::Mutex mutex;
  bool release_first = false;
  std::atomic<int> single_dones{0};
  std::atomic<int> batch_dones{0};
  std::atomic<bool> batch_done_saw_results{false};
  {
    GroupCommitter committer(/*batch_items_max=*/64, /*in_flight_max=*/1);
    std::atomic<bool> first{true};
    auto run_singles = [&](const std::vector<BatchItem*>& items) {
      if (first.exchange(false)) {  // hold the first batch until everything has queued
        absl::MutexLock lock(&mutex);
        mutex.Await(absl::Condition(&release_first));
      }
      singles_recorder.Run(items);
    };
    auto run_batch = [&](const std::vector<BatchItem*>& items) { batch_recorder.Run(items); };
    committer.SubmitAsync(singles[0]->item, run_singles, [&] { single_dones.fetch_add(1); });
    for (int i = 1; i < kSingles / 2; ++i) {
      committer.SubmitAsync(singles[i]->item, run_singles, [&] { single_dones.fetch_add(1); });
    }
    committer.SubmitBatchAsync(caller_batch, run_batch, [&] {
      bool all = true;
      for (BatchItem* item : caller_batch) all = all && item->result.has_value();
      batch_done_saw_results = all;
      batch_dones.fetch_add(1);
    });
    for (int i = kSingles / 2; i < kSingles; ++i) {
      committer.SubmitAsync(singles[i]->item, run_singles, [&] { single_dones.fetch_add(1); });
    }
    absl::MutexLock lock(&mutex);
    release_first = true;
  }  // the destructor returns once every batch ran and every done was called

  EXPECT_EQ(single_dones.load(), kSingles);
  EXPECT_EQ(batch_dones.load(), 1);
  EXPECT_TRUE(batch_done_saw_results.load()) << "done before the batch's results";
  ASSERT_EQ(batch_recorder.batches().size(), 1u) << "the caller's batch ran once, alone";
  EXPECT_EQ(batch_recorder.batches()[0], (std::vector<size_t>{100, 101, 102, 103, 104}));
  std::set<size_t> ran;
  for (const std::vector<size_t>& batch : singles_recorder.batches()) {
    for (size_t index : batch) {
      EXPECT_LT(index, static_cast<size_t>(kSingles)) << "a caller's item ran with the single submits";
      EXPECT_TRUE(ran.insert(index).second) << "item " << index << " ran twice";
    }
  }
  EXPECT_EQ(ran.size(), static_cast<size_t>(kSingles));
}

// Two slots, each holding a lone submit, and eight more callers queued behind them; a
// runner that holds the batches it is told to hold. What the balance rule decides is
// read from the batches as they start.
class SharedSlots {
 public:
  static constexpr size_t kQueued = 8;

  SharedSlots() : committer_(/*batch_items_max=*/256, /*in_flight_max=*/2) {
    for (size_t i = 0; i < 16; ++i) {
      submits_.push_back(std::make_unique<PreparedSubmit>(
          Operation::Transfer("alice", "bob", "CREDITS", 1), i));
    }
  }
  ~SharedSlots() {
    ReleaseAll();
    for (std::thread& thread : threads_) thread.join();
  }

  // Slot 1 runs submit 0, slot 2 submit 1 (both held); submits 2 to 9 queue.
  void FillBothSlotsAndQueueEight() {
    Start(0);
    AwaitBatches(1);
    Start(1);
    AwaitBatches(2);
    for (size_t i = 2; i < 2 + kQueued; ++i) Start(i);
    AwaitQueued(kQueued);
  }
  void Start(size_t index) {
    threads_.emplace_back([this, index] { committer_.Submit(submits_[index]->item, Runner()); });
  }
  // Lets the batch that started `started`-th (1-based) finish.
  void Release(size_t started) {
    absl::MutexLock lock(&mutex_);
    released_.insert(started);
  }
  void ReleaseAll() {
    absl::MutexLock lock(&mutex_);
    release_all_ = true;
  }
  // The batches started so far, in the order they started.
  std::vector<std::vector<size_t>> batches() {
    absl::MutexLock lock(&mutex_);
    return batches_;
  }
  void AwaitBatches(size_t count) {
    absl::MutexLock lock(&mutex_);
    auto enough = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
      return batches_.size() >= count;
    };
    ASSERT_TRUE(mutex_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20)))
        << "only " << batches_.size() << " batches of " << count << " started";
  }
  void AwaitQueued(size_t count) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (committer_.queued() != count && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
    ASSERT_EQ(committer_.queued(), count);
  }
  GroupCommitter& committer() { return committer_; }

 private:
  GroupCommitter::BatchRunner Runner() {
    return [this](const std::vector<BatchItem*>& items) {
      absl::MutexLock lock(&mutex_);
      std::vector<size_t> batch;
      for (BatchItem* item : items) batch.push_back(item->index);
      batches_.push_back(std::move(batch));
      const size_t started = batches_.size();
      auto released = [this, started]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
        return release_all_ || released_.count(started) > 0;
      };
      mutex_.Await(absl::Condition(&released));
      for (BatchItem* item : items) item->result = absl::CancelledError("recorded, not run");
    };
  }

  GroupCommitter committer_;
  std::vector<std::unique_ptr<PreparedSubmit>> submits_;
  std::vector<std::thread> threads_;
  absl::Mutex mutex_;
  std::vector<std::vector<size_t>> batches_ ABSL_GUARDED_BY(mutex_);
  std::set<size_t> released_ ABSL_GUARDED_BY(mutex_);
  bool release_all_ ABSL_GUARDED_BY(mutex_) = false;
};

// Issue 29: with another batch running, a free slot does not go to the first caller
// back, whose batch of one or two would cost a transaction each while the rest queue
// behind it: a batch starts there once it holds a fair share of the waiters (queued and
// running, divided among the slots), and takes at most its share rounded up. A second
// caller alone still starts at once (two clients lose nothing).
TEST(GroupCommitter, AFreeSlotWaitsForAShareOfTheCallersWhileAnotherBatchRuns) {
  SharedSlots slots;
  slots.FillBothSlotsAndQueueEight();  // a lone second caller took slot 2 at once
  slots.Release(1);  // slot 1 frees: 8 queued, 1 running, so a share is 5 (9 / 2 up)
  slots.AwaitBatches(3);
  EXPECT_EQ(slots.batches()[2].size(), 5u);
  slots.Release(2);  // slot 2 frees: 3 queued, 5 running; a share is 4 (8 / 2)
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(slots.batches().size(), 3u) << "a batch of 3 took the free slot";
  EXPECT_EQ(slots.committer().queued(), 3u);
  slots.Start(10);  // 4 queued, 5 running: a share
  slots.AwaitBatches(4);
  EXPECT_EQ(slots.batches()[3].size(), 4u);
  EXPECT_EQ(slots.committer().queued(), 0u);
}

// The wait for a share is bounded by the running batch: once it ends, the callers
// queued behind it start, however few (split between the two free slots, 2 and 1).
TEST(GroupCommitter, CallersWaitingForAShareStartWhenTheRunningBatchEnds) {
  SharedSlots slots;
  slots.FillBothSlotsAndQueueEight();
  slots.Release(1);
  slots.AwaitBatches(3);
  slots.Release(2);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(slots.committer().queued(), 3u);
  slots.Release(3);  // the batch of 5 ends: the 3 queued start without waiting for more
  slots.AwaitQueued(0);
  slots.AwaitBatches(5);
  const std::vector<std::vector<size_t>> batches = slots.batches();
  ASSERT_EQ(batches.size(), 5u);
  EXPECT_EQ(batches[3].size() + batches[4].size(), 3u);
}

}  // namespace
}  // namespace ledger::internal
