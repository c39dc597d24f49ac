// Where MySQL / MariaDB errors are sorted into the shared error classes; the one error
// table (engines/common/error_table.h) turns class and phase into the ledger's status.
// Connector/C++ 1.1 reports every failure as an exception (sql::SQLException: a server
// or client error number and an SQLSTATE); the engine catches them at the statement
// boundary (mysql_connection.cc), describes them as a MysqlError, and sorts that here
// with the context of what was running, which gives the table its phase.
//
// Internal to engines/mysql. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_ERRORS_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_ERRORS_H_

#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <cppconn/exception.h>

#include "absl/status/status.h"
#include "engines/common/error_table.h"

namespace ledger::mysql_internal {

// Server error numbers (mysqld_error.h / MariaDB's) and client ones (errmsg.h) that the
// engine handles by name. The driver headers are not included here on purpose.
inline constexpr int kErrorDuplicateKey = 1062;         // ER_DUP_ENTRY
inline constexpr int kErrorLockWaitTimeout = 1205;      // ER_LOCK_WAIT_TIMEOUT (also
                                                        // MariaDB's NOWAIT failure)
inline constexpr int kErrorDeadlock = 1213;             // ER_LOCK_DEADLOCK
inline constexpr int kErrorLockNowait = 3572;           // ER_LOCK_NOWAIT (MySQL 8)
inline constexpr int kErrorForeignKeyMissingParent = 1452;  // ER_NO_REFERENCED_ROW_2
// The engine's own, SIGNALled by its write procedure (schema/mysql/0008_write_procedure.sql).
inline constexpr int kErrorLockGuard = 45001;        // an account changed after its lock read
inline constexpr int kErrorHoldNotPending = 45002;   // a hold settled is no longer pending
// SIGNALled by the claim procedure (schema/mysql/0009_claim_lock_procedure.sql): an
// account's lock wait ran out after the claim succeeded. Its own number, so the engine
// maps it as LockAccounts' lock wait (retryable), not the claim's (in progress).
inline constexpr int kErrorAccountLockWait = 45003;

// Where a failing call ran (engines/common/error_table.h); decides how its error is
// mapped.
using engine_common::ErrorContext;

// A driver failure, copied out of the exception so no driver type leaves the catch.
struct MysqlError {
  int code = 0;            // server (1000..) or client (2000..) error number; 0: none
  std::string sql_state;   // five characters, "08S01" for a communication failure
  std::string message;
  bool driver_failure = false;  // not a server reply: a Connector or std exception
};

// Copies a driver exception, or any other exception a driver call let through.
MysqlError DescribeDriverException(const sql::SQLException& exception);
MysqlError DescribeOtherException(const std::exception& exception);

// Runs `call` (driver calls), turning whatever it throws into a MysqlError: every driver
// call of the engine goes through here, so no exception leaves engines/mysql.
template <typename Call>
std::optional<MysqlError> CatchDriverErrors(Call&& call) {
  try {
    call();
    return std::nullopt;
  } catch (const sql::SQLException& exception) {
    return DescribeDriverException(exception);
  } catch (const std::exception& exception) {
    return DescribeOtherException(exception);
  }
}

// True when the error means the session is gone or unusable (lost connection, killed,
// server shutdown): the connection must be discarded, never pooled again, and the
// server has rolled back (or is rolling back) whatever the transaction held.
bool IsConnectionLost(const MysqlError& error);

// True when the connection must not be reused after this error. Lost connections, and
// anything that is not a plain server reply: the session's state is then unknown.
bool BreaksConnection(const MysqlError& error);

// Maps a failure to a status: sorts it into a shared class and lets the one error table
// (engines/common/error_table.h) decide. `what` names the statement or step.
//
// | error                                                  | class                    |
// |--------------------------------------------------------|--------------------------|
// | 1213 deadlock (Galera: a certification conflict too),  | deadlock / serialization |
// |   1020 record changed, 45001 the write procedure's     |                          |
// |   lock guard                                           |                          |
// | 1205 lock wait timeout, 3572 NOWAIT, 45003 the claim   | lock wait timeout        |
// |   procedure's account lock (LockAccounts' phase)       |                          |
// | lost connection (2002, 2003, 2006, 2013, 2055, 2026    | connection lost          |
// |   TLS, 1927 killed, 1053 shutdown, 1317 interrupted,   |                          |
// |   4031, 1047 Galera node not ready, SQLSTATE 08); any  |                          |
// |   client error (2000..) in                             |                          |
// |   kConnect                                             |                          |
// | 1062 duplicate key                                     | unique violation         |
// | 1049 unknown database, 1045/1044 access denied         | session refused          |
// | a driver failure (no server reply)                     | other: Internal          |
// | 1451/1452 foreign key, 1146 no such table, 45002 a     | other: FailedPrecondition|
// |   hold no longer pending (the write procedure's)       |                          |
// | 1406 too long, 1366 bad string, 4035 not UTF-8 in the  | other: InvalidArgument   |
// |   write procedure's arrays, 1264 range, 1048 null,     |                          |
// |   3819/4025 CHECK                                      |                          |
// | 1040/1203 too many connections                         | other: Unavailable       |
// | 1969/3024 statement timeout                            | other: DeadlineExceeded  |
// | 1142 table access denied                               | other: PermissionDenied  |
// | anything else                                          | other: Internal          |
absl::Status MysqlErrorStatus(const MysqlError& error, std::string_view what,
                              ErrorContext context);

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_ERRORS_H_
