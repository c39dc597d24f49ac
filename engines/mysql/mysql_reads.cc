// The MySQL engine outside the submit path: assets, accounts, transaction history,
// key records, holds and outbox events. Each call is one short transaction of its own
// (MysqlEngine::RunStandalone).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engines/common/entry_running_max.h"
#include "engines/common/insert_or_read.h"
#include "engines/common/transaction_page.h"
#include "engines/mysql/mysql_engine_internal.h"
#include "engines/mysql/mysql_rows.h"
#include "engines/mysql/mysql_statements.h"
#include "base/status.h"

namespace ledger::mysql_internal {

absl::Status MysqlEngine::PutAsset(const Asset& asset) {
  LEDGER_ASSIGN_OR_RETURN(
      const int64_t stored_scale,
      engine_common::InsertOrRead<int64_t>(
          "mysql", "asset", [&]() -> absl::StatusOr<std::optional<int64_t>> {
            std::optional<int64_t> scale;
            LEDGER_RETURN_IF_ERROR(
                RunStandalone(Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
                  scale.reset();
                  absl::Status inserted =
                      connection
                          .Execute(statement::kInsertAsset,
                                   {asset.code, int64_t{asset.scale}}, "insert the asset",
                                   ErrorContext::kStandalone)
                          .status();
                  if (inserted.ok()) {
                    scale = asset.scale;
                    return absl::OkStatus();
                  }
                  if (!absl::IsAlreadyExists(inserted)) return inserted;
                  // Defined before: fine when identical.
                  return connection.Query(
                      statement::kSelectAssetScale, {asset.code},
                      [&](const SqlRow& row) { scale = row.Int64(0); }, "read the asset",
                      ErrorContext::kStandalone);
                }));
            return scale;
          }));
  if (stored_scale == asset.scale) return absl::OkStatus();
  return absl::AlreadyExistsError(
      absl::StrCat("asset ", asset.code, " exists with scale ", stored_scale));
}

absl::StatusOr<std::optional<Asset>> MysqlEngine::GetAsset(std::string_view code) {
  std::optional<Asset> asset;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    return connection.Query(statement::kSelectAsset,
                            {std::string(code)},
                            [&](const SqlRow& row) { asset = ReadAsset(row); }, "read the asset",
                            ErrorContext::kStandalone);
  }));
  return asset;
}

absl::StatusOr<std::vector<Asset>> MysqlEngine::ListAssets() {
  std::vector<Asset> assets;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    assets.clear();
    return connection.Query(statement::kListAssets,
                            {}, [&](const SqlRow& row) { assets.push_back(ReadAsset(row)); },
                            "list assets", ErrorContext::kStandalone);
  }));
  return assets;
}

absl::Status MysqlEngine::InsertAccount(const Account& account) {
  absl::Status status = RunStandalone(Access::kWrite, [&](MysqlConnection& connection) {
    return connection
        .Execute(statement::kInsertAccount,
                 AccountParams(account), "insert the account", ErrorContext::kStandalone)
        .status();
  });
  // The messages callers see, instead of the server's.
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(absl::StrCat("account ", account.id, " already exists"));
  }
  if (absl::IsFailedPrecondition(status)) {
    return absl::FailedPreconditionError(
        absl::StrCat("asset ", account.asset, " is not defined (", status.message(), ")"));
  }
  return status;
}

absl::StatusOr<std::optional<Account>> MysqlEngine::GetAccount(std::string_view id) {
  std::optional<Account> account;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    return connection.Query(statement::kSelectAccount,
                            {std::string(id)},
                            [&](const SqlRow& row) { account = ReadAccount(row); },
                            "read the account", ErrorContext::kStandalone);
  }));
  return account;
}

absl::StatusOr<std::vector<Account>> MysqlEngine::ListAccounts(std::string_view after_id,
                                                               int64_t limit) {
  std::vector<Account> accounts;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    accounts.clear();
    return connection.Query(
        statement::kListAccounts,
        {std::string(after_id), limit},
        [&](const SqlRow& row) { accounts.push_back(ReadAccount(row)); }, "list accounts",
        ErrorContext::kStandalone);
  }));
  return accounts;
}

absl::StatusOr<bool> MysqlEngine::CloseAccountIfZeroBalance(std::string_view id) {
  // CLIENT_FOUND_ROWS: a closed account closed again still counts as matched.
  LEDGER_ASSIGN_OR_RETURN(
      int64_t matched,
      ExecuteStandalone(statement::kCloseAccountIfZeroBalance,
                        {std::string(id)}, "close the account"));
  return matched == 1;
}

