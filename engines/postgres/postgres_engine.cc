// The PostgreSQL engine: the Engine over a connection pool, and the StorageTransaction
// that runs one submit on one pooled connection.
//
// Round trips of a submit (READ COMMITTED):
//   1. BEGIN + claim + key read: one multi-statement script (postgres_statements.h)
//   2. LockAccounts: SELECT ... FOR UPDATE in the caller's sorted order
//   (reversals: LoadTransaction, IsReversed; velocity limits: LoadDebitUsage)
//   3. the buffered writes: one write_batch statement (postgres_write_batch.h)
//   4. COMMIT, alone, so a lost connection before it is "nothing written" and only a
//      loss during it is "in doubt"
//
// Transactions are driven by hand (BEGIN / COMMIT / ROLLBACK through a
// pqxx::nontransaction) rather than pqxx::work, so BEGIN rides with the claim instead
// of costing a round trip of its own; the connection never reconnects silently
// (postgres_connection_pool.cc), so a COMMIT can never land on a fresh session.
#include "engines/postgres/postgres_engine.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_rows.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_write_batch.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"
#include "pqxx/transaction"

namespace ledger {
namespace {

using postgres_internal::GuardPostgres;
using postgres_internal::PooledConnection;
using postgres_internal::PostgresConnectionPool;
using postgres_internal::PostgresErrorContext;
using postgres_internal::PostgresPhase;
using postgres_internal::PostgresSession;
using postgres_internal::PostgresWriteBatch;
using postgres_internal::UniqueViolationMeans;
using postgres_internal::WriteBatchCounts;
namespace statement = postgres_internal::statement;

constexpr int kServerVersionMin = 110000;  // hashtextextended() arrived in PostgreSQL 11
constexpr char kMigrationLock[] = "hashtextextended('ledger.schema_migrations', 0)";
// Attempts of a single-statement upsert whose conflicting row was committed after the
// statement's snapshot (so the statement neither inserted nor saw it).
constexpr int kUpsertAttemptsMax = 5;

const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

absl::Status SetUpSession(PostgresSession& session) {
  if (session.connection->server_version() < kServerVersionMin) {
    return absl::FailedPreconditionError(
        absl::StrCat("postgres: server version ", session.connection->server_version(),
                     " is too old; the ledger needs PostgreSQL 11 or newer"));
  }
  postgres_internal::DeclareStatements(*session.connection);
  return absl::OkStatus();
}

// ---- the storage transaction ------------------------------------------------------------

class PostgresStorageTransaction final : public StorageTransaction {
 public:
  PostgresStorageTransaction(PooledConnection lease, PostgresClaimMode claim_mode,
                             BeginOptions options)
      : lease_(std::move(lease)), claim_mode_(claim_mode), options_(options) {}
  ~PostgresStorageTransaction() override { Rollback(); }

  // Opens the pqxx handle on the leased connection; nothing is sent yet.
  absl::Status Open() {
    return GuardPostgres({.operation = "begin"}, [&]() -> absl::Status {
      work_.emplace(lease_->connection());
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyIdentity& identity) override;
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override;
  absl::StatusOr<bool> IsReversed(std::string_view id) override;
  absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) override;
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id, absl::Time since) override;
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override;
  absl::Status RecordKey(const KeyRecord& record) override;
  absl::Status AppendEvent(const OutboxEvent& event) override;
  absl::Status Commit() override;
  void Rollback() override;

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
  absl::Status SendCommit();
  void Release();

