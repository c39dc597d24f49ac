// The read engine's guard (ledger/read_only_engine.h): reads pass through, anything that
// writes stops the process, and Ledger::Open refuses the primary as its own read engine.
#include <memory>

#include "gtest/gtest.h"
#include "engines/memory/memory_engine.h"
#include "ledger/ledger.h"
#include "ledger/read_only_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger {
namespace {

TEST(ReadOnlyEngineTest, ReadsPassThroughToTheWrappedEngine) {
  std::shared_ptr<Engine> replica = OpenMemoryEngine();
  ASSERT_TRUE(replica->PutAsset({"CREDITS", 0}).ok());
  internal::ReadOnlyEngine reads(replica);
  EXPECT_EQ(reads.name(), replica->name());
  ASSERT_TRUE(reads.GetAsset("CREDITS").ok());
  EXPECT_TRUE(reads.GetAsset("CREDITS")->has_value());
  EXPECT_EQ(reads.ListAssets()->size(), 1u);
}

TEST(ReadOnlyEngineDeathTest, EveryWriteThatReachesTheReadEngineStopsTheProcess) {
  internal::ReadOnlyEngine reads(OpenMemoryEngine());
  const char* kMessage = "reached the ledger's read engine";
  EXPECT_DEATH((void)reads.Begin(BeginOptions{}), kMessage);
  EXPECT_DEATH((void)reads.PutAsset({"CREDITS", 0}), kMessage);
  EXPECT_DEATH((void)reads.InsertAccount(Account{}), kMessage);
  EXPECT_DEATH((void)reads.CloseAccountIfZeroBalance("alice"), kMessage);
  EXPECT_DEATH((void)reads.PruneExpiredKeys(absl::Now(), 1), kMessage);
  EXPECT_DEATH((void)reads.Migrate(), kMessage);
  EXPECT_DEATH((void)reads.work_claims(), kMessage);
  EXPECT_DEATH((void)reads.webhooks(), kMessage);
}

TEST(ReadOnlyEngineTest, TheLedgerRefusesItsPrimaryAsItsReadEngine) {
  std::shared_ptr<Engine> primary = OpenMemoryEngine();
  absl::StatusOr<Ledger> ledger = Ledger::Open(primary, {.read_engine = primary});
  ASSERT_FALSE(ledger.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ledger.status())) << ledger.status();
  EXPECT_NE(ledger.status().message().find("LedgerOptions.read_engine"), std::string::npos);
}

TEST(ReadOnlyEngineTest, WithoutAReadEngineEveryReadIsThePrimarys) {
  std::shared_ptr<Engine> primary = OpenMemoryEngine();
  Ledger ledger = testing::OpenTestLedger(primary);
  EXPECT_FALSE(ledger.has_read_engine());
  ASSERT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  EXPECT_EQ(ledger.ListAssets()->size(), 1u);
  EXPECT_EQ(ledger.ListAssets(ReadConsistency::kPrimary)->size(), 1u);
}

}  // namespace
}  // namespace ledger
