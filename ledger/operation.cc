#include "ledger/operation.h"

#include <limits>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/account.h"

namespace ledger {
namespace {

bool MovesBetweenTwoAccounts(OperationKind kind) {
  return kind == OperationKind::kTopUp || kind == OperationKind::kSpend ||
         kind == OperationKind::kTransfer || kind == OperationKind::kPayout;
}

// The kinds with from, to, asset and amount: the moves, and a hold (which reserves them).
bool NamesTwoAccounts(OperationKind kind) {
  return MovesBetweenTwoAccounts(kind) || kind == OperationKind::kHold;
}

bool SettlesAHold(OperationKind kind) {
  return kind == OperationKind::kCapture || kind == OperationKind::kVoid;
}

absl::Status FieldNotAllowed(std::string_view field, OperationKind kind) {
  return absl::InvalidArgumentError(absl::StrCat("field \"", View(field), "\" is not allowed for ",
                                                 View(OperationKindName(kind))));
}

// Fields that belong to other kinds must be left empty, so a payload means one thing.
absl::Status CheckUnusedFields(const Operation& op) {
  if (!NamesTwoAccounts(op.kind)) {
    if (!op.asset.empty()) return FieldNotAllowed("asset", op.kind);
    if (!op.from.empty()) return FieldNotAllowed("from", op.kind);
    if (!op.to.empty()) return FieldNotAllowed("to", op.kind);
    if (op.amount != 0) return FieldNotAllowed("amount", op.kind);
  }
  if (op.fee.has_value() && op.kind != OperationKind::kSpend) return FieldNotAllowed("fee", op.kind);
  if (!op.transaction_id.empty() && op.kind != OperationKind::kReverse) {
    return FieldNotAllowed("transaction_id", op.kind);
  }
  if (!op.postings.empty() && op.kind != OperationKind::kPost) {
    return FieldNotAllowed("postings", op.kind);
  }
  if (op.kind != OperationKind::kHold) {
    if (op.expires_at.has_value()) return FieldNotAllowed("expires_at", op.kind);
    if (op.timeout.has_value()) return FieldNotAllowed("timeout_seconds", op.kind);
  }
  if (!op.hold_id.empty() && !SettlesAHold(op.kind)) return FieldNotAllowed("hold_id", op.kind);
  if (op.capture_amount.has_value() && op.kind != OperationKind::kCapture) {
    return FieldNotAllowed("amount", op.kind);
  }
  return absl::OkStatus();
}

absl::Status ValidateTwoPartyMove(const Operation& op) {
  LEDGER_RETURN_IF_ERROR(Annotate(ValidateAccountId(op.from), "from"));
  LEDGER_RETURN_IF_ERROR(Annotate(ValidateAccountId(op.to), "to"));
  LEDGER_RETURN_IF_ERROR(ValidateAssetCode(op.asset));
  if (op.from == op.to) {
    return absl::InvalidArgumentError("from and to are the same account");
  }
  if (op.amount <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("amount must be positive, got ", op.amount));
  }
  if (!op.fee.has_value()) return absl::OkStatus();
  LEDGER_RETURN_IF_ERROR(Annotate(ValidateAccountId(op.fee->to), "fee.to"));
  if (op.fee->to == op.from) return absl::InvalidArgumentError("fee.to is the paying account");
  if (op.fee->amount <= 0 || op.fee->amount >= op.amount) {
    return absl::InvalidArgumentError(
        "fee.amount must be positive and smaller than amount (it is carved out of it)");
  }
  return absl::OkStatus();
}

// `field`: transaction_id (reverse) or hold_id (capture, void; a hold is a transaction).
absl::Status ValidateTransactionReference(std::string_view field, const std::string& id) {
  if (id.empty() || id.size() > 64) {
    return absl::InvalidArgumentError(absl::StrCat(View(field), " must be 1..64 bytes"));
  }
  for (char c : id) {
    if (c <= 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(absl::StrCat(View(field), " must be printable ASCII"));
    }
  }
  return absl::OkStatus();
}

// The expiry a hold may carry; whether expires_at is still ahead is the ledger's check at
// commit, when it knows the time.
absl::Status ValidateHoldExpiry(const Operation& op) {
  if (op.expires_at.has_value() && op.timeout.has_value()) {
    return absl::InvalidArgumentError("a hold takes expires_at or timeout_seconds, not both");
  }
  if (op.expires_at.has_value() && (*op.expires_at == absl::InfiniteFuture() ||
                                    *op.expires_at == absl::InfinitePast())) {
    return absl::InvalidArgumentError("expires_at must be a finite time");
  }
  if (!op.timeout.has_value()) return absl::OkStatus();
  if (*op.timeout < absl::Seconds(1) || *op.timeout > kHoldTimeoutMax ||
      *op.timeout != absl::Trunc(*op.timeout, absl::Seconds(1))) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeout_seconds must be a whole number of seconds from 1 to ",
                     absl::ToInt64Seconds(kHoldTimeoutMax)));
  }
  return absl::OkStatus();
}

