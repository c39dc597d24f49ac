// Every SQL statement the PostgreSQL engine sends, in one place: the named prepared
// statements declared on each session, the write statement, its parts and its parameter
// positions, the multi-statement claim scripts built per submit, the transaction
// control, the session set-up, the event sequencer and the migrations' bookkeeping.
// (The column lists the rows are read back by live beside their readers, in
// postgres_rows.h; a unit of work's own statements are the caller's.)
//
// The write statement carries each batch of rows as arrays, and is built from the parts
// (WritePart) the batch has rows for: a submit's statement holds its transaction,
// entries, accounts, key record and event, not the empty metadata, hold or dropped-claim
// parts that PostgreSQL would otherwise open, lock and count at every call. Its
// parameters are named once, by WriteParameter, each belonging to one part; a shape
// numbers only its parts' parameters, in the enum's order: the SQL is written with the
// names (WriteParameterSql(WriteParameter::kEntryAmounts, parts) is "$N" for that shape),
// and postgres_write_batch.cc fills a WriteParameters slot by the same name, so the two
// files cannot drift apart. WriteStatementOf checks each shape's positions when it
// builds it.
//
// Each parameter's element type is named once too (WriteParameterElement): the SQL
// casts to it, and Set checks the array it is given carries it (binary arrays,
// postgres_binary_arrays.h, which the server refuses under any other type).
//
//   WriteParameters parameters(parts);
//   parameters.Set(WriteParameter::kTransactionIds, TextArray(ids));
//   parameters.Set(WriteParameter::kMetadataNames, TextArray({}));  // an absent part: dropped
//   ...
//   std::vector<BinaryArray> values = std::move(parameters).Take();  // the parts', in order
//
// Internal to engines/postgres. Thread-safe: constants and pure functions.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "base/check.h"
#include "engines/postgres/postgres_binary_arrays.h"
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
// lazily, so a connection opened before the migrations ran is still fine). The write
// statement is not among them: see WriteStatementOf.
void DeclareStatements(pqxx::connection_base& connection);

// ---- the write statement: its parts and their parameters ---------------------------

// The parts of the write statement, in the statement's order. Each but kPendingAmounts
// is one data-modifying CTE (named by WritePartName) whose rows the statement counts; a
// batch's statement holds a part only when the batch has rows for it
// (PostgresWriteBatch::Parts), because PostgreSQL starts every CTE of a plan at every
// call, rows or not: it opens the table and each of its indexes, locks them and builds
// the executor's state (docs/benchmarks.md, "The write built from the parts present").
enum class WritePart : int {
  kTransactions,  // new_transactions
  kMetadata,      // new_metadata: transaction_metadata rows (IndexedMetadataMembers)
  kEntries,       // new_entries
  kAccounts,      // updated_accounts
  kNewKeys,       // new_keys: records whose claim found no row (plain INSERT)
  kReplacedKeys,  // replaced_keys: records over an expired one (upsert)
  kEvents,        // new_events
  kDroppedClaims, // dropped_claims: row-mode claimed rows no item committed
  kNewHolds,      // new_holds: holds placed
  kSettledHolds,  // settled_holds, and each transaction's hold_id in new_transactions
  // No CTE of its own: updated_accounts also stores the accounts' pending amounts. Only
  // with kAccounts.
  kPendingAmounts,
};
inline constexpr int kWritePartCount = static_cast<int>(WritePart::kPendingAmounts) + 1;
// The parts with rows of their own, counted by the statement: all before kPendingAmounts.
inline constexpr int kCountedWritePartCount = static_cast<int>(WritePart::kPendingAmounts);

// The CTE of a counted part ("new_entries"), also its name in messages.
const char* WritePartName(WritePart part);

// A set of write parts: which shape of the write statement a batch sends.
class WriteParts {
 public:
  constexpr WriteParts() = default;
  WriteParts With(WritePart part) const {
    return WriteParts(bits_ | (uint32_t{1} << static_cast<int>(part)));
  }
  bool Has(WritePart part) const { return (bits_ >> static_cast<int>(part)) & 1; }
  bool empty() const { return bits_ == 0; }
  uint32_t bits() const { return bits_; }
  friend bool operator==(WriteParts, WriteParts) = default;

 private:
  explicit constexpr WriteParts(uint32_t bits) : bits_(bits) {}
  uint32_t bits_ = 0;
};

