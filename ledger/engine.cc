#include "ledger/engine.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "ledger/json.h"
#include "nlohmann/json.hpp"

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
    const std::vector<KeyRecord>& intended) {
  std::vector<std::optional<KeyRecord>> records;
  records.reserve(intended.size());
  for (const KeyRecord& record_to_be : intended) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record, ClaimKey(record_to_be));
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

absl::Status FillEventPayloads(std::vector<OutboxEvent>& events, TransactionsReader read) {
  std::vector<std::string> ids;
  for (const OutboxEvent& event : events) {
    if (event.payload.empty()) ids.push_back(event.transaction_id);
  }
  if (ids.empty()) return absl::OkStatus();
  LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> transactions, read(ids));
  std::unordered_map<std::string_view, const Transaction*> by_id;
  for (const Transaction& transaction : transactions) by_id[transaction.id] = &transaction;
  for (OutboxEvent& event : events) {
    if (!event.payload.empty()) continue;
    auto found = by_id.find(event.transaction_id);
    if (found == by_id.end()) {
      return absl::DataLossError(absl::StrCat("outbox event ", event.sequence,
                                              " names transaction \"", event.transaction_id,
                                              "\", which is not stored"));
    }
    event.payload = TransactionToJsonText(*found->second);
  }
  return absl::OkStatus();
}

bool TransactionMatches(const Transaction& transaction, const TransactionFilter& filter) {
  if (filter.kind.has_value() && transaction.kind != *filter.kind) return false;
  if (filter.created_from.has_value() && transaction.created_at < *filter.created_from) return false;
  if (filter.created_before.has_value() && transaction.created_at >= *filter.created_before) {
    return false;
  }
  if (!filter.account_id.empty()) {
    bool touches = false;
    for (const Entry& entry : transaction.entries) touches |= entry.account_id == filter.account_id;
    if (!touches) return false;
  }
  if (filter.metadata_key.has_value()) {
    nlohmann::json metadata =
        nlohmann::json::parse(transaction.metadata, nullptr, /*allow_exceptions=*/false);
    if (!metadata.is_object()) return false;
    auto member = metadata.find(*filter.metadata_key);
    if (member == metadata.end() || !member->is_string() ||
        member->get<std::string>() != filter.metadata_value) {
      return false;
    }
  }
  return true;
}

}  // namespace ledger
