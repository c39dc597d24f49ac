// Behaviour of the SQLite engine beyond the shared conformance suite: durability in
// its file, WAL mode, migrations (idempotent, concurrent), the writer lock as the
// claim, and the connection pool's hygiene.
#include "engines/sqlite/sqlite_engine.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "engines/sqlite/sqlite_checkpointer.h"
#include "engines/sqlite/sqlite_connection.h"
#include "engines/sqlite/sqlite_connection_pool.h"
#include "engines/sqlite/sqlite_engine_internal.h"
#include "engines/sqlite/sqlite_errors.h"
#include "engines/sqlite/sqlite_migrations.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "tests/support/claims.h"
#include "tests/engines/sqlite/sqlite_file_test.h"
#include "tests/support/open_ledger.h"

namespace ledger {
namespace {

using testing::RawConnection;

const absl::Time kNow = absl::FromUnixSeconds(1'767'225'600);

class SqliteEngineTest : public testing::SqliteFileTest {
 protected:
  SqliteEngineTest() : SqliteFileTest("ledger-sqlite-test") {}

  // USD, an issuance account that may go negative and a user wallet.
  static void Seed(Engine& engine) {
    ASSERT_TRUE(engine.PutAsset({"USD", 2}).ok());
    Account issuance{.id = "issuance", .asset = "USD", .allow_negative = true, .created_at = kNow};
    Account wallet{.id = "wallet", .asset = "USD", .created_at = kNow};
    ASSERT_TRUE(engine.InsertAccount(issuance).ok());
    ASSERT_TRUE(engine.InsertAccount(wallet).ok());
  }

  static KeyIdentity Identity(const std::string& key) {
    return KeyIdentity{"top_up", Scope{"acme", "user-1"}, key};
  }

  // One submit's worth of storage calls, straight on the engine: claim, lock, post
  // `amount` from issuance to wallet, record the key and the event, commit.
  static absl::StatusOr<Transaction> PostTopUp(Engine& engine, const std::string& key,
                                               Amount amount) {
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> storage,
                            engine.Begin(BeginOptions{}));
    return PostTopUpOn(*storage, key, amount);
  }

  // The same on a transaction the caller began.
  static absl::StatusOr<Transaction> PostTopUpOn(StorageTransaction& storage,
                                                 const std::string& key, Amount amount) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> existing, storage.ClaimKey(ClaimOf(Identity(key))));
    if (existing.has_value()) return absl::AlreadyExistsError("key already recorded");
    LEDGER_ASSIGN_OR_RETURN(std::vector<Account> accounts,
                            storage.LockAccounts({"issuance", "wallet"}));
    if (accounts.size() != 2) return absl::NotFoundError("accounts missing");
    Account& issuance = accounts[0];
    Account& wallet = accounts[1];
    issuance.balance -= amount;
    wallet.balance += amount;
    ++issuance.version;
    ++wallet.version;
    Transaction transaction;
    transaction.id = NewTransactionId(kNow);
    transaction.kind = OperationKind::kTopUp;
    transaction.created_at = kNow;
    transaction.metadata = R"({"order":"A-1"})";
    transaction.fingerprint = "f00d";
    transaction.entries = {
        Entry{"issuance", "USD", -amount, issuance.balance, issuance.version},
        Entry{"wallet", "USD", amount, wallet.balance, wallet.version},
    };
    LEDGER_RETURN_IF_ERROR(storage.WriteTransaction(transaction, accounts));
    LEDGER_RETURN_IF_ERROR(storage.RecordKey(
        KeyRecord{Identity(key), "f00d", transaction.id, kNow, kNow + absl::Hours(24)}));
    LEDGER_RETURN_IF_ERROR(storage.AppendEvent(
        OutboxEvent{0, transaction.id, "transaction.committed", R"({"id":1})", kNow}));
    LEDGER_RETURN_IF_ERROR(storage.Commit());
    return transaction;
  }

};

TEST_F(SqliteEngineTest, StateSurvivesClosingAndReopeningTheFile) {
  Transaction posted;
  std::vector<KeyRecord> keys_before;
  std::vector<OutboxEvent> events_before;
  {
    std::unique_ptr<Engine> engine = Open(path_);
    ASSERT_NE(engine, nullptr);
    Seed(*engine);
    absl::StatusOr<Transaction> transaction = PostTopUp(*engine, "order-1", 500);
    ASSERT_TRUE(transaction.ok()) << transaction.status();
    posted = *transaction;
    keys_before = engine->ListKeyRecords(std::nullopt, 100).value();
    events_before = engine->ListEvents(0, 100).value();
  }
  std::unique_ptr<Engine> reopened = Open(path_);
  ASSERT_NE(reopened, nullptr);

  absl::StatusOr<std::optional<Account>> wallet = reopened->GetAccount("wallet");
  ASSERT_TRUE(wallet.ok()) << wallet.status();
  ASSERT_TRUE(wallet->has_value());
  EXPECT_EQ((*wallet)->balance, 500);
  EXPECT_EQ((*wallet)->version, 1);
  EXPECT_EQ((*wallet)->created_at, kNow);
  absl::StatusOr<std::optional<Transaction>> transaction = reopened->GetTransaction(posted.id);
  ASSERT_TRUE(transaction.ok()) << transaction.status();
  EXPECT_EQ(*transaction, posted);
  absl::StatusOr<std::vector<KeyRecord>> keys = reopened->ListKeyRecords(std::nullopt, 100);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ(*keys, keys_before);
  EXPECT_EQ((*keys)[0].identity, Identity("order-1"));
  EXPECT_EQ((*keys)[0].transaction_id, posted.id);
  absl::StatusOr<std::vector<OutboxEvent>> events = reopened->ListEvents(0, 100);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(*events, events_before);
  EXPECT_EQ((*events)[0].transaction_id, posted.id);
  EXPECT_GT((*events)[0].sequence, 0);
}