// The parameters of the write statement, each an array with one element per row of its
// part, in position order: a shape takes those of its parts ($1 is the first present).
enum class WriteParameter : int {
  // kTransactions: one per transaction
  kTransactionIds,
  kTransactionKinds,
  kTransactionCreatedAt,
  kTransactionMetadata,
  kTransactionReversalOf,
  kTransactionFingerprints,
  // kSettledHolds: one per transaction, as kTransactionIds (new_transactions' hold_id)
  kTransactionHoldIds,
  // kMetadata: one per member indexed (engine_common::IndexedMetadataMembers)
  kMetadataNames,
  kMetadataValues,
  kMetadataCreatedAt,
  kMetadataTransactionIds,
  // kEntries: one per entry
  kEntryAccountIds,
  kEntryAccountVersions,
  kEntryTransactionIds,
  kEntryIndexes,
  kEntryAssets,
  kEntryAmounts,
  kEntryBalancesAfter,
  kEntryCreatedAt,
  kEntryRunningMaxima,  // created_at_running_max (engines/common/entry_running_max.h)
  // kAccounts: one per account updated
  kAccountIds,
  kAccountBalances,
  kAccountVersions,
  kAccountLockedVersions,
  kAccountEntriesRunningMax,  // NULL: the account's own is kept
  // kPendingAmounts: one per account, as kAccountIds
  kAccountPendingDebits,
  kAccountPendingCredits,
  // kNewKeys: one per key recorded whose claim found no row
  kNewKeyNamespaces,
  kNewKeyScopes,
  kNewKeys,
  kNewKeyFingerprints,
  kNewKeyTransactionIds,
  kNewKeyCreatedAt,
  kNewKeyExpiresAt,
  // kReplacedKeys: one per key recorded over an expired record
  kReplacedKeyNamespaces,
  kReplacedKeyScopes,
  kReplacedKeys,
  kReplacedKeyFingerprints,
  kReplacedKeyTransactionIds,
  kReplacedKeyCreatedAt,
  kReplacedKeyExpiresAt,
  // kEvents: one per event
  kEventTransactionIds,
  kEventTypes,
  kEventPayloads,
  kEventCreatedAt,
  // kDroppedClaims: row mode, the key rows this transaction's claim inserted that no
  // item committed
  kUnusedClaimNamespaces,
  kUnusedClaimScopes,
  kUnusedClaimKeys,
  // kNewHolds: one per hold placed
  kHoldIds,
  kHoldFromAccounts,
  kHoldToAccounts,
  kHoldAssets,
  kHoldAmounts,
  kHoldExpiresAt,
  kHoldCreatedAt,
  // kSettledHolds: one per settlement
  kSettledHoldIds,
  kSettledHoldStatuses,
  kSettledHoldSettledBy,
};

inline constexpr int kWriteParameterCount =
    static_cast<int>(WriteParameter::kSettledHoldSettledBy) + 1;
static_assert(kWriteParameterCount == 58,
              "a write parameter was added or removed: check WritePartOf, the write "
              "statement's SQL and PostgresWriteBatch::Parameters, which name every one");

// The part a parameter belongs to.
WritePart WritePartOf(WriteParameter parameter);
// The element type of its array: what the SQL casts it to and the array must carry.
ArrayElement WriteParameterElement(WriteParameter parameter);

// How many rows each counted part of the write statement has (or touched), by part; a
// part not in the statement has none.
struct WriteBatchCounts {
  std::array<int64_t, kCountedWritePartCount> rows{};
  int64_t& operator[](WritePart part) { return rows[Index(part)]; }
  int64_t operator[](WritePart part) const { return rows[Index(part)]; }
  friend bool operator==(const WriteBatchCounts&, const WriteBatchCounts&) = default;

 private:
  static size_t Index(WritePart part) {
    LEDGER_CHECK(static_cast<int>(part) < kCountedWritePartCount)
        << WritePartName(part) << " has no rows of its own";
    return static_cast<size_t>(part);
  }
};

// How the write statement takes its rows: its parts, and one of two forms.
// - Arrays (no inline_rows): each parameter is one array with an element per row of
//   its part, any number of rows, and each part's statement unnests its arrays.
// - Inline rows: each parameter is as many scalar parameters as its part has rows
//   ("$4::bigint, $5::bigint" for two entries' amounts), and each part's rows are a
//   VALUES list. A shape then holds its row counts, so it serves only batches of
//   exactly those; PostgresWriteBatch uses it for small batches (Shape). It spares
//   the server each part's function scan and the state it materializes, whatever the
//   rows: 1,234k -> 1,002k server instructions per single submit (docs/benchmarks.md,
//   "Counted, not timed").
// Either way the parameters are named by WriteParameter, in the enum's order, and the
// expected counts come last (WriteStatement).
struct WriteShape {
  WriteParts parts;
  // Each counted part's rows: at least one for a part of `parts`, none for the others.
  std::optional<WriteBatchCounts> inline_rows;
};

