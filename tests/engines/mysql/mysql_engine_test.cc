// Behaviour of the MySQL engine beyond the shared conformance suite: the placeholder
// claim under heavy contention, concurrent transfers audited afterwards, lock waits
// (claim vs account), byte-wise identities, pooled sessions dropped by the server, and
// concurrent migrations. (A session KILLed mid-transaction and deadlocks are error-table
// rows: tests/conformance/error_table_suite.cc runs them on every engine.) Each test gets a
// scratch database of its own on the server named by LEDGER_TEST_MYSQL_DSN.
#include "engines/mysql/mysql_migrations.h"
#include "engines/mysql/mysql_engine.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/clock.h"
#include "base/status.h"
#include "ledger/engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/verify.h"
#include "tests/support/claims.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_ledger_test.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

// The identity a submit of `key` in the default scope is claimed under.
KeyIdentity SubmitKey(const std::string& key) { return KeyIdentityOf(SubmitRequest{.key = key}); }

// How long a test waits for a state of the server it is about to act on (a session
// waiting for a lock, a transaction holding one) before it gives up.
constexpr absl::Duration kServerStateWaitMax = absl::Seconds(30);

Operation Transfer(const std::string& from, const std::string& to, Amount amount) {
  return Operation::Transfer(from, to, "CREDITS", amount);
}

// Polls `condition` until it holds or kServerStateWaitMax passes. For states only the
// server can report (a session in LOCK WAIT); not a wait for a race between threads.
bool WaitForServerState(const std::function<bool()>& condition) {
  const absl::Time deadline = absl::Now() + kServerStateWaitMax;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

class MysqlEngineTest : public MysqlLedgerTest {
 protected:
  MysqlEngineTest() : MysqlLedgerTest("engine") {}

  // A holder locks alice; another transaction claims a key under `wait` (short: a 1 s
  // session lock wait for the claim), then locks `accounts` (alice first), naming them up
  // front when `hinted` (the claim's CALL then locks them). It must wait for alice with the
  // session's normal timeout (10 s), not the claim's: the server reports how long the
  // waiter's statement has run (PROCESSLIST.TIME, in seconds; INNODB_TRX may leave out a
  // transaction in a lock wait on MariaDB), and past 2 s a 1 s lock wait would have fired.
  void ExpectTheAccountLockToOutlastTheClaimsWait(WaitPolicy wait,
                                                    const std::vector<std::string>& accounts,
                                                    bool hinted) {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine_->Begin({});
    ASSERT_TRUE(holder.ok()) << holder.status();
    ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(SubmitKey("first"))).ok());
    ASSERT_TRUE((*holder)->LockAccounts({"alice"}).ok());

    std::atomic<bool> finished{false};
    absl::StatusOr<std::vector<Account>> locked;
    std::thread waiter([&] {
      absl::StatusOr<std::unique_ptr<StorageTransaction>> second = engine_->Begin({wait});
      if (second.ok()) {
        if (hinted) (*second)->ExpectAccountLocks(accounts);
        absl::StatusOr<std::optional<KeyRecord>> claimed =
            (*second)->ClaimKey(ClaimOf(SubmitKey("second")));
        locked = claimed.ok() ? (*second)->LockAccounts(accounts)
                              : absl::StatusOr<std::vector<Account>>(claimed.status());
      } else {
        locked = second.status();
      }
      finished = true;
    });
    std::string last_observed;
    const bool waited_past_claim_timeout = WaitForServerState([&] {
      if (finished) return true;
      absl::StatusOr<std::string> waited = server_->QueryText(absl::StrCat(
          "SELECT COALESCE(MAX(TIME), -1) FROM information_schema.PROCESSLIST WHERE DB = '",
          database_, "' AND INFO LIKE 'SELECT %accounts%FOR UPDATE'"));
      last_observed = waited.ok() ? *waited : waited.status().ToString();
      return waited.ok() && std::stoi(*waited) >= 2;
    });
    EXPECT_FALSE(finished.load()) << "the account lock wait ended early: " << locked.status()
                                  << "; the server last said " << last_observed;
    (*holder)->Rollback();
    waiter.join();
    EXPECT_TRUE(waited_past_claim_timeout);
    ASSERT_TRUE(locked.ok()) << locked.status();
    ASSERT_EQ(locked->size(), accounts.size());
    for (size_t i = 0; i < accounts.size(); ++i) EXPECT_EQ((*locked)[i].id, accounts[i]);
  }
};