absl::Status ValidateCapture(const Operation& op) {
  LEDGER_RETURN_IF_ERROR(ValidateTransactionReference("hold_id", op.hold_id));
  if (op.capture_amount.has_value() && *op.capture_amount <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a capture's amount must be positive (omit it to capture the whole hold), got ",
        *op.capture_amount));
  }
  return absl::OkStatus();
}

absl::Status ValidatePostings(const std::vector<Posting>& postings) {
  if (postings.size() < 2 || postings.size() > kPostingsPerTransactionMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a post needs 2..", kPostingsPerTransactionMax, " postings, got ", postings.size()));
  }
  std::map<std::string, Amount> sum_by_asset;
  for (size_t i = 0; i < postings.size(); ++i) {
    const Posting& posting = postings[i];
    std::string where = absl::StrCat("postings[", i, "]");
    LEDGER_RETURN_IF_ERROR(Annotate(ValidateAccountId(posting.account_id), where));
    LEDGER_RETURN_IF_ERROR(Annotate(ValidateAssetCode(posting.asset), where));
    if (posting.amount == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": amount must not be zero"));
    }
    if (posting.amount == std::numeric_limits<Amount>::min()) {  // could not be negated
      return absl::InvalidArgumentError(absl::StrCat(where, ": amount is out of range"));
    }
    std::optional<Amount> sum = CheckedAdd(sum_by_asset[posting.asset], posting.amount);
    if (!sum.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("postings of ", posting.asset, " overflow a signed 64-bit sum"));
    }
    sum_by_asset[posting.asset] = *sum;
  }
  for (const auto& [asset, sum] : sum_by_asset) {
    if (sum != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("postings of ", asset, " do not balance: they sum to ", sum));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMetadata(const nlohmann::json& metadata) {
  if (!metadata.is_object()) return absl::InvalidArgumentError("metadata must be a JSON object");
  absl::StatusOr<std::string> canonical = CanonicalJson(metadata);
  if (!canonical.ok()) return Annotate(canonical.status(), "metadata");
  if (canonical->size() > kMetadataBytesMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata is ", canonical->size(), " bytes; the limit is ", kMetadataBytesMax));
  }
  return absl::OkStatus();
}

nlohmann::json AmountJson(Amount amount) { return FormatAmount(amount); }

}  // namespace

Operation Operation::TopUp(std::string from, std::string to, std::string asset, Amount amount) {
  Operation op;
  op.kind = OperationKind::kTopUp;
  op.from = std::move(from);
  op.to = std::move(to);
  op.asset = std::move(asset);
  op.amount = amount;
  return op;
}

Operation Operation::Spend(std::string from, std::string to, std::string asset, Amount amount,
                           std::optional<Fee> fee) {
  Operation op = TopUp(std::move(from), std::move(to), std::move(asset), amount);
  op.kind = OperationKind::kSpend;
  op.fee = std::move(fee);
  return op;
}

Operation Operation::Transfer(std::string from, std::string to, std::string asset,
                              Amount amount) {
  Operation op = TopUp(std::move(from), std::move(to), std::move(asset), amount);
  op.kind = OperationKind::kTransfer;
  return op;
}

Operation Operation::Payout(std::string from, std::string to, std::string asset, Amount amount) {
  Operation op = TopUp(std::move(from), std::move(to), std::move(asset), amount);
  op.kind = OperationKind::kPayout;
  return op;
}

Operation Operation::Reverse(std::string transaction_id) {
  Operation op;
  op.kind = OperationKind::kReverse;
  op.transaction_id = std::move(transaction_id);
  return op;
}

Operation Operation::Hold(std::string from, std::string to, std::string asset, Amount amount,
                          std::optional<absl::Time> expires_at) {
  Operation op = TopUp(std::move(from), std::move(to), std::move(asset), amount);
  op.kind = OperationKind::kHold;
  op.expires_at = expires_at;
  return op;
}

