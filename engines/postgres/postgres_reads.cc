// The PostgreSQL engine outside the submit path: assets, accounts, transaction history,
// key records, holds and outbox events. Each call runs autocommit statements on a pooled
// connection (PostgresEngine::WithConnection).
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engines/common/entry_running_max.h"
#include "engines/common/insert_or_read.h"
#include "engines/common/transaction_page.h"
#include "engines/postgres/postgres_connection.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_rows.h"
#include "engines/postgres/postgres_statements.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"

namespace ledger::postgres_internal {

absl::Status PostgresEngine::PutAsset(const Asset& asset) {
  return WithConnection(
      {.operation = "put asset"}, [&](pqxx::nontransaction& work) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(
            const int stored_scale,
            engine_common::InsertOrRead<int>("postgres", "asset", [&]() -> std::optional<int> {
              const pqxx::result rows =
                  work.exec_prepared(statement::kPutAsset, asset.code, asset.scale);
              // Empty: a concurrent insert committed after this statement's snapshot.
              if (rows.empty()) return std::nullopt;
              return rows[0][0].as<int>();
            }));
        if (stored_scale == asset.scale) return absl::OkStatus();
        return absl::AlreadyExistsError(
            absl::StrCat("asset ", asset.code, " exists with scale ", stored_scale));
      });
}

