// The MySQL engine's classes, shared by its source files: mysql_engine.cc (open,
// migrate, the submit transaction), mysql_reads.cc (assets, accounts, history, keys,
// holds, events) and its two stores, mysql_work_claim_store.cc and mysql_webhook_store.cc.
//
// The submit transaction's claim is the key's row (see docs/engines/mysql.md):
//   INSERT the key's final record (the one the pipeline says it will commit: its
//   fingerprint, transaction id and times) under the claim's lock wait timeout;
//   - inserted: the key was free; the row's exclusive lock is the hold until the end,
//     and no other session reads the uncommitted row;
//   - 1062 duplicate: the key is committed (perhaps by the holder just waited for).
//     ROLLBACK drops the shared lock the duplicate check left, then a locking read
//     (SELECT ... FOR UPDATE) takes the row and returns the latest committed record;
//   - 1205 after the wait: another transaction still holds it: InProgressError.
// Fail fast first probes the row with SELECT ... FOR UPDATE NOWAIT (InnoDB's shortest
// lock wait is 1 s). A batch's claim first tries every record in one multi-row
// INSERT (ClaimKeysOn explains when, and why it cannot deadlock worse than one key).
// A single key whose accounts the ledger named up front (ExpectAccountLocks) is
// inserted by the claim procedure (schema/mysql/0009_claim_lock_procedure.sql), whose
// CALL then locks the accounts too: LockAccounts answers from its rows.
//
// Writes (WriteTransaction, RecordKey, AppendEvent) are checked at once and buffered
// (mysql_write_batch.h); they go out as multi-row statements before the transaction's
// next statement, normally COMMIT. RecordKey of the record the claim inserted sends
// nothing; it replaces an expired record the claim locked; the claimed rows no item
// committed are deleted in one statement, so their keys stay unused.
//
// Internal to engines/mysql. MysqlEngine is thread-safe; a MysqlStorageTransaction
// belongs to the thread that began it.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_INTERNAL_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_INTERNAL_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/common/claimed_row_tracker.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_connection_pool.h"
#include "engines/mysql/mysql_webhook_store.h"
#include "engines/mysql/mysql_work_claim_store.h"
#include "engines/mysql/mysql_write_batch.h"
#include "ledger/engine.h"

namespace ledger::mysql_internal {

// Rounds of INSERT-then-lock a claim makes when the committed row it collided with is
// deleted (pruned) before it could lock it. Each round means another transaction
// finished with the key, so more than a few means something is badly wrong.
inline constexpr int kClaimRoundsMax = 4;

// The session lock wait for a claim under `wait`: whole seconds, rounded up, at least
// InnoDB's minimum of 1 (fail fast also probes with NOWAIT first: see ClaimKey).
int ClaimLockWaitSeconds(const WaitPolicy& wait);

class MysqlEngine final : public Engine {
 public:
  MysqlEngine(std::shared_ptr<MysqlConnectionPool> pool, absl::Duration pool_acquire_wait,
              absl::Duration migration_lock_wait)
      : pool_(std::move(pool)), pool_acquire_wait_(pool_acquire_wait),
        migration_lock_wait_(migration_lock_wait) {}

  std::string_view name() const override { return "mysql"; }
  absl::Status Migrate() override;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;