// The inline shapes one session prepares at most: past them, a batch of a new row count
// goes as arrays. Each prepared shape keeps its plan in the server session's memory,
// and a workload of many entry and metadata counts would otherwise keep adding them.
inline constexpr int kInlineWriteShapesPerSessionMax = 16;

// The rows a parameter has in an inline shape: its part's, or for the columns another
// part adds (kTransactionHoldIds, the pending amounts) the rows they are columns of.
int64_t WriteParameterRows(WriteParameter parameter, const WriteBatchCounts& rows);

// A parameter's 0-based index among the parameters of `parts`' shape of arrays.
// Checked: its part is one of `parts`.
int WriteParameterIndex(WriteParameter parameter, WriteParts parts);
// "$N" for a parameter of `parts`' shape of arrays: its index + 1.
std::string WriteParameterSql(WriteParameter parameter, WriteParts parts);

// The values of one shape's parameters, filled by name in any order.
class WriteParameters {
 public:
  explicit WriteParameters(WriteParts parts);
  // Checked: set only once, as an array of the parameter's element type; a parameter of
  // a part not in the shape only as an empty array (an absent part has no rows), which
  // is dropped.
  void Set(WriteParameter parameter, BinaryArray value);
  // The values of the shape's parameters in position order. Checked: every one was set.
  std::vector<BinaryArray> Take() &&;

 private:
  WriteParts parts_;
  std::vector<std::optional<BinaryArray>> values_;  // by WriteParameter
};

// The highest $N in `sql`, and whether every $1..$N occurs: what WriteStatementOf
// checks of each shape ({0, true} for none).
struct ParameterUse {
  int highest = 0;
  bool contiguous = true;
};
ParameterUse ParameterUseOf(std::string_view sql);

// One shape of the write statement. It is checked by the server: it takes the expected
// counts of its counted parts (in WritePart order: one bigint[] for arrays, one bigint
// each for inline rows) as its last parameters and raises kShortWriteSqlState when what
// it wrote differs, so a COMMIT sent behind it in the same pipeline never runs after a
// short write (postgres_pipeline.h). Prepared by libpq itself (libpqxx never hears of
// it), on first use in each session, under its name: "write_batch_" and the parts' bits
// in hex ("write_batch_4d"), for inline rows followed by "_rows" and each counted part's
// rows ("write_batch_5d_rows_1_2_2_1_1"). At most 2^kWritePartCount shapes of arrays
// (a workload sends a handful), and a session prepares at most
// kInlineWriteShapesPerSessionMax inline ones.
struct WriteStatement {
  WriteShape shape;
  std::string name;
  std::string sql;
  int parameter_count = 0;  // the parts' parameters and the expected counts
};
// Built on first use in the process and kept (thread-safe; the reference stays valid).
// Checked: the parts are not empty, have kAccounts if kPendingAmounts and kTransactions
// if kSettledHolds, inline rows are as WriteShape says, and the SQL uses exactly
// $1..$parameter_count.
const WriteStatement& WriteStatementOf(const WriteShape& shape);
// Its name alone, without building it.
std::string WriteStatementName(const WriteShape& shape);
// The shape of arrays.
inline const WriteStatement& WriteStatementOf(WriteParts parts) {
  return WriteStatementOf(WriteShape{.parts = parts});
}

// The function the write statement calls, ledger_check_write_counts, is the schema's
// (schema/postgres/0008_write_check_function.sql). Its error carries the counts written
// as its DETAIL, an array literal, for PostgresWriteBatch::CheckAppliedText.
inline constexpr char kShortWriteSqlState[] = "LW001";
inline constexpr char kCheckWriteCountsFunction[] = "ledger_check_write_counts";

// ---- the claim and the account locks in one round trip (postgres_pipeline.h) -------
// BEGIN, then these statements, pipelined: the claim's lock timeout, the claim, the
// session's lock timeout back, then the key rows and (when the ledger named the
// accounts up front) their lock. Prepared by libpq itself on first use in each session,
// like the checked writes: nothing is parsed per submit. Each claim statement has two forms
// (ClaimKeys): for several keys, the keys travel as three text[] (their namespaces,
// scopes and keys) in the global claim order, the advisory mode's as one text[] of
// encoded identities, and the statement unnests them; for one key (a single submit) as
// text scalars, and the statement looks the key up directly. The scalar form spares the
// server a function scan and a lateral join per statement: about 1,414k -> 1,300k server
// instructions per single submit (docs/benchmarks.md, "Counted, not timed").
enum class ClaimKeys { kOne, kMany };
// A claim statement of one form: its name (prepared per session) and its text.
struct ClaimStatement {
  const char* name;
  const std::string& sql;
};
namespace claim_statement {
inline constexpr char kSetLockTimeout[] = "claim_set_lock_timeout";  // $1: '250ms'
// Advisory mode: $1 the identities (or the identity).
inline constexpr char kAdvisoryLocks[] = "claim_advisory_locks";
inline constexpr char kAdvisoryLock[] = "claim_advisory_lock";
// RememberedRowsCheckSql.
inline constexpr char kCheckRememberedRows[] = "claim_check_remembered_rows";
}  // namespace claim_statement

