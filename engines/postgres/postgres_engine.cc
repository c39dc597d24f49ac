// The PostgreSQL engine: the Engine over a connection pool, and the StorageTransaction
// that runs one submit on one pooled connection.
//
// Round trips of a submit (READ COMMITTED), each a libpq pipeline (postgres_pipeline.h):
//   1. BEGIN, the claim (row mode: the keys' final records inserted), the key rows and,
//      when the ledger named the accounts up front
//      (ExpectAccountLocks), their lock unless a claimed key replays; LockAccounts is
//      then answered from those rows. Otherwise LockAccounts is a round trip of its own:
//      SELECT ... FOR UPDATE in the caller's sorted order
//   (reversals and replays: LoadTransactions; reversals: IsReversed; holds: LoadHolds before and after the
//   locks, LoadHoldTotals; velocity limits: LoadDebitUsage)
//   2. the buffered writes, checked by the server (postgres_write_batch.h), and COMMIT:
//      a write the server refuses aborts the pipeline before COMMIT, so a loss before
//      the write was sent is "nothing written", a refusal of the write is the write's
//      error, and only a loss after COMMIT went out is "in doubt".
//
// Transactions are driven by hand (BEGIN / COMMIT / ROLLBACK through a
// pqxx::nontransaction) rather than pqxx::work, so BEGIN rides with the claim instead
// of costing a round trip of its own; the connection never reconnects silently
// (postgres_connection_pool.cc), so a COMMIT can never land on a fresh session.
#include "engines/postgres/postgres_engine.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engines/common/waits.h"
#include "engines/postgres/postgres_connection.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_migrations.h"
#include "engines/postgres/postgres_pipeline.h"
#include "engines/postgres/postgres_rows.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_write_batch.h"
#include "base/check.h"
#include "base/status.h"
#include "libpq-fe.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"

namespace ledger {
namespace postgres_internal {
namespace {

// The reads and locks of a submit before its writes: the error table's "lock accounts".
constexpr engine_common::ErrorPhase kInTransaction = engine_common::ErrorPhase::kLockAccounts;

// kOne: the one key as scalars (a single submit's claim); kMany: arrays, even of one
// key (a claim of many, and the check of remembered rows).
ClaimParameters ClaimParametersOf(PostgresClaimMode mode, const std::vector<KeyRecord>& intended,
                                  ClaimKeys form) {
  ClaimParameters claim;
  if (form == ClaimKeys::kOne) {
    const KeyRecord& record = intended.front();
    claim.form = ClaimKeys::kOne;
    claim.keys = {record.identity.key_namespace, record.identity.scope.Encoded(),
                  record.identity.key};
    if (mode == PostgresClaimMode::kAdvisoryLock) {
      claim.identities = {record.identity.Encoded()};
      return claim;
    }
    claim.transaction_ids = {record.transaction_id};
    claim.records = claim.keys;
    claim.records.insert(claim.records.end(),
                         {record.fingerprint, record.transaction_id,
                          absl::StrCat(Micros(record.created_at)),
                          absl::StrCat(Micros(record.expires_at))});
    return claim;
  }
  std::vector<std::string> namespaces, scopes, keys;
  for (const KeyRecord& record : intended) {
    namespaces.push_back(record.identity.key_namespace);
    scopes.push_back(record.identity.scope.Encoded());
    keys.push_back(record.identity.key);
  }
  claim.keys = {TextArray(namespaces), TextArray(scopes), TextArray(keys)};
  if (mode == PostgresClaimMode::kAdvisoryLock) {
    std::vector<std::string> encoded;
    for (const KeyRecord& record : intended) encoded.push_back(record.identity.Encoded());
    claim.identities = {TextArray(encoded)};
    return claim;
  }
  std::vector<std::string> fingerprints, transaction_ids;
  std::vector<int64_t> created_at, expires_at;
  for (const KeyRecord& record : intended) {
    fingerprints.push_back(record.fingerprint);
    transaction_ids.push_back(record.transaction_id);
    created_at.push_back(Micros(record.created_at));
    expires_at.push_back(Micros(record.expires_at));
  }
  claim.transaction_ids = {TextArray(transaction_ids)};
  claim.records = claim.keys;
  claim.records.insert(claim.records.end(),
                       {TextArray(fingerprints), TextArray(transaction_ids),
                        BigintArray(created_at), BigintArray(expires_at)});
  return claim;
}

PipelinedQuery ClaimQuery(const char* name, std::string_view sql,
                          std::vector<PipelineParameter> parameters,
                          const PostgresErrorContext& context) {
  return PipelinedQuery{.statement = name, .sql = sql, .parameters = std::move(parameters),
                        .context = context};
}

// The claim's part of its pipeline: [BEGIN,] [the claim's wait,] the claim in the keys'
// order, [the session's wait back]. `advisory_sql` keeps the advisory statement's text
// (seeded by the session's schema) for its Parse on the session's first claim.
std::vector<PipelinedQuery> ClaimQueries(const PostgresSession& session, PostgresClaimMode mode,
                                         bool begin, absl::Duration wait_max,
                                         const ClaimParameters& claim,
                                         const PostgresErrorContext& context,
                                         std::string& advisory_sql) {
  std::vector<PipelinedQuery> queries;
  if (begin) queries.push_back(BeginQuery(context));
  // A transaction this pipeline begins runs at the session's own lock_timeout, so a
  // claim wait equal to it (the defaults: 10 s each) has nothing to set or put back.
  // Inside a transaction begun earlier (a unit of work's) the caller's SQL may have
  // changed it: the claim then always sets its wait.
  const std::string claim_timeout = ClaimLockTimeout(wait_max);
  const bool sets_wait = !begin || claim_timeout != session.lock_timeout_default;
  if (sets_wait) {
    queries.push_back(ClaimQuery(claim_statement::kSetLockTimeout, kSetLockTimeoutSql,
                                 {claim_timeout}, context));
  }
  if (mode == PostgresClaimMode::kRow) {
    const ClaimStatement insert = InsertRecordsStatement(claim.form);
    const ClaimStatement lock = LockKeyRowsStatement(claim.form);
    queries.push_back(ClaimQuery(insert.name, insert.sql, claim.records, context));
    queries.push_back(ClaimQuery(lock.name, lock.sql, claim.keys, context));
  } else {
    const char* advisory = claim.form == ClaimKeys::kOne ? claim_statement::kAdvisoryLock
                                                         : claim_statement::kAdvisoryLocks;
    if (!session.pipelined_statements.contains(advisory)) {
      advisory_sql = AdvisoryLocksSql(AdvisoryLockSeed(session.schema), claim.form);
    }
    queries.push_back(ClaimQuery(advisory, advisory_sql, claim.identities, context));
  }
  if (sets_wait) {
    queries.push_back(ClaimQuery(claim_statement::kSetLockTimeout, kSetLockTimeoutSql,
                                 {session.lock_timeout_default}, context));
  }
  return queries;
}

// The rows of a claim's read (ReadKeysAndLockAccountsStatement): key rows into `found`,
// account rows into `accounts`.
absl::Status ReadClaimRows(const PGresult* result, ClaimRows rows, ClaimedKeyRows& found,
                           LockedAccountRows& accounts) {
  const int first_account_column = rows == ClaimRows::kAccounts ? 0 : kReadKeysAccountColumn;
  for (int row = 0; row < PQntuples(result); ++row) {
    const bool account = rows == ClaimRows::kAccounts ||
                         (rows == ClaimRows::kKeysThenAccounts && PQgetisnull(result, row, 0) == 1);
    if (account) {
      accounts.emplace_back(
          AccountFromResult(result, row, first_account_column),
          RunningMaxFromResult(result, row, first_account_column + kLockAccountsRunningMaxColumn));
      continue;
    }
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record, KeyRecordFromResult(result, row));
    found.emplace(std::make_tuple(PQgetvalue(result, row, 0), PQgetvalue(result, row, 1),
                                  PQgetvalue(result, row, 2)),
                  std::move(record));
  }
  return absl::OkStatus();
}

// The batch's write statement, as arrays when it would be an inline shape new to a
// session that has prepared its share of them (kInlineWriteShapesPerSessionMax). Such a
// shape is not even built: the process keeps only the inline statements some session
// sent.
const WriteStatement& WriteStatementOn(PostgresSession& session, const PostgresWriteBatch& batch) {
  WriteShape shape = batch.Shape();
  if (!shape.inline_rows.has_value()) return WriteStatementOf(shape);
  if (session.inline_write_shapes >= kInlineWriteShapesPerSessionMax &&
      !session.pipelined_statements.contains(WriteStatementName(shape))) {
    return WriteStatementOf(shape.parts);
  }
  const WriteStatement& statement = WriteStatementOf(shape);
  if (!session.pipelined_statements.contains(statement.name)) {
    ++session.inline_write_shapes;  // prepared by the pipeline below
  }
  return statement;
}

}  // namespace

// ---- the storage transaction ------------------------------------------------------------

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
  auto result = GuardRoundTrip(**lease_, context, body);
  if (!result.ok()) MarkFailed(StatusOf(result));
  return result;
}