  absl::Status PutAsset(const Asset& asset) override;
  absl::StatusOr<std::optional<Asset>> GetAsset(std::string_view code) override;
  absl::StatusOr<std::vector<Asset>> ListAssets() override;
  absl::Status InsertAccount(const Account& account) override;
  absl::StatusOr<std::optional<Account>> GetAccount(std::string_view id) override;
  absl::StatusOr<std::vector<Account>> ListAccounts(std::string_view after_id,
                                                    int64_t limit) override;
  absl::StatusOr<bool> CloseAccountIfZeroBalance(std::string_view id) override;
  absl::StatusOr<std::optional<Transaction>> GetTransaction(std::string_view id) override;
  absl::StatusOr<std::vector<Transaction>> GetTransactions(
      const std::vector<std::string>& ids) override;
  absl::StatusOr<std::vector<Transaction>> ListTransactions(std::string_view after_id,
                                                            int64_t limit) override;
  absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id,
                                                 int64_t after_version, int64_t limit) override;
  absl::StatusOr<std::optional<HistoryEntry>> EntryAsOf(std::string_view account_id,
                                                        absl::Time as_of) override;
  absl::StatusOr<std::vector<Transaction>> FindTransactions(
      const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
      int64_t limit) override;
  absl::StatusOr<std::optional<KeyRecord>> GetKeyRecord(const KeyIdentity& identity) override;
  absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(const std::optional<KeyIdentity>& after,
                                                        int64_t limit) override;
  absl::StatusOr<int64_t> PruneExpiredKeys(absl::Time now, int64_t limit) override;
  absl::StatusOr<std::optional<Hold>> GetHold(std::string_view id) override;
  absl::StatusOr<std::vector<Hold>> ListHolds(std::string_view account_id,
                                              std::string_view after_id, int64_t limit) override;
  absl::StatusOr<std::vector<Hold>> ListLapsedHolds(absl::Time now, int64_t limit) override;
  absl::StatusOr<PendingHoldTotals> HoldTotals(std::string_view account_id, absl::Time now,
                                               absl::Time since) override;
  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence,
                                                      int64_t limit) override;

  WorkClaimStore& work_claims() override { return work_claims_; }
  WebhookStore& webhooks() override { return webhooks_; }

  enum class Access { kRead, kWrite };
  // Runs `body` in one transaction on a pooled connection (engines/common/standalone.h):
  // COMMIT after a write (a failed COMMIT is in doubt), ROLLBACK after a read. A session
  // found lost before COMMIT on a reused connection (dropped while idle) is retried on
  // a new one: nothing was committed, so that is safe for writes too. Public for the
  // stores.
  absl::Status RunStandalone(Access access,
                             const std::function<absl::Status(MysqlConnection&)>& body);
  // One write statement run that way: the rows it matched.
  absl::StatusOr<int64_t> ExecuteStandalone(std::string_view sql, const SqlParams& params,
                                            std::string_view what);

 private:
  // One read of holds run that way.
  absl::StatusOr<std::vector<Hold>> QueryHoldsStandalone(std::string_view sql,
                                                         const SqlParams& params,
                                                         std::string_view what);

  std::shared_ptr<MysqlConnectionPool> pool_;
  const absl::Duration pool_acquire_wait_;
  const absl::Duration migration_lock_wait_;
  MysqlWorkClaimStore work_claims_{*this};
  MysqlWebhookStore webhooks_{*this};
};

class MysqlStorageTransaction final : public StorageTransaction {
 public:
  MysqlStorageTransaction(std::shared_ptr<MysqlConnectionPool> pool, PooledConnection connection,
                          BeginOptions options)
      : pool_(std::move(pool)), connection_(std::move(connection)), options_(options) {}
  ~MysqlStorageTransaction() override { Rollback(); }

