// Row <-> struct mapping for the MySQL engine: the column lists every SELECT uses, the
// readers that turn a row in that order into a struct, the parameter lists of the
// writes, and the statements shared by the submit transaction and the engine's reads.
//
// Times are BIGINT microseconds since the epoch, amounts BIGINT minor units, booleans
// 0/1, the scope Scope::Encoded() ("tenant/actor"). Identity columns are VARBINARY:
// compared and ordered byte-wise, exactly as std::string orders them.
//
// Internal to engines/mysql. Not thread-safe: functions use the caller's connection.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_ROWS_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_ROWS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "absl/time/time.h"
#include "engines/mysql/mysql_connection.h"
#include "idempotency/key.h"
#include "idempotency/stores.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

// Column lists as macros so that statements stay compile-time literals (the prepared
// statement cache is keyed by their text). Each reader below expects exactly this order.
#define LEDGER_MYSQL_ASSET_COLUMNS "code, scale"
#define LEDGER_MYSQL_ACCOUNT_COLUMNS                                                       \
  "id, asset, allow_negative, overdraft_limit, closed, balance, version, created_at, " \
  "pending_debits, pending_credits"
// A transaction (t) joined with its hold (h: the terms of a hold transaction) and its
// entries (e), both LEFT JOINs: a transaction without either still gives one row.
// Ordered by transaction then entry.
#define LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS                                       \
  "t.id, t.kind, t.created_at, t.metadata, t.reversal_of, t.fingerprint, t.hold_id, "    \
  "h.from_account, h.to_account, h.asset, h.amount, h.expires_at, e.account_id, e.asset, " \
  "e.amount, e.balance_after, e.account_version"
// What the transaction reads join to `transactions t` for those columns.
#define LEDGER_MYSQL_TRANSACTION_JOINS \
  " LEFT JOIN holds h ON h.id = t.id LEFT JOIN entries e ON e.transaction_id = t.id"
#define LEDGER_MYSQL_HOLD_COLUMNS \
  "id, from_account, to_account, asset, amount, expires_at, created_at, status, settled_by"
#define LEDGER_MYSQL_ENTRY_COLUMNS "account_id, asset, amount, balance_after, account_version"
#define LEDGER_MYSQL_KEY_RECORD_COLUMNS \
  "namespace, scope, `key`, fingerprint, state, transaction_id, created_at, expires_at"
#define LEDGER_MYSQL_WORK_CLAIM_COLUMNS                                                      \
  "namespace, scope, `key`, fingerprint, state, owner, attempt, lease_expires_at, result, " \
  "created_at, updated_at, expires_at"
#define LEDGER_MYSQL_OUTBOX_EVENT_COLUMNS "`sequence`, transaction_id, type, payload, created_at"
#define LEDGER_MYSQL_IDENTITY_MATCHES "namespace = ? AND scope = ? AND `key` = ?"

namespace ledger::mysql_internal {

int64_t ToMicros(absl::Time time);
absl::Time FromMicros(int64_t micros);

Asset ReadAsset(const SqlRow& row);
Account ReadAccount(const SqlRow& row);
absl::StatusOr<Hold> ReadHold(const SqlRow& row);
Entry ReadEntry(const SqlRow& row, int first_column);
// Null when the row is a placeholder (state pending): no committed record.
absl::StatusOr<std::optional<KeyRecord>> ReadKeyRecord(const SqlRow& row);
absl::StatusOr<WorkClaim> ReadWorkClaim(const SqlRow& row);
OutboxEvent ReadOutboxEvent(const SqlRow& row);

// namespace, scope, key: the identity's primary-key columns, in that order.
SqlParams IdentityParams(const KeyIdentity& identity);

// A WHERE condition naming key rows, one per record, and its parameters in order:
// "(identity) OR (identity) ..." or, with the transaction id, "(identity AND
// transaction_id = ?) OR ...": the row a claim inserted is the one holding its
// transaction id. The one builder of the lists the claim locks, Galera's check counts and
// the batch deletes (mysql_engine.cc, mysql_write_batch.cc). At least one record.
enum class MatchTransactionId { kNo, kYes };
struct KeyRowMatches {
  std::string condition;
  SqlParams params;
};
KeyRowMatches MatchKeyRows(absl::Span<const KeyRecord> records, MatchTransactionId with_id);

// Every column of LEDGER_MYSQL_WORK_CLAIM_COLUMNS, in that order.
SqlParams WorkClaimParams(const WorkClaim& claim);
// NULL for nullopt.
SqlValue NullableText(const std::optional<std::string>& text);
SqlValue NullableMicros(const std::optional<absl::Time>& time);
// Every column of LEDGER_MYSQL_ACCOUNT_COLUMNS, in that order.
SqlParams AccountParams(const Account& account);

// The magnitude of a SUM over amounts, which MySQL returns as DECIMAL (sent as text,
// "-1500", "0"), as an Amount saturating at the maximum: many int64 amounts may not add
// up to one.
Amount SaturatedTotal(std::string_view decimal_sum);

// The pending holds of an account at a moment (Engine::HoldTotals), one statement
// shared by the submit transaction (LoadHoldTotals) and the engine's read.
absl::StatusOr<PendingHoldTotals> SelectPendingHoldTotals(MysqlConnection& connection,
                                                          std::string_view account_id,
                                                          absl::Time now, absl::Time since,
                                                          ErrorContext context);
// Runs `sql`, which selects LEDGER_MYSQL_HOLD_COLUMNS, and reads every row as a Hold.
absl::StatusOr<std::vector<Hold>> QueryHolds(MysqlConnection& connection, std::string_view sql,
                                             const SqlParams& params, std::string_view what,
                                             ErrorContext context);

// Adds a row of LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS to `transactions` (rows in
// transaction order): a new transaction when its id differs from the last one's, and its
// entry, if any. DataLoss for a row that cannot be read.
absl::Status AddTransactionRow(const SqlRow& row, std::vector<Transaction>& transactions);
// The columns of those rows, and of a key row (LEDGER_MYSQL_KEY_RECORD_COLUMNS).
inline constexpr int kTransactionWithEntryColumnCount = 17;
inline constexpr int kKeyRecordColumnCount = 8;
// The claim procedure's last result set when it ended a replay's transaction
// (schema/mysql/0011): one column, claim_ended.
inline constexpr int kClaimEndedColumnCount = 1;

// Reads transactions with their entries through LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS
// rows: runs `sql` with `params` and groups the rows by transaction, in row order.
absl::StatusOr<std::vector<Transaction>> QueryTransactions(MysqlConnection& connection,
                                                           std::string_view sql,
                                                           const SqlParams& params,
                                                           std::string_view what,
                                                           ErrorContext context);
absl::StatusOr<std::optional<Transaction>> SelectTransaction(MysqlConnection& connection,
                                                             std::string_view id,
                                                             ErrorContext context);
// The transactions of `ids` that exist: one query per kRowsPerStatementMax ids, by the
// primary key and the entries' (transaction_id, entry_index) key.
absl::StatusOr<std::vector<Transaction>> SelectTransactions(MysqlConnection& connection,
                                                            const std::vector<std::string>& ids,
                                                            ErrorContext context);

// "?, ?, ?" with `count` placeholders.
std::string Placeholders(size_t count);

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_ROWS_H_