void PostgresStorageTransaction::MarkFailed(const absl::Status& status) {
  stage_ = Stage::kFailed;
  failure_ = status;
  if (postgres_internal::ConnectionLost(status) || !(*lease_)->connection().is_open()) {
    lease_->Discard();
  }
}

absl::Status PostgresStorageTransaction::PrepareForStatement() {
  LEDGER_RETURN_IF_ERROR(Usable());
  LEDGER_RETURN_IF_ERROR(ConfirmRememberedRows());  // a read sees only confirmed rows
  if (!begin_sent_) {
    const PostgresErrorContext context{.operation = "begin", .phase = kInTransaction};
    LEDGER_RETURN_IF_ERROR(RoundTrip(context, [&]() -> absl::Status {
      begin_sent_ = true;
      work_->exec(postgres_internal::kBeginReadCommitted);
      return absl::OkStatus();
    }));
  }
  if (!batch_.empty()) return FlushWrites();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<KeyRecord>> PostgresStorageTransaction::ClaimKey(
    const KeyRecord& intended) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<std::optional<KeyRecord>> records, ClaimKeys({intended}));
  return std::move(records.front());
}

void PostgresStorageTransaction::ExpectAccountLocks(const std::vector<std::string>& sorted_ids) {
  LEDGER_CHECK(std::is_sorted(sorted_ids.begin(), sorted_ids.end()) &&
               std::adjacent_find(sorted_ids.begin(), sorted_ids.end()) == sorted_ids.end())
      << "ExpectAccountLocks takes sorted, distinct ids";
  expected_account_ids_ = sorted_ids;
}

