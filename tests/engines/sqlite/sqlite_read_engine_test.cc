// Reads off the primary on SQLite: --read-db naming a second file (read-only replicas of
// a SQLite file, e.g. by Litestream, are the use), reached only by reads that allow it.
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "engines/open_engine.h"
#include "tests/engines/common/read_engine_urls.h"
#include "tests/support/temporary_databases.h"

namespace ledger::testing {
namespace {

TEST(SqliteReadEngineTest, ReadsAllowingAReplicaReachTheReadUrlAndWritesThePrimary) {
  TemporaryDatabases primary("ledger-sqlite-read-primary");
  TemporaryDatabases replica("ledger-sqlite-read-replica");
  ExpectReadsRoutedByUrl(absl::StrCat("sqlite:", primary.NextPath()),
                         absl::StrCat("sqlite:", replica.NextPath()));
}

TEST(SqliteReadEngineTest, AReadEngineNeverCreatesItsDatabase) {
  TemporaryDatabases databases("ledger-sqlite-read-missing");
  const std::string path = databases.NextPath();
  absl::StatusOr<std::unique_ptr<Engine>> reads = OpenReadEngine(absl::StrCat("sqlite:", path));
  EXPECT_FALSE(reads.ok());
  EXPECT_FALSE(std::filesystem::exists(path)) << "opening a read engine created " << path;
}

}  // namespace
}  // namespace ledger::testing
