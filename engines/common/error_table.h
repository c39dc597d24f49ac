// The one owner of what a database error means to the ledger. Each SQL engine sorts its
// native codes (SQLSTATE, MySQL error numbers, SQLite result codes) into an ErrorClass
// in its *_errors.cc; this table alone turns (class, phase) into the status and tag of
// base/status.h, so the same situation gets the same answer on every engine.
// docs/engines/errors.md explains each cell.
//
// | class \ phase            | claim        | lock accounts | write      | commit     | write+commit | standalone    |
// |--------------------------|--------------|---------------|------------|------------|--------------|---------------|
// | unique violation         | AlreadyExists| retryable     | retryable  | retryable  | retryable    | AlreadyExists |
// | deadlock / serialization | retryable    | retryable     | retryable  | retryable  | retryable    | retryable     |
// | lock wait timeout        | in_progress  | retryable     | retryable  | retryable  | retryable    | retryable     |
// | connection lost          | Unavailable  | Unavailable   | Unavailable| in_doubt   | in_doubt     | Unavailable   |
// | session refused          | PermDenied   | PermDenied    | PermDenied | in_doubt   | in_doubt     | PermDenied    |
// | other                    | engine's own | engine's own  | engine's own| in_doubt  | (*)          | engine's own  |
//
// (*) write+commit is one call that writes and then commits (MySQL's committing CALL of
// its write procedure): an error only a statement raises (the engine's own
// InvalidArgument or FailedPrecondition: a CHECK, a length, a foreign key) stopped it
// before COMMIT and keeps its meaning; anything else may have come from COMMIT: in_doubt.
//
// "engine's own": a code with a meaning of its own (a foreign key: FailedPrecondition,
// a CHECK: InvalidArgument, a missing table, access denied, ...) keeps the status the
// engine gives it; anything it does not know is Internal. PermDenied: PermissionDenied
// (only a connect meets it; the `ledger` tool's exit 10, where Unavailable is 6).
//
// Internal to engines/. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_COMMON_ERROR_TABLE_H_
#define LEDGER_ENGINES_COMMON_ERROR_TABLE_H_

#include <string_view>

#include "absl/status/status.h"

namespace ledger::engine_common {

enum class ErrorClass {
  kUniqueViolation,          // a unique or primary key already holds the value
  kDeadlockOrSerialization,  // the server rolled the transaction back to break a cycle
  kLockWaitTimeout,          // a row or database lock was not granted in time
  kConnectionLost,           // the session is gone or cannot be had (killed, server down,
                             // refused or timed-out connect, network): try again later
  kSessionRefused,           // the server (or the file) answered and refused this session:
                             // no such database, a wrong user or password, no right to it.
                             // Trying again changes nothing: the URL or the server must
                             // change first.
  kOther,                    // anything else: the engine's own status applies
};

// Where the failing call ran.
enum class ErrorPhase {
  kClaim,         // the claim of the submit's key (its wait is the caller's wait bound)
  kLockAccounts,  // any other read or lock inside the submit before its writes
  kWrite,         // the submit's inserts and updates (transaction, entries, key, events)
  kCommit,        // COMMIT of the submit: once sent, its result may be unknown
  kWriteAndCommit,  // one call that writes, then commits (the table's (*))
  kStandalone,    // anything outside a submit: reads, administration, stores, migrations
};

// Where a failing statement ran, as the SQLite and MySQL connections tag their calls:
// the phases above, with connecting told apart from the rest of "standalone" (a client
// error while connecting means the server cannot be reached).
enum class ErrorContext {
  kConnect,      // opening a connection and setting up its session
  kClaim,        // the statements of ClaimKey: lock waits there are the key's holder
  kTransaction,  // any other read or lock inside a submit's transaction
  kWrite,        // the inserts and updates of a submit (transaction, entries, key, events)
  kCommit,       // COMMIT of a submit: its result may be unknown
  kWriteAndCommit,  // a submit's last writes and its COMMIT in one call
  kStandalone,   // reads, account administration, work claims, webhooks, migrations
};

// The table's phase for a context (connecting is standalone).
ErrorPhase PhaseOf(ErrorContext context);

// The status for an error of `error_class` in `phase`, with `message` (already naming
// the engine and the step). `own_status` is the engine's status for a kOther error
// (ignored for the other classes and during COMMIT); Internal when it is OK.
absl::Status StatusForError(ErrorClass error_class, ErrorPhase phase, std::string_view message,
                            absl::Status own_status = absl::OkStatus());

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_ERROR_TABLE_H_
