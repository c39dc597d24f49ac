#include "engines/postgres/postgres_errors.h"

#include <exception>
#include <string>

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

absl::Status ConnectionLostStatus(const PostgresErrorContext& context, const std::string& what) {
  if (context.phase == PostgresPhase::kCommit) {
    // COMMIT was sent; whether the server applied it is unknown. Only a resend with
    // the same key is safe: it replays if the commit happened, or commits once.
    return InDoubtError(Describe(context, absl::StrCat("connection lost during COMMIT, "
                                                       "result unknown: ",
                                                       what)));
  }
  // Before COMMIT: the server rolls back a transaction whose session ended.
  return absl::UnavailableError(Describe(context, absl::StrCat("connection lost: ", what)));
}

absl::Status StatusFromSqlState(const PostgresErrorContext& context, const std::string& state,
                                const std::string& what) {
  const std::string message = Describe(context, absl::StrCat("[", state, "] ", what));
  if (absl::StartsWith(state, "40")) return RetryableError(message);
  if (state == "55P03") {
    return context.phase == PostgresPhase::kClaim ? InProgressError(message)
                                                  : RetryableError(message);
  }
  if (state == "23505") {
    return context.unique_violation == UniqueViolationMeans::kRetryable
               ? RetryableError(message)
               : absl::AlreadyExistsError(message);
  }
  if (state == "23503") return absl::FailedPreconditionError(message);
  if (state == "23502" || state == "23514" || absl::StartsWith(state, "22")) {
    return absl::InvalidArgumentError(message);
  }
  if (state == "57014") return absl::DeadlineExceededError(message);
  if (absl::StartsWith(state, "08") || state == "57P01" || state == "57P02" || state == "57P03") {
    return ConnectionLostStatus(context, what);
  }
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

}  // namespace

absl::Status StatusFromCurrentException(const PostgresErrorContext& context) {
  try {
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    return InDoubtError(Describe(context, e.what()));
  } catch (const pqxx::broken_connection& e) {
    return ConnectionLostStatus(context, e.what());
  } catch (const pqxx::transaction_rollback& e) {
    // 40001 serialization failure, 40P01 deadlock, 40003, 40000: the server rolled back.
    return RetryableError(Describe(context, e.what()));
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate().empty()) return absl::InternalError(Describe(context, e.what()));
    return StatusFromSqlState(context, e.sqlstate(), e.what());
  } catch (const pqxx::usage_error& e) {
    return absl::InternalError(Describe(context, absl::StrCat("libpqxx usage: ", e.what())));
  } catch (const pqxx::failure& e) {
    // A failure without SQLSTATE: libpq could not talk to the server.
    return ConnectionLostStatus(context, e.what());
  } catch (const std::exception& e) {
    return absl::InternalError(Describe(context, e.what()));
  } catch (...) {
    return absl::InternalError(Describe(context, "unknown exception"));
  }
}

bool ConnectionLost(const absl::Status& status) {
  return absl::IsUnavailable(status) || IsInDoubt(status);
}

}  // namespace ledger::postgres_internal
