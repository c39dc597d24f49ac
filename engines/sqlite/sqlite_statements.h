// Every SQL statement the SQLite engine sends, in one place, as named compile-time
// literals (the column lists and row readers they go with live in sqlite_rows.h; a unit
// of work's own statements are the caller's). Two are heads that sqlite_rows.cc
// completes once per row count (kInsertEntriesHead, kSelectHoldsHead), one is completed
// by the connection's synchronous setting (kSetSynchronousHead).
//
//   LEDGER_ASSIGN_OR_RETURN(Query query, connection.Prepare(statement::kSelectAccount, ...));
//
// Internal to engines/sqlite. Thread-safe: constants only.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_STATEMENTS_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_STATEMENTS_H_

#include "engines/sqlite/sqlite_rows.h"

namespace ledger::sqlite_internal::statement {

// assets and accounts
inline constexpr char kSelectAssetScale[] = "SELECT scale FROM assets WHERE code = ?";
inline constexpr char kSelectAsset[] = "SELECT code, scale FROM assets WHERE code = ?";
inline constexpr char kListAssets[] = "SELECT code, scale FROM assets ORDER BY code";
inline constexpr char kInsertAsset[] = "INSERT INTO assets (code, scale) VALUES (?, ?)";
inline constexpr char kInsertAccount[] = "INSERT INTO accounts (" LEDGER_SQLITE_ACCOUNT_COLUMNS
                                         ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
inline constexpr char kSelectAccount[] =
    "SELECT " LEDGER_SQLITE_ACCOUNT_COLUMNS " FROM accounts WHERE id = ?";
inline constexpr char kListAccounts[] =
    "SELECT " LEDGER_SQLITE_ACCOUNT_COLUMNS " FROM accounts WHERE id > ? ORDER BY id LIMIT ?";
inline constexpr char kCloseAccountIfZeroBalance[] =
    "UPDATE accounts SET closed = 1 WHERE id = ? AND balance = 0"
    " AND pending_debits = 0 AND pending_credits = 0";
// The account under the writer lock, then its entries_running_max (column
// kLockAccountRunningMaxColumn; engines/common/entry_running_max.h).
inline constexpr char kLockAccount[] =
    "SELECT " LEDGER_SQLITE_ACCOUNT_COLUMNS ", entries_running_max FROM accounts WHERE id = ?";
inline constexpr int kLockAccountRunningMaxColumn = 10;
// Its entries_running_max parameter is NULL for an account this transaction never read
// (no entry of its was written): the row keeps its own.
inline constexpr char kUpdateAccount[] =
    "UPDATE accounts SET balance = ?, version = ?,"
    " pending_debits = ?, pending_credits = ?,"
    " entries_running_max = coalesce(?, entries_running_max)"
    " WHERE id = ? AND version = ?";

// transactions and entries
inline constexpr char kSelectTransaction[] = LEDGER_SQLITE_SELECT_TRANSACTION " WHERE t.id = ?";
inline constexpr char kListTransactions[] =
    LEDGER_SQLITE_SELECT_TRANSACTION " WHERE t.id > ? ORDER BY t.id LIMIT ?";
inline constexpr char kInsertTransaction[] =
    "INSERT INTO transactions (" LEDGER_SQLITE_TRANSACTION_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?)";
inline constexpr char kSelectEntries[] = "SELECT " LEDGER_SQLITE_ENTRY_COLUMNS
                                         " FROM entries WHERE transaction_id = ?"
                                         " ORDER BY entry_index";
inline constexpr char kListEntries[] = "SELECT " LEDGER_SQLITE_ENTRY_COLUMNS
                                       ", transaction_id, created_at"
                                       " FROM entries WHERE account_id = ?"
                                       " AND account_version > ?"
                                       " ORDER BY account_version LIMIT ?";