// Every key in one round trip (postgres_pipeline.h): BEGIN, the claim in the given
// order (row mode: the final records inserted), the key rows and, after
// ExpectAccountLocks, the accounts' lock unless a key replays (AddReadQueries). Nothing
// is parsed per submit: each statement is prepared once per session.
absl::StatusOr<std::vector<std::optional<KeyRecord>>> PostgresStorageTransaction::ClaimKeys(
    const std::vector<KeyRecord>& intended) {
  if (!batch_.empty()) LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  LEDGER_RETURN_IF_ERROR(Usable());
  const PostgresErrorContext claim_context{.operation = "claim key",
                                           .phase = engine_common::ErrorPhase::kClaim};
  if (ClaimOnRememberedRows(intended)) {
    return std::vector<std::optional<KeyRecord>>(intended.size());  // no record, until checked
  }
  const ClaimParameters claim = ClaimParametersOf(
      claim_mode_, intended, intended.size() == 1 ? ClaimKeys::kOne : ClaimKeys::kMany);
  LEDGER_RETURN_IF_ERROR(ConfirmRememberedRows());
  std::string advisory_sql;  // built only for the session's first claim
  std::vector<PipelinedQuery> queries =
      ClaimQueries(**lease_, claim_mode_, !begin_sent_, options_.wait.wait_max, claim,
                   claim_context, advisory_sql);
  ClaimedKeyRows found;
  PrefetchedLocks prefetched{.ids = std::exchange(expected_account_ids_, {})};
  std::optional<size_t> lock_query;  // the prefetched lock's place in the pipeline
  AddReadQueries(claim, claim_context, queries, lock_query, found, prefetched);
  LEDGER_RETURN_IF_ERROR(RunClaimPipeline(queries, claim_context, lock_query, prefetched));
  return ClaimedRecords(intended, found);
}

// A submit or a batch whose accounts this engine wrote last, in advisory mode: answered
// without a round trip (no record; the remembered rows as the accounts' lock), and
// checked by the server before its write (RememberedRowsCheckSql) or before any other
// statement (ConfirmRememberedRows). Not on a session whose server process is unknown
// (behind a pooler): a lost answer there could not be read back for certain.
bool PostgresStorageTransaction::ClaimOnRememberedRows(const std::vector<KeyRecord>& intended) {
  if (remembered_ == nullptr || !options_.use_remembered_rows || begin_sent_ ||
      !batch_.empty() || expected_account_ids_.empty() || !(*lease_)->backend.has_value()) {
    return false;
  }
  std::optional<LockedAccountRows> rows = remembered_->Find(expected_account_ids_);
  if (!rows.has_value()) return false;
  std::vector<int64_t> versions, balances, pending_debits, pending_credits, closed;
  std::vector<std::optional<int64_t>> running_maxima;
  for (const auto& [account, running_max] : *rows) {
    versions.push_back(account.version);
    balances.push_back(account.balance);
    pending_debits.push_back(account.pending_debits);
    pending_credits.push_back(account.pending_credits);
    closed.push_back(account.closed ? 1 : 0);
    running_maxima.push_back(running_max.has_value() ? std::optional<int64_t>(Micros(*running_max))
                                                     : std::nullopt);
  }
  PostgresSession& session = **lease_;
  if (!session.pipelined_statements.contains(claim_statement::kCheckRememberedRows)) {
    check_sql_ = RememberedRowsCheckSql(AdvisoryLockSeed(session.schema));
  }
  const ClaimParameters claim = ClaimParametersOf(claim_mode_, intended, ClaimKeys::kMany);
  std::vector<PipelineParameter> parameters = claim.identities;
  parameters.insert(parameters.end(), claim.keys.begin(), claim.keys.end());
  parameters.insert(parameters.end(),
                    {TextArray(expected_account_ids_), BigintArray(versions),
                     BigintArray(balances), BigintArray(pending_debits),
                     BigintArray(pending_credits), BigintArray(closed),
                     NullableBigintArray(running_maxima)});
  // Its one wait is the accounts' lock: a failure there is LockAccounts'.
  const PostgresErrorContext context{.operation = "lock accounts", .phase = kInTransaction};
  Unconfirmed unconfirmed{.check = ClaimQuery(claim_statement::kCheckRememberedRows, check_sql_,
                                              std::move(parameters), context),
                          .account_ids = expected_account_ids_};
  unconfirmed.check.refused = [context](std::string_view sql_state, std::string_view detail,
                                        std::string_view message) {
    if (sql_state != kShortWriteSqlState) {
      return StatusFromServerError(context, std::string(sql_state), std::string(message));
    }
    return StaleReadError(absl::StrCat(
        "postgres: the submit was decided on remembered rows that the database does not hold "
        "(key locks taken, key rows, accounts as remembered: ",
        View(detail), "); it runs again, reading them"));
  };
  unconfirmed_ = std::move(unconfirmed);
  prefetched_locks_ = PrefetchedLocks{.ids = std::exchange(expected_account_ids_, {}),
                                      .rows = *std::move(rows)};
  for (const KeyRecord& record : intended) claimed_rows_.ClaimedWithoutRow(record.identity);
  return true;
}

absl::Status PostgresStorageTransaction::ConfirmRememberedRows() {
  if (!unconfirmed_.has_value()) return absl::OkStatus();
  LEDGER_RETURN_IF_ERROR(Usable());
  Unconfirmed unconfirmed = *std::move(unconfirmed_);
  unconfirmed_.reset();
  std::vector<PipelinedQuery> queries;
  queries.push_back(BeginQuery(unconfirmed.check.context));
  queries.push_back(std::move(unconfirmed.check));
  begin_sent_ = true;
  PipelineResult result = RunPipeline(**lease_, queries);
  if (result.discard_session) {
    lease_->Discard();
    if (result.status.ok()) {
      result.status = StatusFromLibpqFailure(queries.back().context, /*connection_lost=*/true,
                                             "the session did not leave pipeline mode");
    }
  }
  return Checked(std::move(result.status), unconfirmed.account_ids);
}

