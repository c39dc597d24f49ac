#include "engines/mysql/mysql_write_batch.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/hold_writes.h"
#include "engines/common/transaction_page.h"
#include "engines/mysql/mysql_rows.h"
#include "engines/mysql/mysql_statements.h"

namespace ledger::mysql_internal {
namespace {

constexpr size_t kIntegerBytes = 8;

size_t ParamBytes(const SqlParams& row) {
  size_t bytes = 0;
  for (const SqlValue& value : row) {
    const std::string* text = std::get_if<std::string>(&value);
    bytes += text != nullptr ? text->size() : kIntegerBytes;
  }
  return bytes;
}

SqlParams Flatten(const std::vector<SqlParams>& rows, RowRange range) {
  SqlParams params;
  for (size_t row = range.begin; row < range.end; ++row) {
    params.insert(params.end(), rows[row].begin(), rows[row].end());
  }
  return params;
}

// Runs `send` once per run of `rows` that fits one statement, in order.
absl::Status ForEachStatement(const std::vector<SqlParams>& rows,
                              const std::function<absl::Status(RowRange)>& send) {
  std::vector<size_t> row_bytes;
  row_bytes.reserve(rows.size());
  for (const SqlParams& row : rows) row_bytes.push_back(ParamBytes(row));
  for (RowRange range : SplitIntoStatements(row_bytes)) LEDGER_RETURN_IF_ERROR(send(range));
  return absl::OkStatus();
}

// `insert_into` ("INSERT INTO t (a, b) VALUES ") with one group of placeholders per row.
absl::Status InsertRows(MysqlConnection& connection, const char* insert_into,
                        const std::vector<SqlParams>& rows, std::string_view what) {
  if (rows.empty()) return absl::OkStatus();
  const size_t columns = rows.front().size();
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    return connection
        .Execute(absl::StrCat(insert_into, RowPlaceholders(range.end - range.begin, columns)),
                 Flatten(rows, range), what, ErrorContext::kWrite)
        .status();
  });
}

// One UPDATE of `table` over the rows `range` of `rows` (each: the id, then a value per
// column of `columns`, in order): `SET column = CASE id WHEN ? THEN ? ... END` for each
// column (no MySQL-8-only row aliases), `WHERE id IN (...)` and `condition` if any.
// Returns the rows matched.
absl::StatusOr<int64_t> UpdateById(MysqlConnection& connection, absl::string_view table,
                                   const std::vector<absl::string_view>& columns,
                                   absl::string_view condition, const std::vector<SqlParams>& rows,
                                   RowRange range, std::string_view what) {
  const size_t count = range.end - range.begin;
  std::string cases;
  for (size_t i = 0; i < count; ++i) cases.append(" WHEN ? THEN ?");
  std::string sql = absl::StrCat("UPDATE ", table, " SET ");
  SqlParams params;
  params.reserve(count * (2 * columns.size() + 1));
  for (size_t column = 0; column < columns.size(); ++column) {
    absl::StrAppend(&sql, column == 0 ? "" : ", ", columns[column], " = CASE id", cases, " END");
    for (size_t r = range.begin; r < range.end; ++r) {
      params.insert(params.end(), {rows[r][0], rows[r][column + 1]});
    }
  }
  for (size_t r = range.begin; r < range.end; ++r) params.push_back(rows[r][0]);
  absl::StrAppend(&sql, " WHERE id IN (", Placeholders(count), ")",
                  condition.empty() ? "" : " AND ", condition);
  return connection.Execute(sql, params, what, ErrorContext::kWrite);
}

}  // namespace

std::vector<RowRange> SplitIntoStatements(const std::vector<size_t>& row_bytes) {
  std::vector<RowRange> ranges;
  size_t bytes = 0;
  for (size_t row = 0; row < row_bytes.size(); ++row) {
    const bool full = !ranges.empty() &&
                      (row - ranges.back().begin == kRowsPerStatementMax ||
                       bytes + row_bytes[row] > kStatementBytesMax);
    if (ranges.empty() || full) {
      ranges.push_back({row, row});
      bytes = 0;
    }
    ranges.back().end = row + 1;
    bytes += row_bytes[row];
  }
  return ranges;
}