TEST_F(SqliteEngineTest, DatabaseIsInWriteAheadLogMode) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  RawConnection raw(path_);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw.QueryText("PRAGMA journal_mode"), "wal");
}

TEST_F(SqliteEngineTest, MigrateIsIdempotentAndRecordsEachVersionOnce) {
  std::unique_ptr<Engine> engine = Open(path_, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  ASSERT_TRUE(engine->Migrate().ok());
  std::unique_ptr<Engine> second = Open(path_, /*migrate=*/true);  // a third time
  ASSERT_NE(second, nullptr);

  RawConnection raw(path_);
  ASSERT_TRUE(raw.ok());
  const std::vector<Migration> migrations = SqliteMigrations();
  ASSERT_FALSE(migrations.empty());
  EXPECT_EQ(raw.QueryText("SELECT COUNT(*) FROM schema_migrations"),
            std::to_string(migrations.size()));
  EXPECT_EQ(raw.QueryText("SELECT name FROM schema_migrations WHERE version = 1"), "0001_initial");
  EXPECT_NE(raw.QueryText("SELECT applied_at FROM schema_migrations WHERE version = 1"), "0");
  EXPECT_TRUE(engine->ListAssets().ok());
}

TEST_F(SqliteEngineTest, TwoEnginesMigratingANewFileConcurrentlyBothSucceed) {
  constexpr int kRounds = 10;  // each round a brand-new file: the race is at creation
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = (folder_ / absl::StrCat("race-", round, ".db")).string();
    absl::Barrier start(2);
    absl::Status results[2];
    auto open_and_migrate = [&](int index) {
      SqliteOptions options;
      options.path = path;
      options.migrate = true;
      start.Block();
      absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine(options);
      results[index] = engine.status();
    };
    std::thread first(open_and_migrate, 0);
    std::thread second(open_and_migrate, 1);
    first.join();
    second.join();
    EXPECT_TRUE(results[0].ok()) << "round " << round << ": " << results[0];
    EXPECT_TRUE(results[1].ok()) << "round " << round << ": " << results[1];
    RawConnection raw(path);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(raw.QueryText("SELECT COUNT(*) FROM schema_migrations"),
              std::to_string(SqliteMigrations().size()));
  }
}

// An open waits for the database's write lock (its migrations) at most busy_timeout:
// another process holding it yields a bounded, retryable error, not a hang.
TEST_F(SqliteEngineTest, AnOpenWhileAnotherConnectionHoldsTheWriteLockFailsWithinTheBusyTimeout) {
  ASSERT_NE(Open(path_), nullptr);
  RawConnection other(path_);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");
  SqliteOptions options;
  options.path = path_;
  options.busy_timeout = absl::Milliseconds(500);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine(options);
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_EQ(other.Execute("ROLLBACK"), "ok");
  EXPECT_TRUE(IsRetryable(engine.status())) << engine.status();
  // A correctness bound, not a speed test: generous for a loaded machine.
  EXPECT_LT(elapsed, options.busy_timeout + absl::Seconds(4));
  EXPECT_GE(elapsed, options.busy_timeout);  // it did wait for the lock first
  EXPECT_TRUE(OpenSqliteEngine(options).ok());
}

TEST_F(SqliteEngineTest, FailFastClaimWhileAnotherConnectionHoldsTheWriteLockIsInProgress) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  RawConnection other(path_);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");

  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage =
        engine->Begin(BeginOptions{WaitPolicy::FailFast()});
    ASSERT_TRUE(storage.ok()) << storage.status();
    absl::StatusOr<std::optional<KeyRecord>> claim = (*storage)->ClaimKey(ClaimOf(Identity("order-1")));
    EXPECT_TRUE(IsInProgress(claim.status())) << claim.status();
  }

  ASSERT_EQ(other.Execute("ROLLBACK"), "ok");
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage =
      engine->Begin(BeginOptions{WaitPolicy::FailFast()});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::optional<KeyRecord>> claim = (*storage)->ClaimKey(ClaimOf(Identity("order-1")));
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_FALSE(claim->has_value());
}

TEST_F(SqliteEngineTest, BoundedClaimWaitForAnotherProcessEndsInProgress) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  RawConnection other(path_);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");

  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage =
      engine->Begin(BeginOptions{WaitPolicy{absl::Milliseconds(20)}});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::optional<KeyRecord>> claim = (*storage)->ClaimKey(ClaimOf(Identity("order-1")));
  EXPECT_TRUE(IsInProgress(claim.status())) << claim.status();
  ASSERT_EQ(other.Execute("ROLLBACK"), "ok");
}

TEST_F(SqliteEngineTest, WaitingClaimGetsTheLockOnceAnotherProcessReleasesIt) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  RawConnection other(path_);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");

  absl::Notification began;
  absl::StatusOr<std::optional<KeyRecord>> claim;
  std::thread waiter([&] {
    std::unique_ptr<StorageTransaction> storage =
        engine->Begin(BeginOptions{WaitPolicy{absl::Minutes(1)}}).value();
    began.Notify();
    claim = storage->ClaimKey(ClaimOf(Identity("order-1")));  // waits in SQLite's busy handler
  });
  began.WaitForNotification();
  ASSERT_EQ(other.Execute("ROLLBACK"), "ok");  // before or during the wait: same result
  waiter.join();
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_FALSE(claim->has_value());
}