Operation Operation::Capture(std::string hold_id, std::optional<Amount> amount) {
  Operation op;
  op.kind = OperationKind::kCapture;
  op.hold_id = std::move(hold_id);
  op.capture_amount = amount;
  return op;
}

Operation Operation::Void(std::string hold_id) {
  Operation op;
  op.kind = OperationKind::kVoid;
  op.hold_id = std::move(hold_id);
  return op;
}

Operation Operation::Post(std::vector<Posting> postings) {
  Operation op;
  op.kind = OperationKind::kPost;
  op.postings = std::move(postings);
  return op;
}

absl::Status ValidateOperation(const Operation& op) {
  if (op.kind == OperationKind::kExpire) {
    return absl::InvalidArgumentError(
        "expire is not submitted: the ledger records a hold's expiry itself (ExpireHolds)");
  }
  LEDGER_RETURN_IF_ERROR(CheckUnusedFields(op));
  LEDGER_RETURN_IF_ERROR(ValidateMetadata(op.metadata));
  switch (op.kind) {
    case OperationKind::kHold:
      LEDGER_RETURN_IF_ERROR(ValidateHoldExpiry(op));
      return ValidateTwoPartyMove(op);
    case OperationKind::kCapture:
      return ValidateCapture(op);
    case OperationKind::kVoid:
      return ValidateTransactionReference("hold_id", op.hold_id);
    case OperationKind::kReverse:
      return ValidateTransactionReference("transaction_id", op.transaction_id);
    case OperationKind::kPost:
      return ValidatePostings(op.postings);
    default:
      return ValidateTwoPartyMove(op);
  }
}

nlohmann::json OperationPayload(const Operation& op) {
  nlohmann::json payload = {{"kind", OperationKindName(op.kind)}, {"metadata", op.metadata}};
  if (NamesTwoAccounts(op.kind)) {
    payload["asset"] = op.asset;
    payload["from"] = op.from;
    payload["to"] = op.to;
    payload["amount"] = AmountJson(op.amount);
    if (op.fee.has_value()) {
      payload["fee"] = {{"to", op.fee->to}, {"amount", AmountJson(op.fee->amount)}};
    }
    if (op.expires_at.has_value()) payload["expires_at"] = FormatTimestamp(*op.expires_at);
    if (op.timeout.has_value()) payload["timeout_seconds"] = absl::ToInt64Seconds(*op.timeout);
  } else if (op.kind == OperationKind::kReverse) {
    payload["transaction_id"] = op.transaction_id;
  } else if (SettlesAHold(op.kind)) {
    payload["hold_id"] = op.hold_id;
    if (op.capture_amount.has_value()) payload["amount"] = AmountJson(*op.capture_amount);
  } else {
    nlohmann::json postings = nlohmann::json::array();
    for (const Posting& posting : op.postings) {
      postings.push_back({{"account", posting.account_id},
                          {"asset", posting.asset},
                          {"amount", AmountJson(posting.amount)}});
    }
    payload["postings"] = std::move(postings);
  }
  return payload;
}

std::vector<Posting> PostingsOf(const Operation& op) {
  switch (op.kind) {
    case OperationKind::kPost:
      return op.postings;
    case OperationKind::kSpend:
      if (op.fee.has_value()) {
        return {{op.from, op.asset, -op.amount},
                {op.to, op.asset, op.amount - op.fee->amount},
                {op.fee->to, op.asset, op.fee->amount}};
      }
      [[fallthrough]];
    case OperationKind::kTopUp:
    case OperationKind::kTransfer:
    case OperationKind::kPayout:
      return {{op.from, op.asset, -op.amount}, {op.to, op.asset, op.amount}};
    case OperationKind::kReverse:
    case OperationKind::kHold:
    case OperationKind::kCapture:
    case OperationKind::kVoid:
    case OperationKind::kExpire:
      break;
  }
  return {};
}

std::vector<Posting> CapturePostings(const HoldTerms& terms, Amount amount) {
  return {{terms.from, terms.asset, -amount}, {terms.to, terms.asset, amount}};
}

std::vector<Posting> ReversalPostings(const Transaction& original) {
  std::vector<Posting> postings;
  postings.reserve(original.entries.size());
  for (const Entry& entry : original.entries) {
    postings.push_back({entry.account_id, entry.asset, -entry.amount});
  }
  return postings;
}

}  // namespace ledger