absl::Status MysqlWriteBatch::AddTransaction(const Transaction& transaction,
                                             const std::vector<Account>& updated_accounts) {
  LEDGER_RETURN_IF_ERROR(engine_common::CheckHoldFields("mysql", transaction));
  std::optional<Settlement> settlement;
  if (transaction.hold_id.has_value()) {
    // Checked now, not when the batch is sent: an unknown kind writes nothing.
    LEDGER_ASSIGN_OR_RETURN(const HoldStatus status,
                            engine_common::SettledStatus("mysql", transaction.kind));
    settlement = Settlement{*transaction.hold_id, std::string(HoldStatusName(status)),
                            transaction.id};
  }
  std::set<std::string> seen;
  for (const Account& account : updated_accounts) {
    if (!seen.insert(account.id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("mysql: account ", account.id, " is updated twice in one write"));
    }
  }
  transactions_.push_back(transaction);
  if (settlement.has_value()) settlements_.push_back(*std::move(settlement));
  for (const Account& account : updated_accounts) {
    // A later transaction of the batch on the same account carries the earlier one's
    // effects: its values are the account's final ones.
    accounts_[account.id] = AccountValues{account.balance, account.version,
                                          account.pending_debits, account.pending_credits};
  }
  return absl::OkStatus();
}

void MysqlWriteBatch::ReplaceKeyRow(const KeyRecord& record) { replaced_keys_.push_back(record); }

void MysqlWriteBatch::WriteKeyRow(const KeyRecord& record) { lone_keys_.push_back(record); }

void MysqlWriteBatch::DropPlaceholder(const KeyIdentity& identity) {
  dropped_placeholders_.push_back(identity);
}

void MysqlWriteBatch::AddEvent(const OutboxEvent& event) { events_.push_back(event); }

void MysqlWriteBatch::NoteLatestRunningMaximum(const std::string& account_id,
                                               std::optional<int64_t> running_max) {
  latest_running_maxima_[account_id] = running_max;
}

bool MysqlWriteBatch::empty() const {
  return transactions_.empty() && accounts_.empty() && replaced_keys_.empty() &&
         lone_keys_.empty() && dropped_placeholders_.empty() && events_.empty();
}

absl::Status MysqlWriteBatch::Send(MysqlConnection& connection) {
  if (empty()) return absl::OkStatus();
  // Parents before children (foreign keys): transactions, then holds and entries.
  LEDGER_RETURN_IF_ERROR(SendTransactions(connection));
  LEDGER_RETURN_IF_ERROR(SendMetadataMembers(connection));
  LEDGER_RETURN_IF_ERROR(SendHolds(connection));
  LEDGER_RETURN_IF_ERROR(SendSettlements(connection));
  using RunningMaxima = std::map<std::string, int64_t>;
  LEDGER_ASSIGN_OR_RETURN(RunningMaxima sent, SendEntries(connection));
  LEDGER_RETURN_IF_ERROR(SendAccounts(connection));
  LEDGER_RETURN_IF_ERROR(SendKeyRows(connection));
  LEDGER_RETURN_IF_ERROR(SendEvents(connection));
  // Only once every write went: a failed Send leaves the transaction to roll back.
  std::map<std::string, std::optional<int64_t>> latest = std::move(latest_running_maxima_);
  for (const auto& [account_id, running_max] : sent) latest[account_id] = running_max;
  *this = MysqlWriteBatch();
  latest_running_maxima_ = std::move(latest);
  return absl::OkStatus();
}

absl::Status MysqlWriteBatch::SendTransactions(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  rows.reserve(transactions_.size());
  for (const Transaction& transaction : transactions_) {
    rows.push_back({transaction.id, std::string(OperationKindName(transaction.kind)),
                    ToMicros(transaction.created_at), transaction.metadata,
                    NullableText(transaction.reversal_of), transaction.fingerprint,
                    NullableText(transaction.hold_id)});
  }
  // A taken id, reversal_of or hold_id fails here as a unique violation: retryable in
  // the write phase (mysql_errors.cc, docs/engines/errors.md).
  return InsertRows(connection,
                    statement::kInsertTransactionsHead,
                    rows, "insert the transactions");
}

