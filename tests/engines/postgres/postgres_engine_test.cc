// The PostgreSQL engine's own tests, beyond the shared conformance suite: many
// connections at once, pooled connections killed while idle, lock timeouts, the locks
// each claim mode takes, concurrent migrations. Every test runs in both claim modes. (A
// backend killed mid-transaction and deadlocks are error-table rows:
// tests/conformance/error_table_suite.cc runs them on every engine.)
#include "engines/postgres/postgres_migrations.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/postgres/postgres_statements.h"

#include <atomic>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "base/clock.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/support/claims.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_ledger_test.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger {

// Test names and failure messages say "advisory" / "row", not the enum's bytes.
void PrintTo(PostgresClaimMode mode, std::ostream* out) {
  *out << (mode == PostgresClaimMode::kRow ? "row" : "advisory");
}

namespace testing {
namespace {

constexpr char kAsset[] = "CREDITS";

Operation Transfer(const std::string& from, const std::string& to, Amount amount) {
  return Operation::Transfer(from, to, kAsset, amount);
}

class PostgresEngineTest : public PostgresLedgerTest {
 protected:
  Engine& engine() override { return *faults_; }

  // A fresh database with `account_count` funded accounts "account-00".. plus
  // "issuance", "alice" (funded with `alice_balance`) and "bob".
  void OpenLedger(int pool_size, int account_count = 0, Amount alice_balance = 1000,
                  const std::string& dsn_suffix = "") {
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        OpenFreshPostgresEngine(GetParam(), pool_size, dsn_suffix);
    ASSERT_TRUE(engine.ok()) << engine.status();
    faults_ = std::make_shared<FaultInjectingEngine>(std::shared_ptr<Engine>(std::move(*engine)));
    ledger_ = std::make_unique<Ledger>(OpenTestLedger(faults_, {.clock = &clock_}));
    ASSERT_TRUE(ledger_->DefineAsset({kAsset, 0}).ok());
    ASSERT_TRUE(
        ledger_->OpenAccount({.id = "issuance", .asset = kAsset, .allow_negative = true}).ok());
    for (const std::string& id : {std::string("alice"), std::string("bob")}) {
      ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = kAsset}).ok());
    }
    Fund("alice", alice_balance);
    for (int i = 0; i < account_count; ++i) {
      std::string id = absl::StrCat("account-", i / 10, i % 10);
      ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = kAsset}).ok());
      Fund(id, 1000);
      accounts_.push_back(id);
    }
  }

  void Fund(const std::string& id, Amount amount) {
    absl::StatusOr<Outcome> funded =
        Submit(absl::StrCat("fund-", id), Operation::TopUp("issuance", id, kAsset, amount));
    ASSERT_TRUE(funded.ok()) << funded.status();
    ASSERT_EQ(funded->kind, OutcomeKind::kCommitted) << OutcomeToJson(*funded).dump();
  }

  absl::StatusOr<Outcome> Submit(const std::string& key, const Operation& operation,
                                 ClaimOptions claim = {}) {
    return ledger_->Submit(SubmitRequest{key, {}, operation, claim});
  }

  std::shared_ptr<FaultInjectingEngine> faults_;
  std::vector<std::string> accounts_;
};

TEST_P(PostgresEngineTest, SixtyFourSubmittersOfOneKeyCommitOnceAndReplayTheRest) {
  constexpr int kSubmitters = 64;
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/kSubmitters));
  absl::Barrier* start = new absl::Barrier(kSubmitters);  // freed by the last one through
  std::vector<absl::StatusOr<Outcome>> outcomes(kSubmitters);
  std::vector<std::thread> submitters;
  for (int i = 0; i < kSubmitters; ++i) {
    submitters.emplace_back([&, i] {
      if (start->Block()) delete start;
      outcomes[i] = Submit("one-key", Transfer("alice", "bob", 7));
    });
  }
  for (std::thread& submitter : submitters) submitter.join();

  int committed = 0;
  int duplicates = 0;
  std::optional<Transaction> winner;
  for (const absl::StatusOr<Outcome>& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    if (outcome->kind == OutcomeKind::kCommitted) {
      ++committed;
      winner = outcome->transaction;
    }
    if (outcome->kind == OutcomeKind::kDuplicate) ++duplicates;
  }
  ASSERT_EQ(committed, 1);
  EXPECT_EQ(duplicates, kSubmitters - 1);
  for (const absl::StatusOr<Outcome>& outcome : outcomes) {
    EXPECT_EQ(outcome->transaction, *winner);  // byte for byte: id, entries, timestamps
  }
  EXPECT_EQ(BalanceOf("bob"), 7);
  ExpectVerifiedClean();
}

