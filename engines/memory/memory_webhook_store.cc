#include "engines/memory/memory_webhook_store.h"

namespace ledger::memory_internal {

absl::StatusOr<bool> MemoryWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                    const std::string& event_id,
                                                                    absl::Time received_at) {
  absl::MutexLock lock(&mutex_);
  return events_.emplace(std::make_pair(provider, event_id), received_at).second;
}

absl::StatusOr<bool> MemoryWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                            const std::string& event_id) {
  absl::MutexLock lock(&mutex_);
  return events_.erase(std::make_pair(provider, event_id)) > 0;
}

absl::StatusOr<int64_t> MemoryWebhookStore::PruneWebhookEvents(absl::Time before) {
  absl::MutexLock lock(&mutex_);
  return static_cast<int64_t>(
      std::erase_if(events_, [before](const auto& item) { return item.second < before; }));
}

}  // namespace ledger::memory_internal
