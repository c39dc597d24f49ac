// The MySQL engine: opening, migrating, and the submit transaction. Reads and the
// administration of assets and accounts are in mysql_reads.cc, work claims and webhook
// events in mysql_work_claim_store.cc and mysql_webhook_store.cc. The claim protocol is described in mysql_engine_internal.h
// and docs/engines/mysql.md.
#include "engines/mysql/mysql_engine.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engines/common/hold_writes.h"
#include "engines/common/standalone.h"
#include "engines/mysql/mysql_engine_internal.h"
#include "engines/mysql/mysql_json_rows.h"
#include "engines/mysql/mysql_migrations.h"
#include "engines/mysql/mysql_rows.h"
#include "engines/mysql/mysql_statements.h"
#include "base/check.h"
#include "base/status.h"

namespace ledger {
namespace mysql_internal {

int ClaimLockWaitSeconds(const WaitPolicy& wait) {
  if (wait.fail_fast()) return kLockWaitSecondsMin;
  // Rounded up: a caller who allows 1.5 s waits 2 s rather than giving up early.
  const int64_t seconds = absl::ToInt64Seconds(absl::Ceil(wait.wait_max, absl::Seconds(1)));
  return static_cast<int>(
      std::clamp<int64_t>(seconds, kLockWaitSecondsMin, kLockWaitSecondsMax));
}

// ---------------------------------------------------------------- engine

absl::Status MysqlEngine::Migrate() {
  LEDGER_ASSIGN_OR_RETURN(PooledConnection connection, pool_->Acquire());
  // DDL may take long: no statement timeout (the read timeout still bounds each reply).
  // The session is closed afterwards, so no later call inherits that.
  connection.Discard();
  LEDGER_RETURN_IF_ERROR(connection->LiftStatementTimeout());
  return MigrateDatabase(*connection, MysqlMigrations(), migration_lock_wait_);
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> MysqlEngine::Begin(
    const BeginOptions& options) {
  // No round trip: with autocommit off, the first statement opens the transaction.
  LEDGER_ASSIGN_OR_RETURN(
      PooledConnection connection,
      pool_->Acquire(engine_common::PoolAcquireWait(options.wait.wait_max, pool_acquire_wait_)));
  return std::make_unique<MysqlStorageTransaction>(pool_, std::move(connection), options);
}

absl::Status MysqlEngine::RunStandalone(
    Access access, const std::function<absl::Status(MysqlConnection&)>& body) {
  engine_common::StandaloneSteps<PooledConnection> steps;
  steps.begin = [](PooledConnection& connection) {
    return connection->SetLockWaitSeconds(connection->account_lock_wait_seconds(),
                                          "set the lock wait", ErrorContext::kStandalone);
  };
  steps.finish = [access](PooledConnection& connection) -> absl::Status {
    if (access == Access::kWrite) return connection->Commit(ErrorContext::kCommit);
    connection->Rollback();  // ends the read view; what was read stands either way
    return absl::OkStatus();
  };
  steps.abandon = [](PooledConnection& connection, const absl::Status&) {
    connection->Rollback();
  };
  steps.retry_on_fresh = [](PooledConnection& connection, const absl::Status& failure) {
    return connection->broken() && absl::IsUnavailable(failure);
  };
  return engine_common::RunStandalone(*pool_, steps, body);
}

// ---------------------------------------------------------------- transaction

namespace {

// The entries_running_max a lock of accounts reads after the account's columns
// (LockAccountsSql, the claim procedure's lock).
std::optional<absl::Time> LockedRunningMax(const SqlRow& row) {
  if (row.IsNull(kLockAccountsRunningMaxColumn)) return std::nullopt;
  return FromMicros(row.Int64(kLockAccountsRunningMaxColumn));
}

absl::Status EndedError() {
  return absl::FailedPreconditionError(
      "mysql: the transaction has ended (committed, rolled back, or its connection was lost)");
}

}  // namespace

template <typename Step>
std::invoke_result_t<Step&, MysqlConnection&> MysqlStorageTransaction::RunStep(Step&& step) {
  using Result = std::invoke_result_t<Step&, MysqlConnection&>;
  if (!connection_.has_value()) return Result(EndedError());
  auto after_writes = [&](MysqlConnection& connection) -> Result {
    // Kept until sent, so a rerun on a fresh connection sends them again.
    if (absl::Status written = writes_.Send(connection); !written.ok()) return Result(written);
    return step(connection);
  };
  Result result = after_writes(**connection_);
  if (ShouldRetryOnFreshConnection(engine_common::StatusOf(result))) {
    connection_.reset();  // broken: closed, its slot freed
    absl::StatusOr<PooledConnection> fresh = pool_->AcquireFresh();
    if (!fresh.ok()) return Result(fresh.status());
    connection_.emplace(*std::move(fresh));
    result = after_writes(**connection_);
  }
  AfterStep(engine_common::StatusOf(result));
  return result;
}

bool MysqlStorageTransaction::ShouldRetryOnFreshConnection(const absl::Status& status) const {
  return !status.ok() && !any_step_succeeded_ && connection_->reused() &&
         (*connection_)->broken() && absl::IsUnavailable(status);
}

void MysqlStorageTransaction::AfterStep(const absl::Status& status) {
  if (status.ok()) {
    any_step_succeeded_ = true;
  } else if ((*connection_)->broken()) {
    connection_.reset();  // the server rolled the transaction back with the session
  }
}

absl::StatusOr<ledger::SqlRows> MysqlStorageTransaction::RunCallerSql(
    std::string_view sql, const std::vector<ledger::SqlValue>& parameters) {
  SqlParams params;
  params.reserve(parameters.size());
  for (const ledger::SqlValue& value : parameters) {
    if (const int64_t* number = std::get_if<int64_t>(&value)) {
      params.emplace_back(*number);
    } else if (const std::string* text = std::get_if<std::string>(&value)) {
      params.emplace_back(*text);
    } else {
      params.emplace_back(std::monostate());
    }
  }
  // A step like the ledger's: after the buffered writes, and it counts as one, so a later
  // claim never ROLLBACKs to drop a duplicate's lock (that would drop the caller's rows).
  return RunStep([&](MysqlConnection& connection) {
    return connection.RunCallerStatement(sql, params);
  });
}

absl::StatusOr<void*> MysqlStorageTransaction::NativeHandle() {
  return RunStep([](MysqlConnection& connection) -> absl::StatusOr<void*> {
    return static_cast<void*>(&connection.native());
  });
}

absl::StatusOr<std::optional<KeyRecord>> MysqlStorageTransaction::ClaimKey(
    const KeyRecord& intended) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<std::optional<KeyRecord>> records, ClaimKeys({intended}));
  return std::move(records.front());
}

void MysqlStorageTransaction::ExpectAccountLocks(const std::vector<std::string>& sorted_ids) {
  LEDGER_CHECK(std::is_sorted(sorted_ids.begin(), sorted_ids.end()) &&
               std::adjacent_find(sorted_ids.begin(), sorted_ids.end()) == sorted_ids.end())
      << "ExpectAccountLocks takes sorted, distinct ids";
  expected_account_ids_ = sorted_ids;
}

// The claim's lock wait is set once around all the keys, not once per key.
absl::StatusOr<std::vector<std::optional<KeyRecord>>> MysqlStorageTransaction::ClaimKeys(
    const std::vector<KeyRecord>& intended) {
  // Nothing ran, nor runs before it (no buffered write): a ROLLBACK loses nothing.
  const bool claim_is_first = !any_step_succeeded_ && writes_.empty();
  // Only a first claim locks the accounts behind it: after a later one they would be
  // locked before its keys.
  const std::vector<std::string> lock_ids =
      claim_is_first ? std::exchange(expected_account_ids_, {}) : std::vector<std::string>();
  expected_account_ids_.clear();
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> records =
      RunStep([&](MysqlConnection& connection) {
        if (claim_is_first) {  // a rerun on a fresh connection starts over
          claimed_rows_.Clear();
          locked_records_.clear();
          prefetched_locks_.reset();
        }
        return ClaimKeysOn(connection, intended, claim_is_first, lock_ids);
      });
  if (records.ok() && ended_in_claim_) connection_.reset();  // nothing open to keep
  return records;
}

absl::StatusOr<std::vector<std::optional<KeyRecord>>> MysqlStorageTransaction::ClaimKeysOn(
    MysqlConnection& connection, const std::vector<KeyRecord>& intended, bool claim_is_first,
    const std::vector<std::string>& lock_ids) {
  LEDGER_RETURN_IF_ERROR(connection.SetLockWaitSeconds(ClaimLockWaitSeconds(options_.wait),
                                                       "set the claim's lock wait",
                                                       ErrorContext::kClaim));
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> records =
      HoldKeys(connection, intended, claim_is_first, lock_ids);
  // Account and work-claim rows wait the session's normal time, not the claim's: a
  // short claim bound must not turn an account lock wait into "in progress".
  absl::Status restored =
      connection.SetLockWaitSeconds(connection.account_lock_wait_seconds(),
                                    "restore the lock wait", ErrorContext::kTransaction);
  LEDGER_RETURN_IF_ERROR(records.status());
  LEDGER_RETURN_IF_ERROR(restored);
  return records;
}

// Many keys first go in one multi-row INSERT of their final records (a statement per
// kRowsPerStatementMax), in the given global order: when every key is new (the common
// case) the claim costs one round trip and the key rows are written once, in it. A
// duplicate (1062) rolls back the statement but
// not the locks InnoDB took for it (those of the rows inserted before it, and the shared
// lock of the duplicate check), so only a claim that is the transaction's first step
// takes this path: a ROLLBACK then drops them all, one locking read takes and reads the
// rows that exist and the other keys' records go in (LockThenInsert: a resent batch
// of N keys costs 3 round trips, not 2N). Only a key recorded in between sends the
// claim one by one (HoldKey), after another ROLLBACK. A later claim goes one by one.
// When the ledger named the accounts (ExpectAccountLocks), a single key takes this path
// too, and its INSERT is ClaimAndLockAccounts: a new key's submit then claims and
// locks in one round trip, and a resend is answered in the same one (the procedure
// rolls back, locks the key row and returns it with its transaction). (A batch's keys
// would go to the procedure as JSON, which cost the server more than the round trip
// saves: docs/benchmarks.md.)
//
// Deadlocks: two batches insert their rows in the same global order, so a batch
// waits only at its first key that another holds, while holding keys below it only;
// the holder is already past that key and takes only keys above it, so no cycle forms
// between claims (accounts are locked after every claim, also in one order). What
// remains is the wait on a single key that a single claim has too: two waiters on a
// claimed row whose holder drops it (its item was rejected) both hold the duplicate
// check's shared lock and both insert, and InnoDB makes one the victim (1213). That is
// RetryableError in the claim phase (docs/engines/errors.md): the transaction was
// rolled back and the pipeline reruns the attempt. A wait that runs out (1205) is
// InProgressError: the caller claims one by one to name the key.
absl::StatusOr<std::vector<std::optional<KeyRecord>>> MysqlStorageTransaction::HoldKeys(
    MysqlConnection& connection, const std::vector<KeyRecord>& intended, bool claim_is_first,
    const std::vector<std::string>& lock_ids) {
  const bool locks_accounts = !lock_ids.empty() && intended.size() == 1;
  // Fail fast probes each key without waiting; an INSERT would wait InnoDB's 1 s.
  if ((intended.size() > 1 || locks_accounts) && claim_is_first && !options_.wait.fail_fast()) {
    absl::Status inserted;
    if (locks_accounts) {
      absl::StatusOr<std::optional<LockedKeyRow>> taken =
          ClaimAndLockAccounts(connection, intended.front(), lock_ids);
      if (taken.ok() && taken->has_value() && (*taken)->exists) {  // a resend, already locked
        return std::vector<std::optional<KeyRecord>>{
            Claimed(intended.front().identity, **std::move(taken))};
      }
      // A taken key whose row went before the procedure read it (pruned): claim afresh.
      inserted = !taken.ok()             ? taken.status()
                 : taken->has_value() ? absl::AlreadyExistsError("mysql: the key's row went")
                                      : absl::OkStatus();
    } else {
      inserted = InsertClaimedRecords(connection, intended);
    }
    if (inserted.ok()) return std::vector<std::optional<KeyRecord>>(intended.size());
    if (!absl::IsAlreadyExists(inserted)) return inserted;
    LEDGER_RETURN_IF_ERROR(RestartClaim(connection));
    absl::StatusOr<std::vector<std::optional<KeyRecord>>> records =
        LockThenInsert(connection, intended);
    if (!absl::IsAlreadyExists(records.status())) return records;
    LEDGER_RETURN_IF_ERROR(RestartClaim(connection));  // a key recorded in between
  }
  std::vector<std::optional<KeyRecord>> records;
  for (size_t k = 0; k < intended.size(); ++k) {
    // Only the first key may ROLLBACK its duplicate's lock: nothing is held before it.
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record,
                            HoldKey(connection, intended[k], claim_is_first && k == 0));
    records.push_back(std::move(record));
  }
  return records;
}

