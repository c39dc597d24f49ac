// Every SQL statement the MySQL engine sends, in one place: the fixed ones as named
// constants (compile-time literals, so the prepared statement cache keys on the same
// text as before), the ones whose shape depends on a row count as functions. The column
// lists and row readers they go with live in mysql_rows.h; a unit of work's own
// statements are the caller's. The write batch's CASE updates are built by UpdateById
// (mysql_write_batch.cc) from the table and columns each caller names.
//
//   connection.Query(statement::kSelectAccount, {id}, ...);
//   connection.Execute(LockAccountsSql(ids.size()), ...);
//
// Internal to engines/mysql. Thread-safe: constants and pure functions.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_STATEMENTS_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_STATEMENTS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "engines/mysql/mysql_rows.h"

namespace ledger::mysql_internal {

namespace statement {
// assets and accounts
inline constexpr char kInsertAsset[] = "INSERT INTO assets (code, scale) VALUES (?, ?)";
inline constexpr char kSelectAssetScale[] = "SELECT scale FROM assets WHERE code = ?";
inline constexpr char kSelectAsset[] =
    "SELECT " LEDGER_MYSQL_ASSET_COLUMNS " FROM assets WHERE code = ?";
inline constexpr char kListAssets[] =
    "SELECT " LEDGER_MYSQL_ASSET_COLUMNS " FROM assets ORDER BY code";
inline constexpr char kInsertAccount[] =
    "INSERT INTO accounts (" LEDGER_MYSQL_ACCOUNT_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
inline constexpr char kSelectAccount[] =
    "SELECT " LEDGER_MYSQL_ACCOUNT_COLUMNS " FROM accounts WHERE id = ?";
inline constexpr char kListAccounts[] =
    "SELECT " LEDGER_MYSQL_ACCOUNT_COLUMNS " FROM accounts WHERE id > ? ORDER BY id LIMIT ?";
inline constexpr char kCloseAccountIfZeroBalance[] =
    "UPDATE accounts SET closed = 1 WHERE id = ? AND balance = 0"
    " AND pending_debits = 0 AND pending_credits = 0";

// transactions and entries
inline constexpr char kSelectTransaction[] =
    "SELECT " LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS
    " FROM transactions t" LEDGER_MYSQL_TRANSACTION_JOINS " WHERE t.id = ? ORDER BY e.entry_index";
inline constexpr char kListTransactions[] =
    "SELECT " LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS
    " FROM (SELECT * FROM transactions WHERE id > ? ORDER BY id"
    " LIMIT ?) t" LEDGER_MYSQL_TRANSACTION_JOINS " ORDER BY t.id, e.entry_index";
inline constexpr char kListEntries[] = "SELECT " LEDGER_MYSQL_ENTRY_COLUMNS
                                       ", transaction_id, created_at"
                                       " FROM entries WHERE account_id = ? AND account_version > ?"
                                       " ORDER BY account_version LIMIT ?";
inline constexpr char kIsReversed[] = "SELECT 1 FROM transactions WHERE reversal_of = ? LIMIT 1";
inline constexpr char kDebitUsage[] =
    "SELECT COUNT(*), CAST(COALESCE(SUM(amount), 0) AS CHAR) FROM entries"
    " WHERE account_id = ? AND created_at >= ? AND amount < 0";

// key records
inline constexpr char kListKeyRecordsAfter[] =
    "SELECT " LEDGER_MYSQL_KEY_RECORD_COLUMNS
    " FROM idempotency_keys"
    " WHERE state = 'committed' AND (namespace > ? OR (namespace = ? AND"
    " (scope > ? OR (scope = ? AND `key` > ?))))"
    " ORDER BY namespace, scope, `key` LIMIT ?";
inline constexpr char kListKeyRecordsFirst[] =
    "SELECT " LEDGER_MYSQL_KEY_RECORD_COLUMNS
    " FROM idempotency_keys"
    " WHERE state = 'committed' ORDER BY namespace, scope, `key` LIMIT ?";
inline constexpr char kPruneExpiredKeys[] =
    "DELETE FROM idempotency_keys WHERE expires_at <= ? AND state = 'committed'"
    " ORDER BY expires_at LIMIT ?";
inline constexpr char kSelectCommittedKey[] =
    "SELECT 1 FROM idempotency_keys WHERE " LEDGER_MYSQL_IDENTITY_MATCHES
    " AND state = 'committed'";
inline constexpr char kLockKeyRowNowait[] =
    "SELECT " LEDGER_MYSQL_KEY_RECORD_COLUMNS
    " FROM idempotency_keys"
    " WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " FOR UPDATE NOWAIT";
inline constexpr char kLockKeyRow[] = "SELECT " LEDGER_MYSQL_KEY_RECORD_COLUMNS
                                      " FROM idempotency_keys"
                                      " WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " FOR UPDATE";
inline constexpr char kReplaceKey[] =
    "UPDATE idempotency_keys SET fingerprint = ?, state = 'committed',"
    " transaction_id = ?, created_at = ?, expires_at = ?"
    " WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " AND (state = 'pending' OR expires_at <= ?)";
// The claim of a new key (its final record, visible to no other session before COMMIT),
// and a record written without a claim's row.
inline constexpr char kInsertKey[] =
    "INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state,"
    " transaction_id, created_at, expires_at)"
    " VALUES (?, ?, ?, ?, 'committed', ?, ?, ?)";
// The record this transaction's claim inserted, replaced by the one that commits.
inline constexpr char kRewriteClaimedKey[] =
    "UPDATE idempotency_keys SET fingerprint = ?, transaction_id = ?, created_at = ?,"
    " expires_at = ? WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " AND transaction_id = ?";
inline constexpr char kInsertKeysHead[] =
    "INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint,"
    " state, transaction_id, created_at, expires_at) VALUES ";

// the write batch's CALL of the write procedure (schema/mysql/0008_write_procedure.sql):
// its JSON array of rows per table (NULL: none), and 1 to commit at its end
inline constexpr char kCallWrite[] = "CALL ledger_write(?, ?, ?, ?, ?, ?, ?, ?)";
// the claim's CALL of the claim procedure (schema/mysql/0009_claim_lock_procedure.sql,
// 0010_claim_returns_the_taken_key.sql, 0011_a_replay_ends_in_its_claim.sql): the key's
// record as kInsertKey takes it, the accounts' ids as a JSON array (sorted), the
// session's lock wait for the accounts; its rows are LockAccountsSql's for a new key, the
// key row and its transaction's for a taken one, then claim_ended when the procedure
// ended the transaction (a live record)
inline constexpr char kCallClaimLock[] = "CALL ledger_claim_lock(?, ?, ?, ?, ?, ?, ?, ?, ?)";

// reads by index
// The entry with the greatest version whose created_at_running_max is <= the instant, by
// a binary search over the primary key (account_id, account_version), no index of its
// own (schema/mysql/0007_fewer_reads_indexes.sql). Correct because the running
// maximum never decreases along an account's versions (engines/common/entry_running_max.h)
// and the versions run 1..N without a gap (the posting invariants, checked on every
// write; `ledger verify`). `bounds` keeps [low, high]: every version <= low is at most
// the instant (0: none), every version > high after it; each step probes the middle
// version (one eq_ref lookup of PRIMARY) and halves the range: at most
// ceil(log2(N + 1)) probes, in one statement's read view. The narrowest row names the
// answer; column 7 is 0 when the search stopped short (only a missing version can: data
// loss), the entry's columns NULL when no version qualifies. The anchor's CASTs make both
// columns BIGINT (a recursive CTE's columns take the anchor's types). Parameters: the
// account id, the instant twice, the account id twice (kSelectEntryAsOfParameters, which
// a static_assert in mysql_reads.cc holds to the statement's count of '?').
inline constexpr char kSelectEntryAsOf[] =
    "WITH RECURSIVE bounds (low, high) AS ("
    " SELECT CAST(0 AS SIGNED), CAST(coalesce((SELECT account_version FROM entries"
    " WHERE account_id = ? ORDER BY account_version DESC LIMIT 1), 0) AS SIGNED)"
    " UNION ALL"
    " SELECT CASE WHEN probe.created_at_running_max <= ? THEN probe.account_version"
    " ELSE bounds.low END,"
    " CASE WHEN probe.created_at_running_max <= ? THEN bounds.high"
    " ELSE probe.account_version - 1 END"
    " FROM bounds JOIN entries AS probe ON probe.account_id = ?"
    " AND probe.account_version = (bounds.low + bounds.high + 1) DIV 2"
    " WHERE bounds.low < bounds.high)"
    " SELECT e.account_id, e.asset, e.amount, e.balance_after, e.account_version,"
    " e.transaction_id, e.created_at, narrowest.low = narrowest.high"
    " FROM (SELECT low, high FROM bounds ORDER BY high - low LIMIT 1) AS narrowest"
    " LEFT JOIN entries AS e ON e.account_id = ? AND e.account_version = narrowest.low";
inline constexpr int kSelectEntryAsOfParameters = 5;
inline constexpr int kSelectEntryAsOfCompleteColumn = 7;
inline constexpr char kSelectCommittedKeyRecord[] =
    "SELECT " LEDGER_MYSQL_KEY_RECORD_COLUMNS " FROM idempotency_keys"
    " WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " AND state = 'committed'";

// holds
inline constexpr char kSelectHold[] =
    "SELECT " LEDGER_MYSQL_HOLD_COLUMNS " FROM holds WHERE id = ?";
inline constexpr char kListHolds[] =
    "SELECT " LEDGER_MYSQL_HOLD_COLUMNS " FROM holds WHERE id > ? ORDER BY id LIMIT ?";
inline constexpr char kListAccountHolds[] =
    "(SELECT " LEDGER_MYSQL_HOLD_COLUMNS
    " FROM holds"
    " WHERE from_account = ? AND id > ? ORDER BY id LIMIT ?)"
    " UNION (SELECT " LEDGER_MYSQL_HOLD_COLUMNS
    " FROM holds"
    " WHERE to_account = ? AND id > ? ORDER BY id LIMIT ?) ORDER BY id LIMIT ?";
inline constexpr char kListLapsedHolds[] = "SELECT " LEDGER_MYSQL_HOLD_COLUMNS
                                           " FROM holds"
                                           " WHERE status = 'pending' AND expires_at <= ?"
                                           " ORDER BY expires_at, id LIMIT ?";
// Two aggregates over the account's pending holds, each read from its covering index
// (holds_pending_by_from_account, holds_pending_by_to_account): out of the account, the
// lapsed amounts and the reserving holds placed since `since`; into it, the lapsed
// amounts. Derived tables of aggregates always give one row each.
inline constexpr char kHoldTotals[] =
    "SELECT CAST(COALESCE(d.lapsed, 0) AS CHAR), CAST(COALESCE(c.lapsed, 0) AS CHAR),"
    " d.reserving_count, CAST(COALESCE(d.reserving_amount, 0) AS CHAR)"
    " FROM (SELECT SUM(CASE WHEN expires_at <= ? THEN amount END) AS lapsed,"
    " COUNT(CASE WHEN (expires_at IS NULL OR expires_at > ?) AND created_at >= ?"
    " THEN 1 END) AS reserving_count,"
    " SUM(CASE WHEN (expires_at IS NULL OR expires_at > ?) AND created_at >= ?"
    " THEN amount END) AS reserving_amount"
    " FROM holds WHERE status = 'pending' AND from_account = ?) d"
    " CROSS JOIN (SELECT SUM(amount) AS lapsed FROM holds"
    " WHERE status = 'pending' AND to_account = ? AND expires_at <= ?) c";

// outbox events: the sequencer (schema/mysql/0002), then the page
inline constexpr char kLockEventSequencer[] =
    "SELECT id FROM outbox_sequencer WHERE id = 1 FOR UPDATE";
inline constexpr char kReadLastEventSequence[] =
    "SET @ledger_next_sequence = (SELECT COALESCE(MAX(`sequence`), 0) FROM outbox_events)";
inline constexpr char kSequenceCommittedEvents[] =
    "UPDATE outbox_events SET `sequence` = (@ledger_next_sequence := @ledger_next_sequence + 1)"
    " WHERE `sequence` IS NULL ORDER BY insert_order LIMIT 10000";
inline constexpr char kListEvents[] = "SELECT " LEDGER_MYSQL_OUTBOX_EVENT_COLUMNS
                                      " FROM outbox_events WHERE `sequence` > ?"
                                      " ORDER BY `sequence` LIMIT ?";

// work claims and webhook events
inline constexpr char kInsertWorkClaim[] =
    "INSERT INTO work_claims (" LEDGER_MYSQL_WORK_CLAIM_COLUMNS
    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
inline constexpr char kSelectWorkClaim[] = "SELECT " LEDGER_MYSQL_WORK_CLAIM_COLUMNS
                                           " FROM work_claims WHERE " LEDGER_MYSQL_IDENTITY_MATCHES;
inline constexpr char kReplaceWorkClaim[] =
    "UPDATE work_claims SET fingerprint = ?, state = ?, owner = ?, attempt = ?,"
    " lease_expires_at = ?, result = ?, created_at = ?, updated_at = ?,"
    " expires_at = ? WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " AND owner = ? AND attempt = ?";
inline constexpr char kDeleteWorkClaim[] =
    "DELETE FROM work_claims WHERE " LEDGER_MYSQL_IDENTITY_MATCHES
    " AND owner = ? AND state = 'pending'";
inline constexpr char kMarkAbandonedWorkClaims[] =
    "UPDATE work_claims SET state = 'abandoned', updated_at = ?"
    " WHERE state = 'pending' AND lease_expires_at <= ?";
inline constexpr char kPruneWorkClaims[] = "DELETE FROM work_claims WHERE expires_at <= ?";
inline constexpr char kInsertWebhookEvent[] =
    "INSERT INTO webhook_events (provider, event_id, received_at) VALUES (?, ?, ?)";
inline constexpr char kDeleteWebhookEvent[] =
    "DELETE FROM webhook_events WHERE provider = ? AND event_id = ?";
inline constexpr char kPruneWebhookEvents[] = "DELETE FROM webhook_events WHERE received_at < ?";

// the session and its transactions
inline constexpr char kSetReadCommitted[] =
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";
inline constexpr char kSelectSessionIdAndVersion[] = "SELECT CONNECTION_ID(), VERSION()";
// MariaDB only (MySQL 8 has no such variable): whether the node replicates with Galera.
inline constexpr char kSelectWsrepOn[] = "SELECT @@wsrep_on";
inline constexpr char kCommit[] = "COMMIT";
inline constexpr char kRollback[] = "ROLLBACK";
inline constexpr char kPing[] = "DO 1";

// the migrations' bookkeeping
inline constexpr char kCreateSchemaMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INT NOT NULL PRIMARY KEY,"
    " name VARCHAR(255) NOT NULL,"
    " applied_at BIGINT NOT NULL"
    ") ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin";
inline constexpr char kSelectAppliedMigrations[] = "SELECT version FROM schema_migrations";
inline constexpr char kRecordMigration[] =
    "INSERT INTO schema_migrations (version, name, applied_at)"
    " VALUES (?, ?, ?)";
}  // namespace statement

// ---- statements shaped by a count or by the caller's values ---------------------------

// The key rows matching `matches` ("(identity) OR (identity) ..."), locked.
std::string LockKeyRowsSql(std::string_view matches);
// `count` accounts by id, locked in primary-key (sorted id) order, each row followed by
// its entries_running_max (kLockAccountsRunningMaxColumn; engines/common/entry_running_max.h).
std::string LockAccountsSql(size_t count);
inline constexpr int kLockAccountsRunningMaxColumn = 10;  // after LEDGER_MYSQL_ACCOUNT_COLUMNS
// `count` holds by id.
std::string SelectHoldsSql(size_t count);
// `count` transactions by id with their holds and entries, ordered by id.
std::string SelectTransactionsSql(size_t count);
// The status and settler of each of `count` holds (the write's check after a short
// settlement).
std::string SettlementStateOfHoldsSql(size_t count);
// Records the key rows `values` ("(?, ...), ..."), each replacing its placeholder or
// expired record and keeping a live committed one as it is.
std::string RecordKeysSql(std::string_view values);
// Deletes the key rows matching `matches` ("(identity AND transaction_id = ?) OR ..."):
// the records this transaction's claim inserted that no item committed.
std::string DropClaimedKeyRowsSql(std::string_view matches);
// How many of the key rows `matches` names (identity and transaction id) exist.
std::string CountKeyRowsSql(std::string_view matches);

// The session's settings, set once per new session.
std::string SessionVariablesSql(int lock_wait_seconds, std::string_view statement_timeout);
// `assignment` for the session ("max_statement_time = 0.000").
std::string SetSessionSql(std::string_view assignment);
// The bound on each statement: MariaDB's max_statement_time, MySQL 8's
// max_execution_time (read-only SELECTs only); zero lifts it.
std::string StatementTimeoutAssignment(bool mariadb, absl::Duration timeout);
std::string LockWaitSql(int seconds);
// `database`: a name ParseMysqlUrl checked plain.
std::string CreateDatabaseSql(std::string_view database);

// The migration lock: a named lock per database, taken without waiting.
std::string TakeMigrationLockSql();
std::string ReleaseMigrationLockSql();

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_STATEMENTS_H_
