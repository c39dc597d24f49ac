// The SQLite Engine's class, shared by the files that implement it:
// sqlite_engine.cc (open, migrate, the submit transaction), sqlite_reads.cc (assets,
// accounts, history, keys, holds, events), and its two stores,
// sqlite_work_claim_store.cc and sqlite_webhook_store.cc, which run through the
// engine's write runner.
//
// How a submit claims its key: the submit's first statement is BEGIN IMMEDIATE, which
// takes SQLite's single writer lock for the whole transaction; while it is held no
// other transaction can read-then-write anything, so the row of idempotency_keys seen
// right after is final until COMMIT, and the table's primary key (namespace, scope, key)
// guarantees a second commit is impossible. The claim inserts each new key's final
// record (INSERT ... ON CONFLICT DO NOTHING) and reads only a key that holds a row
// already; other connections see nothing before COMMIT, and Commit deletes the inserted
// rows no RecordKey stored. Waiting for the lock is bounded by the
// submit's WaitPolicy (zero: fail fast with InProgressError).
//
// Internal to engines/sqlite. Thread-safe: share one engine across threads; each
// reader borrows its own pooled connection, each writer takes the writer's turn and
// its one connection (sqlite_connection_pool.h).
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_INTERNAL_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_INTERNAL_H_

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "engines/sqlite/sqlite_connection.h"
#include "engines/sqlite/sqlite_connection_pool.h"
#include "engines/sqlite/sqlite_webhook_store.h"
#include "engines/sqlite/sqlite_work_claim_store.h"
#include "ledger/engine.h"

namespace ledger::sqlite_internal {

using ConnectionWork = std::function<absl::Status(Connection&)>;

class SqliteEngine final : public Engine {
 public:
  // `writer_settings` open the writer's connection (the pool's settings).
  SqliteEngine(std::shared_ptr<ConnectionPool> pool, ConnectionSettings writer_settings)
      : pool_(std::move(pool)),
        writer_queue_(std::make_shared<WriterQueue>(writer_settings)),
        busy_timeout_(writer_settings.busy_timeout) {}

  std::string_view name() const override { return "sqlite"; }
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
                                              std::string_view after_id,
                                              int64_t limit) override;
  absl::StatusOr<std::vector<Hold>> ListLapsedHolds(absl::Time now, int64_t limit) override;
  absl::StatusOr<PendingHoldTotals> HoldTotals(std::string_view account_id, absl::Time now,
                                               absl::Time since) override;

  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence,
                                                      int64_t limit) override;

  WorkClaimStore& work_claims() override { return work_claims_; }
  WebhookStore& webhooks() override { return webhooks_; }

  // A short write outside the submit path, on the writer's connection: queue, BEGIN
  // IMMEDIATE with the default busy timeout, `work`, COMMIT (ROLLBACK if `work`
  // failed). Public for the stores.
  absl::Status InWriteTransaction(const ConnectionWork& work);
  // One statement in such a write transaction; `bind` binds its parameters. Returns the
  // rows it changed (matched, for an UPDATE).
  absl::StatusOr<int64_t> WriteStatement(std::string_view sql, std::string_view what,
                                         const std::function<void(Query&)>& bind);

 private:
  // Reads of more than one statement run in one deferred (read) transaction, so they
  // see one snapshot; WAL lets them run beside the writer.
  absl::Status InReadTransaction(const ConnectionWork& work);
  // A single statement in autocommit mode.
  absl::Status WithConnection(const ConnectionWork& work);

  // The readers' connections.
  std::shared_ptr<ConnectionPool> pool_;
  // The writers' turn and connection. Shared with the transactions, which may outlive
  // the engine.
  const std::shared_ptr<WriterQueue> writer_queue_;
  const absl::Duration busy_timeout_;
  SqliteWorkClaimStore work_claims_{*this};
  SqliteWebhookStore webhooks_{*this};
};

// Takes this engine's writer queue, then SQLite's writer lock (BEGIN IMMEDIATE) on the
// writer's connection (the turn's connection()), waiting at most `wait_max` in all
// (zero: one try each). The busy timeout is restored to the default afterwards, so
// later statements are not held to the claim's bound.
absl::StatusOr<WriterTurn> BeginImmediate(WriterQueue& queue, absl::Duration wait_max,
                                          ErrorContext context);

// A unit of work's own statement on `connection`, inside its open transaction
// (sqlite_caller_sql.cc): one statement, `?` placeholders, every row read.
absl::StatusOr<SqlRows> RunCallerSqlOn(Connection& connection, std::string_view sql,
                                       const std::vector<SqlValue>& parameters);

// ROLLBACK, ignoring the result; a connection still in its transaction afterwards is
// marked broken so the pool closes it.
void RollBackQuietly(Connection& connection);

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_INTERNAL_H_
