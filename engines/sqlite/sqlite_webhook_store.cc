// The SQLite engine's inbound webhook events (idempotency/stores.h). Each operation is
// one statement in a short BEGIN IMMEDIATE transaction with the default busy timeout;
// the decisions live in webhook_guard.cc.
#include "engines/sqlite/sqlite_webhook_store.h"

#include "engines/sqlite/sqlite_engine_internal.h"
#include "base/status.h"

namespace ledger::sqlite_internal {

absl::StatusOr<bool> SqliteWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                    const std::string& event_id,
                                                                    absl::Time received_at) {
  bool inserted = false;
  LEDGER_RETURN_IF_ERROR(engine_.InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("INSERT INTO webhook_events (provider, event_id, received_at)"
                           " VALUES (?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING",
                           "insert webhook event"));
    query.BindText(provider).BindText(event_id).BindTime(received_at);
    LEDGER_RETURN_IF_ERROR(query.Run());
    inserted = connection.ChangedRows() == 1;
    return absl::OkStatus();
  }));
  return inserted;
}

absl::StatusOr<bool> SqliteWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                            const std::string& event_id) {
  bool deleted = false;
  LEDGER_RETURN_IF_ERROR(engine_.InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("DELETE FROM webhook_events WHERE provider = ? AND event_id = ?",
                           "delete webhook event"));
    query.BindText(provider).BindText(event_id);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows() == 1;
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<int64_t> SqliteWebhookStore::PruneWebhookEvents(absl::Time before) {
  int64_t deleted = 0;
  LEDGER_RETURN_IF_ERROR(engine_.InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(Query query,
                            connection.Prepare("DELETE FROM webhook_events WHERE received_at < ?",
                                               "prune webhook events"));
    query.BindTime(before);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows();
    return absl::OkStatus();
  }));
  return deleted;
}

}  // namespace ledger::sqlite_internal
