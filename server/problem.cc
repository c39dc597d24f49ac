#include "server/problem.h"

#include <cctype>
#include <optional>
#include <utility>

#include "base/check.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "ledger/outcome.h"

namespace ledger::server {
namespace {

// "insufficient_funds" -> "Insufficient funds".
std::string TitleFromReason(const std::string& reason) {
  std::string title = reason;
  for (char& c : title) {
    if (c == '_') c = ' ';
  }
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  return title;
}

std::vector<ProblemKind> BuildProblemKinds() {
  std::vector<ProblemKind> kinds = {
      {"invalid_request", 400},
      {"invalid_filter", 400},
      {"idempotency_key_invalid", 400},
      {"invalid_operation", 400},
      {"invalid_batch", 400},
      {"batch_too_large", 400},
      {"malformed_request", 400},
      {"unauthenticated", 401},
  };
  // Every business rejection is a 402 named after its reason, the library's last
  // reason (kBatchItemFailed) included.
  for (int reason = 0; reason <= static_cast<int>(RejectionReason::kBatchItemFailed); ++reason) {
    kinds.push_back({RejectionReasonName(static_cast<RejectionReason>(reason)), 402});
  }
  kinds.insert(kinds.end(), {
      {"forbidden", 403},
      {"not_found", 404},
      {"route_not_found", 404},
      {"method_not_allowed", 405},
      {"already_exists", 409},
      {"idempotency_key_in_progress", 409, /*retry_after=*/true},
      {"length_required", 411},
      {"payload_too_large", 413},
      {"unsupported_media_type", 415},
      {"failed_precondition", 422},
      {"idempotency_key_reused", 422},
      {"too_many_requests", 429, /*retry_after=*/true},
      {"request_header_fields_too_large", 431},
      {"internal", 500},
      {"unavailable", 503, /*retry_after=*/true},
      {"faulted", 503, /*retry_after=*/true},
      {"in_doubt", 503, /*retry_after=*/true},
      {"not_ready", 503, /*retry_after=*/true},
  });
  return kinds;
}

// The problem for an error tag of base/status.h, or nullopt for an untagged status.
// `message`: the status's message with the database password hidden.
std::optional<Problem> ProblemFromTag(const absl::Status& status, const std::string& message) {
  switch (TagOf(status)) {
    case ErrorTag::kConflict:
      return MakeProblem("idempotency_key_reused", "this Idempotency-Key was used with another payload");
    case ErrorTag::kInProgress:
      return MakeProblem("idempotency_key_in_progress",
                         "a request with this Idempotency-Key is still running; retry");
    case ErrorTag::kDuplicate:
      return MakeProblem("already_exists", message);
    case ErrorTag::kRetryable:
      return MakeProblem("unavailable",
                         "the database rolled the work back (a deadlock or serialization "
                         "failure); nothing was written; retry");
    case ErrorTag::kInDoubt:
      return MakeProblem("in_doubt",
                         "the commit's result is unknown: it may have committed; check before "
                         "you retry",
                         {{"in_doubt", true}});
    case ErrorTag::kInvariantViolated:
    case ErrorTag::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<ProblemKind>& ProblemKinds() {
  static const std::vector<ProblemKind>* const kinds = new std::vector<ProblemKind>(BuildProblemKinds());
  return *kinds;
}

const ProblemKind& ProblemKindFor(std::string_view reason) {
  for (const ProblemKind& kind : ProblemKinds()) {
    if (kind.reason == reason) return kind;
  }
  LEDGER_CHECK(false) << "the reason \"" << reason << "\" is not in the problem table";
  return ProblemKinds().front();
}

Problem MakeProblem(std::string_view reason, std::string detail, nlohmann::json extensions) {
  const ProblemKind& kind = ProblemKindFor(reason);
  return {.status = kind.status, .reason = std::string(kind.reason), .detail = std::move(detail),
          .extensions = std::move(extensions)};
}

Problem ProblemFromStatus(const absl::Status& status) {
  std::string message(WithoutHiddenPassword(status).message());
  if (std::optional<Problem> tagged = ProblemFromTag(status, message)) return *std::move(tagged);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return MakeProblem("invalid_request", std::move(message));
    case absl::StatusCode::kNotFound:
      return MakeProblem("not_found", std::move(message));
    case absl::StatusCode::kAlreadyExists:
      return MakeProblem("already_exists", std::move(message));
    case absl::StatusCode::kFailedPrecondition:
      return MakeProblem("failed_precondition", std::move(message));
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kResourceExhausted:
      return MakeProblem("unavailable", std::move(message));
    default:
      // The message may carry database internals; the log line has the status code.
      return MakeProblem("internal", "internal error");
  }
}

std::string JsonText(const nlohmann::json& json) {
  return json.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json ProblemJson(const Problem& problem) {
  nlohmann::json body = problem.extensions;
  body["type"] = "urn:ledger:problem:" + problem.reason;
  body["title"] = TitleFromReason(problem.reason);
  body["status"] = problem.status;
  body["detail"] = problem.detail;
  body["reason"] = problem.reason;
  return body;
}

void WriteProblem(HttpResponse& response, const Problem& problem) {
  if (ProblemKindFor(problem.reason).retry_after) response.set_header("Retry-After", "1");
  response.status = problem.status;
  response.set_content(JsonText(ProblemJson(problem)), kProblemContentType);
}

void WriteJson(HttpResponse& response, int status, const nlohmann::json& json) {
  response.status = status;
  response.set_content(JsonText(json), kJsonContentType);
}

}  // namespace ledger::server