TEST_F(MysqlEngineTest, SixtyFourSubmittersOfOneKeyCommitOnceAndReplayTheIdenticalTransaction) {
  constexpr int kSubmitters = 64;
  ASSERT_NO_FATAL_FAILURE(OpenLedger(kSubmitters));
  ASSERT_NO_FATAL_FAILURE(Fund("alice", 1000));
  absl::Barrier start(kSubmitters);  // outlives every Block(): the threads join below
  std::vector<absl::StatusOr<Outcome>> outcomes(kSubmitters);
  std::vector<std::thread> submitters;
  for (int i = 0; i < kSubmitters; ++i) {
    submitters.emplace_back([&, i] {
      start.Block();
      outcomes[i] = Submit("one-key", Transfer("alice", "bob", 7));
    });
  }
  for (std::thread& submitter : submitters) submitter.join();

  int committed = 0, duplicates = 0;
  std::optional<Transaction> winner;
  for (const absl::StatusOr<Outcome>& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (outcome->kind == OutcomeKind::kCommitted) {
      ++committed;
      winner = outcome->transaction;
    } else {
      ASSERT_EQ(outcome->kind, OutcomeKind::kDuplicate) << OutcomeToJson(*outcome).dump();
      ++duplicates;
    }
  }
  ASSERT_EQ(committed, 1);
  EXPECT_EQ(duplicates, kSubmitters - 1);
  for (const absl::StatusOr<Outcome>& outcome : outcomes) {
    EXPECT_EQ(outcome->transaction, *winner);  // byte for byte: same id, entries, times
  }
  EXPECT_EQ(BalanceOf("bob"), 7);
  EXPECT_EQ(engine_->ListTransactions("", 100)->size(), 2u);  // the funding and the one
  ExpectVerifiedLedger();
}