absl::Status PostgresStorageTransaction::Checked(absl::Status status,
                                                 const std::vector<std::string>& account_ids) {
  if (IsStaleRead(status)) {
    remembered_->Refused(account_ids);
  } else if (status.ok()) {
    remembered_->Confirmed();
  }
  if (!status.ok()) MarkFailed(status);
  return status;
}

// After a commit: the rows it wrote, for the next submit on these accounts.
void PostgresStorageTransaction::RememberWritten() {
  if (remembered_ == nullptr || written_.empty()) return;
  LockedAccountRows rows;
  for (auto& [id, account] : written_) {
    rows.emplace_back(std::move(account), batch_.LatestRunningMax(id));
  }
  written_.clear();
  remembered_->Remember(rows);
}

// The key rows and, when the ledger named the accounts, their lock: one statement for
// several keys, two for one (ReadKeysAndLockAccountsStatement). A failure of a statement
// that locks accounts is LockAccounts' (its context and `lock_query`), the claim's
// otherwise.
void PostgresStorageTransaction::AddReadQueries(const ClaimParameters& claim,
                                                const PostgresErrorContext& claim_context,
                                                std::vector<PipelinedQuery>& queries,
                                                std::optional<size_t>& lock_query,
                                                ClaimedKeyRows& found, PrefetchedLocks& prefetched) {
  const bool row_mode = claim_mode_ == PostgresClaimMode::kRow;
  const bool locks = !prefetched.ids.empty();
  const PostgresErrorContext lock_context{.operation = "lock accounts", .phase = kInTransaction};
  auto lock_parameters = [&]() {  // $1 the accounts, $2..$4 the keys, row mode's $5
    std::vector<PipelineParameter> parameters = {TextArray(prefetched.ids)};
    parameters.insert(parameters.end(), claim.keys.begin(), claim.keys.end());
    if (row_mode) {
      parameters.insert(parameters.end(), claim.transaction_ids.begin(),
                        claim.transaction_ids.end());
    }
    return parameters;
  };
  auto add = [&](ClaimStatement statement, std::vector<PipelineParameter> parameters,
                 const PostgresErrorContext& context, ClaimRows rows) {
    PipelinedQuery query = ClaimQuery(statement.name, statement.sql, std::move(parameters), context);
    query.read = [rows, &found, &prefetched](const PGresult* result) {
      return ReadClaimRows(result, rows, found, prefetched.rows);
    };
    queries.push_back(std::move(query));
  };
  if (claim.form == ClaimKeys::kMany) {
    if (locks) lock_query = queries.size();
    add(ReadKeysAndLockAccountsStatement(row_mode), lock_parameters(),
        locks ? lock_context : claim_context, ClaimRows::kKeysThenAccounts);
    return;
  }
  add(ReadKeyStatement(), claim.keys, claim_context, ClaimRows::kKeys);
  if (!locks) return;
  lock_query = queries.size();
  add(LockAccountsUnlessReplayedStatement(row_mode), lock_parameters(), lock_context,
      ClaimRows::kAccounts);
}

absl::Status PostgresStorageTransaction::RunClaimPipeline(
    std::vector<PipelinedQuery>& queries, const PostgresErrorContext& claim_context,
    std::optional<size_t> lock_query, PrefetchedLocks& prefetched) {
  begin_sent_ = true;  // from here on the session may be inside a transaction
  PipelineResult result = RunPipeline(**lease_, queries);
  if (result.discard_session) {
    lease_->Discard();
    if (result.status.ok()) {
      result.status = StatusFromLibpqFailure(claim_context, /*connection_lost=*/true,
                                             "the session did not leave pipeline mode");
    }
  }
  if (!result.status.ok()) {
    MarkFailed(result.status);
    // The claim and the key rows went through; the accounts' lock failed: that is
    // LockAccounts' error, in its phase, and it returns it.
    if (!lock_query.has_value() || result.ran != *lock_query || result.discard_session) {
      return result.status;
    }
    prefetched.rows.clear();
    prefetched.failure = result.status;
    prefetched_locks_ = std::move(prefetched);
  } else if (!prefetched.rows.empty()) {
    prefetched_locks_ = std::move(prefetched);
  }
  return absl::OkStatus();
}

// A row with the claim's own transaction id is the record its INSERT wrote (row mode),
// or, in a unit of work, the one an earlier claim of this transaction wrote and no item
// committed yet: no record either way.
std::vector<std::optional<KeyRecord>> PostgresStorageTransaction::ClaimedRecords(
    const std::vector<KeyRecord>& intended, ClaimedKeyRows& found) {
  std::vector<std::optional<KeyRecord>> records;
  for (const KeyRecord& record_to_be : intended) {
    const KeyIdentity& identity = record_to_be.identity;
    auto row = found.find(
        std::make_tuple(identity.key_namespace, identity.scope.Encoded(), identity.key));
    if (row == found.end()) {
      claimed_rows_.ClaimedWithoutRow(identity);
      records.emplace_back();
      continue;
    }
    std::optional<KeyRecord>& record = row->second;
    if (record.has_value() && record->transaction_id == record_to_be.transaction_id) {
      claimed_rows_.Claimed(record_to_be);
      record.reset();
    } else if (record.has_value() && claimed_rows_.IsClaimedRow(*record)) {
      record.reset();
    }
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<std::optional<Transaction>> PostgresStorageTransaction::LoadTransaction(
    std::string_view id) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return RoundTrip(
      {.operation = "load transaction", .phase = kInTransaction},
      [&]() -> absl::StatusOr<std::optional<Transaction>> {
        LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> found,
                                postgres_internal::TransactionsFromRows(work_->exec_prepared(
                                    statement::kSelectTransaction, std::string(id))));
        if (found.empty()) return std::nullopt;
        return std::move(found.front());
      });
}

