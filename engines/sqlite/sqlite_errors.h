// The one place where SQLite result codes become the ledger's error vocabulary
// (base/status.h). Every failing sqlite3_* call in this engine is turned into an
// absl::Status here, with the context of what was running, because the same code
// means different things in different places: SQLITE_BUSY while beginning a submit is
// "another writer holds the database" (in progress), during COMMIT it means nothing
// was written and the attempt may be retried.
//
// Internal to engines/sqlite. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_ERRORS_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_ERRORS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ledger::sqlite_internal {

// Where a failing call ran; decides how its result code is mapped.
enum class ErrorContext {
  kOpen,         // opening a connection and setting its pragmas
  kClaim,        // BEGIN IMMEDIATE of a submit: the writer lock is the key's claim
  kTransaction,  // a statement inside a submit's transaction
  kCommit,       // COMMIT of a submit: its result may be unknown
  kStandalone,   // reads, account administration, work claims, webhooks, migrations
};

// Maps a failing SQLite result (an extended result code) to a status. `message` is
// sqlite3_errmsg's text; `what` names the statement or step, for the caller's logs.
//
// | result code                      | context        | status                           |
// |----------------------------------|----------------|----------------------------------|
// | BUSY, LOCKED                     | kClaim         | InProgressError                  |
// | BUSY, LOCKED, SCHEMA             | others         | RetryableError (rolled back)     |
// | CONSTRAINT_PRIMARYKEY, _UNIQUE   | all            | AlreadyExists                    |
// | CONSTRAINT_FOREIGNKEY            | all            | FailedPrecondition               |
// | CONSTRAINT (check, not null, ..) | all            | InvalidArgument                  |
// | anything else                    | kCommit        | InDoubtError                     |
// | IOERR, FULL, CANTOPEN            | others         | Unavailable                      |
// | CORRUPT, NOTADB                  | others         | DataLoss                         |
// | READONLY, PERM, AUTH             | others         | PermissionDenied                 |
// | NOMEM                            | others         | ResourceExhausted                |
// | INTERRUPT                        | others         | Cancelled                        |
// | TOOBIG, RANGE, MISMATCH          | others         | InvalidArgument                  |
// | anything else (MISUSE, ...)      | others         | Internal                         |
absl::Status SqliteErrorStatus(int extended_code, std::string_view message,
                               std::string_view what, ErrorContext context);

// The in-process writer queue timed out before SQLite was even asked: same meaning as
// SQLITE_BUSY after the busy timeout, so the same mapping.
absl::Status WriterQueueTimeoutStatus(absl::Duration waited, ErrorContext context);

// A transaction that SQLite rolled back on its own (after an I/O error, for example):
// continuing would run the next statements in autocommit mode, outside any claim.
absl::Status TransactionLostStatus(std::string_view what);

// Whether a connection that reported this code must be closed rather than pooled.
bool IsConnectionBroken(int extended_code);

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_ERRORS_H_
