#include "engines/postgres/postgres_rows.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "pqxx/field"

namespace ledger::postgres_internal {
namespace {

std::string Text(const pqxx::field& field) { return field.as<std::string>(); }
int64_t Integer(const pqxx::field& field) { return field.as<int64_t>(); }
absl::Time Time(const pqxx::field& field) { return TimeFromMicros(Integer(field)); }

// One element of a text[] literal: always double-quoted, so NULL, {, }, commas and
// spaces inside the value are data; backslash and double quote are escaped.
void AppendQuotedElement(std::string& literal, const std::string& value) {
  literal.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') literal.push_back('\\');
    literal.push_back(c);
  }
  literal.push_back('"');
}

template <typename T, typename AppendElement>
std::string ArrayLiteral(const std::vector<T>& values, AppendElement append) {
  std::string literal = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) literal.push_back(',');
    append(literal, values[i]);
  }
  literal.push_back('}');
  return literal;
}

}  // namespace

int64_t Micros(absl::Time time) { return absl::ToUnixMicros(time); }
absl::Time TimeFromMicros(int64_t micros) { return absl::FromUnixMicros(micros); }

Scope ScopeFromEncoded(const std::string& encoded) {
  size_t slash = encoded.find('/');
  if (slash == std::string::npos) return Scope{encoded, ""};
  return Scope{encoded.substr(0, slash), encoded.substr(slash + 1)};
}

Asset AssetFromRow(const pqxx::row& row) { return Asset{Text(row[0]), row[1].as<int>()}; }

Account AccountFromRow(const pqxx::row& row) {
  Account account;
  account.id = Text(row[0]);
  account.asset = Text(row[1]);
  account.allow_negative = row[2].as<bool>();
  account.overdraft_limit = Integer(row[3]);
  account.closed = row[4].as<bool>();
  account.balance = Integer(row[5]);
  account.version = Integer(row[6]);
  account.created_at = Time(row[7]);
  return account;
}

Entry EntryFromRow(const pqxx::row& row, int first_column) {
  Entry entry;
  entry.account_id = Text(row[first_column]);
  entry.asset = Text(row[first_column + 1]);
  entry.amount = Integer(row[first_column + 2]);
  entry.balance_after = Integer(row[first_column + 3]);
  entry.account_version = Integer(row[first_column + 4]);
  return entry;
}

absl::StatusOr<std::optional<KeyRecord>> KeyRecordFromRow(const pqxx::row& row) {
  const std::string state = Text(row[4]);
  if (state == "pending") return std::nullopt;
  if (state != "committed") {
    return absl::DataLossError(absl::StrCat("postgres: key row has unknown state ", state));
  }
  KeyRecord record;
  record.identity.key_namespace = Text(row[0]);
  record.identity.scope = ScopeFromEncoded(Text(row[1]));
  record.identity.key = Text(row[2]);
  record.fingerprint = Text(row[3]);
  record.transaction_id = row[5].is_null() ? std::string() : Text(row[5]);
  record.created_at = Time(row[6]);
  record.expires_at = Time(row[7]);
  return record;
}

absl::StatusOr<WorkClaim> WorkClaimFromRow(const pqxx::row& row) {
  WorkClaim claim;
  claim.identity.key_namespace = Text(row[0]);
  claim.identity.scope = ScopeFromEncoded(Text(row[1]));
  claim.identity.key = Text(row[2]);
  claim.fingerprint = Text(row[3]);
  absl::StatusOr<WorkState> state = ParseWorkState(Text(row[4]));
  if (!state.ok()) return state.status();
  claim.state = *state;
  claim.owner = Text(row[5]);
  claim.attempt = Integer(row[6]);
  claim.lease_expires_at = Time(row[7]);
  claim.result = Text(row[8]);
  claim.created_at = Time(row[9]);
  claim.updated_at = Time(row[10]);
  claim.expires_at = Time(row[11]);
  return claim;
}

OutboxEvent EventFromRow(const pqxx::row& row) {
  OutboxEvent event;
  event.sequence = Integer(row[0]);
  event.transaction_id = Text(row[1]);
  event.type = Text(row[2]);
  event.payload = Text(row[3]);
  event.created_at = Time(row[4]);
  return event;
}

absl::StatusOr<std::vector<Transaction>> TransactionsFromRows(const pqxx::result& rows) {
  std::vector<Transaction> transactions;
  for (const pqxx::row& row : rows) {
    const std::string id = Text(row[0]);
    if (transactions.empty() || transactions.back().id != id) {
      Transaction transaction;
      transaction.id = id;
      absl::StatusOr<OperationKind> kind = ParseOperationKind(Text(row[1]));
      if (!kind.ok()) return kind.status();
      transaction.kind = *kind;
      transaction.created_at = Time(row[2]);
      transaction.metadata = Text(row[3]);
      if (!row[4].is_null()) transaction.reversal_of = Text(row[4]);
      transaction.fingerprint = Text(row[5]);
      transactions.push_back(std::move(transaction));
    }
    if (!row[6].is_null()) transactions.back().entries.push_back(EntryFromRow(row, 6));
  }
  return transactions;
}

std::string TextArrayLiteral(const std::vector<std::string>& values) {
  return ArrayLiteral(values, AppendQuotedElement);
}

std::string NullableTextArrayLiteral(const std::vector<std::optional<std::string>>& values) {
  return ArrayLiteral(values, [](std::string& literal, const std::optional<std::string>& value) {
    if (value.has_value()) {
      AppendQuotedElement(literal, *value);
    } else {
      literal.append("NULL");
    }
  });
}

std::string IntegerArrayLiteral(const std::vector<int64_t>& values) {
  return ArrayLiteral(
      values, [](std::string& literal, int64_t value) { literal.append(std::to_string(value)); });
}

std::string NullableIntegerArrayLiteral(const std::vector<std::optional<int64_t>>& values) {
  return ArrayLiteral(values, [](std::string& literal, const std::optional<int64_t>& value) {
    literal.append(value.has_value() ? std::to_string(*value) : "NULL");
  });
}

}  // namespace ledger::postgres_internal
