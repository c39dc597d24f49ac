// The PostgreSQL engine's inbound webhook events (idempotency/stores.h). Each operation
// is one autocommit statement on a pooled connection; the decisions live in
// webhook_guard.cc.
#include "engines/postgres/postgres_webhook_store.h"

#include "engines/postgres/postgres_connection.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_rows.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"

namespace ledger::postgres_internal {

absl::StatusOr<bool> PostgresWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                      const std::string& event_id,
                                                                      absl::Time received_at) {
  return engine_.WithConnection({.operation = "insert webhook event"},
                                [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
                                  return work.exec_prepared(statement::kInsertWebhookEvent,
                                                            provider, event_id, Micros(received_at))
                                             .affected_rows() > 0;
                                });
}

absl::StatusOr<bool> PostgresWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                              const std::string& event_id) {
  return engine_.WithConnection({.operation = "delete webhook event"},
                                [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
                                  return work.exec_prepared(statement::kDeleteWebhookEvent,
                                                            provider, event_id)
                                             .affected_rows() > 0;
                                });
}

absl::StatusOr<int64_t> PostgresWebhookStore::PruneWebhookEvents(absl::Time before) {
  return engine_.WithConnection(
      {.operation = "prune webhook events"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kPruneWebhookEvents, Micros(before)).affected_rows());
      });
}

}  // namespace ledger::postgres_internal