absl::Status MysqlStorageTransaction::RestartClaim(MysqlConnection& connection) {
  LEDGER_RETURN_IF_ERROR(connection.ExecuteText(
      statement::kRollback, "release the batch claim's locks", ErrorContext::kClaim));
  claimed_rows_.Clear();      // rolled back
  locked_records_.clear();    // unlocked
  prefetched_locks_.reset();  // unlocked
  return absl::OkStatus();
}

// The session's lock wait is the claim's for the INSERT; the procedure sets the
// accounts' own before their lock (docs/engines/mysql.md, "The claim procedure").
absl::StatusOr<std::optional<MysqlStorageTransaction::LockedKeyRow>>
MysqlStorageTransaction::ClaimAndLockAccounts(MysqlConnection& connection,
                                              const KeyRecord& intended,
                                              const std::vector<std::string>& lock_ids) {
  SqlParams params = IdentityParams(intended.identity);
  params.insert(params.end(),
                {intended.fingerprint, intended.transaction_id, ToMicros(intended.created_at),
                 ToMicros(intended.expires_at), JsonStringArray(lock_ids),
                 int64_t{connection.account_lock_wait_seconds()}});
  PrefetchedLocks prefetched{.ids = lock_ids};
  // The result sets tell what happened (schema/mysql/0010, 0011): accounts' rows for a
  // new key; for a taken one, its row (one row, NULLs if it went), its transaction's rows
  // and, when the record is live, claim_ended: the procedure ended the transaction.
  std::optional<LockedKeyRow> taken;
  std::vector<Transaction> replayed;
  bool claim_ended = false;
  absl::Status unreadable;
  absl::Status called = connection.Call(
      statement::kCallClaimLock, params,
      [&](const SqlRow& row) {
        if (row.columns() == kKeyRecordColumnCount) {
          taken.emplace();
          if (!row.IsNull(0)) unreadable.Update(ReadLockedRow(row, *taken));
        } else if (row.columns() == kTransactionWithEntryColumnCount) {
          unreadable.Update(AddTransactionRow(row, replayed));
        } else if (row.columns() == kClaimEndedColumnCount) {
          claim_ended = true;
        } else {
          prefetched.rows.emplace_back(ReadAccount(row), LockedRunningMax(row));
        }
      },
      "claim the key and lock the accounts", ErrorContext::kClaim);
  const std::optional<MysqlError>& error = connection.last_error();
  if (!called.ok() && !(error.has_value() && error->code == kErrorAccountLockWait)) {
    // Anything but the accounts' lock wait may have stopped the procedure on either side
    // of its SET (a taken key's locking read runs before it, under the claim's wait).
    connection.AssumeLockWaitSeconds(0);
    return called;
  }
  LEDGER_RETURN_IF_ERROR(unreadable);
  if (taken.has_value()) {  // the key was taken: the procedure rolled back, set no wait
    replayed_ = std::move(replayed);
    ended_in_claim_ = claim_ended;
    return taken;
  }
  connection.AssumeLockWaitSeconds(connection.account_lock_wait_seconds());
  claimed_rows_.Claimed(intended);  // the key was new: the row is the claim
  if (called.ok()) {
    std::sort(prefetched.rows.begin(), prefetched.rows.end(),
              [](const auto& a, const auto& b) { return a.first.id < b.first.id; });
  } else {  // the claim stands; the accounts' lock wait ran out after it
    prefetched.rows.clear();
    prefetched.failure = MysqlErrorStatus(*error, "lock accounts", ErrorContext::kTransaction);
  }
  prefetched_locks_ = std::move(prefetched);
  return std::nullopt;
}

