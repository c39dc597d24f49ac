#include "engines/mysql/mysql_rows.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"
#include "engines/common/row_readers.h"
#include "engines/mysql/mysql_statements.h"
#include "engines/mysql/mysql_write_batch.h"

namespace ledger::mysql_internal {
namespace {

// The shared readers' view of a row (engines/common/row_readers.h).
struct MysqlColumns {
  const SqlRow& row;
  std::string_view engine() const { return "mysql"; }
  std::string Text(int column) const { return row.String(column); }
  std::optional<std::string> OptionalText(int column) const { return row.OptionalString(column); }
  bool IsNull(int column) const { return row.IsNull(column); }
  int64_t Int(int column) const { return row.Int64(column); }
  bool Bool(int column) const { return row.Bool(column); }
  absl::Time Time(int column) const { return FromMicros(row.Int64(column)); }
  std::optional<absl::Time> OptionalTime(int column) const {
    if (row.IsNull(column)) return std::nullopt;
    return Time(column);
  }
};

// Where the entry columns start in LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS.
constexpr int kFirstEntryColumn = 12;

}  // namespace

int64_t ToMicros(absl::Time time) { return absl::ToUnixMicros(time); }

absl::Time FromMicros(int64_t micros) { return absl::FromUnixMicros(micros); }

Asset ReadAsset(const SqlRow& row) {
  return Asset{row.String(0), static_cast<int>(row.Int64(1))};
}

Account ReadAccount(const SqlRow& row) { return engine_common::ReadAccount(MysqlColumns{row}); }

absl::StatusOr<Hold> ReadHold(const SqlRow& row) {
  return engine_common::ReadHold(MysqlColumns{row});
}

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

KeyRowMatches MatchKeyRows(absl::Span<const KeyRecord> records, MatchTransactionId with_id) {
  LEDGER_CHECK(!records.empty()) << "a key-row match list of no record";
  const bool by_id = with_id == MatchTransactionId::kYes;
  KeyRowMatches matches;
  matches.params.reserve(records.size() * (by_id ? 4 : 3));
  for (const KeyRecord& record : records) {
    SqlParams identity = IdentityParams(record.identity);
    std::move(identity.begin(), identity.end(), std::back_inserter(matches.params));
    if (by_id) matches.params.push_back(record.transaction_id);
    absl::StrAppend(&matches.condition, matches.condition.empty() ? "(" : " OR (",
                    LEDGER_MYSQL_IDENTITY_MATCHES, by_id ? " AND transaction_id = ?)" : ")");
  }
  return matches;
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

SqlValue NullableText(const std::optional<std::string>& text) {
  if (!text.has_value()) return std::monostate();
  return *text;
}

SqlValue NullableMicros(const std::optional<absl::Time>& time) {
  if (!time.has_value()) return std::monostate();
  return ToMicros(*time);
}

SqlParams AccountParams(const Account& account) {
  return {account.id,
          account.asset,
          int64_t{account.allow_negative ? 1 : 0},
          account.overdraft_limit,
          int64_t{account.closed ? 1 : 0},
          account.balance,
          account.version,
          ToMicros(account.created_at),
          account.pending_debits,
          account.pending_credits};
}

Amount SaturatedTotal(std::string_view decimal_sum) {
  std::string_view digits = decimal_sum;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  Amount total = 0;
  if (!absl::SimpleAtoi(View(digits), &total)) return std::numeric_limits<Amount>::max();
  return total;
}

absl::StatusOr<PendingHoldTotals> SelectPendingHoldTotals(MysqlConnection& connection,
                                                          std::string_view account_id,
                                                          absl::Time now, absl::Time since,
                                                          ErrorContext context) {
  const int64_t now_micros = ToMicros(now);
  const int64_t since_micros = ToMicros(since);
  const std::string account(account_id);
  PendingHoldTotals totals;
  bool read = false;
  LEDGER_RETURN_IF_ERROR(connection.Query(
      statement::kHoldTotals,
      {now_micros, now_micros, since_micros, now_micros, since_micros, account, account,
       now_micros},
      [&](const SqlRow& row) {
        totals.lapsed_debits = SaturatedTotal(row.String(0));
        totals.lapsed_credits = SaturatedTotal(row.String(1));
        totals.reserving_since.count = row.Int64(2);
        totals.reserving_since.amount = SaturatedTotal(row.String(3));
        read = true;
      },
      "load the pending hold totals", context));
  if (!read) return absl::InternalError("mysql: the pending hold totals gave no row");
  return totals;
}

absl::StatusOr<std::vector<Hold>> QueryHolds(MysqlConnection& connection, std::string_view sql,
                                             const SqlParams& params, std::string_view what,
                                             ErrorContext context) {
  std::vector<Hold> holds;
  absl::Status unreadable;
  LEDGER_RETURN_IF_ERROR(connection.Query(
      sql, params,
      [&](const SqlRow& row) {
        absl::StatusOr<Hold> hold = ReadHold(row);
        if (hold.ok()) {
          holds.push_back(*std::move(hold));
        } else {
          unreadable.Update(hold.status());
        }
      },
      what, context));
  LEDGER_RETURN_IF_ERROR(unreadable);
  return holds;
}

absl::Status AddTransactionRow(const SqlRow& row, std::vector<Transaction>& transactions) {
  return engine_common::AddTransactionRow(MysqlColumns{row}, kFirstEntryColumn, transactions);
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
      [&](const SqlRow& row) { unreadable.Update(AddTransactionRow(row, transactions)); },
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
                        statement::kSelectTransaction,
                        {std::string(id)}, "load transaction", context));
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

absl::StatusOr<std::vector<Transaction>> SelectTransactions(MysqlConnection& connection,
                                                            const std::vector<std::string>& ids,
                                                            ErrorContext context) {
  std::vector<Transaction> found;
  for (size_t begin = 0; begin < ids.size(); begin += kRowsPerStatementMax) {
    const size_t end = std::min(ids.size(), begin + kRowsPerStatementMax);
    // Ordered by id so the rows group by transaction.
    LEDGER_ASSIGN_OR_RETURN(
        std::vector<Transaction> some,
        QueryTransactions(connection,
                          SelectTransactionsSql(end - begin),
                          SqlParams(ids.begin() + begin, ids.begin() + end),
                          "load transactions", context));
    std::move(some.begin(), some.end(), std::back_inserter(found));
  }
  return found;
}

std::string Placeholders(size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text.append(i == 0 ? "?" : ", ?");
  return text;
}

}  // namespace ledger::mysql_internal
