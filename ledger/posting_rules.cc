#include "ledger/posting_rules.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ledger::posting_rules {

std::vector<std::string> SortedDistinctAccounts(const std::vector<Posting>& postings) {
  std::vector<std::string> ids;
  for (const Posting& posting : postings) ids.push_back(posting.account_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::optional<Outcome> CheckAccountsUsable(const std::vector<Posting>& postings,
                                           const AccountsById& accounts) {
  for (const Posting& posting : postings) {
    if (accounts.count(posting.account_id) == 0) {
      return Outcome::Rejected(RejectionReason::kAccountNotFound,
                               absl::StrCat("account ", posting.account_id, " does not exist"));
    }
  }
  for (const Posting& posting : postings) {
    if (accounts.at(posting.account_id).closed) {
      return Outcome::Rejected(RejectionReason::kAccountClosed,
                               absl::StrCat("account ", posting.account_id, " is closed"));
    }
  }
  for (const Posting& posting : postings) {
    const Account& account = accounts.at(posting.account_id);
    if (account.asset != posting.asset) {
      return Outcome::Rejected(
          RejectionReason::kAssetMismatch,
          absl::StrCat("account ", account.id, " holds ", account.asset, ", not ", posting.asset));
    }
  }
  return std::nullopt;
}

std::variant<Outcome, std::vector<Entry>> BuildEntries(const std::vector<Posting>& postings,
                                                       AccountsById& accounts) {
  std::vector<Entry> entries;
  for (const Posting& posting : postings) {
    Account& account = accounts.at(posting.account_id);
    std::optional<Amount> balance = CheckedAdd(account.balance, posting.amount);
    if (!balance.has_value()) {
      return Outcome::Rejected(RejectionReason::kBalanceOverflow,
                               absl::StrCat("account ", account.id, "'s balance would overflow"));
    }
    account.balance = *balance;
    account.version += 1;
    entries.push_back(
        {account.id, posting.asset, posting.amount, account.balance, account.version});
  }
  for (const Entry& entry : entries) {
    const Account& account = accounts.at(entry.account_id);
    if (entry.balance_after < account.BalanceFloor()) {
      return Outcome::Rejected(
          RejectionReason::kInsufficientFunds,
          absl::StrCat("account ", account.id, " would go to ", entry.balance_after,
                       ", below its floor of ", account.BalanceFloor()));
    }
  }
  return entries;
}

Amount SaturatingAdd(Amount a, Amount b) {
  return CheckedAdd(a, b).value_or(std::numeric_limits<Amount>::max());
}

}  // namespace ledger::posting_rules
