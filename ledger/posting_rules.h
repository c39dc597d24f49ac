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

#include "ledger/account.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "ledger/transaction.h"

namespace ledger::posting_rules {

using AccountsById = std::map<std::string, Account, std::less<>>;

// The accounts the postings touch, sorted and distinct: the one lock order.
std::vector<std::string> SortedDistinctAccounts(const std::vector<Posting>& postings);

// Account existence, state and asset, each rule over all postings before the next.
std::optional<Outcome> CheckAccountsUsable(const std::vector<Posting>& postings,
                                           const AccountsById& accounts);

// Applies the postings in order to `accounts` (copies the caller owns), producing the
// entries with each account's running balance and version. Rejects on overflow, then on
// any entry leaving an account below its floor.
std::variant<Outcome, std::vector<Entry>> BuildEntries(const std::vector<Posting>& postings,
                                                       AccountsById& accounts);

// a + b, or the largest amount when it would overflow: usage totals only compare.
Amount SaturatingAdd(Amount a, Amount b);

}  // namespace ledger::posting_rules

#endif  // LEDGER_LEDGER_POSTING_RULES_H_
