// The PostgreSQL engine's native handle in a unit of work (PostgresHandleOf): the
// caller's own libpqxx code runs in the unit's transaction; a statement of its that
// fails aborts the transaction, and Transact notices before COMMIT (which the server
// would otherwise answer with a silent ROLLBACK) and reports it. Both claim modes. The
// engine-neutral behaviour is the conformance suite's (unit_of_work_suite.cc).
#include <memory>
#include <string>

#include "engines/postgres/postgres_engine.h"
#include "gtest/gtest.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"
#include "pqxx/except"
#include "pqxx/nontransaction"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_test_database.h"

namespace ledger::testing {
namespace {

class PostgresUnitOfWorkTest : public ::testing::TestWithParam<PostgresClaimMode> {
 protected:
  void SetUp() override {
    if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
      if (RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
      GTEST_SKIP() << "postgres skipped: " << reason;
    }
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenFreshPostgresEngine(GetParam(), 4);
    ASSERT_TRUE(engine.ok()) << engine.status();
    absl::StatusOr<Ledger> opened = Ledger::Open(std::shared_ptr<Engine>(*std::move(engine)));
    ASSERT_TRUE(opened.ok()) << opened.status();
    book_ = std::make_unique<Ledger>(*std::move(opened));
    ASSERT_TRUE(book_->DefineAsset({"CREDITS", 0}).ok());
    ASSERT_TRUE(book_->OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
    ASSERT_TRUE(book_->OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
    ASSERT_TRUE(book_->Transact([](UnitOfWork& unit) {
      return unit.Execute("CREATE TABLE notes (id SERIAL PRIMARY KEY, body TEXT)").status();
    }).ok());
  }

  int64_t Notes() {
    int64_t count = -1;
    EXPECT_TRUE(book_->Transact([&](UnitOfWork& unit) -> absl::Status {
      absl::StatusOr<SqlRows> rows = unit.Query("SELECT COUNT(*) FROM notes");
      if (!rows.ok()) return rows.status();
      count = std::stoll(*rows->rows.at(0).at(0));
      return absl::OkStatus();
    }).ok());
    return count;
  }

  SubmitRequest TopUp(const std::string& key) {
    return {.key = key, .operation = Operation::TopUp("issuance", "alice", "CREDITS", 5)};
  }

  std::unique_ptr<Ledger> book_;
};

TEST_P(PostgresUnitOfWorkTest, NativeHandleSeesTheLedgersWritesAndCommitsWithThem) {
  absl::Status status = book_->Transact([&](UnitOfWork& unit) -> absl::Status {
    absl::StatusOr<Outcome> paid = unit.Submit(TopUp("native-1"));
    if (!paid.ok()) return paid.status();
    absl::StatusOr<pqxx::nontransaction*> handle = PostgresHandleOf(unit);
    if (!handle.ok()) return handle.status();
    // The submit's buffered writes went out before the handle was lent.
    pqxx::result seen = (*handle)->exec_params(
        "SELECT COUNT(*) FROM transactions WHERE id = $1", paid->transaction.id);
    EXPECT_EQ(seen[0][0].as<int64_t>(), 1);
    (*handle)->exec("INSERT INTO notes (body) VALUES ('by hand')");
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Notes(), 1);
  absl::StatusOr<Account> alice = book_->GetAccount("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->balance, 5);
}

TEST_P(PostgresUnitOfWorkTest, AFailedStatementThroughTheHandleRollsTheUnitBack) {
  for (int round = 0; round < 6; ++round) {  // more rounds than the pool has connections
    absl::Status status = book_->Transact([&](UnitOfWork& unit) -> absl::Status {
      absl::StatusOr<Outcome> paid = unit.Submit(TopUp("native-2"));
      if (!paid.ok()) return paid.status();
      absl::StatusOr<pqxx::nontransaction*> handle = PostgresHandleOf(unit);
      if (!handle.ok()) return handle.status();
      (*handle)->exec("INSERT INTO notes (body) VALUES ('kept?')");
      try {
        (*handle)->exec("SELECT * FROM no_such_table");
      } catch (const pqxx::sql_error&) {
        // Swallowed: the transaction is aborted all the same.
      }
      return absl::OkStatus();
    });
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << "round " << round << ": " << status;
  }
  EXPECT_EQ(Notes(), 0);
  absl::StatusOr<Account> alice = book_->GetAccount("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->balance, 0);
  // The key is unused, and every pooled connection serves again.
  for (int round = 0; round < 6; ++round) {
    absl::Status status = book_->Transact([&](UnitOfWork& unit) -> absl::Status {
      absl::StatusOr<Outcome> paid = unit.Submit(TopUp("native-2"));
      if (!paid.ok()) return paid.status();
      EXPECT_EQ(paid->kind, round == 0 ? OutcomeKind::kCommitted : OutcomeKind::kDuplicate);
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << "round " << round << ": " << status;
  }
}

INSTANTIATE_TEST_SUITE_P(postgres, PostgresUnitOfWorkTest,
                         ::testing::Values(PostgresClaimMode::kAdvisoryLock, PostgresClaimMode::kRow),
                         [](const ::testing::TestParamInfo<PostgresClaimMode>& info) {
                           return std::string(info.param == PostgresClaimMode::kRow ? "row"
                                                                                     : "advisory");
                         });

}  // namespace
}  // namespace ledger::testing
