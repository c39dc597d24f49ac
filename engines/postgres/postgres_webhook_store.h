// The PostgreSQL engine's inbound webhook events (idempotency/stores.h), in the
// webhook_events table of the engine's database. Each call is one autocommit
// statement on a pooled connection (PostgresEngine::WithConnection).
//
// Internal to engines/postgres. Owned by its PostgresEngine, which it must not outlive.
// Thread-safe.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_WEBHOOK_STORE_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_WEBHOOK_STORE_H_

#include <cstdint>
#include <string>

#include "idempotency/stores.h"

namespace ledger::postgres_internal {

class PostgresEngine;

class PostgresWebhookStore final : public WebhookStore {
 public:
  explicit PostgresWebhookStore(PostgresEngine& engine) : engine_(engine) {}

  absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                  const std::string& event_id,
                                                  absl::Time received_at) override;
  absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                          const std::string& event_id) override;
  absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) override;

 private:
  PostgresEngine& engine_;
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_WEBHOOK_STORE_H_
