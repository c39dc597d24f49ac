// Where SQLite result codes are sorted into the shared error classes; the one error
// table (engines/common/error_table.h) turns class and phase into the ledger's status.
// Every failing sqlite3_* call in this engine comes here with the context of what was
// running, which gives the table its phase: SQLITE_BUSY while beginning a submit is
// "another writer holds the database" (in progress), elsewhere a retryable conflict.
//
// Internal to engines/sqlite. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_ERRORS_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_ERRORS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engines/common/error_table.h"

namespace ledger::sqlite_internal {

// Where a failing call ran (engines/common/error_table.h); decides how its result code
// is mapped. kClaim is BEGIN IMMEDIATE of a submit: the writer lock is the key's claim;
// kConnect is opening a connection and setting its pragmas.
using engine_common::ErrorContext;

// Maps a failing SQLite result (an extended result code) to a status: sorts the code
// into a shared class and lets the one error table (engines/common/error_table.h)
// decide. `message` is sqlite3_errmsg's text; `what` names the statement or step.
//
// | result code                        | class                        |
// |------------------------------------|------------------------------|
// | BUSY, LOCKED                       | lock wait timeout            |
// | SCHEMA                             | deadlock / serialization     |
// | CONSTRAINT_PRIMARYKEY, _UNIQUE, _ROWID | unique violation         |
// | other CONSTRAINT: FOREIGNKEY       | other: FailedPrecondition    |
// |   check, not null, ...             | other: InvalidArgument       |
// | CANTOPEN while opening the file    | session refused              |
// | IOERR, FULL, CANTOPEN (later)      | other: Unavailable           |
// | CORRUPT, NOTADB                    | other: DataLoss              |
// | READONLY, PERM, AUTH               | other: PermissionDenied      |
// | NOMEM                              | other: ResourceExhausted     |
// | INTERRUPT                          | other: Cancelled             |
// | TOOBIG, RANGE, MISMATCH            | other: InvalidArgument       |
// | anything else (MISUSE, ...)        | other: Internal              |
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