TEST_F(MysqlEngineTest, ConcurrentTransfersOverSharedAccountsLeaveAVerifiedLedger) {
  constexpr int kThreads = 12;
  constexpr int kSubmitsPerThread = 40;
  const std::vector<std::string> accounts = {"alice", "bob", "carol", "dave", "erin"};
  ASSERT_NO_FATAL_FAILURE(OpenLedger(kThreads));
  for (const std::string& account : accounts) ASSERT_NO_FATAL_FAILURE(Fund(account, 1000));
  std::atomic<int> committed{0}, rejected{0};
  absl::Barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(4321 + t);
      start.Block();
      for (int i = 0; i < kSubmitsPerThread; ++i) {
        // Two and three legs, in both directions over the same few rows: without one
        // lock order these would deadlock.
        size_t a = random() % accounts.size();
        size_t b = (a + 1 + random() % (accounts.size() - 1)) % accounts.size();
        size_t c = (b + 1 + random() % (accounts.size() - 1)) % accounts.size();
        const Amount amount = 1 + static_cast<Amount>(random() % 120);
        Operation operation =
            (i % 3 == 2 && c != a)
                ? Operation::Post({{accounts[a], "CREDITS", -2 * amount},
                                   {accounts[b], "CREDITS", amount},
                                   {accounts[c], "CREDITS", amount}})
                : Transfer(accounts[a], accounts[b], amount);
        absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("x-", t, "-", i), operation);
        ASSERT_TRUE(outcome.ok()) << outcome.status();
        ASSERT_TRUE(outcome->kind == OutcomeKind::kCommitted ||
                    outcome->kind == OutcomeKind::kRejected)
            << OutcomeToJson(*outcome).dump();
        (outcome->kind == OutcomeKind::kCommitted ? committed : rejected)++;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  Amount total = 0;
  for (const std::string& account : accounts) {
    EXPECT_GE(BalanceOf(account), 0);
    total += BalanceOf(account);
  }
  EXPECT_EQ(total, 5000);
  EXPECT_EQ(committed + rejected, kThreads * kSubmitsPerThread);
  EXPECT_GT(committed.load(), 0);
  absl::StatusOr<VerifyReport> report = VerifyLedger(*engine_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  EXPECT_EQ(report->transactions, committed.load() + static_cast<int>(accounts.size()));
  EXPECT_EQ(report->key_records, report->transactions);
}

TEST_F(MysqlEngineTest, ClaimOfAHeldKeyIsInProgressOnceTheWaitBoundRunsOut) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(4));
  const KeyIdentity identity = SubmitKey("held");
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine_->Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(identity)).ok());

  for (WaitPolicy wait : {WaitPolicy::FailFast(), WaitPolicy{absl::Milliseconds(300)}}) {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> second = engine_->Begin({wait});
    ASSERT_TRUE(second.ok()) << second.status();
    absl::StatusOr<std::optional<KeyRecord>> claimed = (*second)->ClaimKey(ClaimOf(identity));
    EXPECT_TRUE(IsInProgress(claimed.status())) << claimed.status();
  }
  (*holder)->Rollback();
  // Released: the next claim gets the key, which holds no record (nothing committed).
  absl::StatusOr<std::unique_ptr<StorageTransaction>> third =
      engine_->Begin({WaitPolicy::FailFast()});
  ASSERT_TRUE(third.ok()) << third.status();
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*third)->ClaimKey(ClaimOf(identity));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_FALSE(claimed->has_value());
}

TEST_F(MysqlEngineTest, WaitersBehindAHolderThatRollsBackCommitOnce) {
  constexpr int kWaiters = 8;
  // Each waiter in a transaction of its own (group commit off), so all eight queue on the
  // placeholder's lock at once.
  ASSERT_NO_FATAL_FAILURE(OpenLedger(kWaiters + 2, LedgerOptions{.group_commit = {.enabled = false}}));
  ASSERT_NO_FATAL_FAILURE(Fund("alice", 100));
  // A first attempt holds the key's placeholder, as a submit about to be rejected would.
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine_->Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(SubmitKey("contested"))).ok());

  std::vector<absl::StatusOr<Outcome>> outcomes(kWaiters);
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] { outcomes[i] = Submit("contested", Transfer("alice", "bob", 5)); });
  }
  // Every waiter's INSERT is queued on the placeholder's lock.
  ASSERT_TRUE(WaitForServerState([&] {
    absl::StatusOr<std::string> queued = server_->QueryText(absl::StrCat(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '", database_,
        "' AND INFO LIKE 'INSERT INTO idempotency_keys%'"));
    return queued.ok() && *queued == std::to_string(kWaiters);
  }));
  // Rolled back: the waiters' duplicate checks all hold gap locks now, so InnoDB picks
  // deadlock victims among them; the pipeline reruns those, and one waiter commits.
  (*holder)->Rollback();
  for (std::thread& waiter : waiters) waiter.join();

  int committed = 0, duplicates = 0;
  for (const absl::StatusOr<Outcome>& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (outcome->kind == OutcomeKind::kCommitted) ++committed;
    if (outcome->kind == OutcomeKind::kDuplicate) ++duplicates;
  }
  EXPECT_EQ(committed, 1);
  EXPECT_EQ(duplicates, kWaiters - 1);
  EXPECT_EQ(BalanceOf("bob"), 5);
  ExpectVerifiedLedger();
}

// A fail-fast claim probes with NOWAIT and inserts under the 1 s minimum.
TEST_F(MysqlEngineTest, AccountLockWaitOutlastsTheFailFastClaimsTimeout) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(4));
  ExpectTheAccountLockToOutlastTheClaimsWait(WaitPolicy::FailFast(), {"alice"},
                                             /*hinted=*/false);
}

