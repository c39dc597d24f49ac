// POST /v1/operations: one operation exactly once, under the IETF Idempotency-Key
// contract (docs/http.md has the status table):
//
//   201  committed; a replay: the same status and body, plus Idempotent-Replayed: true
//   400  Idempotency-Key missing, invalid or repeated; the operation JSON is bad
//   402  a business rule declined it (the reason); the key stays unused
//   409  the same key is still running (Retry-After); `Prefer: wait=N` waits up to N s
//   422  the same key was used with another payload
//   503  faulted (Retry-After); "in_doubt" says whether it may have committed; resend
//        with the same key: it is safe
//
// The body of a 201 is rendered from the recorded transaction alone, deterministically
// (TransactionToJson, keys sorted), so a replay is byte-identical to the first answer.
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "server/api.h"
#include "server/idempotency_key_header.h"
#include "server/problem.h"

namespace ledger::server {
namespace {

// The key namespace of every operation submitted over HTTP: the draft's key names one
// request per client, whatever its kind.
constexpr char kOperationsKeyNamespace[] = "operations";

// RFC 7240 `Prefer: wait=N` (seconds): how long to wait for a running attempt with the
// same key. Absent or unparsable: the server's default; capped at the server's maximum.
absl::Duration ClaimWait(const httplib::Request& request, const ServerOptions& options) {
  for (absl::string_view preference :
       absl::StrSplit(request.get_header_value("Prefer"), ',', absl::SkipWhitespace())) {
    preference = absl::StripAsciiWhitespace(preference);
    if (!absl::ConsumePrefix(&preference, "wait=")) continue;
    int64_t seconds = 0;
    if (absl::SimpleAtoi(preference, &seconds) && seconds >= 0) {
      return std::min(absl::Seconds(seconds), options.claim_wait_max);
    }
  }
  return options.claim_wait_default;
}

absl::StatusOr<std::string> IdempotencyKey(const httplib::Request& request) {
  size_t count = request.get_header_value_count(kIdempotencyKeyHeader);
  if (count == 0) {
    return absl::InvalidArgumentError(
        "Idempotency-Key is required on POST /v1/operations, e.g. Idempotency-Key: \"order-1001\"");
  }
  if (count > 1) return absl::InvalidArgumentError("Idempotency-Key is given more than once");
  return ParseIdempotencyKeyHeader(request.get_header_value(kIdempotencyKeyHeader));
}

void WriteTransaction(httplib::Response& response, const Outcome& outcome) {
  response.set_header("Location", "/v1/transactions/" + outcome.transaction.id);
  if (outcome.kind == OutcomeKind::kDuplicate) response.set_header("Idempotent-Replayed", "true");
  WriteJson(response, 201, TransactionToJson(outcome.transaction));
}

void WriteOutcome(RequestContext& context, Metrics& metrics, const Outcome& outcome) {
  metrics.RecordSubmit(std::string(OutcomeKindName(outcome.kind)));
  switch (outcome.kind) {
    case OutcomeKind::kCommitted:
    case OutcomeKind::kDuplicate:
      return WriteTransaction(context.response, outcome);
    case OutcomeKind::kRejected:
      return WriteProblem(context.response,
                          {.status = 402, .reason = std::string(RejectionReasonName(outcome.reason)),
                           .detail = outcome.detail + " (nothing was written; the key stays unused)"});
    case OutcomeKind::kFaulted:
      context.response.set_header("Retry-After", "1");
      return WriteProblem(
          context.response,
          {.status = 503, .reason = outcome.in_doubt ? "in_doubt" : "faulted",
           .detail = outcome.in_doubt
                         ? "the commit's result is unknown: it may have committed; resend with the "
                           "same Idempotency-Key, which is safe"
                         : "an infrastructure error; nothing was written; resend with the same "
                           "Idempotency-Key",
           .extensions = {{"in_doubt", outcome.in_doubt}}});
  }
}

void WriteSubmitError(RequestContext& context, Metrics& metrics, const absl::Status& status) {
  if (IsConflict(status)) {
    metrics.RecordSubmit("conflict");
    return WriteProblem(context.response,
                        {.status = 422, .reason = "idempotency_key_reused",
                         .detail = "this Idempotency-Key was used with another payload"});
  }
  if (IsInProgress(status)) {
    metrics.RecordSubmit("in_progress");
    context.response.set_header("Retry-After", "1");
    return WriteProblem(context.response,
                        {.status = 409, .reason = "idempotency_key_in_progress",
                         .detail = "a request with this Idempotency-Key is still running; retry"});
  }
  metrics.RecordSubmit("invalid");
  Problem problem = ProblemFromStatus(status);
  WriteProblem(context.response, problem);
}

void HandleSubmit(RequestContext& context, ApiContext& api) {
  absl::StatusOr<std::string> key = IdempotencyKey(context.request);
  if (!key.ok()) {
    api.metrics.RecordSubmit("invalid");
    return WriteProblem(context.response, {.status = 400, .reason = "idempotency_key_invalid",
                                           .detail = std::string(key.status().message())});
  }
  absl::StatusOr<Operation> operation = ParseOperationJson(context.request.body);
  if (!operation.ok()) {
    api.metrics.RecordSubmit("invalid");
    return WriteProblem(context.response, {.status = 400, .reason = "invalid_operation",
                                           .detail = std::string(operation.status().message())});
  }
  SubmitRequest request{.key = *std::move(key),
                        // The scope comes from the API key, never from the body.
                        .scope = Scope{.tenant = context.principal.tenant},
                        .operation = *std::move(operation),
                        // One key space for every kind: another kind is another payload.
                        .key_namespace = std::string(kOperationsKeyNamespace)};
  request.claim.wait.wait_max = ClaimWait(context.request, api.options);
  absl::StatusOr<Outcome> outcome = api.ledger.Submit(request);
  if (!outcome.ok()) return WriteSubmitError(context, api.metrics, outcome.status());
  WriteOutcome(context, api.metrics, *outcome);
}

}  // namespace

void AddOperationRoutes(Router& router, ApiContext& api) {
  router.Post("/v1/operations", Role::kSubmit,
              [&api](RequestContext& context) { HandleSubmit(context, api); });
}

}  // namespace ledger::server
