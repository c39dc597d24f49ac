#include "engines/common/error_table.h"

#include <utility>

#include "base/status.h"

namespace ledger::engine_common {
namespace {

// Whether a failure in `phase` may have come after COMMIT was sent.
bool MayHaveCommitted(ErrorPhase phase) {
  return phase == ErrorPhase::kCommit || phase == ErrorPhase::kWriteAndCommit;
}

// A status only a statement's own check gives (COMMIT raises none of them).
bool IsStatementsOwn(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status);
}

}  // namespace

ErrorPhase PhaseOf(ErrorContext context) {
  switch (context) {
    case ErrorContext::kClaim:
      return ErrorPhase::kClaim;
    case ErrorContext::kTransaction:
      return ErrorPhase::kLockAccounts;
    case ErrorContext::kWrite:
      return ErrorPhase::kWrite;
    case ErrorContext::kCommit:
      return ErrorPhase::kCommit;
    case ErrorContext::kWriteAndCommit:
      return ErrorPhase::kWriteAndCommit;
    case ErrorContext::kConnect:
    case ErrorContext::kStandalone:
      break;
  }
  return ErrorPhase::kStandalone;
}

absl::Status StatusForError(ErrorClass error_class, ErrorPhase phase, std::string_view message,
                            absl::Status own_status) {
  switch (error_class) {
    case ErrorClass::kUniqueViolation:
      // Outside a submit the caller chose the identity (an asset code, an account id):
      // it is taken. In the claim it is the key's row, which the claim then reads (it
      // never reaches the caller). Elsewhere in a submit every rule the writes depend
      // on was checked under the claim and the account locks, so a violation means a
      // concurrent writer won a race those checks could not see; the rerun checks
      // again and rejects, replays or commits.
      if (phase == ErrorPhase::kStandalone || phase == ErrorPhase::kClaim) {
        return absl::AlreadyExistsError(View(message));
      }
      return RetryableError(message);
    case ErrorClass::kDeadlockOrSerialization:
      return RetryableError(message);  // rolled back in full by the server
    case ErrorClass::kLockWaitTimeout:
      // Only the claim's wait is "another attempt holds this key". Elsewhere the holder
      // of an account or a row is slow: nothing was written, the attempt may rerun.
      if (phase == ErrorPhase::kClaim) return InProgressError(message);
      return RetryableError(message);
    case ErrorClass::kConnectionLost:
      // Before COMMIT the server rolls back a session that ends: nothing was written.
      // During COMMIT it may have committed first: only a resend of the same key is safe.
      if (MayHaveCommitted(phase)) return InDoubtError(message);
      return absl::UnavailableError(View(message));
    case ErrorClass::kSessionRefused:
      // Only a connect meets it; one answer for a missing database and a wrong password
      // on every engine, apart from Unavailable (the server could not be reached).
      if (MayHaveCommitted(phase)) return InDoubtError(message);
      return absl::PermissionDeniedError(View(message));
    case ErrorClass::kOther:
      break;
  }
  // A statement's own check stopped a write+commit call before its COMMIT.
  if (phase == ErrorPhase::kWriteAndCommit && IsStatementsOwn(own_status)) return own_status;
  // COMMIT failed for a reason the engine cannot classify: whether it applied is unknown.
  if (MayHaveCommitted(phase)) return InDoubtError(message);
  if (own_status.ok()) return absl::InternalError(View(message));
  return own_status;
}

}  // namespace ledger::engine_common