  std::optional<PooledConnection> lease_;
  std::optional<pqxx::nontransaction> work_;
  const PostgresClaimMode claim_mode_;
  const BeginOptions options_;
  Stage stage_ = Stage::kActive;
  bool begin_sent_ = false;
  absl::Status failure_;
  std::map<std::string, int64_t> locked_versions_;  // LockAccounts' reads, by account id
  std::vector<KeyIdentity> own_placeholders_;       // row mode: inserted by this claim
  PostgresWriteBatch batch_;
};

absl::Status PostgresStorageTransaction::Usable() const {
  switch (stage_) {
    case Stage::kActive:
      return absl::OkStatus();
    case Stage::kFailed:
      return absl::FailedPreconditionError(absl::StrCat(
          "postgres: the transaction failed earlier (", failure_.message(), "); roll it back"));
    case Stage::kEnded:
      break;
  }
  return absl::FailedPreconditionError("postgres: the transaction has already ended");
}

template <typename Body>
auto PostgresStorageTransaction::RoundTrip(const PostgresErrorContext& context, Body&& body)
    -> std::invoke_result_t<Body&> {
  if (absl::Status usable = Usable(); !usable.ok()) return usable;
  auto result = GuardPostgres(context, body);
  if (!result.ok()) MarkFailed(StatusOf(result));
  return result;
}

void PostgresStorageTransaction::MarkFailed(const absl::Status& status) {
  stage_ = Stage::kFailed;
  failure_ = status;
  if (postgres_internal::ConnectionLost(status) || !lease_->connection().is_open()) {
    lease_->MarkBroken();
  }
}

absl::Status PostgresStorageTransaction::PrepareForStatement() {
  LEDGER_RETURN_IF_ERROR(Usable());
  if (!begin_sent_) {
    LEDGER_RETURN_IF_ERROR(RoundTrip({.operation = "begin"}, [&]() -> absl::Status {
      begin_sent_ = true;
      work_->exec("BEGIN ISOLATION LEVEL READ COMMITTED");
      return absl::OkStatus();
    }));
  }
  if (!batch_.empty()) return FlushWrites();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<KeyRecord>> PostgresStorageTransaction::ClaimKey(
    const KeyIdentity& identity) {
  if (!batch_.empty()) LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "claim key", .phase = PostgresPhase::kClaim};
  return RoundTrip(context, [&]() -> absl::StatusOr<std::optional<KeyRecord>> {
    pqxx::connection& connection = lease_->connection();
    postgres_internal::ClaimScriptParts parts{
        .begin = !begin_sent_,
        .claim_lock_timeout =
            connection.quote(postgres_internal::ClaimLockTimeout(options_.wait.wait_max)),
        .default_lock_timeout = connection.quote(lease_->session().lock_timeout_default),
        .encoded_identity = connection.quote(identity.Encoded()),
        .key_namespace = connection.quote(identity.key_namespace),
        .scope = connection.quote(identity.scope.Encoded()),
        .key = connection.quote(identity.key)};
    begin_sent_ = true;  // from here on the session may be inside a transaction
    const pqxx::result rows = work_->exec(claim_mode_ == PostgresClaimMode::kRow
                                              ? postgres_internal::RowClaimScript(parts)
                                              : postgres_internal::AdvisoryClaimScript(parts));
    if (rows.empty()) return std::nullopt;
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record,
                            postgres_internal::KeyRecordFromRow(rows[0]));
    // A visible 'pending' row is this transaction's own placeholder: another one's
    // would still be uncommitted, and the claim waited for it.
    if (!record.has_value()) own_placeholders_.push_back(identity);
    return record;
  });
}

absl::StatusOr<std::optional<Transaction>> PostgresStorageTransaction::LoadTransaction(
    std::string_view id) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return RoundTrip(
      {.operation = "load transaction"}, [&]() -> absl::StatusOr<std::optional<Transaction>> {
        LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> found,
                                postgres_internal::TransactionsFromRows(work_->exec_prepared(
                                    statement::kSelectTransaction, std::string(id))));
        if (found.empty()) return std::nullopt;
        return std::move(found.front());
      });
}

absl::StatusOr<bool> PostgresStorageTransaction::IsReversed(std::string_view id) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return RoundTrip({.operation = "check reversal"}, [&]() -> absl::StatusOr<bool> {
    return work_->exec_prepared(statement::kIsReversed, std::string(id))[0][0].as<bool>();
  });
}

absl::StatusOr<std::vector<Account>> PostgresStorageTransaction::LockAccounts(
    const std::vector<std::string>& sorted_ids) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return RoundTrip({.operation = "lock accounts"}, [&]() -> absl::StatusOr<std::vector<Account>> {
    const pqxx::result rows = work_->exec_prepared(statement::kLockAccounts,
                                                   postgres_internal::TextArrayLiteral(sorted_ids));
    std::vector<Account> accounts;
    for (const pqxx::row& row : rows) {
      accounts.push_back(postgres_internal::AccountFromRow(row));
      locked_versions_[accounts.back().id] = accounts.back().version;
    }
    return accounts;
  });
}

