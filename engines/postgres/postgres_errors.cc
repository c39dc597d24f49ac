#include "engines/postgres/postgres_errors.h"

#include <exception>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "pqxx/except"

namespace ledger::postgres_internal {
namespace {

std::string Describe(const PostgresErrorContext& context, const std::string& what) {
  // libpq messages end in a newline; keep the status message on one line.
  std::string message = absl::StrCat("postgres: ", std::string(context.operation), ": ", what);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  return message;
}

using engine_common::ErrorClass;

absl::Status ForClass(const PostgresErrorContext& context, ErrorClass error_class,
                      const std::string& message, absl::Status own_status = absl::OkStatus()) {
  return engine_common::StatusForError(error_class, context.phase, message,
                                       std::move(own_status));
}

ErrorClass ClassOfSqlState(const std::string& state) {
  if (absl::StartsWith(state, "40")) return ErrorClass::kDeadlockOrSerialization;
  if (state == "55P03") return ErrorClass::kLockWaitTimeout;
  if (state == "23505") return ErrorClass::kUniqueViolation;
  if (absl::StartsWith(state, "08") || state == "57P01" || state == "57P02" || state == "57P03") {
    return ErrorClass::kConnectionLost;
  }
  return ErrorClass::kOther;
}

// The status of a SQLSTATE of class "other": its own meaning, whatever the phase.
absl::Status OwnStatus(const std::string& state, const std::string& message) {
  if (state == "23503") return absl::FailedPreconditionError(message);
  if (state == "23502" || state == "23514" || absl::StartsWith(state, "22")) {
    return absl::InvalidArgumentError(message);
  }
  if (state == "57014") return absl::DeadlineExceededError(message);
  if (absl::StartsWith(state, "53")) return absl::UnavailableError(message);
  if (state == "42P01") {
    return absl::FailedPreconditionError(
        absl::StrCat(message, " (is the schema migrated? run `ledger migrate`)"));
  }
  if (state == "25P02") {
    return absl::FailedPreconditionError(
        absl::StrCat(message, " (the transaction failed earlier; roll it back)"));
  }
  return absl::InternalError(message);
}

// What to do about an error whose message alone does not say it.
std::string HintFor(const PostgresErrorContext& context, const std::string& state) {
  if (state == "53200" && context.phase == engine_common::ErrorPhase::kClaim) {
    // The lock table is shared by every session: its size is max_locks_per_transaction
    // times (max_connections + max_prepared_transactions).
    return " (every key of a batch holds an advisory lock until commit and the server's "
           "lock table is full: submit smaller batches, raise max_locks_per_transaction, "
           "or use claim=row)";
  }
  return "";
}

absl::Status StatusFromSqlState(const PostgresErrorContext& context, const std::string& state,
                                const std::string& what) {
  const std::string message =
      Describe(context, absl::StrCat("[", state, "] ", what, HintFor(context, state)));
  return ForClass(context, ClassOfSqlState(state), message, OwnStatus(state, message));
}

// The class of a connection attempt that failed. libpq gives no SQLSTATE for it (the
// server's ErrorResponse during startup reaches the caller only as text, and libpqxx 6
// connects before any verbosity can be set), so its message is read: the server's own
// refusal carries its severity "FATAL:", libpq's reports (refused, unknown host, timeout,
// TLS) do not. Among the server's refusals only a busy or starting server is worth
// another try; a missing database, role or password and no right to connect are not.
// The server's texts are its English ones (lc_messages C or en, as initdb --no-locale
// leaves it); a translated refusal is read as unreachable, the retryable answer.
ErrorClass ClassOfFailedConnect(absl::string_view what) {
  // libpq itself: the server asked for a password and the URL has none.
  if (absl::StrContains(what, "no password supplied")) return ErrorClass::kSessionRefused;
  // libpq refused TLS that the URL's sslmode asks for: the setup must change, so trying
  // again is no use and would only knock on that server again.
  constexpr absl::string_view kTlsRefusals[] = {
      "server does not support SSL",  // sslmode=require and above, a server without TLS
      "certificate verify failed",    // verify-ca, verify-full: another CA signed it
      "does not match host name",     // verify-full: the certificate names another host
      "root certificate file",        // verify-ca, verify-full: sslrootcert missing
  };
  for (absl::string_view refusal : kTlsRefusals) {
    if (absl::StrContains(what, refusal)) return ErrorClass::kSessionRefused;
  }
  if (!absl::StrContains(what, "FATAL:")) return ErrorClass::kConnectionLost;
  constexpr absl::string_view kServerBusy[] = {
      "too many clients",               // 53300
      "connection slots are reserved",  // 53300
      "too many connections for",       // 53300 (a role's or a database's limit)
      "the database system is",         // 57P03: starting up, shutting down, in recovery
      "administrator command",          // 57P01
  };
  for (absl::string_view busy : kServerBusy) {
    if (absl::StrContains(what, busy)) return ErrorClass::kConnectionLost;
  }
  // 3D000 no such database, 28P01 / 28000 a wrong password or role or no pg_hba.conf
  // entry, 42501 no CONNECT privilege, 55000 a database not accepting connections.
  return ErrorClass::kSessionRefused;
}

}  // namespace

absl::Status StatusFromCurrentException(const PostgresErrorContext& context) {
  try {
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    // libpqxx's own verdict on a COMMIT it sent: whatever the phase, it was a COMMIT.
    PostgresErrorContext commit = context;
    commit.phase = engine_common::ErrorPhase::kCommit;
    return ForClass(commit, ErrorClass::kConnectionLost, Describe(context, e.what()));
  } catch (const pqxx::broken_connection& e) {
    // While connecting there was no connection to lose: the server could not be reached
    // (Unavailable) or it refused the session (PermissionDenied).
    if (context.operation == "connect") {
      return ForClass(context, ClassOfFailedConnect(e.what()), Describe(context, e.what()));
    }
    return ForClass(context, ErrorClass::kConnectionLost,
                    Describe(context, absl::StrCat("connection lost: ", e.what())));
  } catch (const pqxx::transaction_rollback& e) {
    // 40001 serialization failure, 40P01 deadlock, 40003, 40000: the server rolled back.
    return ForClass(context, ErrorClass::kDeadlockOrSerialization, Describe(context, e.what()));
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate().empty()) return ForClass(context, ErrorClass::kOther, Describe(context, e.what()));
    return StatusFromSqlState(context, e.sqlstate(), e.what());
  } catch (const pqxx::usage_error& e) {
    return ForClass(context, ErrorClass::kOther,
                    Describe(context, absl::StrCat("libpqxx usage: ", e.what())));
  } catch (const pqxx::failure& e) {
    // A failure without SQLSTATE: libpq could not talk to the server.
    return ForClass(context, ErrorClass::kConnectionLost,
                    Describe(context, absl::StrCat("connection lost: ", e.what())));
  } catch (const std::exception& e) {
    return ForClass(context, ErrorClass::kOther, Describe(context, e.what()));
  } catch (...) {
    return ForClass(context, ErrorClass::kOther, Describe(context, "unknown exception"));
  }
}

absl::Status StatusFromServerError(const PostgresErrorContext& context,
                                   const std::string& sql_state, const std::string& message) {
  if (sql_state.empty()) return ForClass(context, ErrorClass::kOther, Describe(context, message));
  return StatusFromSqlState(context, sql_state, message);
}

absl::Status StatusFromLibpqFailure(const PostgresErrorContext& context, bool connection_lost,
                                    const std::string& message) {
  if (connection_lost) {
    return ForClass(context, ErrorClass::kConnectionLost,
                    Describe(context, absl::StrCat("connection lost: ", message)));
  }
  return ForClass(context, ErrorClass::kOther,
                  Describe(context, absl::StrCat("libpq: ", message)));
}

absl::Status NoReplyStatus(const PostgresErrorContext& context, absl::Duration read_timeout) {
  return ForClass(context, ErrorClass::kConnectionLost,
                  Describe(context, absl::StrCat("no reply from the server within read_timeout (",
                                                 absl::FormatDuration(read_timeout),
                                                 "); the connection was closed")));
}

bool ConnectionLost(const absl::Status& status) {
  return absl::IsUnavailable(status) || IsInDoubt(status);
}

}  // namespace ledger::postgres_internal
