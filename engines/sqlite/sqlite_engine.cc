// The SQLite engine: opening, migrations, the submit transaction, and the write and
// read helpers the other files of the engine use. See sqlite_engine_internal.h for
// how the claim works.
#include "engines/sqlite/sqlite_engine.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/check.h"
#include "engines/common/claimed_row_tracker.h"
#include "engines/common/database_url.h"
#include "engines/common/entry_running_max.h"
#include "engines/common/error_table.h"
#include "engines/common/hold_writes.h"
#include "engines/common/standalone.h"
#include "engines/sqlite/sqlite_engine_internal.h"
#include "engines/sqlite/sqlite_errors.h"
#include "engines/sqlite/sqlite_migrations.h"
#include "engines/sqlite/sqlite_rows.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger {
namespace {

// The ranges of SqliteOptions::cache_size_kib and mmap_size_mib (sqlite_engine.h).
constexpr int64_t kMinCacheSizeKib = 64;
constexpr int64_t kMaxCacheSizeKib = int64_t{4} * 1024 * 1024;
constexpr int64_t kMaxMmapSizeMib = 64 * 1024;

}  // namespace

namespace sqlite_internal {
namespace {

// The version an account had before this transaction's entries: one below its first
// entry's, or unchanged when the transaction posts nothing to it.
int64_t VersionBefore(const Transaction& transaction, const Account& account) {
  int64_t first_entry_version = 0;
  for (const Entry& entry : transaction.entries) {
    if (entry.account_id != account.id) continue;
    if (first_entry_version == 0 || entry.account_version < first_entry_version) {
      first_entry_version = entry.account_version;
    }
  }
  return first_entry_version == 0 ? account.version : first_entry_version - 1;
}

absl::Status RequireSortedDistinct(const std::vector<std::string>& ids) {
  for (size_t i = 1; i < ids.size(); ++i) {
    if (!(ids[i - 1] < ids[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("LockAccounts needs sorted, distinct ids; \"", ids[i - 1],
                       "\" is followed by \"", ids[i], "\""));
    }
  }
  return absl::OkStatus();
}

// One submit attempt: a BEGIN IMMEDIATE transaction on the writer's connection. The
// writer's turn and lock are taken by the first statement (ClaimKey, in the pipeline's
// order), so that the wait and its in-progress error happen where the contract puts
// them; until then the attempt holds nothing.
class SqliteStorageTransaction final : public StorageTransaction {
 public:
  SqliteStorageTransaction(std::shared_ptr<WriterQueue> writer_queue, BeginOptions options)
      : writer_queue_(std::move(writer_queue)), options_(std::move(options)) {}
  ~SqliteStorageTransaction() override { Rollback(); }

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override;
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override;
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
  absl::StatusOr<SqlRows> RunCallerSql(std::string_view sql,
                                       const std::vector<SqlValue>& parameters) override {
    LEDGER_RETURN_IF_ERROR(Ready());
    return RunCallerSqlOn(connection(), sql, parameters);
  }
  absl::StatusOr<void*> NativeHandle() override {
    LEDGER_RETURN_IF_ERROR(Ready());
    return static_cast<void*>(connection().native());
  }
  absl::StatusOr<bool> StillUsable() override {
    return state_ != State::kOpen || connection().InTransaction();
  }

 private:
  enum class State { kNotBegun, kOpen, kFinished };

  // Begins on first use; afterwards checks the transaction is still open. SQLite
  // rolls back by itself after some errors, and the statements that followed would
  // otherwise run in autocommit mode, outside the claim.
  absl::Status Ready();
  absl::Status UpdateAccount(const Transaction& transaction, const Account& account);
  // Locks (reads) the accounts of `transaction`'s entries that LockAccounts did not: a
  // caller of the storage contract that skipped it.
  absl::Status NoteUnlockedAccounts(const Transaction& transaction);
  // The row the claim inserted holding `claimed`, rewritten to hold `record`: another
  // record than the one the claim was told of commits the key (rare).
  absl::Status RewriteClaimedRow(const KeyRecord& claimed, const KeyRecord& record);
  // Deletes the rows the claim inserted that no RecordKey stored (rejected items).
  absl::Status DropUnrecordedClaims();
  // Ends the transaction's hold: leaves the writer's turn (and its connection).
  void Finish();
  // The writer's connection; only while the turn is held (state kOpen).
  Connection& connection() const { return turn_.connection(); }

  std::shared_ptr<WriterQueue> writer_queue_;
  WriterTurn turn_;
  const BeginOptions options_;
  State state_ = State::kNotBegun;
  // Each locked account's latest entry running maximum, continued along the writes.
  engine_common::EntryRunningMaxima running_maxima_;
  // The rows this transaction's claims inserted that no RecordKey has stored yet, each
  // as inserted.
  engine_common::ClaimedRowTracker claimed_rows_;
};

absl::Status SqliteStorageTransaction::Ready() {
  switch (state_) {
    case State::kFinished:
      return absl::FailedPreconditionError("sqlite: the transaction is already finished");
    case State::kOpen:
      if (!connection().InTransaction()) return TransactionLostStatus("submit transaction");
      return absl::OkStatus();
    case State::kNotBegun:
      break;
  }
  LEDGER_ASSIGN_OR_RETURN(
      turn_, BeginImmediate(*writer_queue_, options_.wait.wait_max, ErrorContext::kClaim));
  state_ = State::kOpen;
  return absl::OkStatus();
}

// Under the writer lock nothing but this transaction can change a key's row until
// COMMIT, so the claim needs no read when the key is new: it inserts the record the key
// will hold (the final one, as MySQL's claim does), and reads only a key that holds a
// row already. The inserted row is invisible to every other connection until COMMIT
// (WAL snapshots), and Commit deletes it if no RecordKey stored it. A batch's keys
// take the default ClaimKeys, one statement each: a multi-row INSERT costs more
// (kClaimKey says why).
absl::StatusOr<std::optional<KeyRecord>> SqliteStorageTransaction::ClaimKey(
    const KeyRecord& intended) {
  LEDGER_RETURN_IF_ERROR(Ready());
  const KeyIdentity& identity = intended.identity;
  {
    LEDGER_ASSIGN_OR_RETURN(Query insert, connection().Prepare(statement::kClaimKey, "claim key",
                                                               ErrorContext::kTransaction));
    BindKeyRecord(insert, intended);
    LEDGER_RETURN_IF_ERROR(insert.Run());
  }
  if (connection().ChangedRows() == 1) {  // a new key: the usual case
    claimed_rows_.Claimed(intended);
    return std::nullopt;
  }
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection().Prepare(statement::kSelectCommittedKey,
                                        "select key record", ErrorContext::kTransaction));
  BindIdentity(query, identity);
  LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) {
    return absl::InternalError(absl::StrCat("sqlite: key ", identity.Encoded(),
                                            " holds a row that is not a committed record"));
  }
  LEDGER_ASSIGN_OR_RETURN(KeyRecord record, ReadKeyRecord(query));
  LEDGER_CHECK(record.identity == identity);
  // An earlier claim of this transaction (a unit of work's earlier submit whose item was
  // rejected) inserted it and no RecordKey stored it: the key is still unused.
  if (claimed_rows_.IsClaimedRow(record)) return std::nullopt;
  return record;  // a committed record, live or expired
}

absl::StatusOr<std::optional<Transaction>> SqliteStorageTransaction::LoadTransaction(
    std::string_view id) {
  LEDGER_RETURN_IF_ERROR(Ready());
  return SelectTransaction(connection(), id, ErrorContext::kTransaction);
}

absl::StatusOr<bool> SqliteStorageTransaction::IsReversed(std::string_view id) {
  LEDGER_RETURN_IF_ERROR(Ready());
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection().Prepare(statement::kIsReversed,
                                        "select reversal", ErrorContext::kTransaction));
  query.BindText(id);
  return query.Step();
}