absl::StatusOr<DebitUsage> PostgresStorageTransaction::LoadDebitUsage(std::string_view account_id,
                                                                      absl::Time since) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return RoundTrip({.operation = "load debit usage"}, [&]() -> absl::StatusOr<DebitUsage> {
    const pqxx::row row = work_->exec_prepared1(statement::kDebitUsage, std::string(account_id),
                                                postgres_internal::Micros(since));
    return DebitUsage{row[0].as<int64_t>(), row[1].as<int64_t>()};
  });
}

absl::Status PostgresStorageTransaction::WriteTransaction(
    const Transaction& transaction, const std::vector<Account>& updated_accounts) {
  LEDGER_RETURN_IF_ERROR(Usable());
  return batch_.AddTransaction(transaction, updated_accounts, locked_versions_);
}

absl::Status PostgresStorageTransaction::RecordKey(const KeyRecord& record) {
  LEDGER_RETURN_IF_ERROR(Usable());
  batch_.AddKeyRecord(record);
  return absl::OkStatus();
}

absl::Status PostgresStorageTransaction::AppendEvent(const OutboxEvent& event) {
  LEDGER_RETURN_IF_ERROR(Usable());
  batch_.AddEvent(event);
  return absl::OkStatus();
}

// Unique violations here (a transaction id or reversal_of taken) are reported as
// RetryableError: the inputs were checked under the account locks, so a violation
// means a concurrent writer won a race; the retry re-checks and rejects or replays.
absl::Status PostgresStorageTransaction::FlushWrites() {
  const PostgresErrorContext context{.operation = "write",
                                     .unique_violation = UniqueViolationMeans::kRetryable};
  return RoundTrip(context, [&]() -> absl::Status {
    const std::vector<std::string> parameters = batch_.Parameters();
    const pqxx::row row = work_->exec_prepared1(statement::kWriteBatch,
                                                pqxx::prepare::make_dynamic_params(parameters));
    const WriteBatchCounts applied{row[0].as<int64_t>(), row[1].as<int64_t>(),
                                   row[2].as<int64_t>(), row[3].as<int64_t>(),
                                   row[4].as<int64_t>(), row[5].as<int64_t>()};
    LEDGER_RETURN_IF_ERROR(batch_.CheckApplied(applied));
    batch_.Clear();
    return absl::OkStatus();
  });
}

absl::Status PostgresStorageTransaction::SendCommit() {
  const PostgresErrorContext context{.operation = "commit", .phase = PostgresPhase::kCommit};
  // The server answers a COMMIT of a failed transaction with ROLLBACK and no error,
  // and libpqxx 6 does not expose the command tag: Usable() guarantees that no
  // statement of this transaction failed before we get here.
  return RoundTrip(context, [&]() -> absl::Status {
    work_->exec("COMMIT");
    return absl::OkStatus();
  });
}

absl::Status PostgresStorageTransaction::Commit() {
  LEDGER_RETURN_IF_ERROR(Usable());
  for (const KeyIdentity& identity : own_placeholders_) batch_.DropPlaceholder(identity);
  if (!batch_.empty()) {
    if (absl::Status flushed = PrepareForStatement(); !flushed.ok()) {
      Rollback();
      return flushed;
    }
  }
  if (begin_sent_) {
    if (absl::Status committed = SendCommit(); !committed.ok()) {
      Rollback();  // no-op on a lost connection: the lease is then discarded
      return committed;
    }
  }
  stage_ = Stage::kEnded;
  Release();
  return absl::OkStatus();
}

void PostgresStorageTransaction::Rollback() {
  if (stage_ == Stage::kEnded) return;
  if (begin_sent_ && lease_.has_value() && !lease_->broken()) {
    absl::Status rolled_back = GuardPostgres({.operation = "rollback"}, [&]() -> absl::Status {
      work_->exec("ROLLBACK");
      return absl::OkStatus();
    });
    // A session in an unknown state must not serve the next transaction.
    if (!rolled_back.ok()) lease_->MarkBroken();
  }
  stage_ = Stage::kEnded;
  Release();
}

