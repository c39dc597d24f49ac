// Units of work (Ledger::Transact, ledger/unit_of_work.h), checked identically on every
// engine: the caller's row, the posting, the key record and the outbox event commit
// together or not at all; concurrent units with one key commit once; a deadlock between
// the caller's statements and the ledger's account locks reruns the work; a process
// killed before COMMIT leaves nothing. The memory engine runs the ledger parts; its
// caller SQL is Unimplemented.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "idempotency/run_idempotently.h"
#include "ledger/json.h"
#include "ledger/unit_of_work.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

// The application's own table, beside the ledger's. VARCHAR and BIGINT read the same on
// every SQL engine.
constexpr char kCreateOrders[] =
    "CREATE TABLE IF NOT EXISTS app_orders (id VARCHAR(64) PRIMARY KEY, amount BIGINT NOT NULL)";
constexpr char kCreateCounters[] =
    "CREATE TABLE IF NOT EXISTS app_counters (id VARCHAR(64) PRIMARY KEY, n BIGINT NOT NULL)";

// A bound for every wait between threads and processes of these tests.
constexpr absl::Duration kStepWaitMax = absl::Seconds(60);

bool HasSql(const ConformanceContext& context) { return context.engine_name != "memory"; }

SubmitRequest Payment(const std::string& key, Amount amount, const std::string& from = "alice",
                      const std::string& to = "bob") {
  return SubmitRequest{.key = key, .operation = Operation::Transfer(from, to, "CREDITS", amount)};
}

std::string InsertOrderSql(UnitOfWork& unit) {
  return absl::StrCat("INSERT INTO app_orders (id, amount) VALUES (", unit.Placeholder(1), ", ",
                      unit.Placeholder(2), ")");
}

// Runs one statement in a unit of its own (DDL, reads for the assertions).
absl::StatusOr<SqlRows> QueryAlone(Ledger& ledger, const std::string& sql,
                                   std::vector<SqlValue> parameters = {}) {
  SqlRows rows;
  absl::Status status = ledger.Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(rows, unit.Query(sql, parameters));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return rows;
}

// How many app_orders rows have this id.
int64_t OrderRows(Ledger& ledger, const std::string& order_id) {
  absl::StatusOr<SqlRows> rows = QueryAlone(
      ledger, absl::StrCat("SELECT COUNT(*) FROM app_orders WHERE id = ",
                           ledger.engine_name() == "postgres" ? "$1" : "?"),
      {order_id});
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (!rows.ok()) return -1;
  return std::stoll(*rows->rows.at(0).at(0));
}

// Whether a committed key record exists under `key` (default namespace and scope).
bool KeyRecorded(Engine& engine, const std::string& key) {
  absl::StatusOr<std::vector<KeyRecord>> records = engine.ListKeyRecords(std::nullopt, 1000);
  EXPECT_TRUE(records.ok()) << records.status();
  if (!records.ok()) return false;
  for (const KeyRecord& record : *records) {
    if (record.identity == KeyIdentityOf(SubmitRequest{.key = key})) return true;
  }
  return false;
}

// Whether an outbox event names the transaction.
bool EventFor(Engine& engine, const std::string& transaction_id) {
  absl::StatusOr<std::vector<OutboxEvent>> events = engine.ListEvents(0, 1000);
  EXPECT_TRUE(events.ok()) << events.status();
  if (!events.ok()) return false;
  for (const OutboxEvent& event : *events) {
    if (event.transaction_id == transaction_id) return true;
  }
  return false;
}

// The run-idempotently identity of an order's shipping label.
KeyIdentity ShippingLabel(const std::string& order_id) {
  return KeyIdentity{"shipping.label", Scope{}, order_id};
}