// The locking read waits for a row's holder like HoldKey's does (a replayer's lock, or
// another claimer's uncommitted record) and returns the latest committed version.
// It locks the rows in primary key order, which is the claim order (VARBINARY columns,
// compared byte-wise), and the new keys' records go in after it in that order too.
absl::StatusOr<std::vector<std::optional<KeyRecord>>>
MysqlStorageTransaction::LockThenInsert(MysqlConnection& connection,
                                        const std::vector<KeyRecord>& intended) {
  using RowKey = std::tuple<std::string, std::string, std::string>;  // namespace, scope, key
  std::map<RowKey, LockedKeyRow> existing;
  for (size_t begin = 0; begin < intended.size(); begin += kRowsPerStatementMax) {
    const size_t end = std::min(intended.size(), begin + kRowsPerStatementMax);
    const KeyRowMatches matches = MatchKeyRows(
        absl::MakeConstSpan(intended).subspan(begin, end - begin), MatchTransactionId::kNo);
    absl::Status unreadable;
    LEDGER_RETURN_IF_ERROR(connection.Query(
        LockKeyRowsSql(matches.condition),
        matches.params,
        [&](const SqlRow& row) {
          LockedKeyRow& locked = existing[RowKey(row.String(0), row.String(1), row.String(2))];
          if (absl::Status read = ReadLockedRow(row, locked); !read.ok()) unreadable = read;
        },
        "lock the keys' rows", ErrorContext::kClaim));
    LEDGER_RETURN_IF_ERROR(unreadable);
  }
  std::vector<KeyRecord> missing;
  std::vector<std::optional<KeyRecord>> records;
  for (const KeyRecord& record_to_be : intended) {
    const KeyIdentity& identity = record_to_be.identity;
    auto row = existing.find(RowKey(identity.key_namespace, identity.scope.Encoded(), identity.key));
    if (row == existing.end()) {
      missing.push_back(record_to_be);
      records.emplace_back();
    } else {
      records.push_back(Claimed(identity, std::move(row->second)));
    }
  }
  LEDGER_RETURN_IF_ERROR(InsertClaimedRecords(connection, missing));
  return records;
}

