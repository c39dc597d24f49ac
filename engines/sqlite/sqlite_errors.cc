#include "engines/sqlite/sqlite_errors.h"

#include <sqlite3.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/error_table.h"

namespace ledger::sqlite_internal {
namespace {

std::string Describe(int extended_code, std::string_view message, std::string_view what) {
  return absl::StrCat("sqlite: ", std::string(what), ": ", std::string(message), " (", sqlite3_errstr(extended_code),
                      ", code ", extended_code, ")");
}

engine_common::ErrorClass ClassOf(int extended_code, ErrorContext context) {
  // The file cannot be opened (no such folder, no right to it): SQLite's "no such
  // database", refused like a server's. Later a CANTOPEN is a temporary file: other.
  if (context == ErrorContext::kConnect && (extended_code & 0xff) == SQLITE_CANTOPEN) {
    return engine_common::ErrorClass::kSessionRefused;
  }
  switch (extended_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return engine_common::ErrorClass::kLockWaitTimeout;
    case SQLITE_SCHEMA:
      return engine_common::ErrorClass::kDeadlockOrSerialization;
    default:
      break;
  }
  switch (extended_code) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_ROWID:
      return engine_common::ErrorClass::kUniqueViolation;
    default:
      return engine_common::ErrorClass::kOther;
  }
}

// The status of a code of class "other": its own meaning, whatever the phase.
absl::Status OwnStatus(int extended_code, const std::string& text) {
  if (extended_code == SQLITE_CONSTRAINT_FOREIGNKEY) return absl::FailedPreconditionError(text);
  switch (extended_code & 0xff) {
    case SQLITE_CONSTRAINT:
      return absl::InvalidArgumentError(text);  // check, not null, ...
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
  const std::string text = Describe(extended_code, message, what);
  return engine_common::StatusForError(ClassOf(extended_code, context),
                                       engine_common::PhaseOf(context), text,
                                       OwnStatus(extended_code, text));
}

absl::Status WriterQueueTimeoutStatus(absl::Duration waited, ErrorContext context) {
  const std::string text =
      absl::StrCat("sqlite: another writer of this engine held the database for longer than ",
                   absl::FormatDuration(waited));
  return engine_common::StatusForError(engine_common::ErrorClass::kLockWaitTimeout,
                                       engine_common::PhaseOf(context), text);
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