// No claim exists under `identity`: a reservation through the engine's own store is a
// fresh first attempt (a pending claim would be in progress, a completed one replayed).
void ExpectNoWorkClaim(Engine& engine, Clock& clock, const KeyIdentity& identity) {
  IdempotentRunner runner(engine.work_claims(), clock);
  absl::StatusOr<Reservation> reservation =
      runner.Reserve(identity, {{"probe", true}}, WorkOptions{});
  ASSERT_TRUE(reservation.ok()) << identity.Encoded() << ": " << reservation.status();
  EXPECT_TRUE(reservation->reserved());
  EXPECT_EQ(reservation->claim.attempt, 1);
  EXPECT_FALSE(reservation->taken_over);
  EXPECT_TRUE(runner.Fail(*reservation).ok());
}

// Creates the application's tables beside the ledger's (where there is SQL).
void CreateAppTables(Ledger& ledger, const ConformanceContext& context) {
  if (!HasSql(context)) return;
  // MySQL's scratch database keeps tables other than the ledger's between tests.
  for (const char* sql :
       {kCreateOrders, kCreateCounters, "DELETE FROM app_orders", "DELETE FROM app_counters"}) {
    absl::StatusOr<SqlRows> created = QueryAlone(ledger, sql);
    ASSERT_TRUE(created.ok()) << created.status();
  }
}

// The order service's unit: pay for the order, then write it, unless the payment was
// made before (duplicate: skip the writes). Counts what it saw.
absl::Status PayAndRecordOrder(UnitOfWork& unit, const std::string& order_id, Amount amount,
                               std::atomic<int>* committed = nullptr,
                               std::atomic<int>* duplicates = nullptr) {
  LEDGER_ASSIGN_OR_RETURN(Outcome paid, unit.Submit(Payment(order_id, amount)));
  if (paid.kind == OutcomeKind::kDuplicate) {
    if (duplicates != nullptr) ++*duplicates;
    return absl::OkStatus();
  }
  if (paid.kind != OutcomeKind::kCommitted) {
    return absl::AbortedError(absl::StrCat("payment not committed: ", OutcomeToJson(paid).dump()));
  }
  if (unit.engine_name() != "memory") {
    LEDGER_RETURN_IF_ERROR(unit.Execute(InsertOrderSql(unit), {order_id, amount}).status());
  }
  if (committed != nullptr) ++*committed;
  return absl::OkStatus();
}

// ---- commit together, roll back together ----------------------------------------------

TEST_P(ConformanceTest, UnitOfWorkCallerRowPostingKeyAndEventCommitTogether) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 100);
  Outcome decided;
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(decided, unit.Submit(Payment("order-1", 30)));
    if (HasSql(context())) {
      LEDGER_RETURN_IF_ERROR(unit.Execute(InsertOrderSql(unit), {"order-1", int64_t{30}}).status());
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(decided.kind, OutcomeKind::kCommitted) << OutcomeToJson(decided).dump();
  absl::StatusOr<Transaction> stored = ledger().GetTransaction(decided.transaction.id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, decided.transaction);
  EXPECT_TRUE(KeyRecorded(engine(), "order-1"));
  EXPECT_TRUE(EventFor(engine(), decided.transaction.id));
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-1"), 1);
  }
  EXPECT_EQ(BalanceOf("alice"), 70);
  // The same key again outside the unit: the committed transaction replays.
  absl::StatusOr<Outcome> again = ledger().Submit(Payment("order-1", 30));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->kind, OutcomeKind::kDuplicate);
}

// A resend inside a unit replays without ending the unit's transaction (an engine may
// end its own transaction with a replay's read, StorageTransaction::ExpectNoWrites, never
// the caller's): what the unit does after it still rolls back with the unit.
TEST_P(ConformanceTest, UnitOfWorkReplayLeavesTheUnitsTransactionOpen) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 100);
  absl::StatusOr<Outcome> first = ledger().Submit(Payment("order-r", 30));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->kind, OutcomeKind::kCommitted);
  const Snapshot before = TakeSnapshot();
  Outcome replayed;
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(replayed, unit.Submit(Payment("order-r", 30)));
    if (HasSql(context())) {
      LEDGER_RETURN_IF_ERROR(
          unit.Execute(InsertOrderSql(unit), {"order-r-note", int64_t{0}}).status());
    }
    LEDGER_RETURN_IF_ERROR(unit.Submit(Payment("order-r-2", 5)).status());
    return absl::AbortedError("the caller changed its mind");
  });
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_EQ(replayed.kind, OutcomeKind::kDuplicate) << OutcomeToJson(replayed).dump();
  EXPECT_EQ(replayed.transaction, first->transaction);
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_FALSE(KeyRecorded(engine(), "order-r-2"));
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-r-note"), 0);
  }
  EXPECT_EQ(BalanceOf("alice"), 70);
}