TEST_F(SqliteEngineTest, FailFastSubmitWhileAnotherConnectionHoldsTheWriteLockIsInProgress) {
  auto engine = std::shared_ptr<Engine>(Open(path_));
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  Ledger book = ledger::testing::OpenTestLedger(engine);
  SubmitRequest request;
  request.key = "order-1";
  request.operation = Operation::TopUp("issuance", "wallet", "USD", 500);
  request.claim.wait = WaitPolicy::FailFast();
  RawConnection other(path_);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");

  absl::StatusOr<Outcome> blocked = book.Submit(request);
  EXPECT_TRUE(IsInProgress(blocked.status())) << blocked.status();

  ASSERT_EQ(other.Execute("ROLLBACK"), "ok");
  absl::StatusOr<Outcome> committed = book.Submit(request);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->kind, OutcomeKind::kCommitted) << OutcomeToJson(*committed).dump();
}

TEST_F(SqliteEngineTest, ReadersSeeTheLastCommitWhileAWriterHoldsTheLock) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  ASSERT_TRUE(PostTopUp(*engine, "order-1", 500).ok());
  absl::StatusOr<std::unique_ptr<StorageTransaction>> writer = engine->Begin(BeginOptions{});
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->ClaimKey(ClaimOf(Identity("order-2"))).ok());  // the writer lock is held

  // WAL: a reader neither waits for the writer nor sees its uncommitted work.
  absl::StatusOr<std::optional<Account>> wallet = engine->GetAccount("wallet");
  ASSERT_TRUE(wallet.ok()) << wallet.status();
  EXPECT_EQ((*wallet)->balance, 500);
  (*writer)->Rollback();
}

// Every write runs on the engine's one writer connection, whose page cache survives from
// one write transaction to the next. In WAL mode a connection drops its whole cache when
// another connection has committed since its last transaction, and the group committer's
// two transactions in flight, begun together, used to write through two pooled
// connections in turn, each re-reading every page the other's commit left behind
// (docs/benchmarks.md, "One writer connection"). Counted with SQLite's own cache-miss
// counter of the connection each transaction writes on.
TEST_F(SqliteEngineTest, WritesOfTransactionsBegunTogetherKeepOnePageCacheWarm) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  // Posts on `storage` (begun earlier) and answers how many pages its connection read
  // from the file meanwhile (not from its page cache).
  auto post_counting_misses = [](StorageTransaction& storage,
                                 const std::string& key) -> absl::StatusOr<int> {
    LEDGER_ASSIGN_OR_RETURN(void* handle, storage.NativeHandle());  // begins: the turn
    sqlite3* database = static_cast<sqlite3*>(handle);
    int misses = 0;
    int highwater = 0;
    sqlite3_db_status(database, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highwater, /*reset=*/1);
    LEDGER_RETURN_IF_ERROR(PostTopUpOn(storage, key, 100).status());
    sqlite3_db_status(database, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highwater, /*reset=*/0);
    return misses;
  };
  constexpr int kWarmRounds = 1;
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::unique_ptr<StorageTransaction>> together;
    for (int slot = 0; slot < 2; ++slot) {
      absl::StatusOr<std::unique_ptr<StorageTransaction>> begun = engine->Begin(BeginOptions{});
      ASSERT_TRUE(begun.ok()) << begun.status();
      together.push_back(*std::move(begun));
    }
    for (int slot = 0; slot < 2; ++slot) {
      absl::StatusOr<int> misses =
          post_counting_misses(*together[slot], absl::StrCat("order-", round, "-", slot));
      ASSERT_TRUE(misses.ok()) << misses.status();
      // The first round reads the pages once; afterwards every page a write needs is
      // still in the cache, whichever transaction committed last.
      if (round >= kWarmRounds) {
        EXPECT_EQ(*misses, 0) << "round " << round << ", slot " << slot;
      }
    }
    // A reader between the rounds (a pooled connection) does not disturb the cache.
    absl::StatusOr<std::optional<Account>> wallet = engine->GetAccount("wallet");
    ASSERT_TRUE(wallet.ok()) << wallet.status();
    EXPECT_EQ((*wallet)->balance, 100 * 2 * (round + 1));
  }
}

TEST_F(SqliteEngineTest, DestroyingAnUncommittedTransactionWritesNothingAndFreesTheWriter) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine->Begin(BeginOptions{});
    ASSERT_TRUE(storage.ok()) << storage.status();
    ASSERT_TRUE((*storage)->ClaimKey(ClaimOf(Identity("order-1"))).ok());
    ASSERT_TRUE((*storage)
                    ->AppendEvent(OutboxEvent{0, "t-1", "transaction.committed", "{}", kNow})
                    .ok());
  }  // destroyed without Commit
  EXPECT_TRUE(engine->ListEvents(0, 10)->empty());

  absl::StatusOr<std::unique_ptr<StorageTransaction>> next =
      engine->Begin(BeginOptions{WaitPolicy::FailFast()});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE((*next)->ClaimKey(ClaimOf(Identity("order-1"))).ok());
}

