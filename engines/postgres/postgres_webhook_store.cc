// The PostgreSQL engine's inbound webhook events (idempotency/stores.h). Each operation
// is one autocommit statement on a pooled connection; the decisions live in
// webhook_guard.cc.
#include "engines/postgres/postgres_webhook_store.h"

#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_rows.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"

namespace ledger::postgres_internal {

absl::StatusOr<bool> PostgresWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                      const std::string& event_id,
                                                                      absl::Time received_at) {
  LEDGER_ASSIGN_OR_RETURN(int64_t inserted,
                          engine_.ExecuteStandalone("insert webhook event",
                                                    statement::kInsertWebhookEvent, provider,
                                                    event_id, Micros(received_at)));
  return inserted > 0;
}

absl::StatusOr<bool> PostgresWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                              const std::string& event_id) {
  LEDGER_ASSIGN_OR_RETURN(int64_t deleted,
                          engine_.ExecuteStandalone("delete webhook event",
                                                    statement::kDeleteWebhookEvent, provider,
                                                    event_id));
  return deleted > 0;
}

absl::StatusOr<int64_t> PostgresWebhookStore::PruneWebhookEvents(absl::Time before) {
  return engine_.ExecuteStandalone("prune webhook events", statement::kPruneWebhookEvents,
                                   Micros(before));
}

}  // namespace ledger::postgres_internal
