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
  absl::StatusOr<int64_t> inserted = engine_.ExecuteStandalone(
      "INSERT INTO webhook_events (provider, event_id, received_at) VALUES (?, ?, ?)",
      {provider, event_id, ToMicros(received_at)}, "record the webhook event");
  if (absl::IsAlreadyExists(inserted.status())) return false;  // recorded before
  LEDGER_RETURN_IF_ERROR(inserted.status());
  return true;
}

absl::StatusOr<bool> MysqlWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                           const std::string& event_id) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.ExecuteStandalone("DELETE FROM webhook_events WHERE provider = ? AND event_id = ?",
                                {provider, event_id}, "forget the webhook event"));
  return deleted > 0;
}

absl::StatusOr<int64_t> MysqlWebhookStore::PruneWebhookEvents(absl::Time before) {
  return engine_.ExecuteStandalone("DELETE FROM webhook_events WHERE received_at < ?",
                                   {ToMicros(before)}, "prune webhook events");
}

}  // namespace ledger::mysql_internal
