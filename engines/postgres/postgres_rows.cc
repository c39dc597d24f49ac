#include "engines/postgres/postgres_rows.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "engines/common/row_readers.h"
#include "absl/strings/numbers.h"
#include "base/check.h"
#include "base/status.h"
#include "libpq-fe.h"
#include "pqxx/field"

namespace ledger::postgres_internal {
namespace {

// The shared readers' view of a row (engines/common/row_readers.h).
struct PostgresColumns {
  const pqxx::row& row;
  std::string_view engine() const { return "postgres"; }
  std::string Text(int column) const { return row[column].as<std::string>(); }
  std::optional<std::string> OptionalText(int column) const {
    if (row[column].is_null()) return std::nullopt;
    return Text(column);
  }
  bool IsNull(int column) const { return row[column].is_null(); }
  int64_t Int(int column) const { return row[column].as<int64_t>(); }
  bool Bool(int column) const { return row[column].as<bool>(); }
  absl::Time Time(int column) const { return TimeFromMicros(Int(column)); }
  std::optional<absl::Time> OptionalTime(int column) const {
    if (row[column].is_null()) return std::nullopt;
    return Time(column);
  }
};

// The same view of a row of a result libpq returned (text format), its columns counted
// from `first`.
struct LibpqColumns {
  const PGresult* result;
  int row;
  int first = 0;
  std::string_view engine() const { return "postgres"; }
  const char* Value(int column) const { return PQgetvalue(result, row, first + column); }
  bool IsNull(int column) const { return PQgetisnull(result, row, first + column) == 1; }
  std::string Text(int column) const { return Value(column); }
  std::optional<std::string> OptionalText(int column) const {
    if (IsNull(column)) return std::nullopt;
    return Text(column);
  }
  int64_t Int(int column) const {
    int64_t value = 0;
    LEDGER_CHECK(absl::SimpleAtoi(Value(column), &value))
        << "column " << first + column << " is no integer: " << Value(column);
    return value;
  }
  bool Bool(int column) const { return Value(column)[0] == 't'; }
  absl::Time Time(int column) const { return TimeFromMicros(Int(column)); }
  std::optional<absl::Time> OptionalTime(int column) const {
    if (IsNull(column)) return std::nullopt;
    return Time(column);
  }
};

// Where the entry columns start in kTransactionWithEntryColumns.
constexpr int kFirstEntryColumn = 12;

// One element of a text[] literal: always double-quoted, so NULL, {, }, commas and
// spaces inside the value are data; backslash and double quote are escaped.
void AppendQuotedElement(std::string& literal, std::string_view value) {
  literal.push_back('"');
  // The runs between the characters to escape go in whole: a payload of a few hundred
  // bytes has none. (A plain loop: find_first_of costs a call per byte.)
  size_t run = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '"' || value[i] == '\\') {
      literal.append(value.substr(run, i - run));
      literal.push_back('\\');
      run = i;  // the escaped character starts the next run
    }
  }
  literal.append(value.substr(run));
  literal.push_back('"');
}

}  // namespace

int64_t Micros(absl::Time time) { return absl::ToUnixMicros(time); }
absl::Time TimeFromMicros(int64_t micros) { return absl::FromUnixMicros(micros); }

Asset AssetFromRow(const pqxx::row& row) {
  return Asset{row[0].as<std::string>(), row[1].as<int>()};
}

Account AccountFromRow(const pqxx::row& row) {
  return engine_common::ReadAccount(PostgresColumns{row});
}

absl::StatusOr<Hold> HoldFromRow(const pqxx::row& row) {
  return engine_common::ReadHold(PostgresColumns{row});
}

absl::StatusOr<std::vector<Hold>> HoldsFromRows(const pqxx::result& rows) {
  std::vector<Hold> holds;
  for (const pqxx::row& row : rows) {
    absl::StatusOr<Hold> hold = HoldFromRow(row);
    if (!hold.ok()) return hold.status();
    holds.push_back(*std::move(hold));
  }
  return holds;
}

PendingHoldTotals HoldTotalsFromRow(const pqxx::row& row) {
  PendingHoldTotals totals;
  totals.lapsed_debits = row[0].as<int64_t>();
  totals.lapsed_credits = row[1].as<int64_t>();
  totals.reserving_since.count = row[2].as<int64_t>();
  totals.reserving_since.amount = row[3].as<int64_t>();
  return totals;
}

Entry EntryFromRow(const pqxx::row& row, int first_column) {
  return engine_common::ReadEntry(PostgresColumns{row}, first_column);
}

absl::StatusOr<std::optional<KeyRecord>> KeyRecordFromRow(const pqxx::row& row) {
  return engine_common::ReadKeyRow(PostgresColumns{row});
}

absl::StatusOr<std::optional<KeyRecord>> KeyRecordFromResult(const PGresult* result, int row) {
  return engine_common::ReadKeyRow(LibpqColumns{result, row});
}

Account AccountFromResult(const PGresult* result, int row, int first_column) {
  return engine_common::ReadAccount(LibpqColumns{result, row, first_column});
}

std::optional<absl::Time> RunningMaxFromResult(const PGresult* result, int row, int column) {
  return LibpqColumns{result, row}.OptionalTime(column);
}

absl::StatusOr<WorkClaim> WorkClaimFromRow(const pqxx::row& row) {
  return engine_common::ReadWorkClaim(PostgresColumns{row});
}

OutboxEvent EventFromRow(const pqxx::row& row) {
  return engine_common::ReadOutboxEvent(PostgresColumns{row});
}

absl::StatusOr<std::vector<Transaction>> TransactionsFromRows(const pqxx::result& rows) {
  std::vector<Transaction> transactions;
  for (const pqxx::row& row : rows) {
    LEDGER_RETURN_IF_ERROR(
        engine_common::AddTransactionRow(PostgresColumns{row}, kFirstEntryColumn, transactions));
  }
  return transactions;
}

absl::StatusOr<std::vector<Transaction>> TransactionsFromResult(const PGresult* result) {
  std::vector<Transaction> transactions;
  for (int row = 0; row < PQntuples(result); ++row) {
    LEDGER_RETURN_IF_ERROR(engine_common::AddTransactionRow(LibpqColumns{result, row},
                                                           kFirstEntryColumn, transactions));
  }
  return transactions;
}

std::string TextArrayLiteral(const std::vector<std::string>& values) {
  size_t size = 2;
  for (const std::string& value : values) size += value.size() + 3;  // quoted, and a comma
  std::string literal;
  literal.reserve(size);
  literal.push_back('{');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) literal.push_back(',');
    AppendQuotedElement(literal, values[i]);
  }
  literal.push_back('}');
  return literal;
}

}  // namespace ledger::postgres_internal
