// The body of POST /v1/operations/batch (docs/http.md):
//
//   {"items": [{"idempotency_key": "order-1", "operation": {"kind": "top_up", ...}},
//              {"idempotency_key": "\"order-2\"", "operation": {...}}],
//    "atomic": false}
//
// The envelope is the whole request's: malformed JSON, duplicate member names, unknown
// members, a missing or non-string idempotency_key, a missing operation, no items or
// more than kBatchItemsMax fail it all (400). What is inside an item is the item's own:
// its key is read as the Idempotency-Key header is (a Structured Field string or a bare
// token, the same key either way) and its operation as POST /v1/operations reads its
// body, and a bad one fails only that item, as the single route would.
//
// Thread-safe: a pure function.
#ifndef LEDGER_SERVER_BATCH_REQUEST_H_
#define LEDGER_SERVER_BATCH_REQUEST_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/operation.h"

namespace ledger::server {

struct BatchRequestItem {
  absl::StatusOr<std::string> key;      // InvalidArgument: the single route's 400 idempotency_key_invalid
  absl::StatusOr<Operation> operation;  // InvalidArgument: the single route's 400 invalid_operation
};

struct BatchRequestBody {
  std::vector<BatchRequestItem> items;  // 1 .. kBatchItemsMax, in request order
  bool atomic = false;                  // default false
};

// The parsed body, or InvalidArgument naming what is wrong with the envelope, or
// OutOfRange for more than kBatchItemsMax items (a limit, not a malformed request).
absl::StatusOr<BatchRequestBody> ParseBatchRequestBody(std::string_view text);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_BATCH_REQUEST_H_
