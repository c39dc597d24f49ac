// The SQLite engine's inbound webhook events (idempotency/stores.h). Each operation is
// one statement in a short BEGIN IMMEDIATE transaction with the default busy timeout;
// the decisions live in webhook_guard.cc.
#include "engines/sqlite/sqlite_webhook_store.h"

#include "engines/sqlite/sqlite_engine_internal.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {

absl::StatusOr<bool> SqliteWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                    const std::string& event_id,
                                                                    absl::Time received_at) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t inserted,
      engine_.WriteStatement(statement::kInsertWebhookEvent,
                             "insert webhook event", [&](Query& query) {
                               query.BindText(provider).BindText(event_id).BindTime(received_at);
                             }));
  return inserted == 1;
}

absl::StatusOr<bool> SqliteWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                            const std::string& event_id) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.WriteStatement(statement::kDeleteWebhookEvent,
                             "delete webhook event", [&](Query& query) {
                               query.BindText(provider).BindText(event_id);
                             }));
  return deleted == 1;
}

absl::StatusOr<int64_t> SqliteWebhookStore::PruneWebhookEvents(absl::Time before) {
  return engine_.WriteStatement(statement::kPruneWebhookEvents,
                                "prune webhook events",
                                [&](Query& query) { query.BindTime(before); });
}

}  // namespace ledger::sqlite_internal
