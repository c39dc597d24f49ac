#include "ledger/engine.h"

#include <utility>

#include "base/status.h"

namespace ledger {

absl::StatusOr<std::vector<std::optional<KeyRecord>>> StorageTransaction::ClaimKeys(
    const std::vector<KeyIdentity>& identities) {
  std::vector<std::optional<KeyRecord>> records;
  records.reserve(identities.size());
  for (const KeyIdentity& identity : identities) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record, ClaimKey(identity));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<Transaction>> StorageTransaction::LoadTransactions(
    const std::vector<std::string>& ids) {
  std::vector<Transaction> transactions;
  for (const std::string& id : ids) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> transaction, LoadTransaction(id));
    if (transaction.has_value()) transactions.push_back(*std::move(transaction));
  }
  return transactions;
}

absl::StatusOr<std::vector<Transaction>> Engine::GetTransactions(
    const std::vector<std::string>& ids) {
  std::vector<Transaction> transactions;
  for (const std::string& id : ids) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> transaction, GetTransaction(id));
    if (transaction.has_value()) transactions.push_back(*std::move(transaction));
  }
  return transactions;
}

}  // namespace ledger