TEST_P(ConformanceTest, UnitOfWorkWorkErrorRollsEverythingBackAndTheKeyStaysUnused) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_RETURN_IF_ERROR(PayAndRecordOrder(unit, "order-2", 40));
    return absl::FailedPreconditionError("the warehouse has no stock");
  });
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(status.message(), "the warehouse has no stock");
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_FALSE(KeyRecorded(engine(), "order-2"));
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-2"), 0);
  }

  // The key is unused: the same unit now commits, once.
  std::atomic<int> committed = 0;
  status = ledger().Transact(
      [&](UnitOfWork& unit) { return PayAndRecordOrder(unit, "order-2", 40, &committed); });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(committed.load(), 1);
  EXPECT_EQ(BalanceOf("alice"), 60);
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-2"), 1);
  }
}

TEST_P(ConformanceTest, UnitOfWorkWorkThatThrowsRollsBackAndReturnsInternal) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_RETURN_IF_ERROR(PayAndRecordOrder(unit, "order-3", 10));
    throw std::runtime_error("bug in the order service");
  });
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_NE(status.message().find("bug in the order service"), std::string_view::npos) << status;
  EXPECT_EQ(TakeSnapshot(), before);
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-3"), 0);
  }
}

TEST_P(ConformanceTest, UnitOfWorkRejectedSubmitWritesNothingAndTheUnitGoesOn) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 10);
  Outcome decided;
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(decided, unit.Submit(Payment("order-4", 500)));
    if (HasSql(context())) {  // the caller records the refusal and commits that
      LEDGER_RETURN_IF_ERROR(unit.Execute(InsertOrderSql(unit), {"order-4", int64_t{0}}).status());
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(decided.kind, OutcomeKind::kRejected);
  EXPECT_EQ(decided.reason, RejectionReason::kInsufficientFunds);
  EXPECT_FALSE(KeyRecorded(engine(), "order-4"));  // no placeholder left either
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-4"), 1);
  }
  Fund("alice", 500);
  absl::StatusOr<Outcome> later = ledger().Submit(Payment("order-4", 500));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(later->kind, OutcomeKind::kCommitted);
}

// A key claimed by a rejected submit of the unit is claimed again by a later one with
// another payload, which commits: the record is the later one's.
TEST_P(ConformanceTest, UnitOfWorkKeyOfARejectedSubmitIsCommittedByALaterOneOfTheUnit) {
  Fund("alice", 10);
  std::vector<Outcome> decided;
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    for (const SubmitRequest& request : {Payment("order-5", 500), Payment("order-5", 5)}) {
      LEDGER_ASSIGN_OR_RETURN(Outcome outcome, unit.Submit(request));
      decided.push_back(outcome);
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(decided.size(), 2u);
  EXPECT_EQ(decided[0].kind, OutcomeKind::kRejected);
  ASSERT_EQ(decided[1].kind, OutcomeKind::kCommitted);
  absl::StatusOr<std::vector<KeyRecord>> records = engine().ListKeyRecords(std::nullopt, 1000);
  ASSERT_TRUE(records.ok()) << records.status();
  int found = 0;
  for (const KeyRecord& record : *records) {
    if (record.identity.key != "order-5") continue;
    ++found;
    EXPECT_EQ(record.transaction_id, decided[1].transaction.id);
    EXPECT_EQ(record.fingerprint, decided[1].transaction.fingerprint);
  }
  EXPECT_EQ(found, 1);
  absl::StatusOr<Outcome> replayed = ledger().Submit(Payment("order-5", 5));
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->kind, OutcomeKind::kDuplicate);
  EXPECT_EQ(replayed->transaction, decided[1].transaction);
  EXPECT_EQ(BalanceOf("alice"), 5);
}