  // The first claim then locks these accounts in the same CALL (ClaimAndLockAccounts).
  void ExpectAccountLocks(const std::vector<std::string>& sorted_ids) override;
  bool TakesAccountLockHint() const override { return true; }
  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override;
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended) override;
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override;
  absl::StatusOr<std::vector<Transaction>> LoadTransactions(
      const std::vector<std::string>& ids) override;
  absl::StatusOr<bool> IsReversed(std::string_view id) override;
  absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) override;
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id,
                                            absl::Time since) override;
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override;
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override;
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override;
  absl::Status RecordKey(const KeyRecord& record) override;
  absl::Status AppendEvent(const OutboxEvent& event) override;
  absl::Status Commit() override;
  void Rollback() override;
  // Units of work (mysql_caller_sql.cc).
  absl::StatusOr<ledger::SqlRows> RunCallerSql(
      std::string_view sql, const std::vector<ledger::SqlValue>& parameters) override;
  absl::StatusOr<void*> NativeHandle() override;

 private:
  // A key row taken with a locking read: absent, a placeholder, or a committed record.
  struct LockedKeyRow {
    bool exists = false;
    std::optional<KeyRecord> record;  // set when the row is committed
  };

  // Runs one step of the transaction (one StorageTransaction call) on its connection,
  // after the writes buffered before it (so a read sees them). When the very first step
  // finds the session lost on a connection that sat in the pool, the step reruns once on
  // a new connection: nothing had happened yet.
  template <typename Step>
  std::invoke_result_t<Step&, MysqlConnection&> RunStep(Step&& step);
  bool ShouldRetryOnFreshConnection(const absl::Status& status) const;
  void AfterStep(const absl::Status& status);

  // The accounts a claim's CALL locked (ExpectAccountLocks), each with its
  // entries_running_max, or the failure of that lock: what LockAccounts answers.
  struct PrefetchedLocks {
    std::vector<std::string> ids;  // sorted, distinct
    std::vector<std::pair<Account, std::optional<absl::Time>>> rows;
    absl::Status failure;
  };

  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeysOn(
      MysqlConnection& connection, const std::vector<KeyRecord>& intended,
      bool claim_is_first, const std::vector<std::string>& lock_ids);
  // The claim of every key, under the claim's lock wait: all at once when it can (see
  // the definition), else one by one. With `lock_ids` and one key, the first claim is
  // ClaimAndLockAccounts.
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> HoldKeys(
      MysqlConnection& connection, const std::vector<KeyRecord>& intended,
      bool claim_is_first, const std::vector<std::string>& lock_ids);
  // The claim's INSERT of one record and the lock of `lock_ids`, as one CALL of the
  // claim procedure: nullopt when the key was new, its accounts (or their lock's failure)
  // kept for LockAccounts. When the key was taken, the procedure rolled back and locked
  // its row: that row (absent when it went in between), with the transaction it names
  // kept for LoadTransactions; no account is locked then.
  absl::StatusOr<std::optional<LockedKeyRow>> ClaimAndLockAccounts(
      MysqlConnection& connection, const KeyRecord& intended,
      const std::vector<std::string>& lock_ids);
  // Every intended record in multi-row INSERTs (kRowsPerStatementMax a statement): OK
  // when every key was new. AlreadyExists when one was taken.
  absl::Status InsertClaimedRecords(MysqlConnection& connection,
                                    const std::vector<KeyRecord>& intended);
  // The claim of a batch some of whose keys exist (a resent batch, typically): every
  // existing row locked and read in one locking read per kRowsPerStatementMax keys, then
  // the records of the others inserted. AlreadyExists when a key was recorded in
  // between.
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> LockThenInsert(
      MysqlConnection& connection, const std::vector<KeyRecord>& intended);
  // Undoes a claim that failed on a duplicate: its statement rolled back, but InnoDB
  // keeps the locks it took until the transaction ends.
  absl::Status RestartClaim(MysqlConnection& connection);
  absl::StatusOr<std::optional<KeyRecord>> HoldKey(MysqlConnection& connection,
                                                   const KeyRecord& intended,
                                                   bool claim_is_first);
  // Notes what the claim of `identity` locked, for RecordKey, and returns its record:
  // none for the row this transaction's own claim inserted (a unit of work claims a key
  // again), whose item did not commit.
  std::optional<KeyRecord> Claimed(const KeyIdentity& identity, LockedKeyRow row);
  // On a Galera node, before COMMIT: RetryableError unless every key row this
  // transaction's claims inserted and its items commit still holds its record (see the
  // definition: an abort the server did not report).
  absl::Status VerifyClaimsHeld(MysqlConnection& connection) const;
  // After the committing CALL answered in doubt (its session lost, or an error COMMIT
  // may have raised): whether the transaction committed, read from the key row of
  // `commit_witness_` once the transaction has ended (see the definition). OK when it
  // committed; when it did not, the error as the write phase maps it; `in_doubt` itself
  // when that cannot be told.
  absl::Status ResolveInDoubtCommit(const absl::Status& in_doubt);
  // Fail fast: the key's row locked (or found absent) without waiting for a first
  // attempt that holds it: InProgressError then.
  absl::StatusOr<LockedKeyRow> ProbeKeyRowFailFast(MysqlConnection& connection,
                                                   const KeyIdentity& identity);
  absl::StatusOr<LockedKeyRow> LockKeyRow(MysqlConnection& connection,
                                          const KeyIdentity& identity, bool nowait);
  // A row of a locking read of key rows (LEDGER_MYSQL_KEY_RECORD_COLUMNS) into `locked`.
  static absl::Status ReadLockedRow(const SqlRow& row, LockedKeyRow& locked);

  std::shared_ptr<MysqlConnectionPool> pool_;
  std::optional<PooledConnection> connection_;  // empty once the transaction ended
  BeginOptions options_;
  bool any_step_succeeded_ = false;
  // The key rows this transaction's claims hold: the records its claims inserted that
  // RecordKey has not stored yet, and, by KeyIdentity::Encoded(), the committed records
  // it locked with their expires_at (RecordKey may replace one only once it has expired).
  engine_common::ClaimedRowTracker claimed_rows_;
  std::map<std::string, absl::Time> locked_records_;
  // The records RecordKey kept in rows this transaction's claims inserted: what
  // VerifyClaimsHeld reads back on a Galera node (kept there only).
  std::vector<KeyRecord> held_claims_;
  // The first record RecordKey stored: its key row holds it exactly when this
  // transaction committed (transaction ids are never reused).
  std::optional<KeyRecord> commit_witness_;
  // ExpectAccountLocks' ids until the claim takes them, then what its CALL locked until
  // LockAccounts answers from it (dropped with the locks by a ROLLBACK).
  std::vector<std::string> expected_account_ids_;
  std::optional<PrefetchedLocks> prefetched_locks_;
  // The transaction a taken key's row names, read by the claim's CALL: what
  // LoadTransactions answers when asked for it alone (a replay's read).
  std::vector<Transaction> replayed_;
  // The claim's CALL ended the transaction: its key holds a live committed record, so
  // the ledger writes nothing (0011). The connection went back to the pool with it;
  // only the replayed read is left, answered from replayed_.
  bool ended_in_claim_ = false;
  MysqlWriteBatch writes_;
};

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_ENGINE_INTERNAL_H_