TEST_P(PostgresEngineTest, SixteenConnectionsTransferringOverTenAccountsLeaveAVerifiedLedger) {
  constexpr int kConnections = 16;
  constexpr int kTransfersPerConnection = 40;
  constexpr int kAccounts = 10;
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/kConnections, kAccounts));
  std::atomic<int> committed{0};
  std::atomic<int> rejected{0};
  absl::Barrier* start = new absl::Barrier(kConnections);
  std::vector<std::thread> workers;
  for (int w = 0; w < kConnections; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 random(42 + w);
      if (start->Block()) delete start;
      for (int i = 0; i < kTransfersPerConnection; ++i) {
        size_t from = random() % kAccounts;
        size_t to = (from + 1 + random() % (kAccounts - 1)) % kAccounts;
        absl::StatusOr<Outcome> outcome =
            Submit(absl::StrCat("transfer-", w, "-", i),
                   Transfer(accounts_[from], accounts_[to], 1 + random() % 300));
        ASSERT_TRUE(outcome.ok()) << outcome.status();
        ASSERT_TRUE(outcome->kind == OutcomeKind::kCommitted ||
                    outcome->kind == OutcomeKind::kRejected)
            << OutcomeToJson(*outcome).dump();
        (outcome->kind == OutcomeKind::kCommitted ? committed : rejected)++;
      }
    });
  }
  for (std::thread& worker : workers) worker.join();

  EXPECT_EQ(committed + rejected, kConnections * kTransfersPerConnection);
  EXPECT_GT(committed.load(), 0);
  Amount total = 0;
  for (const std::string& id : accounts_) {
    EXPECT_GE(BalanceOf(id), 0) << id;
    total += BalanceOf(id);
  }
  EXPECT_EQ(total, kAccounts * 1000);
  absl::StatusOr<VerifyReport> report = VerifyLedger(*faults_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  EXPECT_EQ(report->transactions, committed + kAccounts + 1);  // + the funding top-ups
}

TEST_P(PostgresEngineTest, FailFastClaimStillWaitsForAnAccountLockHeldElsewhere) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2));
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  pqxx::connection locker_connection(*dsn);
  pqxx::nontransaction locker(locker_connection);
  locker.exec("BEGIN");
  locker.exec("SELECT 1 FROM accounts WHERE id = 'alice' FOR UPDATE");

  ClaimOptions fail_fast;
  fail_fast.wait = WaitPolicy::FailFast();
  absl::StatusOr<Outcome> outcome;
  std::thread submitter([&] { outcome = Submit("ff-1", Transfer("alice", "bob", 5), fail_fast); });
  // The claim's 1 ms lock_timeout must be gone by the time the account lock is awaited.
  EXPECT_TRUE(
      WaitOnPostgresServerUntil(
          "EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
                        "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' "
                        "AND query LIKE '%FOR UPDATE OF a%')"));
  locker.exec("COMMIT");
  submitter.join();

  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  EXPECT_EQ(BalanceOf("bob"), 5);
}

// A claim whose wait equals the session's lock_timeout (account_lock_wait; the defaults
// agree at 10 s) begins its transaction without setting the wait: it must still end when
// that wait runs out, as "in progress" (the claim's reading of a lock timeout), not as an
// account lock's RetryableError, and the holder's submit must still commit.
TEST_P(PostgresEngineTest, AClaimWaitEqualToTheAccountLockWaitStillEndsInProgress) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2, /*account_count=*/0,
                                     /*alice_balance=*/1000, "?account_lock_wait=300ms"));
  absl::Notification claimed, release;
  faults_->SetHook(FaultPoint::kAfterClaim, [&] {
    if (claimed.HasBeenNotified()) return;
    claimed.Notify();
    release.WaitForNotification();
  });
  absl::StatusOr<Outcome> first;
  std::thread holder([&] { first = Submit("held-1", Transfer("alice", "bob", 1)); });
  claimed.WaitForNotification();

  ClaimOptions same_wait;
  same_wait.wait.wait_max = absl::Milliseconds(300);
  const absl::Time began = absl::Now();
  absl::StatusOr<Outcome> second = Submit("held-1", Transfer("alice", "bob", 1), same_wait);
  const absl::Duration waited = absl::Now() - began;
  release.Notify();
  holder.join();

  EXPECT_TRUE(IsInProgress(second.status())) << second.status();
  EXPECT_GE(waited, absl::Milliseconds(250));
  EXPECT_LT(waited, absl::Seconds(5));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->kind, OutcomeKind::kCommitted) << OutcomeToJson(*first).dump();
  EXPECT_EQ(BalanceOf("bob"), 1);
}

TEST_P(PostgresEngineTest, IdlePooledConnectionKilledByTheServerIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(
      OpenLedger(/*pool_size=*/1));  // one connection: the next submit must reuse or replace it
  EXPECT_EQ(TerminatePostgresBackends("idle"), "1");
  absl::StatusOr<Outcome> outcome = Submit("after-kill", Transfer("alice", "bob", 3));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  EXPECT_EQ(BalanceOf("bob"), 3);
}

