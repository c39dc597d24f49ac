#include "engines/mysql/mysql_write_batch.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/check.h"
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

// A column UpdateById sets; one kept when null keeps the row's own value where the new
// one is NULL.
struct UpdateColumn {
  UpdateColumn(const char* column_name) : name(column_name) {}  // NOLINT: a plain column
  UpdateColumn(const char* column_name, bool keep) : name(column_name), kept_when_null(keep) {}
  absl::string_view name;
  bool kept_when_null = false;
};

// A condition UpdateById adds to its WHERE, with the parameters of its placeholders.
struct UpdateCondition {
  std::string sql;
  SqlParams params;
};

// One UPDATE of `table` over the rows `range` of `rows` (each: the id, then a value per
// column of `columns`, in order): `SET column = CASE id WHEN ? THEN ? ... END` for each
// column (no MySQL-8-only row aliases), `WHERE id IN (...)` and `condition` if any.
// Returns the rows matched.
absl::StatusOr<int64_t> UpdateById(MysqlConnection& connection, absl::string_view table,
                                   const std::vector<UpdateColumn>& columns,
                                   const UpdateCondition& condition,
                                   const std::vector<SqlParams>& rows, RowRange range,
                                   std::string_view what) {
  const size_t count = range.end - range.begin;
  std::string cases;
  for (size_t i = 0; i < count; ++i) cases.append(" WHEN ? THEN ?");
  std::string sql = absl::StrCat("UPDATE ", table, " SET ");
  SqlParams params;
  params.reserve(count * (2 * columns.size() + 1) + condition.params.size());
  for (size_t column = 0; column < columns.size(); ++column) {
    const UpdateColumn& set = columns[column];
    if (set.kept_when_null) {
      absl::StrAppend(&sql, column == 0 ? "" : ", ", set.name, " = COALESCE(CASE id", cases,
                      " END, ", set.name, ")");
    } else {
      absl::StrAppend(&sql, column == 0 ? "" : ", ", set.name, " = CASE id", cases, " END");
    }
    for (size_t r = range.begin; r < range.end; ++r) {
      params.insert(params.end(), {rows[r][0], rows[r][column + 1]});
    }
  }
  for (size_t r = range.begin; r < range.end; ++r) params.push_back(rows[r][0]);
  params.insert(params.end(), condition.params.begin(), condition.params.end());
  absl::StrAppend(&sql, " WHERE id IN (", Placeholders(count), ")",
                  condition.sql.empty() ? "" : " AND ", condition.sql);
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
  for (const Account& account : updated_accounts) {
    if (!locked_.contains(account.id)) {
      return absl::InternalError(absl::StrCat("mysql: account ", account.id,
                                              " is written without the values its lock read"));
    }
  }
  // Last of the checks: from here on the batch and the running maxima move together.
  LEDGER_ASSIGN_OR_RETURN(std::vector<absl::Time> running_maxima,
                          running_maxima_.Continue(transaction));
  entry_running_maxima_.push_back(std::move(running_maxima));
  transactions_.push_back(transaction);
  if (settlement.has_value()) settlements_.push_back(*std::move(settlement));
  for (const Account& account : updated_accounts) {
    // A later transaction of the batch on the same account carries the earlier one's
    // effects: its values are the account's final ones.
    accounts_[account.id] =
        AccountValues{account.balance, account.version, account.pending_debits,
                      account.pending_credits, running_maxima_.Latest(account.id)};
  }
  return absl::OkStatus();
}

void MysqlWriteBatch::NoteLocked(const Account& account, std::optional<absl::Time> running_max) {
  running_maxima_.NoteLocked(account.id, running_max);
  locked_[account.id] = LockedValues{account.balance, account.version, account.pending_debits,
                                     account.pending_credits};
}

std::vector<std::string> MysqlWriteBatch::Unnoted(
    const Transaction& transaction, const std::vector<Account>& updated_accounts) const {
  std::vector<std::string> unnoted = running_maxima_.Unnoted(transaction);
  for (const Account& account : updated_accounts) {
    if (!locked_.contains(account.id)) unnoted.push_back(account.id);
  }
  std::sort(unnoted.begin(), unnoted.end());
  unnoted.erase(std::unique(unnoted.begin(), unnoted.end()), unnoted.end());
  return unnoted;
}

