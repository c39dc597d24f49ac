// The PostgreSQL engine's classes, shared by the files that implement it:
// postgres_engine.cc (open, migrate, the submit transaction), postgres_reads.cc
// (assets, accounts, history, keys, holds, events) and its two stores,
// postgres_work_claim_store.cc and postgres_webhook_store.cc. postgres_migrations.cc
// applies the schema; postgres_connection.cc sets up each session (connection string,
// prepared statements); postgres_statements.cc holds every statement they send.
//
// Internal to engines/postgres. PostgresEngine is thread-safe; a
// PostgresStorageTransaction belongs to the thread that began it.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_INTERNAL_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_INTERNAL_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/common/claimed_row_tracker.h"
#include "engines/common/standalone.h"
#include "engines/postgres/postgres_binary_arrays.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_pipeline.h"
#include "engines/postgres/postgres_remembered_rows.h"
#include "engines/postgres/postgres_webhook_store.h"
#include "engines/postgres/postgres_work_claim_store.h"
#include "engines/postgres/postgres_write_batch.h"
#include "ledger/engine.h"
#include "pqxx/nontransaction"

namespace ledger::postgres_internal {

using engine_common::StatusOf;

// The claim's parameters, in the keys' claim order (ClaimKeys): for one key text
// scalars, for several binary text[] and bigint[] arrays.
struct ClaimParameters {
  ClaimKeys form = ClaimKeys::kMany;
  std::vector<PipelineParameter> keys;     // namespaces, scopes, keys
  std::vector<PipelineParameter> records;  // row mode: keys, fingerprints, transaction ids, times
  std::vector<PipelineParameter> identities;       // advisory mode: the encoded identities
  std::vector<PipelineParameter> transaction_ids;  // row mode: the ids of the claim's own rows
};

// The key rows the claim finds, by (namespace, encoded scope, key): a committed record,
// or none for a 'pending' placeholder (written by no release since the final record
// replaced it at the claim, but still read).
using ClaimedKeyRows =
    std::map<std::tuple<std::string, std::string, std::string>, std::optional<KeyRecord>>;
// The accounts a claim's read locked, with their entries_running_max.
using LockedAccountRows = std::vector<AccountRow>;
// What a claim's read returns (ReadKeysAndLockAccountsStatement): key rows, account rows,
// or both in one statement's rows.
enum class ClaimRows { kKeys, kAccounts, kKeysThenAccounts };

class PostgresEngine;

class PostgresStorageTransaction final : public StorageTransaction {
 public:
  // `engine` (may be null: an in-doubt COMMIT then stays in doubt) reads what a COMMIT
  // whose answer was lost did (PostgresEngine::ResolveInDoubtCommit).
  PostgresStorageTransaction(PooledConnection lease, PostgresClaimMode claim_mode,
                             BeginOptions options, RememberedRows* remembered = nullptr,
                             PostgresEngine* engine = nullptr)
      : lease_(std::move(lease)),
        claim_mode_(claim_mode),
        options_(options),
        remembered_(remembered),
        engine_(engine) {}
  ~PostgresStorageTransaction() override { Rollback(); }

  // Opens the pqxx handle on the leased connection; nothing is sent yet.
  absl::Status Open() {
    return GuardPostgres({.operation = "begin"}, [&]() -> absl::Status {
      work_.emplace((*lease_)->connection());
      return absl::OkStatus();
    });
  }