TEST_P(PostgresEngineTest, OnlyTheAdvisoryModeTakesAnAdvisoryLockToClaim) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2));
  absl::Notification claimed, release;
  faults_->SetHook(FaultPoint::kAfterClaim, [&] {
    if (claimed.HasBeenNotified()) return;
    claimed.Notify();
    release.WaitForNotification();
  });
  absl::StatusOr<Outcome> outcome;
  std::thread submitter([&] { outcome = Submit("locks-1", Transfer("alice", "bob", 1)); });
  claimed.WaitForNotification();
  absl::StatusOr<std::string> advisory_locks = QueryPostgresValue(
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = "
      "(SELECT oid FROM pg_database WHERE datname = current_database())");
  // The row mode's placeholder is uncommitted: no other session can see it.
  absl::StatusOr<std::string> visible_keys =
      QueryPostgresValue("SELECT count(*) FROM idempotency_keys");
  release.Notify();
  submitter.join();

  ASSERT_TRUE(advisory_locks.ok()) << advisory_locks.status();
  EXPECT_EQ(*advisory_locks, GetParam() == PostgresClaimMode::kAdvisoryLock ? "1" : "0");
  EXPECT_EQ(visible_keys.value_or("error"), "1");  // alice's funding top-up only
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted);
}

// The advisory claim found no row, so the record goes in by a plain INSERT. A writer
// that took no advisory lock (a row-mode ledger on the same database) records the key
// first: the primary key refuses the second record, the submit is retried, and the
// retry reads the intruder's record instead of posting its own. (The intruder posts
// between other accounts: since the claim's round trip also locks the submit's
// accounts, one on the same accounts would wait for this submit's locks.)
TEST_P(PostgresEngineTest, KeyRecordedBehindTheClaimIsReadOnRetryNotPostedTwice) {
  if (GetParam() != PostgresClaimMode::kAdvisoryLock) {
    GTEST_SKIP() << "the row mode's placeholder makes a second claimer wait for it";
  }
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2, /*account_count=*/1));
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  PostgresOptions row_options;
  row_options.connection = *dsn + "?claim=row";
  row_options.pool_size = 1;
  row_options.migrate = false;
  absl::StatusOr<std::unique_ptr<Engine>> row_engine = OpenPostgresEngine(row_options);
  ASSERT_TRUE(row_engine.ok()) << row_engine.status();
  Ledger intruder = OpenTestLedger(std::shared_ptr<Engine>(std::move(*row_engine)),
                                   {.clock = &clock_});

  absl::StatusOr<Outcome> intruded;
  std::atomic<int> claims = 0;
  faults_->SetHook(FaultPoint::kAfterClaim, [&] {
    if (claims++ > 0) return;
    intruded = intruder.Submit(
        SubmitRequest{"behind-1", {}, Transfer("account-00", "issuance", 7), {}});
  });
  absl::StatusOr<Outcome> outcome = Submit("behind-1", Transfer("alice", "bob", 7));

  ASSERT_TRUE(intruded.ok()) << intruded.status();
  EXPECT_EQ(intruded->kind, OutcomeKind::kCommitted);
  // The retry found the intruder's record: its payload differs, so a conflict.
  EXPECT_TRUE(IsConflict(outcome.status())) << outcome.status();
  EXPECT_GE(claims.load(), 2);  // the first attempt's write failed and the call retried
  EXPECT_EQ(BalanceOf("bob"), 0);
  EXPECT_EQ(BalanceOf("account-00"), 993);
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM idempotency_keys WHERE key = 'behind-1'")
                .value_or("error"),
            "1");
  ExpectVerifiedClean();
}

TEST_P(PostgresEngineTest, RejectedAndReplayedSubmitsLeaveNoPlaceholderRow) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2, /*account_count=*/0, /*alice_balance=*/10));
  absl::StatusOr<Outcome> rejected = Submit("r-1", Transfer("alice", "bob", 11));
  ASSERT_TRUE(rejected.ok()) << rejected.status();
  EXPECT_EQ(rejected->kind, OutcomeKind::kRejected);
  ASSERT_EQ(Submit("r-2", Transfer("alice", "bob", 10))->kind, OutcomeKind::kCommitted);
  ASSERT_EQ(Submit("r-2", Transfer("alice", "bob", 10))->kind, OutcomeKind::kDuplicate);
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM idempotency_keys WHERE state = 'pending'")
                .value_or("error"),
            "0");
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM idempotency_keys WHERE key = 'r-1'")
                .value_or("error"),
            "0");
}

