#include "engines/mysql/mysql_rows.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/row_readers.h"

namespace ledger::mysql_internal {
namespace {

// The shared readers' view of a row (engines/common/row_readers.h).
struct MysqlColumns {
  const SqlRow& row;
  std::string_view engine() const { return "mysql"; }
  std::string Text(int column) const { return row.String(column); }
  std::optional<std::string> OptionalText(int column) const { return row.OptionalString(column); }
  int64_t Int(int column) const { return row.Int64(column); }
  bool Bool(int column) const { return row.Bool(column); }
  absl::Time Time(int column) const { return FromMicros(row.Int64(column)); }
};

}  // namespace

int64_t ToMicros(absl::Time time) { return absl::ToUnixMicros(time); }

absl::Time FromMicros(int64_t micros) { return absl::FromUnixMicros(micros); }

Asset ReadAsset(const SqlRow& row) {
  return Asset{row.String(0), static_cast<int>(row.Int64(1))};
}

Account ReadAccount(const SqlRow& row) { return engine_common::ReadAccount(MysqlColumns{row}); }

Entry ReadEntry(const SqlRow& row, int first_column) {
  return engine_common::ReadEntry(MysqlColumns{row}, first_column);
}

absl::StatusOr<std::optional<KeyRecord>> ReadKeyRecord(const SqlRow& row) {
  return engine_common::ReadKeyRow(MysqlColumns{row});
}

absl::StatusOr<WorkClaim> ReadWorkClaim(const SqlRow& row) {
  return engine_common::ReadWorkClaim(MysqlColumns{row});
}

OutboxEvent ReadOutboxEvent(const SqlRow& row) {
  return engine_common::ReadOutboxEvent(MysqlColumns{row});
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
          absl::StatusOr<Transaction> header =
              engine_common::ReadTransactionHeader(MysqlColumns{row});
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
