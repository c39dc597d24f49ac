// RFC 9457 problem details: every error the server sends is application/problem+json
//
//   {"type":"urn:ledger:problem:insufficient_funds","title":"Insufficient funds",
//    "status":402,"detail":"account alice ...","reason":"insufficient_funds"}
//
// `reason` is the machine-readable code (the same words as the library's rejection
// reasons and docs/http.md's status table); `type` is one URN per reason.
//
// Thread-safe: ProblemFromStatus may run on any thread, also while
// HideDatabasePasswordInProblems runs (a mutex orders them).
#ifndef LEDGER_SERVER_PROBLEM_H_
#define LEDGER_SERVER_PROBLEM_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace ledger::server {

inline constexpr char kProblemContentType[] = "application/problem+json";
inline constexpr char kJsonContentType[] = "application/json";

struct Problem {
  int status = 500;
  std::string reason;  // machine-readable, snake_case
  std::string detail;  // this occurrence, in words
  nlohmann::json extensions = nlohmann::json::object();  // extra members (in_doubt, ...)
};

// The problem for a library error that is not a submit outcome: InvalidArgument 400,
// NotFound 404, AlreadyExists 409, FailedPrecondition 422, Unavailable 503, else 500.
// The message becomes the detail, the served database's password hidden in it; an
// internal error's message is not shown.
Problem ProblemFromStatus(const absl::Status& status);

// From now on ProblemFromStatus hides `database_url`'s password (as written and
// percent-decoded, engines/common/database_url.h) in every detail: a driver's message
// may echo connection details, and none may reach a response body. Serve calls it once
// with its --db before it opens the database.
void HideDatabasePasswordInProblems(std::string_view database_url);

// The problem's JSON body: its extensions plus type, title, status, detail and reason.
nlohmann::json ProblemJson(const Problem& problem);

// Writes the problem as the response body with its status and content type.
void WriteProblem(httplib::Response& response, const Problem& problem);

// Writes `json` as a compact application/json body with `status`.
void WriteJson(httplib::Response& response, int status, const nlohmann::json& json);

// Compact, deterministic JSON text (keys sorted; invalid UTF-8 replaced, never thrown).
std::string JsonText(const nlohmann::json& json);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_PROBLEM_H_