TEST_P(PostgresEngineTest, IdentitiesCompareAndSortByteWise) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2));
  for (const std::string& id : {std::string("B"), std::string("a"), std::string("b")}) {
    ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = kAsset}).ok());
  }
  absl::StatusOr<std::vector<Account>> accounts = faults_->ListAccounts("", 100);
  ASSERT_TRUE(accounts.ok()) << accounts.status();
  std::vector<std::string> ids;
  for (const Account& account : *accounts) ids.push_back(account.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"B", "a", "alice", "b", "bob", "issuance"}));

  // "ABC" and "abc" are two keys, so two operations.
  ASSERT_EQ(Submit("ABC", Transfer("alice", "bob", 1))->kind, OutcomeKind::kCommitted);
  ASSERT_EQ(Submit("abc", Transfer("alice", "bob", 1))->kind, OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 2);
  absl::StatusOr<std::vector<KeyRecord>> keys = faults_->ListKeyRecords(std::nullopt, 100);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 3u);  // with the funding top-up's, all in the one key space
  EXPECT_EQ((*keys)[0].identity.key, "ABC");
  EXPECT_EQ((*keys)[1].identity.key, "abc");
  EXPECT_EQ((*keys)[2].identity.key.substr(0, 5), "fund-");
}

// lock_accounts runs once per transaction: the session keeps its generic plan rather than
// planning each call anew (issue 29, docs/benchmarks.md). PostgreSQL makes five custom
// plans first and then keeps the generic one only if it costs no more; a statement whose
// custom plans see the array's length never gets there.
TEST_P(PostgresEngineTest, TheAccountLockKeepsOneGenericPlanPerSession) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2));
  {
    // As many accounts as a load run's (on a table of a few rows every plan costs alike).
    absl::StatusOr<std::unique_ptr<StorageTransaction>> filler = faults_->Begin({});
    ASSERT_TRUE(filler.ok()) << filler.status();
    for (const char* sql :
         {"INSERT INTO accounts (id, asset, allow_negative, overdraft_limit, created_at) "
          "SELECT 'filler-' || lpad(n::text, 5, '0'), $1, false, 0, 0 "
          "FROM generate_series(1, 10000) AS n",
          "ANALYZE accounts"}) {
      std::vector<SqlValue> parameters;
      if (absl::string_view(sql).find("$1") != absl::string_view::npos) {
        parameters.emplace_back(std::string(kAsset));
      }
      absl::StatusOr<SqlRows> done = (*filler)->RunCallerSql(sql, parameters);
      ASSERT_TRUE(done.ok()) << done.status();
    }
    ASSERT_TRUE((*filler)->Commit().ok());
  }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> transaction = faults_->Begin({});
  ASSERT_TRUE(transaction.ok()) << transaction.status();
  for (int call = 0; call < 8; ++call) {
    absl::StatusOr<std::vector<Account>> locked =
        (*transaction)->LockAccounts({"alice", "bob", "issuance"});
    ASSERT_TRUE(locked.ok()) << locked.status();
    ASSERT_EQ(locked->size(), 3u);
    EXPECT_EQ((*locked)[0].id, "alice");  // in the order asked
    EXPECT_EQ((*locked)[2].id, "issuance");
  }
  absl::StatusOr<SqlRows> plans = (*transaction)->RunCallerSql(
      "SELECT generic_plans FROM pg_prepared_statements WHERE name = 'lock_accounts'", {});
  ASSERT_TRUE(plans.ok()) << plans.status();
  ASSERT_EQ(plans->rows.size(), 1u);
  ASSERT_TRUE(plans->rows[0][0].has_value());
  EXPECT_GT(std::stoi(*plans->rows[0][0]), 0) << "every call of lock_accounts was planned anew";
  (*transaction)->Rollback();
}

// Every statement a submit sends keeps one generic plan per session: none is planned
// per call (the pool's sessions run with plan_cache_mode = force_generic_plan,
// docs/benchmarks.md "Generic plans"). Left to choose, PostgreSQL plans each statement's
// first five calls anew (this test then fails on every statement), and under a load
// run's 10,000 accounts kept planning the checked write at every call.
TEST_P(PostgresEngineTest, NoStatementOfASubmitIsPlannedPerCall) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/1));  // one session: the one read below
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(Submit(absl::StrCat("plans-", i), Transfer("alice", "bob", 1))->kind,
              OutcomeKind::kCommitted);
  }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> transaction = faults_->Begin({});
  ASSERT_TRUE(transaction.ok()) << transaction.status();
  absl::StatusOr<SqlRows> plans = (*transaction)->RunCallerSql(
      "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements ORDER BY name", {});
  ASSERT_TRUE(plans.ok()) << plans.status();
  bool saw_write = false;
  for (const std::vector<std::optional<std::string>>& row : plans->rows) {
    ASSERT_TRUE(row[0].has_value() && row[1].has_value() && row[2].has_value());
    EXPECT_EQ(*row[2], "0") << *row[0] << " was planned anew at " << *row[2] << " calls";
    if (absl::StartsWith(*row[0], "write_batch_")) {
      saw_write = true;
      EXPECT_GE(std::stoi(*row[1]), 10) << "the write ran once per submit";
    }
  }
  EXPECT_TRUE(saw_write) << "the session prepared no write_batch_<parts>";
  (*transaction)->Rollback();
}

