#include "server/problem.h"

#include <cctype>
#include <mutex>

#include "engines/common/database_url.h"

namespace ledger::server {
namespace {

// The served database's URL, whose password no problem detail may show.
std::mutex& HiddenUrlMutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& HiddenUrl() {
  static std::string url;
  return url;
}

// "insufficient_funds" -> "Insufficient funds".
std::string TitleFromReason(const std::string& reason) {
  std::string title = reason;
  for (char& c : title) {
    if (c == '_') c = ' ';
  }
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  return title;
}

}  // namespace

void HideDatabasePasswordInProblems(std::string_view database_url) {
  std::lock_guard<std::mutex> lock(HiddenUrlMutex());
  HiddenUrl() = std::string(database_url);
}

Problem ProblemFromStatus(const absl::Status& status) {
  std::string message;
  {
    std::lock_guard<std::mutex> lock(HiddenUrlMutex());
    message = std::string(RedactPasswordInStatus(status, HiddenUrl()).message());
  }
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return {.status = 400, .reason = "invalid_request", .detail = message};
    case absl::StatusCode::kNotFound:
      return {.status = 404, .reason = "not_found", .detail = message};
    case absl::StatusCode::kAlreadyExists:
      return {.status = 409, .reason = "already_exists", .detail = message};
    case absl::StatusCode::kFailedPrecondition:
      return {.status = 422, .reason = "failed_precondition", .detail = message};
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return {.status = 503, .reason = "unavailable", .detail = message};
    default:
      // The message may carry database internals; the log line has the status code.
      return {.status = 500, .reason = "internal", .detail = "internal error"};
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

void WriteProblem(httplib::Response& response, const Problem& problem) {
  response.status = problem.status;
  response.set_content(JsonText(ProblemJson(problem)), kProblemContentType);
}

void WriteJson(httplib::Response& response, int status, const nlohmann::json& json) {
  response.status = status;
  response.set_content(JsonText(json), kJsonContentType);
}

}  // namespace ledger::server
