#include "engines/mysql/mysql_rows.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::mysql_internal {
namespace {

absl::Status CorruptRow(std::string_view table, const absl::Status& cause) {
  return absl::DataLossError(
      absl::StrCat("mysql: unreadable row in ", View(table), ": ", cause.message()));
}

absl::StatusOr<Transaction> ReadTransactionHeader(const SqlRow& row) {
  Transaction transaction;
  transaction.id = row.String(0);
  absl::StatusOr<OperationKind> kind = ParseOperationKind(row.String(1));
  if (!kind.ok()) return CorruptRow("transactions", kind.status());
  transaction.kind = *kind;
  transaction.created_at = FromMicros(row.Int64(2));
  transaction.metadata = row.String(3);
  transaction.reversal_of = row.OptionalString(4);
  transaction.fingerprint = row.String(5);
  return transaction;
}

}  // namespace

int64_t ToMicros(absl::Time time) { return absl::ToUnixMicros(time); }

absl::Time FromMicros(int64_t micros) { return absl::FromUnixMicros(micros); }

Asset ReadAsset(const SqlRow& row) {
  return Asset{row.String(0), static_cast<int>(row.Int64(1))};
}

Account ReadAccount(const SqlRow& row) {
  Account account;
  account.id = row.String(0);
  account.asset = row.String(1);
  account.allow_negative = row.Bool(2);
  account.overdraft_limit = row.Int64(3);
  account.closed = row.Bool(4);
  account.balance = row.Int64(5);
  account.version = row.Int64(6);
  account.created_at = FromMicros(row.Int64(7));
  return account;
}

Entry ReadEntry(const SqlRow& row, int first_column) {
  Entry entry;
  entry.account_id = row.String(first_column);
  entry.asset = row.String(first_column + 1);
  entry.amount = row.Int64(first_column + 2);
  entry.balance_after = row.Int64(first_column + 3);
  entry.account_version = row.Int64(first_column + 4);
  return entry;
}

absl::StatusOr<Scope> DecodeScope(std::string_view encoded) {
  size_t slash = encoded.find('/');
  if (slash == std::string_view::npos) {
    return absl::DataLossError(absl::StrCat("scope \"", View(encoded), "\" has no '/'"));
  }
  return Scope{std::string(encoded.substr(0, slash)), std::string(encoded.substr(slash + 1))};
}

absl::StatusOr<std::optional<KeyRecord>> ReadKeyRecord(const SqlRow& row) {
  if (row.String(4) != kKeyStateCommitted) return std::nullopt;
  KeyRecord record;
  record.identity.key_namespace = row.String(0);
  absl::StatusOr<Scope> scope = DecodeScope(row.String(1));
  if (!scope.ok()) return CorruptRow("idempotency_keys", scope.status());
  record.identity.scope = *std::move(scope);
  record.identity.key = row.String(2);
  record.fingerprint = row.String(3);
  std::optional<std::string> transaction_id = row.OptionalString(5);
  if (!transaction_id.has_value()) {
    return CorruptRow("idempotency_keys", absl::InternalError("committed without a transaction"));
  }
  record.transaction_id = *std::move(transaction_id);
  record.created_at = FromMicros(row.Int64(6));
  record.expires_at = FromMicros(row.Int64(7));
  return record;
}

absl::StatusOr<WorkClaim> ReadWorkClaim(const SqlRow& row) {
  WorkClaim claim;
  claim.identity.key_namespace = row.String(0);
  absl::StatusOr<Scope> scope = DecodeScope(row.String(1));
  if (!scope.ok()) return CorruptRow("work_claims", scope.status());
  claim.identity.scope = *std::move(scope);
  claim.identity.key = row.String(2);
  claim.fingerprint = row.String(3);
  absl::StatusOr<WorkState> state = ParseWorkState(row.String(4));
  if (!state.ok()) return CorruptRow("work_claims", state.status());
  claim.state = *state;
  claim.owner = row.String(5);
  claim.attempt = row.Int64(6);
  claim.lease_expires_at = FromMicros(row.Int64(7));
  claim.result = row.String(8);
  claim.created_at = FromMicros(row.Int64(9));
  claim.updated_at = FromMicros(row.Int64(10));
  claim.expires_at = FromMicros(row.Int64(11));
  return claim;
}

OutboxEvent ReadOutboxEvent(const SqlRow& row) {
  OutboxEvent event;
  event.sequence = row.Int64(0);
  event.transaction_id = row.String(1);
  event.type = row.String(2);
  event.payload = row.String(3);
  event.created_at = FromMicros(row.Int64(4));
  return event;
}

SqlParams IdentityParams(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

SqlParams WorkClaimParams(const WorkClaim& claim) {
  SqlParams params = IdentityParams(claim.identity);
  params.insert(params.end(),
                {claim.fingerprint, std::string(WorkStateName(claim.state)), claim.owner,
                 claim.attempt, ToMicros(claim.lease_expires_at), claim.result,
                 ToMicros(claim.created_at), ToMicros(claim.updated_at),
                 ToMicros(claim.expires_at)});
  return params;
}

SqlParams AccountParams(const Account& account) {
  return {account.id,
          account.asset,
          int64_t{account.allow_negative ? 1 : 0},
          account.overdraft_limit,
          int64_t{account.closed ? 1 : 0},
          account.balance,
          account.version,
          ToMicros(account.created_at)};
}

absl::StatusOr<std::vector<Transaction>> QueryTransactions(MysqlConnection& connection,
                                                           std::string_view sql,
                                                           const SqlParams& params,
                                                           std::string_view what,
                                                           ErrorContext context) {
  std::vector<Transaction> transactions;
  absl::Status unreadable;
  LEDGER_RETURN_IF_ERROR(connection.Query(
      sql, params,
      [&](const SqlRow& row) {
        if (transactions.empty() || transactions.back().id != row.String(0)) {
          absl::StatusOr<Transaction> header = ReadTransactionHeader(row);
          if (!header.ok()) {
            unreadable.Update(header.status());
            return;
          }
          transactions.push_back(*std::move(header));
        }
        if (!row.IsNull(6)) transactions.back().entries.push_back(ReadEntry(row, 6));
      },
      what, context));
  LEDGER_RETURN_IF_ERROR(unreadable);
  return transactions;
}

absl::StatusOr<std::optional<Transaction>> SelectTransaction(MysqlConnection& connection,
                                                             std::string_view id,
                                                             ErrorContext context) {
  LEDGER_ASSIGN_OR_RETURN(
      std::vector<Transaction> found,
      QueryTransactions(connection,
                        "SELECT " LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS
                        " FROM transactions t LEFT JOIN entries e ON e.transaction_id = t.id"
                        " WHERE t.id = ? ORDER BY e.entry_index",
                        {std::string(id)}, "load transaction", context));
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::string Placeholders(size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text.append(i == 0 ? "?" : ", ?");
  return text;
}

std::string RowPlaceholders(size_t rows, size_t columns) {
  const std::string row = absl::StrCat("(", Placeholders(columns), ")");
  std::string text;
  for (size_t i = 0; i < rows; ++i) absl::StrAppend(&text, i == 0 ? "" : ", ", row);
  return text;
}

}  // namespace ledger::mysql_internal