absl::Status MysqlStorageTransaction::InsertClaimedRecords(
    MysqlConnection& connection, const std::vector<KeyRecord>& intended) {
  constexpr size_t kColumns = 7;  // namespace, scope, key, fingerprint, id, created, expires
  for (size_t begin = 0; begin < intended.size(); begin += kRowsPerStatementMax) {
    const size_t end = std::min(intended.size(), begin + kRowsPerStatementMax);
    SqlParams params;
    params.reserve((end - begin) * kColumns);
    std::string rows;
    for (size_t k = begin; k < end; ++k) {
      const KeyRecord& record = intended[k];
      SqlParams identity = IdentityParams(record.identity);
      std::move(identity.begin(), identity.end(), std::back_inserter(params));
      params.insert(params.end(), {record.fingerprint, record.transaction_id,
                                   ToMicros(record.created_at), ToMicros(record.expires_at)});
      absl::StrAppend(&rows, k == begin ? "" : ", ", "(?, ?, ?, ?, 'committed', ?, ?, ?)");
    }
    LEDGER_RETURN_IF_ERROR(
        connection
            .Execute(absl::StrCat(statement::kInsertKeysHead, rows), params, "claim the keys",
                     ErrorContext::kClaim)
            .status());
    for (size_t k = begin; k < end; ++k) claimed_rows_.Claimed(intended[k]);
  }
  return absl::OkStatus();
}

