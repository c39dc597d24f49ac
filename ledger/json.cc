#include "ledger/json.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/amount.h"

namespace ledger {
namespace {

// Compact, keys in std::map order, invalid UTF-8 replaced: how both programs print JSON.
std::string Dump(const nlohmann::json& json) {
  return json.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

// `text` as a JSON string, as Dump writes it: valid UTF-8 (nearly always) escaped as
// RFC 8785 says, which are the same bytes; invalid UTF-8 through nlohmann, which
// replaces it.
void AppendJsonString(std::string& out, std::string_view text) {
  if (!AppendCanonicalJsonString(text, out).ok()) out += Dump(nlohmann::json(std::string(text)));
}

void AppendJsonMember(std::string& out, std::string_view name, std::string_view value) {
  out += '"';
  out.append(name);
  out += "\":";
  AppendJsonString(out, value);
}

}  // namespace

nlohmann::json HoldTermsToJson(const HoldTerms& terms) {
  nlohmann::json json = {{"from", terms.from},
                         {"to", terms.to},
                         {"asset", terms.asset},
                         {"amount", FormatAmount(terms.amount)}};
  json["expires_at"] = terms.expires_at.has_value()
                           ? nlohmann::json(FormatTimestamp(*terms.expires_at))
                           : nlohmann::json(nullptr);
  return json;
}

nlohmann::json HoldToJson(const Hold& hold) {
  nlohmann::json json = HoldTermsToJson(hold.terms);
  json["id"] = hold.id;
  json["created_at"] = FormatTimestamp(hold.created_at);
  json["status"] = HoldStatusName(hold.status);
  json["settled_by"] =
      hold.settled_by.has_value() ? nlohmann::json(*hold.settled_by) : nlohmann::json(nullptr);
  return json;
}

nlohmann::json TransactionToJson(const Transaction& transaction) {
  nlohmann::json entries = nlohmann::json::array();
  for (const Entry& entry : transaction.entries) {
    entries.push_back({{"account", entry.account_id},
                       {"asset", entry.asset},
                       {"amount", FormatAmount(entry.amount)},
                       {"balance_after", FormatAmount(entry.balance_after)},
                       {"account_version", entry.account_version}});
  }
  nlohmann::json json = {
      {"id", transaction.id},
      {"kind", OperationKindName(transaction.kind)},
      {"created_at", FormatTimestamp(transaction.created_at)},
      {"metadata", nlohmann::json::parse(transaction.metadata, nullptr, /*allow_exceptions=*/false)},
      {"fingerprint", transaction.fingerprint},
      {"entries", std::move(entries)}};
  if (transaction.reversal_of.has_value()) json["reversal_of"] = *transaction.reversal_of;
  if (transaction.hold.has_value()) json["hold"] = HoldTermsToJson(*transaction.hold);
  if (transaction.hold_id.has_value()) json["hold_id"] = *transaction.hold_id;
  return json;
}

std::string TransactionToJsonText(const Transaction& transaction) {
  if (transaction.hold.has_value()) return Dump(TransactionToJson(transaction));
  // The members in nlohmann's (std::map's) order: by name, bytewise.
  std::string out = "{";
  AppendJsonMember(out, "created_at", FormatTimestamp(transaction.created_at));
  out += ",\"entries\":[";
  for (size_t i = 0; i < transaction.entries.size(); ++i) {
    const Entry& entry = transaction.entries[i];
    out += i == 0 ? "{" : ",{";
    AppendJsonMember(out, "account", entry.account_id);
    absl::StrAppend(&out, ",\"account_version\":", entry.account_version, ",");
    AppendJsonMember(out, "amount", FormatAmount(entry.amount));
    out += ',';
    AppendJsonMember(out, "asset", entry.asset);
    out += ',';
    AppendJsonMember(out, "balance_after", FormatAmount(entry.balance_after));
    out += '}';
  }
  out += "],";
  AppendJsonMember(out, "fingerprint", transaction.fingerprint);
  if (transaction.hold_id.has_value()) {
    out += ',';
    AppendJsonMember(out, "hold_id", *transaction.hold_id);
  }
  out += ',';
  AppendJsonMember(out, "id", transaction.id);
  out += ',';
  AppendJsonMember(out, "kind", OperationKindName(transaction.kind));
  out += ",\"metadata\":";
  out += transaction.metadata == "{}"
             ? std::string("{}")
             : Dump(nlohmann::json::parse(transaction.metadata, nullptr, /*allow_exceptions=*/false));
  if (transaction.reversal_of.has_value()) {
    out += ',';
    AppendJsonMember(out, "reversal_of", *transaction.reversal_of);
  }
  out += '}';
  return out;
}

nlohmann::json OutcomeToJson(const Outcome& outcome) {
  nlohmann::json json = {{"outcome", OutcomeKindName(outcome.kind)}};
  switch (outcome.kind) {
    case OutcomeKind::kCommitted:
    case OutcomeKind::kDuplicate:
      json["transaction"] = TransactionToJson(outcome.transaction);
      break;
    case OutcomeKind::kRejected:
      json["reason"] = RejectionReasonName(outcome.reason);
      json["detail"] = outcome.detail;
      break;
    case OutcomeKind::kFaulted:
      json["error"] = std::string(outcome.fault.message());
      json["code"] = absl::StatusCodeToString(outcome.fault.code());
      json["in_doubt"] = outcome.in_doubt;
      break;
  }
  return json;
}

std::optional<nlohmann::json> DryRunToJson(const absl::StatusOr<Outcome>& result) {
  nlohmann::json json;
  if (result.ok()) {
    json = OutcomeToJson(*result);
  } else if (IsConflict(result.status())) {
    json = {{"outcome", "conflict"}, {"detail", std::string(result.status().message())}};
  } else {
    return std::nullopt;
  }
  json["dry_run"] = true;
  return json;
}

nlohmann::json AccountToJson(const Account& account) {
  return {{"id", account.id},
          {"asset", account.asset},
          {"balance", FormatAmount(account.balance)},
          {"pending_debits", FormatAmount(account.pending_debits)},
          {"pending_credits", FormatAmount(account.pending_credits)},
          {"available", FormatAmount(account.Available())},
          {"version", account.version},
          {"allow_negative", account.allow_negative},
          {"overdraft_limit", FormatAmount(account.overdraft_limit)},
          {"closed", account.closed},
          {"created_at", FormatTimestamp(account.created_at)}};
}

nlohmann::json HistoryEntryToJson(const HistoryEntry& line) {
  const Entry& entry = line.entry;
  nlohmann::json json = {{"account", entry.account_id},
          {"account_version", entry.account_version},
          {"transaction_id", line.transaction_id},
          {"created_at", FormatTimestamp(line.created_at)},
          {"asset", entry.asset},
          {"amount", FormatAmount(entry.amount)},
          {"balance_after", FormatAmount(entry.balance_after)}};
  if (line.kind.has_value()) {
    json["kind"] = OperationKindName(*line.kind);
    json["counterparties"] = line.counterparties;
    nlohmann::json metadata = nlohmann::json::parse(line.metadata, nullptr, /*allow_exceptions=*/false);
    json["metadata"] = metadata.is_discarded() ? nlohmann::json(line.metadata) : std::move(metadata);
  }
  return json;
}

nlohmann::json KeyRecordToJson(const KeyRecord& record) {
  return {{"namespace", record.identity.key_namespace},
          {"tenant", record.identity.scope.tenant},
          {"actor", record.identity.scope.actor},
          {"key", record.identity.key},
          {"fingerprint", record.fingerprint},
          {"transaction_id", record.transaction_id},
          {"created_at", FormatTimestamp(record.created_at)},
          {"expires_at", FormatTimestamp(record.expires_at)}};
}

nlohmann::json EventToJson(const OutboxEvent& event) {
  // The payload is JSON the engine stored; embed it as JSON when it parses, as text if not.
  nlohmann::json payload =
      nlohmann::json::parse(event.payload, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded()) payload = event.payload;
  return {{"sequence", event.sequence},
          {"transaction_id", event.transaction_id},
          {"type", event.type},
          {"created_at", FormatTimestamp(event.created_at)},
          {"payload", std::move(payload)}};
}

nlohmann::json AssetToJson(const Asset& asset) {
  return {{"code", asset.code}, {"scale", asset.scale}};
}

}  // namespace ledger
