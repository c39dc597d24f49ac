// The MySQL engine's inbound webhook events (idempotency/stores.h). Each operation is
// one statement in its own transaction (MysqlEngine::RunStandalone); the decisions live
// in webhook_guard.cc.
#include "engines/mysql/mysql_webhook_store.h"

#include "engines/mysql/mysql_engine_internal.h"
#include "engines/mysql/mysql_rows.h"
#include "engines/mysql/mysql_statements.h"
#include "base/status.h"

namespace ledger::mysql_internal {

absl::StatusOr<bool> MysqlWebhookStore::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                   const std::string& event_id,
                                                                   absl::Time received_at) {
  absl::StatusOr<int64_t> inserted = engine_.ExecuteStandalone(
      statement::kInsertWebhookEvent,
      {provider, event_id, ToMicros(received_at)}, "record the webhook event");
  if (absl::IsAlreadyExists(inserted.status())) return false;  // recorded before
  LEDGER_RETURN_IF_ERROR(inserted.status());
  return true;
}

absl::StatusOr<bool> MysqlWebhookStore::DeleteWebhookEvent(const std::string& provider,
                                                           const std::string& event_id) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.ExecuteStandalone(statement::kDeleteWebhookEvent,
                                {provider, event_id}, "forget the webhook event"));
  return deleted > 0;
}

absl::StatusOr<int64_t> MysqlWebhookStore::PruneWebhookEvents(absl::Time before) {
  return engine_.ExecuteStandalone(statement::kPruneWebhookEvents,
                                   {ToMicros(before)}, "prune webhook events");
}

}  // namespace ledger::mysql_internal
