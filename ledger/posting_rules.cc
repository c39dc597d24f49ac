#include "ledger/posting_rules.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ledger::posting_rules {
namespace {

// Says what the account would have available and what its floor is, in the minor units
// every amount of the API uses, naming the asset so the number reads as money.
std::string InsufficientFundsDetail(const Account& account, Amount available) {
  return absl::StrCat("account ", account.id, " would have an available balance of ", available,
                      ", below its floor of ", account.BalanceFloor(), ", in minor units of ",
                      account.asset);
}

}  // namespace

void SortDistinct(std::vector<std::string>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
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

Amount AvailableOf(const Account& account, const LapsedDebits& lapsed) {
  Account reserving = account;
  if (auto found = lapsed.find(account.id); found != lapsed.end()) {
    reserving.pending_debits -= found->second;
  }
  return reserving.Available();
}

std::variant<Outcome, std::vector<Entry>> BuildEntries(const std::vector<Posting>& postings,
                                                       AccountsById& accounts,
                                                       const LapsedDebits& lapsed) {
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
    Account after = accounts.at(entry.account_id);
    after.balance = entry.balance_after;
    Amount available = AvailableOf(after, lapsed);
    if (available < after.BalanceFloor()) {
      return Outcome::Rejected(RejectionReason::kInsufficientFunds,
                               InsufficientFundsDetail(after, available));
    }
  }
  return entries;
}

std::optional<Outcome> CheckHoldSettleable(const std::string& id, const std::optional<Hold>& hold,
                                           absl::Time now) {
  if (!hold.has_value()) {
    return Outcome::Rejected(RejectionReason::kHoldNotFound, absl::StrCat("no hold ", id));
  }
  std::string settled_by = hold->settled_by.value_or("");
  switch (hold->status) {
    case HoldStatus::kCaptured:
      return Outcome::Rejected(RejectionReason::kHoldCaptured,
                               absl::StrCat("hold ", id, " was captured by ", settled_by));
    case HoldStatus::kVoided:
      return Outcome::Rejected(RejectionReason::kHoldVoided,
                               absl::StrCat("hold ", id, " was voided by ", settled_by));
    case HoldStatus::kExpired:
      return Outcome::Rejected(RejectionReason::kHoldExpired,
                               absl::StrCat("hold ", id, " expired"));
    case HoldStatus::kPending:
      break;
  }
  if (hold->LapsedAt(now)) {
    return Outcome::Rejected(RejectionReason::kHoldExpired,
                             absl::StrCat("hold ", id, " expired at ",
                                          FormatTimestamp(*hold->terms.expires_at)));
  }
  return std::nullopt;
}

std::optional<Outcome> Reserve(const HoldTerms& terms, AccountsById& accounts,
                               const LapsedDebits& lapsed) {
  Account& from = accounts.at(terms.from);
  Account& to = accounts.at(terms.to);
  std::optional<Amount> debits = CheckedAdd(from.pending_debits, terms.amount);
  std::optional<Amount> credits = CheckedAdd(to.pending_credits, terms.amount);
  if (!debits.has_value() || !credits.has_value()) {
    return Outcome::Rejected(
        RejectionReason::kBalanceOverflow,
        absl::StrCat("account ", !debits.has_value() ? from.id : to.id,
                     "'s pending amount would overflow"));
  }
  from.pending_debits = *debits;
  to.pending_credits = *credits;
  Amount available = AvailableOf(from, lapsed);
  if (available < from.BalanceFloor()) {
    return Outcome::Rejected(RejectionReason::kInsufficientFunds,
                             InsufficientFundsDetail(from, available));
  }
  return std::nullopt;
}

void Release(const HoldTerms& terms, AccountsById& accounts) {
  accounts.at(terms.from).pending_debits -= terms.amount;
  accounts.at(terms.to).pending_credits -= terms.amount;
}

Amount SaturatingAdd(Amount a, Amount b) {
  return CheckedAdd(a, b).value_or(std::numeric_limits<Amount>::max());
}

}  // namespace ledger::posting_rules
