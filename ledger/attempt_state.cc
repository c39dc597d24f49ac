#include "ledger/attempt_state.h"

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"

namespace ledger::internal {
namespace {

using posting_rules::AccountsById;

// What the account has debited since `since` as committed: its debit entries, and the
// holds out of it still reserving at `now` (when it had pending debits at all).
absl::StatusOr<DebitUsage> LoadUsage(StorageTransaction& tx, const std::string& account_id,
                                     absl::Time now, absl::Time since, bool has_holds) {
  LEDGER_ASSIGN_OR_RETURN(DebitUsage usage, tx.LoadDebitUsage(account_id, since));
  if (!has_holds) return usage;
  LEDGER_ASSIGN_OR_RETURN(PendingHoldTotals holds, tx.LoadHoldTotals(account_id, now, since));
  usage.count += holds.reserving_since.count;
  usage.amount = posting_rules::SaturatingAdd(usage.amount, holds.reserving_since.amount);
  return usage;
}

}  // namespace

absl::Status AttemptState::LoadLapsedDebits(StorageTransaction& tx, const AccountsById& touched) {
  for (const auto& [id, account] : touched) {
    if (held_from.count(id) == 0 || account.allow_negative) continue;  // nothing to check
    if (!lapsed_loaded.insert(id).second) continue;
    LEDGER_ASSIGN_OR_RETURN(PendingHoldTotals totals, tx.LoadHoldTotals(id, now, now));
    if (totals.lapsed_debits > 0) lapsed[id] = totals.lapsed_debits;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Outcome>> AttemptState::CheckVelocity(
    StorageTransaction& tx, const std::vector<VelocityLimit>& limits,
    const std::vector<Posting>& postings, const AccountsById& accounts) {
  if (limits.empty()) return std::nullopt;
  std::map<std::string, DebitUsage> debits;  // this operation's own debits
  for (const Posting& posting : postings) {
    auto account = accounts.find(posting.account_id);
    LEDGER_CHECK(account != accounts.end())
        << "velocity of a posting to " << posting.account_id << ", an account not locked";
    if (posting.amount >= 0 || account->second.allow_negative) continue;
    DebitUsage& totals = debits[posting.account_id];
    totals.count += 1;
    totals.amount = posting_rules::SaturatingAdd(totals.amount, -posting.amount);
  }
  std::optional<Outcome> amount_rejection;  // reported only if no count limit is hit
  for (const VelocityLimit& limit : limits) {
    for (const auto& [account_id, own] : debits) {
      LEDGER_ASSIGN_OR_RETURN(DebitUsage usage, UsageSince(tx, account_id, limit.window));
      int64_t count = usage.count + own.count;
      Amount amount = posting_rules::SaturatingAdd(usage.amount, own.amount);
      std::string window = absl::FormatDuration(limit.window);
      if (limit.debit_count_max > 0 && count > limit.debit_count_max) {
        return Outcome::Rejected(
            RejectionReason::kVelocityCountExceeded,
            absl::StrCat("account ", account_id, " would make ", count, " debits in ", window,
                         "; the limit is ", limit.debit_count_max));
      }
      if (limit.debit_amount_max > 0 && amount > limit.debit_amount_max &&
          !amount_rejection.has_value()) {
        amount_rejection = Outcome::Rejected(
            RejectionReason::kVelocityAmountExceeded,
            absl::StrCat("account ", account_id, " would debit ", amount, " in ", window,
                         "; the limit is ", limit.debit_amount_max));
      }
    }
  }
  return amount_rejection;
}

absl::StatusOr<DebitUsage> AttemptState::UsageSince(StorageTransaction& tx,
                                                    const std::string& account_id,
                                                    absl::Duration window) {
  auto [stored, inserted] = stored_usage.try_emplace({account_id, window});
  if (inserted) {
    absl::StatusOr<DebitUsage> loaded =
        LoadUsage(tx, account_id, now, now - window, held_from.count(account_id) > 0);
    if (!loaded.ok()) {
      stored_usage.erase(stored);
      return loaded.status();
    }
    stored->second = *loaded;
  }
  // The holds this attempt settles still count in the database's usage; their captures'
  // entries count as this attempt's own debits.
  DebitUsage usage = stored->second;
  for (const Hold& hold : settled) {
    if (hold.terms.from != account_id || hold.created_at < now - window) continue;
    usage.count -= 1;
    usage.amount -= hold.terms.amount;
  }
  // This attempt's own debits all carry `now`, inside every window.
  const DebitUsage& own = own_debits[account_id];
  usage.count += own.count;
  usage.amount = posting_rules::SaturatingAdd(usage.amount, own.amount);
  return usage;
}

void AttemptState::Commit(Transaction transaction, std::vector<Account> updated,
                          std::optional<KeyRecord> record, const std::string& encoded_identity) {
  for (const Account& account : updated) accounts[account.id] = account;
  std::vector<std::pair<std::string, Amount>> debits;  // counted as LoadUsage counts them
  for (const Entry& entry : transaction.entries) {
    if (entry.amount < 0) debits.emplace_back(entry.account_id, -entry.amount);
  }
  if (transaction.hold.has_value()) debits.emplace_back(transaction.hold->from, transaction.hold->amount);
  for (const auto& [account_id, amount] : debits) {
    DebitUsage& own = own_debits[account_id];
    own.count += 1;
    own.amount = posting_rules::SaturatingAdd(own.amount, amount);
  }
  if (record.has_value()) records[encoded_identity] = *record;
  committing.emplace(transaction.id, writes.size());
  writes.push_back(PendingWrite{std::move(transaction), std::move(updated), std::move(record)});
}

}  // namespace ledger::internal