absl::StatusOr<std::optional<Asset>> PostgresEngine::GetAsset(std::string_view code) {
  return WithConnection({.operation = "get asset"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Asset>> {
                          const pqxx::result rows =
                              work.exec_prepared(statement::kSelectAsset, std::string(code));
                          if (rows.empty()) return std::nullopt;
                          return postgres_internal::AssetFromRow(rows[0]);
                        });
}

absl::StatusOr<std::vector<Asset>> PostgresEngine::ListAssets() {
  return WithConnection({.operation = "list assets"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Asset>> {
                          std::vector<Asset> assets;
                          for (const pqxx::row& row : work.exec_prepared(statement::kListAssets)) {
                            assets.push_back(postgres_internal::AssetFromRow(row));
                          }
                          return assets;
                        });
}

absl::Status PostgresEngine::InsertAccount(const Account& account) {
  // 23505: the id is taken (AlreadyExists); 23503: the asset is unknown (FailedPrecondition).
  return WithConnection({.operation = "insert account"},
                        [&](pqxx::nontransaction& work) -> absl::Status {
                          work.exec_prepared(statement::kInsertAccount, account.id, account.asset,
                                             account.allow_negative, account.overdraft_limit,
                                             account.closed, account.balance, account.version,
                                             postgres_internal::Micros(account.created_at),
                                             account.pending_debits, account.pending_credits);
                          return absl::OkStatus();
                        });
}

absl::StatusOr<std::optional<Account>> PostgresEngine::GetAccount(std::string_view id) {
  return WithConnection({.operation = "get account"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Account>> {
                          const pqxx::result rows =
                              work.exec_prepared(statement::kSelectAccount, std::string(id));
                          if (rows.empty()) return std::nullopt;
                          return postgres_internal::AccountFromRow(rows[0]);
                        });
}

absl::StatusOr<std::vector<Account>> PostgresEngine::ListAccounts(std::string_view after_id,
                                                                  int64_t limit) {
  if (limit <= 0) return std::vector<Account>();
  return WithConnection({.operation = "list accounts"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Account>> {
                          std::vector<Account> accounts;
                          for (const pqxx::row& row : work.exec_prepared(
                                   statement::kListAccounts, std::string(after_id), limit)) {
                            accounts.push_back(postgres_internal::AccountFromRow(row));
                          }
                          return accounts;
                        });
}

absl::StatusOr<bool> PostgresEngine::CloseAccountIfZeroBalance(std::string_view id) {
  // The UPDATE waits for a submit holding the row and re-checks the balance and the
  // pending amounts after it.
  LEDGER_ASSIGN_OR_RETURN(int64_t closed,
                          ExecuteStandalone("close account", statement::kCloseAccountIfZeroBalance,
                                            std::string(id)));
  return closed == 1;
}

absl::StatusOr<std::optional<Transaction>> PostgresEngine::GetTransaction(std::string_view id) {
  return WithConnection(
      {.operation = "get transaction"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Transaction>> {
        LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> found,
                                postgres_internal::TransactionsFromRows(work.exec_prepared(
                                    statement::kSelectTransaction, std::string(id))));
        if (found.empty()) return std::nullopt;
        return std::move(found.front());
      });
}

// One round trip, the statement LoadTransactions uses inside a transaction.
absl::StatusOr<std::vector<Transaction>> PostgresEngine::GetTransactions(
    const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<Transaction>();
  return WithConnection(
      {.operation = "get transactions"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Transaction>> {
        return postgres_internal::TransactionsFromRows(work.exec_prepared(
            statement::kSelectTransactions, postgres_internal::TextArrayLiteral(ids)));
      });
}

absl::StatusOr<std::vector<Transaction>> PostgresEngine::ListTransactions(std::string_view after_id,
                                                                          int64_t limit) {
  if (limit <= 0) return std::vector<Transaction>();
  return WithConnection(
      {.operation = "list transactions"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Transaction>> {
        return postgres_internal::TransactionsFromRows(
            work.exec_prepared(statement::kListTransactions, std::string(after_id), limit));
      });
}

absl::StatusOr<std::vector<HistoryEntry>> PostgresEngine::ListEntries(
    std::string_view account_id, int64_t after_version, int64_t limit) {
  if (limit <= 0) return std::vector<HistoryEntry>();
  return WithConnection(
      {.operation = "list entries"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<HistoryEntry>> {
        std::vector<HistoryEntry> entries;
        for (const pqxx::row& row : work.exec_prepared(
                 statement::kListEntries, std::string(account_id), after_version, limit)) {
          entries.push_back({postgres_internal::EntryFromRow(row, 0), row[5].as<std::string>(),
                             postgres_internal::TimeFromMicros(row[6].as<int64_t>())});
        }
        return entries;
      });
}

// The reads below are parameterized statements of their own (not in the prepared
// catalogue): planned with their values, the as-of lookup and each page shape once each.
absl::StatusOr<std::optional<HistoryEntry>> PostgresEngine::EntryAsOf(std::string_view account_id,
                                                                      absl::Time as_of) {
  return WithConnection(
      {.operation = "select entry as of"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<HistoryEntry>> {
        const pqxx::result rows = work.exec_prepared(
            statement::kSelectEntryAsOf, std::string(account_id), absl::ToUnixMicros(as_of));
        if (rows.size() != 1) return absl::InternalError("the as-of search returned no row");
        const pqxx::row row = rows[0];
        if (!row[statement::kSelectEntryAsOfCompleteColumn].as<bool>()) {
          return engine_common::AsOfSearchStoppedShort(account_id);
        }
        if (row[0].is_null()) return std::nullopt;
        return HistoryEntry{postgres_internal::EntryFromRow(row, 0), row[5].as<std::string>(),
                            postgres_internal::TimeFromMicros(row[6].as<int64_t>())};
      });
}

absl::StatusOr<std::vector<Transaction>> PostgresEngine::FindTransactions(
    const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
    int64_t limit) {
  if (limit <= 0) return std::vector<Transaction>();
  const engine_common::TransactionPageStatement page = engine_common::BuildTransactionPage(
      filter, after, limit, engine_common::Placeholders::kNumbered);
  LEDGER_ASSIGN_OR_RETURN(
      std::vector<std::string> ids,
      WithConnection({.operation = "find transactions"},
                     [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<std::string>> {
                       // Sent as text without a type: the server reads each as its
                       // column's type (bigint times and limit, text ids).
                       std::vector<std::string> values;
                       for (const std::variant<std::string, int64_t>& parameter : page.parameters) {
                         const std::string* text = std::get_if<std::string>(&parameter);
                         values.push_back(text != nullptr
                                              ? *text
                                              : std::to_string(std::get<int64_t>(parameter)));
                       }
                       std::vector<std::string> found;
                       for (const pqxx::row& row :
                            work.exec_params(page.sql, pqxx::prepare::make_dynamic_params(values))) {
                         found.push_back(row[1].as<std::string>());
                       }
                       return found;
                     }));
  LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> transactions, GetTransactions(ids));
  return engine_common::InPageOrder(ids, std::move(transactions));
}

absl::StatusOr<std::optional<KeyRecord>> PostgresEngine::GetKeyRecord(const KeyIdentity& identity) {
  return WithConnection(
      {.operation = "select key record"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<KeyRecord>> {
        const pqxx::result rows =
            work.exec_prepared(statement::kSelectCommittedKey, identity.key_namespace,
                               identity.scope.Encoded(), identity.key);
        if (rows.empty()) return std::nullopt;
        return postgres_internal::KeyRecordFromRow(rows[0]);
      });
}

absl::StatusOr<std::vector<KeyRecord>> PostgresEngine::ListKeyRecords(
    const std::optional<KeyIdentity>& after, int64_t limit) {
  if (limit <= 0) return std::vector<KeyRecord>();
  return WithConnection({.operation = "list key records"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<KeyRecord>> {
                          const pqxx::result rows =
                              after.has_value()
                                  ? work.exec_prepared(statement::kListKeyRecordsAfter,
                                                       after->key_namespace, after->scope.Encoded(),
                                                       after->key, limit)
                                  : work.exec_prepared(statement::kListKeyRecordsFirst, limit);
                          std::vector<KeyRecord> records;
                          for (const pqxx::row& row : rows) {
                            LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record,
                                                    postgres_internal::KeyRecordFromRow(row));
                            if (record.has_value()) records.push_back(*std::move(record));
                          }
                          return records;
                        });
}

absl::StatusOr<int64_t> PostgresEngine::PruneExpiredKeys(absl::Time now, int64_t limit) {
  if (limit <= 0) return 0;
  return ExecuteStandalone("prune expired keys", statement::kPruneExpiredKeys, Micros(now), limit);
}

absl::StatusOr<std::optional<Hold>> PostgresEngine::GetHold(std::string_view id) {
  return WithConnection({.operation = "get hold"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Hold>> {
                          const pqxx::result rows =
                              work.exec_prepared(statement::kSelectHold, std::string(id));
                          if (rows.empty()) return std::nullopt;
                          return postgres_internal::HoldFromRow(rows[0]);
                        });
}

absl::StatusOr<std::vector<Hold>> PostgresEngine::ListHolds(std::string_view account_id,
                                                            std::string_view after_id,
                                                            int64_t limit) {
  if (limit <= 0) return std::vector<Hold>();
  return WithConnection({.operation = "list holds"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Hold>> {
                          return postgres_internal::HoldsFromRows(
                              account_id.empty()
                                  ? work.exec_prepared(statement::kListHolds,
                                                       std::string(after_id), limit)
                                  : work.exec_prepared(statement::kListAccountHolds,
                                                       std::string(account_id),
                                                       std::string(after_id), limit));
                        });
}

absl::StatusOr<std::vector<Hold>> PostgresEngine::ListLapsedHolds(absl::Time now, int64_t limit) {
  if (limit <= 0) return std::vector<Hold>();
  return WithConnection({.operation = "list lapsed holds"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Hold>> {
                          return postgres_internal::HoldsFromRows(work.exec_prepared(
                              statement::kListLapsedHolds, Micros(now), limit));
                        });
}

absl::StatusOr<PendingHoldTotals> PostgresEngine::HoldTotals(std::string_view account_id,
                                                             absl::Time now, absl::Time since) {
  return WithConnection({.operation = "hold totals"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<PendingHoldTotals> {
                          return postgres_internal::HoldTotalsFromRow(
                              work.exec_prepared1(statement::kHoldTotals, std::string(account_id),
                                                  Micros(now), Micros(since)));
                        });
}

namespace {

// The sequencer (schema/postgres/0002; SequenceCommittedEventsSql), then ROLLBACK if it
// failed.
void SequenceCommittedEvents(pqxx::nontransaction& work, std::string_view schema) {
  try {
    work.exec(SequenceCommittedEventsSql(schema));
  } catch (...) {
    try {
      work.exec(kRollback);  // leave no aborted transaction on a pooled session
    } catch (...) {
    }
    throw;
  }
}

}  // namespace

absl::StatusOr<std::vector<OutboxEvent>> PostgresEngine::ListEvents(int64_t after_sequence,
                                                                    int64_t limit) {
  if (limit <= 0) return std::vector<OutboxEvent>();
  return WithConnection(
      {.operation = "list events"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<OutboxEvent>> {
        SequenceCommittedEvents(work, schema_);
        std::vector<OutboxEvent> events;
        for (const pqxx::row& row :
             work.exec_prepared(statement::kListEvents, after_sequence, limit)) {
          events.push_back(postgres_internal::EventFromRow(row));
        }
        LEDGER_RETURN_IF_ERROR(FillEventPayloads(
            events, [&](const std::vector<std::string>& ids) -> absl::StatusOr<std::vector<Transaction>> {
              return postgres_internal::TransactionsFromRows(work.exec_prepared(
                  statement::kSelectTransactions, postgres_internal::TextArrayLiteral(ids)));
            }));
        return events;
      });
}

}  // namespace ledger::postgres_internal
