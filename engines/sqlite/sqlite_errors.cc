#include "engines/sqlite/sqlite_errors.h"

#include <sqlite3.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::sqlite_internal {
namespace {

std::string Describe(int extended_code, std::string_view message, std::string_view what) {
  return absl::StrCat("sqlite: ", std::string(what), ": ", std::string(message), " (", sqlite3_errstr(extended_code),
                      ", code ", extended_code, ")");
}

bool IsBusy(int primary_code) {
  return primary_code == SQLITE_BUSY || primary_code == SQLITE_LOCKED;
}

// Constraint failures abort only the statement; the caller rolls back. The outcome is
// known in every context, so they map the same way everywhere, COMMIT included.
absl::Status ConstraintStatus(int extended_code, const std::string& text) {
  switch (extended_code) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_ROWID:
      return absl::AlreadyExistsError(text);
    case SQLITE_CONSTRAINT_FOREIGNKEY:
      return absl::FailedPreconditionError(text);
    default:
      return absl::InvalidArgumentError(text);
  }
}

// Codes whose meaning does not depend on the context.
absl::Status InfrastructureStatus(int primary_code, const std::string& text) {
  switch (primary_code) {
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
      return absl::UnavailableError(text);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(text);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::PermissionDeniedError(text);
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(text);
    case SQLITE_INTERRUPT:
      return absl::CancelledError(text);
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return absl::InvalidArgumentError(text);
    default:
      return absl::InternalError(text);
  }
}

}  // namespace

absl::Status SqliteErrorStatus(int extended_code, std::string_view message,
                               std::string_view what, ErrorContext context) {
  const int primary_code = extended_code & 0xff;
  const std::string text = Describe(extended_code, message, what);
  if (IsBusy(primary_code)) {
    // Only the claim's wait is the caller's "in progress": everywhere else the writer
    // lock is already held or not needed, so a busy result is a transient conflict
    // and the attempt rolls back in full.
    return context == ErrorContext::kClaim ? InProgressError(text) : RetryableError(text);
  }
  if (primary_code == SQLITE_CONSTRAINT) return ConstraintStatus(extended_code, text);
  if (context == ErrorContext::kCommit) {
    // A failed COMMIT after an I/O error may or may not have reached the WAL's commit
    // frame durably: only a resend with the same key is safe.
    return InDoubtError(text);
  }
  if (primary_code == SQLITE_SCHEMA) return RetryableError(text);
  return InfrastructureStatus(primary_code, text);
}

absl::Status WriterQueueTimeoutStatus(absl::Duration waited, ErrorContext context) {
  const std::string text =
      absl::StrCat("sqlite: another writer of this engine held the database for longer than ",
                   absl::FormatDuration(waited));
  return context == ErrorContext::kClaim ? InProgressError(text) : RetryableError(text);
}

absl::Status TransactionLostStatus(std::string_view what) {
  return absl::UnavailableError(
      absl::StrCat("sqlite: ", std::string(what), ": the transaction was rolled back by SQLite after an "
                   "earlier error; nothing of it was written"));
}

bool IsConnectionBroken(int extended_code) {
  switch (extended_code & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_NOMEM:
    case SQLITE_MISUSE:
    case SQLITE_PROTOCOL:
      return true;
    default:
      return false;
  }
}

}  // namespace ledger::sqlite_internal