TEST_P(ConformanceTest, UnitOfWorkLaterSubmitsSeeEarlierOnesOfTheSameUnit) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 50);
  std::vector<Outcome> decided;
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    for (const SubmitRequest& request :
         {Payment("step-1", 50), Payment("step-2", 30, "bob", "carol"), Payment("step-1", 50),
          Payment("step-3", 1)}) {
      LEDGER_ASSIGN_OR_RETURN(Outcome outcome, unit.Submit(request));
      decided.push_back(outcome);
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(decided.size(), 4u);
  EXPECT_EQ(decided[0].kind, OutcomeKind::kCommitted);
  EXPECT_EQ(decided[1].kind, OutcomeKind::kCommitted);  // bob spends what step-1 gave him
  EXPECT_EQ(decided[2].kind, OutcomeKind::kDuplicate);  // step-1 replays inside the unit
  EXPECT_EQ(decided[2].transaction, decided[0].transaction);
  EXPECT_EQ(decided[3].kind, OutcomeKind::kRejected);   // alice has nothing left
  EXPECT_EQ(BalanceOf("alice"), 0);
  EXPECT_EQ(BalanceOf("bob"), 20);
  absl::StatusOr<VerifyReport> report = ledger().Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

// ---- the caller's SQL -----------------------------------------------------------------

TEST_P(ConformanceTest, UnitOfWorkCallerSqlIsUnimplementedWithoutSqlAndFailsTheUnit) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (HasSql(context())) GTEST_SKIP() << context().engine_name << " runs SQL";
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();
  absl::Status sql_status;
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_RETURN_IF_ERROR(PayAndRecordOrder(unit, "order-5", 10));
    sql_status = unit.Execute("INSERT INTO app_orders VALUES ('x', 1)").status();
    return absl::OkStatus();  // ignores it: the unit still fails
  });
  EXPECT_TRUE(absl::IsUnimplemented(sql_status)) << sql_status;
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_EQ(TakeSnapshot(), before);
}

TEST_P(ConformanceTest, UnitOfWorkBadCallerSqlRollsBackAndEveryPooledConnectionStaysHealthy) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (!HasSql(context())) GTEST_SKIP() << "the memory engine runs no SQL";
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();
  // More rounds than the pool has connections, so a broken one would be lent again.
  for (int round = 0; round < 20; ++round) {
    absl::Status later_call;
    absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
      LEDGER_RETURN_IF_ERROR(PayAndRecordOrder(unit, absl::StrCat("bad-", round), 1));
      absl::Status bad = unit.Execute("INSERT INTO no_such_table VALUES (1)").status();
      EXPECT_FALSE(bad.ok());
      later_call = unit.Submit(Payment(absl::StrCat("after-", round), 1)).status();
      return absl::OkStatus();  // keeps going as if nothing happened
    });
    ASSERT_FALSE(status.ok()) << "round " << round << ": a failed statement must fail the unit";
    EXPECT_TRUE(absl::IsFailedPrecondition(later_call)) << later_call;
  }
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_EQ(OrderRows(ledger(), "bad-0"), 0);
  // Wrong parameter count: a clear error, nothing run.
  absl::StatusOr<SqlRows> miscounted =
      QueryAlone(ledger(), absl::StrCat("SELECT COUNT(*) FROM app_orders WHERE id = ",
                                        ledger().engine_name() == "postgres" ? "$1" : "?"));
  EXPECT_FALSE(miscounted.ok());
  // Every connection serves again.
  std::atomic<int> committed = 0;
  for (int round = 0; round < 20; ++round) {
    absl::Status status = ledger().Transact([&](UnitOfWork& unit) {
      return PayAndRecordOrder(unit, absl::StrCat("good-", round), 1, &committed);
    });
    ASSERT_TRUE(status.ok()) << "round " << round << ": " << status;
  }
  EXPECT_EQ(committed.load(), 20);
  EXPECT_EQ(BalanceOf("alice"), 80);
}

