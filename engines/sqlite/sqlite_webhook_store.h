// The SQLite engine's inbound webhook events (idempotency/stores.h), in the
// webhook_events table of the engine's database. Each call is one statement in a short
// write transaction through the engine's runner.
//
// Internal to engines/sqlite. Owned by its SqliteEngine, which it must not outlive.
// Thread-safe.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_WEBHOOK_STORE_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_WEBHOOK_STORE_H_

#include <cstdint>
#include <string>

#include "idempotency/stores.h"

namespace ledger::sqlite_internal {

class SqliteEngine;

class SqliteWebhookStore final : public WebhookStore {
 public:
  explicit SqliteWebhookStore(SqliteEngine& engine) : engine_(engine) {}

  absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                  const std::string& event_id,
                                                  absl::Time received_at) override;
  absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                          const std::string& event_id) override;
  absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) override;

 private:
  SqliteEngine& engine_;
};

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_WEBHOOK_STORE_H_
