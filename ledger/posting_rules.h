// The business rules of a posting plan, as pure functions over accounts already read
// under their locks: which accounts a plan touches, whether they can take it, and the
// entries it makes. The submit pipeline (batch_attempt.cc) calls them in this order, so
// the reported reason follows RejectionReason's precedence.
//
// Internal to ledger/. Thread-safe: pure functions of their arguments.
#ifndef LEDGER_LEDGER_POSTING_RULES_H_
#define LEDGER_LEDGER_POSTING_RULES_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "ledger/account.h"
#include "ledger/hold.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "ledger/transaction.h"

namespace ledger::posting_rules {

using AccountsById = std::map<std::string, Account, std::less<>>;
// Per account, the part of its stored pending debits that no longer reserves: holds past
// their expiry whose expiry is not recorded yet (ledger/hold.h). Absent: none.
using LapsedDebits = std::map<std::string, Amount, std::less<>>;

// What the account may still spend down to its floor: balance minus the pending debits
// that still reserve.
Amount AvailableOf(const Account& account, const LapsedDebits& lapsed);

// Sorts account ids and drops repeats: the one lock order (byte-wise by id).
void SortDistinct(std::vector<std::string>& ids);

// Account existence, state and asset, each rule over all postings before the next.
std::optional<Outcome> CheckAccountsUsable(const std::vector<Posting>& postings,
                                           const AccountsById& accounts);

// Applies the postings in order to `accounts` (copies the caller owns), producing the
// entries with each account's running balance and version. Rejects on overflow, then on
// any entry leaving an account's available balance below its floor.
std::variant<Outcome, std::vector<Entry>> BuildEntries(const std::vector<Posting>& postings,
                                                       AccountsById& accounts,
                                                       const LapsedDebits& lapsed);

// Whether hold `id` can still be captured or voided at `now`: the rejection if not, in
// RejectionReason's order (not found, captured, voided, expired).
std::optional<Outcome> CheckHoldSettleable(const std::string& id, const std::optional<Hold>& hold,
                                           absl::Time now);

// Reserves the hold's amount in `accounts` (copies the caller owns, holding terms.from and
// terms.to): pending debits of from, pending credits of to. Rejects on overflow, then when
// from's available balance would go below its floor.
std::optional<Outcome> Reserve(const HoldTerms& terms, AccountsById& accounts,
                               const LapsedDebits& lapsed);
// Undoes Reserve for a hold that was pending.
void Release(const HoldTerms& terms, AccountsById& accounts);

// a + b, or the largest amount when it would overflow: usage totals only compare.
Amount SaturatingAdd(Amount a, Amount b);

}  // namespace ledger::posting_rules

#endif  // LEDGER_LEDGER_POSTING_RULES_H_
