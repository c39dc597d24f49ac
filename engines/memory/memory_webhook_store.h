// The memory engine's inbound webhook events (idempotency/stores.h): one map behind a
// mutex of its own, apart from the ledger state and the work claims. Nothing survives
// the process.
//
// Internal to engines/memory. Thread-safe.
#ifndef LEDGER_ENGINES_MEMORY_MEMORY_WEBHOOK_STORE_H_
#define LEDGER_ENGINES_MEMORY_MEMORY_WEBHOOK_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "idempotency/stores.h"

namespace ledger::memory_internal {

class MemoryWebhookStore final : public WebhookStore {
 public:
  absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                  const std::string& event_id,
                                                  absl::Time received_at) override;
  absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                          const std::string& event_id) override;
  absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) override;

 private:
  absl::Mutex mutex_;
  // (provider, event_id) -> received_at
  std::map<std::pair<std::string, std::string>, absl::Time> events_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ledger::memory_internal

#endif  // LEDGER_ENGINES_MEMORY_MEMORY_WEBHOOK_STORE_H_
