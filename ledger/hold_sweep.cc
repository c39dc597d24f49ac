// Ledger::ExpireHolds: records the expiry of lapsed holds. Until it runs, a lapsed hold
// already reserves nothing (the ledger subtracts it when it reads or checks an account);
// the sweep makes the stored pending amounts and the hold's status say so, and gives
// consumers an expire transaction and its event.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/posting_rules.h"

namespace ledger {
namespace {

// Holds per sweep transaction: bounds one transaction's locks and writes.
constexpr int64_t kExpireHoldsPageMax = 100;
constexpr char kCommittedEventType[] = "transaction.committed";

}  // namespace

absl::StatusOr<int64_t> Ledger::ExpireHolds() {
  int64_t total = 0;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> lapsed,
                            engine_->ListLapsedHolds(clock_->Now(), kExpireHoldsPageMax));
    if (lapsed.empty()) return total;
    int faults = 0;
    while (true) {
      absl::StatusOr<int64_t> expired = ExpireHoldPage(lapsed);
      if (expired.ok()) {
        total += *expired;
        break;
      }
      // Rolled back (a deadlock, or a settlement won the race): safe to run again.
      if (!IsRetryable(expired.status()) || ++faults >= options_.attempts_max) {
        return expired.status();
      }
    }
    if (static_cast<int64_t>(lapsed.size()) < kExpireHoldsPageMax) return total;
  }
}

absl::StatusOr<int64_t> Ledger::ExpireHoldPage(const std::vector<Hold>& holds) {
  absl::Time now = clock_->Now();
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> tx, engine_->Begin(BeginOptions{}));
  std::vector<std::string> hold_ids;
  std::vector<std::string> account_ids;
  for (const Hold& hold : holds) {
    hold_ids.push_back(hold.id);
    account_ids.push_back(hold.terms.from);
    account_ids.push_back(hold.terms.to);
  }
  std::sort(account_ids.begin(), account_ids.end());
  account_ids.erase(std::unique(account_ids.begin(), account_ids.end()), account_ids.end());
  // The lock order of every submit; a capture or void of these holds waits or has won.
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> locked, tx->LockAccounts(account_ids));
  posting_rules::AccountsById accounts;
  for (Account& account : locked) accounts.emplace(account.id, std::move(account));
  LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> current, tx->LoadHolds(hold_ids));
  int64_t expired = 0;
  for (const Hold& hold : current) {
    if (!hold.LapsedAt(now)) continue;  // settled since it was listed
    posting_rules::Release(hold.terms, accounts);
    Transaction transaction;
    transaction.id = NewTransactionId(now);
    transaction.kind = OperationKind::kExpire;
    transaction.created_at = now;
    transaction.hold_id = hold.id;
    std::vector<Account> updated = {accounts.at(hold.terms.from), accounts.at(hold.terms.to)};
    std::sort(updated.begin(), updated.end(),
              [](const Account& a, const Account& b) { return a.id < b.id; });
    LEDGER_RETURN_IF_ERROR(tx->WriteTransaction(transaction, updated));
    LEDGER_RETURN_IF_ERROR(tx->AppendEvent(OutboxEvent{
        0, transaction.id, kCommittedEventType, TransactionToJson(transaction).dump(), now}));
    ++expired;
  }
  if (expired == 0) {
    tx->Rollback();
    return 0;
  }
  LEDGER_RETURN_IF_ERROR(tx->Commit());
  return expired;
}

}  // namespace ledger