void PostgresStorageTransaction::Release() {
  batch_.Clear();
  work_.reset();  // the pqxx handle goes before its connection returns to the pool
  lease_.reset();
}

// ---- the engine ---------------------------------------------------------------------------

class PostgresEngine final : public Engine {
 public:
  PostgresEngine(std::shared_ptr<PostgresConnectionPool> pool, PostgresClaimMode claim_mode)
      : pool_(std::move(pool)), claim_mode_(claim_mode) {}

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
  absl::Status SetAccountClosed(std::string_view id, bool closed) override;
  absl::StatusOr<std::optional<Transaction>> GetTransaction(std::string_view id) override;
  absl::StatusOr<std::vector<Transaction>> ListTransactions(std::string_view after_id,
                                                            int64_t limit) override;
  absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id, int64_t after_version,
                                                 int64_t limit) override;
  absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(const std::optional<KeyIdentity>& after,
                                                        int64_t limit) override;
  absl::StatusOr<int64_t> PruneExpiredKeys(absl::Time now, int64_t limit) override;
  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence,
                                                      int64_t limit) override;

  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override;
  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner, int64_t expected_attempt,
                                        const WorkClaim& replacement) override;
  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override;
  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) override;
  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) override;

  absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                  const std::string& event_id,
                                                  absl::Time received_at) override;
  absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                          const std::string& event_id) override;
  absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) override;

 private:
  // Runs `body(work)` as autocommit statements on a pooled connection.
  template <typename Body>
  auto WithConnection(const PostgresErrorContext& context, Body&& body)
      -> std::invoke_result_t<Body&, pqxx::nontransaction&>;
  absl::Status ApplyMigrations(pqxx::connection& connection);

  std::shared_ptr<PostgresConnectionPool> pool_;
  const PostgresClaimMode claim_mode_;
};