absl::StatusOr<std::vector<Account>> SqliteStorageTransaction::LockAccounts(
    const std::vector<std::string>& sorted_ids) {
  LEDGER_RETURN_IF_ERROR(RequireSortedDistinct(sorted_ids));
  LEDGER_RETURN_IF_ERROR(Ready());
  // SQLite has no row locks and needs none: the writer lock taken by BEGIN IMMEDIATE
  // already excludes every other writer until COMMIT. Reading in the given order
  // keeps the result's order the caller's.
  // The same read notes each account's entries_running_max for the entries it will write.
  std::vector<Account> accounts;
  accounts.reserve(sorted_ids.size());
  for (const std::string& id : sorted_ids) {
    LEDGER_ASSIGN_OR_RETURN(Query query,
                            connection().Prepare(statement::kLockAccount, "lock account",
                                                 ErrorContext::kTransaction));
    query.BindText(id);
    LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
    if (!found) continue;
    accounts.push_back(ReadAccount(query));
    running_maxima_.NoteLocked(
        id, query.IsNull(statement::kLockAccountRunningMaxColumn)
                ? std::nullopt
                : std::optional<absl::Time>(query.Time(statement::kLockAccountRunningMaxColumn)));
  }
  return accounts;
}

absl::StatusOr<DebitUsage> SqliteStorageTransaction::LoadDebitUsage(std::string_view account_id,
                                                                    absl::Time since) {
  LEDGER_RETURN_IF_ERROR(Ready());
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection().Prepare(statement::kSelectDebits,
                                        "select debits", ErrorContext::kTransaction));
  query.BindText(account_id).BindTime(since);
  // Summed here, not with SQL SUM(), which fails on overflow instead of saturating.
  DebitUsage usage;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(bool has_row, query.Step());
    if (!has_row) return usage;
    ++usage.count;
    const Amount debit = query.Int(0);
    const Amount magnitude =
        debit == std::numeric_limits<Amount>::min() ? std::numeric_limits<Amount>::max() : -debit;
    usage.amount = CheckedAdd(usage.amount, magnitude).value_or(std::numeric_limits<Amount>::max());
  }
}