std::optional<KeyRecord> MysqlStorageTransaction::Claimed(const KeyIdentity& identity,
                                                          LockedKeyRow row) {
  if (row.record.has_value() && claimed_rows_.IsClaimedRow(*row.record)) {
    return std::nullopt;  // this transaction's own claim, not committed by any item yet
  }
  if (row.record.has_value()) locked_records_[identity.Encoded()] = row.record->expires_at;
  return std::move(row.record);
}

absl::StatusOr<std::optional<KeyRecord>> MysqlStorageTransaction::HoldKey(
    MysqlConnection& connection, const KeyRecord& intended, bool claim_is_first) {
  const KeyIdentity& identity = intended.identity;
  for (int round = 1; round <= kClaimRoundsMax; ++round) {
    if (options_.wait.fail_fast()) {
      LEDGER_ASSIGN_OR_RETURN(LockedKeyRow row, ProbeKeyRowFailFast(connection, identity));
      if (row.exists) return Claimed(identity, std::move(row));
    }
    SqlParams record = IdentityParams(identity);
    record.insert(record.end(), {intended.fingerprint, intended.transaction_id,
                                 ToMicros(intended.created_at), ToMicros(intended.expires_at)});
    absl::StatusOr<int64_t> inserted =
        connection.Execute(statement::kInsertKey, record, "claim the key", ErrorContext::kClaim);
    if (inserted.ok()) {  // a new key: the row is the hold
      claimed_rows_.Claimed(intended);
      return std::nullopt;
    }
    if (!absl::IsAlreadyExists(inserted.status())) return inserted.status();
    // 1062: the key is committed, perhaps by the holder this INSERT waited for (or this
    // transaction's own claim, in a unit of work). The
    // failed duplicate check left a shared lock on the row; two waiters upgrading theirs
    // to exclusive would deadlock, so drop it first (nothing else ran yet).
    if (claim_is_first) {
      LEDGER_RETURN_IF_ERROR(connection.ExecuteText(
          statement::kRollback, "release the duplicate's lock", ErrorContext::kClaim));
    }
    // A locking read returns the latest committed version at any isolation level. Its
    // wait is the claim's: replays of the key hold the row only for a moment.
    LEDGER_ASSIGN_OR_RETURN(LockedKeyRow row, LockKeyRow(connection, identity, false));
    if (row.exists) return Claimed(identity, std::move(row));
    // Deleted (pruned as expired) between the two statements: claim it afresh.
  }
  return RetryableError("mysql: the key's row kept disappearing while it was being claimed");
}

absl::StatusOr<MysqlStorageTransaction::LockedKeyRow>
MysqlStorageTransaction::ProbeKeyRowFailFast(MysqlConnection& connection,
                                             const KeyIdentity& identity) {
  // InnoDB waits at least 1 s for a row lock. A NOWAIT locking read instead sees a
  // holder at once (1205 on MariaDB, 3572 on MySQL 8), and takes a committed row if free.
  absl::StatusOr<LockedKeyRow> probed = LockKeyRow(connection, identity, true);
  if (probed.ok() || !IsInProgress(probed.status())) return probed;
  // Held. When no committed row is visible, the holder is a first attempt with its
  // placeholder: in progress, now. When one is, the holder is replaying that record
  // (a moment) or replacing an expired one: wait the claim's 1 s for it.
  bool committed_visible = false;
  LEDGER_RETURN_IF_ERROR(connection.Query(
      statement::kSelectCommittedKey,
      IdentityParams(identity), [&](const SqlRow&) { committed_visible = true; },
      "read the key's committed row", ErrorContext::kClaim));
  if (!committed_visible) return probed.status();
  return LockKeyRow(connection, identity, false);
}

absl::Status MysqlStorageTransaction::ReadLockedRow(const SqlRow& row, LockedKeyRow& locked) {
  locked.exists = true;
  LEDGER_ASSIGN_OR_RETURN(locked.record, ReadKeyRecord(row));
  return absl::OkStatus();
}

absl::StatusOr<MysqlStorageTransaction::LockedKeyRow> MysqlStorageTransaction::LockKeyRow(
    MysqlConnection& connection, const KeyIdentity& identity, bool nowait) {
  LockedKeyRow locked;
  absl::Status unreadable;
  LEDGER_RETURN_IF_ERROR(connection.Query(
      nowait ? statement::kLockKeyRowNowait : statement::kLockKeyRow,
      IdentityParams(identity),
      [&](const SqlRow& row) {
        if (absl::Status read = ReadLockedRow(row, locked); !read.ok()) unreadable = read;
      },
      "lock the key's row", ErrorContext::kClaim));
  LEDGER_RETURN_IF_ERROR(unreadable);
  return locked;
}

absl::StatusOr<std::optional<Transaction>> MysqlStorageTransaction::LoadTransaction(
    std::string_view id) {
  return RunStep([&](MysqlConnection& connection) {
    return SelectTransaction(connection, id, ErrorContext::kTransaction);
  });
}