inline constexpr char kSetLockTimeoutSql[] = "SELECT set_config('lock_timeout', $1, true)";
// Advisory mode: pg_advisory_xact_lock on each identity's hash seeded by `lock_seed`
// (AdvisoryLockSeed of the session's schema), in the array's order.
std::string AdvisoryLocksSql(std::string_view lock_seed, ClaimKeys keys);
// A submit or a batch decided on remembered account rows (postgres_remembered_rows.h),
// right after its BEGIN: every key's advisory lock taken without waiting ($1 the
// identities, the hash seeded by `lock_seed`), no row under any key ($2..$4 namespaces,
// scopes, keys), and the accounts ($5, sorted) locked in id order, each as remembered
// ($6 versions, $7 balances, $8 pending debits, $9 pending credits, $10 closed as 0 or
// 1, $11 entries_running_max in micros or NULL). Raises kShortWriteSqlState otherwise,
// with DETAIL {locks taken, key rows, accounts as remembered} against {keys,0,count},
// which aborts the pipeline before the write behind it.
std::string RememberedRowsCheckSql(std::string_view lock_seed);
// Row mode: the final record of each key without a row (namespaces, scopes, keys,
// fingerprints, transaction ids, created_at, expires_at: $1..$7), then the key rows
// locked ($1..$3).
ClaimStatement InsertRecordsStatement(ClaimKeys keys);
ClaimStatement LockKeyRowsStatement(ClaimKeys keys);
// After the claim, the key rows and (when the ledger named the accounts up front) the
// accounts ($1, a text[], sorted) locked as lock_accounts locks them unless a claimed
// key has a committed record (a replay locks nothing). The row mode's lock also takes
// the claim's transaction ids ($5): a row with one of them is the claim's own insert,
// not a record.
// - One key ($2, $3, $4 as text; the read's $1..$3): two statements, the key row
//   (kKeyColumns) and the lock (kAccountColumns, entries_running_max), each probing the
//   key's row by its primary key.
// - Several keys ($2, $3, $4 as text[]; $1 maybe empty): one statement, so each key is
//   probed once (a lateral join per key): a row is a key row (kKeyColumns from column
//   0, NULL after) or an account row (NULL before, kAccountColumns and
//   entries_running_max from kReadKeysAccountColumn), key rows first. For one key the
//   two statements cost the server less than this one (its wider plan takes longer to
//   start than a primary-key probe): docs/benchmarks.md, "One probe per key".
ClaimStatement ReadKeyStatement();
ClaimStatement LockAccountsUnlessReplayedStatement(bool row_mode);
ClaimStatement ReadKeysAndLockAccountsStatement(bool row_mode);
inline constexpr int kReadKeysAccountColumn = 8;        // the key columns before it
inline constexpr int kReadKeysAccountColumnCount = 11;  // kAccountColumns, running max

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
// Their names as statements prepared in a session's pipelines (postgres_pipeline.h).
inline constexpr char kBeginStatement[] = "pipeline_begin";
inline constexpr char kCommitStatement[] = "pipeline_commit";
inline constexpr char kRollback[] = "ROLLBACK";
// The transactions of the ids in $1 (text[]), as kSelectTransactions reads them, and
// ROLLBACK, in one pipeline when the transaction writes nothing
// (StorageTransaction::ExpectNoWrites: a replay). Names of their own: libpqxx prepares
// kSelectTransactions in the same session by itself.
const std::string& SelectTransactionsSql();
inline constexpr char kSelectTransactionsStatement[] = "pipeline_select_transactions";
inline constexpr char kRollbackStatement[] = "pipeline_rollback";
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

// The session's own server process: its pid, its backend_start and its server's
// pg_postmaster_start_time, in microseconds since the epoch (ServerBackend). Sent with
// the session's settings, in their round trip.
std::string ServerBackendOfSessionSql();
// Signals the server process `pid` started at `started_micros` to end (none when it is
// gone); then counts whether it is still there, or answers -1 when the server is not
// the one started at `server_started_micros`: EndServerBackend.
std::string TerminateServerBackendSql(int pid, int64_t started_micros);
std::string ServerBackendPresentSql(int pid, int64_t started_micros,
                                    int64_t server_started_micros);

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