absl::StatusOr<std::vector<Hold>> SqliteStorageTransaction::LoadHolds(
    const std::vector<std::string>& ids) {
  LEDGER_RETURN_IF_ERROR(Ready());
  return SelectHolds(connection(), ids, ErrorContext::kTransaction);
}

absl::StatusOr<PendingHoldTotals> SqliteStorageTransaction::LoadHoldTotals(
    std::string_view account_id, absl::Time now, absl::Time since) {
  LEDGER_RETURN_IF_ERROR(Ready());
  return SelectHoldTotals(connection(), account_id, now, since, ErrorContext::kTransaction);
}

absl::Status SqliteStorageTransaction::WriteTransaction(
    const Transaction& transaction, const std::vector<Account>& updated_accounts) {
  LEDGER_RETURN_IF_ERROR(engine_common::CheckHoldFields("sqlite", transaction));
  LEDGER_RETURN_IF_ERROR(Ready());
  // A taken id, reversal_of or hold_id is retryable (the error table): writers are
  // serialized, so it cannot happen after the pipeline's checks under this same lock,
  // unless a writer outside this engine (another process) got in first.
  LEDGER_RETURN_IF_ERROR(NoteUnlockedAccounts(transaction));
  LEDGER_ASSIGN_OR_RETURN(const std::vector<absl::Time> running_maxima,
                          running_maxima_.Continue(transaction));
  LEDGER_RETURN_IF_ERROR(InsertTransactionRows(connection(), transaction, running_maxima));
  for (const Account& account : updated_accounts) {
    LEDGER_RETURN_IF_ERROR(UpdateAccount(transaction, account));
  }
  return absl::OkStatus();
}

absl::Status SqliteStorageTransaction::NoteUnlockedAccounts(const Transaction& transaction) {
  const std::vector<std::string> unnoted = running_maxima_.Unnoted(transaction);
  if (unnoted.empty()) return absl::OkStatus();
  return LockAccounts(unnoted).status();
}

absl::Status SqliteStorageTransaction::UpdateAccount(const Transaction& transaction,
                                                     const Account& account) {
  const int64_t version_before = VersionBefore(transaction, account);
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection().Prepare(statement::kUpdateAccount,
                           "update account balance", ErrorContext::kWrite));
  query.BindInt(account.balance)
      .BindInt(account.version)
      .BindInt(account.pending_debits)
      .BindInt(account.pending_credits)
      .BindOptionalTime(running_maxima_.Latest(account.id))
      .BindText(account.id)
      .BindInt(version_before);
  LEDGER_RETURN_IF_ERROR(query.Run());
  if (connection().ChangedRows() != 1) {
    // The version guard: the row is not the one LockAccounts returned. Cannot happen
    // while the writer lock is held; if it does, the attempt starts over.
    return RetryableError(absl::StrCat("sqlite: account \"", account.id,
                                       "\" is no longer at version ", version_before));
  }
  return absl::OkStatus();
}