absl::StatusOr<std::vector<Transaction>> MysqlStorageTransaction::LoadTransactions(
    const std::vector<std::string>& ids) {
  // A replay's read: the claim's CALL returned the transaction its key's row names.
  if (std::vector<Transaction> replayed = std::exchange(replayed_, {});
      replayed.size() == 1 && ids.size() == 1 && replayed.front().id == ids.front()) {
    if (!connection_.has_value() && !ended_in_claim_) return EndedError();
    return replayed;
  }
  return RunStep([&](MysqlConnection& connection) {
    return SelectTransactions(connection, ids, ErrorContext::kTransaction);
  });
}

absl::StatusOr<bool> MysqlStorageTransaction::IsReversed(std::string_view id) {
  return RunStep([&](MysqlConnection& connection) -> absl::StatusOr<bool> {
    // A consistent read: under READ COMMITTED it sees every reversal committed before
    // this statement, and the pipeline calls it with the accounts already locked.
    bool reversed = false;
    LEDGER_RETURN_IF_ERROR(connection.Query(
        statement::kIsReversed, {std::string(id)},
        [&](const SqlRow&) { reversed = true; }, "check for a reversal",
        ErrorContext::kTransaction));
    return reversed;
  });
}

absl::StatusOr<std::vector<Account>> MysqlStorageTransaction::LockAccounts(
    const std::vector<std::string>& sorted_ids) {
  // The claim's CALL locked these accounts already (ExpectAccountLocks): its rows, or its
  // failure, are the answer. Ids it did not lock go to the server.
  if (std::optional<PrefetchedLocks> prefetched = std::exchange(prefetched_locks_, std::nullopt)) {
    if (!connection_.has_value()) return EndedError();
    if (!prefetched->failure.ok()) return prefetched->failure;
    if (std::includes(prefetched->ids.begin(), prefetched->ids.end(), sorted_ids.begin(),
                      sorted_ids.end())) {
      std::vector<Account> found;
      for (auto& [account, running_max] : prefetched->rows) {
        if (!std::binary_search(sorted_ids.begin(), sorted_ids.end(), account.id)) continue;
        writes_.NoteLocked(account, running_max);
        found.push_back(std::move(account));
      }
      return found;
    }
  }
  return RunStep([&](MysqlConnection& connection) -> absl::StatusOr<std::vector<Account>> {
    std::vector<Account> found;
    if (sorted_ids.empty()) return found;
    std::map<std::string, Account, std::less<>> by_id;
    // One statement (LockAccountsSql). Its last column, the account's
    // entries_running_max, the batch continues along the entries it writes
    // (engines/common/entry_running_max.h), so writing them costs no read of its own.
    LEDGER_RETURN_IF_ERROR(connection.Query(
        LockAccountsSql(sorted_ids.size()),
        SqlParams(sorted_ids.begin(), sorted_ids.end()),
        [&](const SqlRow& row) {
          Account account = ReadAccount(row);
          writes_.NoteLocked(account, LockedRunningMax(row));
          by_id.emplace(account.id, std::move(account));
        },
        "lock accounts", ErrorContext::kTransaction));
    for (const std::string& id : sorted_ids) {
      if (auto it = by_id.find(id); it != by_id.end()) found.push_back(std::move(it->second));
    }
    return found;
  });
}

absl::StatusOr<DebitUsage> MysqlStorageTransaction::LoadDebitUsage(std::string_view account_id,
                                                                   absl::Time since) {
  return RunStep([&](MysqlConnection& connection) -> absl::StatusOr<DebitUsage> {
    DebitUsage usage;
    // Served by the (account_id, created_at, amount) index alone.
    LEDGER_RETURN_IF_ERROR(connection.Query(
        statement::kDebitUsage,
        {std::string(account_id), ToMicros(since)},
        [&](const SqlRow& row) {
          usage.count = row.Int64(0);
          usage.amount = SaturatedTotal(row.String(1));
        },
        "load debit usage", ErrorContext::kTransaction));
    return usage;
  });
}

absl::StatusOr<std::vector<Hold>> MysqlStorageTransaction::LoadHolds(
    const std::vector<std::string>& ids) {
  return RunStep([&](MysqlConnection& connection) -> absl::StatusOr<std::vector<Hold>> {
    if (ids.empty()) return std::vector<Hold>();
    // A consistent read of the latest committed rows (READ COMMITTED): after
    // LockAccounts no settlement of these holds can commit any more.
    return QueryHolds(connection, SelectHoldsSql(ids.size()), SqlParams(ids.begin(), ids.end()),
                      "load holds", ErrorContext::kTransaction);
  });
}

absl::StatusOr<PendingHoldTotals> MysqlStorageTransaction::LoadHoldTotals(
    std::string_view account_id, absl::Time now, absl::Time since) {
  return RunStep([&](MysqlConnection& connection) {
    return SelectPendingHoldTotals(connection, account_id, now, since, ErrorContext::kTransaction);
  });
}

// Checked now and buffered: nothing is sent before the next statement (mysql_write_batch.h).
absl::Status MysqlStorageTransaction::WriteTransaction(
    const Transaction& transaction, const std::vector<Account>& updated_accounts) {
  if (!connection_.has_value()) return EndedError();
  // A caller of the storage contract that skipped LockAccounts: its accounts are locked
  // (and their running maxima read) now.
  if (std::vector<std::string> unnoted = writes_.Unnoted(transaction, updated_accounts);
      !unnoted.empty()) {
    LEDGER_RETURN_IF_ERROR(LockAccounts(unnoted).status());
  }
  return writes_.AddTransaction(transaction, updated_accounts);
}

