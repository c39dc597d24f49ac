// Inbound webhook dedup: a provider that redelivers an event (it never heard our 200)
// gets it processed once. Events are keyed on (provider, event_id) in their own table
// (webhook_events), apart from the submit keys and the work claims, so a string used in
// one layer never collides with the same string in another.
//
//   ledger::WebhookGuard guard(engine.webhooks(), clock);  // any WebhookStore, any Clock
//   absl::StatusOr<ledger::WebhookDelivery> delivery =
//       guard.Handle("stripe", event.id, [&] { return ApplyEvent(event); });
//   if (!delivery.ok()) return Http500();  // the event was forgotten: a redelivery retries
//   return Http200();                        // kFirst (handled now) or kDuplicate (before)
//
// Or step by step: Accept, process, and Forget when processing failed.
//
// The guard records an event BEFORE processing it, so two concurrent deliveries of one
// event never both run the handler; the price is that a process crashing mid-handler
// leaves the event recorded and the redelivery is dropped as a duplicate. Handlers that
// must not lose events should write their effects idempotently (a ledger submit keyed
// on the event id) and Forget on failure.
//
// Time comes only from the injected Clock. Thread-safe: share one guard; the store and
// the clock must outlive it.
#ifndef LEDGER_IDEMPOTENCY_WEBHOOK_GUARD_H_
#define LEDGER_IDEMPOTENCY_WEBHOOK_GUARD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "idempotency/stores.h"

namespace ledger {

inline constexpr size_t kWebhookProviderBytesMax = 64;
inline constexpr size_t kWebhookEventIdBytesMax = 255;

enum class WebhookDelivery {
  kFirst,      // recorded now: process it
  kDuplicate,  // recorded before: acknowledge it, do not process it again
};

// InvalidArgument unless provider is 1..64 and event_id 1..255 bytes of printable ASCII.
absl::Status ValidateWebhookEvent(const std::string& provider, const std::string& event_id);

class WebhookGuard {
 public:
  WebhookGuard(WebhookStore& store, Clock& clock);

  // Records the event unless it is recorded already. Bad input: InvalidArgument.
  absl::StatusOr<WebhookDelivery> Accept(const std::string& provider, const std::string& event_id);

  // Processing of an accepted event failed: forget it so a redelivery is processed.
  // OK also when the event was not recorded.
  absl::Status Forget(const std::string& provider, const std::string& event_id);

  // Deletes events received more than `retention` ago (positive); returns how many. A
  // redelivery older than the retention is processed again, so keep it longer than the
  // providers' retry window (days).
  absl::StatusOr<int64_t> Prune(absl::Duration retention);

  // Accept; on the first delivery runs `handler`. If the handler fails, forgets the
  // event and returns the handler's error, so the provider's redelivery runs it again.
  // A handler that throws has failed: the event is forgotten and the exception comes
  // back as Internal, never as an exception.
  absl::StatusOr<WebhookDelivery> Handle(const std::string& provider, const std::string& event_id,
                                         const std::function<absl::Status()>& handler);

 private:
  WebhookStore& store_;
  Clock& clock_;
};

}  // namespace ledger

#endif  // LEDGER_IDEMPOTENCY_WEBHOOK_GUARD_H_
