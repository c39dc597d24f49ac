// The property suite on the SQLite engine: every run gets a new database file in a
// per-process folder under the temporary directory; the previous file (and its -wal
// and -shm) goes at the next open, the folder at exit.
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engines/sqlite/sqlite_engine.h"
#include "tests/property/property_suite.h"

namespace ledger::property {
namespace {

class TemporaryDatabases {
 public:
  TemporaryDatabases()
      : folder_(std::filesystem::temp_directory_path() /
                absl::StrCat("ledger-sqlite-property-", getpid())) {
    std::filesystem::create_directories(folder_);
  }
  ~TemporaryDatabases() {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

  std::string NextPath() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    if (!previous_.empty()) Remove(previous_);
    previous_ = (folder_ / absl::StrCat("property-", ++opened_, ".db")).string();
    Remove(previous_);
    return previous_;
  }

 private:
  static void Remove(const std::string& path) {
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

PropertyContext SqliteContext() {
  PropertyContext context;
  context.engine_name = "sqlite";
  context.default_seed_count = 4;
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> {
    SqliteOptions options;
    options.path = Databases().NextPath();
    options.migrate = true;
    return OpenSqliteEngine(options);
  };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(sqlite, PropertyTest, ::testing::Values(&SqliteContext),
                         PropertyContextName);

}  // namespace ledger::property