inline constexpr char kIsReversed[] = "SELECT 1 FROM transactions WHERE reversal_of = ?";
inline constexpr char kSelectDebits[] =
    "SELECT amount FROM entries"
    " WHERE account_id = ? AND created_at >= ?"
    " AND amount < 0";
inline constexpr char kInsertEntriesHead[] =
    "INSERT INTO entries (account_id, account_version, transaction_id, entry_index, "
    "asset, amount, balance_after, created_at, created_at_running_max) VALUES ";
// One row of transaction_metadata (engine_common::IndexedMetadataMembers).
inline constexpr char kInsertMetadataMember[] =
    "INSERT INTO transaction_metadata (member_name, member_value, created_at, transaction_id)"
    " VALUES (?, ?, ?, ?)";

// The balance as of ?2: the entry with the greatest version whose created_at_running_max
// is <= ?2, found by a binary search over the primary key (account_id, account_version)
// instead of an index of its own (schema/sqlite/0006_fewer_reads_indexes.sql).
// Correct because the running maximum never decreases along an account's versions
// (engines/common/entry_running_max.h) and the versions run 1..N without a gap (the
// posting invariants, checked on every write; `ledger verify`). The search keeps
// [low, high] with every version <= low at most ?2 (0: none) and every version > high
// after it; each step probes the middle version (one primary-key lookup: CROSS JOIN
// keeps `bounds` the outer loop) and halves the range, so at most
// ceil(log2(N + 1)) probes. The last row of `bounds` (the narrowest) names the answer;
// its column 7 is 0 when the search stopped short, which only a missing version can make
// (the engine reports it as data loss), and the entry's columns are NULL when no version
// qualifies.
inline constexpr char kSelectEntryAsOf[] =
    "WITH RECURSIVE bounds (low, high) AS ("
    " SELECT 0, coalesce((SELECT account_version FROM entries WHERE account_id = ?1"
    " ORDER BY account_version DESC LIMIT 1), 0)"
    " UNION ALL"
    " SELECT CASE WHEN probe.created_at_running_max <= ?2 THEN probe.account_version"
    " ELSE bounds.low END,"
    " CASE WHEN probe.created_at_running_max <= ?2 THEN bounds.high"
    " ELSE probe.account_version - 1 END"
    " FROM bounds CROSS JOIN entries AS probe"
    " WHERE probe.account_id = ?1 AND probe.account_version = (bounds.low + bounds.high + 1) / 2"
    " AND bounds.low < bounds.high)"
    " SELECT " LEDGER_SQLITE_ENTRY_COLUMNS ", transaction_id, created_at,"
    " narrowest.low = narrowest.high"
    " FROM (SELECT low, high FROM bounds ORDER BY high - low LIMIT 1) AS narrowest"
    " LEFT JOIN entries ON entries.account_id = ?1 AND entries.account_version = narrowest.low";
inline constexpr int kSelectEntryAsOfCompleteColumn = 7;

// key records
inline constexpr char kSelectCommittedKey[] = "SELECT " LEDGER_SQLITE_KEY_RECORD_COLUMNS
                                              " FROM idempotency_keys"
                                              " WHERE namespace = ? AND scope = ? AND key = ?"
                                              " AND state = 'committed'";
inline constexpr char kRecordKey[] =
    "INSERT INTO idempotency_keys (namespace, scope, key, fingerprint, state,"
    " transaction_id, created_at, expires_at) VALUES (?, ?, ?, ?, 'committed', ?, ?, ?)"
    " ON CONFLICT (namespace, scope, key) DO UPDATE SET"
    " fingerprint = excluded.fingerprint, state = 'committed',"
    " transaction_id = excluded.transaction_id, created_at = excluded.created_at,"
    " expires_at = excluded.expires_at"
    " WHERE idempotency_keys.state = 'pending'"
    " OR idempotency_keys.expires_at <= excluded.created_at";
