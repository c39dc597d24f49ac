#include "ledger/outcome.h"

#include <utility>

#include "absl/time/time.h"
#include "base/status.h"
#include "ledger/amount.h"

namespace ledger {

// Switches without a default: -Wswitch reports a value without a name. The names are
// part of the JSON output and the CLI's contract.
std::string_view OutcomeKindName(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kCommitted: return "committed";
    case OutcomeKind::kDuplicate: return "duplicate";
    case OutcomeKind::kRejected: return "rejected";
    case OutcomeKind::kFaulted: return "faulted";
  }
  return "unknown";  // only for a value cast from outside the enumeration
}

std::string_view RejectionReasonName(RejectionReason reason) {
  switch (reason) {
    case RejectionReason::kTransactionNotFound: return "transaction_not_found";
    case RejectionReason::kNotReversible: return "not_reversible";
    case RejectionReason::kAlreadyReversed: return "already_reversed";
    case RejectionReason::kHoldNotFound: return "hold_not_found";
    case RejectionReason::kHoldCaptured: return "hold_captured";
    case RejectionReason::kHoldVoided: return "hold_voided";
    case RejectionReason::kHoldExpired: return "hold_expired";
    case RejectionReason::kCaptureExceedsHold: return "capture_exceeds_hold";
    case RejectionReason::kAccountNotFound: return "account_not_found";
    case RejectionReason::kAccountClosed: return "account_closed";
    case RejectionReason::kAssetMismatch: return "asset_mismatch";
    case RejectionReason::kBalanceOverflow: return "balance_overflow";
    case RejectionReason::kInsufficientFunds: return "insufficient_funds";
    case RejectionReason::kVelocityCountExceeded: return "velocity_count_exceeded";
    case RejectionReason::kVelocityAmountExceeded: return "velocity_amount_exceeded";
    case RejectionReason::kBatchItemFailed: return "batch_item_failed";
  }
  return "unknown";  // only for a value cast from outside the enumeration
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

}  // namespace ledger
