#include "idempotency/webhook_guard.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger {
namespace {

absl::Status ValidatePrintable(absl::string_view what, const std::string& value, size_t bytes_max) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat("webhook ", what, " is empty"));
  if (value.size() > bytes_max) {
    return absl::InvalidArgumentError(
        absl::StrCat("webhook ", what, " is ", value.size(), " bytes; the limit is ", bytes_max));
  }
  for (char c : value) {
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat("webhook ", what, " contains a non-printable byte (printable ASCII only)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateWebhookEvent(const std::string& provider, const std::string& event_id) {
  LEDGER_RETURN_IF_ERROR(ValidatePrintable("provider", provider, kWebhookProviderBytesMax));
  return ValidatePrintable("event id", event_id, kWebhookEventIdBytesMax);
}

WebhookGuard::WebhookGuard(WebhookStore& store, Clock& clock) : store_(store), clock_(clock) {}

absl::StatusOr<WebhookDelivery> WebhookGuard::Accept(const std::string& provider,
                                                     const std::string& event_id) {
  LEDGER_RETURN_IF_ERROR(ValidateWebhookEvent(provider, event_id));
  LEDGER_ASSIGN_OR_RETURN(bool recorded,
                          store_.InsertWebhookEventIfAbsent(provider, event_id, clock_.Now()));
  return recorded ? WebhookDelivery::kFirst : WebhookDelivery::kDuplicate;
}

absl::Status WebhookGuard::Forget(const std::string& provider, const std::string& event_id) {
  LEDGER_RETURN_IF_ERROR(ValidateWebhookEvent(provider, event_id));
  return store_.DeleteWebhookEvent(provider, event_id).status();
}

absl::StatusOr<int64_t> WebhookGuard::Prune(absl::Duration retention) {
  if (retention <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("webhook retention must be positive");
  }
  return store_.PruneWebhookEvents(TruncateToMicros(clock_.Now() - retention));
}

absl::StatusOr<WebhookDelivery> WebhookGuard::Handle(const std::string& provider,
                                                     const std::string& event_id,
                                                     const std::function<absl::Status()>& handler) {
  LEDGER_ASSIGN_OR_RETURN(WebhookDelivery delivery, Accept(provider, event_id));
  if (delivery == WebhookDelivery::kDuplicate) return delivery;
  if (absl::Status handled = CallCatchingExceptions("the webhook handler", handler);
      !handled.ok()) {
    if (absl::Status forgotten = Forget(provider, event_id); !forgotten.ok()) {
      // The redelivery will be dropped as a duplicate: say so next to the handler's error.
      return Annotate(
          handled,
          absl::StrCat("event stays recorded (forget failed: ", forgotten.ToString(), ")"));
    }
    return handled;
  }
  return delivery;
}

}  // namespace ledger