TEST_F(SqliteEngineTest, RecordKeyReplacesOnlyAnExpiredRecord) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  ASSERT_TRUE(PostTopUp(*engine, "order-1", 500).ok());
  const KeyRecord replacement{Identity("order-1"), "beef", "t-2", kNow + absl::Hours(1),
                              kNow + absl::Hours(25)};
  {
    std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
    ASSERT_TRUE(storage->ClaimKey(ClaimOf(Identity("order-1"))).ok());
    // The error table: a unique violation during the write is retryable.
    EXPECT_TRUE(IsRetryable(storage->RecordKey(replacement)));
  }
  KeyRecord after_expiry = replacement;
  after_expiry.created_at = kNow + absl::Hours(24);  // the first record's expires_at
  after_expiry.expires_at = kNow + absl::Hours(48);
  std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
  absl::StatusOr<std::optional<KeyRecord>> claim = storage->ClaimKey(ClaimOf(Identity("order-1")));
  ASSERT_TRUE(claim.ok() && claim->has_value());
  EXPECT_TRUE((*claim)->ExpiredAt(after_expiry.created_at));
  ASSERT_TRUE(storage->RecordKey(after_expiry).ok());
  ASSERT_TRUE(storage->Commit().ok());
  EXPECT_EQ(engine->ListKeyRecords(std::nullopt, 10).value(), std::vector<KeyRecord>{after_expiry});
}

// Counts the statements run on a connection (sqlite3_trace_v2), not the statements of
// its triggers, from construction until destruction.
class StatementCounter {
 public:
  explicit StatementCounter(sqlite3* database) : database_(database) {
    sqlite3_trace_v2(database_, SQLITE_TRACE_STMT, &StatementCounter::OnStatement, this);
  }
  ~StatementCounter() { sqlite3_trace_v2(database_, 0, nullptr, nullptr); }
  StatementCounter(const StatementCounter&) = delete;
  StatementCounter& operator=(const StatementCounter&) = delete;

  const std::vector<std::string>& statements() const { return statements_; }

 private:
  static int OnStatement(unsigned, void* self, void*, void* text) {
    const std::string sql = static_cast<const char*>(text);
    if (!absl::StartsWith(sql, "--")) static_cast<StatementCounter*>(self)->statements_.push_back(sql);
    return 0;
  }
  sqlite3* database_;
  std::vector<std::string> statements_;
};

// The claim of a new key is one INSERT of its final record and no read, and RecordKey
// of the record the claim was told of sends nothing more; the keys no RecordKey stored
// (rejected items) are gone after COMMIT.
TEST_F(SqliteEngineTest, AClaimOfNewKeysReadsNothingAndTheirRecordsCostNoStatement) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  std::vector<KeyIdentity> identities;
  for (int k = 0; k < 100; ++k) identities.push_back(Identity(absl::StrCat("batch-", 1000 + k)));
  const std::vector<KeyRecord> intended = ClaimsOf(identities);
  std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
  absl::StatusOr<void*> handle = storage->NativeHandle();  // begins: BEGIN IMMEDIATE
  ASSERT_TRUE(handle.ok()) << handle.status();
  std::vector<std::string> statements;
  {
    StatementCounter counter(static_cast<sqlite3*>(*handle));
    absl::StatusOr<std::vector<std::optional<KeyRecord>>> claimed = storage->ClaimKeys(intended);
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    EXPECT_EQ(*claimed, std::vector<std::optional<KeyRecord>>(intended.size()));
    for (size_t k = 0; k < 60; ++k) ASSERT_TRUE(storage->RecordKey(intended[k]).ok()) << k;
    statements = counter.statements();
  }
  ASSERT_EQ(statements.size(), intended.size()) << absl::StrJoin(statements, "\n");
  for (const std::string& sql : statements) EXPECT_TRUE(absl::StartsWith(sql, "INSERT")) << sql;
  // Nobody else sees a claimed record before COMMIT.
  EXPECT_EQ(engine->GetKeyRecord(identities[0]).value(), std::nullopt);
  ASSERT_TRUE(storage->Commit().ok());

  absl::StatusOr<std::vector<KeyRecord>> stored = engine->ListKeyRecords(std::nullopt, 1000);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 60u);
  for (size_t k = 0; k < 60; ++k) {
    EXPECT_EQ((*stored)[k].identity, intended[k].identity);
    EXPECT_EQ((*stored)[k].transaction_id, intended[k].transaction_id);
    EXPECT_EQ((*stored)[k].fingerprint, intended[k].fingerprint);
  }
}

