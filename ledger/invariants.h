// Invariants of a submit's posting plan, checked in every build just before the plan is
// written, so a bug in the pipeline (or a corrupt row it read) can not be committed:
//
//   1. per asset, the entries sum to zero;
//   2. per account, the entries continue the locked account: versions contiguous
//      (locked version + 1, + 2, ...), each balance_after the previous balance plus the
//      amount, and the account as written carries the last entry's balance and version,
//      and no pending amount below zero;
//   3. no entry leaves an account below its floor (BalanceFloor: 0, or -overdraft_limit,
//      unbounded only for allow_negative accounts).
//
// The business rules reject bad requests before this point (InvalidArgument for an
// unbalanced post, InsufficientFunds for a short balance); these checks run the same
// properties again on the final plan. A violation is a programmer error, not a user
// error: InternalError tagged invariant_violated (IsInvariantViolation), the submit
// writes nothing, and it is neither retried nor reported as an Outcome. Internal, not
// DataLoss: the check caught it before anything was lost.
//
// Thread-safe: a pure function of its arguments.
#ifndef LEDGER_LEDGER_INVARIANTS_H_
#define LEDGER_LEDGER_INVARIANTS_H_

#include <vector>

#include "absl/status/status.h"
#include "ledger/account.h"
#include "ledger/transaction.h"

namespace ledger {

// `locked`: the accounts as read under their locks; `entries`: the plan's entries in
// posting order; `updated`: the accounts as they are about to be written.
absl::Status CheckPostingInvariants(const std::vector<Account>& locked,
                                    const std::vector<Entry>& entries,
                                    const std::vector<Account>& updated);

}  // namespace ledger

#endif  // LEDGER_LEDGER_INVARIANTS_H_