// Issue 29: with the accounts named up front (ExpectAccountLocks), the claim's CALL also
// locks them, and the procedure sets the session's own lock wait before that lock.
TEST_F(MysqlEngineTest, AccountLockWaitInTheClaimsCallOutlastsTheClaimsOwnWait) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(4));
  ExpectTheAccountLockToOutlastTheClaimsWait(WaitPolicy{absl::Seconds(1)},
                                             {"alice", "bob"}, /*hinted=*/true);
}

// The same lock run out of wait inside the claim's CALL: the key was free and is
// claimed; the accounts' failure is LockAccounts' (a lock wait outside the claim:
// retryable), not the claim's "in progress", which would tell the caller that another
// attempt holds the key. Rolled back, the key is unused.
TEST_F(MysqlEngineTest, AnAccountLockRunOutInTheClaimsCallIsLockAccountsRetryableError) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(2));
  MysqlOptions options;
  options.connection = dsn_;
  options.pool_size = 1;
  options.account_lock_wait = absl::Seconds(1);
  absl::StatusOr<std::unique_ptr<Engine>> impatient = OpenMysqlEngine(options);
  ASSERT_TRUE(impatient.ok()) << impatient.status();
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine_->Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->LockAccounts({"bob"}).ok());

  absl::StatusOr<std::unique_ptr<StorageTransaction>> second = (*impatient)->Begin({});
  ASSERT_TRUE(second.ok()) << second.status();
  (*second)->ExpectAccountLocks({"alice", "bob"});
  absl::StatusOr<std::optional<KeyRecord>> claimed =
      (*second)->ClaimKey(ClaimOf(SubmitKey("impatient")));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_FALSE(claimed->has_value());
  absl::StatusOr<std::vector<Account>> locked = (*second)->LockAccounts({"alice", "bob"});
  EXPECT_TRUE(IsRetryable(locked.status())) << locked.status();
  EXPECT_FALSE(IsInProgress(locked.status())) << locked.status();
  (*second)->Rollback();
  (*holder)->Rollback();
  absl::StatusOr<std::optional<KeyRecord>> record =
      engine_->GetKeyRecord(SubmitKey("impatient"));
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_FALSE(record->has_value());
}

// The row the claim inserted for a batch item that was rejected while others committed
// must not outlive the COMMIT: it would name a transaction that does not exist and keep
// the key from being used.
TEST_F(MysqlEngineTest, ABatchLeavesNoClaimedRowOfItsRejectedItems) {
  OpenLedger(2);
  ASSERT_TRUE(Submit("fund", Operation::TopUp("issuance", "alice", "CREDITS", 10)).ok());
  absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(
      {.items = {{.key = "ok", .operation = Operation::Transfer("alice", "bob", "CREDITS", 5)},
                 {.key = "no", .operation = Operation::Transfer("alice", "bob", "CREDITS", 50)}}});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ((*results)[1]->kind, OutcomeKind::kRejected);
  EXPECT_EQ(*server_->QueryText(absl::StrCat("SELECT COUNT(*) FROM `", database_,
                                             "`.idempotency_keys WHERE state = 'pending'"
                                             " OR `key` = 'no'")),
            "0");
}

