#include "engines/sqlite/sqlite_rows.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"
#include "engines/common/hold_writes.h"
#include "engines/common/row_readers.h"
#include "engines/common/transaction_page.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {
namespace {

// The INSERT for `rows` entries (1..kEntriesPerInsertMax), built once per shape.
const std::string& InsertEntriesSql(size_t rows) {
  static const std::array<std::string, kEntriesPerInsertMax + 1> statements = [] {
    std::array<std::string, kEntriesPerInsertMax + 1> built;
    for (size_t count = 1; count <= kEntriesPerInsertMax; ++count) {
      std::string& sql = built[count];
      sql = statement::kInsertEntriesHead;
      for (size_t row = 0; row < count; ++row) {
        absl::StrAppend(&sql, row == 0 ? "" : ", ", "(?, ?, ?, ?, ?, ?, ?, ?, ?)");
      }
    }
    return built;
  }();
  return statements[rows];
}

}  // namespace

void BindKeyRecord(Query& query, const KeyRecord& record) {
  BindIdentity(query, record.identity);
  BindRecordValues(query, record);
}

void BindRecordValues(Query& query, const KeyRecord& record) {
  query.BindText(record.fingerprint)
      .BindText(record.transaction_id)
      .BindTime(record.created_at)
      .BindTime(record.expires_at);
}

namespace {

// SELECT <hold columns> FROM holds WHERE id IN (?, ...) for `rows` ids
// (1..kHoldsPerSelectMax), built once per shape.
const std::string& SelectHoldsSql(size_t rows) {
  static const std::array<std::string, kHoldsPerSelectMax + 1> statements = [] {
    std::array<std::string, kHoldsPerSelectMax + 1> built;
    for (size_t count = 1; count <= kHoldsPerSelectMax; ++count) {
      std::string& sql = built[count];
      sql = statement::kSelectHoldsHead;
      for (size_t row = 0; row < count; ++row) absl::StrAppend(&sql, row == 0 ? "?" : ", ?");
      sql += ")";
    }
    return built;
  }();
  return statements[rows];
}

absl::Status InsertHold(Connection& connection, const Transaction& transaction) {
  const HoldTerms& terms = *transaction.hold;
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection.Prepare(statement::kInsertHold,
                         "insert hold", ErrorContext::kWrite));
  query.BindText(transaction.id)
      .BindText(terms.from)
      .BindText(terms.to)
      .BindText(terms.asset)
      .BindInt(terms.amount)
      .BindOptionalTime(terms.expires_at)
      .BindTime(transaction.created_at);
  return query.Run();
}

absl::Status SettleHold(Connection& connection, const Transaction& transaction) {
  LEDGER_ASSIGN_OR_RETURN(HoldStatus status,
                          engine_common::SettledStatus("sqlite", transaction.kind));
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection.Prepare(statement::kSettleHold,
                                      "settle hold", ErrorContext::kWrite));
  query.BindText(HoldStatusName(status)).BindText(transaction.id).BindText(*transaction.hold_id);
  LEDGER_RETURN_IF_ERROR(query.Run());
  if (connection.ChangedRows() != 1) {
    // The pipeline read the hold pending after locking its accounts, and no other writer
    // runs until COMMIT: this cannot happen. If it does, it is the hold being taken, as
    // on the memory engine (retryable; the rerun re-checks the hold).
    return engine_common::HoldNotPendingError("sqlite", *transaction.hold_id);
  }
  return absl::OkStatus();
}

// Saturating, like DebitUsage: a total past the largest amount reads as the largest.
Amount AddSaturating(Amount total, Amount amount) {
  return CheckedAdd(total, amount).value_or(std::numeric_limits<Amount>::max());
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
  std::optional<absl::Time> OptionalTime(int column) const {
    if (row.IsNull(column)) return std::nullopt;
    return row.Time(column);
  }
};

}  // namespace

Account ReadAccount(const Query& row) { return engine_common::ReadAccount(SqliteColumns{row}); }

absl::StatusOr<Transaction> ReadTransactionHeader(const Query& row) {
  return engine_common::ReadTransactionHeaderWithHold(SqliteColumns{row});
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

absl::StatusOr<Hold> ReadHold(const Query& row) {
  return engine_common::ReadHold(SqliteColumns{row});
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
      connection.Prepare(statement::kSelectAccount,
                         "select account", context));
  query.BindText(id);
  LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::nullopt;
  return ReadAccount(query);
}

