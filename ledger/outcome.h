// The result of a submit: exactly one of committed, duplicate, rejected or faulted.
// Bad input, a conflicting payload and an in-progress key are errors (absl::Status)
// instead, because they say nothing about the operation's effect: nothing was written.
// Its JSON form is ledger/json.h's OutcomeToJson.
#ifndef LEDGER_LEDGER_OUTCOME_H_
#define LEDGER_LEDGER_OUTCOME_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "ledger/transaction.h"

namespace ledger {

enum class OutcomeKind {
  kCommitted,  // first time the key was seen: posted, key consumed
  kDuplicate,  // key already committed with the same fingerprint: replayed, nothing run
  kRejected,   // a business rule declined it: rolled back, key unused
  kFaulted,    // infrastructure error: nothing written, or (in_doubt) maybe committed
};

// Why a submit was rejected, in order of precedence: when several apply, the first
// one listed is reported. Complete: every business rule maps to exactly one reason.
enum class RejectionReason {
  kTransactionNotFound,      // reverse: no such transaction
  kNotReversible,            // reverse: the target is itself a reversal
  kAlreadyReversed,          // reverse: the target was reversed before
  kHoldNotFound,             // capture, void: no such hold
  kHoldCaptured,             // capture, void: the hold was captured before
  kHoldVoided,               // capture, void: the hold was voided before
  kHoldExpired,              // capture, void: the hold is past its expires_at
  kCaptureExceedsHold,       // capture: capture_amount is more than the hold reserves
  kAccountNotFound,
  kAccountClosed,
  kAssetMismatch,            // the posting's asset differs from the account's
  kBalanceOverflow,          // the resulting balance would not fit in 64 bits
  kInsufficientFunds,        // below zero, or below the overdraft limit
  kVelocityCountExceeded,    // too many debits in the window
  kVelocityAmountExceeded,   // too much debited in the window
  kBatchItemFailed,          // atomic batch: another item was not committed, so none is
};

std::string_view OutcomeKindName(OutcomeKind kind);
std::string_view RejectionReasonName(RejectionReason reason);

struct Outcome {
  OutcomeKind kind = OutcomeKind::kFaulted;
  Transaction transaction;  // committed and duplicate: identical for both
  RejectionReason reason = RejectionReason::kAccountNotFound;  // rejected
  std::string detail;       // rejected: which account or limit, in words
  absl::Status fault;       // faulted
  bool in_doubt = false;    // faulted during COMMIT: only a resend with the same key is safe

  static Outcome Committed(Transaction transaction);
  static Outcome Duplicate(Transaction transaction);
  static Outcome Rejected(RejectionReason reason, std::string detail);
  static Outcome Faulted(absl::Status fault);

  bool ok() const { return kind == OutcomeKind::kCommitted || kind == OutcomeKind::kDuplicate; }
};

}  // namespace ledger

#endif  // LEDGER_LEDGER_OUTCOME_H_