absl::StatusOr<std::optional<Transaction>> MysqlEngine::GetTransaction(std::string_view id) {
  std::optional<Transaction> transaction;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(transaction,
                                SelectTransaction(connection, id, ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return transaction;
}

absl::StatusOr<std::vector<Transaction>> MysqlEngine::GetTransactions(
    const std::vector<std::string>& ids) {
  std::vector<Transaction> transactions;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(transactions,
                                SelectTransactions(connection, ids, ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return transactions;
}

absl::StatusOr<std::vector<Transaction>> MysqlEngine::ListTransactions(std::string_view after_id,
                                                                       int64_t limit) {
  std::vector<Transaction> transactions;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        // One round trip: the page of transactions joined with their holds and entries.
        LEDGER_ASSIGN_OR_RETURN(
            transactions,
            QueryTransactions(connection,
                              statement::kListTransactions,
                              {std::string(after_id), limit}, "list transactions",
                              ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return transactions;
}

absl::StatusOr<std::vector<HistoryEntry>> MysqlEngine::ListEntries(std::string_view account_id,
                                                                   int64_t after_version,
                                                                   int64_t limit) {
  std::vector<HistoryEntry> entries;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    entries.clear();
    return connection.Query(statement::kListEntries,
                            {std::string(account_id), after_version, limit},
                            [&](const SqlRow& row) {
                              entries.push_back({ReadEntry(row, 0), row.String(5),
                                                 absl::FromUnixMicros(row.Int64(6))});
                            },
                            "list entries", ErrorContext::kStandalone);
  }));
  return entries;
}

absl::StatusOr<std::optional<HistoryEntry>> MysqlEngine::EntryAsOf(std::string_view account_id,
                                                                   absl::Time as_of) {
  const std::string id(account_id);
  const int64_t instant = absl::ToUnixMicros(as_of);
  const SqlParams parameters = {id, instant, instant, id, id};
  static_assert(std::ranges::count(std::string_view(statement::kSelectEntryAsOf), '?') ==
                statement::kSelectEntryAsOfParameters);
  std::optional<HistoryEntry> found;
  int rows = 0;
  bool complete = false;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    found.reset();
    rows = 0;
    return connection.Query(statement::kSelectEntryAsOf, parameters,
                            [&](const SqlRow& row) {
                              ++rows;
                              complete = row.Int64(statement::kSelectEntryAsOfCompleteColumn) != 0;
                              if (row.IsNull(0)) return;
                              found = HistoryEntry{ReadEntry(row, 0), row.String(5),
                                                   absl::FromUnixMicros(row.Int64(6))};
                            },
                            "select entry as of", ErrorContext::kStandalone);
  }));
  if (rows != 1) return absl::InternalError("the as-of search returned no row");
  if (!complete) return engine_common::AsOfSearchStoppedShort(account_id);
  return found;
}

absl::StatusOr<std::vector<Transaction>> MysqlEngine::FindTransactions(
    const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
    int64_t limit) {
  if (limit <= 0) return std::vector<Transaction>();
  const engine_common::TransactionPageStatement page = engine_common::BuildTransactionPage(
      filter, after, limit, engine_common::Placeholders::kQuestionMarks);
  SqlParams params;
  for (const std::variant<std::string, int64_t>& parameter : page.parameters) {
    if (const std::string* text = std::get_if<std::string>(&parameter)) {
      params.emplace_back(*text);
    } else {
      params.emplace_back(std::get<int64_t>(parameter));
    }
  }
  std::vector<std::string> ids;
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kRead, [&](MysqlConnection& connection) {
    ids.clear();
    return connection.Query(
        page.sql, params, [&](const SqlRow& row) { ids.push_back(row.String(1)); },
        "find transactions", ErrorContext::kStandalone);
  }));
  LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> transactions, GetTransactions(ids));
  return engine_common::InPageOrder(ids, std::move(transactions));
}

absl::StatusOr<std::optional<KeyRecord>> MysqlEngine::GetKeyRecord(const KeyIdentity& identity) {
  std::optional<KeyRecord> found;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        found.reset();
        absl::Status unreadable;
        LEDGER_RETURN_IF_ERROR(connection.Query(
            statement::kSelectCommittedKeyRecord,
            {identity.key_namespace, identity.scope.Encoded(), identity.key},
            [&](const SqlRow& row) {
              absl::StatusOr<std::optional<KeyRecord>> record = ReadKeyRecord(row);
              if (!record.ok()) {
                unreadable.Update(record.status());
              } else {
                found = *std::move(record);
              }
            },
            "select key record", ErrorContext::kStandalone));
        return unreadable;
      }));
  return found;
}

absl::StatusOr<std::vector<KeyRecord>> MysqlEngine::ListKeyRecords(
    const std::optional<KeyIdentity>& after, int64_t limit) {
  std::vector<KeyRecord> records;
  // Primary-key order: namespace, encoded scope, key, each byte-wise (VARBINARY). The
  // "after" condition is spelled out so the range optimizer can use the primary key.
  SqlParams params;
  if (after.has_value()) {
    const std::string scope = after->scope.Encoded();
    for (const std::string* value :
         {&after->key_namespace, &after->key_namespace, &scope, &scope, &after->key}) {
      params.emplace_back(*value);
    }
  }
  params.emplace_back(limit);
  const char* sql =
      after.has_value()
          ? statement::kListKeyRecordsAfter
          : statement::kListKeyRecordsFirst;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        records.clear();
        absl::Status unreadable;
        LEDGER_RETURN_IF_ERROR(connection.Query(
            sql, params,
            [&](const SqlRow& row) {
              absl::StatusOr<std::optional<KeyRecord>> record = ReadKeyRecord(row);
              if (!record.ok()) {
                unreadable.Update(record.status());
              } else if (record->has_value()) {
                records.push_back(**std::move(record));
              }
            },
            "list key records", ErrorContext::kStandalone));
        return unreadable;
      }));
  return records;
}

