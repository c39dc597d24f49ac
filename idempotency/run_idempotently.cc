#include "idempotency/run_idempotently.h"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"

namespace ledger {
namespace {

// 128 random bits: two workers never share a token, so a compare-and-set on the owner
// can not be fooled by a claim that was released and reserved again (no ABA).
constexpr size_t kOwnerTokenBytes = 16;

// What Reserve does with a claim that another reservation wrote.
enum class Action { kReplaceExpired, kTakeOver, kReplay, kConflict, kDuplicate, kInProgress };

absl::StatusOr<std::string> NewOwnerToken() {
  std::array<unsigned char, kOwnerTokenBytes> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return absl::InternalError("OpenSSL RAND_bytes failed to make an owner token");
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

bool LeaseRunning(const WorkClaim& claim, absl::Time now) {
  return claim.state == WorkState::kPending && claim.lease_expires_at > now;
}

// The precedence of the table in run_idempotently.h.
Action Decide(const WorkClaim& stored, const std::string& fingerprint, ReplayPolicy replay,
              absl::Time now) {
  // A pending claim with a running lease is never reused, even past its expiry: its
  // owner may be calling the outside world right now. (Reserve keeps expires_at at or
  // after the lease's end, so this only guards claims written by other means.)
  if (LeaseRunning(stored, now)) {
    return stored.fingerprint == fingerprint ? Action::kInProgress : Action::kConflict;
  }
  if (stored.expires_at <= now) return Action::kReplaceExpired;
  if (stored.fingerprint != fingerprint) return Action::kConflict;
  if (stored.state == WorkState::kCompleted) {
    return replay == ReplayPolicy::kReturn ? Action::kReplay : Action::kDuplicate;
  }
  return Action::kTakeOver;  // pending with its lease run out, or abandoned
}

WorkClaim FreshClaim(const KeyIdentity& identity, std::string fingerprint, std::string owner,
                     absl::Time now, const WorkOptions& options) {
  WorkClaim claim;
  claim.identity = identity;
  claim.fingerprint = std::move(fingerprint);
  claim.state = WorkState::kPending;
  claim.owner = std::move(owner);
  claim.attempt = 1;
  claim.lease_expires_at = TruncateToMicros(now + options.lease);
  claim.created_at = now;
  claim.updated_at = now;
  claim.expires_at = TruncateToMicros(now + options.ttl);
  // ValidateWorkOptions keeps lease <= ttl: the claim can not expire under its owner.
  LEDGER_CHECK(claim.lease_expires_at <= claim.expires_at);
  return claim;
}

// The next attempt of `stored` under the new owner of `fresh`. The expiry moves so the
// new attempt's result is replayed for a whole ttl and outlives the new lease.
WorkClaim TakeOverClaim(const WorkClaim& stored, const WorkClaim& fresh) {
  WorkClaim claim = stored;
  claim.state = WorkState::kPending;
  claim.owner = fresh.owner;
  claim.attempt = stored.attempt + 1;
  claim.lease_expires_at = fresh.lease_expires_at;
  claim.result.clear();
  claim.updated_at = fresh.updated_at;
  claim.expires_at = std::max(stored.expires_at, fresh.expires_at);
  LEDGER_CHECK(claim.attempt > 1 && claim.lease_expires_at <= claim.expires_at);
  return claim;
}

absl::Status RefusalFor(Action action, const KeyIdentity& identity) {
  const std::string who = identity.Encoded();
  switch (action) {
    case Action::kConflict:
      return ConflictError(absl::StrCat("work ", who, " was reserved with a different payload"));
    case Action::kDuplicate:
      return DuplicateError(absl::StrCat("work ", who, " is already completed"));
    case Action::kInProgress:
      return InProgressError(
          absl::StrCat("work ", who, " is being run by another worker whose lease is running"));
    default: break;
  }
  LEDGER_CHECK(false) << "RefusalFor called with an action that is not a refusal";
  return absl::InternalError("unexpected reservation action");
}

absl::Status ValidateResult(const std::string& result) {
  if (result.size() > kWorkResultBytesMax) {
    return absl::InvalidArgumentError(absl::StrCat("work result is ", result.size(),
                                                   " bytes; the limit is ", kWorkResultBytesMax));
  }
  if (result.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("work result contains a NUL byte (store binary as base64)");
  }
  // Every engine stores the result as text; CanonicalJson rejects invalid UTF-8.
  return Annotate(CanonicalJson(nlohmann::json(result)).status(), "work result");
}

absl::Status NotOwnerError(const Reservation& reservation, std::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("cannot ", absl::string_view(what.data(), what.size()), " work ",
                   reservation.claim.identity.Encoded(), " attempt ", reservation.claim.attempt,
                   ": this reservation no longer owns the claim (taken over, released or "
                   "expired)"));
}

}  // namespace

absl::Status ValidateWorkOptions(const WorkOptions& options) {
  if (options.ttl <= absl::ZeroDuration() || options.ttl > kKeyTtlMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("WorkOptions.ttl must be positive and at most ",
                     absl::FormatDuration(kKeyTtlMax), ", not ", absl::FormatDuration(options.ttl)));
  }
  if (options.lease <= absl::ZeroDuration() || options.lease > options.ttl) {
    return absl::InvalidArgumentError(
        absl::StrCat("WorkOptions.lease must be positive and at most WorkOptions.ttl, not ",
                     absl::FormatDuration(options.lease)));
  }
  return absl::OkStatus();
}