TEST_P(ConformanceTest, UnitOfWorkQueryReturnsColumnsRowsAndNulls) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (!HasSql(context())) GTEST_SKIP() << "the memory engine runs no SQL";
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    EXPECT_EQ(*unit.Execute(InsertOrderSql(unit), {"q-1", int64_t{-7}}), 1);
    absl::StatusOr<SqlRows> rows =
        unit.Query(absl::StrCat("SELECT id, amount, NULL AS note FROM app_orders WHERE id = ",
                                unit.Placeholder(1)),
                   {"q-1"});
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok()) return rows.status();
    EXPECT_EQ(rows->columns, (std::vector<std::string>{"id", "amount", "note"}));
    EXPECT_EQ(rows->rows.size(), 1u);
    EXPECT_EQ(rows->rows.at(0).at(0), "q-1");
    EXPECT_EQ(rows->rows.at(0).at(1), "-7");
    EXPECT_EQ(rows->rows.at(0).at(2), std::nullopt);
    return absl::AbortedError("roll back on purpose");
  });
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_EQ(OrderRows(ledger(), "q-1"), 0);
}

// ---- concurrency ----------------------------------------------------------------------

TEST_P(ConformanceTest, UnitOfWorkThirtyTwoUnitsWithOneKeyCommitOnceAndTheRestSkip) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  Fund("alice", 1000);
  constexpr int kThreads = 32;
  std::atomic<int> committed = 0;
  std::atomic<int> duplicates = 0;
  std::vector<absl::Status> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      statuses[t] = ledger().Transact([&](UnitOfWork& unit) {
        return PayAndRecordOrder(unit, "order-42", 25, &committed, &duplicates);
      });
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(statuses[t].ok()) << "thread " << t << ": " << statuses[t];
  // A rerun after a deadlock counts again, so count what the database holds.
  EXPECT_EQ(BalanceOf("alice"), 975);
  EXPECT_GE(committed.load(), 1);
  EXPECT_GE(duplicates.load(), kThreads - committed.load());
  if (HasSql(context())) {
    EXPECT_EQ(OrderRows(ledger(), "order-42"), 1);
  }
  absl::StatusOr<std::vector<Transaction>> transactions = engine().ListTransactions("", 100);
  ASSERT_TRUE(transactions.ok()) << transactions.status();
  EXPECT_EQ(transactions->size(), 2u);  // the funding and the one payment
  absl::StatusOr<VerifyReport> report = ledger().Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

TEST_P(ConformanceTest, UnitOfWorkDeadlockBetweenCallerStatementsAndAccountLocksIsRetried) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (!HasSql(context())) GTEST_SKIP() << "the memory engine runs no SQL";
  if (context().writers_serialized) {
    GTEST_SKIP() << context().engine_name << " serializes writers: no deadlock can form";
  }
  Fund("alice", 100);
  ASSERT_TRUE(QueryAlone(ledger(), "INSERT INTO app_counters (id, n) VALUES ('x', 0)").ok());
  const std::string bump = "UPDATE app_counters SET n = n + 1 WHERE id = 'x'";
  // First runs only: A holds the counter row and wants the accounts; B holds the
  // accounts and wants the counter row.
  absl::Notification a_holds_counter;
  absl::Notification b_holds_accounts;
  std::atomic<int> runs_a = 0;
  std::atomic<int> runs_b = 0;
  absl::Status status_a;
  absl::Status status_b;
  std::thread a([&] {
    status_a = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
      ++runs_a;
      LEDGER_RETURN_IF_ERROR(unit.Execute(bump).status());
      if (unit.attempt() == 1) {
        a_holds_counter.Notify();
        b_holds_accounts.WaitForNotificationWithTimeout(kStepWaitMax);
      }
      LEDGER_ASSIGN_OR_RETURN(Outcome paid, unit.Submit(Payment("deadlock-a", 10)));
      if (paid.kind != OutcomeKind::kCommitted) return absl::AbortedError("a: not committed");
      return absl::OkStatus();
    });
  });
  std::thread b([&] {
    status_b = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
      ++runs_b;
      LEDGER_ASSIGN_OR_RETURN(Outcome paid, unit.Submit(Payment("deadlock-b", 10)));
      if (paid.kind != OutcomeKind::kCommitted) return absl::AbortedError("b: not committed");
      if (unit.attempt() == 1) {
        b_holds_accounts.Notify();
        a_holds_counter.WaitForNotificationWithTimeout(kStepWaitMax);
      }
      return unit.Execute(bump).status();
    });
  });
  a.join();
  b.join();
  ASSERT_TRUE(status_a.ok()) << status_a;
  ASSERT_TRUE(status_b.ok()) << status_b;
  EXPECT_GE(runs_a.load() + runs_b.load(), 3) << "one of them must have been rerun";
  absl::StatusOr<SqlRows> counter = QueryAlone(ledger(), "SELECT n FROM app_counters WHERE id = 'x'");
  ASSERT_TRUE(counter.ok()) << counter.status();
  EXPECT_EQ(counter->rows.at(0).at(0), "2");  // each unit's bump once
  EXPECT_EQ(BalanceOf("alice"), 80);           // each payment once
  EXPECT_TRUE(KeyRecorded(engine(), "deadlock-a"));
  EXPECT_TRUE(KeyRecorded(engine(), "deadlock-b"));
}