absl::Status MysqlWriteBatch::SendHolds(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  for (const Transaction& transaction : transactions_) {
    if (!transaction.hold.has_value()) continue;
    const HoldTerms& terms = *transaction.hold;
    rows.push_back({transaction.id, terms.from, terms.to, terms.asset, terms.amount,
                    NullableMicros(terms.expires_at), ToMicros(transaction.created_at),
                    std::string(HoldStatusName(HoldStatus::kPending))});
  }
  return InsertRows(connection,
                    statement::kInsertHoldsHead,
                    rows, "insert the holds");
}

absl::Status MysqlWriteBatch::SendSettlements(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  for (const Settlement& settlement : settlements_) {
    rows.push_back({settlement.hold_id, settlement.status, settlement.transaction_id});
  }
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    const size_t count = range.end - range.begin;
    LEDGER_ASSIGN_OR_RETURN(const int64_t matched,
                            UpdateById(connection, "holds", {"status", "settled_by"},
                                       "status = 'pending'", rows, range, "settle the holds"));
    // The unique hold_id above already stops a second settlement; a hold missing or
    // settled anyway is the same lost race (as on the memory engine): rerun, re-check.
    if (matched == static_cast<int64_t>(count)) return absl::OkStatus();
    return FindUnsettledHold(
        connection, std::vector<Settlement>(settlements_.begin() + range.begin,
                                            settlements_.begin() + range.end));
  });
}

absl::Status MysqlWriteBatch::FindUnsettledHold(MysqlConnection& connection,
                                                const std::vector<Settlement>& settlements) const {
  std::map<std::string, std::string> settled_by;  // as this transaction now sees them
  SqlParams ids;
  for (const Settlement& settlement : settlements) ids.push_back(settlement.hold_id);
  LEDGER_RETURN_IF_ERROR(connection.Query(
      SettledByOfHoldsSql(ids.size()),
      ids, [&](const SqlRow& row) { settled_by[row.String(0)] = row.OptionalString(1).value_or(""); },
      "find the hold not settled", ErrorContext::kWrite));
  for (const Settlement& settlement : settlements) {
    auto found = settled_by.find(settlement.hold_id);
    if (found == settled_by.end() || found->second != settlement.transaction_id) {
      return engine_common::HoldNotPendingError("mysql", settlement.hold_id);
    }
  }
  // Every hold reads as settled by its own transaction, yet the UPDATE matched fewer.
  return engine_common::HoldNotPendingError("mysql", settlements.front().hold_id);
}

absl::Status MysqlWriteBatch::SendMetadataMembers(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  for (const Transaction& transaction : transactions_) {
    const int64_t created_at = ToMicros(transaction.created_at);
    for (engine_common::MetadataMember& member :
         engine_common::IndexedMetadataMembers(transaction.metadata)) {
      rows.push_back({std::move(member.name), std::move(member.value), created_at,
                      transaction.id});
    }
  }
  // A plain INSERT: a transaction's member names are distinct, and its id is new (the
  // transactions INSERT above would have failed first), so no row can be there already.
  return InsertRows(connection,
                    statement::kInsertMetadataHead,
                    rows, "index the metadata");
}

absl::StatusOr<std::map<std::string, int64_t>> MysqlWriteBatch::ReadRunningMaxima(
    MysqlConnection& connection, const std::map<std::string, int64_t>& first_versions) const {
  std::vector<SqlParams> rows;
  rows.reserve(first_versions.size());
  for (const auto& [account_id, version] : first_versions) {
    rows.push_back({account_id, account_id, version});
  }
  std::map<std::string, int64_t> maxima;
  size_t answered = 0;
  LEDGER_RETURN_IF_ERROR(ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    // One backward step of the primary key per account, all in one statement.
    std::string sql;
    for (size_t r = range.begin; r < range.end; ++r) {
      absl::StrAppend(&sql, r == range.begin ? "" : " UNION ALL ",
                      statement::kSelectRunningMaxBefore);
    }
    return connection.Query(
        sql, Flatten(rows, range),
        [&](const SqlRow& row) {
          ++answered;
          if (!row.IsNull(1)) maxima[row.String(0)] = row.Int64(1);
        },
        "read the running maxima", ErrorContext::kWrite);
  }));
  if (answered != first_versions.size()) {
    return absl::InternalError(absl::StrCat("mysql: read the running maximum of ", answered,
                                            " of ", first_versions.size(), " accounts"));
  }
  return maxima;
}

