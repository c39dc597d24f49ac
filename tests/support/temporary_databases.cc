#include "tests/support/temporary_databases.h"

#include <unistd.h>

#include <system_error>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::testing {
namespace {

void RemoveDatabase(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path + suffix, ignored);
  }
}

}  // namespace

TemporaryDatabases::TemporaryDatabases(std::string_view prefix)
    : folder_(std::filesystem::temp_directory_path() /
              absl::StrCat(View(prefix), "-", getpid())) {
  std::filesystem::create_directories(folder_);
}

TemporaryDatabases::~TemporaryDatabases() {
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::string TemporaryDatabases::NextPath() {
  absl::MutexLock lock(&mutex_);
  if (!previous_.empty()) RemoveDatabase(previous_);
  previous_ = (folder_ / absl::StrCat("ledger-", ++opened_, ".db")).string();
  RemoveDatabase(previous_);
  return previous_;
}

std::string TemporaryDatabases::CurrentPath() {
  absl::MutexLock lock(&mutex_);
  return previous_;
}

}  // namespace ledger::testing
