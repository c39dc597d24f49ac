// RFC 9457 problem details: every error the server sends is application/problem+json
//
//   {"type":"urn:ledger:problem:insufficient_funds","title":"Insufficient funds",
//    "status":402,"detail":"account alice ...","reason":"insufficient_funds"}
//
// `reason` is the machine-readable code (the same words as the library's rejection
// reasons and docs/http.md's status table); `type` is one URN per reason.
//
// Thread-safe: pure functions, but for the process's hidden database password
// (HidePasswordOf in engines/common/database_url.h), which is read under its mutex.
#ifndef LEDGER_SERVER_PROBLEM_H_
#define LEDGER_SERVER_PROBLEM_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "server/http_message.h"
#include "nlohmann/json.hpp"

namespace ledger::server {

inline constexpr char kProblemContentType[] = "application/problem+json";
inline constexpr char kJsonContentType[] = "application/json";

// One reason the service answers with: its status, and whether a Retry-After: 1 goes
// with it (the client may send the same request again).
struct ProblemKind {
  std::string_view reason;
  int status = 500;
  bool retry_after = false;
};

// The one table of every reason the service can answer with, each business rejection
// reason of the library included (402), in status order. docs/http.md lists every row;
// tests/server/server_unit_test.cc walks the table against it.
const std::vector<ProblemKind>& ProblemKinds();

// The table's row for `reason`; a reason missing from the table is a bug (LEDGER_CHECK).
const ProblemKind& ProblemKindFor(std::string_view reason);

struct Problem {
  int status = 500;    // the table's status for `reason` (MakeProblem)
  std::string reason;  // machine-readable, snake_case
  std::string detail;  // this occurrence, in words
  nlohmann::json extensions = nlohmann::json::object();  // extra members (in_doubt, ...)
};

// The problem for `reason`, with the status the table gives it.
Problem MakeProblem(std::string_view reason, std::string detail,
                    nlohmann::json extensions = nlohmann::json::object());

// The problem for a library error, by its tag first and then its code:
//   conflict 422 idempotency_key_reused, in progress 409 idempotency_key_in_progress,
//   retryable 503 unavailable, in doubt 503 in_doubt, duplicate 409 already_exists,
//   InvalidArgument / OutOfRange 400 invalid_request, NotFound 404 not_found,
//   AlreadyExists 409 already_exists, FailedPrecondition 422 failed_precondition,
//   Unavailable / DeadlineExceeded / Aborted / ResourceExhausted 503 unavailable,
//   anything else (an invariant violation included) 500 internal.
// The message becomes the detail, the served database's password hidden in it
// (HidePasswordOf); an internal error's message is not shown.
Problem ProblemFromStatus(const absl::Status& status);

// The problem's JSON body: its extensions plus type, title, status, detail and reason.
nlohmann::json ProblemJson(const Problem& problem);

// Writes the problem as the response body with its status and content type, and
// Retry-After: 1 when the table says so.
void WriteProblem(HttpResponse& response, const Problem& problem);

// Writes `json` as a compact application/json body with `status`.
void WriteJson(HttpResponse& response, int status, const nlohmann::json& json);

// Compact, deterministic JSON text (keys sorted; invalid UTF-8 replaced, never thrown).
std::string JsonText(const nlohmann::json& json);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_PROBLEM_H_
