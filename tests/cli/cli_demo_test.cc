// `ledger demo`: the README's first command, at a size that fits a test.
#include <string>

#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"

namespace ledger::testing {
namespace {

using DemoCliTest = LedgerCliTest;

TEST_F(DemoCliTest, DemoOnAFreshSqliteDatabaseEndsWithVerifyOk) {
  CliResult demo = RunLedger({"demo", "--operations", "500", "--seed", "7"});

  EXPECT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  EXPECT_NE(demo.out.find("exactly-once: OK"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("verify: OK"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("sum of all USD accounts (must be 0)"), std::string::npos) << demo.out;
  // What the demo left behind is an ordinary ledger the other commands can read.
  EXPECT_EQ(RunLedger({"verify"}).exit_code, 0);
}

TEST_F(DemoCliTest, DemoOnTheMemoryEngineEndsWithVerifyOk) {
  CliResult demo = RunLedgerProcess({"--db", "memory:", "demo", "--operations", "500"}, folder_);

  EXPECT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  EXPECT_NE(demo.out.find("verify: OK"), std::string::npos) << demo.out;
}

TEST_F(DemoCliTest, DemoRefusesADatabaseThatAlreadyHoldsAccounts) {
  ASSERT_EQ(RunLedger({"asset", "define", "USD", "--scale", "2"}).exit_code, 0);
  ASSERT_EQ(RunLedger({"account", "open", "mine", "--asset", "USD"}).exit_code, 0);

  CliResult demo = RunLedger({"demo", "--operations", "10"});

  EXPECT_EQ(demo.exit_code, 2);
  EXPECT_NE(demo.err.find("needs an empty database"), std::string::npos) << demo.err;
}

}  // namespace
}  // namespace ledger::testing
