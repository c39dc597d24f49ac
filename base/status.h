// The project's status plumbing, the bottom layer: the error vocabulary shared by every
// layer and engine (tags with predicates), the return macros and the string_view bridge.
//
// Public functions return absl::Status / absl::StatusOr. Beyond the canonical code,
// a status that the submit path must treat specially carries a tag (a payload) so
// callers test it with a predicate instead of guessing from the code:
//
//   absl::Status s = ...;
//   if (ledger::IsRetryable(s)) { /* safe: the database rolled back */ }
//
// | tag          | code             | meaning                                           |
// |--------------|------------------|---------------------------------------------------|
// | conflict     | AlreadyExists    | same key and scope, different fingerprint         |
// | duplicate    | AlreadyExists    | key already committed and the replay policy is error |
// | in_progress  | Aborted          | the first attempt with this key still runs        |
// | retryable    | Aborted          | deadlock / serialization failure; rolled back     |
// |  + stale_read | Aborted         | retryable, and what failed was an engine's guess: |
// |              |                  | rows it remembered had changed (IsStaleRead)      |
// | in_doubt     | Unknown          | COMMIT sent, result unknown: resend the same key  |
// | invariant_violated | Internal   | a submit's plan broke conservation, version or floor |
// |              |                  | invariants (a bug): nothing written, not retried  |
//
// Thread-safe: free functions over values.
#ifndef LEDGER_BASE_STATUS_H_
#define LEDGER_BASE_STATUS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ledger {

enum class ErrorTag {
  kNone,
  kConflict,
  kDuplicate,
  kInProgress,
  kRetryable,
  kInDoubt,
  kInvariantViolated,
};

absl::Status ConflictError(std::string_view message);
absl::Status DuplicateError(std::string_view message);
absl::Status InProgressError(std::string_view message);
absl::Status RetryableError(std::string_view message);
// A RetryableError (IsRetryable holds) that also says the attempt was decided on rows an
// engine remembered instead of reading them (BeginOptions::use_remembered_rows), and
// they had changed: nothing was written, and a rerun that reads them is no fault.
absl::Status StaleReadError(std::string_view message);
absl::Status InDoubtError(std::string_view message);
absl::Status InvariantViolationError(std::string_view message);

ErrorTag TagOf(const absl::Status& status);
inline bool IsConflict(const absl::Status& s) { return TagOf(s) == ErrorTag::kConflict; }
inline bool IsDuplicate(const absl::Status& s) { return TagOf(s) == ErrorTag::kDuplicate; }
inline bool IsInProgress(const absl::Status& s) { return TagOf(s) == ErrorTag::kInProgress; }
inline bool IsRetryable(const absl::Status& s) { return TagOf(s) == ErrorTag::kRetryable; }
inline bool IsInDoubt(const absl::Status& s) { return TagOf(s) == ErrorTag::kInDoubt; }
bool IsStaleRead(const absl::Status& s);
inline bool IsInvariantViolation(const absl::Status& s) {
  return TagOf(s) == ErrorTag::kInvariantViolated;
}

// Debian's abseil 20220623 has its own absl::string_view, which std::string_view does
// not convert to implicitly (absl::StrCat, absl::Status messages). This bridges them.
inline absl::string_view View(std::string_view text) { return {text.data(), text.size()}; }

// Prefixes the message with context, keeping code and tag.
absl::Status Annotate(const absl::Status& status, std::string_view context);
// Appends `hint` to the message (what to do about it), keeping code and tag.
absl::Status WithHint(const absl::Status& status, std::string_view hint);

// For a catch (...) block: Internal "<who> threw: <what()>" for the exception in flight.
absl::Status CurrentExceptionStatus(std::string_view who);

// Calls a caller's callback (returning Status or StatusOr) so that an exception it
// throws comes back as CurrentExceptionStatus(who) and never crosses our boundary.
template <typename Callback>
auto CallCatchingExceptions(std::string_view who, const Callback& callback)
    -> decltype(callback()) {
  try {
    return callback();
  } catch (...) {
    return CurrentExceptionStatus(who);
  }
}

}  // namespace ledger

// Debian's abseil 20220623 ships no RETURN_IF_ERROR; these are the project's own.
#define LEDGER_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status ledger_status_ = (expr);          \
    if (!ledger_status_.ok()) return ledger_status_; \
  } while (0)

#define LEDGER_CONCAT_INNER_(a, b) a##b
#define LEDGER_CONCAT_(a, b) LEDGER_CONCAT_INNER_(a, b)
#define LEDGER_ASSIGN_OR_RETURN(lhs, expr) \
  LEDGER_ASSIGN_OR_RETURN_IMPL_(LEDGER_CONCAT_(ledger_statusor_, __LINE__), lhs, expr)
#define LEDGER_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // LEDGER_BASE_STATUS_H_