absl::Status SqliteStorageTransaction::RecordKey(const KeyRecord& record) {
  LEDGER_RETURN_IF_ERROR(Ready());
  // The row this transaction's claim inserted holds the record already, unless another
  // record than the one the claim was told of commits the key.
  using RecordKind = engine_common::ClaimedRowTracker::RecordKind;
  const auto [kind, claimed] = claimed_rows_.Record(record);
  if (kind == RecordKind::kNothingToSend) return absl::OkStatus();
  if (kind == RecordKind::kRewrite) return RewriteClaimedRow(*claimed, record);
  // Anything else (an expired record the claim read, a key never claimed) goes through
  // the guarded upsert.
  // Replaces only an expired record (or a placeholder): a live committed record under
  // the same identity means the claim was bypassed, and overwriting it would lose it.
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection().Prepare(
          statement::kRecordKey,
          "record key", ErrorContext::kWrite));
  BindKeyRecord(query, record);
  LEDGER_RETURN_IF_ERROR(query.Run());
  if (connection().ChangedRows() != 1) {
    // A unique violation during the write, whatever its form: the shared table's answer.
    return engine_common::StatusForError(
        engine_common::ErrorClass::kUniqueViolation, engine_common::ErrorPhase::kWrite,
        absl::StrCat("sqlite: key ", record.identity.Encoded(),
                     " already holds a live committed record"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStorageTransaction::RewriteClaimedRow(const KeyRecord& claimed,
                                                         const KeyRecord& record) {
  LEDGER_ASSIGN_OR_RETURN(Query query,
                          connection().Prepare(statement::kRewriteClaimedKey,
                                               "rewrite claimed key", ErrorContext::kWrite));
  BindRecordValues(query, record);
  BindIdentity(query, claimed.identity);
  query.BindText(claimed.transaction_id);
  LEDGER_RETURN_IF_ERROR(query.Run());
  if (connection().ChangedRows() != 1) {  // only a unit of work's own SQL can do this
    return absl::InternalError(absl::StrCat("sqlite: the row the claim inserted for key ",
                                            record.identity.Encoded(),
                                            " was changed within the transaction"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStorageTransaction::AppendEvent(const OutboxEvent& event) {
  LEDGER_RETURN_IF_ERROR(Ready());
  LEDGER_ASSIGN_OR_RETURN(
      Query query,
      connection().Prepare(statement::kAppendEvent,
                           "append event", ErrorContext::kWrite));
  query.BindText(event.transaction_id)
      .BindText(event.type)
      .BindText(event.payload)
      .BindTime(event.created_at);
  return query.Run();
}

absl::Status SqliteStorageTransaction::Commit() {
  if (state_ == State::kNotBegun) {  // nothing was read or written
    Finish();
    return absl::OkStatus();
  }
  if (absl::Status ready = Ready(); !ready.ok()) {
    Rollback();
    return ready;
  }
  if (absl::Status dropped = DropUnrecordedClaims(); !dropped.ok()) {
    Rollback();
    return dropped;
  }
  Connection& connection = turn_.connection();
  absl::Status committed = connection.Execute(statement::kCommit, "commit", ErrorContext::kCommit);
  // After a failed COMMIT that left the transaction open (SQLITE_BUSY) nothing was
  // written; roll back before letting the next writer in.
  if (connection.InTransaction()) RollBackQuietly(connection);
  Finish();
  return committed;
}

// A rejected item of a committed batch leaves its key unused: the row its claim inserted
// goes before COMMIT.
absl::Status SqliteStorageTransaction::DropUnrecordedClaims() {
  for (const KeyRecord& claimed : claimed_rows_.TakeUnrecorded()) {
    LEDGER_ASSIGN_OR_RETURN(Query query,
                            connection().Prepare(statement::kDropClaimedKey,
                                                 "drop unrecorded claim", ErrorContext::kWrite));
    BindIdentity(query, claimed.identity);
    query.BindText(claimed.transaction_id);
    LEDGER_RETURN_IF_ERROR(query.Run());
  }
  return absl::OkStatus();
}

void SqliteStorageTransaction::Rollback() {
  if (state_ == State::kFinished) return;
  if (state_ == State::kOpen && connection().InTransaction()) RollBackQuietly(connection());
  Finish();
}

void SqliteStorageTransaction::Finish() {
  state_ = State::kFinished;
  claimed_rows_.Clear();
  turn_.Release();
}

absl::StatusOr<ConnectionSettings> SettingsFrom(const SqliteOptions& options) {
  if (options.path.empty() || options.path == ":memory:" ||
      absl::StartsWith(options.path, "file:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("sqlite: path must name a database file (not empty, \":memory:\" or a "
                     "URI), got \"", options.path, "\""));
  }
  if (options.busy_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("sqlite: busy_timeout must not be negative");
  }
  if (options.cache_size_kib < kMinCacheSizeKib || options.cache_size_kib > kMaxCacheSizeKib) {
    return absl::InvalidArgumentError(absl::StrCat("sqlite: cache_size_kib must be ", kMinCacheSizeKib,
                                                   "..", kMaxCacheSizeKib, ", not ",
                                                   options.cache_size_kib));
  }
  if (options.mmap_size_mib < 0 || options.mmap_size_mib > kMaxMmapSizeMib) {
    return absl::InvalidArgumentError(absl::StrCat("sqlite: mmap_size_mib must be 0..", kMaxMmapSizeMib,
                                                   ", not ", options.mmap_size_mib));
  }
  ConnectionSettings settings;
  settings.path = options.path;
  settings.busy_timeout = options.busy_timeout;
  settings.synchronous = absl::AsciiStrToUpper(options.synchronous);
  settings.create_if_missing = options.create_if_missing;
  settings.cache_size_kib = options.cache_size_kib;
  settings.mmap_size_mib = options.mmap_size_mib;
  return settings;
}

}  // namespace

absl::StatusOr<WriterTurn> BeginImmediate(WriterQueue& queue, absl::Duration wait_max,
                                          ErrorContext context) {
  const absl::Time deadline =
      wait_max <= absl::ZeroDuration() ? absl::InfinitePast() : absl::Now() + wait_max;
  if (!queue.Enter(deadline)) return WriterQueueTimeoutStatus(wait_max, context);
  WriterTurn turn(&queue);
  LEDGER_ASSIGN_OR_RETURN(Connection * connection, queue.WriterConnection());
  LEDGER_CHECK(!connection->InTransaction());  // the last turn's Leave rolled it back
  // What is left of the bound goes to SQLite's busy handler, for writers in other
  // processes (or other engines on the same file).
  connection->SetBusyTimeout(deadline - absl::Now());
  absl::Status begun = connection->Execute(statement::kBeginImmediate, "begin immediate", context);
  connection->RestoreDefaultBusyTimeout();
  LEDGER_RETURN_IF_ERROR(begun);
  return turn;
}

void RollBackQuietly(Connection& connection) {
  absl::Status rolled_back =
      connection.Execute(statement::kRollback, "rollback", ErrorContext::kStandalone);
  if (!rolled_back.ok() || connection.InTransaction()) connection.MarkBroken();
}

namespace {

void RollBackIfOpen(PooledConnection& connection, const absl::Status& = absl::OkStatus()) {
  if (connection->InTransaction()) RollBackQuietly(*connection);
}

}  // namespace

// The reads run through the shared runner (engines/common/standalone.h). SQLite has no
// session to lose, so none retries on a fresh connection. Writes take the writer's
// turn and connection instead of a pooled one (sqlite_connection_pool.h says why).
absl::Status SqliteEngine::InWriteTransaction(const ConnectionWork& work) {
  // The turn is left only when this returns, after COMMIT or ROLLBACK.
  LEDGER_ASSIGN_OR_RETURN(WriterTurn turn,
                          BeginImmediate(*writer_queue_, busy_timeout_, ErrorContext::kStandalone));
  Connection& connection = turn.connection();
  absl::Status done = work(connection);
  if (done.ok()) done = connection.Execute(statement::kCommit, "commit", ErrorContext::kCommit);
  if (connection.InTransaction()) RollBackQuietly(connection);
  return done;
}

absl::Status SqliteEngine::InReadTransaction(const ConnectionWork& work) {
  engine_common::StandaloneSteps<PooledConnection> steps;
  steps.begin = [](PooledConnection& connection) {
    return connection->Execute(statement::kBeginRead, "begin read", ErrorContext::kStandalone);
  };
  // A read-only transaction ends the same way either way; ROLLBACK cannot be in doubt.
  steps.finish = [](PooledConnection& connection) {
    RollBackIfOpen(connection);
    return absl::OkStatus();
  };
  steps.abandon = RollBackIfOpen;
  return engine_common::RunStandalone(*pool_, steps, work);
}

absl::Status SqliteEngine::WithConnection(const ConnectionWork& work) {
  return engine_common::RunStandalone(*pool_, {}, work);  // one autocommit statement
}

absl::Status SqliteEngine::Migrate() {
  // Each step is its own BEGIN IMMEDIATE transaction: a second process migrating at
  // the same time waits for the lock and then finds the version recorded.
  LEDGER_RETURN_IF_ERROR(InWriteTransaction(CreateMigrationTable));
  std::set<int> applied;
  LEDGER_RETURN_IF_ERROR(WithConnection([&applied](Connection& connection) {
    LEDGER_ASSIGN_OR_RETURN(applied, SelectAppliedVersions(connection));
    return absl::OkStatus();
  }));
  return ApplyPendingMigrations(SqliteMigrations(), applied, [this](const Migration& migration) {
    return InWriteTransaction(
        [&migration](Connection& connection) { return ApplyMigrationOnce(connection, migration); });
  });
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> SqliteEngine::Begin(
    const BeginOptions& options) {
  if (options.wait.wait_max < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("sqlite: the wait bound must not be negative");
  }
  // No pooled connection: the attempt writes on the writer's connection once its turn
  // comes (Ready), and waits for nothing else.
  return std::unique_ptr<StorageTransaction>(
      std::make_unique<SqliteStorageTransaction>(writer_queue_, options));
}

}  // namespace sqlite_internal

absl::StatusOr<SqliteOptions> SqliteOptionsFromUrl(std::string_view url) {
  LEDGER_ASSIGN_OR_RETURN(DatabaseUrl parsed, ParseDatabaseUrl(url));
  LEDGER_RETURN_IF_ERROR(
      CheckParameters(parsed, "sqlite", {"synchronous", "cache_size_kib", "mmap_size_mib"}));
  absl::string_view path = parsed.base;
  if (!absl::ConsumePrefix(&path, "sqlite://") && !absl::ConsumePrefix(&path, "sqlite:")) {
    return absl::InvalidArgumentError("sqlite URL: must start with sqlite:");
  }
  if (path.empty()) return absl::InvalidArgumentError("sqlite: needs a path, e.g. sqlite:ledger.db");
  SqliteOptions options;
  options.path = std::string(path);
  options.synchronous = absl::AsciiStrToUpper(parsed.Parameter("synchronous", "full"));
  if (options.synchronous != "FULL" && options.synchronous != "EXTRA" &&
      options.synchronous != "NORMAL") {
    return absl::InvalidArgumentError(
        "sqlite URL: synchronous must be full (the default), extra or normal");
  }
  // Decimal digits only (no sign, no unit); the ranges are OpenSqliteEngine's.
  for (auto [name, field, low, high] :
       {std::tuple{"cache_size_kib", &options.cache_size_kib, kMinCacheSizeKib, kMaxCacheSizeKib},
        std::tuple{"mmap_size_mib", &options.mmap_size_mib, int64_t{0}, kMaxMmapSizeMib}}) {
    auto given = std::find_if(parsed.parameters.begin(), parsed.parameters.end(),
                              [&](const auto& parameter) { return parameter.first == name; });
    if (given == parsed.parameters.end()) continue;
    const std::string& text = given->second;
    int64_t value = 0;
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
        !absl::SimpleAtoi(text, &value) || value < low || value > high) {
      return absl::InvalidArgumentError(absl::StrCat("sqlite URL: ", name, " must be a number ", low,
                                                     "..", high, ", not \"", text, "\""));
    }
    *field = value;
  }
  return options;
}

static_assert(SqliteOptions().pool_acquire_wait == engine_common::kPoolAcquireWaitDefault);

absl::StatusOr<std::unique_ptr<Engine>> OpenSqliteEngine(const SqliteOptions& options) {
  if (sqlite3_threadsafe() == 0) {
    return absl::FailedPreconditionError(
        "sqlite: the linked SQLite was built without thread support (SQLITE_THREADSAFE=0)");
  }
  LEDGER_ASSIGN_OR_RETURN(sqlite_internal::ConnectionSettings settings,
                          sqlite_internal::SettingsFrom(options));
  LEDGER_ASSIGN_OR_RETURN(std::shared_ptr<sqlite_internal::ConnectionPool> pool,
                          sqlite_internal::CreateSqliteConnectionPool(
                              settings, options.pool_size, options.pool_acquire_wait));
  {
    // Opened now so a bad path or setting fails here, then kept in the pool.
    LEDGER_ASSIGN_OR_RETURN(sqlite_internal::PooledConnection first, pool->Acquire());
  }
  auto engine = std::make_unique<sqlite_internal::SqliteEngine>(std::move(pool),
                                                                std::move(settings));
  if (options.migrate) LEDGER_RETURN_IF_ERROR(engine->Migrate());
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace ledger