void MysqlWriteBatch::ReplaceKeyRow(const KeyRecord& record) { replaced_keys_.push_back(record); }

void MysqlWriteBatch::WriteKeyRow(const KeyRecord& record) { lone_keys_.push_back(record); }

void MysqlWriteBatch::RewriteClaimedKeyRow(const KeyRecord& claimed, const KeyRecord& record) {
  LEDGER_CHECK(claimed.identity == record.identity) << "a claimed key row rewritten under another key";
  rewritten_keys_.emplace_back(claimed, record);
}

void MysqlWriteBatch::DropClaimedKeyRow(const KeyRecord& claimed) {
  dropped_keys_.push_back(claimed);
}

void MysqlWriteBatch::AddEvent(const OutboxEvent& event) { events_.push_back(event); }

bool MysqlWriteBatch::empty() const {
  return transactions_.empty() && accounts_.empty() && replaced_keys_.empty() &&
         lone_keys_.empty() && rewritten_keys_.empty() && dropped_keys_.empty() &&
         events_.empty();
}

absl::Status MysqlWriteBatch::Send(MysqlConnection& connection) {
  if (empty()) return absl::OkStatus();
  // Parents before children (foreign keys): transactions, then holds and entries.
  LEDGER_RETURN_IF_ERROR(SendTransactions(connection));
  LEDGER_RETURN_IF_ERROR(SendMetadataMembers(connection));
  LEDGER_RETURN_IF_ERROR(SendHolds(connection));
  LEDGER_RETURN_IF_ERROR(SendSettlements(connection));
  LEDGER_RETURN_IF_ERROR(SendEntries(connection));
  LEDGER_RETURN_IF_ERROR(SendAccounts(connection));
  LEDGER_RETURN_IF_ERROR(SendKeyRows(connection));
  LEDGER_RETURN_IF_ERROR(SendEvents(connection));
  // Only once every write went: a failed Send leaves the transaction to roll back. The
  // rows now hold what this Send wrote; the next Send's guard compares those.
  for (const auto& [id, values] : accounts_) {
    locked_[id] = LockedValues{values.balance, values.version, values.pending_debits,
                               values.pending_credits};
  }
  engine_common::EntryRunningMaxima running_maxima = std::move(running_maxima_);
  std::map<std::string, LockedValues, std::less<>> locked = std::move(locked_);
  *this = MysqlWriteBatch();
  running_maxima_ = std::move(running_maxima);
  locked_ = std::move(locked);
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
                                       {"status = 'pending'", {}}, rows, range,
                                       "settle the holds"));
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

absl::Status MysqlWriteBatch::SendEntries(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  for (size_t t = 0; t < transactions_.size(); ++t) {
    const Transaction& transaction = transactions_[t];
    const int64_t created_at = ToMicros(transaction.created_at);
    for (size_t index = 0; index < transaction.entries.size(); ++index) {
      const Entry& entry = transaction.entries[index];
      rows.push_back({entry.account_id, entry.account_version, transaction.id,
                      static_cast<int64_t>(index), entry.asset, entry.amount, entry.balance_after,
                      created_at, ToMicros(entry_running_maxima_[t][index])});
    }
  }
  return InsertRows(connection, statement::kInsertEntriesHead, rows, "insert the entries");
}