// One claim over new keys, a live record, an expired one and a record this transaction
// claimed before (a unit of work's rejected submit): each key's answer in the given
// order, the expired record replaced by the key's next commit, the live one untouched,
// a key recorded with another record than its claim's stored as recorded.
TEST_F(SqliteEngineTest, AClaimAnswersEachKeyInOrderAndCommitsOnlyTheRecordedOnes) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  const absl::Time now = absl::Now();
  const KeyRecord live = ClaimOf(Identity("c-live"), now);
  KeyRecord expired = ClaimOf(Identity("b-expired"), now - absl::Hours(3));
  {
    std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
    ASSERT_TRUE(storage->ClaimKeys({expired, live}).ok());
    ASSERT_TRUE(storage->RecordKey(expired).ok());
    ASSERT_TRUE(storage->RecordKey(live).ok());
    ASSERT_TRUE(storage->Commit().ok());
  }
  ASSERT_TRUE(expired.ExpiredAt(now));
  const std::vector<KeyRecord> before = engine->ListKeyRecords(std::nullopt, 10).value();
  ASSERT_EQ(before.size(), 2u);

  std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
  // A unit of work's earlier submit claimed d-rejected-first and was rejected.
  ASSERT_EQ(storage->ClaimKey(ClaimOf(Identity("d-rejected-first"), now)).value(), std::nullopt);
  const std::vector<KeyRecord> intended =
      ClaimsOf({Identity("a-new"), Identity("b-expired"), Identity("c-live"),
                Identity("d-rejected-first"), Identity("e-new-rejected"), Identity("f-new-other")},
               now);
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> claimed = storage->ClaimKeys(intended);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_EQ(claimed->size(), intended.size());
  EXPECT_EQ((*claimed)[0], std::nullopt);
  EXPECT_EQ((*claimed)[1], before[0]);  // b-expired, as stored
  EXPECT_EQ((*claimed)[2], before[1]);  // c-live
  EXPECT_EQ((*claimed)[3], std::nullopt);
  EXPECT_EQ((*claimed)[4], std::nullopt);
  EXPECT_EQ((*claimed)[5], std::nullopt);

  ASSERT_TRUE(storage->RecordKey(intended[0]).ok());
  ASSERT_TRUE(storage->RecordKey(intended[1]).ok());  // replaces the expired record
  ASSERT_TRUE(storage->RecordKey(intended[3]).ok());
  KeyRecord other = intended[5];  // another item than the claim's commits the key
  other.transaction_id = NewTransactionId(now);
  other.fingerprint = "0th3r";
  ASSERT_TRUE(storage->RecordKey(other).ok());
  EXPECT_TRUE(IsRetryable(storage->RecordKey(intended[2])));  // live: never overwritten
  ASSERT_TRUE(storage->Commit().ok());

  absl::StatusOr<std::vector<KeyRecord>> stored = engine->ListKeyRecords(std::nullopt, 10);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 5u);
  auto transaction_of = [&](size_t k) { return (*stored)[k].transaction_id; };
  EXPECT_EQ((*stored)[0].identity, Identity("a-new"));
  EXPECT_EQ(transaction_of(0), intended[0].transaction_id);
  EXPECT_EQ((*stored)[1].identity, Identity("b-expired"));
  EXPECT_EQ(transaction_of(1), intended[1].transaction_id);
  EXPECT_EQ((*stored)[2], before[1]);  // c-live untouched
  EXPECT_EQ((*stored)[3].identity, Identity("d-rejected-first"));
  EXPECT_EQ(transaction_of(3), intended[3].transaction_id);
  EXPECT_EQ((*stored)[4].identity, Identity("f-new-other"));
  EXPECT_EQ(transaction_of(4), other.transaction_id);
  EXPECT_EQ((*stored)[4].fingerprint, "0th3r");
}

TEST_F(SqliteEngineTest, IdentityColumnsCompareByteWise) {
  std::unique_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->PutAsset({"USD", 2}).ok());
  for (const char* id : {"b", "abc", "ABC", "AB_"}) {
    ASSERT_TRUE(engine->InsertAccount(Account{.id = id, .asset = "USD", .created_at = kNow}).ok())
        << id;
  }
  EXPECT_EQ(engine->InsertAccount(Account{.id = "abc", .asset = "USD", .created_at = kNow}).code(),
            absl::StatusCode::kAlreadyExists);
  absl::StatusOr<std::vector<Account>> accounts = engine->ListAccounts("", 10);
  ASSERT_TRUE(accounts.ok()) << accounts.status();
  std::vector<std::string> ids;
  for (const Account& account : *accounts) ids.push_back(account.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"ABC", "AB_", "abc", "b"}));  // byte order
  EXPECT_FALSE(engine->GetAccount("Abc")->has_value());
}

