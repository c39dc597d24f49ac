// The one place where libpqxx exceptions become absl::Status values of the claim
// contract (base/status.h). Every call into libpqxx in this engine runs inside
// GuardPostgres(), so no driver exception leaves the engine.
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

namespace ledger::postgres_internal {

// Where in a transaction the failing call was: the same SQLSTATE means different things.
enum class PostgresPhase {
  kStatement,  // an ordinary statement (autocommit, or inside a transaction before COMMIT)
  kClaim,      // the claim round trip: a lock timeout (55P03) means "in progress"
  kCommit,     // COMMIT itself: a lost connection leaves the result unknown (in doubt)
};

// What a unique violation (23505) means for the failing call.
enum class UniqueViolationMeans {
  kAlreadyExists,  // an insert of a caller-chosen identity: the identity is taken
  kRetryable,      // a write whose inputs were checked under locks: a concurrent writer
                   // won a race the retry re-checks and rejects (reversal_of taken, ...)
};

struct PostgresErrorContext {
  std::string_view operation;  // what was being done, for the message: "lock accounts"
  PostgresPhase phase = PostgresPhase::kStatement;
  UniqueViolationMeans unique_violation = UniqueViolationMeans::kAlreadyExists;
};

// Maps the exception being handled (call only inside a catch block) to a status.
//
// | exception / SQLSTATE                        | status                                   |
// |---------------------------------------------|------------------------------------------|
// | in_doubt_error                              | InDoubtError                             |
// | broken_connection, 08xxx, 57P01..57P03      | Unavailable; InDoubtError during COMMIT  |
// | 40001 serialization, 40P01 deadlock, 40xxx  | RetryableError (the server rolled back)  |
// | 55P03 lock_not_available                    | InProgressError in the claim, else       |
// |                                             | RetryableError (a session lock_timeout)  |
// | 23505 unique_violation                      | per UniqueViolationMeans                 |
// | 23503 foreign_key_violation                 | FailedPrecondition                       |
// | 23502, 23514, 22xxx                         | InvalidArgument                          |
// | 57014 query_canceled (statement_timeout)    | DeadlineExceeded                         |
// | 53xxx insufficient resources                | Unavailable                              |
// | 42P01 undefined_table                       | FailedPrecondition (run the migrations)  |
// | anything else                               | Internal                                 |
absl::Status StatusFromCurrentException(const PostgresErrorContext& context);

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
