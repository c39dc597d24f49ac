#include "engines/mysql/mysql_errors.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/error_table.h"

namespace ledger::mysql_internal {
namespace {

// Client library errors (errmsg.h), numbered from 2000.
constexpr int kClientConnectionError = 2002;    // CR_CONNECTION_ERROR
constexpr int kClientHostError = 2003;          // CR_CONN_HOST_ERROR
constexpr int kClientServerGone = 2006;         // CR_SERVER_GONE_ERROR
constexpr int kClientServerLost = 2013;         // CR_SERVER_LOST
constexpr int kClientServerLostExtended = 2055;  // CR_SERVER_LOST_EXTENDED
// A TLS failure: at connect a handshake or certificate check, later a broken TLS stream
// (a read timeout under TLS reports this, not 2013).
constexpr int kClientTlsError = 2026;           // CR_SSL_CONNECTION_ERROR
// Server errors that end the session.
constexpr int kServerShutdown = 1053;           // ER_SERVER_SHUTDOWN
constexpr int kQueryInterrupted = 1317;         // ER_QUERY_INTERRUPTED (MySQL KILL)
constexpr int kConnectionKilled = 1927;         // ER_CONNECTION_KILLED (MariaDB KILL)
constexpr int kClientInactive = 4031;           // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
// Galera: a node outside the primary component (cut off, frozen and evicted, joining)
// answers every statement with 1047 "WSREP has not yet prepared node for application
// use" (SQLSTATE 08S01): the session is of no use until the node rejoins, so it is a
// lost connection, Unavailable (in doubt during COMMIT), and the pool drops it. Named
// here so the rule does not hang on the SQLSTATE alone. A certification conflict (two
// nodes wrote the same rows; the later one loses at COMMIT, or is aborted by the
// replicated write) is 1213 ER_LOCK_DEADLOCK: the transaction is rolled back, so it is
// retryable in every phase, COMMIT included, and the ledger runs the submit again.
constexpr int kWsrepNotReady = 1047;            // ER_UNKNOWN_COM_ERROR
// Server errors mapped by meaning.
constexpr int kRecordChanged = 1020;            // ER_CHECKREAD: a snapshot conflict
constexpr int kForeignKeyChildExists = 1451;    // ER_ROW_IS_REFERENCED_2
constexpr int kDataTooLong = 1406;              // ER_DATA_TOO_LONG
constexpr int kIncorrectString = 1366;          // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
// MariaDB's "Broken JSON string in argument N to function 'JSON_TABLE'": the write
// procedure's arrays hold a string that is not UTF-8 (the bytes 1366 refuses in a
// text column when bound as a parameter).
constexpr int kBrokenJsonString = 4035;
constexpr int kOutOfRange = 1264;               // ER_WARN_DATA_OUT_OF_RANGE
constexpr int kColumnNotNull = 1048;            // ER_BAD_NULL_ERROR
constexpr int kCheckViolatedMysql = 3819;       // ER_CHECK_CONSTRAINT_VIOLATED
constexpr int kCheckViolatedMariadb = 4025;     // ER_CONSTRAINT_FAILED
constexpr int kTooManyConnections = 1040;       // ER_CON_COUNT_ERROR
constexpr int kUserTooManyConnections = 1203;   // ER_TOO_MANY_USER_CONNECTIONS
constexpr int kDatabaseAccessDenied = 1044;     // ER_DBACCESS_DENIED_ERROR
constexpr int kAccessDenied = 1045;             // ER_ACCESS_DENIED_ERROR
constexpr int kTableAccessDenied = 1142;        // ER_TABLEACCESS_DENIED_ERROR
constexpr int kUnknownDatabase = 1049;          // ER_BAD_DB_ERROR
constexpr int kNoSuchTable = 1146;              // ER_NO_SUCH_TABLE
constexpr int kStatementTimeoutMariadb = 1969;  // ER_STATEMENT_TIMEOUT (max_statement_time)
constexpr int kStatementTimeoutMysql = 3024;    // ER_QUERY_TIMEOUT (max_execution_time)

std::string Describe(const MysqlError& error, std::string_view what) {
  if (error.driver_failure && error.code == 0) {
    return absl::StrCat("mysql: ", View(what), ": ", error.message);
  }
  return absl::StrCat("mysql: ", View(what), ": ", error.message, " (error ", error.code,
                      ", SQLSTATE ", error.sql_state, ")");
}

// The client library's own errors (errmsg.h) are numbered 2000..2999.
bool IsClientError(const MysqlError& error) { return error.code >= 2000 && error.code < 3000; }

bool IsLockWaitTimeout(int code) {
  return code == kErrorLockWaitTimeout || code == kErrorLockNowait ||
         code == kErrorAccountLockWait;
}

// A CR_SSL_CONNECTION_ERROR that says the TLS asked for cannot be had, by the client
// library's texts (MariaDB Connector/C 3.3) and the engine's own check of the session.
bool IsTlsRefusal(const MysqlError& error) {
  if (error.code != kClientTlsError) return false;
  for (absl::string_view refusal : {"does not support", "not encrypted", "certificate",
                                    "Certificate", "hostname", "host name"}) {
    if (absl::StrContains(error.message, refusal)) return true;
  }
  return false;
}

engine_common::ErrorClass ClassOf(const MysqlError& error, ErrorContext context) {
  if (error.code == kErrorDeadlock || error.code == kRecordChanged ||
      error.code == kErrorLockGuard) {
    return engine_common::ErrorClass::kDeadlockOrSerialization;  // InnoDB rolled back, or
                                                                  // the rerun must read again
  }
  if (IsLockWaitTimeout(error.code)) return engine_common::ErrorClass::kLockWaitTimeout;
  // Connecting with TLS that the URL asks for and the server cannot give (no TLS, a
  // certificate the CA does not sign, another host name): the setup must change, so
  // trying again is no use and would send the login to that server again. The same
  // code also reports a TLS read cut off by a timeout, which stays connection lost.
  if (context == ErrorContext::kConnect && IsTlsRefusal(error)) {
    return engine_common::ErrorClass::kSessionRefused;
  }
  // Connecting: an unknown host, a refused or timed-out connection are all transient
  // from the caller's point of view.
  if (IsConnectionLost(error) || (context == ErrorContext::kConnect && IsClientError(error))) {
    return engine_common::ErrorClass::kConnectionLost;
  }
  if (error.code == kErrorDuplicateKey) return engine_common::ErrorClass::kUniqueViolation;
  // The server answered and refused the session: no such database, a wrong user or
  // password, no right to the database. Apart from an unreachable server on purpose.
  if (error.code == kUnknownDatabase || error.code == kAccessDenied ||
      error.code == kDatabaseAccessDenied) {
    return engine_common::ErrorClass::kSessionRefused;
  }
  return engine_common::ErrorClass::kOther;
}

// The status of an error of class "other": its own meaning, whatever the phase.
absl::Status OwnStatus(const MysqlError& error, const std::string& text) {
  if (error.driver_failure) return absl::InternalError(text);
  switch (error.code) {
    case kErrorForeignKeyMissingParent:
    case kForeignKeyChildExists:
    case kNoSuchTable:
    case kErrorHoldNotPending:
      return absl::FailedPreconditionError(text);
    case kDataTooLong:
    case kIncorrectString:
    case kBrokenJsonString:
    case kOutOfRange:
    case kColumnNotNull:
    case kCheckViolatedMysql:
    case kCheckViolatedMariadb:
      return absl::InvalidArgumentError(text);
    case kTooManyConnections:
    case kUserTooManyConnections:
      return absl::UnavailableError(text);
    case kStatementTimeoutMariadb:
    case kStatementTimeoutMysql:
      return absl::DeadlineExceededError(text);
    case kTableAccessDenied:
      return absl::PermissionDeniedError(text);
    default:
      return absl::InternalError(text);
  }
}

}  // namespace

MysqlError DescribeDriverException(const sql::SQLException& exception) {
  MysqlError error;
  error.code = exception.getErrorCode();
  error.sql_state = exception.getSQLState();
  error.message = exception.what();
  // Connector/C++ raises its own checks (a closed connection, a bad argument) as
  // SQLException with error number 0: not a server reply.
  error.driver_failure = error.code == 0;
  return error;
}

MysqlError DescribeOtherException(const std::exception& exception) {
  MysqlError error;
  error.message = exception.what();
  error.driver_failure = true;
  return error;
}

bool IsConnectionLost(const MysqlError& error) {
  switch (error.code) {
    case kClientConnectionError:
    case kClientHostError:
    case kClientServerGone:
    case kClientServerLost:
    case kClientServerLostExtended:
    case kClientTlsError:
    case kServerShutdown:
    case kQueryInterrupted:
    case kConnectionKilled:
    case kClientInactive:
    case kWsrepNotReady:
      return true;
    default:
      // SQLSTATE class 08 is "connection exception" whatever the number.
      return absl::StartsWith(error.sql_state, "08");
  }
}

bool BreaksConnection(const MysqlError& error) {
  return IsConnectionLost(error) || error.driver_failure;
}

absl::Status MysqlErrorStatus(const MysqlError& error, std::string_view what,
                              ErrorContext context) {
  const std::string text = Describe(error, what);
  return engine_common::StatusForError(ClassOf(error, context), engine_common::PhaseOf(context), text,
                                       OwnStatus(error, text));
}

}  // namespace ledger::mysql_internal