  void ExpectAccountLocks(const std::vector<std::string>& sorted_ids) override;
  bool TakesAccountLockHint() const override { return true; }
  void ExpectNoWrites() override { ends_with_next_read_ = true; }
  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override;
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended) override;
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override;
  absl::StatusOr<std::vector<Transaction>> LoadTransactions(
      const std::vector<std::string>& ids) override;
  absl::StatusOr<bool> IsReversed(std::string_view id) override;
  absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) override;
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id, absl::Time since) override;
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override;
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override;
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override;
  absl::Status RecordKey(const KeyRecord& record) override;
  absl::Status AppendEvent(const OutboxEvent& event) override;
  absl::Status Commit() override;
  void Rollback() override;
  absl::Status EndWithoutWrites() override;
  // Units of work (postgres_caller_sql.cc).
  absl::StatusOr<SqlRows> RunCallerSql(std::string_view sql,
                                       const std::vector<SqlValue>& parameters) override;
  absl::StatusOr<void*> NativeHandle() override;
  absl::StatusOr<bool> StillUsable() override;

 private:
  enum class Stage { kActive, kFailed, kEnded };

  absl::Status Usable() const;
  // Runs one round trip. A failure leaves the server transaction aborted: every later
  // call fails too until Rollback, and a lost connection is never reused.
  template <typename Body>
  auto RoundTrip(const PostgresErrorContext& context, Body&& body) -> std::invoke_result_t<Body&>;
  void MarkFailed(const absl::Status& status);
  // Before a prepared statement: BEGIN if nothing was sent yet, and the buffered writes
  // if any (so a read in this transaction sees them).
  absl::Status PrepareForStatement();
  absl::Status FlushWrites();
  // The accounts of one lock read (lock_accounts or its prefetch), noted for the writes.
  void NoteLocked(const Account& account, std::optional<absl::Time> running_max);
  absl::Status SendCommit();
  // The buffered writes, and COMMIT when `commit`, in one round trip
  // (postgres_pipeline.h).
  absl::Status SendWrites(bool commit);
  // Commit's failure, once the transaction is rolled back and its session released: an
  // in-doubt `status` whose answer was lost read back on a new session through the
  // witness (ResolveInDoubtCommit), any other as it is.
  absl::Status Resolved(absl::Status status);
  // LoadTransactions after ExpectNoWrites: the read and ROLLBACK in one pipeline.
  absl::StatusOr<std::vector<Transaction>> LoadTransactionsAndEnd(
      const std::vector<std::string>& ids);
  void Release();

  std::optional<PooledConnection> lease_;
  std::optional<pqxx::nontransaction> work_;
  const PostgresClaimMode claim_mode_;
  const BeginOptions options_;
  Stage stage_ = Stage::kActive;
  bool begin_sent_ = false;
  bool ends_with_next_read_ = false;  // ExpectNoWrites
  absl::Status failure_;
  std::map<std::string, LockedAccount> locked_accounts_;  // LockAccounts' reads, by id
  // ExpectAccountLocks' ids, until the claim sends their lock with it.
  std::vector<std::string> expected_account_ids_;
  // What that lock read, for LockAccounts to answer without a round trip: the ids asked
  // for and the rows found (with their running maxima), or the lock's failure, which
  // LockAccounts returns (its phase). None: no prefetch, or it locked nothing.
  struct PrefetchedLocks {
    std::vector<std::string> ids;
    LockedAccountRows rows;
    absl::Status failure;
  };
  // The parts of ClaimKeys (postgres_engine.cc).
  void AddReadQueries(const ClaimParameters& claim, const PostgresErrorContext& claim_context,
                      std::vector<PipelinedQuery>& queries, std::optional<size_t>& lock_query,
                      ClaimedKeyRows& found, PrefetchedLocks& prefetched);
  absl::Status RunClaimPipeline(std::vector<PipelinedQuery>& queries,
                                const PostgresErrorContext& claim_context,
                                std::optional<size_t> lock_query, PrefetchedLocks& prefetched);
  std::vector<std::optional<KeyRecord>> ClaimedRecords(const std::vector<KeyRecord>& intended,
                                                       ClaimedKeyRows& found);
  absl::Status RewriteClaimedRow(const KeyRecord& claimed, const KeyRecord& record);
  std::optional<PrefetchedLocks> prefetched_locks_;
  // Row mode: the records this transaction's claims inserted that RecordKey has not
  // stored yet, as they are in the row; either mode: the keys the claim found no row of.
  engine_common::ClaimedRowTracker claimed_rows_;
  PostgresWriteBatch batch_;
  // A submit or batch decided on remembered rows (postgres_remembered_rows.h): the check
  // that confirms them, not sent yet (it rides ahead of the write, or goes alone before
  // any other statement), and the accounts it covers.
  struct Unconfirmed {
    PipelinedQuery check;
    std::vector<std::string> account_ids;
  };
  // ClaimKeys on remembered rows: whether it answered (no record; the accounts' lock
  // answered from the remembered rows by LockAccounts).
  bool ClaimOnRememberedRows(const std::vector<KeyRecord>& intended);
  // Sends BEGIN and the check alone, when the transaction needs the server before its
  // write. OK when nothing is unconfirmed.
  absl::Status ConfirmRememberedRows();
  // What the check's answer (`status`, the pipeline's) means for the remembered rows.
  absl::Status Checked(absl::Status status, const std::vector<std::string>& account_ids);
  void RememberWritten();
  RememberedRows* const remembered_;  // null: the engine remembers nothing (row mode)
  std::optional<Unconfirmed> unconfirmed_;
  std::string check_sql_;  // the check's text, for its Parse on the session's first use
  std::map<std::string, Account> written_;  // the accounts' final rows, for RememberWritten
  PostgresEngine* const engine_;
  // The first key record this transaction writes: its row, with this transaction id,
  // exists once the transaction committed, and only then.
  std::optional<KeyRecord> commit_witness_;
  // Whether the witness's claim held its key when COMMIT went out: false only while a
  // claim on remembered rows rode in COMMIT's own pipeline and its answer never came.
  bool claim_held_at_commit_ = true;
};