// ---- a process killed before COMMIT ----------------------------------------------------

// Waits up to kStepWaitMax for one byte on `fd`; true if it came.
bool AwaitByte(int fd) {
  pollfd polled{fd, POLLIN, 0};
  if (poll(&polled, 1, static_cast<int>(absl::ToInt64Milliseconds(kStepWaitMax))) != 1) return false;
  char byte = 0;
  return read(fd, &byte, 1) == 1;
}

TEST_P(ConformanceTest, UnitOfWorkChildKilledBeforeCommitLeavesNothingAndTheRerunCommitsOnce) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (!context().open_again) GTEST_SKIP() << context().engine_name << " lives in this process only";
  Fund("alice", 100);
  const Snapshot before = TakeSnapshot();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child: its own engine on the same database, as another process of the order
    // service. It never returns: the parent kills it inside the unit.
    close(ready[0]);
    absl::StatusOr<std::unique_ptr<Engine>> opened = context().open_again();
    if (!opened.ok()) _exit(2);
    absl::StatusOr<Ledger> book = Ledger::Open(std::shared_ptr<Engine>(*std::move(opened)));
    if (!book.ok()) _exit(3);
    (void)book->Transact([&](UnitOfWork& unit) -> absl::Status {
      absl::StatusOr<Outcome> paid = unit.Submit(Payment("order-9", 35));
      if (!paid.ok() || paid->kind != OutcomeKind::kCommitted) _exit(4);
      if (!unit.Execute(InsertOrderSql(unit), {"order-9", int64_t{35}}).ok()) _exit(5);
      absl::StatusOr<std::string> receipt = unit.RunIdempotently(
          ShippingLabel("order-9"), {{"order", "order-9"}}, WorkOptions{},
          []() -> absl::StatusOr<std::string> { return std::string("label-9"); });
      if (!receipt.ok()) _exit(9);
      // Read back, so every write has reached the database before the signal.
      absl::StatusOr<SqlRows> seen = unit.Query("SELECT COUNT(*) FROM app_orders");
      if (!seen.ok()) _exit(6);
      if (write(ready[1], "x", 1) != 1) _exit(7);
      while (true) pause();  // until SIGKILL
    });
    _exit(8);
  }
  close(ready[1]);
  const bool reached = AwaitByte(ready[0]);
  close(ready[0]);
  kill(child, SIGKILL);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(reached) << "the child did not reach its commit point; exit status "
                       << (WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
  ASSERT_TRUE(WIFSIGNALED(wait_status));

  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_FALSE(KeyRecorded(engine(), "order-9"));
  EXPECT_EQ(OrderRows(ledger(), "order-9"), 0);
  ExpectNoWorkClaim(engine(), clock(), ShippingLabel("order-9"));
  // The parent's rerun of the same unit commits, once.
  std::atomic<int> committed = 0;
  absl::Status status = ledger().Transact(
      [&](UnitOfWork& unit) { return PayAndRecordOrder(unit, "order-9", 35, &committed); });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(committed.load(), 1);
  EXPECT_EQ(OrderRows(ledger(), "order-9"), 1);
  EXPECT_EQ(BalanceOf("alice"), 65);
}

