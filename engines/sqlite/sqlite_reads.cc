// The SQLite engine outside the submit path: assets, accounts, transaction history,
// key records, holds and outbox events. Reads never take the writer lock: in WAL mode a
// reader sees the last committed state and runs beside the one writer. The few writes (an
// asset, an account, closing one, pruning keys) are each one short BEGIN IMMEDIATE
// transaction with the default busy timeout (SqliteOptions::busy_timeout).
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engines/common/entry_running_max.h"
#include "engines/common/transaction_page.h"
#include "engines/sqlite/sqlite_engine_internal.h"
#include "engines/sqlite/sqlite_rows.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {
namespace {

// SQLite reads LIMIT -1 as "no limit"; the contract's limits are counts of rows.
bool NothingToList(int64_t limit) { return limit <= 0; }

absl::StatusOr<std::optional<int>> SelectAssetScale(Connection& connection,
                                                    std::string_view code) {
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection.Prepare(statement::kSelectAssetScale, "select asset"));
  query.BindText(code);
  LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::nullopt;
  return static_cast<int>(query.Int(0));
}


}  // namespace

absl::StatusOr<std::optional<Asset>> SqliteEngine::GetAsset(std::string_view code) {
  std::optional<Asset> asset;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare(statement::kSelectAsset, "select asset"));
    query.BindText(code);
    LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
    if (found) asset = Asset{query.Text(0), static_cast<int>(query.Int(1))};
    return absl::OkStatus();
  }));
  return asset;
}

absl::StatusOr<std::vector<Asset>> SqliteEngine::ListAssets() {
  std::vector<Asset> assets;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare(statement::kListAssets, "list assets"));
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      assets.push_back(Asset{query.Text(0), static_cast<int>(query.Int(1))});
    }
  }));
  return assets;
}

absl::StatusOr<std::optional<Account>> SqliteEngine::GetAccount(std::string_view id) {
  std::optional<Account> account;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(account, SelectAccount(connection, id, ErrorContext::kStandalone));
    return absl::OkStatus();
  }));
  return account;
}

absl::StatusOr<std::vector<Account>> SqliteEngine::ListAccounts(std::string_view after_id,
                                                                int64_t limit) {
  std::vector<Account> accounts;
  if (NothingToList(limit)) return accounts;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kListAccounts,
                                        "list accounts"));
    query.BindText(after_id).BindInt(limit);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      accounts.push_back(ReadAccount(query));
    }
  }));
  return accounts;
}

absl::StatusOr<std::optional<Transaction>> SqliteEngine::GetTransaction(std::string_view id) {
  std::optional<Transaction> transaction;
  LEDGER_RETURN_IF_ERROR(InReadTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(transaction,
                            SelectTransaction(connection, id, ErrorContext::kStandalone));
    return absl::OkStatus();
  }));
  return transaction;
}

absl::StatusOr<std::vector<Transaction>> SqliteEngine::ListTransactions(std::string_view after_id,
                                                                        int64_t limit) {
  std::vector<Transaction> transactions;
  if (NothingToList(limit)) return transactions;
  LEDGER_RETURN_IF_ERROR(InReadTransaction([&](Connection& connection) -> absl::Status {
    {
      LEDGER_ASSIGN_OR_RETURN(
          Query query,
          connection.Prepare(statement::kListTransactions,
                             "list transactions"));
      query.BindText(after_id).BindInt(limit);
      while (true) {
        LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
        if (!has_row) break;
        LEDGER_ASSIGN_OR_RETURN(Transaction transaction, ReadTransactionHeader(query));
        transactions.push_back(std::move(transaction));
      }
    }
    for (Transaction& transaction : transactions) {
      LEDGER_RETURN_IF_ERROR(SelectEntriesInto(connection, transaction, ErrorContext::kStandalone));
    }
    return absl::OkStatus();
  }));
  return transactions;
}

absl::StatusOr<std::vector<HistoryEntry>> SqliteEngine::ListEntries(std::string_view account_id,
                                                                    int64_t after_version,
                                                                    int64_t limit) {
  std::vector<HistoryEntry> entries;
  if (NothingToList(limit)) return entries;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kListEntries,
                                        "list entries"));
    query.BindText(account_id).BindInt(after_version).BindInt(limit);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      entries.push_back({ReadEntry(query), query.Text(5), query.Time(6)});
    }
  }));
  return entries;
}