absl::StatusOr<std::vector<Transaction>> PostgresStorageTransaction::LoadTransactions(
    const std::vector<std::string>& ids) {
  if (ends_with_next_read_ && begin_sent_ && batch_.empty()) return LoadTransactionsAndEnd(ids);
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return RoundTrip({.operation = "load transactions", .phase = kInTransaction},
                   [&]() -> absl::StatusOr<std::vector<Transaction>> {
                     return postgres_internal::TransactionsFromRows(work_->exec_prepared(
                         statement::kSelectTransactions,
                         postgres_internal::TextArrayLiteral(ids)));
                   });
}

// A replay's last read: nothing was written and nothing follows (ExpectNoWrites), so
// ROLLBACK rides behind it and the resend costs one round trip less. A refused read
// leaves the transaction open and failed, for Rollback as any failure does. Once the
// read answered, a failed ROLLBACK costs the session only, as Rollback's does.
absl::StatusOr<std::vector<Transaction>> PostgresStorageTransaction::LoadTransactionsAndEnd(
    const std::vector<std::string>& ids) {
  LEDGER_RETURN_IF_ERROR(Usable());
  const PostgresErrorContext context{.operation = "load transactions", .phase = kInTransaction};
  std::optional<absl::StatusOr<std::vector<Transaction>>> loaded;  // set once the read answers
  std::vector<PipelinedQuery> queries(2);
  queries[0] = {.statement = postgres_internal::kSelectTransactionsStatement,
                .sql = postgres_internal::SelectTransactionsSql(),
                .parameters = {PipelineParameter(TextArray(ids))},
                .context = context,
                .read = [&loaded](const PGresult* rows) {
                  loaded = postgres_internal::TransactionsFromResult(rows);
                  return loaded->status();
                }};
  queries[1] = {.statement = postgres_internal::kRollbackStatement,
                .sql = postgres_internal::kRollback,
                .context = {.operation = "rollback", .phase = kInTransaction}};
  PipelineResult result = RunPipeline(**lease_, queries);
  const bool read = loaded.has_value() && loaded->ok();
  if (!read) {
    if (result.discard_session) lease_->Discard();
    absl::Status failed = !result.status.ok() ? result.status
                          : loaded.has_value() ? loaded->status()
                                               : StatusFromLibpqFailure(
                                                     context, /*connection_lost=*/true,
                                                     "the read of the transactions went unanswered");
    MarkFailed(failed);
    return failed;
  }
  // Rolled back, or the session goes (a ROLLBACK that failed, a session not idle again).
  if (!result.status.ok() || result.discard_session) lease_->Discard();
  stage_ = Stage::kEnded;  // Rollback has nothing left to end
  Release();
  return *std::move(loaded);
}

absl::StatusOr<bool> PostgresStorageTransaction::IsReversed(std::string_view id) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "check reversal", .phase = kInTransaction};
  return RoundTrip(context, [&]() -> absl::StatusOr<bool> {
    return work_->exec_prepared(statement::kIsReversed, std::string(id))[0][0].as<bool>();
  });
}

void PostgresStorageTransaction::NoteLocked(const Account& account,
                                            std::optional<absl::Time> running_max) {
  locked_accounts_[account.id] = {account.version, account.pending_debits,
                                  account.pending_credits};
  // The same read carries the account's entries_running_max for the entries it takes.
  batch_.NoteLocked(account.id, running_max);
}

absl::StatusOr<std::vector<Account>> PostgresStorageTransaction::LockAccounts(
    const std::vector<std::string>& sorted_ids) {
  // The claim's round trip locked these accounts already (ExpectAccountLocks): its
  // rows, or its failure, are the answer. Ids it did not lock go to the server.
  if (std::optional<PrefetchedLocks> prefetched = std::exchange(prefetched_locks_, std::nullopt)) {
    if (!prefetched->failure.ok()) return prefetched->failure;
    if (std::includes(prefetched->ids.begin(), prefetched->ids.end(), sorted_ids.begin(),
                      sorted_ids.end())) {
      LEDGER_RETURN_IF_ERROR(Usable());
      std::vector<Account> accounts;
      for (auto& [account, running_max] : prefetched->rows) {
        if (!std::binary_search(sorted_ids.begin(), sorted_ids.end(), account.id)) continue;
        NoteLocked(account, running_max);
        accounts.push_back(std::move(account));
      }
      return accounts;
    }
  }
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "lock accounts", .phase = kInTransaction};
  return RoundTrip(context, [&]() -> absl::StatusOr<std::vector<Account>> {
    const pqxx::result rows = work_->exec_prepared(statement::kLockAccounts,
                                                   postgres_internal::TextArrayLiteral(sorted_ids));
    std::vector<Account> accounts;
    for (const pqxx::row& row : rows) {
      accounts.push_back(postgres_internal::AccountFromRow(row));
      const pqxx::field running_max = row[postgres_internal::kLockAccountsRunningMaxColumn];
      NoteLocked(accounts.back(),
                 running_max.is_null()
                     ? std::nullopt
                     : std::optional<absl::Time>(
                           postgres_internal::TimeFromMicros(running_max.as<int64_t>())));
    }
    return accounts;
  });
}

