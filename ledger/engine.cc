#include "ledger/engine.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ledger {
namespace {

// The default of the many-id reads: `read_one` per id, keeping those that exist.
template <typename ReadOne>
absl::StatusOr<std::vector<Transaction>> EachThatExists(const std::vector<std::string>& ids,
                                                        ReadOne read_one) {
  std::vector<Transaction> transactions;
  for (const std::string& id : ids) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> transaction, read_one(id));
    if (transaction.has_value()) transactions.push_back(*std::move(transaction));
  }
  return transactions;
}

}  // namespace

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
  return EachThatExists(ids, [this](std::string_view id) { return LoadTransaction(id); });
}

absl::StatusOr<SqlRows> StorageTransaction::RunCallerSql(std::string_view,
                                                         const std::vector<SqlValue>&) {
  return absl::UnimplementedError(
      "this engine runs no SQL: a unit of work's own statements need a SQL engine (sqlite, "
      "postgres, mysql)");
}

absl::StatusOr<void*> StorageTransaction::NativeHandle() {
  return absl::UnimplementedError("this engine has no native database handle");
}

absl::StatusOr<std::vector<Transaction>> Engine::GetTransactions(
    const std::vector<std::string>& ids) {
  return EachThatExists(ids, [this](std::string_view id) { return GetTransaction(id); });
}

}  // namespace ledger
