#include "base/status.h"

#include <exception>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace ledger {
namespace {

constexpr char kTagUrl[] = "type.ledger/error-tag";
constexpr char kStaleReadUrl[] = "type.ledger/stale-read";

std::string_view TagName(ErrorTag tag) {
  switch (tag) {
    case ErrorTag::kConflict: return "conflict";
    case ErrorTag::kDuplicate: return "duplicate";
    case ErrorTag::kInProgress: return "in_progress";
    case ErrorTag::kRetryable: return "retryable";
    case ErrorTag::kInDoubt: return "in_doubt";
    case ErrorTag::kInvariantViolated: return "invariant_violated";
    case ErrorTag::kNone: break;
  }
  return "";
}

absl::Status Tagged(absl::StatusCode code, std::string_view message, ErrorTag tag) {
  absl::Status status(code, std::string(message));
  status.SetPayload(kTagUrl, absl::Cord(std::string(TagName(tag))));
  return status;
}

}  // namespace

absl::Status ConflictError(std::string_view message) {
  return Tagged(absl::StatusCode::kAlreadyExists, message, ErrorTag::kConflict);
}
absl::Status DuplicateError(std::string_view message) {
  return Tagged(absl::StatusCode::kAlreadyExists, message, ErrorTag::kDuplicate);
}
absl::Status InProgressError(std::string_view message) {
  return Tagged(absl::StatusCode::kAborted, message, ErrorTag::kInProgress);
}
absl::Status RetryableError(std::string_view message) {
  return Tagged(absl::StatusCode::kAborted, message, ErrorTag::kRetryable);
}
absl::Status StaleReadError(std::string_view message) {
  absl::Status status = RetryableError(message);
  status.SetPayload(kStaleReadUrl, absl::Cord("stale_read"));
  return status;
}
bool IsStaleRead(const absl::Status& s) {
  return IsRetryable(s) && s.GetPayload(kStaleReadUrl).has_value();
}
absl::Status InDoubtError(std::string_view message) {
  return Tagged(absl::StatusCode::kUnknown, message, ErrorTag::kInDoubt);
}
absl::Status InvariantViolationError(std::string_view message) {
  return Tagged(absl::StatusCode::kInternal, message, ErrorTag::kInvariantViolated);
}

ErrorTag TagOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kTagUrl);
  if (!payload.has_value()) return ErrorTag::kNone;
  for (ErrorTag tag : {ErrorTag::kConflict, ErrorTag::kDuplicate, ErrorTag::kInProgress,
                       ErrorTag::kRetryable, ErrorTag::kInDoubt, ErrorTag::kInvariantViolated}) {
    if (*payload == std::string(TagName(tag))) return tag;
  }
  return ErrorTag::kNone;
}

namespace {

absl::Status WithMessage(const absl::Status& status, std::string message) {
  absl::Status changed(status.code(), message);
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    changed.SetPayload(url, payload);
  });
  return changed;
}

}  // namespace

absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  return WithMessage(status, absl::StrCat(View(context), ": ", status.message()));
}

absl::Status WithHint(const absl::Status& status, std::string_view hint) {
  if (status.ok()) return status;
  return WithMessage(status, absl::StrCat(status.message(), "; ", View(hint)));
}

absl::Status CurrentExceptionStatus(std::string_view who) {
  try {
    throw;
  } catch (const std::exception& exception) {
    return absl::InternalError(absl::StrCat(View(who), " threw: ", exception.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(View(who), " threw a non-standard exception"));
  }
}

}  // namespace ledger
