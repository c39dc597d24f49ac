// The MySQL engine's inbound webhook events (idempotency/stores.h), in the
// webhook_events table of the engine's database. Each call is one statement in a
// short transaction of its own (MysqlEngine::RunStandalone).
//
// Internal to engines/mysql. Owned by its MysqlEngine, which it must not outlive.
// Thread-safe.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_WEBHOOK_STORE_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_WEBHOOK_STORE_H_

#include <cstdint>
#include <string>

#include "idempotency/stores.h"

namespace ledger::mysql_internal {

class MysqlEngine;

class MysqlWebhookStore final : public WebhookStore {
 public:
  explicit MysqlWebhookStore(MysqlEngine& engine) : engine_(engine) {}

  absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                  const std::string& event_id,
                                                  absl::Time received_at) override;
  absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                          const std::string& event_id) override;
  absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) override;

 private:
  MysqlEngine& engine_;
};

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_WEBHOOK_STORE_H_
