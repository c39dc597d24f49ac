// An Engine that counts the database transactions begun through it, so a load run can
// report operations per transaction: what proves that --batch and --group-commit really
// share transactions, and how large group commit's batches grew.
//
//   auto counting = std::make_shared<CountingEngine>(std::move(engine));
//   int64_t before = counting->transactions_begun();
//
// Thread-safe as the wrapped engine; the count is atomic. Transactions are not wrapped,
// so a submit costs one extra virtual call per Begin and nothing else.
#ifndef LEDGER_BENCH_LOAD_COUNTING_ENGINE_H_
#define LEDGER_BENCH_LOAD_COUNTING_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "ledger/engine.h"
#include "tests/support/forwarding_engine.h"

namespace ledger::load {

class CountingEngine final : public testing::ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;

  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override {
    transactions_begun_.fetch_add(1, std::memory_order_relaxed);
    return ForwardingEngine::Begin(options);
  }

  // Every Begin so far, whether it committed, rolled back or failed.
  int64_t transactions_begun() const {
    return transactions_begun_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> transactions_begun_{0};
};

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_COUNTING_ENGINE_H_