absl::StatusOr<DebitUsage> PostgresStorageTransaction::LoadDebitUsage(std::string_view account_id,
                                                                      absl::Time since) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "load debit usage", .phase = kInTransaction};
  return RoundTrip(context, [&]() -> absl::StatusOr<DebitUsage> {
    const pqxx::row row = work_->exec_prepared1(statement::kDebitUsage, std::string(account_id),
                                                postgres_internal::Micros(since));
    return DebitUsage{row[0].as<int64_t>(), row[1].as<int64_t>()};
  });
}

// Read committed: after LockAccounts no settlement of these holds can commit any more
// (each locks both of the hold's accounts first), so the second read is final.
absl::StatusOr<std::vector<Hold>> PostgresStorageTransaction::LoadHolds(
    const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<Hold>();
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "load holds", .phase = kInTransaction};
  return RoundTrip(context, [&]() -> absl::StatusOr<std::vector<Hold>> {
    return postgres_internal::HoldsFromRows(work_->exec_prepared(
        statement::kSelectHolds, postgres_internal::TextArrayLiteral(ids)));
  });
}

absl::StatusOr<PendingHoldTotals> PostgresStorageTransaction::LoadHoldTotals(
    std::string_view account_id, absl::Time now, absl::Time since) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "load hold totals", .phase = kInTransaction};
  return RoundTrip(context, [&]() -> absl::StatusOr<PendingHoldTotals> {
    return postgres_internal::HoldTotalsFromRow(
        work_->exec_prepared1(statement::kHoldTotals, std::string(account_id),
                              postgres_internal::Micros(now), postgres_internal::Micros(since)));
  });
}

// Buffered until Commit (postgres_write_batch.h); a hold or a settlement only adds parts to
// the batch's statement there.
absl::Status PostgresStorageTransaction::WriteTransaction(
    const Transaction& transaction, const std::vector<Account>& updated_accounts) {
  LEDGER_RETURN_IF_ERROR(Usable());
  // A caller of the storage contract that skipped LockAccounts: its accounts are locked
  // (and their running maxima read) now.
  if (std::vector<std::string> unnoted = batch_.Unnoted(transaction); !unnoted.empty()) {
    LEDGER_RETURN_IF_ERROR(LockAccounts(unnoted).status());
  }
  if (remembered_ != nullptr) {
    for (const Account& account : updated_accounts) written_.insert_or_assign(account.id, account);
  }
  return batch_.AddTransaction(transaction, updated_accounts, locked_accounts_);
}

absl::Status PostgresStorageTransaction::RecordKey(const KeyRecord& record) {
  LEDGER_RETURN_IF_ERROR(Usable());
  if (!commit_witness_.has_value()) commit_witness_ = record;
  // The row this transaction's claim inserted (row mode) holds the record already,
  // unless another item than the one the claim was told of commits the key. Recorded
  // either way: in a unit of work the batch may go out before COMMIT, and COMMIT must
  // not drop the row.
  using RecordKind = engine_common::ClaimedRowTracker::RecordKind;
  const auto [kind, claimed] = claimed_rows_.Record(record);
  if (kind == RecordKind::kNothingToSend) return absl::OkStatus();
  if (kind == RecordKind::kRewrite) return RewriteClaimedRow(*claimed, record);
  batch_.AddKeyRecord(record, kind != RecordKind::kClaimedWithoutRow);
  return absl::OkStatus();
}

// Rare (a batch's second item of a key, a unit of work's second submit of it): a
// round trip of its own, not a part of every write statement.
absl::Status PostgresStorageTransaction::RewriteClaimedRow(const KeyRecord& claimed,
                                                           const KeyRecord& record) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  const PostgresErrorContext context{.operation = "record key",
                                     .phase = engine_common::ErrorPhase::kWrite};
  return RoundTrip(context, [&]() -> absl::Status {
    const pqxx::result rewritten = work_->exec_params(
        kRewriteClaimedKeySql, record.fingerprint, record.transaction_id,
        Micros(record.created_at), Micros(record.expires_at), claimed.identity.key_namespace,
        claimed.identity.scope.Encoded(), claimed.identity.key, claimed.transaction_id);
    if (rewritten.affected_rows() != 1) {
      return absl::InternalError(absl::StrCat("postgres: rewrote ", rewritten.affected_rows(),
                                              " rows over the key row this transaction claimed"));
    }
    return absl::OkStatus();
  });
}

absl::Status PostgresStorageTransaction::AppendEvent(const OutboxEvent& event) {
  LEDGER_RETURN_IF_ERROR(Usable());
  batch_.AddEvent(event);
  return absl::OkStatus();
}

// Unique violations here (a transaction id, reversal_of or hold_id taken) are RetryableError
// (the error table's "write" phase): the inputs were checked under the account locks,
// so a violation means a concurrent writer won a race; the retry re-checks.
absl::Status PostgresStorageTransaction::FlushWrites() {
  LEDGER_RETURN_IF_ERROR(SendWrites(/*commit=*/false));
  batch_.Clear();
  return absl::OkStatus();
}

absl::Status PostgresStorageTransaction::SendCommit() {
  const PostgresErrorContext context{.operation = "commit", .phase = engine_common::ErrorPhase::kCommit};
  // The server answers a COMMIT of a failed transaction with ROLLBACK and no error,
  // and libpqxx 6 does not expose the command tag: Usable() guarantees that no
  // statement of this transaction failed before we get here.
  return RoundTrip(context, [&]() -> absl::Status {
    work_->exec(postgres_internal::kCommit);
    return absl::OkStatus();
  });
}