absl::StatusOr<std::optional<HistoryEntry>> SqliteEngine::EntryAsOf(std::string_view account_id,
                                                                    absl::Time as_of) {
  std::optional<HistoryEntry> found;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kSelectEntryAsOf, "select entry as of"));
    query.BindText(account_id).BindTime(as_of);
    LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
    if (!has_row) return absl::InternalError("the as-of search returned no row");
    if (query.Int(statement::kSelectEntryAsOfCompleteColumn) == 0) {
      return engine_common::AsOfSearchStoppedShort(account_id);
    }
    if (!query.IsNull(0)) found = HistoryEntry{ReadEntry(query), query.Text(5), query.Time(6)};
    return absl::OkStatus();
  }));
  return found;
}

absl::StatusOr<std::vector<Transaction>> SqliteEngine::FindTransactions(
    const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
    int64_t limit) {
  if (NothingToList(limit)) return std::vector<Transaction>();
  const engine_common::TransactionPageStatement page = engine_common::BuildTransactionPage(
      filter, after, limit, engine_common::Placeholders::kQuestionMarks);
  std::vector<std::string> ids;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare(page.sql, "find transactions"));
    for (const std::variant<std::string, int64_t>& parameter : page.parameters) {
      if (const std::string* text = std::get_if<std::string>(&parameter)) {
        query.BindText(*text);
      } else {
        query.BindInt(std::get<int64_t>(parameter));
      }
    }
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      ids.push_back(query.Text(1));
    }
  }));
  LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> transactions, GetTransactions(ids));
  return engine_common::InPageOrder(ids, std::move(transactions));
}

absl::StatusOr<std::optional<KeyRecord>> SqliteEngine::GetKeyRecord(const KeyIdentity& identity) {
  std::optional<KeyRecord> record;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kSelectCommittedKey, "select key record"));
    BindIdentity(query, identity);
    LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
    if (!has_row) return absl::OkStatus();
    LEDGER_ASSIGN_OR_RETURN(record, ReadKeyRecord(query));
    return absl::OkStatus();
  }));
  return record;
}

absl::StatusOr<std::vector<KeyRecord>> SqliteEngine::ListKeyRecords(
    const std::optional<KeyIdentity>& after, int64_t limit) {
  std::vector<KeyRecord> records;
  if (NothingToList(limit)) return records;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    // Ordered as the primary key stores them: namespace, encoded scope, key, byte-wise
    // (BINARY collation), so a page continues exactly after the previous one.
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        after.has_value()
            ? connection.Prepare(statement::kListKeyRecordsAfter,
                                 "list key records after")
            : connection.Prepare(statement::kListKeyRecordsFirst,
                                 "list key records"));
    if (after.has_value()) BindIdentity(query, *after);
    query.BindInt(limit);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      LEDGER_ASSIGN_OR_RETURN(KeyRecord record, ReadKeyRecord(query));
      records.push_back(std::move(record));
    }
  }));
  return records;
}

absl::StatusOr<std::optional<Hold>> SqliteEngine::GetHold(std::string_view id) {
  std::optional<Hold> hold;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(hold, SelectHold(connection, id, ErrorContext::kStandalone));
    return absl::OkStatus();
  }));
  return hold;
}

absl::StatusOr<std::vector<Hold>> SqliteEngine::ListHolds(std::string_view account_id,
                                                          std::string_view after_id,
                                                          int64_t limit) {
  std::vector<Hold> holds;
  if (NothingToList(limit)) return holds;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    // For one account, each side's page comes from its own (account, id) index, so a
    // page reads at most twice `limit` rows however many holds the account has; UNION
    // keeps a hold from an account to itself once. Both statements number their
    // parameters alike (every account: ?1 is bound and unused).
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        account_id.empty()
            ? connection.Prepare(statement::kListHolds,
                                 "list holds")
            : connection.Prepare(
                  statement::kListAccountHolds,
                  "list holds of account"));
    query.BindText(account_id).BindText(after_id).BindInt(limit);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      LEDGER_ASSIGN_OR_RETURN(Hold hold, ReadHold(query));
      holds.push_back(std::move(hold));
    }
  }));
  return holds;
}