// The claim (sqlite_engine.cc): the final record of one key, or nothing when the key
// holds a row already (then read with kSelectCommittedKey). One row a statement: a
// multi-row INSERT needs a statement journal, which costs a page image per leaf page it
// touches, and a shared transaction's keys from many clients sit on as many pages
// (docs/benchmarks.md, "SQLite's exactly-once cost").
inline constexpr char kClaimKey[] =
    "INSERT INTO idempotency_keys (namespace, scope, key, fingerprint, state,"
    " transaction_id, created_at, expires_at) VALUES (?, ?, ?, ?, 'committed', ?, ?, ?)"
    " ON CONFLICT (namespace, scope, key) DO NOTHING";
// The record a claim inserted, when the key commits with another record than the one
// the claim was told of, or when no item committed it (Commit).
inline constexpr char kRewriteClaimedKey[] =
    "UPDATE idempotency_keys SET fingerprint = ?, transaction_id = ?, created_at = ?,"
    " expires_at = ? WHERE namespace = ? AND scope = ? AND key = ? AND transaction_id = ?";
inline constexpr char kDropClaimedKey[] =
    "DELETE FROM idempotency_keys"
    " WHERE namespace = ? AND scope = ? AND key = ? AND transaction_id = ?";
inline constexpr char kListKeyRecordsAfter[] = "SELECT " LEDGER_SQLITE_KEY_RECORD_COLUMNS
                                               " FROM idempotency_keys WHERE state = 'committed'"
                                               " AND (namespace, scope, key) > (?, ?, ?)"
                                               " ORDER BY namespace, scope, key LIMIT ?";
inline constexpr char kListKeyRecordsFirst[] = "SELECT " LEDGER_SQLITE_KEY_RECORD_COLUMNS
                                               " FROM idempotency_keys WHERE state = 'committed'"
                                               " ORDER BY namespace, scope, key LIMIT ?";
inline constexpr char kPruneExpiredKeys[] =
    "DELETE FROM idempotency_keys WHERE (namespace, scope, key) IN"
    " (SELECT namespace, scope, key FROM idempotency_keys"
    " WHERE expires_at <= ? AND state = 'committed' ORDER BY expires_at LIMIT ?)";

// holds
inline constexpr char kSelectHold[] =
    "SELECT " LEDGER_SQLITE_HOLD_COLUMNS " FROM holds WHERE id = ?";
inline constexpr char kSelectHoldsHead[] =
    "SELECT " LEDGER_SQLITE_HOLD_COLUMNS " FROM holds WHERE id IN (";
inline constexpr char kInsertHold[] = "INSERT INTO holds (" LEDGER_SQLITE_HOLD_COLUMNS
                                      ") VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL)";
inline constexpr char kSettleHold[] =
    "UPDATE holds SET status = ?, settled_by = ?"
    " WHERE id = ? AND status = 'pending'";
inline constexpr char kHoldTotals[] =
    "SELECT 1, amount, expires_at, created_at FROM holds"
    " WHERE from_account = ?1 AND status = 'pending'"
    " AND (expires_at <= ?2 OR created_at >= ?3)"
    " UNION ALL"
    " SELECT 0, amount, expires_at, created_at FROM holds"
    " WHERE to_account = ?1 AND status = 'pending' AND expires_at <= ?2";
inline constexpr char kListHolds[] =
    "SELECT " LEDGER_SQLITE_HOLD_COLUMNS " FROM holds WHERE id > ?2 ORDER BY id LIMIT ?3";
inline constexpr char kListAccountHolds[] =
    "SELECT * FROM (SELECT " LEDGER_SQLITE_HOLD_COLUMNS
    " FROM holds"
    " WHERE from_account = ?1 AND id > ?2 ORDER BY id LIMIT ?3)"
    " UNION"
    " SELECT * FROM (SELECT " LEDGER_SQLITE_HOLD_COLUMNS
    " FROM holds"
    " WHERE to_account = ?1 AND id > ?2 ORDER BY id LIMIT ?3)"
    " ORDER BY id LIMIT ?3";
