// LEDGER_CHECK (base/check.h) stays on in release builds: the default build
// (RelWithDebInfo) defines NDEBUG, and these death tests run in it.
#include "base/check.h"

#include "gtest/gtest.h"

namespace ledger {
namespace {

TEST(CheckDeathTest, AFailedCheckAbortsNamingTheConditionAndTheMessage) {
  const int balance = -5;
  EXPECT_DEATH(LEDGER_CHECK(balance >= 0) << "balance " << balance << " below its floor",
               "check failed at .*check_test.cc:[0-9]+: balance >= 0: balance -5 below its floor");
}

TEST(CheckDeathTest, AFailedCheckWithoutAMessageStillAborts) {
  EXPECT_DEATH(LEDGER_CHECK(1 + 1 == 3), "check failed at .*: 1 \\+ 1 == 3");
}

TEST(CheckTest, APassingCheckEvaluatesItsConditionOnceAndItsMessageNever) {
  int conditions = 0;
  int messages = 0;
  LEDGER_CHECK(++conditions == 1) << ++messages;
  EXPECT_EQ(conditions, 1);
  EXPECT_EQ(messages, 0);
}

#ifdef NDEBUG
TEST(CheckDeathTest, ChecksStayOnWhereAssertIsCompiledOut) {
  EXPECT_DEATH(LEDGER_CHECK(false) << "release build", "release build");
}
#endif

}  // namespace
}  // namespace ledger
