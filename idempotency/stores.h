// The storage each engine provides for idempotency outside the ledger: claims of
// run-idempotently work and the inbound webhook dedup table. The decisions (takeover,
// replay, conflicts) live in run_idempotently.h and webhook_guard.h; an engine only
// offers these single-row atomic operations, each one statement or one transaction.
//
// Thread-safe: implementations must allow concurrent calls.
#ifndef LEDGER_IDEMPOTENCY_STORES_H_
#define LEDGER_IDEMPOTENCY_STORES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "idempotency/key.h"

namespace ledger {

enum class WorkState { kPending, kCompleted, kAbandoned };

std::string_view WorkStateName(WorkState state);
absl::StatusOr<WorkState> ParseWorkState(std::string_view name);

// A claim on a piece of non-ledger work (calling a payment gateway, sending a payout).
struct WorkClaim {
  KeyIdentity identity;
  std::string fingerprint;
  WorkState state = WorkState::kPending;
  std::string owner;        // random token of the worker holding the lease
  int64_t attempt = 1;      // 1 for the first reservation, +1 per takeover
  absl::Time lease_expires_at;  // pending: the owner must finish or renew before this
  std::string result;       // completed: the stored result, replayed to retries
  absl::Time created_at;
  absl::Time updated_at;
  absl::Time expires_at;    // after this the identity may be reused with any payload
  friend bool operator==(const WorkClaim&, const WorkClaim&) = default;
};

class WorkClaimStore {
 public:
  virtual ~WorkClaimStore() = default;

  // Inserts `fresh` unless a claim with its identity exists; returns the stored claim
  // (equal to `fresh` when it was inserted).
  virtual absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) = 0;

  // Replaces the claim only if its owner and attempt still equal the expected ones
  // (compare-and-set on those two, whatever the state: an owner may still complete a
  // claim the sweeper marked abandoned, as long as nobody took it over). Returns whether
  // it replaced.
  virtual absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                                const std::string& expected_owner,
                                                int64_t expected_attempt,
                                                const WorkClaim& replacement) = 0;

  // Deletes the claim only if it is pending and owned by `owner`. Returns whether it did.
  virtual absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                               const std::string& owner) = 0;

  // Marks every pending claim whose lease expired at or before `now` as abandoned and
  // sets its updated_at to `now`; returns how many.
  virtual absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) = 0;

  // Deletes claims whose expires_at is at or before `now`; returns how many.
  virtual absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) = 0;
};

class WebhookStore {
 public:
  virtual ~WebhookStore() = default;

  // Records (provider, event_id) unless present. True if this call recorded it.
  virtual absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                          const std::string& event_id,
                                                          absl::Time received_at) = 0;
  // Forgets an event so a redelivery is processed again. True if it was present.
  virtual absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                                  const std::string& event_id) = 0;
  // Deletes events received before `before`; returns how many.
  virtual absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) = 0;
};

}  // namespace ledger

#endif  // LEDGER_IDEMPOTENCY_STORES_H_
