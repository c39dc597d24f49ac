#include "server/submit_answer.h"

#include <optional>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "ledger/json.h"
#include "ledger/outcome.h"
#include "server/problem.h"

namespace ledger::server {
namespace {

constexpr int kOk = 200;
constexpr int kCreated = 201;

SubmitAnswer ProblemAnswer(const Problem& problem, std::string outcome) {
  SubmitAnswer answer{.status = problem.status, .body = ProblemJson(problem),
                      .outcome = std::move(outcome)};
  if (ProblemKindFor(problem.reason).retry_after) answer.headers.emplace_back("Retry-After", "1");
  return answer;
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

Problem RejectionProblem(const Outcome& outcome) {
  // An atomic batch's other items keep their keys as they were: a key committed before
  // stays committed, so "unused" would be wrong there.
  return MakeProblem(RejectionReasonName(outcome.reason),
                     outcome.detail + (outcome.reason == RejectionReason::kBatchItemFailed
                                           ? " (nothing was written; the key is as it was)"
                                           : " (nothing was written; the key stays unused)"));
}

Problem FaultProblem(const Outcome& outcome) {
  return MakeProblem(outcome.in_doubt ? "in_doubt" : "faulted",
                     outcome.in_doubt
                         ? "the commit's result is unknown: it may have committed; resend with the "
                           "same Idempotency-Key, which is safe"
                         : "an infrastructure error; nothing was written; resend with the same "
                           "Idempotency-Key",
                     {{"in_doubt", outcome.in_doubt}});
}

SubmitAnswer OutcomeAnswer(const Outcome& outcome) {
  std::string label(OutcomeKindName(outcome.kind));
  switch (outcome.kind) {
    case OutcomeKind::kCommitted:
    case OutcomeKind::kDuplicate:
      return TransactionAnswer(outcome);
    case OutcomeKind::kRejected:
      return ProblemAnswer(RejectionProblem(outcome), label);
    case OutcomeKind::kFaulted:
      return ProblemAnswer(FaultProblem(outcome), label);
  }
  return ProblemAnswer(MakeProblem("internal", "internal error"), label);
}

// The metrics label of a submit that ended in an error rather than an outcome.
std::string ErrorLabel(const absl::Status& status) {
  if (IsConflict(status)) return "conflict";
  if (IsInProgress(status)) return "in_progress";
  return "invalid";
}

}  // namespace

SubmitAnswer BadSubmitAnswer(std::string reason, const absl::Status& status) {
  return ProblemAnswer(MakeProblem(reason, std::string(status.message())), "invalid");
}

SubmitAnswer AnswerSubmit(const SubmitResult& result) {
  if (result.ok()) return OutcomeAnswer(*result);
  return ProblemAnswer(ProblemFromStatus(result.status()), ErrorLabel(result.status()));
}

SubmitAnswer AnswerDryRun(const SubmitResult& result) {
  std::optional<nlohmann::json> decided = DryRunToJson(result);
  // A unit of work never faults an item (its faults are the call's error), but if one
  // did, it decided nothing.
  if (!decided.has_value() || (result.ok() && result->kind == OutcomeKind::kFaulted)) {
    return AnswerSubmit(result);
  }
  return SubmitAnswer{.status = kOk, .body = *std::move(decided), .outcome = "dry_run"};
}

void WriteSubmitAnswer(HttpResponse& response, const SubmitAnswer& answer) {
  for (const auto& [name, value] : answer.headers) response.set_header(name, value);
  response.status = answer.status;
  response.set_content(JsonText(answer.body),
                       answer.status == kCreated || answer.status == kOk ? kJsonContentType
                                                                         : kProblemContentType);
}

std::string WriteSubmitResult(HttpResponse& response, const SubmitResult& result) {
  if (!result.ok() || (result->kind != OutcomeKind::kCommitted && result->kind != OutcomeKind::kDuplicate)) {
    SubmitAnswer answer = AnswerSubmit(result);
    WriteSubmitAnswer(response, answer);
    return std::move(answer.outcome);
  }
  // TransactionAnswer's, written straight.
  const bool replayed = result->kind == OutcomeKind::kDuplicate;
  response.set_header("Location", "/v1/transactions/" + result->transaction.id);
  if (replayed) response.set_header("Idempotent-Replayed", "true");
  response.status = kCreated;
  response.set_content(TransactionToJsonText(result->transaction), kJsonContentType);
  return std::string(OutcomeKindName(result->kind));
}

nlohmann::json SubmitAnswerJson(const SubmitAnswer& answer) {
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : answer.headers) headers[name] = value;
  return {{"status", answer.status}, {"headers", std::move(headers)}, {"body", answer.body},
          {"replayed", answer.replayed}};
}

}  // namespace ledger::server
