// Every SQL statement the PostgreSQL engine sends, in one place: the named prepared
// statements declared on each session, the write statement and its parameter
// positions, the multi-statement claim scripts built per submit, the transaction
// control, the session set-up, the event sequencer and the migrations' bookkeeping.
// (The column lists the rows are read back by live beside their readers, in
// postgres_rows.h; a unit of work's own statements are the caller's.)
//
// The write statements (write_batch, write_batch_with_holds) carry each batch of rows
// as arrays, 39 or 52 of them. Their positions are named once, by WriteParameter: the
// SQL is written with the names (WriteParameterSql(WriteParameter::kEntryAmounts) is
// "$16"), and postgres_write_batch.cc fills a WriteParameters slot by the same name, so
// the two files cannot drift apart. A static_assert keeps the counts; DeclareStatements
// checks at start-up that each write statement uses exactly $1..$count.
//
//   WriteParameters parameters(/*with_holds=*/false);
//   parameters.Set(WriteParameter::kTransactionIds, TextArrayLiteral(ids));
//   ...
//   std::vector<std::string> values = std::move(parameters).Take();  // all set, in order
//
// Internal to engines/postgres. Thread-safe: constants and pure functions.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "pqxx/connection_base"

namespace ledger::postgres_internal {

// ---- the prepared statements -----------------------------------------------------------

// Names of the prepared statements.
namespace statement {
inline constexpr char kPutAsset[] = "put_asset";
inline constexpr char kSelectAsset[] = "select_asset";
inline constexpr char kListAssets[] = "list_assets";
inline constexpr char kInsertAccount[] = "insert_account";
inline constexpr char kSelectAccount[] = "select_account";
inline constexpr char kListAccounts[] = "list_accounts";
inline constexpr char kCloseAccountIfZeroBalance[] = "close_account_if_zero_balance";
inline constexpr char kSelectTransaction[] = "select_transaction";
inline constexpr char kSelectTransactions[] = "select_transactions";
inline constexpr char kListTransactions[] = "list_transactions";
inline constexpr char kListEntries[] = "list_entries";
inline constexpr char kListKeyRecordsFirst[] = "list_key_records_first";
inline constexpr char kListKeyRecordsAfter[] = "list_key_records_after";
inline constexpr char kPruneExpiredKeys[] = "prune_expired_keys";
inline constexpr char kListEvents[] = "list_events";
inline constexpr char kIsReversed[] = "is_reversed";
inline constexpr char kLockAccounts[] = "lock_accounts";  // then entries_running_max
inline constexpr char kDebitUsage[] = "debit_usage";
inline constexpr char kWriteBatch[] = "write_batch";
inline constexpr char kWriteBatchWithHolds[] = "write_batch_with_holds";
inline constexpr char kSelectHold[] = "select_hold";
inline constexpr char kSelectEntryAsOf[] = "select_entry_as_of";
// kSelectEntryAsOf's column that is false when its search stopped short.
inline constexpr int kSelectEntryAsOfCompleteColumn = 7;
inline constexpr char kSelectCommittedKey[] = "select_committed_key";
inline constexpr char kSelectHolds[] = "select_holds";
inline constexpr char kListHolds[] = "list_holds";
inline constexpr char kListAccountHolds[] = "list_account_holds";
inline constexpr char kListLapsedHolds[] = "list_lapsed_holds";
inline constexpr char kHoldTotals[] = "hold_totals";
inline constexpr char kInsertWorkClaim[] = "insert_work_claim";
inline constexpr char kReplaceWorkClaim[] = "replace_work_claim";
inline constexpr char kDeleteWorkClaim[] = "delete_work_claim";
inline constexpr char kMarkAbandonedWorkClaims[] = "mark_abandoned_work_claims";
inline constexpr char kPruneWorkClaims[] = "prune_work_claims";
inline constexpr char kInsertWebhookEvent[] = "insert_webhook_event";
inline constexpr char kDeleteWebhookEvent[] = "delete_webhook_event";
inline constexpr char kPruneWebhookEvents[] = "prune_webhook_events";
}  // namespace statement

// lock_accounts' column after the account's (postgres_rows.h, kAccountColumns): its
// entries_running_max (engines/common/entry_running_max.h).
inline constexpr int kLockAccountsRunningMaxColumn = 10;

// Declares every statement above on `connection` (no round trip: libpqxx prepares
// lazily, so a connection opened before the migrations ran is still fine). The first
// call checks the write statements' parameter positions (a failed check is a
// programming error: LEDGER_CHECK).
void DeclareStatements(pqxx::connection_base& connection);

// ---- the write statement's parameters -------------------------------------------------

// The parameters of the write statements, in position order ($1 is the first). Both
// statements take the positions up to kUnusedClaimKeys; write_batch_with_holds also the
// rest. Every one is an array with one element per row of its part.
enum class WriteParameter : int {
  // transactions: one per transaction
  kTransactionIds,
  kTransactionKinds,
  kTransactionCreatedAt,
  kTransactionMetadata,
  kTransactionReversalOf,
  kTransactionFingerprints,
  // transaction_metadata: one per member indexed (engine_common::IndexedMetadataMembers)
  kMetadataNames,
  kMetadataValues,
  kMetadataCreatedAt,
  kMetadataTransactionIds,
  // entries: one per entry
  kEntryAccountIds,
  kEntryAccountVersions,
  kEntryTransactionIds,
  kEntryIndexes,
  kEntryAssets,
  kEntryAmounts,
  kEntryBalancesAfter,
  kEntryCreatedAt,
  kEntryRunningMaxima,  // created_at_running_max (engines/common/entry_running_max.h)
  // accounts: one per account updated
  kAccountIds,
  kAccountBalances,
  kAccountVersions,
  kAccountLockedVersions,
  kAccountEntriesRunningMax,  // NULL: the account's own is kept
  // key records: one per key recorded
  kKeyNamespaces,
  kKeyScopes,
  kKeys,
  kKeyFingerprints,
  kKeyTransactionIds,
  kKeyCreatedAt,
  kKeyExpiresAt,
  kKeyClaimedWithoutRow,
  // outbox events: one per event
  kEventTransactionIds,
  kEventTypes,
  kEventPayloads,
  kEventCreatedAt,
  // row mode: the key rows this transaction's claim inserted that no item committed
  kUnusedClaimNamespaces,
  kUnusedClaimScopes,
  kUnusedClaimKeys,
  // write_batch_with_holds only
  kTransactionHoldIds,    // one per transaction, as kTransactionIds
  kAccountPendingDebits,  // one per account, as kAccountIds
  kAccountPendingCredits,
  kHoldIds,  // holds placed: one per hold
  kHoldFromAccounts,
  kHoldToAccounts,
  kHoldAssets,
  kHoldAmounts,
  kHoldExpiresAt,
  kHoldCreatedAt,
  kSettledHoldIds,  // holds settled: one per settlement
  kSettledHoldStatuses,
  kSettledHoldSettledBy,
};

inline constexpr int kWriteBatchParameterCount =
    static_cast<int>(WriteParameter::kUnusedClaimKeys) + 1;
inline constexpr int kWriteBatchWithHoldsParameterCount =
    static_cast<int>(WriteParameter::kSettledHoldSettledBy) + 1;
static_assert(kWriteBatchParameterCount == 39 && kWriteBatchWithHoldsParameterCount == 52,
              "a write parameter was added or removed: check WriteBatchSql and "
              "PostgresWriteBatch::Parameters, which name every position");

// "$N" for a parameter: its position, 1-based.
std::string WriteParameterSql(WriteParameter parameter);

// The values of one write statement's parameters, filled by name in any order.
class WriteParameters {
 public:
  explicit WriteParameters(bool with_holds);
  // Checked: the parameter belongs to the statement and is set only once.
  void Set(WriteParameter parameter, std::string value);
  // The values in position order. Checked: every position was set.
  std::vector<std::string> Take() &&;