// The writes [and COMMIT] in one round trip (postgres_pipeline.h), as the statement of
// the batch's parts. A failure leaves the transaction failed, as RoundTrip's do.
absl::Status PostgresStorageTransaction::SendWrites(bool commit) {
  LEDGER_RETURN_IF_ERROR(Usable());
  const bool begin = !std::exchange(begin_sent_, true);
  std::optional<Unconfirmed> unconfirmed = std::exchange(unconfirmed_, std::nullopt);
  std::vector<PipelinedQuery> ahead;
  if (unconfirmed.has_value()) ahead.push_back(std::move(unconfirmed->check));
  const size_t check_index = begin ? 1 : 0;  // the check's place, after any BEGIN
  PipelineResult result = postgres_internal::SendWrite(
      **lease_, {.begin = begin,
                 .ahead = std::move(ahead),
                 .commit = commit,
                 .statement = &WriteStatementOn(**lease_, batch_),
                 .parameters = batch_.Parameters(),
                 .short_write = [this](std::string_view applied) {
                   return batch_.CheckAppliedText(applied);
                 }});
  if (result.discard_session) lease_->Discard();
  if (unconfirmed.has_value()) {
    // Its claim held the key only once the check's answer came back (a failed send
    // answers nothing, whatever it had sent).
    claim_held_at_commit_ = result.answered > check_index;
    return Checked(std::move(result.status), unconfirmed->account_ids);
  }
  if (!result.status.ok()) MarkFailed(result.status);
  return result.status;
}

absl::Status PostgresStorageTransaction::Commit() {
  LEDGER_RETURN_IF_ERROR(Usable());
  // A rejected item of a committed batch leaves its key unused: the row its claim
  // inserted (row mode) goes, in the write statement.
  for (const KeyRecord& claimed : claimed_rows_.TakeUnrecorded()) {
    batch_.DropUnusedClaim(claimed.identity);
  }
  if (!batch_.empty()) {
    if (absl::Status committed = SendWrites(/*commit=*/true); !committed.ok()) {
      return Resolved(std::move(committed));
    }
    RememberWritten();
    stage_ = Stage::kEnded;
    Release();
    return absl::OkStatus();
  }
  if (absl::Status confirmed = ConfirmRememberedRows(); !confirmed.ok()) {
    Rollback();
    return confirmed;
  }
  if (begin_sent_) {  // nothing buffered: COMMIT alone
    if (absl::Status committed = SendCommit(); !committed.ok()) {
      return Resolved(std::move(committed));
    }
  }
  RememberWritten();  // a unit of work's writes, flushed before its COMMIT
  stage_ = Stage::kEnded;
  Release();
  return absl::OkStatus();
}

// Only a lost answer is read back: a COMMIT the server answered with an error keeps
// the error table's meaning (in doubt, docs/engines/errors.md).
absl::Status PostgresStorageTransaction::Resolved(absl::Status status) {
  const bool answer_lost = !(*lease_)->connection().is_open();
  const std::optional<ServerBackend> backend = (*lease_)->backend;
  Rollback();  // no-op on a lost connection: the lease is then discarded
  if (!IsInDoubt(status) || !answer_lost || engine_ == nullptr || !commit_witness_.has_value()) {
    return status;
  }
  return engine_->ResolveInDoubtCommit(*commit_witness_, status, claim_held_at_commit_, backend);
}

void PostgresStorageTransaction::Rollback() {
  if (stage_ == Stage::kEnded) return;
  if (begin_sent_ && lease_.has_value() && !lease_->discarded()) {
    absl::Status rolled_back =
        GuardRoundTrip(**lease_, {.operation = "rollback"}, [&]() -> absl::Status {
      work_->exec(postgres_internal::kRollback);
      return absl::OkStatus();
    });
    // A session in an unknown state must not serve the next transaction.
    if (!rolled_back.ok()) lease_->Discard();
  }
  stage_ = Stage::kEnded;
  Release();
}

// A decision to write nothing stands only once the rows it was made on are confirmed.
absl::Status PostgresStorageTransaction::EndWithoutWrites() {
  absl::Status confirmed = ConfirmRememberedRows();
  Rollback();
  return confirmed;
}

absl::StatusOr<SqlRows> PostgresStorageTransaction::RunCallerSql(
    std::string_view sql, const std::vector<SqlValue>& parameters) {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());  // BEGIN, and the ledger's writes first
  return RoundTrip({.operation = "unit of work statement", .phase = kInTransaction},
                   [&]() -> absl::StatusOr<SqlRows> {
                     return postgres_internal::RunCallerSqlOn(*work_, sql, parameters);
                   });
}

absl::StatusOr<void*> PostgresStorageTransaction::NativeHandle() {
  LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  return static_cast<void*>(&*work_);
}

absl::StatusOr<bool> PostgresStorageTransaction::StillUsable() {
  LEDGER_RETURN_IF_ERROR(Usable());
  if (!begin_sent_) return true;
  if (!batch_.empty()) LEDGER_RETURN_IF_ERROR(PrepareForStatement());
  // A statement the caller ran through the native handle may have aborted the
  // transaction, and COMMIT would then answer ROLLBACK without an error: ask first.
  absl::Status probe = RoundTrip({.operation = "check the unit of work's transaction",
                                  .phase = kInTransaction},
                                 [&]() -> absl::Status {
                                   work_->exec(postgres_internal::kProbeTransaction);
                                   return absl::OkStatus();
                                 });
  return probe.ok();
}

void PostgresStorageTransaction::Release() {
  batch_.Clear();
  work_.reset();  // the pqxx handle goes before its connection returns to the pool
  lease_.reset();
}

// ---- the engine ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<StorageTransaction>> PostgresEngine::Begin(
    const BeginOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(
      PooledConnection lease,
      pool_->Acquire(engine_common::PoolAcquireWait(options.wait.wait_max, pool_acquire_wait_)));
  auto transaction =
      std::make_unique<PostgresStorageTransaction>(
          std::move(lease), claim_mode_, options, remembered_rows_.get(), this);
  LEDGER_RETURN_IF_ERROR(transaction->Open());
  return transaction;
}

