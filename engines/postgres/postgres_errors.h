// Where libpqxx exceptions are sorted into the shared error classes; the one error table
// (engines/common/error_table.h) turns class and phase into the ledger's status. Every
// call into libpqxx in this engine runs inside GuardPostgres(), so no driver exception
// leaves the engine.
//
//   absl::StatusOr<int64_t> count = GuardPostgres(
//       {.operation = "count accounts"}, [&]() -> absl::StatusOr<int64_t> { ... });
//
// Internal to engines/postgres; no libpqxx type appears here. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_ERRORS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_ERRORS_H_

#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/common/error_table.h"

namespace ledger::postgres_internal {

struct PostgresErrorContext {
  std::string_view operation;  // what was being done, for the message: "lock accounts"
  engine_common::ErrorPhase phase = engine_common::ErrorPhase::kStandalone;
};

// Maps the exception being handled (call only inside a catch block) to a status: sorts
// it into a shared class and lets the one error table (engines/common/error_table.h)
// decide with the context's phase.
//
// | exception / SQLSTATE                        | class                              |
// |---------------------------------------------|------------------------------------|
// | in_doubt_error                              | connection lost, during COMMIT     |
// | broken_connection while connecting: the     | session refused                    |
// |   server's FATAL refusal (no such database, |                                    |
// |   role, password, CONNECT right), or libpq's|                                    |
// |   "no password supplied"                    |                                    |
// | broken_connection while connecting: any     | connection lost                    |
// |   other (refused, timeout, host, TLS, a     |                                    |
// |   server too busy or starting up)           |                                    |
// | broken_connection, failure without SQLSTATE,| connection lost                    |
// |   08xxx, 57P01..57P03                       |                                    |
// | transaction_rollback, 40xxx                 | deadlock / serialization           |
// | 55P03 lock_not_available                    | lock wait timeout                  |
// | 23505 unique_violation                      | unique violation                   |
// | 23503 foreign_key_violation                 | other: FailedPrecondition          |
// | 23502, 23514, 22xxx                         | other: InvalidArgument             |
// | 57014 query_canceled (statement_timeout)    | other: DeadlineExceeded            |
// | 53xxx insufficient resources                | other: Unavailable                 |
// | 42P01 undefined_table, 25P02 failed txn     | other: FailedPrecondition          |
// | anything else                               | other: Internal                    |
absl::Status StatusFromCurrentException(const PostgresErrorContext& context);

// The same sorting for what libpq reports without an exception (the pipelined commit,
// postgres_pipeline.h, talks to libpq past libpqxx): an error the server sent,
// with its SQLSTATE and message; and a failure libpq found itself (no SQLSTATE), which
// is a lost connection when `connection_lost` (libpq's status is bad) and "other"
// otherwise.
absl::Status StatusFromServerError(const PostgresErrorContext& context,
                                   const std::string& sql_state, const std::string& message);
absl::Status StatusFromLibpqFailure(const PostgresErrorContext& context, bool connection_lost,
                                    const std::string& message);

// The status of a round trip the reply deadline cut off (PostgresOptions::read_timeout):
// a lost connection, so Unavailable, or in doubt in the commit phase.
absl::Status NoReplyStatus(const PostgresErrorContext& context, absl::Duration read_timeout);

// True for statuses after which the connection must not be reused.
bool ConnectionLost(const absl::Status& status);

// Runs `body` (returning absl::Status or absl::StatusOr<T>), turning any exception it
// throws into a status through StatusFromCurrentException.
template <typename Body>
auto GuardPostgres(const PostgresErrorContext& context, Body&& body)
    -> std::invoke_result_t<Body&> {
  try {
    return body();
  } catch (...) {
    return StatusFromCurrentException(context);
  }
}

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_ERRORS_H_