absl::StatusOr<std::vector<Hold>> SqliteEngine::ListLapsedHolds(absl::Time now, int64_t limit) {
  std::vector<Hold> holds;
  if (NothingToList(limit)) return holds;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    // Walks holds_pending_by_expiry from its start: settled holds are not in it.
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kListLapsedHolds,
                                        "list lapsed holds"));
    query.BindTime(now).BindInt(limit);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      LEDGER_ASSIGN_OR_RETURN(Hold hold, ReadHold(query));
      holds.push_back(std::move(hold));
    }
  }));
  return holds;
}

absl::StatusOr<PendingHoldTotals> SqliteEngine::HoldTotals(std::string_view account_id,
                                                           absl::Time now, absl::Time since) {
  PendingHoldTotals totals;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        totals, SelectHoldTotals(connection, account_id, now, since, ErrorContext::kStandalone));
    return absl::OkStatus();
  }));
  return totals;
}

absl::StatusOr<std::vector<OutboxEvent>> SqliteEngine::ListEvents(int64_t after_sequence,
                                                                  int64_t limit) {
  std::vector<OutboxEvent> events;
  if (NothingToList(limit)) return events;
  LEDGER_RETURN_IF_ERROR(WithConnection([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kListEvents,
                                        "list events"));
    query.BindInt(after_sequence).BindInt(limit);
    while (true) {
      LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
      if (!has_row) return absl::OkStatus();
      events.push_back(ReadOutboxEvent(query));
    }
  }));
  // One file: a later read sees every transaction an event committed with.
  LEDGER_RETURN_IF_ERROR(FillEventPayloads(
      events, [this](const std::vector<std::string>& ids) { return GetTransactions(ids); }));
  return events;
}

// ---------------------------------------------------------------- writes

absl::StatusOr<int64_t> SqliteEngine::WriteStatement(std::string_view sql, std::string_view what,
                                                     const std::function<void(Query&)>& bind) {
  int64_t changed = 0;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare(sql, what));
    bind(query);
    LEDGER_RETURN_IF_ERROR(query.Run());
    changed = connection.ChangedRows();
    return absl::OkStatus();
  }));
  return changed;
}

absl::Status SqliteEngine::PutAsset(const Asset& asset) {
  return InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(std::optional<int> scale, SelectAssetScale(connection, asset.code));
    if (scale.has_value()) {
      if (*scale == asset.scale) return absl::OkStatus();
      return absl::AlreadyExistsError(absl::StrCat("asset ", asset.code,
                                                   " exists with scale ", *scale));
    }
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare(statement::kInsertAsset, "insert asset"));
    query.BindText(asset.code).BindInt(asset.scale);
    return query.Run();
  });
}

absl::Status SqliteEngine::InsertAccount(const Account& account) {
  return InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(std::optional<int> scale, SelectAssetScale(connection, account.asset));
    if (!scale.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("account ", account.id, ": unknown asset ", account.asset));
    }
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare(statement::kInsertAccount,
                                        "insert account"));
    query.BindText(account.id)
        .BindText(account.asset)
        .BindInt(account.allow_negative ? 1 : 0)
        .BindInt(account.overdraft_limit)
        .BindInt(account.closed ? 1 : 0)
        .BindInt(account.balance)
        .BindInt(account.version)
        .BindTime(account.created_at)
        .BindInt(account.pending_debits)
        .BindInt(account.pending_credits);
    return Annotate(query.Run(), absl::StrCat("account ", account.id));
  });
}

absl::StatusOr<bool> SqliteEngine::CloseAccountIfZeroBalance(std::string_view id) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t matched,  // counts matched rows, changed or not
      WriteStatement(statement::kCloseAccountIfZeroBalance,
                     "close account if zero balance", [&](Query& query) { query.BindText(id); }));
  return matched == 1;
}

absl::StatusOr<int64_t> SqliteEngine::PruneExpiredKeys(absl::Time now, int64_t limit) {
  if (limit <= 0) return 0;
  // The subquery walks idempotency_keys_by_expiry; the batch bounds how long the writer
  // lock is held.
  return WriteStatement(
      statement::kPruneExpiredKeys,
      "prune expired keys", [&](Query& query) { query.BindTime(now).BindInt(limit); });
}

}  // namespace ledger::sqlite_internal
