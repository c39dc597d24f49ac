// Row <-> struct mapping for the PostgreSQL engine: the column lists every SELECT
// uses, the functions that read those columns back into ledger structs, and the
// PostgreSQL array literal that carries a set of ids in one libpqxx parameter.
//
// Internal to engines/postgres. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_ROWS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "idempotency/key.h"
#include "idempotency/stores.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"
#include "pqxx/result"
#include "pqxx/row"

typedef struct pg_result PGresult;  // libpq-fe.h

namespace ledger::postgres_internal {

// Column lists, in the order the *FromRow functions read them.
inline constexpr char kAssetColumns[] = "code, scale";
inline constexpr char kAccountColumns[] =
    "id, asset, allow_negative, overdraft_limit, closed, balance, version, created_at, "
    "pending_debits, pending_credits";
inline constexpr char kAccountColumnsOfA[] =  // kAccountColumns of the table aliased a
    "a.id, a.asset, a.allow_negative, a.overdraft_limit, a.closed, a.balance, a.version, "
    "a.created_at, a.pending_debits, a.pending_credits";
inline constexpr char kHoldColumns[] =
    "id, from_account, to_account, asset, amount, expires_at, created_at, status, settled_by";
inline constexpr char kKeyColumns[] =
    "namespace, scope, key, fingerprint, state, transaction_id, created_at, expires_at";
inline constexpr char kKeyColumnsOfK[] =  // kKeyColumns of the table aliased k
    "k.namespace, k.scope, k.key, k.fingerprint, k.state, k.transaction_id, k.created_at, "
    "k.expires_at";
inline constexpr char kWorkClaimColumns[] =
    "namespace, scope, key, fingerprint, state, owner, attempt, lease_expires_at, result, "
    "created_at, updated_at, expires_at";
inline constexpr char kEventColumns[] = "sequence, transaction_id, type, payload, created_at";
// A transaction (t) joined with its hold (h: the terms of a hold transaction) and its
// entries (e, one row per entry), both LEFT JOINs (kTransactionJoins): a transaction
// without either still gives one row.
inline constexpr char kTransactionWithEntryColumns[] =
    "t.id, t.kind, t.created_at, t.metadata, t.reversal_of, t.fingerprint, t.hold_id, "
    "h.from_account, h.to_account, h.asset, h.amount, h.expires_at, "
    "e.account_id, e.asset, e.amount, e.balance_after, e.account_version";
inline constexpr char kTransactionJoins[] =
    " LEFT JOIN holds h ON h.id = t.id LEFT JOIN entries e ON e.transaction_id = t.id";

int64_t Micros(absl::Time time);
absl::Time TimeFromMicros(int64_t micros);

Asset AssetFromRow(const pqxx::row& row);
Account AccountFromRow(const pqxx::row& row);
// A row of kHoldColumns; DataLoss for an unknown status.
absl::StatusOr<Hold> HoldFromRow(const pqxx::row& row);
// Every row of kHoldColumns.
absl::StatusOr<std::vector<Hold>> HoldsFromRows(const pqxx::result& rows);
// The row of the hold_totals statement: lapsed debits, lapsed credits, reserving count
// and amount.
PendingHoldTotals HoldTotalsFromRow(const pqxx::row& row);
Entry EntryFromRow(const pqxx::row& row, int first_column);
absl::StatusOr<WorkClaim> WorkClaimFromRow(const pqxx::row& row);
OutboxEvent EventFromRow(const pqxx::row& row);

// A key row: the committed record, or nullopt for a placeholder (state 'pending').
absl::StatusOr<std::optional<KeyRecord>> KeyRecordFromRow(const pqxx::row& row);

// The same from a result libpq returned past libpqxx (postgres_pipeline.h), text format:
// row `row` of kKeyColumns, and of kAccountColumns (from `first_column`) followed by
// entries_running_max.
absl::StatusOr<std::optional<KeyRecord>> KeyRecordFromResult(const PGresult* result, int row);
Account AccountFromResult(const PGresult* result, int row, int first_column);
std::optional<absl::Time> RunningMaxFromResult(const PGresult* result, int row, int column);

// Groups rows of kTransactionWithEntryColumns, ordered by transaction then entry.
absl::StatusOr<std::vector<Transaction>> TransactionsFromRows(const pqxx::result& rows);
// The same from a result libpq returned past libpqxx (text format).
absl::StatusOr<std::vector<Transaction>> TransactionsFromResult(const PGresult* result);

// A PostgreSQL array literal ('{"a","b"}') for a text[] parameter of the statements
// libpqxx sends (its parameters are text); the pipeline's arrays are binary
// (postgres_binary_arrays.h). Every element is quoted and escaped, so any printable or
// UTF-8 text survives.
std::string TextArrayLiteral(const std::vector<std::string>& values);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_ROWS_H_
