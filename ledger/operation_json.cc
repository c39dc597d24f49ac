// The JSON form of operations: strict, so a typo is an error, not a silently ignored
// field that changes what a payload means.
#include <limits>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/operation.h"

namespace ledger {
namespace {

using Json = nlohmann::json;

absl::Status CheckFields(const Json& object, const std::set<std::string>& allowed,
                         std::string_view context) {
  for (const auto& [name, value] : object.items()) {
    if (allowed.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown field \"", name, "\" in ", View(context)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RequiredString(const Json& object, const std::string& name,
                                           std::string_view context) {
  auto it = object.find(name);
  if (it == object.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing field \"", name, "\" in ", View(context)));
  }
  if (!it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("field \"", name, "\" in ", View(context), " must be a string"));
  }
  return it->get<std::string>();
}

// Amounts are decimal strings ("1500"), or JSON integers for convenience; never
// fractions: minor units are whole.
absl::StatusOr<Amount> RequiredAmount(const Json& object, const std::string& name,
                                      std::string_view context) {
  auto it = object.find(name);
  if (it == object.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing field \"", name, "\" in ", View(context)));
  }
  if (it->is_string()) {
    absl::StatusOr<Amount> parsed = ParseAmount(it->get<std::string>());
    if (!parsed.ok()) return Annotate(parsed.status(), name);
    return parsed;
  }
  if (it->is_number_integer() && !it->is_number_unsigned()) return it->get<Amount>();
  if (it->is_number_unsigned()) {
    uint64_t value = it->get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<Amount>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", name, "\" overflows a signed 64-bit integer"));
    }
    return static_cast<Amount>(value);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "field \"", name, "\" in ", View(context),
      " must be an integer of minor units (a decimal string or a JSON integer)"));
}

// A hold's expiry: "expires_at" (RFC 3339 text) or "timeout_seconds" (an integer).
absl::Status ParseHoldExpiry(const Json& json, Operation& op) {
  if (auto at = json.find("expires_at"); at != json.end()) {
    absl::Time parsed;
    std::string error;
    if (!at->is_string() ||
        !absl::ParseTime(absl::RFC3339_full, at->get<std::string>(), &parsed, &error)) {
      return absl::InvalidArgumentError(
          "field \"expires_at\" in hold must be an RFC 3339 time, e.g. 2026-12-01T12:00:00Z");
    }
    op.expires_at = parsed;
  }
  if (auto timeout = json.find("timeout_seconds"); timeout != json.end()) {
    if (!timeout->is_number_integer()) {
      return absl::InvalidArgumentError(
          "field \"timeout_seconds\" in hold must be an integer number of seconds");
    }
    if (timeout->is_number_unsigned() &&
        timeout->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError("field \"timeout_seconds\" in hold is out of range");
    }
    op.timeout = absl::Seconds(timeout->get<int64_t>());
  }
  return absl::OkStatus();
}

absl::Status ParseHoldSettlement(const Json& json, Operation& op) {
  std::string context(OperationKindName(op.kind));
  std::set<std::string> allowed = {"kind", "hold_id", "metadata"};
  if (op.kind == OperationKind::kCapture) allowed.insert("amount");
  LEDGER_RETURN_IF_ERROR(CheckFields(json, allowed, context));
  LEDGER_ASSIGN_OR_RETURN(op.hold_id, RequiredString(json, "hold_id", context));
  if (json.contains("amount")) {
    LEDGER_ASSIGN_OR_RETURN(op.capture_amount, RequiredAmount(json, "amount", context));
  }
  return absl::OkStatus();
}