absl::Status MysqlStorageTransaction::RecordKey(const KeyRecord& record) {
  if (!connection_.has_value()) return EndedError();
  if (!commit_witness_.has_value()) commit_witness_ = record;
  // The row this transaction's claim inserted: it holds the record already, unless
  // another item than the one the claim was told of commits the key.
  using RecordKind = engine_common::ClaimedRowTracker::RecordKind;
  const auto [kind, claimed] = claimed_rows_.Record(record);
  if (kind == RecordKind::kNothingToSend || kind == RecordKind::kRewrite) {
    if (kind == RecordKind::kRewrite) writes_.RewriteClaimedKeyRow(*claimed, record);
    // Only a Galera node reads them back (VerifyClaimsHeld); a single server keeps none.
    if ((*connection_)->galera()) held_claims_.push_back(record);
    return absl::OkStatus();
  }
  // An expired record the claim locked (or a placeholder of an earlier release).
  if (auto locked = locked_records_.find(record.identity.Encoded());
      locked != locked_records_.end() && locked->second <= record.created_at) {
    locked_records_.erase(locked);
    writes_.ReplaceKeyRow(record);
    return absl::OkStatus();
  }
  // Anything else (a live record, a key never claimed) goes the cautious way, alone.
  writes_.WriteKeyRow(record);
  return absl::OkStatus();
}

absl::Status MysqlStorageTransaction::AppendEvent(const OutboxEvent& event) {
  if (!connection_.has_value()) return EndedError();
  writes_.AddEvent(event);
  return absl::OkStatus();
}

absl::Status MysqlStorageTransaction::Commit() {
  if (!connection_.has_value()) {
    return absl::FailedPreconditionError("mysql: commit of a transaction that has ended");
  }
  // A rejected item of a committed batch leaves its key unused: the row its claim
  // inserted goes, with every other one no item committed, in one DELETE.
  for (const KeyRecord& claimed : claimed_rows_.TakeUnrecorded()) {
    writes_.DropClaimedKeyRow(claimed);
  }
  // A single server: the last writes and COMMIT in one CALL. A Galera node: the writes,
  // then the count of its claims (VerifyClaimsHeld), then COMMIT.
  absl::Status status;
  if ((*connection_)->galera()) {
    status = RunStep([&](MysqlConnection& connection) { return VerifyClaimsHeld(connection); });
    if (status.ok()) status = (*connection_)->Commit(ErrorContext::kCommit);
  } else {
    status = writes_.Send(**connection_, MysqlWriteBatch::End::kCommit);
    if (IsInDoubt(status)) status = ResolveInDoubtCommit(status);
  }
  // A COMMIT the server refused, or writes that failed (a lost session is already marked
  // broken), leave the transaction rolled back or open: roll back before the connection
  // is pooled again.
  if (!status.ok()) Rollback();
  connection_.reset();
  return status;
}

// A single server's committing CALL lost its session, or failed with an error COMMIT
// may have raised: the transaction committed, rolled back, or (a session the server has
// not yet noticed is gone) is still open. Its key row tells which once it has ended: a
// locking read waits for the transaction's lock on the row (its claim took it at the
// start, so even a CALL still in the server's buffers runs under it), bounded by the
// session's lock wait, then reads what the transaction left. The witness's record there:
// committed. Anything else: not committed, nothing written, and the error means what it
// would have in the write phase (a lost session Unavailable, a statement timeout
// DeadlineExceeded). Cut off again, or the wait run out: still in doubt.
absl::Status MysqlStorageTransaction::ResolveInDoubtCommit(const absl::Status& in_doubt) {
  if (!commit_witness_.has_value() || !connection_.has_value()) return in_doubt;
  const std::optional<MysqlError> error = (*connection_)->last_error();
  if (!error.has_value()) return in_doubt;
  (*connection_)->Rollback();  // a live session: ends the transaction if COMMIT did not
  if ((*connection_)->broken()) {
    connection_.reset();
    absl::StatusOr<PooledConnection> fresh = pool_->AcquireFresh();
    if (!fresh.ok()) return in_doubt;
    connection_.emplace(*std::move(fresh));
  }
  MysqlConnection& connection = **connection_;
  absl::Status lock_wait = connection.SetLockWaitSeconds(
      connection.account_lock_wait_seconds(), "set the lock wait", ErrorContext::kStandalone);
  if (!lock_wait.ok()) return in_doubt;
  absl::StatusOr<LockedKeyRow> row =
      LockKeyRow(connection, commit_witness_->identity, /*nowait=*/false);
  connection.Rollback();
  if (!row.ok()) return in_doubt;
  if (row->record.has_value() && row->record->transaction_id == commit_witness_->transaction_id) {
    return absl::OkStatus();
  }
  return MysqlErrorStatus(*error, "write and commit (the key row shows it did not commit)",
                          ErrorContext::kWrite);
}