absl::Status MysqlWriteBatch::SendAccounts(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;
  rows.reserve(accounts_.size());
  for (const auto& [id, values] : accounts_) {
    rows.push_back({id, values.balance, values.version, values.pending_debits,
                    values.pending_credits, NullableMicros(values.entries_running_max)});
  }
  // The lock guard: each row is updated only where it still holds the values its lock
  // read. On one server the lock makes that certain. On a multi-writer Galera cluster a
  // lock is per node, and a transaction aborted by another node's write set while idle
  // has been seen to go unreported (docs/scaling.md); the statements after it then run
  // in a new transaction without the lock, and these absolute values would overwrite
  // the other node's. The entries' (account_id, account_version) key already refuses a
  // second writer of the same version; this also covers what changes no version (the
  // pending amounts a hold or a void moves). A short count is retryable: the attempt
  // rolls back and its rerun reads the accounts again.
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    const size_t count = range.end - range.begin;
    UpdateCondition guard;
    for (size_t r = range.begin; r < range.end; ++r) {
      const std::string& id = std::get<std::string>(rows[r][0]);
      const auto read = locked_.find(id);
      LEDGER_CHECK(read != locked_.end()) << "account " << id << " written without its lock read";
      guard.params.insert(guard.params.end(),
                          {id, read->second.balance, read->second.version,
                           read->second.pending_debits, read->second.pending_credits});
    }
    guard.sql = absl::StrCat("(id, balance, version, pending_debits, pending_credits) IN (",
                             RowPlaceholders(count, 5), ")");
    LEDGER_ASSIGN_OR_RETURN(
        const int64_t matched,
        UpdateById(connection, "accounts",
                   {"balance", "version", "pending_debits", "pending_credits",
                    {"entries_running_max", /*kept_when_null=*/true}},
                   guard, rows, range, "update balances"));
    if (matched != static_cast<int64_t>(count)) {
      return RetryableError(absl::StrCat(
          "mysql: updated ", matched, " of ", count,
          " locked accounts: another writer changed an account after its lock read it"));
    }
    return absl::OkStatus();
  });
}

absl::Status MysqlWriteBatch::SendKeyRows(MysqlConnection& connection) const {
  LEDGER_RETURN_IF_ERROR(SendReplacedKeyRows(connection));
  LEDGER_RETURN_IF_ERROR(SendRewrittenKeyRows(connection));
  LEDGER_RETURN_IF_ERROR(SendDroppedKeyRows(connection));
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

// Rare: a committing item's record differs from the one its key's claim inserted.
absl::Status MysqlWriteBatch::SendRewrittenKeyRows(MysqlConnection& connection) const {
  for (const auto& [claimed, record] : rewritten_keys_) {
    SqlParams params = {record.fingerprint, record.transaction_id, ToMicros(record.created_at),
                        ToMicros(record.expires_at)};
    SqlParams identity = IdentityParams(claimed.identity);
    params.insert(params.end(), identity.begin(), identity.end());
    params.push_back(claimed.transaction_id);
    LEDGER_ASSIGN_OR_RETURN(const int64_t changed,
                            connection.Execute(statement::kRewriteClaimedKey, params,
                                               "record the key over its claim", ErrorContext::kWrite));
    if (changed != 1) {
      return absl::InternalError(absl::StrCat("mysql: rewrote ", changed,
                                              " rows over the key row this transaction claimed"));
    }
  }
  return absl::OkStatus();
}

absl::Status MysqlWriteBatch::SendDroppedKeyRows(MysqlConnection& connection) const {
  std::vector<SqlParams> rows;  // their sizes split the statements
  rows.reserve(dropped_keys_.size());
  for (const KeyRecord& claimed : dropped_keys_) {
    SqlParams row = IdentityParams(claimed.identity);
    row.push_back(claimed.transaction_id);
    rows.push_back(std::move(row));
  }
  return ForEachStatement(rows, [&](RowRange range) -> absl::Status {
    const size_t count = range.end - range.begin;
    KeyRowMatches matches =
        MatchKeyRows(absl::MakeConstSpan(dropped_keys_).subspan(range.begin, count),
                     MatchTransactionId::kYes);
    // Each is the row this transaction's claim inserted, locked since: all are there.
    LEDGER_ASSIGN_OR_RETURN(
        const int64_t deleted,
        connection.Execute(DropClaimedKeyRowsSql(matches.condition), matches.params,
                           "drop the unused claimed keys", ErrorContext::kWrite));
    if (deleted != static_cast<int64_t>(count)) {
      return absl::InternalError(absl::StrCat("mysql: dropped ", deleted, " of the ", count,
                                              " key rows this transaction claimed"));
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