absl::Status ParseTwoPartyMove(const Json& json, Operation& op) {
  std::string context(OperationKindName(op.kind));
  std::set<std::string> allowed = {"kind", "asset", "from", "to", "amount", "metadata"};
  if (op.kind == OperationKind::kSpend) allowed.insert("fee");
  if (op.kind == OperationKind::kHold) allowed.insert({"expires_at", "timeout_seconds"});
  LEDGER_RETURN_IF_ERROR(CheckFields(json, allowed, context));
  LEDGER_ASSIGN_OR_RETURN(op.asset, RequiredString(json, "asset", context));
  LEDGER_ASSIGN_OR_RETURN(op.from, RequiredString(json, "from", context));
  LEDGER_ASSIGN_OR_RETURN(op.to, RequiredString(json, "to", context));
  LEDGER_ASSIGN_OR_RETURN(op.amount, RequiredAmount(json, "amount", context));
  if (op.kind == OperationKind::kHold) return ParseHoldExpiry(json, op);
  auto fee = json.find("fee");
  if (fee == json.end()) return absl::OkStatus();
  if (!fee->is_object()) return absl::InvalidArgumentError("field \"fee\" must be an object");
  LEDGER_RETURN_IF_ERROR(CheckFields(*fee, {"to", "amount"}, "fee"));
  Fee parsed;
  LEDGER_ASSIGN_OR_RETURN(parsed.to, RequiredString(*fee, "to", "fee"));
  LEDGER_ASSIGN_OR_RETURN(parsed.amount, RequiredAmount(*fee, "amount", "fee"));
  op.fee = std::move(parsed);
  return absl::OkStatus();
}

absl::Status ParsePostings(const Json& json, Operation& op) {
  LEDGER_RETURN_IF_ERROR(CheckFields(json, {"kind", "postings", "metadata"}, "post"));
  auto postings = json.find("postings");
  if (postings == json.end() || !postings->is_array()) {
    return absl::InvalidArgumentError("post needs a \"postings\" array");
  }
  for (size_t i = 0; i < postings->size(); ++i) {
    const Json& item = (*postings)[i];
    std::string context = absl::StrCat("postings[", i, "]");
    if (!item.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(context, " must be an object"));
    }
    LEDGER_RETURN_IF_ERROR(CheckFields(item, {"account", "asset", "amount"}, context));
    Posting posting;
    LEDGER_ASSIGN_OR_RETURN(posting.account_id, RequiredString(item, "account", context));
    LEDGER_ASSIGN_OR_RETURN(posting.asset, RequiredString(item, "asset", context));
    LEDGER_ASSIGN_OR_RETURN(posting.amount, RequiredAmount(item, "amount", context));
    op.postings.push_back(std::move(posting));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Operation> OperationFromJson(const Json& json) {
  if (!json.is_object()) return absl::InvalidArgumentError("an operation must be a JSON object");
  LEDGER_ASSIGN_OR_RETURN(std::string kind_name, RequiredString(json, "kind", "operation"));
  Operation op;
  LEDGER_ASSIGN_OR_RETURN(op.kind, ParseOperationKind(kind_name));
  if (auto metadata = json.find("metadata"); metadata != json.end()) {
    if (!metadata->is_object()) {
      return absl::InvalidArgumentError("field \"metadata\" must be a JSON object");
    }
    op.metadata = *metadata;
  }
  switch (op.kind) {
    case OperationKind::kReverse: {
      LEDGER_RETURN_IF_ERROR(CheckFields(json, {"kind", "transaction_id", "metadata"}, "reverse"));
      LEDGER_ASSIGN_OR_RETURN(op.transaction_id, RequiredString(json, "transaction_id", "reverse"));
      break;
    }
    case OperationKind::kPost:
      LEDGER_RETURN_IF_ERROR(ParsePostings(json, op));
      break;
    case OperationKind::kCapture:
    case OperationKind::kVoid:
      LEDGER_RETURN_IF_ERROR(ParseHoldSettlement(json, op));
      break;
    case OperationKind::kExpire:
      return absl::InvalidArgumentError(
          "expire is not submitted: the ledger records a hold's expiry itself");
    default:
      LEDGER_RETURN_IF_ERROR(ParseTwoPartyMove(json, op));
      break;
  }
  return op;
}

absl::StatusOr<Operation> ParseOperationJson(std::string_view text) {
  if (text.size() > kOperationJsonBytesMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operation JSON is ", text.size(), " bytes; the limit is ", kOperationJsonBytesMax));
  }
  LEDGER_ASSIGN_OR_RETURN(Json json, ParseJsonStrict(text));
  return OperationFromJson(json);
}

}  // namespace ledger
