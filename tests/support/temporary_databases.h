// Fresh database files for tests of a file-based engine (SQLite): each NextPath() is a
// new path in a per-process folder under the temporary directory. The previous file
// (with its -wal, -shm and -journal) is removed at the next call, the folder when the
// object is destroyed. Used by the SQLite conformance and property contexts.
//
//   static TemporaryDatabases databases("ledger-sqlite-conformance");
//   options.path = databases.NextPath();
//
// Thread-safe.
#ifndef LEDGER_TESTS_SUPPORT_TEMPORARY_DATABASES_H_
#define LEDGER_TESTS_SUPPORT_TEMPORARY_DATABASES_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ledger::testing {

class TemporaryDatabases {
 public:
  // `prefix` names the folder: <tmp>/<prefix>-<pid>.
  explicit TemporaryDatabases(std::string_view prefix);
  ~TemporaryDatabases();

  // A path for a new, empty database; the previous one is deleted first (callers
  // destroy an engine before opening the next).
  std::string NextPath() ABSL_LOCKS_EXCLUDED(mutex_);
  // The path NextPath returned last ("" before the first call).
  std::string CurrentPath() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  const std::filesystem::path folder_;
  absl::Mutex mutex_;
  std::string previous_ ABSL_GUARDED_BY(mutex_);
  int opened_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_TEMPORARY_DATABASES_H_