IdempotentRunner::IdempotentRunner(WorkClaimStore& store, Clock& clock)
    : store_(store), clock_(clock) {}

absl::StatusOr<Reservation> IdempotentRunner::Reserve(const KeyIdentity& identity,
                                                      const nlohmann::json& payload,
                                                      const WorkOptions& options) {
  LEDGER_RETURN_IF_ERROR(ValidateIdentity(identity));
  LEDGER_RETURN_IF_ERROR(ValidateWorkOptions(options));
  LEDGER_ASSIGN_OR_RETURN(std::string fingerprint, Fingerprint(payload));
  LEDGER_ASSIGN_OR_RETURN(std::string owner, NewOwnerToken());
  const WorkClaim fresh =
      FreshClaim(identity, std::move(fingerprint), std::move(owner), clock_.Now(), options);

  // Each round reads the claim (inserting ours if there is none) and acts on it; a lost
  // compare-and-set means another caller changed the claim in between: read again.
  for (int round = 0; round < kReserveRoundsMax; ++round) {
    LEDGER_ASSIGN_OR_RETURN(WorkClaim stored, store_.InsertWorkClaimIfAbsent(fresh));
    if (stored.owner == fresh.owner) return Reservation{Reservation::Kind::kReserved, fresh};

    const Action action = Decide(stored, fresh.fingerprint, options.replay, fresh.created_at);
    if (action == Action::kReplay) {
      return Reservation{Reservation::Kind::kReplayed, std::move(stored)};
    }
    if (action != Action::kReplaceExpired && action != Action::kTakeOver) {
      return RefusalFor(action, identity);
    }
    const bool taking_over = action == Action::kTakeOver;
    WorkClaim replacement = taking_over ? TakeOverClaim(stored, fresh) : fresh;
    LEDGER_ASSIGN_OR_RETURN(bool replaced, store_.ReplaceWorkClaim(identity, stored.owner,
                                                                   stored.attempt, replacement));
    if (replaced) {
      return Reservation{Reservation::Kind::kReserved, std::move(replacement), taking_over};
    }
  }
  return InProgressError(absl::StrCat("work ", identity.Encoded(), " changed hands ",
                                      kReserveRoundsMax, " times during one reservation"));
}

absl::Status IdempotentRunner::Complete(const Reservation& reservation, std::string result) {
  if (!reservation.reserved()) {
    return absl::FailedPreconditionError("a replayed reservation cannot complete");
  }
  LEDGER_RETURN_IF_ERROR(ValidateResult(result));
  const WorkClaim& held = reservation.claim;
  WorkClaim completed = held;
  completed.state = WorkState::kCompleted;
  completed.result = std::move(result);
  completed.updated_at = clock_.Now();
  LEDGER_ASSIGN_OR_RETURN(
      bool replaced, store_.ReplaceWorkClaim(held.identity, held.owner, held.attempt, completed));
  if (!replaced) return NotOwnerError(reservation, "complete");
  return absl::OkStatus();
}

absl::Status IdempotentRunner::Fail(const Reservation& reservation) {
  if (!reservation.reserved()) {
    return absl::FailedPreconditionError("a replayed reservation cannot fail");
  }
  LEDGER_ASSIGN_OR_RETURN(
      bool deleted, store_.DeleteWorkClaim(reservation.claim.identity, reservation.claim.owner));
  if (!deleted) return NotOwnerError(reservation, "release");
  return absl::OkStatus();
}

absl::StatusOr<int64_t> IdempotentRunner::SweepAbandoned() {
  return store_.MarkAbandonedWorkClaims(clock_.Now());
}

absl::StatusOr<int64_t> IdempotentRunner::Prune() { return store_.PruneWorkClaims(clock_.Now()); }

absl::StatusOr<std::string> IdempotentRunner::Run(
    const KeyIdentity& identity, const nlohmann::json& payload, const WorkOptions& options,
    const std::function<absl::StatusOr<std::string>()>& work) {
  LEDGER_ASSIGN_OR_RETURN(Reservation reservation, Reserve(identity, payload, options));
  if (!reservation.reserved()) return reservation.result();

  absl::StatusOr<std::string> result = CallCatchingExceptions("the work", work);
  if (!result.ok()) {
    // The work's error is what the caller needs; a release that fails only leaves the
    // claim pending until its lease runs out, after which a retry takes it over.
    Fail(reservation).IgnoreError();
    return result.status();
  }
  LEDGER_RETURN_IF_ERROR(Complete(reservation, *result));
  return result;
}

}  // namespace ledger
