#include "server/submit_answer.h"

#include "base/status.h"
#include "ledger/json.h"
#include "ledger/outcome.h"
#include "server/problem.h"

namespace ledger::server {
namespace {

constexpr int kCreated = 201;

SubmitAnswer ProblemAnswer(const Problem& problem, std::string outcome) {
  return {.status = problem.status, .body = ProblemJson(problem), .outcome = std::move(outcome)};
}

SubmitAnswer TransactionAnswer(const Outcome& outcome) {
  bool replayed = outcome.kind == OutcomeKind::kDuplicate;
  SubmitAnswer answer{.status = kCreated,
                      .headers = {{"Location", "/v1/transactions/" + outcome.transaction.id}},
                      .body = TransactionToJson(outcome.transaction),
                      .replayed = replayed,
                      .outcome = std::string(OutcomeKindName(outcome.kind))};
  if (replayed) answer.headers.emplace_back("Idempotent-Replayed", "true");
  return answer;
}

SubmitAnswer RetryLater(SubmitAnswer answer) {
  answer.headers.emplace_back("Retry-After", "1");
  return answer;
}

SubmitAnswer OutcomeAnswer(const Outcome& outcome) {
  std::string label(OutcomeKindName(outcome.kind));
  switch (outcome.kind) {
    case OutcomeKind::kCommitted:
    case OutcomeKind::kDuplicate:
      return TransactionAnswer(outcome);
    case OutcomeKind::kRejected:
      // An atomic batch's other items keep their keys as they were: a key committed
      // before stays committed, so "unused" would be wrong there.
      return ProblemAnswer(
          {.status = 402, .reason = std::string(RejectionReasonName(outcome.reason)),
           .detail = outcome.detail + (outcome.reason == RejectionReason::kBatchItemFailed
                                           ? " (nothing was written; the key is as it was)"
                                           : " (nothing was written; the key stays unused)")},
          label);
    case OutcomeKind::kFaulted:
      return RetryLater(ProblemAnswer(
          {.status = 503, .reason = outcome.in_doubt ? "in_doubt" : "faulted",
           .detail = outcome.in_doubt
                         ? "the commit's result is unknown: it may have committed; resend with the "
                           "same Idempotency-Key, which is safe"
                         : "an infrastructure error; nothing was written; resend with the same "
                           "Idempotency-Key",
           .extensions = {{"in_doubt", outcome.in_doubt}}},
          label));
  }
  return ProblemAnswer({.status = 500, .reason = "internal", .detail = "internal error"}, label);
}

SubmitAnswer ErrorAnswer(const absl::Status& status) {
  if (IsConflict(status)) {
    return ProblemAnswer({.status = 422, .reason = "idempotency_key_reused",
                          .detail = "this Idempotency-Key was used with another payload"},
                         "conflict");
  }
  if (IsInProgress(status)) {
    return RetryLater(ProblemAnswer(
        {.status = 409, .reason = "idempotency_key_in_progress",
         .detail = "a request with this Idempotency-Key is still running; retry"},
        "in_progress"));
  }
  return ProblemAnswer(ProblemFromStatus(status), "invalid");
}

}  // namespace

SubmitAnswer BadSubmitAnswer(std::string reason, const absl::Status& status) {
  return ProblemAnswer({.status = 400, .reason = std::move(reason), .detail = std::string(status.message())},
                       "invalid");
}

SubmitAnswer AnswerSubmit(const SubmitResult& result) {
  return result.ok() ? OutcomeAnswer(*result) : ErrorAnswer(result.status());
}

void WriteSubmitAnswer(httplib::Response& response, const SubmitAnswer& answer) {
  for (const auto& [name, value] : answer.headers) response.set_header(name, value);
  response.status = answer.status;
  response.set_content(JsonText(answer.body),
                       answer.status == kCreated ? kJsonContentType : kProblemContentType);
}

nlohmann::json SubmitAnswerJson(const SubmitAnswer& answer) {
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : answer.headers) headers[name] = value;
  return {{"status", answer.status}, {"headers", std::move(headers)}, {"body", answer.body},
          {"replayed", answer.replayed}};
}

}  // namespace ledger::server