absl::StatusOr<std::map<std::string, int64_t>> MysqlWriteBatch::SendEntries(
    MysqlConnection& connection) const {
  struct Row {
    const Entry* entry;
    const Transaction* transaction;
    int64_t index;
    int64_t created_at;
    int64_t running_max = 0;
  };
  std::vector<Row> entries;
  std::map<std::string, int64_t> running;         // each account's, as the entries go
  std::map<std::string, int64_t> first_versions;  // of the accounts not noted
  for (const Transaction& transaction : transactions_) {
    for (size_t index = 0; index < transaction.entries.size(); ++index) {
      const Entry& entry = transaction.entries[index];
      entries.push_back({&entry, &transaction, static_cast<int64_t>(index),
                         ToMicros(transaction.created_at)});
      auto noted = latest_running_maxima_.find(entry.account_id);
      if (noted != latest_running_maxima_.end()) {
        if (noted->second.has_value()) running.emplace(entry.account_id, *noted->second);
        continue;
      }
      auto [first, inserted] = first_versions.emplace(entry.account_id, entry.account_version);
      if (!inserted) first->second = std::min(first->second, entry.account_version);
    }
  }
  if (entries.empty()) return running;
  // created_at_running_max (schema/mysql/0005_reads_indexes.sql): the latest created_at
  // among the entry and every earlier entry of its account, so it continues from the
  // account's latest entry before this batch. LockAccounts noted that entry's for every
  // account it locked, and no other writer adds an entry to a locked account (on Galera,
  // a write from another node to the same account fails certification, as any conflict
  // does); an account not noted is read here.
  if (!first_versions.empty()) {
    using RunningMaxima = std::map<std::string, int64_t>;
    LEDGER_ASSIGN_OR_RETURN(RunningMaxima read, ReadRunningMaxima(connection, first_versions));
    running.insert(read.begin(), read.end());
  }
  std::vector<Row*> by_version;
  by_version.reserve(entries.size());
  for (Row& row : entries) by_version.push_back(&row);
  std::sort(by_version.begin(), by_version.end(), [](const Row* a, const Row* b) {
    return std::tie(a->entry->account_id, a->entry->account_version) <
           std::tie(b->entry->account_id, b->entry->account_version);
  });
  for (Row* row : by_version) {
    int64_t& previous = running.emplace(row->entry->account_id, row->created_at).first->second;
    previous = std::max(previous, row->created_at);
    row->running_max = previous;
  }
  std::vector<SqlParams> rows;
  rows.reserve(entries.size());
  for (const Row& row : entries) {
    const Entry& entry = *row.entry;
    rows.push_back({entry.account_id, entry.account_version, row.transaction->id, row.index,
                    entry.asset, entry.amount, entry.balance_after, row.created_at,
                    row.running_max});
  }
  LEDGER_RETURN_IF_ERROR(InsertRows(connection,
                                    statement::kInsertEntriesHead,
                                    rows, "insert the entries"));
  return running;
}

absl::Status MysqlWriteBatch::SendAccounts(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  rows.reserve(accounts_.size());
  for (const auto& [id, values] : accounts_) {
    rows.push_back({id, values.balance, values.version, values.pending_debits,
                    values.pending_credits});
  }
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    const size_t count = range.end - range.begin;
    LEDGER_ASSIGN_OR_RETURN(
        const int64_t matched,
        UpdateById(connection, "accounts",
                   {"balance", "version", "pending_debits", "pending_credits"}, "", rows, range,
                   "update balances"));
    if (matched != static_cast<int64_t>(count)) {
      return absl::InternalError(absl::StrCat("mysql: updated ", matched, " of ", count,
                                              " locked accounts"));
    }
    return absl::OkStatus();
  });
}

absl::Status MysqlWriteBatch::SendKeyRows(MysqlConnection& connection) const {
  LEDGER_RETURN_IF_ERROR(SendReplacedKeyRows(connection));
  LEDGER_RETURN_IF_ERROR(SendDroppedPlaceholders(connection));
  for (const KeyRecord& record : lone_keys_) {
    LEDGER_RETURN_IF_ERROR(SendLoneKeyRow(connection, record));
  }
  return absl::OkStatus();
}