// Issue 29's shape d: the claim inserts the key's final record, and the write step sends
// no statement for it. Inside the claiming transaction the row already holds what
// RecordKey will be told; recording it then changes no row (the session's handler
// counters: an upsert of the key row would write or update one).
TEST_F(MysqlEngineTest, TheClaimWritesTheFinalKeyRecordAndRecordingItSendsNothing) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(2));
  const KeyRecord intended = ClaimOf(SubmitKey("once"), absl::FromUnixSeconds(1'767'225'600));
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine_->Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*storage)->ClaimKey(intended);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_FALSE(claimed->has_value());
  auto read = [&](const std::string& sql,
                  const std::vector<SqlValue>& parameters) -> std::vector<std::string> {
    absl::StatusOr<SqlRows> rows = (*storage)->RunCallerSql(sql, parameters);
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<std::string> values;
    if (!rows.ok()) return values;
    for (const std::vector<std::optional<std::string>>& row : rows->rows) {
      for (const std::optional<std::string>& value : row) values.push_back(value.value_or("NULL"));
    }
    return values;
  };
  EXPECT_EQ(read("SELECT fingerprint, state, transaction_id, created_at, expires_at"
                 " FROM idempotency_keys WHERE `key` = ?",
                 {intended.identity.key}),
            (std::vector<std::string>{intended.fingerprint, "committed", intended.transaction_id,
                                      absl::StrCat(absl::ToUnixMicros(intended.created_at)),
                                      absl::StrCat(absl::ToUnixMicros(intended.expires_at))}));
  const std::string handler_writes =
      "SELECT CAST(SUM(VARIABLE_VALUE) AS SIGNED) FROM information_schema.SESSION_STATUS"
      " WHERE VARIABLE_NAME IN ('HANDLER_WRITE', 'HANDLER_UPDATE', 'HANDLER_DELETE')";
  const std::vector<std::string> before = read(handler_writes, {});
  ASSERT_TRUE((*storage)->RecordKey(intended).ok());
  const std::vector<std::string> after = read(handler_writes, {});  // the writes go first
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(after, before);
  ASSERT_TRUE((*storage)->Commit().ok());
  absl::StatusOr<std::optional<KeyRecord>> stored = engine_->GetKeyRecord(intended.identity);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, intended);
}

TEST_F(MysqlEngineTest, IdentitiesCompareAndSortByteWise) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(4));
  ASSERT_NO_FATAL_FAILURE(Fund("alice", 100));
  // Keys differing in case or a trailing space are different operations.
  for (const char* key : {"ABC", "abc", "abc "}) {
    absl::StatusOr<Outcome> outcome = Submit(key, Transfer("alice", "bob", 1));
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << key;
  }
  // Account ids too, and listing follows byte order ('Z' < 'a'), like std::string.
  ASSERT_TRUE(ledger_->OpenAccount({.id = "Alice", .asset = "CREDITS"}).ok());
  ASSERT_TRUE(ledger_->OpenAccount({.id = "Zed", .asset = "CREDITS"}).ok());
  EXPECT_EQ(BalanceOf("Alice"), 0);
  absl::StatusOr<std::vector<Account>> listed = engine_->ListAccounts("", 100);
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> ids;
  for (const Account& account : *listed) ids.push_back(account.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"Alice", "Zed", "alice", "bob", "carol", "dave",
                                           "erin", "issuance"}));
  absl::StatusOr<std::vector<KeyRecord>> keys = engine_->ListKeyRecords(std::nullopt, 100);
  ASSERT_TRUE(keys.ok()) << keys.status();
  std::vector<std::string> transfer_keys;  // every key but the funding top-up's
  for (const KeyRecord& record : *keys) {
    if (record.identity.key != "fund-alice") transfer_keys.push_back(record.identity.key);
  }
  EXPECT_EQ(transfer_keys, (std::vector<std::string>{"ABC", "abc", "abc "}));
}

TEST_F(MysqlEngineTest, UpdatesCountTheRowsTheyMatchNotOnlyThoseTheyChange) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(2));
  // CLIENT_FOUND_ROWS: closing a closed account changes nothing, yet finds it.
  EXPECT_TRUE(engine_->CloseAccountIfZeroBalance("carol").value());
  EXPECT_TRUE(engine_->CloseAccountIfZeroBalance("carol").value());
  EXPECT_FALSE(engine_->CloseAccountIfZeroBalance("nobody").value());
  // A compare-and-set whose replacement equals the stored claim still succeeds.
  WorkClaim claim;
  claim.identity = {"gateway.charge", Scope{}, "order-1"};
  claim.fingerprint = "f";
  claim.owner = "worker-1";
  claim.result = "caf\xC3\xA9";
  absl::StatusOr<WorkClaim> stored = engine_->work_claims().InsertWorkClaimIfAbsent(claim);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, claim);
  EXPECT_TRUE(*engine_->work_claims().ReplaceWorkClaim(claim.identity, "worker-1", 1, claim));
  EXPECT_FALSE(*engine_->work_claims().ReplaceWorkClaim(claim.identity, "worker-2", 1, claim));
}

