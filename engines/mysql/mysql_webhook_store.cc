// The MySQL engine's inbound webhook events (idempotency/stores.h). Each operation is
// one statement in its own transaction (MysqlEngine::RunStandalone); the decisions live
// in webhook_guard.cc.
#include "engines/mysql/mysql_webhook_store.h"

#include "engines/mysql/mysql_engine_internal.h"
#include "engines/mysql/mysql_rows.h"
#include "base/status.h"

namespace ledger::mysql_internal {

absl::StatusOr<bool> MysqlWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                   const std::string& event_id,
                                                                   absl::Time received_at) {
  bool inserted = false;
  LEDGER_RETURN_IF_ERROR(engine_.RunStandalone(
      MysqlEngine::Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
        absl::Status status = connection
                                  .Execute(
                                      "INSERT INTO webhook_events (provider, event_id, received_at)"
                                      " VALUES (?, ?, ?)",
                                      {provider, event_id, ToMicros(received_at)},
                                      "record the webhook event", ErrorContext::kStandalone)
                                  .status();
        inserted = status.ok();
        return absl::IsAlreadyExists(status) ? absl::OkStatus() : status;
      }));
  return inserted;
}

absl::StatusOr<bool> MysqlWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                           const std::string& event_id) {
  int64_t deleted = 0;
  LEDGER_RETURN_IF_ERROR(engine_.RunStandalone(
      MysqlEngine::Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(
            deleted,
            connection.Execute("DELETE FROM webhook_events WHERE provider = ? AND event_id = ?",
                               {provider, event_id}, "forget the webhook event",
                               ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return deleted > 0;
}

absl::StatusOr<int64_t> MysqlWebhookStore::PruneWebhookEvents(absl::Time before) {
  int64_t deleted = 0;
  LEDGER_RETURN_IF_ERROR(engine_.RunStandalone(
      MysqlEngine::Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(
            deleted, connection.Execute("DELETE FROM webhook_events WHERE received_at < ?",
                                        {ToMicros(before)}, "prune webhook events",
                                        ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return deleted;
}

}  // namespace ledger::mysql_internal