// A single submit sends its claim's one-key forms, which look the key up by scalars
// (postgres_statements.h, ClaimKeys), and its write with the rows inline (WriteShape); a
// batch of several keys the claim's array forms, and a batch of more than
// kInlineRowsMax rows a part (five transfers: ten entries) the write's arrays. All land
// the same records.
TEST_P(PostgresEngineTest, ASingleSubmitUsesTheScalarFormsAndABatchTheArrayForms) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/1));  // one session: the one read below
  ASSERT_EQ(Submit("one-key-form", Transfer("alice", "bob", 1))->kind, OutcomeKind::kCommitted);
  SubmitBatchRequest batch;
  for (int item = 0; item < 5; ++item) {
    batch.items.push_back(
        SubmitRequest{absl::StrCat("array-form-", item), {}, Transfer("alice", "bob", 1), {}});
  }
  absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status();
  for (const SubmitResult& result : *results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->kind, OutcomeKind::kCommitted);
  }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> transaction = faults_->Begin({});
  ASSERT_TRUE(transaction.ok()) << transaction.status();
  absl::StatusOr<SqlRows> prepared = (*transaction)->RunCallerSql(
      "SELECT name FROM pg_prepared_statements WHERE name LIKE 'claim\\_%'"
      " OR name LIKE 'read\\_keys\\_%' OR name LIKE 'lock\\_accounts\\_unless%'"
      " OR name LIKE 'write\\_batch\\_%'",
      {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  std::set<std::string> names;
  for (const std::vector<std::optional<std::string>>& row : prepared->rows) {
    ASSERT_TRUE(row[0].has_value());
    names.insert(*row[0]);
  }
  (*transaction)->Rollback();
  const bool row_mode = GetParam() == PostgresClaimMode::kRow;
  // A transfer's write: the advisory mode records its key with it, the row mode at the
  // claim.
  using postgres_internal::WritePart;
  postgres_internal::WriteParts transfer = postgres_internal::WriteParts()
                                               .With(WritePart::kTransactions)
                                               .With(WritePart::kEntries)
                                               .With(WritePart::kAccounts)
                                               .With(WritePart::kEvents);
  postgres_internal::WriteBatchCounts one_transfer;
  one_transfer[WritePart::kTransactions] = 1;
  one_transfer[WritePart::kEntries] = 2;
  one_transfer[WritePart::kAccounts] = 2;
  one_transfer[WritePart::kEvents] = 1;
  if (!row_mode) {
    transfer = transfer.With(WritePart::kNewKeys);
    one_transfer[WritePart::kNewKeys] = 1;
  }
  const std::string inline_write =
      postgres_internal::WriteStatementOf({.parts = transfer, .inline_rows = one_transfer}).name;
  const std::string array_write = postgres_internal::WriteStatementOf(transfer).name;
  EXPECT_TRUE(names.contains(inline_write)) << inline_write << " was not prepared";
  EXPECT_TRUE(names.contains(array_write)) << array_write << " was not prepared";
  EXPECT_EQ(inline_write, row_mode ? "write_batch_4d_rows_1_2_2_1" : "write_batch_5d_rows_1_2_2_1_1");
  const std::vector<std::string> expected =
      row_mode ? std::vector<std::string>{"claim_insert_record", "claim_insert_records",
                                          "claim_lock_key_row", "claim_lock_key_rows",
                                          "claim_read_key",
                                          "lock_accounts_unless_replayed_row_mode_one_key",
                                          "read_keys_lock_accounts_row_mode"}
               : std::vector<std::string>{"claim_advisory_lock", "claim_advisory_locks",
                                          "claim_read_key",
                                          "lock_accounts_unless_replayed_one_key",
                                          "read_keys_lock_accounts"};
  for (const std::string& name : expected) {
    EXPECT_TRUE(names.contains(name)) << name << " was not prepared";
  }
  // Each key was recorded once, by whichever form claimed it.
  for (const char* key : {"one-key-form", "array-form-0", "array-form-4"}) {
    EXPECT_EQ(Submit(key, Transfer("alice", "bob", 1))->kind, OutcomeKind::kDuplicate) << key;
  }
}

// Each inline write shape holds its row counts, and its plan stays in the server
// session: a session prepares at most kInlineWriteShapesPerSessionMax of them, and a
// submit of a new row count past that sends the arrays' shape. 18 row counts here
// (transfers and posts of three entries, with 0 to 8 metadata members) all commit.
TEST_P(PostgresEngineTest, ASessionPreparesABoundedNumberOfInlineWriteShapes) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/1));  // one session: the one read below
  int submitted = 0;
  for (int members = 0; members <= 8; ++members) {
    nlohmann::json metadata = nlohmann::json::object();
    for (int member = 0; member < members; ++member) {
      metadata[absl::StrCat("m", member)] = "v";  // a string: one indexed row each
    }
    Operation transfer = Transfer("alice", "bob", 1);
    Operation post = Operation::Post(
        {{"alice", kAsset, -1}, {"alice", kAsset, -1}, {"bob", kAsset, 2}});
    transfer.metadata = metadata;
    post.metadata = metadata;
    for (const Operation& operation : {transfer, post}) {
      absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("shape-", submitted++), operation);
      ASSERT_TRUE(outcome.ok()) << outcome.status();
      EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
    }
  }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> transaction = faults_->Begin({});
  ASSERT_TRUE(transaction.ok()) << transaction.status();
  absl::StatusOr<SqlRows> prepared = (*transaction)->RunCallerSql(
      "SELECT count(*) FILTER (WHERE name LIKE 'write\\_batch\\_%\\_rows\\_%'),"
      " count(*) FILTER (WHERE name NOT LIKE '%\\_rows\\_%')"
      " FROM pg_prepared_statements WHERE name LIKE 'write\\_batch\\_%'",
      {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  (*transaction)->Rollback();
  ASSERT_EQ(prepared->rows.size(), 1u);
  EXPECT_EQ(prepared->rows[0][0],
            std::to_string(postgres_internal::kInlineWriteShapesPerSessionMax));
  EXPECT_NE(prepared->rows[0][1], "0");  // the shapes past them: arrays
  ExpectVerifiedClean();
}

// A session plans each statement once, against the statistics of that moment. Made
// while autovacuum had last analyzed the tables tiny (a new ledger's first submits), a
// plan scanned the key table (read_keys_lock_accounts) or the accounts and kept the scan as they
// grew, until the next ANALYZE (docs/engines/postgres.md). The pool's sessions price
// sequential scans out, so every statement of a submit is planned on its indexes
// whatever the statistics say; without that, the plans below scan.
TEST_P(PostgresEngineTest, NoStatementOfASubmitScansATablePlannedWhileItWasTiny) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/1));  // one session: the one read below
  auto run = [&](const std::string& sql) -> absl::StatusOr<SqlRows> {
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> transaction, faults_->Begin({}));
    absl::StatusOr<SqlRows> rows = transaction->RunCallerSql(sql, {});
    if (!rows.ok()) return rows;
    LEDGER_RETURN_IF_ERROR(transaction->Commit());
    return rows;
  };
  ASSERT_EQ(Submit("tiny-0", Transfer("alice", "bob", 1))->kind, OutcomeKind::kCommitted);
  for (const char* table : {"accounts", "idempotency_keys", "transactions", "entries",
                            "outbox_events"}) {
    ASSERT_TRUE(run(absl::StrCat("ANALYZE ", table)).ok()) << table;  // as autovacuum would
  }
  for (int i = 1; i <= 6; ++i) {  // each statement planned now, generic from its first call
    ASSERT_EQ(Submit(absl::StrCat("tiny-", i), Transfer("alice", "bob", 1))->kind,
              OutcomeKind::kCommitted);
  }
  SubmitBatchRequest batch;  // and the claim's forms for several keys
  for (int item = 0; item < 2; ++item) {
    batch.items.push_back(
        SubmitRequest{absl::StrCat("tiny-batch-", item), {}, Transfer("alice", "bob", 1), {}});
  }
  absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status();
  absl::StatusOr<SqlRows> statements = run(
      "SELECT name, cardinality(parameter_types) FROM pg_prepared_statements"
      " WHERE name LIKE 'claim\\_%' OR name LIKE 'lock\\_accounts%' OR name LIKE 'read\\_keys%'"
      " OR name LIKE 'write\\_batch%' ORDER BY name");
  ASSERT_TRUE(statements.ok()) << statements.status();
  int explained = 0;
  for (const std::vector<std::optional<std::string>>& row : statements->rows) {
    ASSERT_TRUE(row[0].has_value() && row[1].has_value());
    std::vector<std::string> nulls(std::stoul(*row[1]), "NULL");
    // EXPLAIN shows the session's cached generic plan and executes nothing.
    absl::StatusOr<SqlRows> plan = run(absl::StrCat(
        "EXPLAIN EXECUTE ", *row[0], nulls.empty() ? "" : absl::StrCat("(", absl::StrJoin(nulls, ", "), ")")));
    ASSERT_TRUE(plan.ok()) << *row[0] << ": " << plan.status();
    for (const std::vector<std::optional<std::string>>& line : plan->rows) {
      EXPECT_EQ(line[0].value_or("").find("Seq Scan"), std::string::npos)
          << *row[0] << ": " << line[0].value_or("");
    }
    ++explained;
  }
  EXPECT_GE(explained, 6) << "the claim, the key read, the account lock, their batch forms and the write";
}

