#include "cli/exit_codes.h"

#include "base/status.h"

namespace ledger::cli {

std::string_view ExitCodeName(ExitCode code) {
  switch (code) {
    case ExitCode::kOk: return "ok";
    case ExitCode::kError: return "error";
    case ExitCode::kBadInput: return "bad_input";
    case ExitCode::kRejected: return "rejected";
    case ExitCode::kConflict: return "conflict";
    case ExitCode::kInProgress: return "in_progress";
    case ExitCode::kFaulted: return "faulted";
    case ExitCode::kVerifyFailed: return "verify_failed";
    case ExitCode::kNotFound: return "not_found";
    case ExitCode::kAlreadyExists: return "already_exists";
    case ExitCode::kDatabaseRefused: return "database_refused";
  }
  return "error";
}

ExitCode ExitCodeForStatus(const absl::Status& status) {
  if (status.ok()) return ExitCode::kOk;
  // The tag wins over the code: a conflict and an existing account share AlreadyExists.
  switch (TagOf(status)) {
    case ErrorTag::kConflict: return ExitCode::kConflict;
    case ErrorTag::kDuplicate: return ExitCode::kAlreadyExists;
    case ErrorTag::kInProgress: return ExitCode::kInProgress;
    case ErrorTag::kRetryable:
    case ErrorTag::kInDoubt: return ExitCode::kFaulted;
    case ErrorTag::kInvariantViolated: return ExitCode::kError;
    case ErrorTag::kNone: break;
  }
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition: return ExitCode::kBadInput;
    case absl::StatusCode::kNotFound: return ExitCode::kNotFound;
    case absl::StatusCode::kAlreadyExists: return ExitCode::kAlreadyExists;
    // The database could not be reached, or did not answer in time: the same command
    // may succeed later, whether it failed while opening or in the middle.
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded: return ExitCode::kFaulted;
    // It answered and refused: no such database, a wrong user or password.
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated: return ExitCode::kDatabaseRefused;
    default: return ExitCode::kError;
  }
}

ExitCode ExitCodeForOutcome(const Outcome& outcome) {
  switch (outcome.kind) {
    case OutcomeKind::kCommitted:
    case OutcomeKind::kDuplicate: return ExitCode::kOk;
    case OutcomeKind::kRejected: return ExitCode::kRejected;
    case OutcomeKind::kFaulted: return ExitCode::kFaulted;
  }
  return ExitCode::kError;
}

}  // namespace ledger::cli
