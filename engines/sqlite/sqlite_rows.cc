#include "engines/sqlite/sqlite_rows.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/row_readers.h"

namespace ledger::sqlite_internal {
namespace {

// The INSERT for `rows` entries (1..kEntriesPerInsertMax), built once per shape.
const std::string& InsertEntriesSql(size_t rows) {
  static const std::array<std::string, kEntriesPerInsertMax + 1> statements = [] {
    std::array<std::string, kEntriesPerInsertMax + 1> built;
    for (size_t count = 1; count <= kEntriesPerInsertMax; ++count) {
      std::string& sql = built[count];
      sql = "INSERT INTO entries (account_id, account_version, transaction_id, entry_index, "
            "asset, amount, balance_after, created_at) VALUES ";
      for (size_t row = 0; row < count; ++row) {
        absl::StrAppend(&sql, row == 0 ? "" : ", ", "(?, ?, ?, ?, ?, ?, ?, ?)");
      }
    }
    return built;
  }();
  return statements[rows];
}

// The shared readers' view of a row (engines/common/row_readers.h).
struct SqliteColumns {
  const Query& row;
  std::string_view engine() const { return "sqlite"; }
  std::string Text(int column) const { return row.Text(column); }
  std::optional<std::string> OptionalText(int column) const { return row.OptionalText(column); }
  int64_t Int(int column) const { return row.Int(column); }
  bool Bool(int column) const { return row.Int(column) != 0; }
  absl::Time Time(int column) const { return row.Time(column); }
};

}  // namespace

Account ReadAccount(const Query& row) { return engine_common::ReadAccount(SqliteColumns{row}); }

absl::StatusOr<Transaction> ReadTransactionHeader(const Query& row) {
  return engine_common::ReadTransactionHeader(SqliteColumns{row});
}

Entry ReadEntry(const Query& row) { return engine_common::ReadEntry(SqliteColumns{row}); }

// No state column: every statement reading key records selects committed rows only.
absl::StatusOr<KeyRecord> ReadKeyRecord(const Query& row) {
  LEDGER_ASSIGN_OR_RETURN(KeyIdentity identity,
                          engine_common::ReadIdentity(SqliteColumns{row}, "idempotency_keys"));
  return KeyRecord{.identity = std::move(identity),
                   .fingerprint = row.Text(3),
                   .transaction_id = row.OptionalText(4).value_or(""),
                   .created_at = row.Time(5),
                   .expires_at = row.Time(6)};
}

absl::StatusOr<WorkClaim> ReadWorkClaim(const Query& row) {
  return engine_common::ReadWorkClaim(SqliteColumns{row});
}

OutboxEvent ReadOutboxEvent(const Query& row) {
  return engine_common::ReadOutboxEvent(SqliteColumns{row});
}

void BindIdentity(Query& query, const KeyIdentity& identity) {
  query.BindText(identity.key_namespace).BindText(identity.scope.Encoded()).BindText(identity.key);
}

absl::StatusOr<std::optional<Account>> SelectAccount(Connection& connection,
                                                     std::string_view id, ErrorContext context) {
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection.Prepare("SELECT " LEDGER_SQLITE_ACCOUNT_COLUMNS " FROM accounts WHERE id = ?",
                         "select account", context));
  query.BindText(id);
  LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::nullopt;
  return ReadAccount(query);
}

absl::Status SelectEntriesInto(Connection& connection, Transaction& transaction,
                               ErrorContext context) {
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection.Prepare("SELECT " LEDGER_SQLITE_ENTRY_COLUMNS
                                      " FROM entries WHERE transaction_id = ?"
                                      " ORDER BY entry_index",
                                      "select entries of transaction", context));
  query.BindText(transaction.id);
  transaction.entries.clear();
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
    if (!has_row) return absl::OkStatus();
    transaction.entries.push_back(ReadEntry(query));
  }
}

absl::StatusOr<std::optional<Transaction>> SelectTransaction(Connection& connection,
                                                             std::string_view id,
                                                             ErrorContext context) {
  std::optional<Transaction> transaction;
  {
    LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare("SELECT " LEDGER_SQLITE_TRANSACTION_COLUMNS
                                                            " FROM transactions WHERE id = ?",
                                                            "select transaction", context));
    query.BindText(id);
    LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
    if (!found) return std::nullopt;
    LEDGER_ASSIGN_OR_RETURN(transaction, ReadTransactionHeader(query));
  }
  LEDGER_RETURN_IF_ERROR(SelectEntriesInto(connection, *transaction, context));
  return transaction;
}

absl::Status InsertTransactionRows(Connection& connection, const Transaction& transaction) {
  {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("INSERT INTO transactions (" LEDGER_SQLITE_TRANSACTION_COLUMNS
                           ") VALUES (?, ?, ?, ?, ?, ?)",
                           "insert transaction", ErrorContext::kWrite));
    query.BindText(transaction.id)
        .BindText(OperationKindName(transaction.kind))
        .BindTime(transaction.created_at)
        .BindText(transaction.metadata)
        .BindOptionalText(transaction.reversal_of)
        .BindText(transaction.fingerprint);
    LEDGER_RETURN_IF_ERROR(query.Run());
  }
  const std::vector<Entry>& entries = transaction.entries;
  for (size_t first = 0; first < entries.size(); first += kEntriesPerInsertMax) {
    const size_t rows = std::min(kEntriesPerInsertMax, entries.size() - first);
    LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare(InsertEntriesSql(rows), "insert entries",
                                                            ErrorContext::kWrite));
    for (size_t index = first; index < first + rows; ++index) {
      const Entry& entry = entries[index];
      query.BindText(entry.account_id)
          .BindInt(entry.account_version)
          .BindText(transaction.id)
          .BindInt(static_cast<int64_t>(index))
          .BindText(entry.asset)
          .BindInt(entry.amount)
          .BindInt(entry.balance_after)
          .BindTime(transaction.created_at);
    }
    LEDGER_RETURN_IF_ERROR(query.Run());
  }
  return absl::OkStatus();
}

}  // namespace ledger::sqlite_internal