absl::Status MysqlWriteBatch::SendReplacedKeyRows(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  rows.reserve(replaced_keys_.size());
  for (const KeyRecord& record : replaced_keys_) {
    SqlParams row = IdentityParams(record.identity);
    row.insert(row.end(), {record.fingerprint, record.transaction_id,
                           ToMicros(record.created_at), ToMicros(record.expires_at)});
    rows.push_back(std::move(row));
  }
  // Every row is there (the claim's placeholder, or the expired record it locked) and
  // locked by this transaction, so each is an update: 2 affected rows apiece. The guard
  // keeps a live committed record as it is (1: found, unchanged), and a row that is gone
  // would be inserted (1): either is a count short, and fails. `state` goes last, once
  // the guard no longer reads it. On one server the row lock makes a short count
  // impossible; on a multi-writer Galera cluster it is how a claim lost to another node
  // shows (row locks are per node; certification would refuse this COMMIT anyway), so it
  // is retryable: the attempt rolls back and its retry replays the other node's commit.
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    const size_t count = range.end - range.begin;
    std::string values;
    for (size_t r = 0; r < count; ++r) {
      values.append(r == 0 ? "(?, ?, ?, ?, 'committed', ?, ?, ?)"
                           : ", (?, ?, ?, ?, 'committed', ?, ?, ?)");
    }
    LEDGER_ASSIGN_OR_RETURN(
        const int64_t affected,
        connection.Execute(
            RecordKeysSql(values),
            Flatten(rows, range), "record the keys", ErrorContext::kWrite));
    if (affected != 2 * static_cast<int64_t>(count)) {
      return RetryableError(absl::StrCat(
          "mysql: recording ", count, " keys over the rows this transaction claimed affected ",
          affected, " rows, not ", 2 * count, ": another writer changed a claimed key row"));
    }
    return absl::OkStatus();
  });
}

absl::Status MysqlWriteBatch::SendDroppedPlaceholders(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  rows.reserve(dropped_placeholders_.size());
  for (const KeyIdentity& identity : dropped_placeholders_) rows.push_back(IdentityParams(identity));
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    const size_t count = range.end - range.begin;
    std::string matches;
    for (size_t r = 0; r < count; ++r) {
      absl::StrAppend(&matches, r == 0 ? "" : " OR ", "(" LEDGER_MYSQL_IDENTITY_MATCHES ")");
    }
    // Each is this transaction's own placeholder, locked since the claim: all are there.
    LEDGER_ASSIGN_OR_RETURN(
        const int64_t deleted,
        connection.Execute(DropPlaceholdersSql(matches),
                           Flatten(rows, range), "drop the unused placeholders",
                           ErrorContext::kWrite));
    if (deleted != static_cast<int64_t>(count)) {
      return absl::InternalError(absl::StrCat("mysql: dropped ", deleted, " of the ", count,
                                              " placeholders this transaction claimed"));
    }
    return absl::OkStatus();
  });
}

absl::Status MysqlWriteBatch::SendLoneKeyRow(MysqlConnection& connection,
                                             const KeyRecord& record) const {
  SqlParams identity = IdentityParams(record.identity);
  SqlParams values = {record.fingerprint, record.transaction_id, ToMicros(record.created_at),
                      ToMicros(record.expires_at)};
  SqlParams update = values;
  update.insert(update.end(), identity.begin(), identity.end());
  update.push_back(ToMicros(record.created_at));
  // A placeholder or an expired record; never a live committed record (the claim was
  // bypassed): the INSERT below then fails as a unique violation, as on the other engines.
  LEDGER_ASSIGN_OR_RETURN(
      const int64_t matched,
      connection.Execute(statement::kReplaceKey,
                         update, "record the key", ErrorContext::kWrite));
  if (matched > 0) return absl::OkStatus();
  SqlParams insert = std::move(identity);
  insert.insert(insert.end(), values.begin(), values.end());
  return connection
      .Execute(statement::kInsertKey,
               insert, "record the key", ErrorContext::kWrite)
      .status();
}

absl::Status MysqlWriteBatch::SendEvents(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  rows.reserve(events_.size());
  for (const OutboxEvent& event : events_) {
    rows.push_back({event.transaction_id, event.type, event.payload, ToMicros(event.created_at)});
  }
  // In the order appended: InnoDB hands out a multi-row INSERT's AUTO_INCREMENT values
  // in VALUES order, and the statements go in order too.
  return InsertRows(connection,
                    statement::kInsertEventsHead,
                    rows, "append the events");
}

}  // namespace ledger::mysql_internal