 private:
  std::vector<std::optional<std::string>> values_;
};

// The highest $N in `sql`, and whether every $1..$N occurs: what DeclareStatements
// checks of the write statements ({0, true} for none).
struct ParameterUse {
  int highest = 0;
  bool contiguous = true;
};
ParameterUse ParameterUseOf(std::string_view sql);

// The SQL of write_batch (with_holds false) or write_batch_with_holds.
std::string WriteBatchSql(bool with_holds);

// ---- the write pipelined with its COMMIT (postgres_pipeline.h) ----------------
// The same statements, checked by the server: they take the expected counts as one more
// parameter (a bigint[] in the order of the counts write_batch returns) and raise
// kShortWriteSqlState when what they wrote differs, so a COMMIT sent behind them in the
// same pipeline never runs after a short write. Prepared by libpq itself (libpqxx never
// hears of them), on first use in each session.
inline constexpr char kCheckedWriteBatch[] = "write_batch_checked";
inline constexpr char kCheckedWriteBatchWithHolds[] = "write_batch_with_holds_checked";
const std::string& CheckedWriteBatchSql(bool with_holds);

// The function the checked statements call, ledger_check_write_counts, is the schema's
// (schema/postgres/0008_write_check_function.sql). Its error carries the counts written
// as its DETAIL, an array literal, for PostgresWriteBatch::CheckAppliedText.
inline constexpr char kShortWriteSqlState[] = "LW001";
inline constexpr char kCheckWriteCountsFunction[] = "ledger_check_write_counts";

// ---- the claim and the account locks in one round trip (postgres_pipeline.h) -------
// BEGIN, then these statements, pipelined: the claim's lock timeout, the claim, the
// session's lock timeout back, the key rows, and (when the ledger named the accounts up
// front) their lock. Prepared by libpq itself on first use in each session, like the
// checked writes: nothing is parsed per submit. The keys travel as three text[] (their
// namespaces, scopes and keys) in the global claim order; the advisory mode's as one
// text[] of encoded identities.
namespace claim_statement {
inline constexpr char kSetLockTimeout[] = "claim_set_lock_timeout";  // $1: '250ms'
inline constexpr char kAdvisoryLocks[] = "claim_advisory_locks";     // $1: identities
inline constexpr char kInsertRecords[] = "claim_insert_records";  // row mode: $1..$7
inline constexpr char kLockKeyRows[] = "claim_lock_key_rows";               // row mode
inline constexpr char kReadKeys[] = "claim_read_keys";  // kKeyColumns, one row per key found
// The accounts ($1, sorted) locked as lock_accounts locks them, unless a claimed key
// ($2, $3, $4) has a committed record: then nothing (a replay locks nothing). The row
// mode's also takes the claim's transaction ids ($5): a row with one of them is the
// claim's own insert, not a record.
inline constexpr char kLockAccountsUnlessReplayed[] = "lock_accounts_unless_replayed";
inline constexpr char kLockAccountsUnlessReplayedRowMode[] =
    "lock_accounts_unless_replayed_row_mode";
}  // namespace claim_statement

inline constexpr char kSetLockTimeoutSql[] = "SELECT set_config('lock_timeout', $1, true)";
// Advisory mode: pg_advisory_xact_lock on each identity's hash seeded by `lock_seed`
// (AdvisoryLockSeed of the session's schema), in the array's order.
std::string AdvisoryLocksSql(std::string_view lock_seed);
// Row mode: the final record of each key without a row (namespaces, scopes, keys,
// fingerprints, transaction ids, created_at, expires_at: $1..$7), then the key rows locked.
const std::string& InsertRecordsSql();
const std::string& LockKeyRowsSql();
const std::string& ReadKeysSql();
const std::string& LockAccountsUnlessReplayedSql(bool row_mode);

// Row mode, rare: the record this transaction's claim inserted ($5..$7 its identity, $8
// its transaction id) rewritten to the one that commits ($1..$4: fingerprint,
// transaction id, created_at, expires_at), when another item than the one the claim was
// told of commits the key. Sent unprepared.
inline constexpr char kRewriteClaimedKeySql[] =
    "UPDATE idempotency_keys SET fingerprint = $1, transaction_id = $2, created_at = $3,"
    " expires_at = $4 WHERE namespace = $5 AND scope = $6 AND key = $7 AND transaction_id = $8";

// The lock_timeout that bounds a claim's wait: at least 1 ms (0 would mean "wait
// forever" to PostgreSQL), at most the server's maximum.
std::string ClaimLockTimeout(absl::Duration wait_max);

// ---- transaction control and the session ------------------------------------------------

// A storage transaction's BEGIN when no claim script carries it.
inline constexpr char kBeginReadCommitted[] = "BEGIN ISOLATION LEVEL READ COMMITTED";
inline constexpr char kCommit[] = "COMMIT";
inline constexpr char kRollback[] = "ROLLBACK";
// Asks whether the open transaction still accepts statements (a unit of work's check).
inline constexpr char kProbeTransaction[] = "SELECT 1";

// The settings of each new session of the engine's pool: its own waits (quoted by the
// caller's units: "250ms"), and generic plans for its prepared statements. Every
// statement of the engine finds its rows by keys and ids, so its plan does not depend on
// the values; left to choose, PostgreSQL planned the checked write (its CTEs) anew at
// every call because each custom plan, knowing its arrays' lengths, came out cheaper
// than the generic one: about 30% of the server's CPU per submit at 8 clients
// (docs/benchmarks.md, "Generic plans"). Sequential scans are priced out
// (enable_seqscan = off): a plan is made once per session against the statistics of the
// moment, and made while autovacuum had last seen a table tiny it chose a scan of it and
// kept it as the table grew, until the next ANALYZE. Migrations turn scans back on for
// their transaction. Callers' own sessions (a unit of work on the caller's connection)
// are not touched.
std::string SessionSettingsSql(std::string_view lock_timeout,
                               std::string_view statement_timeout);
// Names resolve in `schema` alone (validated by ValidateSchemaName).
std::string SearchPathSql(std::string_view schema);

// The seed of every advisory lock key a ledger takes, hashtextextended(name, SEED), as
// SQL: "0" without a schema (the keys every earlier version took, so old and new
// processes on one ledger still exclude each other), else a hash of the schema's name,
// so two schemas' ledgers in one database never take the same lock.
std::string AdvisoryLockSeed(std::string_view schema);

// The outbox sequencer's script for a session on `schema` (its lock seeded as above).
std::string SequenceCommittedEventsSql(std::string_view schema);

// ---- the migrations' bookkeeping --------------------------------------------------------

// The migration lock's key, as SQL: AdvisoryLockSeed keeps two schemas' migrations apart.
std::string MigrationLockSql(std::string_view schema);
std::string TryMigrationLockSql(std::string_view schema);      // one row: whether taken
std::string ReleaseMigrationLockSql(std::string_view schema);
std::string CreateSchemaSql(std::string_view schema);          // validated name
inline constexpr char kCreateSchemaMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, applied_at BIGINT NOT NULL)";
inline constexpr char kSelectAppliedMigrations[] = "SELECT version FROM schema_migrations";
// The version row of a migration, then COMMIT; `begin` is "BEGIN;\n" when the
// migration sent no statement of its own. `quoted_name`: a SQL literal.
std::string RecordMigrationSql(std::string_view begin, int version,
                               std::string_view quoted_name);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_
