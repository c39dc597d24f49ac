#include "engines/sqlite/sqlite_rows.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status.h"

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

absl::Status CorruptRow(std::string_view table, const absl::Status& cause) {
  return absl::DataLossError(absl::StrCat("sqlite: unreadable ", std::string(table), " row: ",
                                          cause.message()));
}

}  // namespace

Account ReadAccount(const Query& row) {
  Account account;
  account.id = row.Text(0);
  account.asset = row.Text(1);
  account.allow_negative = row.Int(2) != 0;
  account.overdraft_limit = row.Int(3);
  account.closed = row.Int(4) != 0;
  account.balance = row.Int(5);
  account.version = row.Int(6);
  account.created_at = row.Time(7);
  return account;
}

absl::StatusOr<Transaction> ReadTransactionHeader(const Query& row) {
  Transaction transaction;
  transaction.id = row.Text(0);
  absl::StatusOr<OperationKind> kind = ParseOperationKind(row.Text(1));
  if (!kind.ok()) return CorruptRow("transactions", kind.status());
  transaction.kind = *kind;
  transaction.created_at = row.Time(2);
  transaction.metadata = row.Text(3);
  transaction.reversal_of = row.OptionalText(4);
  transaction.fingerprint = row.Text(5);
  return transaction;
}

Entry ReadEntry(const Query& row) {
  Entry entry;
  entry.account_id = row.Text(0);
  entry.asset = row.Text(1);
  entry.amount = row.Int(2);
  entry.balance_after = row.Int(3);
  entry.account_version = row.Int(4);
  return entry;
}

absl::StatusOr<Scope> DecodeScope(std::string_view encoded) {
  const size_t slash = encoded.find('/');
  if (slash == std::string_view::npos) {
    return absl::DataLossError(absl::StrCat("sqlite: scope \"", std::string(encoded), "\" has no '/'"));
  }
  return Scope{std::string(encoded.substr(0, slash)), std::string(encoded.substr(slash + 1))};
}

absl::StatusOr<KeyRecord> ReadKeyRecord(const Query& row) {
  KeyRecord record;
  record.identity.key_namespace = row.Text(0);
  absl::StatusOr<Scope> scope = DecodeScope(row.Text(1));
  if (!scope.ok()) return CorruptRow("idempotency_keys", scope.status());
  record.identity.scope = *std::move(scope);
  record.identity.key = row.Text(2);
  record.fingerprint = row.Text(3);
  record.transaction_id = row.OptionalText(4).value_or("");
  record.created_at = row.Time(5);
  record.expires_at = row.Time(6);
  return record;
}

absl::StatusOr<WorkClaim> ReadWorkClaim(const Query& row) {
  WorkClaim claim;
  claim.identity.key_namespace = row.Text(0);
  absl::StatusOr<Scope> scope = DecodeScope(row.Text(1));
  if (!scope.ok()) return CorruptRow("work_claims", scope.status());
  claim.identity.scope = *std::move(scope);
  claim.identity.key = row.Text(2);
  claim.fingerprint = row.Text(3);
  absl::StatusOr<WorkState> state = ParseWorkState(row.Text(4));
  if (!state.ok()) return CorruptRow("work_claims", state.status());
  claim.state = *state;
  claim.owner = row.Text(5);
  claim.attempt = row.Int(6);
  claim.lease_expires_at = row.Time(7);
  claim.result = row.Text(8);
  claim.created_at = row.Time(9);
  claim.updated_at = row.Time(10);
  claim.expires_at = row.Time(11);
  return claim;
}

OutboxEvent ReadOutboxEvent(const Query& row) {
  OutboxEvent event;
  event.sequence = row.Int(0);
  event.transaction_id = row.Text(1);
  event.type = row.Text(2);
  event.payload = row.Text(3);
  event.created_at = row.Time(4);
  return event;
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
