#include "tests/support/hold_writes.h"

#include <memory>
#include <utility>

#include "base/status.h"

namespace ledger::testing {
namespace {

std::vector<std::string> Sorted(const std::string& a, const std::string& b) {
  return a < b ? std::vector<std::string>{a, b} : std::vector<std::string>{b, a};
}

}  // namespace

Transaction HoldTransaction(const std::string& id, HoldTerms terms, absl::Time created_at) {
  Transaction transaction{.id = id, .kind = OperationKind::kHold, .created_at = created_at};
  transaction.fingerprint = "fingerprint-" + id;
  transaction.hold = std::move(terms);
  return transaction;
}

Transaction Settlement(const std::string& id, OperationKind kind, const std::string& hold_id,
                       absl::Time created_at) {
  Transaction transaction{.id = id, .kind = kind, .created_at = created_at};
  transaction.fingerprint = kind == OperationKind::kExpire ? "" : "fingerprint-" + id;
  transaction.hold_id = hold_id;
  return transaction;
}

absl::Status WriteThroughStorage(Engine& engine, const Transaction& transaction,
                                 const std::vector<std::string>& sorted_ids,
                                 const std::function<void(std::vector<Account>&)>& change) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> storage, engine.Begin({}));
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> accounts, storage->LockAccounts(sorted_ids));
  change(accounts);
  LEDGER_RETURN_IF_ERROR(storage->WriteTransaction(transaction, accounts));
  return storage->Commit();
}

absl::Status PlaceHold(Engine& engine, const Transaction& hold) {
  const HoldTerms& terms = *hold.hold;
  return WriteThroughStorage(
      engine, hold, Sorted(terms.from, terms.to), [&](std::vector<Account>& accounts) {
        for (Account& account : accounts) {
          if (account.id == terms.from) account.pending_debits += terms.amount;
          if (account.id == terms.to) account.pending_credits += terms.amount;
        }
      });
}

absl::Status SettleHold(Engine& engine, const Transaction& settlement, const HoldTerms& terms,
                        Amount captured) {
  // The capture's entries are added once the locked accounts are known, before the write.
  Transaction written = settlement;
  return WriteThroughStorage(
      engine, written, Sorted(terms.from, terms.to), [&](std::vector<Account>& accounts) {
        for (Account& account : accounts) {
          const bool from = account.id == terms.from;
          (from ? account.pending_debits : account.pending_credits) -= terms.amount;
          if (captured == 0) continue;
          account.balance += from ? -captured : captured;
          account.version += 1;
          written.entries.push_back({account.id, terms.asset, from ? -captured : captured,
                                     account.balance, account.version});
        }
      });
}

}  // namespace ledger::testing