// Issue 29's shape d in the row mode: the claim inserts the key's final record, so the
// write statement writes no key row (the transaction's own statistics,
// pg_stat_xact_user_tables: no insert, no update). The advisory mode writes the record
// with the write: one insert there, none at the claim.
TEST_P(PostgresEngineTest, TheKeyRowIsWrittenOnceAndTheRowClaimWritesTheFinalRecord) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2));
  const KeyRecord intended = ClaimOf(KeyIdentityOf(SubmitRequest{.key = "once"}), clock_.Now());
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*storage)->ClaimKey(intended);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_FALSE(claimed->has_value());
  auto read = [&](const std::string& sql) -> std::vector<std::optional<std::string>> {
    absl::StatusOr<SqlRows> rows = (*storage)->RunCallerSql(sql, {intended.identity.key});
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok() || rows->rows.size() != 1) return {};
    return rows->rows.front();
  };
  const std::string key_row =
      "SELECT fingerprint, state, transaction_id, created_at::text, expires_at::text"
      " FROM idempotency_keys WHERE key = $1";
  const std::string written =
      "SELECT n_tup_ins::text, n_tup_upd::text FROM pg_stat_xact_user_tables"
      " WHERE relname = 'idempotency_keys' AND schemaname = current_schema() AND $1 <> ''";
  if (GetParam() == PostgresClaimMode::kRow) {
    EXPECT_EQ(read(key_row),
              (std::vector<std::optional<std::string>>{
                  intended.fingerprint, "committed", intended.transaction_id,
                  absl::StrCat(absl::ToUnixMicros(intended.created_at)),
                  absl::StrCat(absl::ToUnixMicros(intended.expires_at))}));
  } else {
    EXPECT_TRUE(read(key_row).empty());  // recorded by the write
  }
  // Deltas within the transaction: the view also counts earlier transactions of the
  // session whose statistics were not reported yet.
  auto counts = [&]() -> std::pair<int, int> {
    const std::vector<std::optional<std::string>> row = read(written);
    if (row.size() != 2 || !row[0].has_value() || !row[1].has_value()) return {-1, -1};
    return {std::stoi(*row[0]), std::stoi(*row[1])};
  };
  const auto [inserted_before, updated_before] = counts();
  ASSERT_GE(inserted_before, 0);
  ASSERT_TRUE((*storage)->RecordKey(intended).ok());
  // The caller's statement goes after the buffered write statement.
  const auto [inserted_after, updated_after] = counts();
  EXPECT_EQ(inserted_after - inserted_before, GetParam() == PostgresClaimMode::kRow ? 0 : 1);
  EXPECT_EQ(updated_after - updated_before, 0);
  ASSERT_TRUE((*storage)->Commit().ok());
  absl::StatusOr<std::optional<KeyRecord>> stored = engine().GetKeyRecord(intended.identity);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, intended);
}