// A COMMIT whose answer was lost committed exactly when the witness's key row holds its
// transaction id; the row says so once the transaction has ended, and its session can
// run nothing more. Known two ways, on a new session:
// - The lost session's server process (`backend`, when the connection reached it
//   directly) is ended first, waiting at most account_lock_wait: once it is gone, its
//   transaction has ended, and whatever was still on its way to it (a pipeline whose
//   answer never came) will never run. A server that cannot see it go (a network that
//   drops the lost connection's packets keeps it idle in its transaction for as long as
//   TCP keepalives allow) is thus not waited for.
// - The witness's key is claimed, as a submit does: the claim waits (bounded by
//   account_lock_wait) for the key's advisory lock or row that the transaction holds
//   from its claim until it ends. In row mode the claim inserts a row of its own
//   (another transaction id) where none is; it is rolled back.
//
// `claim_held` false: the claim rode in COMMIT's own pipeline (one round trip, on
// remembered rows) and its answer was lost too. Unless its server process was seen to
// end, the pipeline may still be on its way and take the key after this read: a missing
// row then proves nothing, and the answer stays in doubt. A row with the transaction id
// is proof either way.
absl::Status PostgresEngine::ResolveInDoubtCommit(const KeyRecord& witness,
                                                  const absl::Status& in_doubt, bool claim_held,
                                                  const std::optional<ServerBackend>& backend) {
  // A new connection (bounded by connect_timeout), not an idle one a frozen server
  // would hold for read_timeout; no remembered rows, no resolver of its own.
  absl::StatusOr<PooledConnection> lease = pool_->AcquireFresh();
  if (!lease.ok()) return in_doubt;
  const bool session_ended =
      backend.has_value() && EndServerBackend(**lease, *backend, account_lock_wait_);
  PostgresStorageTransaction reader(*std::move(lease), claim_mode_,
                                    {.wait = WaitPolicy{account_lock_wait_}});
  if (!reader.Open().ok()) return in_doubt;
  KeyRecord claim = witness;
  claim.transaction_id = absl::StrCat(witness.transaction_id, "/in-doubt-read");
  absl::StatusOr<std::optional<KeyRecord>> found = reader.ClaimKey(claim);
  reader.Rollback();
  if (!found.ok()) return in_doubt;
  if (found->has_value() && (*found)->transaction_id == witness.transaction_id) {
    return absl::OkStatus();
  }
  if (!claim_held && !session_ended) return in_doubt;
  return absl::UnavailableError(absl::StrCat(
      in_doubt.message(), "; the key's row, read on a new session once the transaction "
      "ended, shows it did not commit: nothing was written"));
}

// Migrations run on a pooled connection (postgres_migrations.h), with the session's
// waits and reply deadline, as every other round trip.
absl::Status PostgresEngine::Migrate() {
  LEDGER_ASSIGN_OR_RETURN(PooledConnection lease, pool_->Acquire());
  absl::Status migrated = MigrateDatabase(*lease, PostgresMigrations(), migration_lock_wait_);
  // Closed, never pooled: that releases the advisory lock whatever state the session was
  // left in.
  lease.Discard();
  return migrated;
}

}  // namespace postgres_internal

static_assert(PostgresOptions().pool_acquire_wait == engine_common::kPoolAcquireWaitDefault);
static_assert(PostgresOptions().connect_timeout == engine_common::kConnectTimeoutDefault);
static_assert(PostgresOptions().account_lock_wait == engine_common::kAccountLockWaitDefault);
static_assert(PostgresOptions().statement_timeout == engine_common::kStatementTimeoutDefault);
static_assert(PostgresOptions().read_timeout == engine_common::kReadTimeoutDefault);
static_assert(PostgresOptions().migration_lock_wait ==
              engine_common::kMigrationLockWaitDefault);

absl::StatusOr<std::unique_ptr<Engine>> OpenPostgresEngine(const PostgresOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(postgres_internal::ParsedPostgresConnection parsed,
                          postgres_internal::ParsePostgresConnection(options));
  const PostgresOptions& resolved = parsed.options;  // the URI's parameters applied
  LEDGER_ASSIGN_OR_RETURN(
      std::shared_ptr<postgres_internal::PostgresConnectionPool> pool,
      postgres_internal::CreatePostgresConnectionPool(
          parsed.connection, resolved.pool_size, resolved.pool_acquire_wait,
          {.connect_timeout = resolved.connect_timeout,
           .account_lock_wait = resolved.account_lock_wait,
           .statement_timeout = resolved.statement_timeout,
           .read_timeout = resolved.read_timeout},
          [schema = resolved.schema](postgres_internal::PostgresSession& session) {
            return postgres_internal::SetUpSession(session, schema);
          }));
  {
    // The first connection proves the connection string and the server.
    LEDGER_ASSIGN_OR_RETURN(postgres_internal::PooledConnection first, pool->Acquire());
  }
  auto engine = std::make_unique<postgres_internal::PostgresEngine>(
      std::move(pool), resolved.claim_mode, resolved.pool_acquire_wait,
      resolved.migration_lock_wait, resolved.account_lock_wait, resolved.schema,
      resolved.one_round_trip && resolved.claim_mode == PostgresClaimMode::kAdvisoryLock);
  if (options.migrate) LEDGER_RETURN_IF_ERROR(engine->Migrate());
  return engine;
}

}  // namespace ledger
