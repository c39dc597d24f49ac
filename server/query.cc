#include "server/query.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"

namespace ledger::server {

absl::StatusOr<int64_t> NonNegativeParameter(const HttpRequest& request, const char* name,
                                             int64_t absent) {
  if (!request.has_param(name)) return absent;
  std::string text = request.get_param_value(name);
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("?", name, "= must be an integer >= 0"));
  }
  return value;
}

absl::StatusOr<int64_t> PageLimit(const HttpRequest& request) {
  LEDGER_ASSIGN_OR_RETURN(int64_t limit, NonNegativeParameter(request, "limit", kPageLimitDefault));
  if (limit < 1 || limit > kPageLimitMax) {
    return absl::InvalidArgumentError(absl::StrCat("?limit= must be 1..", kPageLimitMax));
  }
  return limit;
}

absl::StatusOr<ReadConsistency> RequestedConsistency(const HttpRequest& request) {
  const size_t given = request.get_header_value_count(kConsistencyHeader);
  if (given == 0) return ReadConsistency::kReplicaAllowed;
  const std::string value = absl::AsciiStrToLower(request.get_header_value(kConsistencyHeader));
  if (given == 1 && value == "primary") return ReadConsistency::kPrimary;
  if (given == 1 && value == "replica") return ReadConsistency::kReplicaAllowed;
  return absl::InvalidArgumentError(absl::StrCat(
      "the ", kConsistencyHeader, " header must be given once, as primary or replica"));
}

absl::StatusOr<nlohmann::json> JsonObjectBody(const HttpRequest& request) {
  absl::StatusOr<nlohmann::json> json = ParseJsonStrict(request.body);
  if (!json.ok()) return Annotate(json.status(), "request body");
  if (!json->is_object()) return absl::InvalidArgumentError("the request body must be a JSON object");
  return json;
}

}  // namespace ledger::server