TEST_F(MysqlEngineTest, PooledSessionKilledWhileIdleIsReplacedNotReused) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(1));
  ASSERT_NO_FATAL_FAILURE(Fund("alice", 100));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    absl::StatusOr<std::vector<int64_t>> sessions = server_->Sessions(database_);
    ASSERT_TRUE(sessions.ok()) << sessions.status();
    ASSERT_EQ(sessions->size(), 1u);  // the pool's one idle session
    ASSERT_TRUE(server_->Kill(sessions->front()).ok());
    ASSERT_TRUE(WaitForServerState([&] {
      absl::StatusOr<std::vector<int64_t>> left = server_->Sessions(database_);
      return left.ok() && left->empty();
    }));

    // Round 0: a read; round 1: a submit. Both find the dead session on first use,
    // before anything ran, and go on with a new one.
    if (round == 0) {
      EXPECT_EQ(BalanceOf("alice"), 100);
    } else {
      absl::StatusOr<Outcome> outcome = Submit("after-kill", Transfer("alice", "bob", 5));
      ASSERT_TRUE(outcome.ok()) << outcome.status();
      EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
    }
    absl::StatusOr<std::vector<int64_t>> replaced = server_->Sessions(database_);
    ASSERT_TRUE(replaced.ok()) << replaced.status();
    ASSERT_EQ(replaced->size(), 1u);
    EXPECT_NE(replaced->front(), sessions->front());
  }
  ExpectVerifiedLedger();
}

TEST_F(MysqlEngineTest, TwoProcessesMigratingAtOnceApplyEachMigrationOnce) {
  constexpr int kMigrators = 4;
  absl::Barrier start(kMigrators);
  std::vector<absl::Status> results(kMigrators);
  std::vector<std::thread> migrators;
  for (int i = 0; i < kMigrators; ++i) {
    migrators.emplace_back([&, i] {
      start.Block();
      results[i] = Open(1, /*migrate=*/true).status();
    });
  }
  for (std::thread& migrator : migrators) migrator.join();
  for (const absl::Status& result : results) EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(*server_->QueryText(absl::StrCat("SELECT COUNT(*) FROM `", database_,
                                             "`.schema_migrations")),
            std::to_string(MysqlMigrations().size()));
  // Every table InnoDB, utf8mb4; the identity columns binary.
  EXPECT_EQ(*server_->QueryText(absl::StrCat(
                "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '",
                database_, "' AND (ENGINE <> 'InnoDB' OR TABLE_COLLATION NOT LIKE 'utf8mb4%')")),
            "0");
  EXPECT_EQ(*server_->QueryText(absl::StrCat(
                "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '",
                database_, "' AND TABLE_NAME = 'idempotency_keys' AND COLUMN_NAME = 'key'")),
            "varbinary");
  // And migrating again is a no-op.
  absl::StatusOr<std::unique_ptr<Engine>> again = Open(1, /*migrate=*/true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->Migrate().ok());
}

TEST(MysqlEngineOpenTest, UnreachableServerIsUnavailable) {
  MysqlOptions options;
  options.connection = "mysql://root@127.0.0.1:1/ledger";  // nothing listens on port 1
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kUnavailable) << engine.status();
}

TEST(MysqlEngineOpenTest, BadOptionsAreInvalidArgument) {
  MysqlOptions options;
  options.connection = "mysql://root@127.0.0.1/ledger";
  options.pool_size = 0;
  EXPECT_EQ(OpenMysqlEngine(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.pool_size = 4;
  options.connection = "postgres://root@127.0.0.1/ledger";
  EXPECT_EQ(OpenMysqlEngine(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ledger::testing