// A unit of work's own statement on `work` ($1, $2, ... placeholders, bound as text or
// NULL; the server infers their types). Throws what libpqxx throws: the caller guards
// the round trip (postgres_caller_sql.cc).
SqlRows RunCallerSqlOn(pqxx::nontransaction& work, std::string_view sql,
                       const std::vector<SqlValue>& parameters);

class PostgresEngine final : public Engine {
 public:
  PostgresEngine(std::shared_ptr<PostgresConnectionPool> pool, PostgresClaimMode claim_mode,
                 absl::Duration pool_acquire_wait, absl::Duration migration_lock_wait,
                 absl::Duration account_lock_wait, std::string schema = "",
                 bool one_round_trip = false)
      : pool_(std::move(pool)), claim_mode_(claim_mode), pool_acquire_wait_(pool_acquire_wait),
        migration_lock_wait_(migration_lock_wait), account_lock_wait_(account_lock_wait),
        schema_(std::move(schema)),
        remembered_rows_(one_round_trip ? std::make_unique<RememberedRows>() : nullptr) {}

  std::string_view name() const override { return "postgres"; }
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
  absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id, int64_t after_version,
                                                 int64_t limit) override;
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

  // What a transaction whose COMMIT answer was lost (`in_doubt`) did, read on a new
  // session: OK when `witness`'s row holds its transaction id (committed), Unavailable
  // when it holds none and the transaction had ended (nothing written), `in_doubt`
  // itself when that cannot be known within account_lock_wait. `claim_held`: whether the
  // transaction held the witness's key; `backend`: the lost session's server process,
  // when known (see the definition).
  absl::Status ResolveInDoubtCommit(const KeyRecord& witness, const absl::Status& in_doubt,
                                    bool claim_held, const std::optional<ServerBackend>& backend);

  // Runs `body(work)` as autocommit statements on a pooled connection. Public for the
  // stores.
  template <typename Body>
  auto WithConnection(const PostgresErrorContext& context, Body&& body)
      -> std::invoke_result_t<Body&, pqxx::nontransaction&>;
  // One prepared statement run that way: the rows it affected.
  template <typename... Params>
  absl::StatusOr<int64_t> ExecuteStandalone(std::string_view what, const char* statement,
                                            const Params&... params);

 private:
  std::shared_ptr<PostgresConnectionPool> pool_;
  const PostgresClaimMode claim_mode_;
  const absl::Duration pool_acquire_wait_;
  const absl::Duration migration_lock_wait_;
  const absl::Duration account_lock_wait_;  // also bounds ResolveInDoubtCommit's wait
  const std::string schema_;  // PostgresOptions::schema; empty: none
  // PostgresOptions::one_round_trip (advisory mode): the rows its commits wrote; null off.
  const std::unique_ptr<RememberedRows> remembered_rows_;
  PostgresWorkClaimStore work_claims_{*this};
  PostgresWebhookStore webhooks_{*this};
};

template <typename Body>
auto PostgresEngine::WithConnection(const PostgresErrorContext& context, Body&& body)
    -> std::invoke_result_t<Body&, pqxx::nontransaction&> {
  // Autocommit: a statement cut off by a lost connection may have committed, so
  // unlike MySQL's explicit transactions there is no retry on a fresh connection (the
  // pool checks an idle session before lending it instead).
  engine_common::StandaloneSteps<PooledConnection> steps;
  steps.abandon = [](PooledConnection& lease, const absl::Status& failure) {
    if (ConnectionLost(failure)) lease.Discard();
  };
  return engine_common::RunStandalone(
      *pool_, steps,
      [&](PostgresSession& session) -> std::invoke_result_t<Body&, pqxx::nontransaction&> {
        return GuardRoundTrip(session, context,
                              [&]() -> std::invoke_result_t<Body&, pqxx::nontransaction&> {
          pqxx::nontransaction work(session.connection());
          return body(work);
        });
      });
}

template <typename... Params>
absl::StatusOr<int64_t> PostgresEngine::ExecuteStandalone(std::string_view what,
                                                          const char* statement,
                                                          const Params&... params) {
  return WithConnection({.operation = what},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
                          return static_cast<int64_t>(
                              work.exec_prepared(statement, params...).affected_rows());
                        });
}

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_INTERNAL_H_