inline constexpr char kListLapsedHolds[] = "SELECT " LEDGER_SQLITE_HOLD_COLUMNS
                                           " FROM holds"
                                           " WHERE status = 'pending' AND expires_at <= ?"
                                           " ORDER BY expires_at, id LIMIT ?";

// outbox events
inline constexpr char kAppendEvent[] =
    "INSERT INTO outbox_events (transaction_id, type, payload, created_at)"
    " VALUES (?, ?, ?, ?)";
inline constexpr char kListEvents[] = "SELECT " LEDGER_SQLITE_OUTBOX_EVENT_COLUMNS
                                      " FROM outbox_events WHERE sequence > ?"
                                      " ORDER BY sequence LIMIT ?";

// work claims and webhook events
inline constexpr char kInsertWorkClaim[] =
    "INSERT INTO work_claims (" LEDGER_SQLITE_WORK_CLAIM_COLUMNS
    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (namespace, scope, key) DO NOTHING";
inline constexpr char kSelectWorkClaim[] = "SELECT " LEDGER_SQLITE_WORK_CLAIM_COLUMNS
                                           " FROM work_claims"
                                           " WHERE namespace = ? AND scope = ? AND key = ?";
inline constexpr char kReplaceWorkClaim[] =
    "UPDATE work_claims SET fingerprint = ?, state = ?, owner = ?, attempt = ?,"
    " lease_expires_at = ?, result = ?, created_at = ?, updated_at = ?, expires_at = ?"
    " WHERE namespace = ? AND scope = ? AND key = ? AND owner = ? AND attempt = ?";
inline constexpr char kDeleteWorkClaim[] =
    "DELETE FROM work_claims WHERE namespace = ? AND scope = ?"
    " AND key = ? AND state = 'pending' AND owner = ?";
inline constexpr char kMarkAbandonedWorkClaims[] =
    "UPDATE work_claims SET state = 'abandoned', updated_at = ?"
    " WHERE state = 'pending' AND lease_expires_at <= ?";
inline constexpr char kPruneWorkClaims[] = "DELETE FROM work_claims WHERE expires_at <= ?";
inline constexpr char kInsertWebhookEvent[] =
    "INSERT INTO webhook_events (provider, event_id, received_at)"
    " VALUES (?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING";
inline constexpr char kDeleteWebhookEvent[] =
    "DELETE FROM webhook_events WHERE provider = ? AND event_id = ?";
inline constexpr char kPruneWebhookEvents[] = "DELETE FROM webhook_events WHERE received_at < ?";

// the connection and its transactions
inline constexpr char kEnableForeignKeys[] = "PRAGMA foreign_keys = ON";
inline constexpr char kSetSynchronousHead[] = "PRAGMA synchronous = ";
// Negative: a size in KiB, not in pages (engines/sqlite/sqlite_connection.cc).
inline constexpr char kSetCacheSizeHead[] = "PRAGMA cache_size = -";
inline constexpr char kSetMmapSizeHead[] = "PRAGMA mmap_size = ";
inline constexpr char kEnableWriteAheadLog[] = "PRAGMA journal_mode = WAL";
inline constexpr char kBeginImmediate[] = "BEGIN IMMEDIATE";
inline constexpr char kBeginRead[] = "BEGIN";
inline constexpr char kCommit[] = "COMMIT";
inline constexpr char kRollback[] = "ROLLBACK";

// the migrations' bookkeeping
inline constexpr char kCreateSchemaMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version    INTEGER PRIMARY KEY,"
    " name       TEXT NOT NULL,"
    " applied_at INTEGER NOT NULL)";
inline constexpr char kSelectAppliedMigrations[] = "SELECT version FROM schema_migrations";
inline constexpr char kRecordMigration[] =
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)";

}  // namespace ledger::sqlite_internal::statement

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_STATEMENTS_H_
