// What the service answers for one submit: the status table of POST /v1/operations
// (docs/http.md), written once and shared by both submit routes. The single route sends
// an answer as its HTTP response; the batch route embeds one per item.
//
//   SubmitAnswer answer = AnswerSubmit(ledger.Submit(request));
//   WriteSubmitAnswer(response, answer);           // POST /v1/operations
//   nlohmann::json item = SubmitAnswerJson(answer);  // POST /v1/operations/batch
//
//   201  committed; a replay: the same status and body, plus Idempotent-Replayed: true
//   400  the key or the operation is bad (nothing reached the ledger), or the ledger
//        found the operation invalid
//   402  a business rule declined it (the reason); the key stays unused
//   409  the same key is still running (Retry-After)
//   422  the same key was used with another payload
//   503  faulted (Retry-After); "in_doubt" says whether it may have committed
//   200  a dry run's decision (AnswerDryRun): nothing was written
//
// A 201 body is rendered from the recorded transaction alone (TransactionToJson, keys
// sorted), so a replay is byte-identical to the first answer, on either route.
//
// Thread-safe: pure functions.
#ifndef LEDGER_SERVER_SUBMIT_ANSWER_H_
#define LEDGER_SERVER_SUBMIT_ANSWER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "server/http_message.h"
#include "ledger/ledger.h"
#include "nlohmann/json.hpp"

namespace ledger::server {

struct SubmitAnswer {
  int status = 500;
  // The response headers besides Content-Type: Location (201), Idempotent-Replayed
  // (a replay), Retry-After (409, 503).
  std::vector<std::pair<std::string, std::string>> headers;
  nlohmann::json body;    // the transaction (201), else the RFC 9457 problem
  bool replayed = false;  // the first answer again (Idempotent-Replayed: true)
  // ledger_submits_total's label: committed, duplicate, rejected, faulted, conflict,
  // in_progress, invalid.
  std::string outcome;
};

// 400 for a request the server could not hand to the ledger. `reason`:
// idempotency_key_invalid or invalid_operation; the status's message is the detail.
SubmitAnswer BadSubmitAnswer(std::string reason, const absl::Status& status);

// The answer for what the ledger returned for one request.
SubmitAnswer AnswerSubmit(const SubmitResult& result);

// The answer for a dry run (`?dry_run=true`, Ledger::DryRun): 200 with DryRunToJson's
// body for every decision (would commit, duplicate, rejected, conflict), never 201 and
// no Location; what decided nothing (bad input, a busy key, a fault) answers as
// AnswerSubmit does. Metrics label: dry_run.
SubmitAnswer AnswerDryRun(const SubmitResult& result);

// Status, headers and body (application/json for 2xx, else application/problem+json).
void WriteSubmitAnswer(HttpResponse& response, const SubmitAnswer& answer);

// WriteSubmitAnswer(response, AnswerSubmit(result)) to the byte, for the single route's
// hot path: a 201's body is written straight from the transaction
// (TransactionToJsonText, ledger/json.h) instead of through a JSON tree. Returns the answer's metrics
// label (SubmitAnswer::outcome).
std::string WriteSubmitResult(HttpResponse& response, const SubmitResult& result);

// One batch result: {"status":201,"headers":{...},"body":{...},"replayed":false}. The
// body is the same JSON value the single route sends, so the compact, key-sorted
// rendering of the batch response holds its exact bytes.
nlohmann::json SubmitAnswerJson(const SubmitAnswer& answer);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_SUBMIT_ANSWER_H_
