// Row <-> struct mapping for the SQLite engine: the column lists every SELECT uses,
// the readers that turn a row in that order into a struct (through the shared ones of
// engines/common/row_readers.h), and the few multi-statement
// reads and writes shared by the submit transaction and the engine's own reads.
//
// Times are stored as integer microseconds since the epoch, amounts as integers of
// minor units, booleans as 0/1, the scope as Scope::Encoded() ("tenant/actor").
//
// Internal to engines/sqlite. Not thread-safe: functions use the caller's connection.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_ROWS_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_ROWS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/sqlite/sqlite_connection.h"
#include "idempotency/key.h"
#include "idempotency/stores.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

// Column lists as macros so that statements stay compile-time literals (the statement
// cache is keyed by their text). Each reader below expects exactly this order.
#define LEDGER_SQLITE_ACCOUNT_COLUMNS                                                     \
  "id, asset, allow_negative, overdraft_limit, closed, balance, version, created_at, " \
  "pending_debits, pending_credits"
// The columns a transaction's INSERT names...
#define LEDGER_SQLITE_TRANSACTION_COLUMNS \
  "id, kind, created_at, metadata, reversal_of, fingerprint, hold_id"
// ...and what its reads select (the columns, then the terms of the hold it places, if
// any), to be followed by conditions on t.
#define LEDGER_SQLITE_SELECT_TRANSACTION                                                   \
  "SELECT t.id, t.kind, t.created_at, t.metadata, t.reversal_of, t.fingerprint, t.hold_id," \
  " h.from_account, h.to_account, h.asset, h.amount, h.expires_at"                          \
  " FROM transactions AS t LEFT JOIN holds AS h ON h.id = t.id"
#define LEDGER_SQLITE_HOLD_COLUMNS \
  "id, from_account, to_account, asset, amount, expires_at, created_at, status, settled_by"
#define LEDGER_SQLITE_ENTRY_COLUMNS "account_id, asset, amount, balance_after, account_version"
#define LEDGER_SQLITE_KEY_RECORD_COLUMNS \
  "namespace, scope, key, fingerprint, transaction_id, created_at, expires_at"
#define LEDGER_SQLITE_WORK_CLAIM_COLUMNS                                                   \
  "namespace, scope, key, fingerprint, state, owner, attempt, lease_expires_at, result, " \
  "created_at, updated_at, expires_at"
#define LEDGER_SQLITE_OUTBOX_EVENT_COLUMNS "sequence, transaction_id, type, payload, created_at"

namespace ledger::sqlite_internal {

// Entries per multi-row INSERT: one statement for any realistic transaction, and a
// handful of cached statement shapes per connection.
inline constexpr size_t kEntriesPerInsertMax = 16;
// Holds per SELECT ... WHERE id IN (...) of LoadHolds, for the same reasons.
inline constexpr size_t kHoldsPerSelectMax = 16;

// Binds one record as kClaimKey's and kRecordKey's row: identity, then its values
// (BindRecordValues; the state is the statement's 'committed').
void BindKeyRecord(Query& query, const KeyRecord& record);
// Binds a record's values, in the key table's column order: fingerprint, transaction
// id, created_at, expires_at (kRewriteClaimedKey's SET, and BindKeyRecord's).
void BindRecordValues(Query& query, const KeyRecord& record);

Account ReadAccount(const Query& row);
// Everything but the entries, which live in their own table: the columns of
// LEDGER_SQLITE_SELECT_TRANSACTION. DataLoss when the hold fields do not fit the kind.
absl::StatusOr<Transaction> ReadTransactionHeader(const Query& row);
Entry ReadEntry(const Query& row);
absl::StatusOr<KeyRecord> ReadKeyRecord(const Query& row);
absl::StatusOr<Hold> ReadHold(const Query& row);
absl::StatusOr<WorkClaim> ReadWorkClaim(const Query& row);
OutboxEvent ReadOutboxEvent(const Query& row);

// Binds namespace, scope, key: the identity's primary-key columns, in that order.
void BindIdentity(Query& query, const KeyIdentity& identity);

absl::StatusOr<std::optional<Account>> SelectAccount(Connection& connection,
                                                     std::string_view id, ErrorContext context);
// A transaction with its entries in entry order. Run inside a transaction so the two
// reads see one snapshot.
absl::StatusOr<std::optional<Transaction>> SelectTransaction(Connection& connection,
                                                             std::string_view id,
                                                             ErrorContext context);
absl::Status SelectEntriesInto(Connection& connection, Transaction& transaction,
                               ErrorContext context);

// The transaction row, its rows of transaction_metadata
// (engine_common::IndexedMetadataMembers) and its entries (multi-row INSERTs of up to
// kEntriesPerInsertMax), each with its created_at_running_max from `running_maxima` (one
// per entry, in entry order: engine_common::EntryRunningMaxima), then what it does to a
// hold: a hold inserts its holds row, pending; a capture, void or
// expire settles the hold it names (RetryableError if that hold is not pending: the
// pipeline saw it pending under the writer lock, so a rerun re-checks). The caller checks
// the hold fields fit the kind (engine_common::CheckHoldFields) first.
absl::Status InsertTransactionRows(Connection& connection, const Transaction& transaction,
                                   const std::vector<absl::Time>& running_maxima);

absl::StatusOr<std::optional<Hold>> SelectHold(Connection& connection, std::string_view id,
                                               ErrorContext context);
// The holds with these ids that exist, in no particular order.
absl::StatusOr<std::vector<Hold>> SelectHolds(Connection& connection,
                                              const std::vector<std::string>& ids,
                                              ErrorContext context);
// What the account's pending holds amount to at `now` (ledger/engine.h), as committed or
// as written so far by the caller's transaction. One statement, shared by
// Engine::HoldTotals and StorageTransaction::LoadHoldTotals.
absl::StatusOr<PendingHoldTotals> SelectHoldTotals(Connection& connection,
                                                   std::string_view account_id, absl::Time now,
                                                   absl::Time since, ErrorContext context);

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_ROWS_H_