absl::StatusOr<int64_t> MysqlEngine::PruneExpiredKeys(absl::Time now, int64_t limit) {
  // Through the expiry index, oldest first. Placeholders carry the largest expires_at,
  // so the range never reaches a key that is being claimed.
  return ExecuteStandalone(
      statement::kPruneExpiredKeys,
      {ToMicros(now), limit}, "prune expired keys");
}

absl::StatusOr<std::optional<Hold>> MysqlEngine::GetHold(std::string_view id) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> found,
                          QueryHoldsStandalone(statement::kSelectHold,
                                               {std::string(id)}, "read the hold"));
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

absl::StatusOr<std::vector<Hold>> MysqlEngine::ListHolds(std::string_view account_id,
                                                         std::string_view after_id,
                                                         int64_t limit) {
  if (account_id.empty()) {
    return QueryHoldsStandalone(statement::kListHolds,
                                {std::string(after_id), limit}, "list holds");
  }
  // One branch per side, each an ordered range of its (account, id) index; UNION drops
  // the second copy of a hold from an account to itself.
  const std::string account(account_id), after(after_id);
  return QueryHoldsStandalone(
      statement::kListAccountHolds,
      {account, after, limit, account, after, limit, limit}, "list an account's holds");
}

absl::StatusOr<std::vector<Hold>> MysqlEngine::ListLapsedHolds(absl::Time now, int64_t limit) {
  // A range of holds_pending_by_expiry, in its order.
  return QueryHoldsStandalone(statement::kListLapsedHolds,
                              {ToMicros(now), limit}, "list lapsed holds");
}

absl::StatusOr<PendingHoldTotals> MysqlEngine::HoldTotals(std::string_view account_id,
                                                          absl::Time now, absl::Time since) {
  PendingHoldTotals totals;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(totals, SelectPendingHoldTotals(connection, account_id, now,
                                                                since, ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return totals;
}

absl::StatusOr<std::vector<Hold>> MysqlEngine::QueryHoldsStandalone(std::string_view sql,
                                                                   const SqlParams& params,
                                                                   std::string_view what) {
  std::vector<Hold> holds;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(holds,
                                QueryHolds(connection, sql, params, what, ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return holds;
}

absl::StatusOr<int64_t> MysqlEngine::ExecuteStandalone(std::string_view sql,
                                                       const SqlParams& params,
                                                       std::string_view what) {
  int64_t matched = 0;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(matched,
                                connection.Execute(sql, params, what, ErrorContext::kStandalone));
        return absl::OkStatus();
      }));
  return matched;
}

absl::StatusOr<std::vector<OutboxEvent>> MysqlEngine::ListEvents(int64_t after_sequence,
                                                                 int64_t limit) {
  // The sequencer (schema/mysql/0002): numbers the committed, unnumbered events in
  // insert order after the highest sequence, under the lock row of outbox_sequencer.
  // Each statement reads the latest committed rows (READ COMMITTED), so sequences follow
  // commit order and an event in flight is numbered only after it committed.
  LEDGER_RETURN_IF_ERROR(RunStandalone(Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
    LEDGER_RETURN_IF_ERROR(connection.Query(
        statement::kLockEventSequencer, {}, [](const SqlRow&) {},
        "lock the event sequencer", ErrorContext::kStandalone));
    LEDGER_RETURN_IF_ERROR(connection.ExecuteText(
        statement::kReadLastEventSequence,
        "read the last event sequence", ErrorContext::kStandalone));
    return connection.ExecuteText(
        statement::kSequenceCommittedEvents,
        "sequence committed events", ErrorContext::kStandalone);
  }));
  std::vector<OutboxEvent> events;
  LEDGER_RETURN_IF_ERROR(
      RunStandalone(Access::kRead, [&](MysqlConnection& connection) -> absl::Status {
        events.clear();
        LEDGER_RETURN_IF_ERROR(connection.Query(
            statement::kListEvents, {after_sequence, limit},
            [&](const SqlRow& row) { events.push_back(ReadOutboxEvent(row)); }, "list events",
            ErrorContext::kStandalone));
        return FillEventPayloads(events, [&](const std::vector<std::string>& ids) {
          return SelectTransactions(connection, ids, ErrorContext::kStandalone);
        });
      }));
  return events;
}

}  // namespace ledger::mysql_internal