// On a Galera node, a write set replicated from another node that conflicts with this
// transaction's locks aborts it, also while the session is idle between two statements
// (a brute-force abort: the error log's "Victim thread ... state: idle"). The server
// should fail the session's next statement with 1213, and does not always: in the
// cluster test a claim's transaction was aborted while idle, the submit's next
// statements ran on in a new transaction, and COMMIT committed the transaction and its
// entries without the key row: the key posted twice (about 1 run in 24 of
// TheSameKeySentToAllThreeNodesAtOnce). So, after the writes were sent and right
// before COMMIT, a Galera session counts the key rows its claims inserted that its items
// commit: each must still hold this transaction's record. One missing means the claim
// was lost with the aborted transaction: nothing is committed, and the pipeline runs
// the attempt again (RetryableError, before COMMIT), which finds the key committed.
// Its own statement may be prepared now, after the abort: it then runs in the new
// transaction, which holds none of the rows, and fails alike.
absl::Status MysqlStorageTransaction::VerifyClaimsHeld(MysqlConnection& connection) const {
  for (size_t begin = 0; begin < held_claims_.size(); begin += kRowsPerStatementMax) {
    const size_t end = std::min(held_claims_.size(), begin + kRowsPerStatementMax);
    const KeyRowMatches matches = MatchKeyRows(
        absl::MakeConstSpan(held_claims_).subspan(begin, end - begin), MatchTransactionId::kYes);
    int64_t held = -1;
    LEDGER_RETURN_IF_ERROR(connection.Query(
        CountKeyRowsSql(matches.condition), matches.params,
        [&](const SqlRow& row) { held = row.Int64(0); },
        "check that the claimed keys are still held", ErrorContext::kWrite));
    if (held != static_cast<int64_t>(end - begin)) {
      return RetryableError(absl::StrCat(
          "mysql: ", static_cast<int64_t>(end - begin) - held, " of the ", end - begin,
          " key rows this transaction claimed are gone before COMMIT: the Galera node aborted "
          "the transaction (a conflicting write set from another node) without reporting it"));
    }
  }
  return absl::OkStatus();
}

void MysqlStorageTransaction::Rollback() {
  if (!connection_.has_value()) return;
  (*connection_)->Rollback();
  connection_.reset();
}

}  // namespace mysql_internal

static_assert(MysqlOptions().pool_acquire_wait == engine_common::kPoolAcquireWaitDefault);
static_assert(MysqlOptions().connect_timeout == engine_common::kConnectTimeoutDefault);
static_assert(MysqlOptions().account_lock_wait == engine_common::kAccountLockWaitDefault);
static_assert(MysqlOptions().statement_timeout == engine_common::kStatementTimeoutDefault);
static_assert(MysqlOptions().read_timeout == engine_common::kReadTimeoutDefault);
static_assert(MysqlOptions().write_timeout == engine_common::kWriteTimeoutDefault);
static_assert(MysqlOptions().migration_lock_wait == engine_common::kMigrationLockWaitDefault);

absl::StatusOr<std::unique_ptr<Engine>> OpenMysqlEngine(const MysqlOptions& options) {
  if (options.pool_size <= 0) {
    return absl::InvalidArgumentError("mysql: pool_size must be positive");
  }
  const mysql_internal::MysqlWaits waits{.pool_acquire_wait = options.pool_acquire_wait,
                                         .connect_timeout = options.connect_timeout,
                                         .account_lock_wait = options.account_lock_wait,
                                         .statement_timeout = options.statement_timeout,
                                         .read_timeout = options.read_timeout,
                                         .write_timeout = options.write_timeout,
                                         .migration_lock_wait = options.migration_lock_wait};
  LEDGER_ASSIGN_OR_RETURN(mysql_internal::MysqlSettings settings,
                          mysql_internal::ParseMysqlUrl(options.connection, waits));
  if (settings.create_database) {
    // A session with no default database creates it (its name is checked plain).
    mysql_internal::MysqlSettings server = settings;
    server.database.clear();
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<mysql_internal::MysqlConnection> connection,
                            mysql_internal::MysqlConnection::Open(server));
    LEDGER_RETURN_IF_ERROR(connection->ExecuteText(
        mysql_internal::CreateDatabaseSql(settings.database),
        "create the database", engine_common::ErrorContext::kStandalone));
  }
  const absl::Duration pool_acquire_wait = settings.waits.pool_acquire_wait;  // URL applied
  const absl::Duration migration_lock_wait = settings.waits.migration_lock_wait;
  LEDGER_ASSIGN_OR_RETURN(std::shared_ptr<mysql_internal::MysqlConnectionPool> pool,
                          mysql_internal::CreateMysqlConnectionPool(
                              std::move(settings), options.pool_size, pool_acquire_wait));
  {
    // Connect once now, so a wrong address or password fails here, not on first use.
    LEDGER_ASSIGN_OR_RETURN(mysql_internal::PooledConnection connection, pool->Acquire());
  }
  auto engine = std::make_unique<mysql_internal::MysqlEngine>(std::move(pool), pool_acquire_wait,
                                                              migration_lock_wait);
  if (options.migrate) LEDGER_RETURN_IF_ERROR(engine->Migrate());
  return engine;
}

}  // namespace ledger