absl::Status SelectEntriesInto(Connection& connection, Transaction& transaction,
                               ErrorContext context) {
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection.Prepare(statement::kSelectEntries,
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
    LEDGER_ASSIGN_OR_RETURN(Query query,
                            connection.Prepare(statement::kSelectTransaction,
                                               "select transaction", context));
    query.BindText(id);
    LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
    if (!found) return std::nullopt;
    LEDGER_ASSIGN_OR_RETURN(transaction, ReadTransactionHeader(query));
  }
  LEDGER_RETURN_IF_ERROR(SelectEntriesInto(connection, *transaction, context));
  return transaction;
}

absl::Status InsertTransactionRows(Connection& connection, const Transaction& transaction,
                                   const std::vector<absl::Time>& running_maxima) {
  LEDGER_CHECK(running_maxima.size() == transaction.entries.size())
      << running_maxima.size() << " running maxima for " << transaction.entries.size()
      << " entries";
  {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare(statement::kInsertTransaction,
                           "insert transaction", ErrorContext::kWrite));
    query.BindText(transaction.id)
        .BindText(OperationKindName(transaction.kind))
        .BindTime(transaction.created_at)
        .BindText(transaction.metadata)
        .BindOptionalText(transaction.reversal_of)
        .BindText(transaction.fingerprint)
        .BindOptionalText(transaction.hold_id);
    // A taken id, reversal_of or hold_id fails here: the error table's unique violation
    // during the write, retryable.
    LEDGER_RETURN_IF_ERROR(query.Run());
  }
  // The id is new (the INSERT above would have failed), and a transaction's member names
  // are distinct: no row can be there already.
  for (const engine_common::MetadataMember& member :
       engine_common::IndexedMetadataMembers(transaction.metadata)) {
    LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare(statement::kInsertMetadataMember,
                                                            "index the metadata",
                                                            ErrorContext::kWrite));
    query.BindText(member.name)
        .BindText(member.value)
        .BindTime(transaction.created_at)
        .BindText(transaction.id);
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
          .BindTime(transaction.created_at)
          .BindTime(running_maxima[index]);
    }
    LEDGER_RETURN_IF_ERROR(query.Run());
  }
  if (transaction.hold.has_value()) return InsertHold(connection, transaction);
  if (transaction.hold_id.has_value()) return SettleHold(connection, transaction);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Hold>> SelectHold(Connection& connection, std::string_view id,
                                               ErrorContext context) {
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection.Prepare(statement::kSelectHold,
                         "select hold", context));
  query.BindText(id);
  LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::nullopt;
  return ReadHold(query);
}

absl::StatusOr<std::vector<Hold>> SelectHolds(Connection& connection,
                                              const std::vector<std::string>& ids,
                                              ErrorContext context) {
  std::vector<Hold> holds;
  for (size_t first = 0; first < ids.size(); first += kHoldsPerSelectMax) {
    const size_t rows = std::min(kHoldsPerSelectMax, ids.size() - first);
    LEDGER_ASSIGN_OR_RETURN(Query query,
                            connection.Prepare(SelectHoldsSql(rows), "select holds", context));
    for (size_t index = first; index < first + rows; ++index) query.BindText(ids[index]);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) break;
      LEDGER_ASSIGN_OR_RETURN(Hold hold, ReadHold(query));
      holds.push_back(std::move(hold));
    }
  }
  return holds;
}

absl::StatusOr<PendingHoldTotals> SelectHoldTotals(Connection& connection,
                                                   std::string_view account_id, absl::Time now,
                                                   absl::Time since, ErrorContext context) {
  // The pending holds out of the account that lapsed or were placed since `since`, and
  // those into it that lapsed, each half through its partial index of pending holds.
  // Summed here, not with SQL SUM(), which fails on overflow instead of saturating.
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection.Prepare(
          statement::kHoldTotals,
          "select hold totals", context));
  query.BindText(account_id).BindTime(now).BindTime(since);
  PendingHoldTotals totals;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
    if (!has_row) return totals;
    const bool out_of_account = query.Int(0) != 0;
    const Amount amount = query.Int(1);
    const bool lapsed = !query.IsNull(2) && query.Time(2) <= now;
    if (!out_of_account) {
      totals.lapsed_credits = AddSaturating(totals.lapsed_credits, amount);
    } else if (lapsed) {
      totals.lapsed_debits = AddSaturating(totals.lapsed_debits, amount);
    } else if (query.Time(3) >= since) {
      ++totals.reserving_since.count;
      totals.reserving_since.amount = AddSaturating(totals.reserving_since.amount, amount);
    }
  }
}

}  // namespace ledger::sqlite_internal