template <typename Body>
auto PostgresEngine::WithConnection(const PostgresErrorContext& context, Body&& body)
    -> std::invoke_result_t<Body&, pqxx::nontransaction&> {
  absl::StatusOr<PooledConnection> lease = pool_->Acquire();
  if (!lease.ok()) return lease.status();
  auto result = GuardPostgres(context, [&]() -> std::invoke_result_t<Body&, pqxx::nontransaction&> {
    pqxx::nontransaction work(lease->connection());
    return body(work);
  });
  if (!result.ok() && postgres_internal::ConnectionLost(StatusOf(result))) lease->MarkBroken();
  return result;
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> PostgresEngine::Begin(
    const BeginOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(PooledConnection lease, pool_->Acquire());
  auto transaction =
      std::make_unique<PostgresStorageTransaction>(std::move(lease), claim_mode_, options);
  LEDGER_RETURN_IF_ERROR(transaction->Open());
  return transaction;
}

// Two processes may migrate at once (several app instances starting): a session
// advisory lock serializes them, and each migration commits with its version row.
absl::Status PostgresEngine::Migrate() {
  LEDGER_ASSIGN_OR_RETURN(PooledConnection lease, pool_->Acquire());
  absl::Status migrated = GuardPostgres({.operation = "migrate"}, [&]() -> absl::Status {
    return ApplyMigrations(lease.connection());
  });
  // Closing the session releases its advisory lock, whatever state it was left in.
  if (!migrated.ok()) lease.MarkBroken();
  return migrated;
}

absl::Status PostgresEngine::ApplyMigrations(pqxx::connection& connection) {
  std::set<int> applied;
  {
    pqxx::nontransaction work(connection);
    work.exec(absl::StrCat("SELECT pg_advisory_lock(", kMigrationLock, ")"));
    work.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    for (const pqxx::row& row : work.exec("SELECT version FROM schema_migrations")) {
      applied.insert(row[0].as<int>());
    }
  }
  LEDGER_RETURN_IF_ERROR(ApplyPendingMigrations(
      PostgresMigrations(), applied, [&](const Migration& migration) -> absl::Status {
        return GuardPostgres({.operation = "apply migration"}, [&]() -> absl::Status {
          pqxx::work work(connection);  // PostgreSQL DDL is transactional
          work.exec(std::string(migration.sql));
          work.exec_params(
              "INSERT INTO schema_migrations (version, name, applied_at) VALUES "
              "($1, $2, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)",
              migration.version, std::string(migration.name));
          work.commit();
          return absl::OkStatus();
        });
      }));
  pqxx::nontransaction work(connection);
  work.exec(absl::StrCat("SELECT pg_advisory_unlock(", kMigrationLock, ")"));
  return absl::OkStatus();
}

absl::Status PostgresEngine::PutAsset(const Asset& asset) {
  return WithConnection(
      {.operation = "put asset"}, [&](pqxx::nontransaction& work) -> absl::Status {
        for (int attempt = 0; attempt < kUpsertAttemptsMax; ++attempt) {
          const pqxx::result rows =
              work.exec_prepared(statement::kPutAsset, asset.code, asset.scale);
          if (rows.empty()) continue;  // a concurrent insert committed after our snapshot
          const int stored_scale = rows[0][0].as<int>();
          if (stored_scale == asset.scale) return absl::OkStatus();
          return absl::AlreadyExistsError(
              absl::StrCat("asset ", asset.code, " exists with scale ", stored_scale));
        }
        return absl::AbortedError(absl::StrCat("postgres: asset ", asset.code, " kept changing"));
      });
}

absl::StatusOr<std::optional<Asset>> PostgresEngine::GetAsset(std::string_view code) {
  return WithConnection({.operation = "get asset"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Asset>> {
                          const pqxx::result rows =
                              work.exec_prepared(statement::kSelectAsset, std::string(code));
                          if (rows.empty()) return std::nullopt;
                          return postgres_internal::AssetFromRow(rows[0]);
                        });
}

absl::StatusOr<std::vector<Asset>> PostgresEngine::ListAssets() {
  return WithConnection({.operation = "list assets"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Asset>> {
                          std::vector<Asset> assets;
                          for (const pqxx::row& row : work.exec_prepared(statement::kListAssets)) {
                            assets.push_back(postgres_internal::AssetFromRow(row));
                          }
                          return assets;
                        });
}

absl::Status PostgresEngine::InsertAccount(const Account& account) {
  // 23505: the id is taken (AlreadyExists); 23503: the asset is unknown (FailedPrecondition).
  return WithConnection({.operation = "insert account"},
                        [&](pqxx::nontransaction& work) -> absl::Status {
                          work.exec_prepared(statement::kInsertAccount, account.id, account.asset,
                                             account.allow_negative, account.overdraft_limit,
                                             account.closed, account.balance, account.version,
                                             postgres_internal::Micros(account.created_at));
                          return absl::OkStatus();
                        });
}

absl::StatusOr<std::optional<Account>> PostgresEngine::GetAccount(std::string_view id) {
  return WithConnection({.operation = "get account"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Account>> {
                          const pqxx::result rows =
                              work.exec_prepared(statement::kSelectAccount, std::string(id));
                          if (rows.empty()) return std::nullopt;
                          return postgres_internal::AccountFromRow(rows[0]);
                        });
}

absl::StatusOr<std::vector<Account>> PostgresEngine::ListAccounts(std::string_view after_id,
                                                                  int64_t limit) {
  if (limit <= 0) return std::vector<Account>();
  return WithConnection({.operation = "list accounts"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Account>> {
                          std::vector<Account> accounts;
                          for (const pqxx::row& row : work.exec_prepared(
                                   statement::kListAccounts, std::string(after_id), limit)) {
                            accounts.push_back(postgres_internal::AccountFromRow(row));
                          }
                          return accounts;
                        });
}

absl::Status PostgresEngine::SetAccountClosed(std::string_view id, bool closed) {
  return WithConnection(
      {.operation = "set account closed"}, [&](pqxx::nontransaction& work) -> absl::Status {
        const pqxx::result result =
            work.exec_prepared(statement::kSetAccountClosed, std::string(id), closed);
        if (result.affected_rows() == 0) {
          return absl::NotFoundError(absl::StrCat("account ", View(id), " does not exist"));
        }
        return absl::OkStatus();
      });
}

absl::StatusOr<std::optional<Transaction>> PostgresEngine::GetTransaction(std::string_view id) {
  return WithConnection(
      {.operation = "get transaction"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::optional<Transaction>> {
        LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> found,
                                postgres_internal::TransactionsFromRows(work.exec_prepared(
                                    statement::kSelectTransaction, std::string(id))));
        if (found.empty()) return std::nullopt;
        return std::move(found.front());
      });
}

absl::StatusOr<std::vector<Transaction>> PostgresEngine::ListTransactions(std::string_view after_id,
                                                                          int64_t limit) {
  if (limit <= 0) return std::vector<Transaction>();
  return WithConnection(
      {.operation = "list transactions"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<Transaction>> {
        return postgres_internal::TransactionsFromRows(
            work.exec_prepared(statement::kListTransactions, std::string(after_id), limit));
      });
}

absl::StatusOr<std::vector<HistoryEntry>> PostgresEngine::ListEntries(
    std::string_view account_id, int64_t after_version, int64_t limit) {
  if (limit <= 0) return std::vector<HistoryEntry>();
  return WithConnection(
      {.operation = "list entries"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<HistoryEntry>> {
        std::vector<HistoryEntry> entries;
        for (const pqxx::row& row : work.exec_prepared(
                 statement::kListEntries, std::string(account_id), after_version, limit)) {
          entries.push_back({postgres_internal::EntryFromRow(row, 0), row[5].as<std::string>(),
                             postgres_internal::TimeFromMicros(row[6].as<int64_t>())});
        }
        return entries;
      });
}

absl::StatusOr<std::vector<KeyRecord>> PostgresEngine::ListKeyRecords(
    const std::optional<KeyIdentity>& after, int64_t limit) {
  if (limit <= 0) return std::vector<KeyRecord>();
  return WithConnection({.operation = "list key records"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<KeyRecord>> {
                          const pqxx::result rows =
                              after.has_value()
                                  ? work.exec_prepared(statement::kListKeyRecordsAfter,
                                                       after->key_namespace, after->scope.Encoded(),
                                                       after->key, limit)
                                  : work.exec_prepared(statement::kListKeyRecordsFirst, limit);
                          std::vector<KeyRecord> records;
                          for (const pqxx::row& row : rows) {
                            LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record,
                                                    postgres_internal::KeyRecordFromRow(row));
                            if (record.has_value()) records.push_back(*std::move(record));
                          }
                          return records;
                        });
}

absl::StatusOr<int64_t> PostgresEngine::PruneExpiredKeys(absl::Time now, int64_t limit) {
  if (limit <= 0) return 0;
  return WithConnection(
      {.operation = "prune expired keys"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kPruneExpiredKeys, postgres_internal::Micros(now), limit)
                .affected_rows());
      });
}

absl::StatusOr<std::vector<OutboxEvent>> PostgresEngine::ListEvents(int64_t after_sequence,
                                                                    int64_t limit) {
  if (limit <= 0) return std::vector<OutboxEvent>();
  return WithConnection(
      {.operation = "list events"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<std::vector<OutboxEvent>> {
        std::vector<OutboxEvent> events;
        for (const pqxx::row& row :
             work.exec_prepared(statement::kListEvents, after_sequence, limit)) {
          events.push_back(postgres_internal::EventFromRow(row));
        }
        return events;
      });
}

absl::StatusOr<WorkClaim> PostgresEngine::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  return WithConnection(
      {.operation = "insert work claim"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<WorkClaim> {
        for (int attempt = 0; attempt < kUpsertAttemptsMax; ++attempt) {
          const pqxx::result rows = work.exec_prepared(
              statement::kInsertWorkClaim, fresh.identity.key_namespace,
              fresh.identity.scope.Encoded(), fresh.identity.key, fresh.fingerprint,
              std::string(WorkStateName(fresh.state)), fresh.owner, fresh.attempt,
              postgres_internal::Micros(fresh.lease_expires_at), fresh.result,
              postgres_internal::Micros(fresh.created_at),
              postgres_internal::Micros(fresh.updated_at),
              postgres_internal::Micros(fresh.expires_at));
          // Empty: a concurrent insert committed after this statement's snapshot.
          if (!rows.empty()) return postgres_internal::WorkClaimFromRow(rows[0]);
        }
        return absl::AbortedError("postgres: the work claim kept changing; try again");
      });
}

absl::StatusOr<bool> PostgresEngine::ReplaceWorkClaim(const KeyIdentity& identity,
                                                      const std::string& expected_owner,
                                                      int64_t expected_attempt,
                                                      const WorkClaim& replacement) {
  if (!(replacement.identity == identity)) {
    return absl::InvalidArgumentError("postgres: a work claim replacement must keep its identity");
  }
  return WithConnection(
      {.operation = "replace work claim"}, [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
        const pqxx::result result = work.exec_prepared(
            statement::kReplaceWorkClaim, identity.key_namespace, identity.scope.Encoded(),
            identity.key, expected_owner, expected_attempt, replacement.fingerprint,
            std::string(WorkStateName(replacement.state)), replacement.owner, replacement.attempt,
            postgres_internal::Micros(replacement.lease_expires_at), replacement.result,
            postgres_internal::Micros(replacement.created_at),
            postgres_internal::Micros(replacement.updated_at),
            postgres_internal::Micros(replacement.expires_at));
        return result.affected_rows() > 0;
      });
}

absl::StatusOr<bool> PostgresEngine::DeleteWorkClaim(const KeyIdentity& identity,
                                                     const std::string& owner) {
  return WithConnection(
      {.operation = "delete work claim"}, [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
        return work.exec_prepared(statement::kDeleteWorkClaim, identity.key_namespace,
                                  identity.scope.Encoded(), identity.key, owner)
                   .affected_rows() > 0;
      });
}

absl::StatusOr<int64_t> PostgresEngine::MarkAbandonedWorkClaims(absl::Time now) {
  return WithConnection(
      {.operation = "mark abandoned work claims"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kMarkAbandonedWorkClaims, postgres_internal::Micros(now))
                .affected_rows());
      });
}

absl::StatusOr<int64_t> PostgresEngine::PruneWorkClaims(absl::Time now) {
  return WithConnection(
      {.operation = "prune work claims"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kPruneWorkClaims, postgres_internal::Micros(now))
                .affected_rows());
      });
}

absl::StatusOr<bool> PostgresEngine::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                const std::string& event_id,
                                                                absl::Time received_at) {
  return WithConnection({.operation = "insert webhook event"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
                          return work.exec_prepared(statement::kInsertWebhookEvent, provider,
                                                    event_id,
                                                    postgres_internal::Micros(received_at))
                                     .affected_rows() > 0;
                        });
}

absl::StatusOr<bool> PostgresEngine::DeleteWebhookEvent(const std::string& provider,
                                                        const std::string& event_id) {
  return WithConnection({.operation = "delete webhook event"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
                          return work.exec_prepared(statement::kDeleteWebhookEvent, provider,
                                                    event_id)
                                     .affected_rows() > 0;
                        });
}

absl::StatusOr<int64_t> PostgresEngine::PruneWebhookEvents(absl::Time before) {
  return WithConnection(
      {.operation = "prune webhook events"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kPruneWebhookEvents, postgres_internal::Micros(before))
                .affected_rows());
      });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> OpenPostgresEngine(const PostgresOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(
      postgres_internal::ParsedPostgresConnection parsed,
      postgres_internal::ParsePostgresConnection(options.connection, options.claim_mode));
  LEDGER_ASSIGN_OR_RETURN(
      std::shared_ptr<PostgresConnectionPool> pool,
      PostgresConnectionPool::Create(parsed.connection, options.pool_size, SetUpSession));
  auto engine = std::make_unique<PostgresEngine>(std::move(pool), parsed.claim_mode);
  if (options.migrate) LEDGER_RETURN_IF_ERROR(engine->Migrate());
  return engine;
}

}  // namespace ledger