// A claim of several keys reads each key's row once: the accounts' lock tests the rows
// its own statement read (read_keys_lock_accounts), where it used to probe every key
// again. Counted by the transaction's own index scans of the key table: one per key
// (advisory mode), three in row mode (the INSERT's conflict check and the rows' lock
// come first); a second probe per key would make them two and four.
TEST_P(PostgresEngineTest, AClaimOfSeveralKeysReadsEachKeyRowOnce) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger(/*pool_size=*/2));
  std::vector<KeyRecord> intended;
  for (const char* key : {"probe-a", "probe-b", "probe-c"}) {
    intended.push_back(ClaimOf(KeyIdentityOf(SubmitRequest{.key = key}), clock_.Now()));
  }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  // A delta within the transaction: the view also counts earlier transactions of the
  // session whose statistics were not reported yet.
  auto scans = [&]() -> int {
    absl::StatusOr<SqlRows> rows = (*storage)->RunCallerSql(
        "SELECT idx_scan::text FROM pg_stat_xact_user_tables"
        " WHERE relname = 'idempotency_keys' AND schemaname = current_schema()",
        {});
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok() || rows->rows.size() != 1 || !rows->rows[0][0].has_value()) return -1;
    return std::stoi(*rows->rows[0][0]);
  };
  const int scans_before = scans();
  ASSERT_GE(scans_before, 0);
  (*storage)->ExpectAccountLocks({"alice", "bob"});
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> claimed = (*storage)->ClaimKeys(intended);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  for (const std::optional<KeyRecord>& record : *claimed) EXPECT_FALSE(record.has_value());
  const int per_key = GetParam() == PostgresClaimMode::kRow ? 3 : 1;
  EXPECT_EQ(scans() - scans_before, per_key * static_cast<int>(intended.size()));
  // The same statement locked the accounts: LockAccounts answers from its rows.
  absl::StatusOr<std::vector<Account>> locked = (*storage)->LockAccounts({"alice", "bob"});
  ASSERT_TRUE(locked.ok()) << locked.status();
  ASSERT_EQ(locked->size(), 2u);
  EXPECT_EQ((*locked)[0].id, "alice");
  EXPECT_EQ((*locked)[1].id, "bob");
  (*storage)->Rollback();
}

std::string ModeName(const ::testing::TestParamInfo<PostgresClaimMode>& info) {
  return info.param == PostgresClaimMode::kRow ? "row" : "advisory";
}

INSTANTIATE_TEST_SUITE_P(ClaimModes, PostgresEngineTest,
                         ::testing::Values(PostgresClaimMode::kAdvisoryLock,
                                           PostgresClaimMode::kRow),
                         ModeName);

