// The conformance suite's context for the SQLite engine: every open_fresh gets a new
// database file in a per-process temporary folder under /tmp. The previous file (and
// its -wal and -shm) is removed at the next open, the folder at process exit.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engines/sqlite/sqlite_engine.h"
#include "tests/conformance/conformance_context.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

class TemporaryDatabases {
 public:
  TemporaryDatabases()
      : folder_(std::filesystem::temp_directory_path() /
                absl::StrCat("ledger-sqlite-conformance-", getpid())) {
    std::filesystem::create_directories(folder_);
  }
  ~TemporaryDatabases() {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

  // A path for a new, empty database; the previous one is deleted first (the suite
  // destroys an engine before opening the next).
  std::string NextPath() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    if (!previous_.empty()) RemoveDatabase(previous_);
    previous_ = (folder_ / absl::StrCat("ledger-", ++opened_, ".db")).string();
    RemoveDatabase(previous_);
    return previous_;
  }

 private:
  static void RemoveDatabase(const std::string& path) {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::filesystem::remove(path + suffix, ignored);
    }
  }

  const std::filesystem::path folder_;
  absl::Mutex mutex_;
  std::string previous_ ABSL_GUARDED_BY(mutex_);
  int opened_ ABSL_GUARDED_BY(mutex_) = 0;
};

TemporaryDatabases& Databases() {
  static TemporaryDatabases databases;  // destroyed at exit: removes the folder
  return databases;
}

ConformanceContext SqliteContext() {
  ConformanceContext context;
  context.engine_name = "sqlite";
  context.writers_serialized = true;
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> {
    SqliteOptions options;
    options.path = Databases().NextPath();
    options.migrate = true;
    return OpenSqliteEngine(options);
  };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(sqlite, ConformanceTest, ::testing::Values(&SqliteContext));

}  // namespace ledger::testing