// ---- run-idempotently inside the unit --------------------------------------------------

TEST_P(ConformanceTest, UnitOfWorkRunIdempotentlyCommitsClaimWritesAndResultTogether) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (!HasSql(context())) GTEST_SKIP() << "the memory engine runs no SQL";
  int runs = 0;
  auto label = [&](UnitOfWork& unit) -> absl::StatusOr<std::string> {
    return unit.RunIdempotently(
        ShippingLabel("order-11"), {{"order", "order-11"}}, WorkOptions{},
        [&]() -> absl::StatusOr<std::string> {
          ++runs;
          LEDGER_RETURN_IF_ERROR(
              unit.Execute(InsertOrderSql(unit), {"order-11", int64_t{11}}).status());
          return std::string("label-11");
        });
  };
  for (int round = 0; round < 2; ++round) {  // the second replays, inside a unit too
    absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
      LEDGER_ASSIGN_OR_RETURN(std::string receipt, label(unit));
      EXPECT_EQ(receipt, "label-11");
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << "round " << round << ": " << status;
  }
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(OrderRows(ledger(), "order-11"), 1);
  // The engine's own store replays the committed result too.
  IdempotentRunner outside(engine().work_claims(), clock());
  absl::StatusOr<std::string> replayed =
      outside.Run(ShippingLabel("order-11"), {{"order", "order-11"}}, WorkOptions{},
                  []() -> absl::StatusOr<std::string> { return std::string("ran again"); });
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "label-11");
}

TEST_P(ConformanceTest, UnitOfWorkRunIdempotentlyLeavesNoClaimWhenTheUnitRollsBack) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  if (!HasSql(context())) GTEST_SKIP() << "the memory engine runs no SQL";
  absl::Status status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        std::string receipt,
        unit.RunIdempotently(ShippingLabel("order-12"), {{"order", "order-12"}}, WorkOptions{},
                             [&]() -> absl::StatusOr<std::string> {
                               LEDGER_RETURN_IF_ERROR(
                                   unit.Execute(InsertOrderSql(unit), {"order-12", int64_t{12}})
                                       .status());
                               return std::string("label-12");
                             }));
    EXPECT_EQ(receipt, "label-12");
    return absl::UnavailableError("the carrier's API is down; try later");
  });
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_EQ(OrderRows(ledger(), "order-12"), 0);
  ExpectNoWorkClaim(engine(), clock(), ShippingLabel("order-12"));
  // An error from the work releases the claim, and the unit may still commit.
  status = ledger().Transact([&](UnitOfWork& unit) -> absl::Status {
    absl::StatusOr<std::string> failed = unit.RunIdempotently(
        ShippingLabel("order-13"), {{"order", "order-13"}}, WorkOptions{},
        []() -> absl::StatusOr<std::string> { return absl::NotFoundError("no such order"); });
    EXPECT_TRUE(absl::IsNotFound(failed.status())) << failed.status();
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  ExpectNoWorkClaim(engine(), clock(), ShippingLabel("order-13"));
}

// ---- options --------------------------------------------------------------------------

TEST_P(ConformanceTest, UnitOfWorkBadOptionsAreRefusedBeforeAnythingRuns) {
  ASSERT_NO_FATAL_FAILURE(CreateAppTables(ledger(), context()));
  bool ran = false;
  absl::Status status = ledger().Transact(
      [&](UnitOfWork&) {
        ran = true;
        return absl::OkStatus();
      },
      TransactOptions{.attempts_max = kAttemptsMaxLimit + 1});
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("TransactOptions.attempts_max"), std::string_view::npos);
  EXPECT_FALSE(ran);
  EXPECT_TRUE(absl::IsInvalidArgument(ledger().Transact(nullptr)));
}

}  // namespace
}  // namespace ledger::testing
