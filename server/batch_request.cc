#include "server/batch_request.h"

#include <algorithm>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/ledger.h"
#include "server/idempotency_key_header.h"

namespace ledger::server {
namespace {

using Json = nlohmann::json;

absl::Status OnlyMembers(const Json& object, std::initializer_list<std::string_view> allowed,
                         std::string_view where) {
  for (const auto& [name, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown member \"", name, "\" in ", View(where)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchRequestItem> ParseItem(const Json& json, size_t index) {
  std::string where = absl::StrCat("items[", index, "]");
  if (!json.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be an object {\"idempotency_key\": ..., \"operation\": {...}}"));
  }
  LEDGER_RETURN_IF_ERROR(OnlyMembers(json, {"idempotency_key", "operation"}, where));
  auto key = json.find("idempotency_key");
  if (key == json.end() || !key->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".idempotency_key is required, a string: every item has its own key"));
  }
  auto operation = json.find("operation");
  if (operation == json.end()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".operation is required"));
  }
  return BatchRequestItem{.key = ParseIdempotencyKeyHeader(key->get<std::string>()),
                          .operation = OperationFromJson(*operation)};
}

}  // namespace

absl::StatusOr<BatchRequestBody> ParseBatchRequestBody(std::string_view text) {
  LEDGER_ASSIGN_OR_RETURN(Json json, ParseJsonStrict(text));
  if (!json.is_object()) {
    return absl::InvalidArgumentError("the body must be an object {\"items\": [...], \"atomic\": false}");
  }
  LEDGER_RETURN_IF_ERROR(OnlyMembers(json, {"items", "atomic"}, "the body"));
  BatchRequestBody body;
  if (auto atomic = json.find("atomic"); atomic != json.end()) {
    if (!atomic->is_boolean()) return absl::InvalidArgumentError("\"atomic\" must be true or false");
    body.atomic = atomic->get<bool>();
  }
  auto items = json.find("items");
  if (items == json.end() || !items->is_array() || items->empty()) {
    return absl::InvalidArgumentError("\"items\" is required: an array of 1 or more items");
  }
  if (items->size() > kBatchItemsMax) {
    return absl::OutOfRangeError(
        absl::StrCat("a batch holds at most ", kBatchItemsMax, " items, not ", items->size()));
  }
  body.items.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    LEDGER_ASSIGN_OR_RETURN(BatchRequestItem item, ParseItem((*items)[i], i));
    body.items.push_back(std::move(item));
  }
  return body;
}

}  // namespace ledger::server