TEST(PostgresMigrationTest, ConcurrentMigrationsOfAFreshDatabaseApplyEachVersionOnce) {
  if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
    if (RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
    GTEST_SKIP() << "postgres skipped: " << reason;
  }
  ASSERT_TRUE(ResetPostgresTestDatabase().ok());
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  constexpr int kMigrators = 4;
  absl::Barrier* start = new absl::Barrier(kMigrators);
  std::vector<absl::Status> results(kMigrators);
  std::vector<std::thread> migrators;
  for (int i = 0; i < kMigrators; ++i) {
    migrators.emplace_back([&, i] {
      PostgresOptions options;
      options.connection = *dsn;
      options.pool_size = 1;
      options.migrate = false;
      absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
      if (start->Block()) delete start;
      results[i] = engine.ok() ? (*engine)->Migrate() : engine.status();
    });
  }
  for (std::thread& migrator : migrators) migrator.join();
  for (const absl::Status& result : results) EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM schema_migrations").value_or("error"),
            std::to_string(PostgresMigrations().size()));
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM accounts").value_or("error"), "0");
}


// ?schema=NAME (PostgresOptions::schema): the ledger's tables live in that schema,
// created by the first migration; two schemas of one database are two ledgers, and
// their advisory locks never collide: the same key claimed in both at once waits for
// nothing, where a second claimer in the same schema waits.
TEST(PostgresSchemaTest, TwoSchemasOfOneDatabaseAreTwoLedgersThatNeverShareALock) {
  if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
    if (RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
    GTEST_SKIP() << "postgres skipped: " << reason;
  }
  ASSERT_TRUE(ResetPostgresTestDatabase().ok());
  ASSERT_TRUE(QueryPostgresValue("DROP SCHEMA IF EXISTS books_a CASCADE; "
                                 "DROP SCHEMA IF EXISTS books_b CASCADE").ok());
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  const char separator = dsn->find('?') == std::string::npos ? '?' : '&';
  auto open = [&](const std::string& schema) {
    PostgresOptions options;
    options.connection = absl::StrCat(*dsn, std::string(1, separator), "schema=", schema);
    options.pool_size = 2;
    return OpenPostgresEngine(options);
  };
  absl::StatusOr<std::unique_ptr<Engine>> a = open("books_a");
  absl::StatusOr<std::unique_ptr<Engine>> a_again = open("books_a");
  absl::StatusOr<std::unique_ptr<Engine>> b = open("books_b");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a_again.ok()) << a_again.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM information_schema.tables WHERE "
                               "table_schema IN ('books_a', 'books_b') AND table_name = 'transactions'")
                .value_or("error"),
            "2");
  EXPECT_EQ(QueryPostgresValue("SELECT count(*) FROM information_schema.tables WHERE "
                               "table_schema = 'public'").value_or("error"),
            "0");
  ASSERT_TRUE((*a)->PutAsset(Asset{.code = kAsset, .scale = 0}).ok());
  EXPECT_EQ((*a_again)->ListAssets()->size(), 1u);
  EXPECT_TRUE((*b)->ListAssets()->empty());

  const KeyIdentity identity{.key_namespace = "operations", .scope = Scope{.tenant = "t"}, .key = "k"};
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = (*a)->Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(identity)).ok());
  BeginOptions fail_fast{.wait = WaitPolicy::FailFast()};
  absl::StatusOr<std::unique_ptr<StorageTransaction>> same_schema = (*a_again)->Begin(fail_fast);
  ASSERT_TRUE(same_schema.ok()) << same_schema.status();
  EXPECT_FALSE((*same_schema)->ClaimKey(ClaimOf(identity)).ok());  // held by `holder`
  (*same_schema)->Rollback();
  absl::StatusOr<std::unique_ptr<StorageTransaction>> other_schema = (*b)->Begin(fail_fast);
  ASSERT_TRUE(other_schema.ok()) << other_schema.status();
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*other_schema)->ClaimKey(ClaimOf(identity));
  EXPECT_TRUE(claimed.ok()) << claimed.status();
  (*other_schema)->Rollback();
  (*holder)->Rollback();
}

// A schema name that is not one plain lower-case identifier is refused before anything
// connects, naming the rule.
TEST(PostgresSchemaTest, ABadSchemaNameIsRefused) {
  for (const char* schema : {"Books", "1books", "pg_books", "books-a", "books%3Bdrop", ""}) {
    PostgresOptions options;
    options.connection = absl::StrCat("postgresql://nobody@127.0.0.1:1/none?schema=", schema);
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
    ASSERT_FALSE(engine.ok()) << schema;
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument) << schema;
    EXPECT_NE(engine.status().message().find("lower-case letters, digits and '_'"),
              absl::string_view::npos) << engine.status();
  }
}

}  // namespace
}  // namespace testing
}  // namespace ledger
