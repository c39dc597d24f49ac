// POST /v1/operations (one operation) and POST /v1/operations/batch (many, each with its
// own key): operations exactly once under the IETF Idempotency-Key contract. What either
// route answers for one submit is submit_answer.h's status table; this file turns
// requests into SubmitRequests. The tenant of every key is the API key's, never the
// body's, and both routes use the ledger's one default key space (kDefaultKeyNamespace,
// shared with the library and the CLI), so a batch item, a single POST and a
// `ledger submit` with the same key in the same tenant are the same key. `?dry_run=true`
// on either route answers what the request would get (Ledger::DryRun), writing nothing.
// Both routes hand what they read to the group committer (Ledger::SubmitAsync,
// SubmitBatchAsync) on the event loop when nothing on the way can block, and no thread
// waits for a commit.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/check.h"
#include "base/status.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "server/api.h"
#include "server/batch_request.h"
#include "server/idempotency_key_header.h"
#include "server/problem.h"
#include "server/submit_answer.h"

namespace ledger::server {
namespace {

// RFC 7240 `Prefer: wait=N` (seconds): how long to wait for a running attempt with the
// same key. Absent or unparsable: the server's default; capped at the server's maximum.
absl::Duration ClaimWait(const HttpRequest& request, const ServerOptions& options) {
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

absl::StatusOr<std::string> IdempotencyKey(const HttpRequest& request) {
  size_t count = request.get_header_value_count(kIdempotencyKeyHeader);
  if (count == 0) {
    return absl::InvalidArgumentError(
        "Idempotency-Key is required on POST /v1/operations, e.g. Idempotency-Key: \"order-1001\"");
  }
  if (count > 1) return absl::InvalidArgumentError("Idempotency-Key is given more than once");
  return ParseIdempotencyKeyHeader(request.get_header_value(kIdempotencyKeyHeader));
}

SubmitRequest MakeSubmitRequest(std::string key, Operation operation, const RequestContext& context,
                                const ServerOptions& options) {
  SubmitRequest request{.key = std::move(key),
                        // The scope comes from the API key, never from the body.
                        .scope = Scope{.tenant = context.principal.tenant},
                        .operation = std::move(operation)};
  request.claim.wait.wait_max = ClaimWait(context.request, options);
  return request;
}

// `?dry_run=true` on either route: decide against the current balances and answer what
// the request would get (AnswerDryRun, 200), writing nothing: the key is claimed only
// inside a transaction that rolls back, so a later real request with it runs for real.
absl::StatusOr<bool> DryRunRequested(const HttpRequest& request) {
  if (!request.has_param("dry_run")) return false;
  const std::string value = request.get_param_value("dry_run");
  if (value == "true") return true;
  if (value == "false") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("?dry_run= must be true or false, not \"", value, "\""));
}

void WriteCountedSubmitAnswer(HttpResponse& response, Metrics& metrics, const SubmitAnswer& answer) {
  metrics.RecordSubmit(answer.outcome);
  WriteSubmitAnswer(response, answer);
}

// The parsed submit goes straight to the ledger's group committer (Ledger::SubmitAsync)
// and the handler returns: the request holds no thread while its batch commits, and is
// answered from the committer's thread through the event loop. The ledger completes
// the submit whatever becomes of the connection meanwhile. Runs on the event loop
// (HandleSubmitOnLoop) when it cannot block, else on a worker.
void HandleSubmit(RequestContext& context, ApiContext& api) {
  absl::StatusOr<bool> dry_run = DryRunRequested(context.request);
  if (!dry_run.ok()) {
    return WriteProblem(context.response,
                        MakeProblem("invalid_request", std::string(dry_run.status().message())));
  }
  absl::StatusOr<std::string> key = IdempotencyKey(context.request);
  if (!key.ok()) {
    return WriteCountedSubmitAnswer(context.response, api.metrics,
                                    BadSubmitAnswer("idempotency_key_invalid", key.status()));
  }
  absl::StatusOr<Operation> operation = ParseOperationJson(context.request.body);
  if (!operation.ok()) {
    return WriteCountedSubmitAnswer(context.response, api.metrics,
                                    BadSubmitAnswer("invalid_operation", operation.status()));
  }
  SubmitRequest request = MakeSubmitRequest(*std::move(key), *std::move(operation), context, api.options);
  if (*dry_run) {  // decided in a transaction that rolls back; a dry run submits nothing
    return WriteSubmitAnswer(context.response, AnswerDryRun(api.ledger.DryRun(request)));
  }
  LaterAnswer answer = context.AnswerLater();
  Metrics& metrics = api.metrics;
  api.ledger.SubmitAsync(std::move(request), [answer, &metrics](SubmitResult result) {
    answer([result = std::move(result), &metrics](HttpResponse& response) {
      metrics.RecordSubmit(WriteSubmitResult(response, result));
    });
  });
}

// The single submit on the event loop (issue 28): parsed, validated and handed to the
// group committer right where it was read, so it costs no hand-off to a worker and
// back. Only when nothing on the way can block: with group commit off SubmitAsync runs
// the submit on the calling thread, and a dry run reads the database (both go to a
// worker, HandleSubmit, as does a tenant's first request, ForOpenTenant). Every answer
// is HandleSubmit's, as it is HandleSubmit that runs.
bool HandleSubmitOnLoop(RequestContext& context, ApiContext& api) {
  if (context.request.has_param("dry_run") || !api.ledger.group_commit_enabled()) return false;
  HandleSubmit(context, api);
  return true;
}

// What the ledger says of every valid item when the atomic batch holds an item it never
// saw (a bad key or operation): the ledger's own batch_item_failed, in its words.
SubmitAnswer LinkedToBadItem(size_t bad_index, bool dry_run) {
  Outcome linked = Outcome::Rejected(
      RejectionReason::kBatchItemFailed,
      absl::StrCat("item ", bad_index, " of the atomic batch was not committed, so none is"));
  return dry_run ? AnswerDryRun(linked) : AnswerSubmit(linked);
}

// A batch request the server has read: the items it could not read answered already,
// the others as the ledger's batch, each at its position in the request.
struct PreparedBatch {
  std::vector<SubmitAnswer> answers;  // one per request item; the ledger's items' filled later
  SubmitBatchRequest batch;           // empty when nothing goes to the ledger
  std::vector<size_t> positions;      // batch.items[j] is the request's item positions[j]
};

// Items the server cannot read answer as the single route would and never reach the
// ledger; in an atomic batch with one, every other item is linked to it and the ledger
// gets nothing.
PreparedBatch PrepareBatch(BatchRequestBody& body, RequestContext& context, ApiContext& api,
                           bool dry_run) {
  PreparedBatch prepared;
  prepared.answers.resize(body.items.size());
  prepared.batch.atomic = body.atomic;
  std::optional<size_t> first_bad;
  for (size_t i = 0; i < body.items.size(); ++i) {
    BatchRequestItem& item = body.items[i];
    if (item.key.ok() && item.operation.ok()) {
      prepared.batch.items.push_back(
          MakeSubmitRequest(*std::move(item.key), *std::move(item.operation), context, api.options));
      prepared.positions.push_back(i);
      continue;
    }
    prepared.answers[i] = !item.key.ok() ? BadSubmitAnswer("idempotency_key_invalid", item.key.status())
                                         : BadSubmitAnswer("invalid_operation", item.operation.status());
    if (!first_bad.has_value()) first_bad = i;
  }
  if (body.atomic && first_bad.has_value()) {
    for (size_t i : prepared.positions) prepared.answers[i] = LinkedToBadItem(*first_bad, dry_run);
    prepared.batch.items.clear();
    prepared.positions.clear();
  }
  return prepared;
}

// The whole answer of POST /v1/operations/batch: one result per item, in order, from
// ONE SubmitBatch (or DryRunBatch) call's `results` when the ledger got items; a
// problem when the ledger refused the batch as a whole (too many entries). Counts the
// submits (not a dry run's).
void WriteBatchAnswer(HttpResponse& response, Metrics& metrics, PreparedBatch& prepared,
                      const absl::StatusOr<std::vector<SubmitResult>>& results, bool dry_run) {
  if (!results.ok()) {
    // SubmitBatch refuses a whole call only for its limits; the item count is checked before.
    return WriteProblem(response, results.status().code() == absl::StatusCode::kInvalidArgument
                                      ? MakeProblem("batch_too_large", std::string(results.status().message()))
                                      : ProblemFromStatus(results.status()));
  }
  LEDGER_CHECK(results->size() == prepared.positions.size()) << "one result per item the ledger got";
  for (size_t j = 0; j < results->size(); ++j) {
    prepared.answers[prepared.positions[j]] = dry_run ? AnswerDryRun((*results)[j]) : AnswerSubmit((*results)[j]);
  }
  if (!dry_run && !results->empty()) metrics.RecordBatch(results->size());
  nlohmann::json items = nlohmann::json::array();
  for (const SubmitAnswer& answer : prepared.answers) {
    if (!dry_run) metrics.RecordSubmit(answer.outcome);
    items.push_back(SubmitAnswerJson(answer));
  }
  nlohmann::json body = {{"results", std::move(items)}};
  if (dry_run) body["dry_run"] = true;
  WriteJson(response, 200, body);
}

// As HandleSubmit for many items: the batch goes to the group committer as one unit
// (Ledger::SubmitBatchAsync, one transaction of its own) and the handler returns, so no
// thread waits for its commit; the committer's thread renders the answer (a batch's can
// be large, and the event loop should not) and the event loop writes it. A dry run
// reads the database and answers here, on a worker. Runs on the event loop
// (HandleBatchOnLoop) when it cannot block, else on a worker.
void HandleBatch(RequestContext& context, ApiContext& api) {
  absl::StatusOr<bool> dry_run = DryRunRequested(context.request);
  if (!dry_run.ok()) {
    return WriteProblem(context.response,
                        MakeProblem("invalid_request", std::string(dry_run.status().message())));
  }
  absl::StatusOr<BatchRequestBody> body = ParseBatchRequestBody(context.request.body);
  if (!body.ok()) {
    bool too_large = body.status().code() == absl::StatusCode::kOutOfRange;
    return WriteProblem(context.response, MakeProblem(too_large ? "batch_too_large" : "invalid_batch",
                                                      std::string(body.status().message())));
  }
  PreparedBatch prepared = PrepareBatch(*body, context, api, *dry_run);
  if (prepared.batch.items.empty()) {  // the server answered every item itself
    return WriteBatchAnswer(context.response, api.metrics, prepared, std::vector<SubmitResult>{}, *dry_run);
  }
  if (*dry_run) {
    return WriteBatchAnswer(context.response, api.metrics, prepared, api.ledger.DryRunBatch(prepared.batch),
                            /*dry_run=*/true);
  }
  LaterAnswer answer = context.AnswerLater();
  Metrics& metrics = api.metrics;
  SubmitBatchRequest batch = std::move(prepared.batch);
  auto rest = std::make_shared<PreparedBatch>(std::move(prepared));
  api.ledger.SubmitBatchAsync(
      std::move(batch), [answer, &metrics, rest](absl::StatusOr<std::vector<SubmitResult>> results) {
        auto written = std::make_shared<HttpResponse>();
        WriteBatchAnswer(*written, metrics, *rest, results, /*dry_run=*/false);
        answer([written](HttpResponse& response) { response = std::move(*written); });
      });
}

// The batch on the event loop, as HandleSubmitOnLoop is the single submit: read and
// handed to the group committer where it was read, unless something on the way could
// block (a dry run, group commit off: a worker's, HandleBatch) or take the loop too
// long: a body over kBatchBodyOnLoopBytesMax is parsed on a worker (then handed on as
// here, holding no worker while it commits).
constexpr size_t kBatchBodyOnLoopBytesMax = 64 * 1024;

bool HandleBatchOnLoop(RequestContext& context, ApiContext& api) {
  if (context.request.has_param("dry_run") || !api.ledger.group_commit_enabled() ||
      context.request.body.size() > kBatchBodyOnLoopBytesMax) {
    return false;
  }
  HandleBatch(context, api);
  return true;
}

}  // namespace

void AddOperationRoutes(Router& router, ApiContext& api) {
  router.Post("/v1/operations", Role::kSubmit,
              ForTenant(api, HandleSubmit), ForOpenTenant(api, HandleSubmitOnLoop));
  router.Post("/v1/operations/batch", Role::kSubmit,
              ForTenant(api, HandleBatch), ForOpenTenant(api, HandleBatchOnLoop));
}

}  // namespace ledger::server