TEST_F(SqliteEngineTest, OpenRejectsPathsThePoolCannotShare) {
  SqliteOptions in_memory;
  in_memory.path = ":memory:";
  EXPECT_EQ(OpenSqliteEngine(in_memory).status().code(), absl::StatusCode::kInvalidArgument);
  SqliteOptions bad_synchronous;
  bad_synchronous.path = path_;
  bad_synchronous.synchronous = "SOMETIMES";
  EXPECT_EQ(OpenSqliteEngine(bad_synchronous).status().code(), absl::StatusCode::kInvalidArgument);
  SqliteOptions missing_folder;
  missing_folder.path = (folder_ / "no-such-folder" / "ledger.db").string();
  EXPECT_EQ(OpenSqliteEngine(missing_folder).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(SqliteConnectionPoolTest, BrokenConnectionIsClosedInsteadOfPooled) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("ledger-sqlite-pool-", getpid(), ".db"))
                               .string();
  {
    auto pool = sqlite_internal::CreateSqliteConnectionPool(
                    sqlite_internal::ConnectionSettings{.path = path}, /*size=*/4,
                    absl::Seconds(10))
                    .value();
    const sqlite_internal::Connection* healthy = nullptr;
    {
      sqlite_internal::PooledConnection connection = pool->Acquire().value();
      healthy = &*connection;
    }
    EXPECT_EQ(pool->IdleCountForTesting(), 1u);
    {
      sqlite_internal::PooledConnection connection = pool->Acquire().value();
      EXPECT_EQ(&*connection, healthy);  // reused
      connection->MarkBroken();
    }
    EXPECT_EQ(pool->IdleCountForTesting(), 0u);  // closed, not pooled
    sqlite_internal::PooledConnection replacement = pool->Acquire().value();
    EXPECT_FALSE(replacement->broken());
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

TEST(SqliteConnectionPoolTest, ConnectionReturnedMidTransactionIsRolledBack) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("ledger-sqlite-pool-rollback-", getpid(), ".db"))
                               .string();
  {
    auto pool = sqlite_internal::CreateSqliteConnectionPool(
                    sqlite_internal::ConnectionSettings{.path = path}, /*size=*/4,
                    absl::Seconds(10))
                    .value();
    {
      sqlite_internal::PooledConnection connection = pool->Acquire().value();
      ASSERT_TRUE(connection
                      ->Execute("BEGIN IMMEDIATE", "begin",
                                sqlite_internal::ErrorContext::kStandalone)
                      .ok());
    }  // returned with the writer lock held
    RawConnection other(path);
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");  // the lock was released
    EXPECT_EQ(other.Execute("ROLLBACK"), "ok");
    sqlite_internal::PooledConnection reused = pool->Acquire().value();
    EXPECT_FALSE(reused->InTransaction());
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// The writer's connection, kept from one turn to the next: a turn that ends mid-transaction
// leaves it rolled back (SQLite's lock released), and one found broken is closed when its
// turn ends, the next turn opening a new one.
TEST(SqliteWriterQueueTest, TheWriterConnectionIsKeptCleanAndABrokenOneIsReplaced) {
  using sqlite_internal::ErrorContext;
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("ledger-sqlite-writer-", getpid(), ".db"))
                               .string();
  {
    sqlite_internal::WriterQueue queue(sqlite_internal::ConnectionSettings{.path = path});
    const sqlite_internal::Connection* first = nullptr;
    {
      absl::StatusOr<sqlite_internal::WriterTurn> turn =
          sqlite_internal::BeginImmediate(queue, absl::Seconds(10), ErrorContext::kStandalone);
      ASSERT_TRUE(turn.ok()) << turn.status();
      first = &turn->connection();
      EXPECT_TRUE(turn->connection().InTransaction());
    }  // ended without COMMIT or ROLLBACK
    RawConnection other(path);
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(other.Execute("BEGIN IMMEDIATE"), "ok");  // the lock was released
    EXPECT_EQ(other.Execute("ROLLBACK"), "ok");
    {
      absl::StatusOr<sqlite_internal::WriterTurn> turn =
          sqlite_internal::BeginImmediate(queue, absl::Seconds(10), ErrorContext::kStandalone);
      ASSERT_TRUE(turn.ok()) << turn.status();
      EXPECT_EQ(&turn->connection(), first);  // kept
      EXPECT_EQ(queue.OpenedCountForTesting(), 1);
      turn->connection().MarkBroken();
    }
    absl::StatusOr<sqlite_internal::WriterTurn> turn =
        sqlite_internal::BeginImmediate(queue, absl::Seconds(10), ErrorContext::kStandalone);
    ASSERT_TRUE(turn.ok()) << turn.status();
    EXPECT_FALSE(turn->connection().broken());
    EXPECT_EQ(queue.OpenedCountForTesting(), 2);  // the broken one was closed, a new one opened
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

TEST(SqliteErrorsTest, BusyMeansInProgressOnlyForTheClaim) {
  using sqlite_internal::ErrorContext;
  using sqlite_internal::SqliteErrorStatus;
  EXPECT_TRUE(IsInProgress(SqliteErrorStatus(SQLITE_BUSY, "database is locked", "begin",
                                             ErrorContext::kClaim)));
  EXPECT_TRUE(IsRetryable(SqliteErrorStatus(SQLITE_BUSY, "database is locked", "select",
                                            ErrorContext::kTransaction)));
  EXPECT_TRUE(IsRetryable(SqliteErrorStatus(SQLITE_LOCKED_SHAREDCACHE, "locked", "insert",
                                            ErrorContext::kStandalone)));
  EXPECT_TRUE(IsRetryable(SqliteErrorStatus(SQLITE_BUSY, "database is locked", "commit",
                                            ErrorContext::kCommit)));
}

TEST(SqliteErrorsTest, CommitWithUnknownResultIsInDoubt) {
  using sqlite_internal::ErrorContext;
  using sqlite_internal::SqliteErrorStatus;
  EXPECT_TRUE(IsInDoubt(SqliteErrorStatus(SQLITE_IOERR_FSYNC, "disk I/O error", "commit",
                                          ErrorContext::kCommit)));
  EXPECT_TRUE(IsInDoubt(SqliteErrorStatus(SQLITE_FULL, "database or disk is full", "commit",
                                          ErrorContext::kCommit)));
  // Before COMMIT nothing was written: unavailable, not in doubt.
  EXPECT_EQ(SqliteErrorStatus(SQLITE_IOERR_WRITE, "disk I/O error", "insert",
                              ErrorContext::kTransaction)
                .code(),
            absl::StatusCode::kUnavailable);
}

TEST(SqliteErrorsTest, ConstraintsMapToIdentityAndInputErrors) {
  using sqlite_internal::ErrorContext;
  using sqlite_internal::SqliteErrorStatus;
  EXPECT_EQ(SqliteErrorStatus(SQLITE_CONSTRAINT_PRIMARYKEY, "UNIQUE constraint failed", "insert",
                              ErrorContext::kStandalone)
                .code(),
            absl::StatusCode::kAlreadyExists);
  // In a submit's writes the error table makes it retryable.
  EXPECT_TRUE(IsRetryable(SqliteErrorStatus(SQLITE_CONSTRAINT_UNIQUE, "UNIQUE constraint failed",
                                            "insert", ErrorContext::kWrite)));
  EXPECT_EQ(SqliteErrorStatus(SQLITE_CONSTRAINT_FOREIGNKEY, "FOREIGN KEY constraint failed",
                              "insert", ErrorContext::kStandalone)
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SqliteErrorStatus(SQLITE_CONSTRAINT_CHECK, "CHECK constraint failed", "insert",
                              ErrorContext::kStandalone)
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SqliteErrorsTest, FatalCodesBreakTheConnection) {
  EXPECT_TRUE(sqlite_internal::IsConnectionBroken(SQLITE_IOERR_READ));
  EXPECT_TRUE(sqlite_internal::IsConnectionBroken(SQLITE_CORRUPT));
  EXPECT_FALSE(sqlite_internal::IsConnectionBroken(SQLITE_BUSY));
  EXPECT_FALSE(sqlite_internal::IsConnectionBroken(SQLITE_CONSTRAINT_UNIQUE));
}

}  // namespace
}  // namespace ledger

namespace ledger {
namespace {

// PRAGMA synchronous on a fresh connection: 1 NORMAL, 2 FULL, 3 EXTRA.
int64_t SynchronousOfNewConnection(const std::string& path, const std::string& setting) {
  sqlite_internal::ConnectionSettings settings{.path = path};
  if (!setting.empty()) settings.synchronous = setting;
  std::unique_ptr<sqlite_internal::Connection> connection =
      sqlite_internal::Connection::Open(settings).value();
  sqlite_internal::Query query = connection->Prepare("PRAGMA synchronous", "read synchronous").value();
  EXPECT_TRUE(query.Step().value());
  return query.Int(0);
}

TEST(SqliteDurabilityTest, AcknowledgedCommitsSurvivePowerLossByDefault) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("ledger-sqlite-durability-", getpid(), ".db"))
                               .string();
  EXPECT_EQ(SqliteOptions{}.synchronous, "FULL");
  EXPECT_EQ(SynchronousOfNewConnection(path, ""), 2);
  EXPECT_EQ(SynchronousOfNewConnection(path, SqliteOptionsFromUrl("sqlite:" + path)->synchronous), 2);
  EXPECT_EQ(
      SynchronousOfNewConnection(path, SqliteOptionsFromUrl("sqlite:" + path + "?synchronous=normal")->synchronous),
      1);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

TEST(SqliteDurabilityTest, UrlNamesPathAndSynchronousAndNothingElse) {
  absl::StatusOr<SqliteOptions> plain = SqliteOptionsFromUrl("sqlite:books.db");
  absl::StatusOr<SqliteOptions> slashes = SqliteOptionsFromUrl("sqlite:///var/books.db?synchronous=EXTRA");
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(slashes.ok()) << slashes.status();
  EXPECT_EQ(plain->path, "books.db");
  EXPECT_EQ(plain->synchronous, "FULL");
  EXPECT_EQ(slashes->path, "/var/books.db");
  EXPECT_EQ(slashes->synchronous, "EXTRA");

  for (const char* bad : {"sqlite:", "sqlite:books.db?synchronous=off", "sqlite:books.db?synchronous=",
                          "sqlite:books.db?journal_mode=delete", "sqlite:books.db?synchronous=full&x=1"}) {
    EXPECT_EQ(SqliteOptionsFromUrl(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// PRAGMA cache_size and mmap_size on a fresh connection opened with `options`' settings.
std::pair<int64_t, int64_t> CacheAndMmapOfNewConnection(const SqliteOptions& options) {
  sqlite_internal::ConnectionSettings settings{.path = options.path};
  settings.cache_size_kib = options.cache_size_kib;
  settings.mmap_size_mib = options.mmap_size_mib;
  std::unique_ptr<sqlite_internal::Connection> connection =
      sqlite_internal::Connection::Open(settings).value();
  std::pair<int64_t, int64_t> sizes;
  {
    sqlite_internal::Query query = connection->Prepare("PRAGMA cache_size", "read cache_size").value();
    EXPECT_TRUE(query.Step().value());
    sizes.first = query.Int(0);
  }
  sqlite_internal::Query query = connection->Prepare("PRAGMA mmap_size", "read mmap_size").value();
  EXPECT_TRUE(query.Step().value());
  sizes.second = query.Int(0);
  return sizes;
}

// A group-committed batch of the single writer outgrew SQLite's 2 MiB cache and spilled
// into the WAL, so every connection keeps a larger cache; the memory map is opt-in
// (docs/benchmarks.md, "SQLite's page cache and memory map").
TEST(SqliteCacheTest, ConnectionsKeepALargerCacheByDefaultAndMapTheFileOnRequest) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("ledger-sqlite-cache-", getpid(), ".db"))
                               .string();
  SqliteOptions defaults;
  defaults.path = path;
  EXPECT_EQ(CacheAndMmapOfNewConnection(defaults),
            std::make_pair(int64_t{-65536}, int64_t{0}));
  absl::StatusOr<SqliteOptions> from_url =
      SqliteOptionsFromUrl("sqlite:" + path + "?cache_size_kib=4096&mmap_size_mib=256");
  ASSERT_TRUE(from_url.ok()) << from_url.status();
  EXPECT_EQ(CacheAndMmapOfNewConnection(*from_url),
            std::make_pair(int64_t{-4096}, int64_t{256} * 1024 * 1024));
  absl::StatusOr<SqliteOptions> plain = SqliteOptionsFromUrl("sqlite:" + path);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->cache_size_kib, 65536);
  EXPECT_EQ(plain->mmap_size_mib, 0);

  // An engine with the map on and the smallest cache opens, migrates and reads.
  SqliteOptions mapped;
  mapped.path = path;
  mapped.mmap_size_mib = 256;
  mapped.cache_size_kib = 64;
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine(mapped);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_TRUE((*engine)->ListAccounts("", 10).ok());
  engine->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

TEST(SqliteCacheTest, RefusesCacheAndMmapSizesOutOfRange) {
  for (const char* bad :
       {"sqlite:a.db?cache_size_kib=", "sqlite:a.db?cache_size_kib=-1", "sqlite:a.db?cache_size_kib=63",
        "sqlite:a.db?cache_size_kib=4194305", "sqlite:a.db?cache_size_kib=64k",
        "sqlite:a.db?cache_size_kib=+64", "sqlite:a.db?mmap_size_mib=", "sqlite:a.db?mmap_size_mib=-1",
        "sqlite:a.db?mmap_size_mib=65537", "sqlite:a.db?mmap_size_mib=1.5",
        "sqlite:a.db?mmap_size_mib=99999999999999999999"}) {
    EXPECT_EQ(SqliteOptionsFromUrl(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  absl::StatusOr<SqliteOptions> edges =
      SqliteOptionsFromUrl("sqlite:a.db?cache_size_kib=4194304&mmap_size_mib=65536");
  ASSERT_TRUE(edges.ok()) << edges.status();
  EXPECT_EQ(edges->cache_size_kib, 4194304);
  EXPECT_EQ(edges->mmap_size_mib, 65536);

  // The same ranges for the options, refused before any file is made.
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     absl::StrCat("ledger-sqlite-cache-refused-", getpid(), ".db");
  for (auto [cache, mmap] : {std::pair<int64_t, int64_t>{63, 256}, {int64_t{4194305}, 256},
                             {65536, -1}, {65536, 65537}}) {
    SqliteOptions options;
    options.path = path.string();
    options.cache_size_kib = cache;
    options.mmap_size_mib = mmap;
    EXPECT_EQ(OpenSqliteEngine(options).status().code(), absl::StatusCode::kInvalidArgument)
        << cache << " " << mmap;
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// The writer's WAL checkpoints (engines/sqlite/sqlite_checkpointer.h), over a long run of
// write transactions on the writer's connection, each rewriting the same 40 KB row so
// that every commit adds the same number of frames to the WAL.
class SqliteCheckpointTest : public testing::SqliteFileTest {
 protected:
  SqliteCheckpointTest() : SqliteFileTest("ledger-sqlite-checkpoint-test") {}

  static constexpr int64_t kPageSize = 4096;  // SQLite's default
  // The frames the WAL file has room for (a 32-byte header, 24 bytes before each page).
  int64_t WalFrames() const {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(path_ + "-wal", error);
    return error || size < 32 ? 0 : static_cast<int64_t>(size - 32) / (kPageSize + 24);
  }
};

TEST_F(SqliteCheckpointTest, WalStaysBoundedAndTheCommittingThreadCheckpointsRarely) {
  using sqlite_internal::ErrorContext;
  // NORMAL only to keep the run short: checkpoints work the same with FULL.
  const sqlite_internal::ConnectionSettings settings{.path = path_, .synchronous = "NORMAL"};
  {
    auto setup = sqlite_internal::Connection::Open(settings);
    ASSERT_TRUE(setup.ok()) << setup.status();
    ASSERT_TRUE((*setup)
                    ->Execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x BLOB);"
                              "INSERT INTO t VALUES (1, randomblob(40000));"
                              "PRAGMA wal_checkpoint(TRUNCATE);",
                              "set up", ErrorContext::kStandalone)
                    .ok());
  }
  ASSERT_EQ(WalFrames(), 0);
  sqlite_internal::WriterQueue queue(settings);
  constexpr int kCommits = 1500;
  int64_t frames_per_commit = 0;
  int64_t wal_frames_max = 0;
  for (int commit = 0; commit < kCommits; ++commit) {
    absl::StatusOr<sqlite_internal::WriterTurn> turn =
        sqlite_internal::BeginImmediate(queue, absl::Seconds(10), ErrorContext::kStandalone);
    ASSERT_TRUE(turn.ok()) << turn.status();
    sqlite_internal::Connection& writer = turn->connection();
    ASSERT_TRUE(writer.Execute("UPDATE t SET x = randomblob(40000) WHERE id = 1", "rewrite",
                               ErrorContext::kWrite).ok());
    ASSERT_TRUE(writer.Execute("COMMIT", "commit", ErrorContext::kCommit).ok());
    turn->Release();
    if (commit == 0) frames_per_commit = WalFrames();
    wal_frames_max = std::max(wal_frames_max, WalFrames());
  }
  const int64_t frames_written = frames_per_commit * kCommits;
  ASSERT_GT(frames_per_commit, 0);
  ASSERT_GT(frames_written, 3 * sqlite_internal::kWriterCheckpointFrames);

  // Bounded: the WAL file never outgrew the committing thread's threshold by more than
  // the commit that crossed it (without any checkpoint it would hold every frame).
  EXPECT_LE(wal_frames_max, sqlite_internal::kWriterCheckpointFrames + 2 * frames_per_commit)
      << frames_per_commit << " frames per commit";
  // Off the committing thread: the background passes ran, and the committing thread
  // checkpointed at most once per kWriterCheckpointFrames (SQLite's own auto-checkpoint
  // would have run in the commit once per 1,000 frames: frames_written / 1000 times).
  sqlite_internal::Checkpointer::Counts counts = queue.checkpointer().CountsForTesting();
  for (int poll = 0; poll < 1000 && counts.background_passes == 0; ++poll) {
    absl::SleepFor(absl::Milliseconds(10));  // the last pass may still run: 10 s at most
    counts = queue.checkpointer().CountsForTesting();
  }
  EXPECT_GE(counts.background_passes, 1);
  EXPECT_LE(counts.writer_checkpoints,
            frames_written / sqlite_internal::kWriterCheckpointFrames + 1);
  RawConnection raw(path_);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw.QueryText("SELECT length(x) FROM t WHERE id = 1"), "40000");
}

}  // namespace
}  // namespace ledger
