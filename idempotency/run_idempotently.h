// Run-idempotently: work with outside side effects that is not a ledger submit (calling
// a payment gateway, sending a payout) runs once per identity, and retries get the
// result it stored instead of running it again.
//
//   ledger::IdempotentRunner runner(engine.work_claims(), clock);  // any WorkClaimStore
//   ledger::KeyIdentity identity{"gateway.charge", {"acme", "user-42"}, "order-1001"};
//   nlohmann::json payload = {{"amount", "1500"}, {"currency", "USD"}};
//   absl::StatusOr<std::string> receipt = runner.Run(identity, payload, {}, [&] {
//     return gateway.Charge(...);  // absl::StatusOr<std::string>: stored, then replayed
//   });
//
// Or step by step, when the work is not one function call:
//
//   LEDGER_ASSIGN_OR_RETURN(ledger::Reservation reservation,
//                           runner.Reserve(identity, payload, options));
//   if (!reservation.reserved()) return reservation.result();  // replayed
//   ... do the work ...
//   LEDGER_RETURN_IF_ERROR(runner.Complete(reservation, result));  // or runner.Fail(...)
//
// A claim goes through these states (one row per identity, idempotency/stores.h):
//
//   (none) --Reserve--> pending(owner, lease) --Complete--> completed(result)
//                          |   \--Fail--> (none)
//                          |    \--lease runs out, SweepAbandoned--> abandoned
//                          \--lease ran out or abandoned, Reserve--> pending(new owner,
//                                                                    attempt + 1)
//   any state, once expires_at <= now --Reserve--> pending (fresh, attempt 1)
//
// What Reserve returns, by precedence (the claim of the same identity decides):
//   none, or expired (expires_at <= now) -> reserved (fresh, attempt 1; any payload)
//   other fingerprint                    -> ConflictError (IsConflict)
//   completed                            -> replayed (result), or DuplicateError
//                                           (IsDuplicate) under ReplayPolicy::kError
//   pending, lease still running         -> InProgressError (IsInProgress)
//   pending with its lease run out, or
//   abandoned                            -> reserved, taken_over, attempt + 1
// Bad identity or options: InvalidArgument, nothing written.
//
// Guarantees and limits: the work starts at most once per lease. A worker that crashes
// after the side effect but before Complete leaves a pending claim; once its lease runs
// out a retry takes it over and runs the work again, so the work itself should be
// idempotent towards the outside (pass the identity's key on to the gateway). A worker
// that outlives its lease without completing may find the claim taken over: its
// Complete then fails with FailedPrecondition and its result is not stored.
//
// Time comes only from the injected Clock. Thread-safe: share one runner; the store
// and the clock must outlive it.
#ifndef LEDGER_IDEMPOTENCY_RUN_IDEMPOTENTLY_H_
#define LEDGER_IDEMPOTENCY_RUN_IDEMPOTENTLY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "idempotency/key.h"
#include "idempotency/stores.h"
#include "nlohmann/json.hpp"

namespace ledger {

inline constexpr absl::Duration kWorkLeaseDefault = absl::Minutes(5);
// A stored result is a receipt (ids, status), not a data store: the cap keeps claim rows
// small on every engine and well inside each one's result column.
inline constexpr size_t kWorkResultBytesMax = 65'535;
// Reserve re-reads and decides again when another caller changed the claim between its
// read and its compare-and-set; past this many rounds it reports in-progress.
inline constexpr int kReserveRoundsMax = 8;

struct WorkOptions {
  // How long a reservation owns the work. Past it, another caller may take the claim
  // over and run the work again. Positive, at most ttl. Default: kWorkLeaseDefault (5 min).
  absl::Duration lease = kWorkLeaseDefault;
  // How long a completed result is replayed; after it the identity may be reused with
  // any payload. Positive, at most kKeyTtlMax. Default: kKeyTtlDefault (24 h).
  absl::Duration ttl = kKeyTtlDefault;
  // What a retry of completed work gets: the stored result, or DuplicateError.
  // Default: kReturn, the stored result.
  ReplayPolicy replay = ReplayPolicy::kReturn;
};

absl::Status ValidateWorkOptions(const WorkOptions& options);

// What Reserve decided. Either the caller now owns the work (reserved) and must call
// exactly one of Complete or Fail, or the work was done before (replayed) and
// result() is what it produced.
struct Reservation {
  enum class Kind { kReserved, kReplayed };

  Kind kind = Kind::kReserved;
  // reserved: the claim as written (state pending, this caller's owner token and
  // lease). replayed: the completed claim as stored.
  WorkClaim claim;
  // reserved after an earlier attempt's lease ran out or was abandoned: the side effect
  // may already have happened once.
  bool taken_over = false;

  bool reserved() const { return kind == Kind::kReserved; }
  const std::string& result() const { return claim.result; }
};

class IdempotentRunner {
 public:
  IdempotentRunner(WorkClaimStore& store, Clock& clock);

  // Claims the work of `identity`; see the table in the opening comment.
  // `payload` is the business input; its fingerprint (fingerprint.h) decides conflicts.
  absl::StatusOr<Reservation> Reserve(const KeyIdentity& identity, const nlohmann::json& payload,
                                      const WorkOptions& options);

  // Stores `result` for replay. It must be text every engine stores unchanged: valid
  // UTF-8, no NUL byte, at most kWorkResultBytesMax bytes; else InvalidArgument and the
  // claim stays pending. Call once: a second Complete overwrites. FailedPrecondition when the reservation is not the claim's current owner any more
  // (taken over, released, or expired and reused) or was a replay. A reservation whose
  // lease ran out may still complete as long as nobody took it over.
  absl::Status Complete(const Reservation& reservation, std::string result);

  // Releases the reservation: deletes the pending claim so a retry runs the work again.
  // FailedPrecondition when this reservation no longer holds a pending claim (taken
  // over, abandoned by the sweeper, or released already); an abandoned claim is taken
  // over by the next Reserve anyway.
  absl::Status Fail(const Reservation& reservation);

  // Marks pending claims whose lease ran out as abandoned (for monitoring: crashed
  // workers); returns how many. Reserve takes over abandoned and lease-expired claims
  // alike, so running the sweeper is optional for correctness.
  absl::StatusOr<int64_t> SweepAbandoned();

  // Deletes claims whose expires_at has passed; returns how many.
  absl::StatusOr<int64_t> Prune();

  // Reserve; when reserved, runs `work` and completes with its result, or fails the
  // reservation and returns the work's error. When replayed, returns the stored result
  // without running `work`. Reserve's errors (conflict, in progress, duplicate) are
  // returned as they are. If the work succeeds but its result cannot be stored, the
  // store's error is returned and the claim stays pending until its lease runs out.
  // Work that throws is work that failed: the claim is released and the exception
  // comes back as Internal, never as an exception.
  absl::StatusOr<std::string> Run(const KeyIdentity& identity, const nlohmann::json& payload,
                                  const WorkOptions& options,
                                  const std::function<absl::StatusOr<std::string>()>& work);

 private:
  WorkClaimStore& store_;
  Clock& clock_;
};

}  // namespace ledger

#endif  // LEDGER_IDEMPOTENCY_RUN_IDEMPOTENTLY_H_
