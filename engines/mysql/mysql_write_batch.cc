#include "engines/mysql/mysql_write_batch.h"

#include <algorithm>
#include <array>
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
#include "engines/mysql/mysql_json_rows.h"
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

JsonValue NullableValue(const std::optional<std::string>& text) {
  if (!text.has_value()) return std::monostate();
  return std::string_view(*text);
}

JsonValue NullableValue(const std::optional<absl::Time>& time) {
  if (!time.has_value()) return std::monostate();
  return ToMicros(*time);
}

// The parameters of the write procedure's CALLs (schema/mysql/0008_write_procedure.sql):
// one JSON array of rows per table, in the procedure's order. Rows are added table by
// table; a CALL whose arrays would grow past kStatementBytesMax ends before the row (a
// row is never split), and the next CALL carries on with the same table.
class WriteCalls {
 public:
  enum Table { kTransactions, kMetadata, kHolds, kSettlements, kEntries, kAccounts, kEvents,
               kTables };
  static_assert(kTables == kWriteTables);
  using Arrays = std::array<std::string, kTables>;  // empty: no rows (NULL)

  void AddRow(Table table, std::initializer_list<JsonValue> values) {
    if (calls_.empty()) calls_.emplace_back();
    std::string& array = calls_.back()[table];
    const size_t before = array.size();
    AppendJsonRow(array, values);
    bytes_ += array.size() - before;
    if (bytes_ <= kStatementBytesMax || rows_ == 0) {
      ++rows_;
      return;
    }
    array.resize(before);  // this row starts the next CALL
    calls_.emplace_back();
    bytes_ = 0;
    rows_ = 0;
    AddRow(table, values);
  }

  // Each CALL's arrays, each closed ("[...]"), or empty for a table without rows.
  std::vector<Arrays> Finish() && {
    for (Arrays& arrays : calls_) {
      for (std::string& array : arrays) {
        if (!array.empty()) array.push_back(']');
      }
    }
    return std::move(calls_);
  }

 private:
  std::vector<Arrays> calls_;
  size_t bytes_ = 0;  // of the last CALL
  size_t rows_ = 0;   // of the last CALL
};

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

