#include "ledger/outcome.h"

#include <array>
#include <utility>

#include "absl/time/time.h"
#include "base/status.h"
#include "ledger/amount.h"

namespace ledger {
namespace {

constexpr std::array<std::string_view, 4> kOutcomeNames = {"committed", "duplicate", "rejected",
                                                           "faulted"};
constexpr std::array<std::string_view, 10> kReasonNames = {
    "transaction_not_found", "not_reversible",     "already_reversed",
    "account_not_found",     "account_closed",     "asset_mismatch",
    "balance_overflow",      "insufficient_funds", "velocity_count_exceeded",
    "velocity_amount_exceeded"};

}  // namespace

std::string_view OutcomeKindName(OutcomeKind kind) {
  return kOutcomeNames[static_cast<size_t>(kind)];
}

std::string_view RejectionReasonName(RejectionReason reason) {
  return kReasonNames[static_cast<size_t>(reason)];
}

Outcome Outcome::Committed(Transaction transaction) {
  Outcome outcome;
  outcome.kind = OutcomeKind::kCommitted;
  outcome.transaction = std::move(transaction);
  return outcome;
}

Outcome Outcome::Duplicate(Transaction transaction) {
  Outcome outcome = Committed(std::move(transaction));
  outcome.kind = OutcomeKind::kDuplicate;
  return outcome;
}

Outcome Outcome::Rejected(RejectionReason reason, std::string detail) {
  Outcome outcome;
  outcome.kind = OutcomeKind::kRejected;
  outcome.reason = reason;
  outcome.detail = std::move(detail);
  return outcome;
}

Outcome Outcome::Faulted(absl::Status fault) {
  Outcome outcome;
  outcome.kind = OutcomeKind::kFaulted;
  outcome.in_doubt = TagOf(fault) == ErrorTag::kInDoubt;
  outcome.fault = std::move(fault);
  return outcome;
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
  return json;
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

}  // namespace ledger
