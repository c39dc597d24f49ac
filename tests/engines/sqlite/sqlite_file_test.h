// What the SQLite engine's own tests share: a raw connection of the test's own (like a
// second process would have, for SQL behind the engine's back) and a fixture giving each
// test a folder and a database path of its own.
#ifndef LEDGER_TESTS_ENGINES_SQLITE_SQLITE_FILE_TEST_H_
#define LEDGER_TESTS_ENGINES_SQLITE_SQLITE_FILE_TEST_H_

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engines/sqlite/sqlite_engine.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"

namespace ledger::testing {

class RawConnection {
 public:
  explicit RawConnection(const std::string& path) {
    sqlite3* raw = nullptr;
    opened_ = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    database_.reset(raw);
  }
  bool ok() const { return opened_ == SQLITE_OK; }
  // "ok", or the error's message.
  std::string Execute(const std::string& sql) {
    char* error = nullptr;
    const int result = sqlite3_exec(database_.get(), sql.c_str(), nullptr, nullptr, &error);
    std::string answer = result == SQLITE_OK ? "ok" : (error != nullptr ? error : "error");
    sqlite3_free(error);
    return answer;
  }
  // The first column of every row, as text.
  std::vector<std::string> Column(const std::string& sql) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(database_.get(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      return {"<prepare failed>"};
    }
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(raw, &sqlite3_finalize);
    std::vector<std::string> values;
    while (sqlite3_step(statement.get()) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(statement.get(), 0);
      values.emplace_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
    return values;
  }
  // The first column of the first row ("" when there is none).
  std::string QueryText(const std::string& sql) {
    std::vector<std::string> values = Column(sql);
    return values.empty() ? "" : values.front();
  }

 private:
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> database_{nullptr, &sqlite3_close_v2};
  int opened_ = SQLITE_ERROR;
};

// <tmp>/<prefix>-<pid>-<test name>/, made empty before the test and removed after it;
// path_ is ledger.db in it.
class SqliteFileTest : public ::testing::Test {
 protected:
  explicit SqliteFileTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = std::filesystem::temp_directory_path() /
              absl::StrCat(prefix_, "-", getpid(), "-", test->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    path_ = (folder_ / "ledger.db").string();
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

  // The engine on `path`, migrated unless told not to; null (and a failure) if it fails.
  static std::unique_ptr<Engine> Open(const std::string& path, bool migrate = true) {
    SqliteOptions options;
    options.path = path;
    options.migrate = migrate;
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine(options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  std::filesystem::path folder_;
  std::string path_;

 private:
  std::string prefix_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_SQLITE_SQLITE_FILE_TEST_H_