absl::Status MysqlWriteBatch::Send(MysqlConnection& connection, End end) {
  if (empty()) {
    return end == End::kCommit ? connection.Commit(ErrorContext::kCommit) : absl::OkStatus();
  }
  // The key rows first: no other row refers to them, and each statement checks its own
  // count. Then the rest as the write procedure's CALLs, parents before children.
  LEDGER_RETURN_IF_ERROR(SendKeyRows(connection));
  const std::vector<std::array<std::string, kWriteTables>> calls = WriteCallArrays();
  for (size_t i = 0; i < calls.size(); ++i) {
    const bool commits = end == End::kCommit && i + 1 == calls.size();
    SqlParams params;
    params.reserve(calls[i].size() + 1);
    for (const std::string& array : calls[i]) {
      if (array.empty()) {
        params.emplace_back(std::monostate());
      } else {
        params.emplace_back(array);
      }
    }
    params.emplace_back(int64_t{commits ? 1 : 0});
    absl::Status written =
        connection.Call(statement::kCallWrite, params, nullptr, commits ? "write and commit" : "write",
                        commits ? ErrorContext::kWriteAndCommit : ErrorContext::kWrite);
    if (!written.ok() && connection.last_error_code() == kErrorHoldNotPending) {
      return FindUnsettledHold(connection, settlements_);  // names the hold
    }
    LEDGER_RETURN_IF_ERROR(written);
  }
  // Key rows alone (a rejected item's dropped claim) leave no CALL: COMMIT alone.
  if (end == End::kCommit && calls.empty()) {
    LEDGER_RETURN_IF_ERROR(connection.Commit(ErrorContext::kCommit));
  }
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

std::vector<std::array<std::string, kWriteTables>> MysqlWriteBatch::WriteCallArrays() const {
  WriteCalls calls;
  // A taken id, reversal_of or hold_id fails as a unique violation: retryable in the
  // write phase (mysql_errors.cc, docs/engines/errors.md).
  for (const Transaction& transaction : transactions_) {
    calls.AddRow(WriteCalls::kTransactions, {transaction.id, OperationKindName(transaction.kind),
                      ToMicros(transaction.created_at), transaction.metadata,
                      NullableValue(transaction.reversal_of), transaction.fingerprint,
                      NullableValue(transaction.hold_id)});
  }
  // A transaction's member names are distinct and its id new: no row is there already.
  for (const Transaction& transaction : transactions_) {
    const int64_t created_at = ToMicros(transaction.created_at);
    for (const engine_common::MetadataMember& member :
         engine_common::IndexedMetadataMembers(transaction.metadata)) {
      calls.AddRow(WriteCalls::kMetadata, {member.name, member.value, created_at, transaction.id});
    }
  }
  for (const Transaction& transaction : transactions_) {
    if (!transaction.hold.has_value()) continue;
    const HoldTerms& terms = *transaction.hold;
    calls.AddRow(WriteCalls::kHolds, {transaction.id, terms.from, terms.to, terms.asset, terms.amount,
                      NullableValue(terms.expires_at), ToMicros(transaction.created_at)});
  }
  // The unique hold_id already stops a second settlement; a hold missing or settled
  // anyway is the same lost race (as on the memory engine): the procedure's count
  // fails the CALL (45002) and Send names the hold.
  for (const Settlement& settlement : settlements_) {
    calls.AddRow(WriteCalls::kSettlements, {settlement.hold_id, settlement.status, settlement.transaction_id});
  }
  for (size_t t = 0; t < transactions_.size(); ++t) {
    const Transaction& transaction = transactions_[t];
    const int64_t created_at = ToMicros(transaction.created_at);
    for (size_t index = 0; index < transaction.entries.size(); ++index) {
      const Entry& entry = transaction.entries[index];
      calls.AddRow(WriteCalls::kEntries, {entry.account_id, entry.account_version, transaction.id,
                        static_cast<int64_t>(index), entry.asset, entry.amount,
                        entry.balance_after, created_at,
                        ToMicros(entry_running_maxima_[t][index])});
    }
  }
  // The lock guard: each row is updated only where it still holds the values its lock
  // read. On one server the lock makes that certain. On a multi-writer Galera cluster a
  // lock is per node, and a transaction aborted by another node's write set while idle
  // has been seen to go unreported (docs/scaling.md); the statements after it then run
  // in a new transaction without the lock, and these absolute values would overwrite
  // the other node's. The entries' (account_id, account_version) key already refuses a
  // second writer of the same version; this also covers what changes no version (the
  // pending amounts a hold or a void moves). A short count fails the CALL (45001),
  // retryable: the attempt rolls back and its rerun reads the accounts again.
  for (const auto& [id, values] : accounts_) {
    const auto read = locked_.find(id);
    LEDGER_CHECK(read != locked_.end()) << "account " << id << " written without its lock read";
    calls.AddRow(WriteCalls::kAccounts, {id, values.balance, values.version, values.pending_debits,
                      values.pending_credits, NullableValue(values.entries_running_max),
                      read->second.balance, read->second.version, read->second.pending_debits,
                      read->second.pending_credits});
  }
  // In the order appended: the procedure inserts them in the array's order, and
  // InnoDB hands out AUTO_INCREMENT values in insert order.
  for (const OutboxEvent& event : events_) {
    calls.AddRow(WriteCalls::kEvents, {event.transaction_id, event.type, event.payload,
                      ToMicros(event.created_at)});
  }
  return std::move(calls).Finish();
}

std::string_view UnsettledHoldOf(
    const std::vector<std::pair<std::string, std::string>>& settlements,
    const std::map<std::string, HoldRowState, std::less<>>& rows) {
  for (const auto& [hold_id, transaction_id] : settlements) {
    const auto row = rows.find(hold_id);
    if (row == rows.end()) return hold_id;
    if (row->second.status != "pending" && row->second.settled_by != transaction_id) {
      return hold_id;
    }
  }
  return settlements.empty() ? std::string_view() : std::string_view(settlements.front().first);
}

absl::Status MysqlWriteBatch::FindUnsettledHold(MysqlConnection& connection,
                                                const std::vector<Settlement>& settlements) const {
  std::map<std::string, HoldRowState, std::less<>> rows;  // as this transaction now sees them
  std::vector<std::pair<std::string, std::string>> settling;
  SqlParams ids;
  for (const Settlement& settlement : settlements) {
    ids.push_back(settlement.hold_id);
    settling.emplace_back(settlement.hold_id, settlement.transaction_id);
  }
  LEDGER_RETURN_IF_ERROR(connection.Query(
      SettlementStateOfHoldsSql(ids.size()), ids,
      [&](const SqlRow& row) {
        rows[row.String(0)] = HoldRowState{row.String(1), row.OptionalString(2).value_or("")};
      },
      "find the hold not settled", ErrorContext::kWrite));
  return engine_common::HoldNotPendingError("mysql", UnsettledHoldOf(settling, rows));
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

}  // namespace ledger::mysql_internal
