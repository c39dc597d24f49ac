// The SQLite engine's native handle in a unit of work (SqliteHandleOf): the caller's own
// driver code runs inside the unit's transaction, commits with it and rolls back with it.
// The engine-neutral behaviour is the conformance suite's (unit_of_work_suite.cc).
#include <sqlite3.h>

#include <memory>
#include <string>

#include "engines/memory/memory_engine.h"
#include "engines/sqlite/sqlite_engine.h"
#include "gtest/gtest.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"
#include "tests/engines/sqlite/sqlite_file_test.h"

namespace ledger {
namespace {

class SqliteUnitOfWorkTest : public testing::SqliteFileTest {
 protected:
  SqliteUnitOfWorkTest() : SqliteFileTest("ledger-sqlite-unit-of-work") {}

  void SetUp() override {
    SqliteFileTest::SetUp();
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine({.path = path_});
    ASSERT_TRUE(engine.ok()) << engine.status();
    absl::StatusOr<Ledger> opened = Ledger::Open(std::shared_ptr<Engine>(*std::move(engine)));
    ASSERT_TRUE(opened.ok()) << opened.status();
    book_ = std::make_unique<Ledger>(*std::move(opened));
    ASSERT_TRUE(book_->Transact([](UnitOfWork& unit) {
      return unit.Execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)").status();
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

  std::unique_ptr<Ledger> book_;
};

TEST_F(SqliteUnitOfWorkTest, NativeHandleWritesCommitAndRollBackWithTheUnit) {
  for (bool commit : {false, true}) {
    absl::Status status = book_->Transact([&](UnitOfWork& unit) -> absl::Status {
      absl::StatusOr<sqlite3*> handle = SqliteHandleOf(unit);
      if (!handle.ok()) return handle.status();
      EXPECT_EQ(sqlite3_get_autocommit(*handle), 0) << "the unit's transaction is open";
      char* error = nullptr;
      EXPECT_EQ(sqlite3_exec(*handle, "INSERT INTO notes (body) VALUES ('by hand')", nullptr,
                             nullptr, &error),
                SQLITE_OK);
      sqlite3_free(error);
      return commit ? absl::OkStatus() : absl::AbortedError("not this time");
    });
    EXPECT_EQ(status.ok(), commit) << status;
    EXPECT_EQ(Notes(), commit ? 1 : 0);
  }
}

TEST_F(SqliteUnitOfWorkTest, AHandleThatEndedTheTransactionFailsTheUnit) {
  absl::Status status = book_->Transact([&](UnitOfWork& unit) -> absl::Status {
    absl::StatusOr<sqlite3*> handle = SqliteHandleOf(unit);
    if (!handle.ok()) return handle.status();
    // Against the rules: the caller ends the unit's transaction itself.
    EXPECT_EQ(sqlite3_exec(*handle, "INSERT INTO notes (body) VALUES ('x'); ROLLBACK", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    return absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(Notes(), 0);
}

TEST_F(SqliteUnitOfWorkTest, AUnitOnAnotherEngineHasNoSqliteHandle) {
  absl::StatusOr<Ledger> memory = Ledger::Open(OpenMemoryEngine());
  ASSERT_TRUE(memory.ok()) << memory.status();
  absl::Status status = memory->Transact([&](UnitOfWork& unit) -> absl::Status {
    return SqliteHandleOf(unit).status();
  });
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
}

}  // namespace
}  // namespace ledger
